import numpy as np
import pytest

from tagger.text import document_text


@pytest.mark.parametrize("which", ["shipped", "small"])
def test_numpy_trees_equal_lightgbm(which, request, corpus_sample):
    """The numpy evaluator's probabilities equal LightGBM's own predict within 1e-6 (in
    practice ~1e-15) for every label, on the whole hand-tagged corpus."""
    from tagger.model import Model

    model = request.getfixturevalue("shipped_model") if which == "shipped" else Model.load(request.getfixturevalue("small_model_dir"))
    texts = [document_text(r) for r in corpus_sample]
    ours = model.predict_proba(texts)
    X = model.features.transform_csr(texts)
    if model.space is not None:  # the text space's components follow the terms, as LightGBM was trained
        import scipy.sparse as sp

        X = sp.hstack([X, sp.csr_matrix(model.space.transform(texts))], format="csr")
    batch = model.transform(texts)
    trees = model.forest.raw_scores(batch.n_rows, batch.row, batch.col, batch.value, batch.components)
    W, b = model.linear
    worst_trees = worst_proba = 0.0
    checked = 0
    for j, label in enumerate(model.labels):
        out = model.manifest["binary_outputs"][label]
        if not (model.path / "boosters" / model.manifest["booster_files"][label]).exists():
            continue
        raw = model.booster(label).predict(model.booster_input(X), raw_score=True)
        worst_trees = max(worst_trees, float(np.abs(trees[:, out] - raw).max()))
        theirs = 1 / (1 + np.exp(-(raw + X @ W[out] + b[out])))  # LightGBM's trees on the linear base
        worst_proba = max(worst_proba, float(np.abs(ours[:, j] - theirs).max()))
        checked += 1
    assert checked == 40
    assert worst_trees < 1e-9 and worst_proba < 1e-6


def test_forest_roundtrip_and_depth(tmp_path, small_model_dir):
    from tagger.model.forest import Forest

    f = Forest.load(small_model_dir / "trees.npz")
    f.save(tmp_path / "t.npz")
    g = Forest.load(tmp_path / "t.npz")
    assert all(np.array_equal(getattr(f, k), getattr(g, k)) for k in ("feature", "threshold", "left", "right", "value"))
    assert 1 <= f.depth() <= 4  # max_depth=4
    assert f.n_trees == 15 * 40 - 15 * sum(1 for b in f.bias if b != 0)


# --- the QuickScorer engine against a plain tree walk, on forests built by hand -------------

def _walk(f, x):
    """Reference: LightGBM's decision rule, one tree at a time, for one dense row ``x``."""
    out = f.bias.copy()
    for t, root in enumerate(f.roots):
        n = int(root)
        while f.feature[n] >= 0:
            v = x[f.feature[n]]
            if f.missing_zero[n] and abs(v) <= 1e-35:
                go_left = f.default_left[n]
            else:
                go_left = v <= f.threshold[n]
            n = int(f.left[n] if go_left else f.right[n])
        out[f.tree_output[t]] += f.value[n]
    return out


def _random_forest(rng, n_trees, n_features, n_outputs, max_leaves):
    """Random trees of up to ``max_leaves`` leaves as :func:`flatten_boosters` dumps."""
    from tagger.model.forest import flatten_boosters

    counter = iter(range(10 ** 9))

    def node(leaves):
        if leaves == 1:
            return {"leaf_value": float(rng.normal())}
        k = int(rng.integers(1, leaves))
        return {"split_feature": int(rng.integers(n_features)), "threshold": float(rng.choice([1e-35, *rng.random(3)])),
                "decision_type": "<=", "default_left": True,
                "missing_type": str(rng.choice(["None", "Zero", "NaN"])),
                "left_child": node(k), "right_child": node(leaves - k), "_": next(counter)}

    dumps = []
    for _ in range(n_trees):
        tree = {"tree_structure": node(int(rng.integers(1, max_leaves + 1)))}
        dumps.append(({"tree_info": [tree]}, [int(rng.integers(n_outputs))]))
    return flatten_boosters(dumps, n_outputs)


