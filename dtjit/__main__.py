"""``python -m dtjit``: the ``dtjit`` command line."""

from .cli import main

raise SystemExit(main())
