"""`python -m shapeflow ARGS`: the shapeflow command line (the same as the `shapeflow` command)."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
