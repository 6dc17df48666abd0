"""Reading the parts of a model directory that need checks: the feature version, options whose
code was removed, the text space and the linear base.  :class:`ModelError` is what every
loading failure raises."""

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


def check_removed_options(path, manifest: dict) -> None:
    """Raise :class:`ModelError` (one line, "... please retrain") when the model in ``path``
    uses an option whose code was deleted, none of them having earned its place in the screens
    (fixtures/README.md, "Second round"): the label-dependency second stage (``stage2.npz``,
    or ``stage2`` in the manifest's parameters) or an optional feature (negation scope, cue
    bigrams, title or claim namespaces, character n-grams) that ``features.json`` turns on in
    its ``extra`` or at its top level.  All of them off, or none, is fine: such a model reads
    text as this code does.  An unreadable ``features.json`` is left to the loading after."""
    import json
    from pathlib import Path

    path = Path(path)
    used = []
    params = manifest.get("parameters")
    if (path / "stage2.npz").exists() or (isinstance(params, dict) and params.get("stage2")):
        used.append("the label-dependency second stage (stage2)")
    from .features import REMOVED_OPTIONS

    try:
        raw = (path / "features.json").read_bytes()
        named = any(f'"{k}"'.encode() in raw for k in ("extra", *REMOVED_OPTIONS))
        data = json.loads(raw) if named else None  # most models: no parse here (the loading parses it)
    except (OSError, ValueError):
        data = None
    on = {}
    if isinstance(data, dict):
        extra = data.get("extra")
        for where in (extra if isinstance(extra, dict) else {}, data):  # under "extra", or at the top
            on.update({k: v for k, v in where.items() if v and (where is extra or k in REMOVED_OPTIONS)})
    if on:
        used.append("the feature option" + ("s " if len(on) > 1 else " ") + ", ".join(sorted(on)) + " (features.json)")
    if used:
        raise ModelError(f"{path}: the model uses {' and '.join(used)}, whose code was removed from this "
                         "tagger: please retrain with `tagger train`")


def load_space(path, manifest: dict):
    """The text space a model was trained with, or None (:func:`tagger.model.space.space_for_model`);
    raises :class:`ModelError` ("please retrain") when it is missing or another space."""
    if not manifest.get("space"):
        return None
    from .space import SpaceError, space_for_model

    info = manifest["space"]
    weight = info.get("weight", 1.0) if isinstance(info, dict) else None
    if not isinstance(info, dict) or not isinstance(weight, (int, float)) or isinstance(weight, bool) \
            or not 0 < weight < float("inf"):
        raise ModelError(f"{path}: damaged model files (the manifest's space is not a space with a positive "
                         "weight); retrain with `tagger train`")
    try:
        return space_for_model(path, manifest["space"])
    except SpaceError as e:
        raise ModelError(str(e)) from None


class QuantizedWeights:
    """The linear base's weights W, shape (n_outputs, n_features), as ``linear_wt.npy`` keeps
    them: per term (column of W) one int8 per output and a float64 scale, ``W[:, t] = q[t] *
    scale[t]``, each weight within ``max |W[:, t]| / 254`` of the fitted one (104,000 terms x
    40 labels: 4.2 MB, where float16 would take 8.3 and float64 33).  ``q`` (n_features,
    n_outputs) is memory-mapped: scoring reads the rows of the terms a batch holds
    (:meth:`terms`).  ``np.asarray(W)`` and ``W[...]`` give float64 values (all of them:
    for explanations and tests)."""

    def __init__(self, q, scale):
        self.q, self.scale = q, scale

    @property
    def shape(self) -> tuple:
        return (self.q.shape[1], self.q.shape[0])

    def terms(self, cols, value, out):
        """``out[i] = W[:, cols[i]] * value[i]`` (float64, shape (len(cols), n_outputs))."""
        import numpy as np

        return np.multiply(self.q[cols], (self.scale[cols] * value)[:, None], out=out)

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        return (np.asarray(self.q, dtype=np.float64) * self.scale[:, None]).T.astype(dtype or np.float64)

    def __getitem__(self, key):
        import numpy as np

        return np.asarray(self)[key]


def quantize(W):
    """``(q, scale)`` of :class:`QuantizedWeights` for W (n_outputs, n_features) float:
    ``q`` int8 (n_features, n_outputs) in [-127, 127], ``scale`` float64 (n_features,)."""
    import numpy as np

    WT = np.asarray(W, dtype=np.float64).T
    top = np.abs(WT).max(axis=1) if WT.size else np.zeros(WT.shape[0])
    scale = np.where(top > 0, top / 127.0, 1.0)
    return np.ascontiguousarray(np.rint(WT / scale[:, None]).astype(np.int8)), scale


def load_linear(path):
    """``(W, b)`` from ``linear.npz``, loaded without pickle.  Without a
    ``W`` in it (models since issue 18), W is a :class:`QuantizedWeights` of ``linear_wt.npy``
    beside it, memory-mapped, and of the ``scale`` in ``linear.npz``
    (:func:`tagger.model.modeldir.save_linear_base`)."""
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        if "W" in z.files:
            return z["W"], z["b"]
        b, scale = z["b"], z["scale"]
    q = np.load(path.parent / "linear_wt.npy", mmap_mode="r", allow_pickle=False)
    if q.dtype != np.int8 or q.ndim != 2 or q.shape[0] != len(scale) or q.shape[1] != len(b):
        raise ValueError("linear_wt.npy does not fit linear.npz")
    return QuantizedWeights(q, scale), b