@pytest.mark.parametrize("max_leaves", [1, 8, 16, 40])
def test_quickscorer_equals_a_plain_walk(max_leaves):
    """Random forests (single-leaf trees, 8/16/40-leaf trees, outputs without trees, all
    three missing-value types) on random sparse non-negative rows: scores equal a
    one-tree-at-a-time walk of LightGBM's rule within 1e-12."""
    rng = np.random.default_rng(max_leaves)
    f = _random_forest(rng, n_trees=60, n_features=30, n_outputs=7, max_leaves=max_leaves)
    X = rng.random((50, 30)) * (rng.random((50, 30)) < 0.3)
    X[0] = 0.0                                   # an empty row
    splits = np.flatnonzero(f.feature >= 0)[:5]
    X[1, f.feature[splits]] = f.threshold[splits]  # values exactly at thresholds go left
    want = np.array([_walk(f, x) for x in X])
    got = f.raw_scores_dense(X)
    assert got.shape == (50, 7)
    assert np.abs(got - want).max() < 1e-12
    # a batch the size of another and then a smaller one reuse the work arrays correctly
    assert np.abs(f.raw_scores_dense(X[:3]) - want[:3]).max() < 1e-12


def test_quickscorer_with_hypothesis():
    from hypothesis import given, settings, strategies as st

    rng = np.random.default_rng(7)
    f = _random_forest(rng, n_trees=40, n_features=12, n_outputs=3, max_leaves=8)

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.lists(st.one_of(st.just(0.0), st.floats(1e-30, 1.0)), min_size=12, max_size=12),
                    min_size=1, max_size=6))
    def check(rows):
        X = np.array(rows)
        want = np.array([_walk(f, x) for x in X])
        assert np.abs(f.raw_scores_dense(X) - want).max() < 1e-12

    check()


def test_forest_refuses_what_the_engine_cannot_score():
    from tagger.model.forest import Forest, flatten_boosters

    split = {"split_feature": 0, "threshold": -0.5, "decision_type": "<=", "default_left": True,
             "missing_type": "None", "left_child": {"leaf_value": 1.0}, "right_child": {"leaf_value": 2.0}}
    with pytest.raises(ValueError, match="sends zero to the right"):
        flatten_boosters([({"tree_info": [{"tree_structure": split}]}, [0])], 1)
    ok = flatten_boosters([({"tree_info": [{"tree_structure": {**split, "threshold": 0.5}}]}, [0])], 1)
    arrays = {k: getattr(ok, k).copy() for k in ("feature", "threshold", "left", "right", "value", "default_left",
                                                    "missing_zero", "missing_nan", "roots", "tree_output", "bias")}
    arrays["left"][0], arrays["right"][0] = 2, 1   # children swapped: not depth-first, left first
    with pytest.raises(ValueError, match="depth-first"):
        Forest(**arrays)


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_dense_signed_features_equal_lightgbm(seed, n_dense):
    """Trees over sparse TF-IDF-like columns plus dense signed ones (a text space's
    components, every row a value, zeros and negatives included): the numpy forest equals
    ``Booster.predict`` to 1e-9."""
    import lightgbm as lgb
    import scipy.sparse as sp

    from tagger.model.forest import Forest, flatten_boosters

    rng = np.random.default_rng(seed)
    n, ns = 300, 30
    Xs = sp.random(n, ns, density=0.15, random_state=seed, format="csr")
    D = rng.normal(size=(n, n_dense))
    D[: 10] = 0.0  # a text with no term of the space: all components zero
    X = sp.hstack([Xs, sp.csr_matrix(D)], format="csr")
    y = ((D[:, 0] + 3 * Xs[:, 1].toarray().ravel() + rng.normal(size=n) * 0.3) > 0.1).astype(float)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    b = lgb.train({"objective": "binary", "num_leaves": 8, "verbose": -1, "min_data_in_leaf": 3, "max_bin": 15,
                   "num_threads": 1, "deterministic": True}, lgb.Dataset(X, y), 20)
    f = flatten_boosters([(b.dump_model(), [0])], 1, n_sparse=ns)
    c = Xs.tocoo()
    o = np.lexsort((c.col, c.row))
    got = f.raw_scores(n, c.row[o], c.col[o], c.data[o], D)[:, 0]
    assert np.abs(got - b.predict(X, raw_score=True)).max() < 1e-9
    with pytest.raises(ValueError, match="dense"):
        if f.used_dense.size:
            f.raw_scores(n, c.row[o], c.col[o], c.data[o])
        else:
            raise ValueError("dense")


