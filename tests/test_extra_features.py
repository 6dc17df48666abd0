import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.model.extra_features import NEG_MARK, FeatureAnalyzer, mark_negation
from tagger.model.features import TfidfFeatures, fit_tfidf
from tagger.text import document_text, token_text

NEGATED = ("We present a training-free approach, without fine-tuning: rather than retraining the model we "
           "prompt it. No need for labelled data. Unlike prior work, it is not a transformer.")


@pytest.fixture(scope="module")
def fitted_extra(corpus_records):
    texts = [document_text(r) for r in corpus_records[:400]] + [NEGATED] * 3
    feats, _ = fit_tfidf(texts, {"negation": True, "cues": True})
    loaded = TfidfFeatures.from_json(json.loads(json.dumps(feats.to_json())))  # as a saved model has it
    return feats, loaded, [document_text(r) for r in corpus_records[400:520]]


def test_negation_scope_marks_tokens_up_to_punctuation_and_five_tokens():
    got = mark_negation(token_text("Training-free, without fine-tuning. We do not use any of the six big "
                                   "models; instead of labels (or 2024 rules) we rely on rather than learn it"))
    m = NEG_MARK
    assert got == (f"{m}training free, without {m}fine-{m}tuning. we do not {m}use {m}any {m}of {m}the {m}six big "
                   f"models; instead of {m}labels (or 2024 rules) we rely on rather than {m}learn {m}it")
    assert mark_negation("nothing to negate here") == "nothing to negate here"


def test_training_free_without_fine_tuning_gives_no_positive_fine_tune(fitted_extra):
    feats, loaded, _ = fitted_extra
    assert {"fine tune", "fine", "tune", "!fine", "!fine !tune", "!train"} <= set(feats.terms)
    text = "A training-free, without fine-tuning method for adapting language models to new domains."
    terms = feats.analyzer()(text)
    assert "fine tune" not in terms and "fine" not in terms and "tune" not in terms
    assert {"!fine", "!tune", "!fine !tune", "!train", "free"} <= set(terms)
    row = loaded.transform_rows([text])[0]  # label time
    col = loaded.index
    assert col["fine tune"] not in row and col["fine"] not in row and col["tune"] not in row
    assert row[col["!fine !tune"]] > 0 and row[col["!train"]] > 0
    plain = loaded.transform_rows(["A training method with fine-tuning for adapting language models."])[0]
    assert plain[col["fine tune"]] > 0 and col["!fine"] not in plain


def test_cue_bigrams_keep_what_stop_words_break(fitted_extra):
    feats, loaded, _ = fitted_extra
    terms = feats.analyzer()("We propose a survey. Participants were asked; this survey shows that we prove it.")
    assert {"@we propos", "particip @were", "@this survey", "@we prove"} <= set(terms)
    assert "@we propos" in feats.terms


def test_label_time_equals_scikit_learn_with_negation_and_cues(fitted_extra):
    feats, loaded, unseen = fitted_extra
    for batch in (unseen, [NEGATED, "", "2024 not 17 without", "no"]):
        ours = loaded.transform_csr(batch).toarray()
        theirs = feats._sklearn.transform(batch).toarray()
        assert np.abs(ours - theirs).max() < 1e-12
    assert np.count_nonzero(loaded.transform_dense(unseen)[:, [loaded.index[t] for t in loaded.terms if "@" in t]])


WORDS = ["we", "our", "this", "were", "was", "not", "no", "without", "unlike", "instead", "of", "rather", "than",
         "need", "for", "the", "model", "fine", "tuning", "training", "free", "training-free", "propose", "survey",
         "participants", "data", "2024", "3d", "a", "show", "that", "prove", "release", "labels", "here"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS + [",", ".", ";", "(", ")", ":", "-"]), max_size=40), min_size=1,
                max_size=6))
def test_generated_text_label_time_equals_training(fitted_extra, docs):
    feats, loaded, _ = fitted_extra
    texts = [" ".join(d) for d in docs]
    ours = loaded.transform_csr(texts).toarray()
    theirs = feats._sklearn.transform(texts).toarray()
    assert np.abs(ours - theirs).max() < 1e-12


def test_negation_changes_no_token_or_function_word_count(fitted_extra, corpus_records):
    """Abstention reads token and function-word counts: marking negated tokens leaves them as they were."""
    _, loaded, unseen = fitted_extra
    plain = TfidfFeatures(terms=["model"], idf=[1.0], stop_words=loaded.stop_words, stem=False)
    texts = unseen + [NEGATED, "not the 2024 of without we"]
    a, b = loaded.transform(texts), plain.transform(texts)
    assert a.n_tokens.tolist() == b.n_tokens.tolist() and a.n_function_words.tolist() == b.n_function_words.tolist()


def test_old_features_json_reads_text_as_before(fitted_extra):
    feats, _, unseen = fitted_extra
    data = {k: v for k, v in feats.to_json().items() if k != "extra"}
    old = TfidfFeatures.from_json(data)
    assert old.extra == {} and "extra" not in old.to_json()
    assert "fine tune" in old.analyzer()("without fine-tuning") and isinstance(old.analyzer(), FeatureAnalyzer)
