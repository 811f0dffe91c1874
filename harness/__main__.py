"""``python3 -m harness``: the same CLI as the ``harness`` console script."""

from harness.cli import main

main()
