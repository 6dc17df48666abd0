"""tagger: offline tagging of scientific abstracts by the facets of a YAML taxonomy.

The package is a small library (taxonomy, text normalisation, features, model, corpus I/O,
evaluation, bib) under a thin click CLI (:mod:`tagger.cli`).  Importing :mod:`tagger` is
cheap: no numpy, scikit-learn, lightgbm, nltk or pandas is imported here.

The Python API (:mod:`tagger.api`)::

    import tagger
    t = tagger.load()                                  # a Tagger: the packaged model
    t.tag(["We segment MRI scans ..."])                 # [Prediction(tags, scores, reason)]
    t.tag_records(dicts, text="abstract", title="title")  # dicts + tags/scores/reason, lazily
    t.tag_frame(df, text="abstract", title="title")       # a DataFrame with 3 columns more

and, for a Dask DataFrame or bag, :mod:`tagger.dask`.
"""

__version__ = "0.1.0"

__all__ = ["load", "Tagger", "Prediction", "TaggerError", "__version__"]


def load(model=None, taxonomy=None):
    """Load a model into a :class:`~tagger.api.Tagger` (see :func:`tagger.api.load`)."""
    from .api import load as _load

    return _load(model, taxonomy)


def __getattr__(name):
    # the API's classes on first use, so that `import tagger` stays cheap
    if name == "Tagger":
        from .api import Tagger

        return Tagger
    if name == "Prediction":
        from .model import Prediction

        return Prediction
    if name == "TaggerError":
        from .errors import TaggerError

        return TaggerError
    raise AttributeError(f"module 'tagger' has no attribute {name!r}")
