import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT


@pytest.mark.slow
def test_wheel_carries_taxonomy_and_model_once(tmp_path):
    """setup.cfg maps the top-level taxonomy.yaml and models/ into the wheel as package data."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    (wheel,) = tmp_path.glob("tagger-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "tagger/resources/taxonomy.yaml" in names
    model_files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "models").rglob("*") if p.is_file())
    assert model_files and all(f"tagger/resources/{f}" in names for f in model_files)
    assert "tagger/cli/__init__.py" in names and "tagger/cli/label.py" in names
    assert "tagger/bib/__init__.py" in names and "tagger/bib/run.py" in names
    assert "tagger/readers/jsonl.py" in names and "tagger/writers/target.py" in names
    # every package and module of the checkout (the tests run from it, so they pass while the wheel lacks one)
    modules = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tagger").rglob("*.py"))
    assert len(modules) > 50 and [m for m in modules if m not in names] == []
    assert not [n for n in names if n.startswith("tagger/resources/") and n.endswith(".py")]
    assert not [n for n in names if n.startswith(("tests/", "fixtures/"))]


def test_test_extra_installs_parquet_and_dask():
    """CI installs '.[test]': it must bring what the parquet and dask extras bring, so their tests run."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    extras = {k: [r.strip() for r in v.strip().splitlines() if r.strip() and not r.strip().startswith("#")]
              for k, v in cfg["options.extras_require"].items()}
    assert extras["parquet"] and extras["dask"]
    assert set(extras["parquet"]) | set(extras["dask"]) <= set(extras["test"])
    assert any(r.startswith("dask[dataframe,distributed]") for r in extras["dask"])


def test_setup_cfg_lists_every_package():
    """setup.cfg names the packages by hand: each directory of tagger/ with an __init__.py is there."""
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    listed = {p.strip() for p in cfg["options"]["packages"].split(",")}
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "tagger").rglob("__init__.py")}
    assert packages - listed == set()
