import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bold_psycholinguistic_norms.py")
launch_gradio_widget(module)
