"""The text space (tagger.model.space): built without labels, byte-identical, projected exactly,
read by both learners, and tied to the models trained with it."""
import json
import random
import shutil

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.model.space import KINDS, SpaceError, TextSpace, space_sha256
from tagger.model.space_build import build_space

TOPICS = {
    "vision": "image pixel convolution segmentation camera detection object scene",
    "language": "sentence token translation corpus parsing grammar word dialogue",
    "physics": "quantum spin lattice superconductor magnetic phase electron field",
    "biology": "protein gene cell sequence expression tissue mutation genome",
}


def pool(n=240, seed=0):
    """A generated pool: texts mixing a topic's words with common words (no labels)."""
    rng = random.Random(seed)
    common = "method result model data study analysis approach show propose experiment".split()
    out = []
    for i in range(n):
        topic = list(TOPICS.values())[i % len(TOPICS)].split()
        words = [rng.choice(topic) for _ in range(25)] + [rng.choice(common) for _ in range(10)]
        rng.shuffle(words)
        out.append(" ".join(words) + ".")
    return out


@pytest.fixture(scope="module")
def texts():
    return pool()


@pytest.mark.parametrize("kind", KINDS)
def test_built_twice_byte_identical(tmp_path, texts, kind):
    a = build_space(texts, k=8, kind=kind, min_df=2)
    b = build_space(texts, k=8, kind=kind, min_df=2)
    sha_a, sha_b = a.save(tmp_path / "a"), b.save(tmp_path / "b")
    assert sha_a == sha_b == space_sha256(tmp_path / "a")
    for name in ("space.json", "components.npy", "SHA256"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    loaded = TextSpace.load(tmp_path / "a")
    assert loaded.k == 8 and loaded.kind == kind and loaded.components.dtype == np.float16
    assert isinstance(loaded.components, np.memmap)  # memory-mapped, not read whole
    assert sum(b - a for a, b in loaded.blocks) == 8


def test_space_separates_topics(tmp_path, texts):
    """Texts of one topic lie closer to each other than to another topic's (the space learned
    what words go together, from no label)."""
    sp = build_space(texts, k=8, kind="lsa", min_df=2)
    Z = sp.transform(texts)
    same = float(np.mean([Z[i] @ Z[i + 4] for i in range(0, 200, 4)]))
    other = float(np.mean([Z[i] @ Z[i + 1] for i in range(0, 200, 4)]))
    assert same > 0.8 and other < 0.5


def test_unknown_kind_and_too_few_texts(texts):
    with pytest.raises(ValueError, match="unknown kind"):
        build_space(texts, kind="word2vec")
    with pytest.raises(ValueError, match="too few"):
        build_space(texts[:5], k=8, min_df=1)


@pytest.fixture(scope="module")
def built(tmp_path_factory, texts):
    d = tmp_path_factory.mktemp("space")
    build_space(texts, k=8, kind="lsa+ppmi", min_df=2).save(d)
    return TextSpace.load(d)


WORDS = sorted({w for v in TOPICS.values() for w in v.split()} | {"the", "of", "zebra", "42"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), min_size=1, max_size=8),
       st.sampled_from([1.0, 0.5]) | st.floats(0.01, 4.0))
def test_projection_equals_scipy_product(built, docs, weight):
    """Label-time projection = scipy's sparse TF-IDF row times the components, each block
    scaled to unit length (zero rows stay zero), times the model's weight."""
    import copy

    space = copy.copy(built)
    space.weight = weight
    Z = space.transform(docs)
    X = built.features.transform_csr(docs)
    want = np.asarray(X @ np.asarray(built.components, dtype=np.float64))
    for a, b in built.blocks:
        n = np.linalg.norm(want[:, a:b], axis=1, keepdims=True)
        n[n == 0] = 1.0
        want[:, a:b] /= n
    assert Z.shape == (len(docs), built.k)
    assert np.abs(Z - weight * want).max() < 1e-12


def test_load_errors(tmp_path, built):
    with pytest.raises(SpaceError, match="not a text space"):
        TextSpace.load(tmp_path)
    with pytest.raises(SpaceError, match=r"^\S+nowhere: no such directory \(a text space is a directory written by"):
        TextSpace.load(tmp_path / "nowhere")
    (tmp_path / "f.bib").write_text("@article{a,}")
    with pytest.raises(SpaceError, match=r"f.bib: a file, not a text space directory"):
        TextSpace.load(tmp_path / "f.bib")
    model = tmp_path / "model"
    shutil.copytree(built_dir(built), model / "space")
    (model / "manifest.json").write_text("{}")
    with pytest.raises(SpaceError, match=rf"model: a model directory, not a text space; its space is {model / 'space'}$"):
        TextSpace.load(model)
    d = tmp_path / "s"
    shutil.copytree(built_dir(built), d)
    data = json.loads((d / "space.json").read_text())
    data["format"] = 99
    (d / "space.json").write_text(json.dumps(data))
    with pytest.raises(SpaceError, match="rebuild it"):
        TextSpace.load(d)


