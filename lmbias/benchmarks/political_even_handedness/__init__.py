"""Political even-handedness (Anthropic 2025)."""
