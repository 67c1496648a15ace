from backtest.cli import main

main()
