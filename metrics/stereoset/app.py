import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("stereoset.py")
launch_gradio_widget(module)
