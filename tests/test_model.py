import json
import random

import numpy as np
import pytest

from tagger.model.abstain import abstain_reason
from tagger.model.inference import MODEL_FORMAT, Model, ModelError
from tagger.model.training import label_matrix, train, tune_thresholds
from tagger.taxonomy import parse_taxonomy

from test_taxonomy import MINI


def test_trained_on_80_percent_beats_the_frequency_baseline(corpus_sample, taxonomy, tmp_path):
    """Micro-F1 on a seeded 20% hold-out is at least 0.15 above predicting, for every
    abstract, the labels that are most frequent in the training part."""
    from sklearn.metrics import f1_score

    recs = list(corpus_sample)
    random.Random(2026).shuffle(recs)
    cut = int(0.8 * len(recs))
    tr, te = recs[:cut], recs[cut:]
    train(tr, taxonomy, tmp_path / "m", threshold_folds=3)
    model = Model.load(tmp_path / "m", taxonomy)
    Y_te = label_matrix(te, taxonomy.label_ids)
    pred = model.predict(te, min_words=0)
    T = label_matrix([{"labels": p.tags} for p in pred], taxonomy.label_ids)
    ours = f1_score(Y_te, T, average="micro")
    # baseline: the k most frequent training labels, k = median labels per training abstract
    Y_tr = label_matrix(tr, taxonomy.label_ids)
    k = int(np.median(Y_tr.sum(axis=1)))
    top = np.argsort(-Y_tr.sum(axis=0))[:k]
    B = np.zeros_like(Y_te)
    B[:, top] = 1
    base = f1_score(Y_te, B, average="micro")
    assert ours >= base + 0.15, (ours, base)


def test_training_is_deterministic(small_model_dir, corpus_sample, taxonomy, tmp_path):
    train(corpus_sample[::4], taxonomy, tmp_path / "again", num_rounds=15, threshold_folds=0, created="2026-01-01T00:00:00Z",
          tfidf_params={"tree_terms": 2000})  # as small_model_dir
    a, b = small_model_dir, tmp_path / "again"
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert {"manifest.json", "trees.npz", "linear.npz", "linear_wt.npy", "features.json", "vocabulary.npz",
            "boosters/modality__text.txt.gz"} <= set(names)
    for n in names:
        assert (a / n).read_bytes() == (b / n).read_bytes(), n


def test_manifest_records_what_the_issue_asks(small_model_dir, taxonomy):
    m = json.loads((small_model_dir / "manifest.json").read_text())
    assert m["format_version"] == MODEL_FORMAT
    assert m["labels"] == taxonomy.label_ids
    assert m["taxonomy_fingerprint"] == taxonomy.fingerprint()
    assert len(m["corpus_sha256"]) == 64 and m["corpus_size"] > 300
    assert m["versions"]["lightgbm"] and m["versions"]["scikit-learn"]
    assert m["parameters"]["num_rounds"] == 15 and m["created"] == "2026-01-01T00:00:00Z"


def test_model_files_are_plain_data(small_model_dir):
    import gzip

    suffixes = {"".join(p.suffixes) for p in small_model_dir.rglob("*") if p.is_file()}
    assert suffixes <= {".json", ".txt.gz", ".npz", ".npy", ".md"}
    np.load(small_model_dir / "trees.npz", allow_pickle=False).close()
    assert np.load(small_model_dir / "linear_wt.npy", allow_pickle=False).dtype == np.int8
    for p in (small_model_dir / "boosters").iterdir():  # LightGBM's text format, gzipped
        assert gzip.decompress(p.read_bytes()).startswith(b"tree\n"), p


