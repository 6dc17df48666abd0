import numpy as np
import pytest

from tagger.text import document_text


@pytest.mark.parametrize("which", ["shipped", "small"])
def test_numpy_trees_equal_lightgbm(which, request, corpus_records):
    """The numpy evaluator's probabilities equal LightGBM's own predict within 1e-6 (in
    practice ~1e-15) for every label, on the whole hand-tagged corpus."""
    from tagger.model import Model

    model = request.getfixturevalue("shipped_model") if which == "shipped" else Model.load(request.getfixturevalue("small_model_dir"))
    texts = [document_text(r) for r in corpus_records]
    ours = model.predict_proba(texts)
    X = model.features.transform_csr(texts)
    trees = model.forest.raw_scores(model.features.transform_dense(texts, model.forest.used_features))
    W, b = model.linear
    worst_trees = worst_proba = 0.0
    checked = 0
    for j, label in enumerate(model.labels):
        out = model.manifest["binary_outputs"][label]
        if not (model.path / "boosters" / model.manifest["booster_files"][label]).exists():
            continue
        raw = model.booster(label).predict(X, raw_score=True)
        worst_trees = max(worst_trees, float(np.abs(trees[:, out] - raw).max()))
        theirs = 1 / (1 + np.exp(-(raw + X @ W[out] + b[out])))  # LightGBM's trees on the linear base
        worst_proba = max(worst_proba, float(np.abs(ours[:, j] - theirs).max()))
        checked += 1
    assert checked == 40
    assert worst_trees < 1e-9 and worst_proba < 1e-6


def test_forest_roundtrip_and_depth(tmp_path, small_model_dir):
    from tagger.forest import Forest

    f = Forest.load(small_model_dir / "trees.npz")
    f.save(tmp_path / "t.npz")
    g = Forest.load(tmp_path / "t.npz")
    assert all(np.array_equal(getattr(f, k), getattr(g, k)) for k in ("feature", "threshold", "left", "right", "value"))
    assert 1 <= f.depth() <= 4  # max_depth=4
    assert f.n_trees == 15 * 40 - 15 * sum(1 for b in f.bias if b != 0)
