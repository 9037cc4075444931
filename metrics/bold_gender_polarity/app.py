import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bold_gender_polarity.py")
launch_gradio_widget(module)
