"""``tagger space build``: read pools of unlabelled abstracts and learn a text space from them.

The pools are read like any input of ``tagger label`` (:class:`~tagger.pipeline.inputs.Inputs`:
JSON Lines, CSV, text, ``.gz``...), each record's text being what the model reads (title, then
abstract: :func:`tagger.text.document_text`); no label is read.  The space itself is
:mod:`tagger.model.space`.
"""

from __future__ import annotations

from ..errors import TaggerError


def pool_texts(files, opts: dict, *, warn=None, progress=None) -> list[str]:
    """The texts (title + ". " + abstract) of every readable record with an abstract in
    ``files`` (list of paths or "-"), in order; bad records are skipped with ``warn``.
    ``progress(done, None, what)`` is called every 10,000 records."""
    from ..readers import record_text_error
    from ..readers.fields import document
    from ..readers.jsonl import parse_json_record
    from .inputs import Inputs

    inputs = Inputs(files, opts, warn=warn)
    texts, n = [], 0
    for rec in inputs.records():
        n += 1
        if rec.fields is None:
            parse_json_record(rec)
        if rec.error or record_text_error(rec, inputs.text_field, opts["title_field"]):
            continue
        doc = document(rec.fields, inputs.text_field, opts["title_field"])
        if doc.text:
            texts.append(f"{doc.title}. {doc.text}" if doc.title else doc.text)
        if progress and n % 10_000 == 0:
            progress(n, None, "reading the pools")
    return texts


def build(files, out_dir, opts: dict, *, k: int, kind: str, max_terms: int, warn=None, progress=None) -> dict:
    """Learn a text space from the pools ``files`` and write it to ``out_dir``.

    Returns ``{"texts", "terms", "k", "kind", "sha256"}``.  Raises :class:`TaggerError` when
    the pools hold too few texts for ``k`` components."""
    from ..model.space_build import build_space

    texts = pool_texts(files, opts, warn=warn, progress=progress)
    try:
        space = build_space(texts, k=k, kind=kind, max_terms=max_terms, progress=progress)
    except ValueError as e:
        raise TaggerError(f"{', '.join(map(str, files))}: {e}") from None
    sha = space.save(out_dir)
    return {"texts": len(texts), "terms": len(space.features.terms), "k": space.k, "kind": kind, "sha256": sha}
