import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bold_toxicity.py")
launch_gradio_widget(module)
