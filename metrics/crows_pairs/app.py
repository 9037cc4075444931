import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("crows_pairs.py")
launch_gradio_widget(module)
