import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("counterfactual_semantic_similarity.py")
launch_gradio_widget(module)
