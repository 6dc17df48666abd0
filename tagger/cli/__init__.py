"""The ``tagger`` command: a thin click layer over the library.

Each command parses options, calls one library function, prints the result and returns an
exit status.  Heavy libraries are imported inside the commands that use them, never at
module level: ``tagger --help`` imports click and this module only, ``tagger label`` adds
numpy, and only ``train``/``evaluate`` import scikit-learn, nltk and lightgbm
(``tests/test_cli.py`` asserts this on ``sys.modules``).

One module per command (``label``, ``filter``, ``train``, ``evaluate``, ``info``,
``taxonomy``, ``corpus`` with ``corpus_merge`` and ``corpus_agreement`` on its subgroup, ``annotate``,
``bib``), each registering itself on the group in ``_app``;
what they share is in ``_common``.

Exit statuses: 0 success; 1 "found something" (``bib`` changed or would change a file,
``corpus check`` found problems, ``filter`` matched nothing); 2 bad usage or bad input, with
one line ``tagger: error: ...`` on stderr and no traceback; 3 an internal error (a bug: one
line, or the traceback with ``TAGGER_DEBUG=1``); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import os
import sys

import click

from . import (  # noqa: F401  (register the commands)
    annotate, bib, corpus, corpus_agreement, corpus_merge, evaluate, filter, info, label, space, taxonomy, train,
)
from ._app import cli
from ._common import quiet_broken_pipe

__all__ = ["cli", "main"]


def _kill_workers():
    """Stop --jobs worker processes now: a signal sent to tagger alone (kill PID) does not
    reach them, and idle workers would otherwise linger, holding the caller's pipes open."""
    import signal

    mod = sys.modules.get("tagger.pipeline.workers")
    for executor in list(getattr(mod, "_POOL", {}).values()):
        for pid in list(getattr(executor, "_processes", None) or {}):
            try:
                os.kill(pid, signal.SIGKILL)
            except (OSError, TypeError):
                pass


class _QuietStderr:
    """``sys.stderr`` that never stops the work: once its reader has gone (``2>&1 | head -1``)
    or it cannot be written, what follows goes to ``/dev/null`` instead of raising, so that a
    command still finishes and writes its ``-o`` file.  Everything else is the real stream's."""

    def __init__(self, stream):
        self._stream = stream

    def _lost(self):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            self._stream = open(os.devnull, "w")

    def write(self, text):
        try:
            return self._stream.write(text)
        except (BrokenPipeError, OSError, ValueError):
            self._lost()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            self._lost()
            try:
                self._stream.flush()  # the rest of the buffer, into /dev/null
            except (OSError, ValueError):
                pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _guard_stderr():
    """Install :class:`_QuietStderr` (once; not over a test's captured stream)."""
    err = sys.stderr
    if err is not None and not isinstance(err, _QuietStderr) and err is sys.__stderr__:
        sys.stderr = _QuietStderr(err)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, unwound like Ctrl-C so that temporary output files are removed."""


def _on_sigterm(signum, frame):
    raise _Terminated()


def main(argv=None):
    """Console entry point: runs the click group, mapping Ctrl-C to 130 (SIGTERM to 143)
    and keeping click's own usage errors at status 2."""
    import signal

    # pyarrow (Parquet) allocates from the C library's heap, not mimalloc's pools, which kept
    # freed batches: peak RSS over 200,000 rows 313 MB against 369-383 MB, and flatter
    # (10x / 1x rows 1.20 against 1.22-1.28; benchmarks/scale.py).  A user's own choice wins.
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    signal.signal(signal.SIGTERM, _on_sigterm)
    _guard_stderr()
    try:
        rv = cli.main(args=argv, prog_name="tagger", standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt) as e:
        # Output files were already removed on the way out (Target).  Leave at once:
        # a normal exit would wait on worker processes (--jobs), which end with their parent.
        term = isinstance(e, _Terminated) or isinstance(e.__cause__, _Terminated)
        message = getattr(e, "tagger_message", None) or getattr(e.__cause__, "tagger_message", None)
        try:
            _kill_workers()
            if not isinstance(e, click.exceptions.Abort):  # click has already ended the line
                sys.stderr.write("\n")
            if message:  # what was not written, and how far it had got
                sys.stderr.write(message + "\n")
            sys.stderr.flush()
        finally:
            os._exit(143 if term else 130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except BrokenPipeError:
        quiet_broken_pipe()
        sys.exit(0)
    except Exception as e:  # a bug of ours: one line, unless asked for the traceback
        if os.environ.get("TAGGER_DEBUG"):
            raise
        sys.stderr.write(f"tagger: internal error: {type(e).__name__}: {e} (set TAGGER_DEBUG=1 for the traceback)\n")
        sys.exit(3)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
