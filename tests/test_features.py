import numpy as np
import pytest

from tagger.model.features import TfidfFeatures, fit_tfidf
from tagger.model.stemming import label_time_stemmer, training_stemmer
from tagger.text import Analyzer, document_text


@pytest.fixture(scope="module")
def fitted(corpus_records):
    texts = [document_text(r) for r in corpus_records[:400]]
    feats, X = fit_tfidf(texts)
    return feats, X, texts, [document_text(r) for r in corpus_records[400:520]]


def test_our_transform_equals_scikit_learns(fitted):
    feats, X, texts, unseen = fitted
    plain = TfidfFeatures.from_json(feats.to_json())  # what a loaded model has: no scikit-learn object
    for batch in (texts[:60], unseen):
        ours = plain.transform_csr(batch).toarray()
        theirs = feats._sklearn.transform(batch).toarray()
        assert ours.shape == theirs.shape
        assert np.abs(ours - theirs).max() < 1e-12
        assert ours.any()
    assert np.abs(plain.transform_dense(texts[:5]) - X[:5].toarray()).max() < 1e-12


def test_dense_columns_select_features(fitted):
    feats, X, texts, _ = fitted
    cols = [5, 0, 17]
    assert np.array_equal(feats.transform_dense(texts[:10], cols), feats.transform_dense(texts[:10])[:, cols])


def test_rows_have_unit_norm(fitted):
    feats, _, texts, _ = fitted
    for row in feats.transform_rows(texts[:20]):
        assert abs(sum(v * v for v in row.values()) - 1.0) < 1e-12


def test_label_time_stems_equal_nltks_over_the_vocabulary(fitted, corpus_records):
    """Every token of the training texts stems the same way with and without nltk."""
    feats, _, texts, _ = fitted
    nltk_stem = training_stemmer()
    ours = label_time_stemmer(feats.stem_exceptions)
    tokens = {tok for t in texts for tok, _ in Analyzer(stop_words=feats.stop_words).tokens(t)}
    assert len(tokens) > 5000
    assert [t for t in tokens if ours(t) != nltk_stem(t)] == []
    # ...and the exceptions are real: without them some tokens differ
    assert feats.stem_exceptions and any(label_time_stemmer()(t) != nltk_stem(t) for t in feats.stem_exceptions)


def test_vocabulary_terms_come_out_of_the_label_time_analyzer(fitted):
    feats, _, texts, _ = fitted
    seen = {t for text in texts for t in feats.analyzer()(text)}
    assert set(feats.terms) <= seen


def test_token_cache_stays_bounded_and_gives_the_same_rows(fitted, monkeypatch):
    """With a token cache of 50 entries (emptied between batches when full), every batch's
    rows equal those of a fresh transform of each text alone."""
    from tagger.model.features import _BatchAnalyzer

    feats, _, texts, unseen = fitted
    plain = TfidfFeatures.from_json(feats.to_json())
    monkeypatch.setattr(_BatchAnalyzer, "MAX_TOKENS", 50)
    batches = [plain.transform_dense(unseen[i:i + 7]) for i in range(0, 70, 7)]
    assert len(plain._batcher.ids) < 50 + 7 * 400
    alone = TfidfFeatures.from_json(feats.to_json())
    want = np.vstack([alone.transform_dense([t]) for t in unseen[:70]])
    assert np.abs(np.vstack(batches) - want).max() < 1e-15


def test_token_and_function_word_counts():
    feats = TfidfFeatures(terms=["model", "deep model"], idf=[1.0, 2.0], stop_words=["the", "of", "a", "we"], stem=False)
    b = feats.transform(["We train the deep model of 2024 a b", "", "Der Hund"])
    assert b.n_tokens.tolist() == [8, 0, 2]          # "2024" is no token, "a"/"b" are
    assert b.n_function_words.tolist() == [3, 0, 0]  # we, the, of ("a" is no longer one: French "à")
    assert b.row.tolist() == [0, 0] and b.col.tolist() == [0, 1]
    assert b.value == pytest.approx([1 / 5 ** 0.5, 2 / 5 ** 0.5])


def test_vocabulary_file_gives_the_same_transform(tmp_path, corpus_sample):
    """A model's ``vocabulary.npz`` (terms, idf and lookup tables as arrays) reads back into
    features whose label-time transform equals the fitted ones' entry for entry; the terms
    are read only when asked for; a ``features.json`` that holds its terms (older models) loads too."""
    import json

    import numpy as np

    from tagger.model.features import dump_json, fit_tfidf
    from tagger.model.vocabulary import Terms, load_features, save_features
    from tagger.text import document_text

    texts = [document_text(r) for r in corpus_sample[:300]]
    feats, _ = fit_tfidf(texts)
    save_features(tmp_path, feats)
    assert "terms" not in json.loads((tmp_path / "features.json").read_text(encoding="utf-8"))
    back = load_features(tmp_path)
    assert isinstance(back.terms, Terms) and back.terms._list is None and back.n_features == feats.n_features
    a, b = feats.transform(texts[:50]), back.transform(texts[:50])
    for k in ("row", "col", "value", "n_tokens", "n_function_words"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k
    assert a.row.size > 1000
    assert back.terms._list is None  # the transform did not need them
    assert list(back.terms) == list(feats.terms) and back.index[feats.terms[7]] == 7
    old = tmp_path / "old"
    old.mkdir()
    with open(old / "features.json", "w", encoding="utf-8") as fh:
        dump_json(feats.to_json(), fh)
    assert np.array_equal(load_features(old).transform(texts[:5]).value, feats.transform(texts[:5]).value)
