"""The label-time path of a model with a text space: one tokenisation and one id lookup for
both vocabularies (``TfidfFeatures.transform_pair``), and the projection's column marking,
each equal to the plain computation it replaces."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.model.features import TfidfFeatures, _BatchAnalyzer
from tagger.model.space import TextSpace

WORDS = ["neural", "network", "networks", "image", "images", "protein", "quantum", "the", "of", "a", "graph",
         "learning", "learned", "survey", "benchmark", "2024", "x1", "de", "naïve", "Bayes", "deep", "model"]


def feats(terms, ngram_max):
    return TfidfFeatures(terms=terms, idf=[1.0 + (i % 7) / 3 for i in range(len(terms))], stop_words=["the", "of", "a"],
                         ngram_max=ngram_max, stem=True)


MODEL_TERMS = ["network", "imag", "protein", "quantum", "graph", "learn", "deep", "model", "deep network",
               "graph learn", "imag model", "survey", "benchmark", "naiv bay"]
SPACE_TERMS = ["network", "imag", "protein", "quantum", "learn", "bay", "naiv", "de", "x1", "model"]

text = st.lists(st.sampled_from(WORDS) | st.text("abcxyz", min_size=1, max_size=4), max_size=30).map(" ".join)
batches = st.lists(st.lists(text, min_size=0, max_size=8), min_size=1, max_size=6)


def same(a, b):
    assert a.n_rows == b.n_rows
    assert np.array_equal(a.row, b.row) and np.array_equal(a.col, b.col)
    np.testing.assert_array_equal(a.value, b.value)
    assert np.array_equal(a.n_tokens, b.n_tokens) and np.array_equal(a.n_function_words, b.n_function_words)


@settings(max_examples=60, deadline=None)
@given(batches, st.sampled_from([3, 10, 10_000]))
def test_transform_pair_equals_two_transforms(batch_list, max_tokens):
    """Batch after batch (the id tables growing, and emptied when small enough to overflow),
    the pair's two batches equal each vocabulary's own transform of the same texts."""
    old = _BatchAnalyzer.MAX_TOKENS
    _BatchAnalyzer.MAX_TOKENS = max_tokens
    try:
        m, s = feats(MODEL_TERMS, 2), feats(SPACE_TERMS, 1)
        m_ref, s_ref = feats(MODEL_TERMS, 2), feats(SPACE_TERMS, 1)
        for texts in batch_list:
            a, b = m.transform_pair(s, texts)
            same(a, m_ref.transform(texts))
            same(b, s_ref.transform(texts))
    finally:
        _BatchAnalyzer.MAX_TOKENS = old


def test_the_id_map_follows_a_table_that_was_emptied():
    m, s = feats(MODEL_TERMS, 2), feats(SPACE_TERMS, 1)
    m.transform_pair(s, ["deep quantum network"])
    m._batcher._reset()  # as when the table passed MAX_TOKENS
    a, b = m.transform_pair(s, ["naïve Bayes model of x1 images"])
    same(b, feats(SPACE_TERMS, 1).transform(["naïve Bayes model of x1 images"]))
    assert sorted(np.array(SPACE_TERMS)[b.col]) == ["bay", "imag", "model", "naiv", "x1"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 12), st.integers(0, 2**32 - 1), st.sampled_from([1, 7, 40, 1 << 21]))
def test_projection_equals_the_scipy_product(n_rows, k, seed, chunk):
    """project() (touched vocabulary rows marked; summed in numpy up to ``chunk`` values, else
    by scipy) equals scipy's sparse-by-dense product within 1e-12, either way."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    n_terms = 30
    comp = rng.normal(size=(n_terms, k)).astype(np.float16)
    space = TextSpace(feats([f"t{i}" for i in range(n_terms)], 1), comp, [(0, k)], "ppmi")
    space.weight = 0.5
    space.CHUNK = chunk
    X = sp.random(n_rows, n_terms, density=0.2, random_state=rng, format="csr")
    X.sort_indices()
    from tagger.model.features import FeatureBatch

    coo = X.tocoo()
    order = np.lexsort((coo.col, coo.row))
    batch = FeatureBatch(n_rows, coo.row[order].astype(np.int64), coo.col[order].astype(np.int64),
                         coo.data[order], np.zeros(n_rows, int), np.zeros(n_rows, int))
    Z = space.project(batch)
    ref = np.asarray(X @ comp.astype(np.float64))
    norm = np.sqrt(np.einsum("ij,ij->i", ref, ref))
    norm[norm == 0] = 1
    np.testing.assert_allclose(Z, 0.5 * (ref / norm[:, None]), rtol=1e-12, atol=1e-15)
    assert Z.shape == (n_rows, k)


def test_the_packaged_space_reads_the_same_through_the_pair():
    from tagger.model import Model

    try:
        m = Model.load("models")
        space = TextSpace.load("models/space")
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"no packaged model and space here ({e})")
    texts = ["Deep convolutional networks for image segmentation.", "",
             "A randomised trial of chemotherapy in 312 patients with breast cancer."] * 3
    a, b = m.features.transform_pair(space.features, texts)
    same(b, TextSpace.load("models/space").features.transform(texts))
    same(a, Model.load("models").features.transform(texts))
    assert b.row.size > 20


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text("abcdé", min_size=1, max_size=4), unique=True, max_size=30))
def test_tables_of_one_word_terms_equal_the_general_path(terms):
    """ngram_tables' shortcut for a vocabulary without n-grams (a text space's) gives what the
    general path gives (forced by one two-word term added and taken out again)."""
    from tagger.model.vocabulary import ngram_tables

    words, uni, grams = ngram_tables(terms)
    gw, gu, gg = ngram_tables(terms + ["zz yy"])
    assert words == gw[:len(terms)] and grams == []
    assert np.array_equal(uni, gu[:max(len(terms), 1)] if terms else np.full(1, -1))
