"""`python -m kernelbench.cli ...`: the console script's entry point."""
from kernelbench.cli import main

main()
