"""The refusal of `tagger corpus merge` names a bounded number of the conflicting ids, so that
a batch with hundreds of disagreements still gives one readable line."""

from click.testing import CliRunner
from hypothesis import given, strategies as st

from tagger.annotate.merge import MergeConflict
from tagger.cli import cli

from conftest import write_jsonl


@given(st.integers(min_value=1, max_value=40))
def test_message_names_at_most_ten_ids_and_counts_the_rest(n):
    ids = [f"paper:{i}" for i in range(n)]
    msg = str(MergeConflict(ids, ["a.jsonl", "b.jsonl"]))
    shown = ids[:10]
    assert ", ".join(shown) in msg
    assert all(f"paper:{i} " not in msg and f"paper:{i}," not in msg for i in range(10, n))
    assert (f"and {n - 10} more" in msg) == (n > 10)
    assert MergeConflict(ids, ["a", "b"]).ids == ids  # the exception still carries every id


def test_cli_refusal_with_many_conflicts_is_one_short_line(tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": str(i), "abstract": f"Text {i}.", "labels": ["f:a"],
                                            "annotator": "ann"} for i in range(25)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": str(i), "labels": ["f:b"], "annotator": "bob"}
                                           for i in range(25)])
    r = CliRunner().invoke(cli, ["corpus", "merge", str(a), str(b), "-o", str(tmp_path / "out.jsonl")])
    assert r.exit_code == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"tagger: error: 25 ids tagged with different labels in {a} and {b}, "
                               "not settled by --adjudicated: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 15 more (")
    assert not (tmp_path / "out.jsonl").exists()
