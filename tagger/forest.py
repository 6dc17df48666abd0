"""Evaluate LightGBM's trees with numpy alone: a fast-starting inference path.

``import lightgbm`` costs 0.3-1.2 s (it imports scikit-learn when installed, see
``../shared/perf-notes.md``); ``numpy`` costs about 0.13 s.  Training flattens every tree of
every booster (from ``Booster.dump_model()``, LightGBM's own JSON export) into the arrays of
:class:`Forest`, saved as ``trees.npz`` beside the boosters' text files.  At label time all
trees are walked at once for a batch of documents, one tree level per numpy step.

Decision rule, as LightGBM's ``NumericalDecision``: go left when ``x <= threshold``, except
that a zero value on a feature whose ``missing_type`` is ``Zero`` (or NaN on ``NaN``) follows
``default_left``.  ``tests/test_forest.py`` checks the raw scores equal ``Booster.predict``
within 1e-9 on the shipped model and the fixtures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ARRAYS = ("feature", "threshold", "left", "right", "value", "default_left", "missing_zero",
          "missing_nan", "roots", "tree_output", "bias")


@dataclass
class Forest:
    """All trees of a model, flattened.

    Node arrays (length n_nodes): ``feature`` (int32, -1 at leaves), ``threshold`` (float64),
    ``left``/``right`` (int32 node indices, a leaf points to itself), ``value`` (float64 leaf
    output), ``default_left``/``missing_zero``/``missing_nan`` (bool).  Tree arrays (length
    n_trees): ``roots`` (int32), ``tree_output`` (int32: which raw-score column the tree adds
    to).  ``bias`` (float64, length n_outputs) is added to each raw-score column (non-zero only
    for outputs that could not be trained, e.g. a label without positive examples).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray
    default_left: np.ndarray
    missing_zero: np.ndarray
    missing_nan: np.ndarray
    roots: np.ndarray
    tree_output: np.ndarray
    bias: np.ndarray

    def __post_init__(self):
        self.used_features = np.unique(self.feature[self.feature >= 0]).astype(np.int64)
        col = np.searchsorted(self.used_features, np.maximum(self.feature, 0))
        self.node_col = np.where(self.feature >= 0, np.minimum(col, max(len(self.used_features) - 1, 0)), 0).astype(np.intp)
        self.is_leaf = self.feature < 0
        self.n_outputs = len(self.bias)
        self._onehot = None

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    def depth(self) -> int:
        """Depth of the deepest tree (number of splits on the longest root-leaf path)."""
        best = 0
        stack = [(int(r), 0) for r in self.roots]
        while stack:
            node, k = stack.pop()
            if self.is_leaf[node]:
                best = max(best, k)
            else:
                stack.append((int(self.left[node]), k + 1))
                stack.append((int(self.right[node]), k + 1))
        return best

    def raw_scores(self, X: np.ndarray) -> np.ndarray:
        """Raw (log-odds) scores, shape (n_docs, n_outputs), float64.

        ``X`` has shape (n_docs, len(used_features)): the feature values of the columns in
        ``used_features``, in that order (see ``TfidfFeatures.transform_dense``).
        """
        n = X.shape[0]
        out = np.tile(self.bias, (n, 1))
        if n == 0 or self.n_trees == 0:
            return out
        cur = np.tile(self.roots.astype(np.intp), (n, 1))
        if X.shape[1] == 0:
            X = np.zeros((n, 1))
        ncol = X.shape[1]
        flat = np.ascontiguousarray(X, dtype=np.float64).ravel()
        offset = (np.arange(n, dtype=np.intp) * ncol)[:, None]
        any_zero_rule = bool(self.missing_zero.any() or self.missing_nan.any())
        # a leaf points to itself, so walking max-depth levels leaves finished paths in place
        for _ in range(self._max_depth()):
            x = flat[offset + self.node_col[cur]]
            go_left = x <= self.threshold[cur]
            if any_zero_rule:
                zero = (self.missing_zero[cur] & (np.abs(x) <= 1e-35)) | (self.missing_nan[cur] & np.isnan(x))
                go_left = np.where(zero, self.default_left[cur], go_left)
            cur = np.where(go_left, self.left[cur], self.right[cur])
        leafv = self.value[cur]
        if self._onehot is None:
            self._onehot = np.zeros((self.n_trees, self.n_outputs))
            self._onehot[np.arange(self.n_trees), self.tree_output] = 1.0
        return out + leafv @ self._onehot

    def _max_depth(self) -> int:
        if not hasattr(self, "_depth"):
            self._depth = self.depth()
        return self._depth

    def save(self, path) -> None:
        """Write ``trees.npz`` (plain arrays; loaded with ``allow_pickle=False``)."""
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **{k: getattr(self, k) for k in ARRAYS})

    @classmethod
    def load(cls, path) -> "Forest":
        with np.load(path, allow_pickle=False) as z:
            return cls(**{k: z[k] for k in ARRAYS})


def flatten_boosters(dumps: list[tuple[dict, list[int]]], n_outputs: int, bias=None) -> Forest:
    """Build a :class:`Forest` from ``Booster.dump_model()`` dicts.

    ``dumps`` is a list of ``(dump, outputs)``: ``outputs[c]`` is the raw-score column of the
    booster's class ``c`` (one entry for a binary booster, ``num_class`` for a multiclass one,
    whose trees interleave the classes as LightGBM stores them).
    """
    feature, threshold, left, right, value, dleft, mzero, mnan = ([] for _ in range(8))
    roots, tree_output = [], []

    def add(node) -> int:
        i = len(feature)
        for a in (feature, threshold, left, right, value, dleft, mzero, mnan):
            a.append(0)
        if "leaf_value" in node:
            feature[i], value[i], left[i], right[i] = -1, float(node["leaf_value"]), i, i
            return i
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported decision type {node.get('decision_type')!r} (categorical splits)")
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        dleft[i] = bool(node["default_left"])
        mzero[i] = node.get("missing_type") == "Zero"
        mnan[i] = node.get("missing_type") == "NaN"
        left[i] = add(node["left_child"])
        right[i] = add(node["right_child"])
        return i

    for dump, outputs in dumps:
        k = len(outputs)
        for t, info in enumerate(dump["tree_info"]):
            roots.append(add(info["tree_structure"]))
            tree_output.append(outputs[t % k])
    return Forest(
        feature=np.array(feature, dtype=np.int32), threshold=np.array(threshold, dtype=np.float64),
        left=np.array(left, dtype=np.int32), right=np.array(right, dtype=np.int32),
        value=np.array(value, dtype=np.float64), default_left=np.array(dleft, dtype=bool),
        missing_zero=np.array(mzero, dtype=bool), missing_nan=np.array(mnan, dtype=bool),
        roots=np.array(roots, dtype=np.int32), tree_output=np.array(tree_output, dtype=np.int32),
        bias=np.zeros(n_outputs) if bias is None else np.asarray(bias, dtype=np.float64),
    )
