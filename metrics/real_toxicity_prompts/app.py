import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("real_toxicity_prompts.py")
launch_gradio_widget(module)