def built_dir(space):
    return space.source


def small_records(n=160, seed=1):
    rng = random.Random(seed)
    labels = {"vision": "modality:image", "language": "modality:text", "physics": "contribution:theory",
              "biology": "modality:molecular"}
    texts = pool(n, seed)
    out = []
    for i, t in enumerate(texts):
        topic = list(TOPICS)[i % len(TOPICS)]
        out.append({"id": f"r{i}", "title": "", "abstract": t,
                    "labels": [labels[topic], rng.choice(["contribution:method", "contribution:analysis"])]})
    return out


def test_model_with_space_trains_loads_and_refuses_another_space(tmp_path, texts):
    from tagger.model import Model, ModelError
    from tagger.model.training import train
    from tagger.taxonomy import load_taxonomy
    from tagger.resources import packaged

    tax = load_taxonomy(packaged("taxonomy.yaml"))
    sp_dir = tmp_path / "myspace"
    build_space(texts, k=8, kind="lsa", min_df=2).save(sp_dir)
    space = TextSpace.load(sp_dir)
    space.location, space.source = "model", sp_dir
    out = tmp_path / "m"
    recs = small_records()
    manifest = train(recs, tax, out, num_rounds=5, threshold_folds=0, space=space, space_in_trees=True)
    assert manifest["space"]["sha256"] == space.sha256 and manifest["space"]["location"] == "model"
    assert (out / "space" / "components.npy").read_bytes() == (sp_dir / "components.npy").read_bytes()
    m = Model.load(out)
    assert m.space is not None and m.n_features == m.features.n_features + 8
    assert m.forest.n_sparse == m.features.n_features
    P = m.predict_proba([r["abstract"] for r in recs[:8]])
    assert P.shape == (8, len(m.labels)) and np.all((P >= 0) & (P <= 1))
    # the trees' raw scores equal LightGBM's on the concatenated features
    import scipy.sparse as sparse

    docs = [r["abstract"] for r in recs[:20]]
    X = sparse.hstack([m.features.transform_csr(docs), sparse.csr_matrix(m.space.transform(docs))], format="csr")
    batch = m.transform(docs)
    trees = m.forest.raw_scores(batch.n_rows, batch.row, batch.col, batch.value, batch.components)
    out_col = m.manifest["binary_outputs"]["modality:image"]
    assert np.abs(trees[:, out_col] - m.booster("modality:image").predict(X, raw_score=True)).max() < 1e-9
    # another space in its place: please retrain
    build_space(pool(240, seed=5), k=8, kind="lsa", min_df=2).save(out / "space")
    with pytest.raises(ModelError, match="please retrain"):
        Model.load(out)
    shutil.rmtree(out / "space")
    with pytest.raises(ModelError, match="text space is missing"):
        Model.load(out)


def test_train_space_option_default_none_package_and_directory(tmp_path, texts):
    """`tagger train` reads the packaged space by default (referred to, at weight 0.5, linear
    base only: the screens' choice), as `--space package` does; `--space none` reads none; a
    directory is copied into the model; a bad one is one line."""
    from click.testing import CliRunner

    from tagger.cli import cli
    from tagger.resources import packaged

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({**r, "annotator": "t"}) + "\n" for r in small_records()))
    run = lambda *a: CliRunner().invoke(cli, ["train", "--corpus", str(corpus), "--rounds", "3", *a])  # noqa: E731
    r = run("--out", str(tmp_path / "plain"), "--space", "none")
    assert r.exit_code == 0, r.output
    assert "text-space" not in r.output and "space" not in json.loads((tmp_path / "plain" / "manifest.json").read_text())
    if (packaged("models") / "space" / "SHA256").is_file():
        for name, opts in (("default", ()), ("pkg", ("--space", "package"))):
            r = run("--out", str(tmp_path / name), *opts)
            assert r.exit_code == 0, r.output
            info = json.loads((tmp_path / name / "manifest.json").read_text())["space"]
            assert info["location"] == "package" and info["k"] == 256 and not (tmp_path / name / "space").exists()
            assert (info["kind"], info["weight"], info["in_trees"]) == ("ppmi", 0.5, False)
            assert f"terms and text space ppmi {info['sha256'][:12]} (256 components, weight 0.5, linear base only), " \
                   in r.output
    sp_dir = tmp_path / "sp"
    build_space(texts, k=8, kind="lsa", min_df=2).save(sp_dir)
    r = run("--out", str(tmp_path / "own"), "--space", str(sp_dir))
    assert r.exit_code == 0, r.output
    assert (tmp_path / "own" / "space" / "SHA256").read_text() == (sp_dir / "SHA256").read_text()
    r = run("--out", str(tmp_path / "bad"), "--space", str(tmp_path))
    assert r.exit_code == 2 and r.output.startswith(f"tagger: error: {tmp_path}: not a text space"), r.output


