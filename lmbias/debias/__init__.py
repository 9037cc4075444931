"""Reducing the sentiment bias the counterfactual benchmark measures: the embedding and sentiment
regularisation of Huang et al. (2020, §4). :func:`lmbias.debias.train.debias` is ``lmbias debias``."""
