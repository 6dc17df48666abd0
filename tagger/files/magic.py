"""What a file is by its first bytes, where readers/ and bib/ must agree: a PDF, gzip data."""

from __future__ import annotations

import re

#: a PDF's header: ``%PDF-`` and its version's first digit (``%PDF-1.7``, ``%PDF-2.0``); a
#: ``%`` comment line of a .bib or a text that merely starts with "PDF" (``%PDFs of these
#: papers are in ./pdfs``) is none
_PDF = re.compile(rb"%PDF-[0-9]")
#: gzip's magic number
GZIP = b"\x1f\x8b"


def is_pdf(head: bytes) -> bool:
    """Whether ``head``, the first bytes of an input, is the start of a PDF (``%PDF-1.7``)."""
    return _PDF.match(head) is not None


def is_gzip(head: bytes) -> bool:
    """Whether ``head``, the first bytes of a file, is gzip data (whatever the file's name)."""
    return head.startswith(GZIP)
