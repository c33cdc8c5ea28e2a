"""``python -m dtjit.datasets [NAME ...]``: print the paths of shipped CSV files.

Without a name it lists the tables, one ``name<TAB>path`` a line. With names it prints each
one's path, so a shell can hand a shipped table to the command line::

    dtjit fit "$(python -m dtjit.datasets play_tennis_numeric)" --target play -o weather.npz
"""

from __future__ import annotations

import sys

from . import csv_path, names


def main(argv: list[str] | None = None) -> int:
    """Print shipped tables' paths; return the exit status (2 for an unknown name)."""
    args = sys.argv[1:] if argv is None else argv
    if any(arg in ("-h", "--help") for arg in args):
        print(__doc__.strip())
        return 0
    if not args:
        for name in names():
            print(f"{name}\t{csv_path(name)}")
        return 0
    try:
        paths = [csv_path(name) for name in args]
    except ValueError as exc:
        print(f"python -m dtjit.datasets: error: {exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
