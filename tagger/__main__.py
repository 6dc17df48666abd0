"""``python -m tagger`` and the ``tagger`` console script (``tagger.__main__:main``).

The command's modules (click and the commands) are imported inside :func:`main`, so that a
Ctrl-C that comes while they load (the first ~50 ms) ends the run like any other Ctrl-C: status
130 and no traceback.  Only this module and ``tagger/__init__.py`` (no imports) load before.
"""

import os
import sys


def main(argv=None):
    """Run the ``tagger`` command (:func:`tagger.cli.main`) with ``argv`` (default: ``sys.argv[1:]``)."""
    try:
        from .cli import main as run

        run(argv)  # handles Ctrl-C itself once it runs; this catches it before
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        sys.stderr.flush()
        os._exit(130)


if __name__ == "__main__":
    main()
