"""Per-text scorers. Each takes a list of texts and returns arrays; model calls run in batches."""