def test_linear_base_alone_can_read_the_space(texts):
    """With ``space_in_trees=False`` the trees split on terms only; the linear base still weighs
    the components (its weights over them are not all zero)."""
    from tagger.model.training import fit, forest_of
    from tagger.resources import packaged
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(packaged("taxonomy.yaml"))
    space = build_space(texts, k=8, kind="lsa", min_df=2)
    recs = small_records()
    Y = np.array([[int(lb in r["labels"]) for lb in tax.label_ids] for r in recs], dtype=np.int8)
    fm = fit([r["abstract"] for r in recs], Y, tax, num_rounds=5, space=space, space_in_trees=False)
    forest = forest_of(fm)
    assert forest.used_dense.size == 0 and forest.used_features.size > 0
    W = fm.linear[0]
    assert W.shape[1] == fm.features.n_features + 8 and np.abs(W[:, fm.features.n_features:]).max() > 0.01
    both = forest_of(fit([r["abstract"] for r in recs], Y, tax, num_rounds=5, space=space, space_in_trees=True))
    assert both.used_dense.size > 0


def test_space_weight_and_linear_only_are_recorded_and_restored(tmp_path, texts):
    """``train(space.weight=0.5, space_in_trees=False)``: the manifest records both, the loaded
    model projects at half the unit-norm components and its trees read no component; a manifest
    from before the weight existed loads at weight 1."""
    from tagger.model import Model
    from tagger.model.training import train
    from tagger.resources import packaged
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(packaged("taxonomy.yaml"))
    sp_dir = tmp_path / "sp"
    build_space(texts, k=8, kind="ppmi", min_df=2).save(sp_dir)
    space = TextSpace.load(sp_dir)
    space.location, space.source, space.weight = "model", sp_dir, 0.5
    out = tmp_path / "m"
    manifest = train(small_records(), tax, out, num_rounds=5, threshold_folds=0, space=space, space_in_trees=False)
    assert manifest["space"]["weight"] == 0.5 and manifest["space"]["in_trees"] is False
    m = Model.load(out)
    docs = [r["abstract"] for r in small_records(12, seed=3)]
    assert m.space.weight == 0.5
    unit = TextSpace.load(sp_dir).transform(docs)
    assert np.abs(np.linalg.norm(unit, axis=1) - 1).max() < 1e-9
    assert np.abs(m.space.transform(docs) - 0.5 * unit).max() < 1e-12
    assert m.forest.used_dense.size == 0
    # the linear base reads the components at the weight it was fitted with
    batch = m.transform(docs)
    assert np.abs(batch.components - 0.5 * unit).max() < 1e-12
    P = m.predict_proba(docs)
    data = json.loads((out / "manifest.json").read_text())
    del data["space"]["weight"]
    (out / "manifest.json").write_text(json.dumps(data))
    old = Model.load(out)
    assert old.space.weight == 1.0 and np.abs(old.predict_proba(docs) - P).max() > 1e-6
    from tagger.model import ModelError

    for bad in (0, -1, "0.5", None, float("nan")):  # a damaged manifest: one line, not a model reading nonsense
        (out / "manifest.json").write_text(json.dumps({**data, "space": {**data["space"], "weight": bad}}))
        with pytest.raises(ModelError, match=r"damaged model files \(the manifest's space is not a space with a "
                                             r"positive weight\); retrain"):
            Model.load(out)
    (out / "manifest.json").write_text(json.dumps({**data, "space": "ppmi"}))
    with pytest.raises(ModelError, match="not a space with a positive weight"):
        Model.load(out)
    (out / "manifest.json").write_text(json.dumps(data))
    (out / "space" / "SHA256").write_text("z" * 64 + "\n")
    with pytest.raises(ModelError, match=r"text space is missing or damaged \(.*SHA256: not a sha256 \(64 "
                                         r"hexadecimal digits\)\); please retrain"):
        Model.load(out)


