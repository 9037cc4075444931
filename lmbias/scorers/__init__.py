"""Text scorers that more than one benchmark may use: VADER, the classifier (toxicity, regard, its
offline stand-in) and the word-value machinery of the lexicon scorers. Each takes a list of texts and
returns arrays; model calls run in batches. A scorer only one benchmark uses lives in that
benchmark's package (``lmbias/benchmarks/<name>/scorers/``)."""
