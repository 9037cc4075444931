import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("discrim_eval.py")
launch_gradio_widget(module)
