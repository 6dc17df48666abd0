"""Replacing a file atomically: the one primitive under ``tagger bib``'s writes
(:func:`write_atomic`) and ``-o FILE`` (:class:`tagger.writers.target.Target`).

The new content goes to a temporary file beside the file it replaces (beside a symbolic
link's target, so that the link stays a link), named ``.<name>.<random>.tmp``, with the
mode the file had (or, for a new file, what the umask allows), and is renamed onto it with
``os.replace`` only when complete; on any failure the temporary file is removed and the old
file is left as it was.  A file whose mode has no write bit is not replaced (as root,
``os.access`` would allow it, and ``os.replace`` would replace it in a writable directory).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile

WRITE_BITS = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def has_write_bit(mode: int) -> bool:
    """Whether a file of ``mode`` may be replaced: any of its write bits is set."""
    return bool(mode & WRITE_BITS)


def temp_beside(real: str, mode: int | None = None) -> tuple[int, str]:
    """A new temporary file in ``real``'s directory with ``mode`` (None: ``0o666`` less the
    umask; mkstemp would make it 0600): ``(descriptor, path)``.  Raises OSError."""
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".tmp",
                               dir=os.path.dirname(real) or ".")
    try:
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
    except BaseException:
        os.close(fd)
        discard(tmp)
        raise
    return fd, tmp


def discard(tmp: str | None) -> None:
    """Remove the temporary file ``tmp`` if it is still there."""
    if tmp is not None:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write_atomic(path: str, data: bytes) -> None:
    """Replace the existing regular file ``path`` with ``data`` (module docstring), fsync'd
    before the rename; keeps the mode; a symbolic link is followed.  What is not a regular
    file (a FIFO, a device) is never replaced, nor is a file whose mode has no write bit.

    Raises:
        OSError: the file cannot be written (nothing is left behind).
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file, so not replaced; file left as it is")
    mode = stat.S_IMODE(st.st_mode)
    if not has_write_bit(mode):  # root's os.access() says yes to everything
        raise OSError(errno.EACCES, "read-only (its mode has no write bit); file left as it is: "
                                    "chmod u+w it to let tagger write, or run with --check")
    fd, tmp = temp_beside(real, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, real)
    except BaseException:
        discard(tmp)
        raise
