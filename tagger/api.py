"""The Python API: :func:`load` a model once, then tag texts, records or a pandas DataFrame.

>>> import tagger
>>> t = tagger.load()                       # the packaged model (or $TAGGER_MODEL)
>>> [p.tags for p in t.tag(["We segment MRI scans with a U-Net ..."])]   # doctest: +SKIP
[['modality:image', 'task:segmentation', 'method:cnn']]

Every entry point runs the pipeline ``tagger label`` runs (:func:`tagger.pipeline.labeling.label_stream`:
the same normaliser, model, thresholds and abstention), so the tags are the same as the
CLI's for the same text and title.  A record whose text is null (None, NaN, pandas' NA),
absent or blank is not shown to the model: it gets no tags and the reason
:data:`NO_ABSTRACT`.  Errors are :class:`~tagger.errors.TaggerError` s with a one-line
message naming the record (``record 3: 'abstract' must be a string, not int``).

The keyword names are the same everywhere: ``text=`` and ``title=`` name the fields or
columns; ``facets=`` (facet ids) limits the facets; ``thresholds=`` is a float for every
label or a dict ``{label id: threshold}`` replacing those labels' own thresholds.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from .errors import TaggerError
from .pipeline.batches import BATCH_SIZE  # noqa: F401  (records handed to the model at a time)
from .readers.fields import NO_ABSTRACT  # noqa: F401  (the reason given to records without text)

_SOURCE = "<records>"


def load(model=None, taxonomy=None) -> "Tagger":
    """Load a model directory into a :class:`Tagger`.

    ``model``: a model directory (str or path); None: ``$TAGGER_MODEL``, else the packaged
    model.  ``taxonomy``: a taxonomy YAML file the model must have been trained for; None:
    ``$TAGGER_TAXONOMY`` if set, else no check.  Raises
    :class:`~tagger.model.ModelError` (a :class:`~tagger.errors.TaggerError`) for a
    missing, damaged or incompatible model, and TaggerError for a bad taxonomy file.
    Loading takes about 0.1 s and imports numpy, not scikit-learn, lightgbm or pandas.
    """
    from .model import Model
    from .resources import model_dir, taxonomy_chosen, taxonomy_path

    tax = None
    if taxonomy_chosen(None if taxonomy is None else str(taxonomy)):
        from .taxonomy import load_taxonomy

        tax = load_taxonomy(taxonomy_path(None if taxonomy is None else str(taxonomy)))
    return Tagger(Model.load(model_dir(None if model is None else str(model)), tax))


def load_model(model=None, taxonomy=None):
    """The :class:`~tagger.model.Model` of :func:`load` (what the commands load with
    ``--model`` and ``--taxonomy``)."""
    return load(model, taxonomy).model


class Tagger:
    """A loaded model with the entry points of the API.

    ``model``: the :class:`tagger.model.Model`; ``labels``: its label ids (list of str, in
    the column order of its scores); ``facets``: ``[(facet id, kind, [label ids])]``.
    """

    def __init__(self, model):
        self.model = model

    @property
    def labels(self) -> list[str]:
        return list(self.model.labels)

    @property
    def facets(self) -> list[tuple[str, str, list[str]]]:
        return list(self.model.facets)

    def check_facets(self, facets) -> list[str] | None:
        """``facets`` as a list (None or empty: None, all facets); raises TaggerError naming
        an unknown facet id and the model's facets."""
        if not facets:
            return None
        if isinstance(facets, str):
            facets = [facets]
        known = [f for f, _, _ in self.model.facets]
        for f in facets:
            if f not in known:
                raise TaggerError(f"unknown facet {f!r} (this model has: {', '.join(known)})")
        return list(facets)

    # -- texts ----------------------------------------------------------------------------
    def tag(self, texts, titles=None, *, facets=None, thresholds=None, min_words=None) -> list:
        """Tag a list of abstracts; returns one :class:`~tagger.model.Prediction` per text.

        ``texts``: a sequence of N str (an item may be None: no abstract); ``titles``: None
        or a sequence of N str/None.  Each Prediction has ``tags`` (label ids, taxonomy
        order), ``scores`` ({label id: probability, rounded to 4 places} of those tags) and
        ``reason`` (why the model abstained: no abstract, too short, not English; else
        None).  ``min_words``: abstain below this many words (default 20).  Raises
        TaggerError for a text that is not a string, a titles list of another length, an
        unknown facet, or a threshold for an unknown label.

        >>> t.tag(["We segment MRI scans ..."], ["A U-Net for MRI"], thresholds=0.3)  # doctest: +SKIP
        [Prediction(tags=['modality:image', ...], scores={'modality:image': 0.99, ...}, reason=None, ...)]
        """
        if isinstance(texts, str):
            raise TaggerError("tag() takes a list of texts, not one string (wrap it: [text])")
        texts = list(texts)
        if titles is None:
            rows = ({"abstract": t} for t in texts)
        else:
            titles = list(titles)
            if len(titles) != len(texts):
                raise TaggerError(f"{len(texts)} texts but {len(titles)} titles")
            rows = ({"abstract": t, "title": ti} for t, ti in zip(texts, titles))
        return [p for _, p in self._predict(rows, "abstract", "title", facets, thresholds, min_words)]

    # -- records --------------------------------------------------------------------------
    def tag_records(self, records: Iterable[dict], *, text="abstract", title="title", facets=None,
                    thresholds=None, min_words=None) -> Iterator[dict]:
        """Tag an iterable of dicts lazily, ``BATCH_SIZE`` at a time (memory stays flat).

        Yields, per record and in input order, a new dict: the record's fields plus ``tags``
        (list of label ids), ``scores`` ({label id: probability}) and ``reason`` (str or
        None); fields of those names are replaced.  ``text`` / ``title``: the fields holding
        the abstract and the title.  Other arguments and errors as :meth:`tag`; the error
        names the record by its 1-based number.

        >>> for rec in t.tag_records(json.loads(line) for line in open("works.jsonl")):  # doctest: +SKIP
        ...     print(rec["id"], rec["tags"])
        """
        for fields, p in self._predict(records, text, title, facets, thresholds, min_words):
            out = dict(fields)
            out["tags"], out["scores"], out["reason"] = p.tags, p.scores, p.reason
            yield out

    # -- data frames ----------------------------------------------------------------------
    def tag_frame(self, df, *, text="abstract", title="title", facets=None, thresholds=None, min_words=None):
        """A copy of the pandas DataFrame ``df`` (same index, every column kept) with the
        columns ``tags`` (list of label ids per row), ``scores`` (dict per row) and
        ``reason`` (str, or None when tagged) added, or replaced if present.

        ``text`` / ``title``: the columns holding the abstract and the title (a frame
        without the title column is tagged on the text alone).  NaN / None / NA text is no
        abstract: no tags, reason ``"no abstract"``, never the text "nan".  Raises
        TaggerError when the text column is missing (naming the columns there), TypeError
        when ``df`` is not a DataFrame (a list of dicts: :meth:`tag_records`), and as
        :meth:`tag` otherwise.

        >>> df = pd.DataFrame({"title": [...], "abstract": [...]})               # doctest: +SKIP
        >>> t.tag_frame(df)[["tags", "reason"]]                                   # doctest: +SKIP
        """
        if not (hasattr(df, "columns") and hasattr(df, "copy")):
            raise TypeError(f"tag_frame takes a pandas DataFrame, not {type(df).__name__}; for dicts use tag_records, "
                            "for strings tag")
        if text not in df.columns:
            have = ", ".join(repr(c) for c in list(df.columns)[:20]) or "none"
            raise TaggerError(f"no column {text!r} in the frame (its columns: {have})")
        cols = [text] + ([title] if title in df.columns and title != text else [])
        rows = (dict(zip(cols, vals)) for vals in zip(*(df[c].tolist() for c in cols)))
        preds = [p for _, p in self._predict(rows, text, title, facets, thresholds, min_words)]
        import pandas as pd

        out = df.copy()
        for name, vals in (("tags", [p.tags for p in preds]), ("scores", [p.scores for p in preds]),
                           ("reason", [p.reason for p in preds])):  # object columns: None stays None
            out[name] = pd.Series(vals, index=df.index, dtype=object)
        return out

    # -- the shared path ------------------------------------------------------------------
    def _predict(self, rows, text, title, facets, thresholds, min_words, *, source=None, start=1):
        """``(fields, Prediction)`` per dict of ``rows``, through ``label_stream``; the
        records are numbered from ``start``, and an error names ``source`` (a file) and the
        record's number, or, without ``source``, the number alone."""
        from .pipeline.labeling import label_stream
        from .readers import InputError, Record

        facets = self.check_facets(facets)
        self.model.threshold_vector(thresholds)  # a bad threshold is an error before any record
        src = source or _SOURCE

        def records():
            for n, fields in enumerate(rows, start):
                if not isinstance(fields, dict):
                    raise TaggerError(f"record {n}: a {type(fields).__name__}, not a dict of fields")
                yield Record(fields, n, n, src, str(n))

        try:  # the null rule, aliases and OpenAlex's inverted index: tagger.readers.fields.document
            for rec, p in label_stream(self.model, records(), text_field=text, title_field=title,
                                       thresholds=thresholds, facets=facets, min_words=min_words, field_check=False):
                yield rec.fields, p
        except InputError as e:  # "<records>:3: record 3: ..." -> "record 3: ..."
            msg = str(e)
            raise InputError(msg.split(": ", 1)[1] if msg.startswith(_SOURCE + ":") else msg) from None
