"""``python -m epochbench``: the command line (:func:`epochbench.cli.main`)."""
import sys

from .cli import main

sys.exit(main())
