"""Shared test fixtures: paths, the shipped model, and a small model trained per session."""

import json
import os
import signal
from pathlib import Path

import pytest

# A shell starts a background job (`nohup pytest &`, a CI runner without a terminal) with SIGINT
# ignored, and a child inherits "ignored" through exec: the Ctrl-C tests' tagger processes would
# then never see their SIGINT.  A handler here is reset to the default in every child instead.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TAGGER_SHARED", ROOT.parent / "shared"))
CORPUS = ROOT / "fixtures" / "corpus.jsonl"
EXAMPLES = ROOT / "fixtures" / "examples"


def shared_path(*parts) -> Path:
    """A path under ../shared, or skip the test when the shared folder is absent."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {p} (the project's ../shared folder), absent on this machine")
    return p


@pytest.fixture(scope="session")
def taxonomy():
    from tagger.taxonomy import load_taxonomy

    return load_taxonomy(ROOT / "taxonomy.yaml")


@pytest.fixture(scope="session")
def corpus_records():
    from tagger.corpus import load_corpus

    return load_corpus(str(CORPUS))


@pytest.fixture(scope="session")
def corpus_sample(corpus_records):
    """The first round of the corpus (1,638 rows: the seeds, the uniform sample's ranks 1-900
    and the rare-label search, in corpus order), so that tests that train stay as quick as the
    corpus grows, and every label keeps the 15 or more positives it had there."""
    import re

    def first_round(r):
        if r["sample"] in ("seed", "rare-label-search"):
            return True
        m = re.search(r"rank (\d+)", r.get("source", ""))
        return r["sample"] == "uniform" and m is not None and int(m.group(1)) <= 900

    return [r for r in corpus_records if first_round(r)]


@pytest.fixture(scope="session")
def shipped_model():
    from tagger.model import Model

    return Model.load(ROOT / "models")


@pytest.fixture(scope="session")
def small_model_dir(tmp_path_factory, corpus_sample, taxonomy):
    """A quick model (every 4th example, 15 rounds, no threshold pass) for structural tests;
    its boosters read the 2,000 terms in most abstracts, its linear base all of them."""
    from tagger.model.training import train

    out = tmp_path_factory.mktemp("small") / "model"
    train(corpus_sample[::4], taxonomy, out, num_rounds=15, threshold_folds=0, created="2026-01-01T00:00:00Z",
          tfidf_params={"tree_terms": 2000})
    return out


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    return path