def test_a_model_with_uncompressed_booster_text_still_explains(small_model_dir, tmp_path):
    """Models written before the boosters were gzipped (boosters/*.txt) still load and explain."""
    import gzip
    import shutil

    d = tmp_path / "old"
    shutil.copytree(small_model_dir, d)
    m = json.loads((d / "manifest.json").read_text())
    for label, name in m["booster_files"].items():
        src = d / "boosters" / name
        if src.exists():
            (d / "boosters" / name[:-3]).write_bytes(gzip.decompress(src.read_bytes()))
            src.unlink()
        m["booster_files"][label] = name[:-3]
    (d / "manifest.json").write_text(json.dumps(m))
    old, new = Model.load(d), Model.load(small_model_dir)
    label = old.labels[0]
    X = new.booster_input(new.features.transform_csr(["We fine-tune a language model on text benchmarks"]))
    assert (old.booster(label).predict(X, raw_score=True) == new.booster(label).predict(X, raw_score=True)).all()


def test_old_format_and_other_taxonomy_say_retrain(small_model_dir, tmp_path):
    import shutil

    d = tmp_path / "old"
    shutil.copytree(small_model_dir, d)
    m = json.loads((d / "manifest.json").read_text())
    m["format_version"] = 0
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(ModelError, match="please retrain"):
        Model.load(d)
    with pytest.raises(ModelError, match="another taxonomy"):
        Model.load(small_model_dir, parse_taxonomy(MINI, "mini.yaml"))
    with pytest.raises(ModelError, match="not a tagger model directory"):
        Model.load(tmp_path)


