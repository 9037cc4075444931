"""The counterfactual sentiment benchmark's own text scorers (Huang et al. 2020, §5.3): the paper's
three sentiment classifiers (:mod:`.sentiment`) and the semantic relevance of continuations
(:mod:`.similarity`). Scorers that other benchmarks use too live in :mod:`lmbias.scorers`."""
