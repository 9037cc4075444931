"""BOLD's own text scorers (Dhamala et al. 2021): psycholinguistic norms (§4.4; the word-norm
lexicons and their extension to an embedding's words) and gender polarity (§4.5). The scorers other
benchmarks use too (VADER, toxicity, regard, the classifier) live in :mod:`lmbias.scorers`."""
