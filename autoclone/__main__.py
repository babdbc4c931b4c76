"""Allow ``python -m autoclone``."""

from autoclone.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
