"""tagger: offline tagging of scientific abstracts by the facets of a YAML taxonomy.

The package is a small library (taxonomy, text normalisation, features, model, corpus I/O,
evaluation, bib) under a thin click CLI (:mod:`tagger.cli`).  Importing :mod:`tagger` is
cheap: no numpy, scikit-learn, lightgbm or nltk is imported here.
"""

__version__ = "0.1.0"
