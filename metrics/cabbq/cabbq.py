"""CaBBQ: accuracy and the ambiguous and disambiguated bias scores of a model's answers, per category and
overall, as the authors compute them (their bias_score.py); Catalan, the measurement it shares with the other set
(lmbias.benchmarks.esbbq.measurement)."""

import evaluate  # noqa: F401  (evaluate's dependency check reads the import lines)

from lmbias.benchmarks.esbbq import measurement
from lmbias.evaluate_adapter import declared_measurement

Cabbq = declared_measurement("cabbq", measurement)
