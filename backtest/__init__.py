"""baccarat-backtest: betting strategies through an exact mini-baccarat rules core."""

__version__ = "0.1.0"
