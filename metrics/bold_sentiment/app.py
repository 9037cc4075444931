import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("bold_sentiment.py")
launch_gradio_widget(module)
