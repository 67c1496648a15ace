"""A run: its config and plan, the seats' checks, the engine, workers, statistics."""
