"""``python -m fedrepro.headtohead run module:NAME ...``: a reader's algorithm through a
head-to-head task's protocol, printed beside the book's algorithms (``--help``; the page "Run
your own algorithm").

The command runs T1's protocol (the runs layer) and prints its tables (the views), both above
this package in the library's layers; it is found by name when the command starts, as the book
helpers find their providers, so that the interface package imports neither. No module
imports this file: it is in no stored result's code.
"""

from __future__ import annotations

import importlib
import sys

_COMMAND = "fedrepro.chapters.headtohead.your_algorithm_cli"


def main() -> int:
    """Run the command with the process's arguments."""
    return int(importlib.import_module(_COMMAND).main(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
