"""Language models: loading, generation, likelihood."""
