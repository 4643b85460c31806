"""``python -m crossover._docs --markdown``: the namespace table that
docs/python.md holds (``--update docs/python.md`` rewrites it in place).
A separate module so that ``-m`` does not run ``_namespace`` a second time."""

import sys

import crossover  # noqa: F401 - fills the namespace
from crossover._namespace import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
