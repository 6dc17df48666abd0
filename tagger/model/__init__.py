"""The model: features, the numpy scorer, training and what surrounds them.

``tagger label`` imports :mod:`tagger.model.inference` (loading a model directory, scoring
through the numpy path, thresholds) with :mod:`~tagger.model.features`,
:mod:`~tagger.model.forest`, :mod:`~tagger.model.abstain` and :mod:`~tagger.model.explain`;
training (:mod:`~tagger.model.training`, with :mod:`~tagger.model.modeldir`,
:mod:`~tagger.model.stemming`'s training stemmer and the out-of-fold figures of
:mod:`~tagger.model.scores`) brings scikit-learn, nltk and lightgbm and is imported only by
``train``, ``evaluate`` and the annotator's retrains.  Only the light names are re-exported here.
"""

from .inference import Model, ModelError, Prediction

__all__ = ["Model", "ModelError", "Prediction"]
