"""EsBBQ: accuracy and the ambiguous and disambiguated bias scores of a model's answers, per category and
overall, as the authors compute them (their bias_score.py); Spanish, the measurement it shares with the other set
(lmbias.evaluate_adapter.esbbq_measurement)."""

import evaluate  # noqa: F401  (evaluate's dependency check reads the import lines)

from lmbias.evaluate_adapter import esbbq_measurement

Esbbq = esbbq_measurement("esbbq")
