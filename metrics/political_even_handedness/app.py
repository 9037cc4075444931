import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("political_even_handedness.py")
launch_gradio_widget(module)