def test_dense_forest_round_trips_and_old_forests_stay_sparse(tmp_path, small_model_dir):
    from tagger.model.forest import Forest

    old = Forest.load(small_model_dir / "trees.npz")
    assert old.n_sparse is None and old.used_dense.size == 0
    old.n_sparse = None
    f = Forest(**{k: getattr(old, k) for k in ("feature", "threshold", "left", "right", "value", "default_left",
                                              "missing_zero", "missing_nan", "roots", "tree_output", "bias")},
               n_sparse=int(old.feature.max()) + 1)
    f.save(tmp_path / "t.npz")
    assert Forest.load(tmp_path / "t.npz").n_sparse == f.n_sparse


def test_tree_columns_are_the_terms_in_most_rows():
    """The boosters' columns: the ``n`` terms in most rows, ties to the lower column, sorted."""
    import scipy.sparse as sp

    from tagger.model.training import tree_columns

    # document frequencies of the 5 columns: 3, 1, 2, 2, 0
    X = sp.csr_matrix(np.array([[1, 0, 1, 0, 0], [1, 1, 0, 1, 0], [1, 0, 1, 1, 0]], dtype=float))
    assert tree_columns(X, 1).tolist() == [0]
    assert tree_columns(X, 2).tolist() == [0, 2]  # columns 2 and 3 tie at 2 rows: the lower wins
    assert tree_columns(X, 4).tolist() == [0, 1, 2, 3]
    assert tree_columns(X, 5) is None and tree_columns(X, None) is None


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n_tree=st.integers(3, 25))
def test_boosters_on_a_column_subset_equal_lightgbm(tmp_path_factory, seed, n_tree):
    """Boosters trained on some columns of a wider sparse row (the linear base reads all of
    them): the forest, its features mapped back to the row's columns, equals
    ``Booster.predict`` on those columns to 1e-9, also after ``trees.npz`` is written and read."""
    import lightgbm as lgb
    import scipy.sparse as sp

    from tagger.model.forest import Forest, flatten_boosters

    rng = np.random.default_rng(seed)
    n, width = 300, 40
    X = sp.random(n, width, density=0.2, random_state=seed, format="csr")
    cols = np.sort(rng.choice(width, size=n_tree, replace=False)).astype(np.int64)
    Xb = X[:, cols]
    y = (Xb[:, 0].toarray().ravel() + rng.normal(size=n) * 0.1 > 0.05).astype(float)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    b = lgb.train({"objective": "binary", "num_leaves": 8, "verbose": -1, "min_data_in_leaf": 3, "max_bin": 15,
                   "num_threads": 1, "deterministic": True}, lgb.Dataset(Xb, y), 20)
    f = flatten_boosters([(b.dump_model(), [0])], 1, booster_columns=cols)
    assert set(f.used_features.tolist()) <= set(cols.tolist())
    path = tmp_path_factory.mktemp("trees") / "trees.npz"
    f.save(path)
    g = Forest.load(path)
    assert g.booster_columns.tolist() == cols.tolist()
    c = X.tocoo()
    o = np.lexsort((c.col, c.row))
    for forest in (f, g):
        got = forest.raw_scores(n, c.row[o], c.col[o], c.data[o])[:, 0]
        assert np.abs(got - b.predict(Xb, raw_score=True)).max() < 1e-9
