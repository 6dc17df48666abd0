"""Reading the parts of a model directory that need checks: the feature version, the text
space and the linear base.  :class:`ModelError` is what every loading failure raises."""

from __future__ import annotations

from ..errors import TaggerError


class ModelError(TaggerError):
    """A model directory that cannot be used; the message is one line and says what to do."""


def check_feature_version(path, manifest: dict) -> None:
    """Raise :class:`ModelError` (one line, "... please retrain") when the model in ``path``
    was built by another feature or normaliser version than this tagger's
    (:func:`tagger.model.features.feature_version`): its vocabulary would not match the terms
    this code makes of a text.  A manifest from before the field existed (no
    ``feature_version``) is not checked: nothing says what it was built with."""
    from .features import feature_version

    mine, theirs = feature_version(), manifest.get("feature_version")
    if theirs is not None and theirs != mine:
        def show(v):
            return ", ".join(f"{k} {v.get(k)}" for k in sorted(set(mine) | set(v))) if isinstance(v, dict) else repr(v)
        raise ModelError(f"{path}: model built with feature version ({show(theirs)}), but this tagger computes "
                         f"({show(mine)}): please retrain with `tagger train`")


def load_space(path, manifest: dict):
    """The text space a model was trained with, or None (:func:`tagger.model.space.space_for_model`);
    raises :class:`ModelError` ("please retrain") when it is missing or another space."""
    if not manifest.get("space"):
        return None
    from .space import SpaceError, space_for_model

    try:
        return space_for_model(path, manifest["space"])
    except SpaceError as e:
        raise ModelError(str(e)) from None


def load_linear(path):
    """``(W, b)`` from ``linear.npz`` (or ``stage2.npz``), loaded without pickle.  Without a
    ``W`` in it, W is the transpose of ``linear_wt.npy`` beside it (float16, shape
    (n_features, n_outputs), memory-mapped: :func:`tagger.model.modeldir.save_linear_base`)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        if "W" in z.files:
            return z["W"], z["b"]
        b = z["b"]
    return np.load(path.parent / "linear_wt.npy", mmap_mode="r", allow_pickle=False).T, b
