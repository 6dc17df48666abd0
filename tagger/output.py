"""Kept for code written against the old ``tagger.output``: the writers are :mod:`tagger.writers`."""

from .writers import OUTPUT_FORMATS, PER_RECORD_FORMATS, Renderer, Writer  # noqa: F401
from .writers.jsonl import tagged_fields, tagged_json  # noqa: F401
