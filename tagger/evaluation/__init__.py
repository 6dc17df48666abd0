"""How good a model is: cross-validation by sample and era with a baseline
(:mod:`~tagger.evaluation.crossval`), the text report and model card
(:mod:`~tagger.evaluation.report`), the ``evaluate --html`` page
(:mod:`~tagger.evaluation.html`) and the bib-eval set (:mod:`~tagger.evaluation.bibeval`).

Imported only by ``tagger evaluate`` and the benchmarks: cross-validation trains, so it
brings scikit-learn, nltk and lightgbm.  The scores themselves are
:mod:`~tagger.evaluation.metrics`.
"""
