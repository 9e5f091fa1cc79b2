"""`python -m tinyc.cli`: the same as the `tinyc` console script."""

from tinyc.cli import main

main()
