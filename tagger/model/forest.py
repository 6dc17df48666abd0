"""Evaluate LightGBM's trees with numpy alone: a fast-starting, fast-running inference path.

``import lightgbm`` costs 0.3-1.2 s (it imports scikit-learn when installed, see
``../shared/perf-notes.md``); ``numpy`` costs about 0.13 s.  Training flattens every tree of
every booster (from ``Booster.dump_model()``, LightGBM's own JSON export) into the arrays of
:class:`Forest`, saved as ``trees.npz`` beside the boosters' text files.

Decision rule, as LightGBM's ``NumericalDecision``: go left when ``x <= threshold``, except
that a zero value on a feature whose ``missing_type`` is ``Zero`` (or NaN on ``NaN``) follows
``default_left``.  ``tests/test_forest.py`` checks the raw scores equal ``Booster.predict``
within 1e-9 on the shipped model and the fixtures.

How a batch is scored (:meth:`Forest.raw_scores`): the QuickScorer algorithm (Lucchese et al.
2015, "QuickScorer: a fast algorithm to rank documents with additive ensembles of regression
trees", SIGIR), adapted to sparse input.  A tree's leaves are numbered left to right and a
document's state in each tree is a bit mask of the leaves still possible, all bits set at the
start.  Every split the document does *not* pass to the left clears the bits of that split's
left subtree; the exit leaf is then the lowest bit left standing (the paper proves it).
TF-IDF rows are sparse and non-negative, and every split of our models sends zero to the left
(checked when the forest is built), so only the non-zero entries of a row can send a split
right: for an entry ``(feature f, value v)`` those are exactly the splits on ``f`` whose
threshold is below ``v``, a prefix of ``f``'s splits sorted by threshold, found with one
binary search.  A document costs one step per such split, not one per tree level of every
tree.

Dense features (a text space's components, :mod:`tagger.model.space`): signed, and every row has a
value for each.  A forest built with ``n_sparse`` treats the features from that index on as
dense: their splits may send zero either way, and :meth:`Forest.raw_scores` takes their values
as a dense array, of which it turns only the columns the trees split on into entries.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ARRAYS = ("feature", "threshold", "left", "right", "value", "default_left", "missing_zero",
          "missing_nan", "roots", "tree_output", "bias")
#: saved when the forest has dense features (absent in older models: all features sparse)
OPTIONAL = ("n_sparse",)

class Scratch:
    """Work arrays kept between batches.

    numpy's large temporaries (megabytes per batch here) are fresh pages from the operating
    system each time, and faulting them in took about as long as the arithmetic (the tree
    walk of a 256-abstract batch: 12.4 ms with fresh arrays, 7.2 ms reusing them).
    ``scratch(name, size, dtype)`` returns an uninitialised array of ``size`` elements, the
    same memory on every call (grown when too small).
    """

    def __init__(self):
        self._buffers: dict[str, np.ndarray] = {}

    def __call__(self, name: str, size: int, dtype) -> np.ndarray:
        buf = self._buffers.get(name)
        if buf is None or len(buf) < size or buf.dtype != np.dtype(dtype):
            buf = self._buffers[name] = np.empty(max(size, 2 * len(buf) if buf is not None else 0), dtype)
        return buf[:size]


@dataclass
class Forest:
    """All trees of a model, flattened.

    Node arrays (length n_nodes): ``feature`` (int32, -1 at leaves), ``threshold`` (float64),
    ``left``/``right`` (int32 node indices, a leaf points to itself), ``value`` (float64 leaf
    output), ``default_left``/``missing_zero``/``missing_nan`` (bool).  Nodes are in
    depth-first order, left subtree first, as :func:`flatten_boosters` writes them.  Tree
    arrays (length n_trees): ``roots`` (int32, increasing), ``tree_output`` (int32: which
    raw-score column the tree adds to).  ``bias`` (float64, length n_outputs) is added to
    each raw-score column (non-zero only for outputs that could not be trained, e.g. a label
    without positive examples).

    ``n_sparse`` (int or None): features from this index on are dense (see the module
    docstring); None: every feature is sparse.  ``booster_columns`` (int64 or None): the
    input column each LightGBM booster feature is (``X[:, booster_columns]`` is what the
    boosters read); None: the boosters read the input as it is.  ``feature`` already holds
    input columns.

    Raises ValueError when the arrays do not form such a forest, when a tree has more than
    64 leaves, or when a split on a sparse feature sends zero to the right (see the module
    docstring).
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
    n_sparse: int | None = None
    booster_columns: np.ndarray | None = None

    def __post_init__(self):
        self.n_sparse = None if self.n_sparse is None or int(self.n_sparse) < 0 else int(self.n_sparse)
        self.used_features = np.unique(self.feature[self.feature >= 0]).astype(np.int64)
        #: the dense features the trees split on (indices into the dense block), in order
        self.used_dense = (self.used_features[self.used_features >= self.n_sparse] - self.n_sparse
                           if self.n_sparse is not None else np.zeros(0, np.int64))
        self.is_leaf = self.feature < 0
        self.n_outputs = len(self.bias)
        self._prepare()

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

    # -- QuickScorer tables -----------------------------------------------------------------
    def _prepare(self) -> None:
        """Build the tables of :meth:`raw_scores` from the node arrays (all numpy, ~1 ms)."""
        n_nodes, T = len(self.feature), self.n_trees
        split = np.flatnonzero(~self.is_leaf)
        roots = self.roots.astype(np.int64)
        if T and (roots[0] != 0 or np.any(np.diff(roots) <= 0) or roots[-1] >= n_nodes):
            raise ValueError("tree roots are not increasing node indices")
        if split.size and (np.any(self.left[split] != split + 1) or np.any(self.right[split] <= split + 1)
                           or np.any(self.right[split] >= n_nodes)):
            raise ValueError("tree nodes are not in depth-first order")
        if T and (self.tree_output.min() < 0 or self.tree_output.max() >= self.n_outputs):
            raise ValueError("a tree adds to an output the forest does not have")
        zero_left = np.where(self.missing_zero, self.default_left, 0.0 <= self.threshold)
        sparse_split = split if self.n_sparse is None else split[self.feature[split] < self.n_sparse]
        if np.any(~zero_left[sparse_split]):
            raise ValueError("a split sends zero to the right; retrain with `tagger train`")
        tree_of = np.searchsorted(roots, np.arange(n_nodes), side="right") - 1
        # leaves numbered left to right within each tree: count of leaves before a node index
        leaves_before = np.concatenate(([0], np.cumsum(self.is_leaf)))
        first = leaves_before[roots] if T else np.zeros(0, np.int64)
        n_leaves = np.diff(np.append(first, leaves_before[-1])) if T else np.zeros(0, np.int64)
        if n_leaves.size and n_leaves.max() > 64:
            raise ValueError(f"a tree has {n_leaves.max()} leaves; at most 64 are supported")
        self._leaves_max = width = int(n_leaves.max()) if T else 1
        dtype = next(d for d in (np.uint8, np.uint16, np.uint32, np.uint64) if np.dtype(d).itemsize * 8 >= width)
        # trees renumbered so that each output's trees are contiguous (one reduceat sums them)
        order = np.argsort(self.tree_output, kind="stable")
        new_id = np.empty(T, np.int64)
        new_id[order] = np.arange(T)
        counts = np.bincount(self.tree_output, minlength=self.n_outputs)[:self.n_outputs] if T else np.zeros(self.n_outputs, np.int64)
        self._has_trees = counts > 0
        self._starts = (np.cumsum(counts) - counts)[self._has_trees]
        # leaf values, shape (n_trees, width): row = new tree id, column = leaf number
        leaf = np.flatnonzero(self.is_leaf)
        self._values = np.zeros((T, width))
        self._values[new_id[tree_of[leaf]], leaves_before[leaf] - first[tree_of[leaf]]] = self.value[leaf]
        # per split: its tree and the mask that clears its left subtree's leaves [lo, mid)
        lo = leaves_before[split + 1] - first[tree_of[split]]
        mid = leaves_before[self.right[split]] - first[tree_of[split]]
        one = np.uint64(1)
        cleared = ((one << mid.astype(np.uint64)) - one) ^ ((one << lo.astype(np.uint64)) - one)
        # splits sorted by feature (as an index into used_features), then by threshold; the
        # sort key is the complex number feature + 1j * threshold, which numpy orders (and
        # binary-searches) by real part, then imaginary part: one searchsorted finds, for an
        # entry (f, v), the end of f's splits with a threshold below v
        fidx = np.searchsorted(self.used_features, self.feature[split])
        by_key = np.lexsort((self.threshold[split], fidx))
        self._split_key = fidx[by_key] + 1j * self.threshold[split][by_key]
        self._split_tree = new_id[tree_of[split]][by_key]
        self._split_mask = (~cleared).astype(dtype)[by_key]
        self._feature_start = np.searchsorted(fidx[by_key], np.arange(len(self.used_features) + 1))
        self._col_to_used = None
        self._mask_dtype = dtype
        self._offsets, self._offsets_width = np.zeros(0, np.intp), 0
        self._scratch = Scratch()
        # small trees (at most 8 splits, as ours: 8 leaves): the set of splits a row sends
        # right, as a byte with one bit per split of the tree, is a sum of distinct powers of
        # two (a row has one value per feature, so each split is counted once), which
        # numpy's add.at accumulates about ten times faster than bitwise_and.at combines
        # masks; a table of (tree, byte) -> exit-leaf value, built here, finishes the job
        n_splits = n_leaves - 1
        self._by_code = bool(T) and int(n_splits.max()) <= 8
        if self._by_code:
            splits_before = np.concatenate(([0], np.cumsum(~self.is_leaf)))
            rank = splits_before[split] - splits_before[roots[tree_of[split]]]  # split's place in its tree
            self._split_bit = (np.uint8(1) << rank.astype(np.uint8))[by_key]
            width_codes = 1 << int(n_splits.max())
            masks = np.full((T, max(int(n_splits.max()), 1)), np.iinfo(dtype).max, dtype=dtype)
            masks[new_id[tree_of[split]], rank] = ~cleared.astype(dtype)
            codes = np.arange(width_codes)
            state = np.full((T, width_codes), np.iinfo(dtype).max, dtype=dtype)
            for r in range(int(n_splits.max())):
                state[:, (codes >> r) & 1 == 1] &= masks[:, r:r + 1]
            low = state & (~state + np.array(1, dtype=dtype))
            leaf = np.frexp(low.astype(np.float64))[1] - 1  # index of the lowest bit standing
            self._code_values = np.take_along_axis(self._values, leaf, axis=1)  # (T, width_codes)
            self._code_width = width_codes

    def raw_scores(self, n_rows: int, row, col, value, dense=None) -> np.ndarray:
        """Raw (log-odds) scores, shape (n_rows, n_outputs), float64.

        The input is a sparse matrix of shape (n_rows, n_sparse) in coordinate form: the
        non-zero entries ``value[k]`` (float64, > 1e-35: TF-IDF weights) at ``(row[k], col[k])``
        (int arrays; ``col`` indexes the model's features).  Every entry not given is zero.
        ``dense`` (float array, shape (n_rows, n_dense)) holds the dense features' values, as
        columns ``n_sparse``, ``n_sparse + 1``, ...; required when the trees split on one.
        """
        out = np.tile(self.bias, (n_rows, 1))
        T = self.n_trees
        if n_rows == 0 or T == 0:
            return out
        row, col, value = np.asarray(row, np.int64), np.asarray(col, np.int64), np.asarray(value, np.float64)
        if self.used_dense.size:
            if dense is None:
                raise ValueError("this forest splits on dense features: pass their values")
            d = self.used_dense
            row = np.concatenate([row, np.repeat(np.arange(n_rows, dtype=np.int64), d.size)])
            col = np.concatenate([col, np.tile(d + self.n_sparse, n_rows)])
            value = np.concatenate([value, np.asarray(dense, np.float64)[:, d].ravel()])
        if self._col_to_used is None or len(self._col_to_used) <= (col.max(initial=0)):
            size = max(int(col.max(initial=0)) + 1, int(self.used_features.max(initial=0)) + 1)
            self._col_to_used = np.full(size, -1, np.int64)
            self._col_to_used[self.used_features] = np.arange(len(self.used_features))
        f = self._col_to_used[col]
        used = f >= 0
        row, f, value = row[used], f[used], value[used]
        # the splits sent right by each entry: a prefix of its feature's splits
        start = self._feature_start[f]
        n = np.searchsorted(self._split_key, f + 1j * value) - start
        some = n > 0
        start, n, cell0 = start[some], n[some], row[some] * T
        total = int(n.sum())
        first = np.cumsum(n) - n  # each entry's first event
        # one event per such split: its index k and its (row, tree) cell, built as running
        # sums (+1 within an entry's run of splits, a jump at each entry's first event)
        k = self._scratch("k", total, np.int64)
        k.fill(1)
        if total:
            k[first] = start - np.concatenate(([0], start[:-1] + n[:-1] - 1))
        np.cumsum(k, out=k)
        cell = self._scratch("cell", total, np.int64)
        cell.fill(0)
        if total:
            cell[first] = cell0 - np.concatenate(([0], cell0[:-1]))
        np.cumsum(cell, out=cell)
        np.add(cell, np.take(self._split_tree, k, out=self._scratch("tree", total, np.int64)), out=cell)
        if self._by_code:
            code = self._scratch("code", n_rows * T, np.uint8)
            code.fill(0)
            np.add.at(code, cell, np.take(self._split_bit, k, out=self._scratch("bit", total, np.uint8)))
            vals = np.take(self._code_values.ravel(), np.add(self._offsets_for(n_rows, self._code_width), code,
                                                            out=self._scratch("where", n_rows * T, np.intp)),
                           out=self._scratch("vals", n_rows * T, np.float64))
        else:
            mask = np.take(self._split_mask, k, out=self._scratch("mask", total, self._mask_dtype))
            state = self._scratch("state", n_rows * T, self._mask_dtype)
            state.fill(np.iinfo(self._mask_dtype).max)
            np.bitwise_and.at(state, cell, mask)
            # exit leaf = lowest bit standing (trees of more than 8 splits: never 8 leaves or
            # fewer here); its value from the (tree, leaf) table
            low = state & (~state + np.array(1, dtype=self._mask_dtype))
            leaf = np.frexp(low.astype(np.float64))[1] - 1
            where = np.add(self._offsets_for(n_rows, self._leaves_max), leaf, out=self._scratch("where", n_rows * T, np.intp))
            vals = np.take(self._values.ravel(), where, out=self._scratch("vals", n_rows * T, np.float64))
        out[:, self._has_trees] += np.add.reduceat(vals.reshape(n_rows, T), self._starts, axis=1)
        return out

    def _offsets_for(self, n_rows: int, width: int) -> np.ndarray:
        """``tree * width`` for every (row, tree) cell of ``n_rows`` rows (where each tree's
        entries start in a (tree, width) table, raveled)."""
        if len(self._offsets) < n_rows * self.n_trees or self._offsets_width != width:
            self._offsets = np.tile(np.arange(self.n_trees, dtype=np.intp) * width, n_rows)
            self._offsets_width = width
        return self._offsets[:n_rows * self.n_trees]

    def raw_scores_dense(self, X) -> np.ndarray:
        """:meth:`raw_scores` of a dense array ``X``, shape (n_rows, n_features), values >= 0."""
        X = np.asarray(X, dtype=np.float64)
        row, col = np.nonzero(X)
        return self.raw_scores(X.shape[0], row, col, X[row, col])

    def save(self, path) -> None:
        """Write ``trees.npz`` (plain arrays; loaded with ``allow_pickle=False``)."""
        extra = {"n_sparse": np.int64(self.n_sparse)} if self.n_sparse is not None else {}
        if self.booster_columns is not None:
            extra["booster_columns"] = np.asarray(self.booster_columns, dtype=np.int64)
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **{k: getattr(self, k) for k in ARRAYS}, **extra)

    @classmethod
    def load(cls, path) -> "Forest":
        with np.load(path, allow_pickle=False) as z:
            cols = {"booster_columns": z["booster_columns"]} if "booster_columns" in z.files else {}
            return cls(**{k: z[k] for k in ARRAYS}, **{k: int(z[k]) for k in OPTIONAL if k in z.files}, **cols)


def flatten_boosters(dumps: list[tuple[dict, list[int]]], n_outputs: int, bias=None, n_sparse=None,
                     booster_columns=None) -> Forest:
    """Build a :class:`Forest` from ``Booster.dump_model()`` dicts.

    ``dumps`` is a list of ``(dump, outputs)``: ``outputs[c]`` is the raw-score column of the
    booster's class ``c`` (one entry for a binary booster, ``num_class`` for a multiclass one,
    whose trees interleave the classes as LightGBM stores them).  ``booster_columns`` (int
    array or None): booster feature ``j`` is column ``booster_columns[j]`` of the forest's
    input (the boosters were trained on those columns only); the forest keeps it.
    """
    cols = None if booster_columns is None else np.asarray(booster_columns, dtype=np.int64)
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
        feature[i] = int(node["split_feature"]) if cols is None else int(cols[int(node["split_feature"])])
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
        n_sparse=n_sparse, booster_columns=cols,
    )