def test_space_weight_and_trees_options(tmp_path, texts):
    """`tagger train --space DIR --space-weight 0.5 --no-space-trees` records both and says so;
    either option without a space is a one-line error, exit 2."""
    from click.testing import CliRunner

    from tagger.cli import cli

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({**r, "annotator": "t"}) + "\n" for r in small_records()))
    sp_dir = tmp_path / "sp"
    sha = build_space(texts, k=8, kind="ppmi", min_df=2).save(sp_dir)
    run = lambda *a: CliRunner().invoke(cli, ["train", "--corpus", str(corpus), "--rounds", "3", "--folds", "0", *a])  # noqa: E731
    r = run("--out", str(tmp_path / "w"), "--space", str(sp_dir), "--space-weight", "0.5", "--no-space-trees")
    assert r.exit_code == 0, r.output
    assert f"terms and text space ppmi {sha[:12]} (8 components, weight 0.5, linear base only), " in r.output
    info = json.loads((tmp_path / "w" / "manifest.json").read_text())["space"]
    assert info["weight"] == 0.5 and info["in_trees"] is False
    for opt in (["--space-weight", "0.5"], ["--no-space-trees"], ["--space-trees"]):
        r = run("--out", str(tmp_path / "x"), "--space", "none", *opt)
        assert r.exit_code == 2 and r.output.startswith(f"tagger: error: {opt[0]} needs a text space"), r.output
        assert not (tmp_path / "x").exists()
    for bad in ("0", "-1", "nan", "inf", "1e400"):
        r = run("--out", str(tmp_path / "x"), "--space", str(sp_dir), "--space-weight", bad)
        assert r.exit_code == 2 and "--space-weight" in r.output and "Traceback" not in r.output, (bad, r.output)
        assert not (tmp_path / "x").exists()
    r = run("--out", str(tmp_path / "x"), "--space", "none", "--no-space-trees")
    assert r.exit_code == 2 and "tagger: error: --no-space-trees needs a text space" in r.output, r.output


def test_cross_validation_reads_the_weighted_space_in_worker_processes(tmp_path, texts):
    """``cross_validate`` with a space at weight 0.3, linear base only: the same figures in one
    process and in two (the weight travels to the workers), and not those at weight 1."""
    from tagger.evaluation.crossval import cross_validate
    from tagger.resources import packaged
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(packaged("taxonomy.yaml"))
    build_space(texts, k=8, kind="ppmi", min_df=2).save(tmp_path / "sp")
    space = TextSpace.load(tmp_path / "sp")  # as `tagger evaluate --space DIR` loads it
    recs = small_records(120, seed=4)
    f1 = {}
    for weight, jobs in ((0.3, 1), (0.3, 2), (1.0, 1)):
        space.weight = weight
        res = cross_validate(recs, tax, k=2, num_rounds=3, space=space, space_in_trees=False, jobs=jobs)
        f1[weight, jobs] = res["tagger"]["all"]["all"]["f1_micro"]
    assert f1[0.3, 1] == f1[0.3, 2]
    assert f1[0.3, 1] != f1[1.0, 1]


def test_space_build_command_reads_pools_and_gives_the_same_bytes_twice(tmp_path, texts):
    """`tagger space build POOL... --out DIR --kind ppmi`: pools read as `tagger label` reads them
    (JSON Lines here, and a text file of paragraphs), the same bytes twice, the summary line."""
    from click.testing import CliRunner

    from tagger.cli import cli

    pool_a = tmp_path / "a.jsonl"
    pool_a.write_text("".join(json.dumps({"id": f"a{i}", "title": "", "abstract": t}) + "\n"
                              for i, t in enumerate(texts[:150])))
    pool_b = tmp_path / "b.txt"
    pool_b.write_text("\n\n".join(texts[150:]) + "\n")
    outs = []
    for n in (1, 2):
        r = CliRunner().invoke(cli, ["space", "build", str(pool_a), str(pool_b), "--out", str(tmp_path / f"s{n}"),
                                     "--kind", "ppmi", "-k", "8"])
        assert r.exit_code == 0, r.output
        outs.append(r.stdout)
        assert r.stdout.startswith(f"text space (ppmi, 8 components over ") and f"from {len(texts)} abstracts" in r.stdout
    for name in ("space.json", "components.npy", "SHA256"):
        assert (tmp_path / "s1" / name).read_bytes() == (tmp_path / "s2" / name).read_bytes()
    assert TextSpace.load(tmp_path / "s1").k == 8
    r = CliRunner().invoke(cli, ["space", "build", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "s3")])
    assert r.exit_code != 0 and "missing.jsonl" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "s3").exists()


