import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("holistic_bias.py")
launch_gradio_widget(module)
