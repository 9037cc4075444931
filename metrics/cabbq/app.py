import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("cabbq.py")
launch_gradio_widget(module)