def test_retrain_with_another_space_setting_drops_the_card_and_the_old_copy(tmp_path, texts):
    """The card is kept only when the model reads the same space the same way; a retrain
    without a space leaves the old model's own copy of its space behind with the old model."""
    from tagger.model.training import train
    from tagger.resources import packaged
    from tagger.taxonomy import load_taxonomy

    tax = load_taxonomy(packaged("taxonomy.yaml"))
    sp_dir = tmp_path / "sp"
    build_space(texts, k=8, kind="ppmi", min_df=2).save(sp_dir)
    out, recs = tmp_path / "m", small_records(60)

    def run(weight=None, trees=None, space=True):
        sp = None
        if space:
            sp = TextSpace.load(sp_dir)
            sp.location, sp.weight = "model", weight or 1.0
        train(recs, tax, out, num_rounds=3, threshold_folds=0, space=sp, space_in_trees=trees)
        (out / "README.md").write_text("# Model card: figures of this setting\n") if not (out / "README.md").exists() else None
        return (out / "README.md").read_text()

    run(0.5, False)
    assert (out / "README.md").exists()
    run(0.5, False)  # the same setting: the card stays
    assert (out / "README.md").read_text().startswith("# Model card: figures of this setting")
    (out / "README.md").write_text("# Model card: weight 0.5\n")
    run(0.7, False)
    assert (out / "README.md").read_text() == "# Model card: figures of this setting\n"  # dropped, then rewritten by run
    (out / "README.md").write_text("# Model card: weight 0.7\n")
    run(0.7, True)
    assert (out / "README.md").read_text() != "# Model card: weight 0.7\n"
    assert (out / "space" / "SHA256").is_file()
    run(space=False)
    assert not (out / "space").exists() and "space" not in json.loads((out / "manifest.json").read_text())


def test_evaluate_records_the_space_and_checks_the_card(tmp_path, texts):
    """`evaluate --space DIR --space-weight W --no-space-trees`: the report's heading and --json
    say which space at which weight; --card of a model trained another way is refused before
    the run; --test refuses the space options."""
    from click.testing import CliRunner

    from tagger.cli import cli

    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({**r, "annotator": "t"}) + "\n" for r in small_records(60)))
    sp_dir = tmp_path / "sp"
    sha = build_space(texts, k=8, kind="ppmi", min_df=2).save(sp_dir)
    base = ["--corpus", str(corpus), "--no-bib-eval", "--folds", "2"]
    sp_opts = ["--space", str(sp_dir), "--space-weight", "0.5", "--no-space-trees"]
    r = CliRunner().invoke(cli, ["train", *base[:2], "--rounds", "3", "--folds", "0", "--out", str(tmp_path / "m"),
                                 *sp_opts])
    assert r.exit_code == 0, r.output
    ev = lambda *a: CliRunner().invoke(cli, ["evaluate", *base, *a])  # noqa: E731
    r = ev(*sp_opts, "--json", str(tmp_path / "e.json"), "--card", str(tmp_path / "m"), "--html", str(tmp_path / "e.html"))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"The tagger read text space ppmi {sha[:12]} (8 components, weight 0.5, "
                               "linear base only).\n\n== whole corpus: 60 documents, 2-fold cross-validation\n")
    assert f"the tagger reading text space ppmi {sha[:12]} (8 components, weight 0.5, linear base only)" in (
        tmp_path / "e.html").read_text()
    res = json.loads((tmp_path / "e.json").read_text())
    assert res["space"] == {"sha256": sha, "kind": "ppmi", "k": 8, "weight": 0.5, "in_trees": False}
    card = (tmp_path / "m" / "README.md").read_text()
    r = ev("--card", str(tmp_path / "m"), "--space", "none")
    assert r.exit_code == 2 and r.output == (
        f"tagger: error: --card {tmp_path / 'm'}: the model reads text space ppmi {sha[:12]} (8 components, weight "
        "0.5, linear base only), but this evaluation reads no text space; give evaluate the model's "
        "--space options\n")
    assert (tmp_path / "m" / "README.md").read_text() == card
    r = ev("--test", str(corpus), "--space-weight", "0.5")
    assert r.exit_code == 2 and "--space-weight goes with cross-validation; --test scores the model as it was trained" in r.output
