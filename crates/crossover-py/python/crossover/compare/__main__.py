"""``python -m crossover.compare``: see ``crossover.compare`` and docs/compare.md."""

import sys

from .cli import main

sys.exit(main())
