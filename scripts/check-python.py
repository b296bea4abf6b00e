"""Refuses, before a virtualenv is made, a Python the project does not support.

Run by `make venv` with the interpreter it is about to use; kept to syntax that old
Pythons still parse, so that they get this message rather than a syntax error.
"""

import sys

OLDEST, NEWEST = (3, 11), (3, 14)

if not OLDEST <= sys.version_info[:2] <= NEWEST:
    sys.exit(
        "vertex-training supports Python {}.{} to {}.{}; {} is {}.{}. Name another with "
        "`make PYTHON=python3.13 ...`.".format(
            *OLDEST, *NEWEST, sys.executable, *sys.version_info[:2]
        )
    )
