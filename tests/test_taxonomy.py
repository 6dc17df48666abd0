import re

import pytest

from tagger.taxonomy import TaxonomyError, format_tree, load_taxonomy, parse_taxonomy

from conftest import ROOT, shared_path

MINI = """\
version: 1
name: mini
facets:
  - id: topic
    kind: exclusive
    labels:
      - id: topic:vision
        description: Images.
      - id: topic:language
        description: Text.
  - id: kind
    labels:
      - id: kind:empirical
        threshold: 0.3
"""


def test_default_taxonomy_has_the_guides_facets_and_labels(taxonomy):
    assert [f.id for f in taxonomy.facets] == ["modality", "method", "evaluation", "contribution"]
    assert [len(f.labels) for f in taxonomy.facets] == [11, 18, 5, 6]
    assert len(taxonomy.label_ids) == 40
    assert all(lb.description for lb in taxonomy.labels)
    assert taxonomy.label_ids[0] == "modality:text" and taxonomy.label_ids[-1] == "contribution:tool"


def test_default_label_ids_equal_the_annotation_guide(taxonomy):
    guide = shared_path("annotation-guide.md").read_text()
    ids = re.findall(r"^\| `([a-z-]+:[a-z0-9-]+)` \|", guide, re.M)
    assert ids == taxonomy.label_ids


def test_mini_taxonomy_parses_kinds_and_thresholds():
    tax = parse_taxonomy(MINI, "mini.yaml")
    assert tax.label_ids == ["topic:vision", "topic:language", "kind:empirical"]
    assert tax.facet("topic").kind == "exclusive" and tax.facet("kind").kind == "multi"
    assert tax.labels[2].threshold == 0.3 and tax.labels[0].threshold is None


def test_fingerprint_ignores_descriptions_but_not_labels():
    a = parse_taxonomy(MINI)
    b = parse_taxonomy(MINI.replace("description: Images.", "description: Pictures."))
    c = parse_taxonomy(MINI.replace("kind:empirical", "kind:theory"))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


@pytest.mark.parametrize("text, line, words", [
    ("facets: [\n  - id: x\n", 2, "YAML syntax error"),
    (MINI.replace("topic:language", "topic:vision"), 9, "duplicate label id 'topic:vision' (first at line 7)"),
    (MINI.replace("    kind: exclusive", "    kinds: exclusive"), 5, "unknown key 'kinds'"),
    (MINI.replace("topic:language", "topic:Language"), 9, "malformed label id 'topic:Language'"),
    (MINI.replace("topic:language", "kind:language"), 9, "does not start with its facet 'topic:'"),
    (MINI.replace("    kind: exclusive", "    kind: single"), 5, "facet kind must be one of"),
    (MINI.replace("threshold: 0.3", "threshold: 1.5"), 14, "strictly between 0 and 1"),
    ("version: 1\nfacets:\n  - id: a\n    labels: []\n", 4, "facet 'a' has no labels"),
    ("version: 1\nfacets:\n  - id: a\n", 3, "facet 'a' has no labels"),
    ("version: 2\nfacets: []\n", 1, "unsupported taxonomy version"),
    ("", 1, "empty taxonomy file"),
    ("facets:\n  - id: Bad_Facet\n    labels:\n      - id: x:y\n", 2, "malformed facet id"),
])
def test_problems_are_reported_with_file_and_line(text, line, words):
    with pytest.raises(TaxonomyError) as e:
        parse_taxonomy(text, "t.yaml")
    msg = str(e.value)
    assert msg.startswith(f"t.yaml:{line}: "), msg
    assert words in msg
    assert "\n" not in msg


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(TaxonomyError, match="no such file"):
        load_taxonomy(tmp_path / "nope.yaml")
    with pytest.raises(TaxonomyError, match="is a directory"):
        load_taxonomy(tmp_path)


def test_format_tree_lists_every_label(taxonomy):
    tree = format_tree(taxonomy)
    assert tree.splitlines()[0] == "ml-abstracts: 4 facets, 40 labels"
    assert all(f"  {lb}" in tree for lb in taxonomy.label_ids)
    assert "modality (multi-label, 11 labels)" in tree


def test_repository_taxonomy_is_the_packaged_default():
    from tagger.resources import packaged

    assert load_taxonomy(packaged("taxonomy.yaml")).fingerprint() == load_taxonomy(ROOT / "taxonomy.yaml").fingerprint()