def test_another_feature_or_normaliser_version_says_retrain(small_model_dir, tmp_path, monkeypatch):
    import shutil

    import tagger.model.features
    import tagger.text
    from tagger.model.features import feature_version

    m = json.loads((small_model_dir / "manifest.json").read_text())
    assert m["feature_version"] == feature_version() == {"features": tagger.model.features.FEATURES_VERSION,
                                                          "normaliser": tagger.text.NORMALIZER_VERSION}
    d = tmp_path / "other"
    shutil.copytree(small_model_dir, d)
    m["feature_version"] = {**feature_version(), "normaliser": feature_version()["normaliser"] + 1}
    (d / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(ModelError, match=r"^.*other: model built with feature version .*please retrain with `tagger train`$"):
        Model.load(d)
    Model.load(small_model_dir)  # the same version loads
    monkeypatch.setattr(tagger.model.features, "FEATURES_VERSION", tagger.model.features.FEATURES_VERSION + 1)
    with pytest.raises(ModelError, match="please retrain"):
        Model.load(small_model_dir)  # this tagger's features changed since the model was built
    del m["feature_version"]  # a model from before the field: nothing to compare, it loads
    (d / "manifest.json").write_text(json.dumps(m))
    Model.load(d)


def test_a_failed_training_leaves_the_old_model(small_model_dir, corpus_records, taxonomy, tmp_path, monkeypatch):
    import shutil

    import tagger.model.forest

    d = tmp_path / "m"
    shutil.copytree(small_model_dir, d)
    before = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(tagger.model.forest.Forest, "save", boom)
    with pytest.raises(RuntimeError):
        train(corpus_records[:40], taxonomy, d, num_rounds=2, threshold_folds=0)
    assert {p: p.read_bytes() for p in d.rglob("*") if p.is_file()} == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m"]  # no temporary directory left


def test_a_different_taxonomy_trains_and_predicts(tmp_path):
    """Nothing is tied to the default label set: an exclusive facet and a threshold from the file."""
    tax = parse_taxonomy(MINI, "mini.yaml")
    rng = random.Random(1)
    vision = "We segment images and photos with a convolutional network on pixels"
    language = "We parse sentences and translate text with a language model on corpora"
    recs = []
    for i in range(60):
        topic = i % 2
        words = (vision if topic == 0 else language).split()
        rng.shuffle(words)
        labels = ["topic:vision" if topic == 0 else "topic:language"] + (["kind:empirical"] if i % 3 == 0 else [])
        recs.append({"id": str(i), "abstract": " ".join(words) + (" experiments results" if i % 3 == 0 else ""),
                     "labels": labels})
    train(recs, tax, tmp_path / "mini", num_rounds=20, threshold_folds=3)
    model = Model.load(tmp_path / "mini", tax)
    assert model.labels == ["topic:vision", "topic:language", "kind:empirical"]
    assert model.manifest["thresholds"]["kind:empirical"] == 0.3
    preds = model.predict([{"abstract": vision}, {"abstract": language + " experiments results"}], min_words=0)
    assert preds[0].tags == ["topic:vision"]
    assert preds[1].tags[0] == "topic:language"
    proba = model.predict_proba([vision])
    # exclusive facet: one softmax over (none, vision, language), so its labels share at most 1
    assert proba[0, 0] + proba[0, 1] <= 1.0 + 1e-12 and proba[0, 0] > proba[0, 1]


def test_thresholds_shrink_toward_the_facet_for_rare_labels():
    tax = parse_taxonomy(MINI.replace("kind: exclusive", "kind: multi").replace("threshold: 0.3", "description: x"))
    Y = np.zeros((200, 3), dtype=int)
    P = np.zeros((200, 3))
    Y[:100, 0] = 1
    P[:, 0] = np.where(Y[:, 0] == 1, 0.8, 0.2)   # separable anywhere in (0.2, 0.8]
    Y[:2, 1] = 1
    P[:, 1] = 0.1
    P[:2, 1] = 0.9                               # 2 positives: best alone 0.9, pulled to the facet's
    th, facet = tune_thresholds(Y, P, tax)
    assert 0.2 < th["topic:vision"] <= 0.8
    w = 2 / (2 + 10)
    assert th["topic:language"] == pytest.approx(w * 0.125 + (1 - w) * facet["topic"], abs=0.9 - 0.125)
    assert abs(th["topic:language"] - facet["topic"]) < abs(0.9 - facet["topic"])


@pytest.mark.parametrize("text, reason", [
    ("too short here", "too short to judge: 3 words"),
    ("Wir stellen ein neues Verfahren zur Segmentierung medizinischer Bilder vor, das auf tiefen "
     "neuronalen Netzen beruht und deutlich bessere Ergebnisse liefert als bisherige Ansätze im Bereich", "not English"),
    ("We propose a method for the segmentation of medical images that is based on deep neural networks "
     "and gives better results than earlier approaches in the field", None),
])
def test_abstention(text, reason):
    got = abstain_reason(text)
    assert (got is None) if reason is None else got.startswith(reason)


@pytest.mark.parametrize("lang, text, share", [
    ("fr", "Nous proposons une nouvelle méthode de segmentation d'images médicales fondée sur des réseaux de "
           "neurones profonds, qui donne de meilleurs résultats que les approches antérieures dans ce domaine de recherche.", "0.0%"),
    ("fr-a", "Nous présentons une approche à base de réseaux de neurones pour la détection d'objets. On entraîne le modèle "
             "à partir de données annotées à la main, puis on l'adapte à des domaines nouveaux grâce à un mécanisme.", "0.0%"),
    ("pt", "Apresentamos um novo método para a segmentação de imagens médicas baseado em redes neurais profundas, que "
           "oferece resultados melhores do que as abordagens anteriores nesta área de pesquisa aplicada.", "0.0%"),
    ("es", "Proponemos un nuevo método para la segmentación de imágenes médicas basado en redes neuronales profundas, "
           "que ofrece mejores resultados que los enfoques anteriores en este campo de investigación aplicada.", "0.0%"),
    ("it", "Proponiamo un nuovo metodo per la segmentazione di immagini mediche basato su reti neurali profonde, che "
           "fornisce risultati migliori rispetto agli approcci precedenti in questo campo di ricerca applicata.", "0.0%"),
])
def test_abstention_on_other_languages_agrees_with_the_model(shipped_model, lang, text, share):
    """The single-text rule and the batch path of Model.predict give the same reason."""
    reason = abstain_reason(text)
    assert reason == f"not English: {share} English function words, fewer than 5%"
    pred = shipped_model.predict([{"abstract": text}, {"abstract": text, "title": "A study of the use of deep nets"}])
    assert pred[0].reason == reason and pred[0].tags == []
    assert pred[1].reason == abstain_reason(text, title="A study of the use of deep nets")


def test_abstention_yields_no_tags(shipped_model):
    p = shipped_model.predict([{"abstract": "Deep nets."}])[0]
    assert p.tags == [] and p.scores == {} and p.reason.startswith("too short")


@pytest.mark.parametrize("n, short", [(0, True), (1, True), (19, True), (20, False), (500, False)])
def test_too_short_counts_words_exactly_up_to_the_limit(n, short):
    from tagger.model.abstain import too_short_reason

    text = " \n ".join(["word"] * n)
    got = too_short_reason(text, 20)
    assert (got == f"too short to judge: {n} word{'' if n == 1 else 's'}, fewer than 20") if short else got is None


def test_a_model_using_a_removed_option_says_retrain(small_model_dir, corpus_records, tmp_path):
    """The label-dependency second stage and the negation, cue, title, claim and character
    features were deleted (fixtures/README.md, "Second round"): a model directory from older
    code with a ``stage2.npz`` (or ``stage2`` in its parameters), or whose features.json turns
    one of them on, is refused in one line saying to retrain, where it would otherwise load and
    score without them; an ``extra`` with all of them off loads and scores as before."""
    import shutil

    from tagger.model.features import fit_tfidf
    from tagger.model.modeldir import check_out_dir

    texts = [r["abstract"] for r in corpus_records[1::200]]
    want = Model.load(small_model_dir).predict_proba(texts)
    manifest = json.loads((small_model_dir / "manifest.json").read_text())
    features = json.loads((small_model_dir / "features.json").read_text())
    assert "extra" not in features and "stage2" not in manifest["parameters"]

    def copy(name, extra=None, stage2_file=False, stage2_param=False):
        d = tmp_path / name
        shutil.copytree(small_model_dir, d)
        if extra is not None:
            (d / "features.json").write_text(json.dumps({**features, "extra": extra}))
        if stage2_file:
            L = len(manifest["labels"])
            with open(d / "stage2.npz", "wb") as fh:
                np.savez_compressed(fh, W=np.eye(L), b=np.zeros(L))
        if stage2_param:
            m = {**manifest, "parameters": {**manifest["parameters"], "stage2": {"C": 1.0}}}
            (d / "manifest.json").write_text(json.dumps(m))
        return d

    s2 = copy("s2", stage2_file=True)
    with pytest.raises(ModelError, match=r"^\S+s2: the model uses the label-dependency second stage \(stage2\), "
                                         r"whose code was removed from this tagger: please retrain with `tagger train`$"):
        Model.load(s2)
    check_out_dir(s2)  # and retraining may replace it: stage2.npz is a model file, not a user's
    with pytest.raises(ModelError, match="second stage .*please retrain"):
        Model.load(copy("s2param", stage2_param=True))
    with pytest.raises(ModelError, match=r"^\S+neg: the model uses the feature options cues, negation "
                                         r"\(features.json\), whose code was removed .*please retrain"):
        Model.load(copy("neg", {"negation": True, "cues": True, "title": False, "claims": False, "char": 0}))
    with pytest.raises(ModelError, match=r"feature option char \(features.json\), .*please retrain"):
        Model.load(copy("char", {"char": 4}))
    off = copy("off", {"negation": False, "cues": False, "title": False, "claims": False, "char": 0})
    assert np.array_equal(Model.load(off).predict_proba(texts), want)
    assert np.array_equal(Model.load(copy("empty", {})).predict_proba(texts), want)
    with pytest.raises(ValueError, match=r"unknown TF-IDF settings \['negation'\]"):
        fit_tfidf(texts, {"negation": True})  # training no longer takes them either
    top = tmp_path / "top"  # another version's key at the top of features.json: plain words, no class name
    shutil.copytree(small_model_dir, top)
    (top / "features.json").write_text(json.dumps({**features, "negation": False, "zeta": 1, "eta": 2}))
    with pytest.raises(ModelError) as err:
        Model.load(top)
    assert str(err.value) == (f"{top}: damaged model files (features.json has fields this version of tagger does "
                              "not know: eta, zeta); retrain with `tagger train`")
    (top / "features.json").write_text(json.dumps({**features, "negation": True, "char": 0}))
    with pytest.raises(ModelError, match=r"^\S+top: the model uses the feature option negation \(features.json\), "
                                         r"whose code was removed from this tagger: please retrain with `tagger train`$"):
        Model.load(top)
    (top / "features.json").write_text(json.dumps({**features, "negation": False, "char": 0}))
    assert np.array_equal(Model.load(top).predict_proba(texts), want)


def test_a_missing_or_damaged_booster_is_a_model_error(small_model_dir, tmp_path):
    """Only --explain reads the boosters: a file cut short (gzip's EOFError, which click would
    take for Ctrl-C) or missing is one line naming it, not an exit 130 or an internal error."""
    import shutil

    d = tmp_path / "damaged"
    shutil.copytree(small_model_dir, d)
    m = Model.load(d)
    first, second = m.labels[0], m.labels[1]
    a = d / "boosters" / m.manifest["booster_files"][first]
    a.write_bytes(a.read_bytes()[:300])
    (d / "boosters" / m.manifest["booster_files"][second]).unlink()
    with pytest.raises(ModelError, match=r"damaged booster file \(EOFError"):
        m.booster(first)
    with pytest.raises(ModelError, match="no such file: the model is incomplete"):
        m.booster(second)


def test_linear_base_file_is_int8_per_term_and_memory_mapped(tmp_path):
    """``linear_wt.npy`` holds W per term as int8 with a float64 scale: each weight within
    max |W[:, t]| / 254 of the fitted one, read back memory-mapped; scoring a term row equals
    the dequantised W; a ``linear.npz`` with its own W (older models) still loads."""
    import numpy as np

    from tagger.model.inference import QuantizedWeights, load_linear
    from tagger.model.modeldir import save_linear_base

    rng = np.random.default_rng(3)
    W, b = rng.normal(scale=3.0, size=(4, 50)), rng.normal(size=4)
    W[:, 7] = 0.0  # a term no label weighs
    save_linear_base(tmp_path, W, b)
    W2, b2 = load_linear(tmp_path / "linear.npz")
    assert isinstance(W2, QuantizedWeights) and isinstance(W2.q, np.memmap) and W2.q.dtype == np.int8
    assert W2.shape == (4, 50) and np.array_equal(b2, b)
    D = np.asarray(W2)
    err = np.abs(D - W).max(axis=0)
    assert np.all(err <= np.abs(W).max(axis=0) / 254 + 1e-12) and err.max() > 0 and np.all(D[:, 7] == 0)
    cols, vals = np.array([3, 3, 49]), np.array([0.5, 1.0, 2.0])
    got = W2.terms(cols, vals, np.empty((3, 4)))
    assert np.allclose(got, D[:, cols].T * vals[:, None], rtol=0, atol=1e-12)
    assert np.array_equal(W2[1], D[1])
    old = tmp_path / "old"
    old.mkdir()
    np.savez_compressed(old / "linear.npz", W=W, b=b)
    W3, b3 = load_linear(old / "linear.npz")
    assert W3.dtype == np.float64 and np.array_equal(W3, W) and np.array_equal(b3, b)


@pytest.mark.parametrize("manifest, message", [
    ([], "unreadable manifest (a JSON list, not an object); retrain with `tagger train`"),
    ({"format_version": "1"}, 'model format "1", but this tagger reads format 1: please retrain with `tagger train`'),
    ({}, "the manifest has no format_version: please retrain with `tagger train`"),
])
def test_a_manifest_of_another_shape_is_one_line(small_model_dir, tmp_path, manifest, message):
    """A manifest that is no object, or whose format is a string or missing: one line that does
    not contradict itself, never an internal error."""
    import shutil

    d = tmp_path / "odd"
    shutil.copytree(small_model_dir, d)
    old = json.loads((d / "manifest.json").read_text())
    if isinstance(manifest, dict):
        manifest = {**{k: v for k, v in old.items() if k != "format_version"}, **manifest}
    (d / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelError) as err:
        Model.load(d)
    assert str(err.value).endswith(message) and "\n" not in str(err.value)
