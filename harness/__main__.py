"""``python3 -m harness``: the same CLI as the ``harness`` console script."""

from harness.front.cli import main

main()
