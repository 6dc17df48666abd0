"""``tagger bib``: keep the tags of .bib entries current (the pre-commit hook)."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ._app import cli
from ._common import Ticker, exit_code, max_record_size_option, model_options


@cli.command()
@click.argument("files", nargs=-1, required=True, metavar="FILE...")
@click.option("--check", is_flag=True, help="Change nothing; exit 1 if any entry's tags are missing or stale.")
@click.option("--strict", is_flag=True, help="Warnings fail too (exit 2).")
@click.option("--allow-unreadable", is_flag=True,
              help="Report unreadable entries as warnings instead of failing with exit 2.")
@click.option("--diff", is_flag=True, help="Print the unified diff of what is (or would be) written.")
@click.option("--field", metavar="NAME", help="Write tags into this tool-owned field instead of merging into keywords.")
@click.option("--encoding", metavar="NAME", help="The files' encoding when not UTF-8 and without a BOM (written back in it).")
@click.option("--remove", is_flag=True,
              help="Take this taxonomy's label ids out of the tag field (your own terms and every other byte stay); "
                   "with --check, list what would be removed.")
@click.option("--min-words", type=click.IntRange(0), default=None, help="Abstain on shorter abstracts [default: 20].")
@max_record_size_option
@model_options
@exit_code
def bib(files, check, strict, allow_unreadable, diff, field, encoding, remove, min_words, model, taxonomy,
        max_record_size):
    """Keep the tags of .bib entries current (the pre-commit hook).

    Tags are merged into each entry's keywords field, after the user's own terms, which keep
    their text, order and separator; a `tagger` field of an entry pins (+label) or vetoes
    (-label) tags; every other byte of the file stays as it was.  Exit 1 when a file was
    changed (or, with --check, would be), else 0; 2 on unreadable files or entries, a file
    that is no BibTeX (a PDF, text without any @type{...} block), or a correction that was
    ignored.  --remove takes the tool's terms out again.

    FILE - reads standard input and writes the tagged BibTeX to standard output (exit 0, or 2
    as above; --check and --check --diff as for a file); - must be the only FILE.
    """
    import codecs

    from .. import bib as bibmod
    from ..api import load_model

    if encoding:
        try:
            if not codecs.lookup(encoding)._is_text_encoding:
                raise TaggerError(f"--encoding {encoding}: not a text encoding")
        except LookupError:
            raise TaggerError(f"--encoding {encoding}: unknown encoding") from None
    if "-" in files and len(files) > 1:
        raise TaggerError("- (standard input) must be the only FILE: its tagged BibTeX goes to standard output; "
                          "name the other files in a run of their own")
    if "-" in files and diff and not check:
        raise TaggerError("--diff with - (standard input): standard output holds the tagged BibTeX; "
                          "use --check --diff to see the diff instead")
    if field is not None and field.casefold() == "tagger":
        raise TaggerError("--field tagger: the tagger field holds your corrections (+label, -label) and is never "
                          "written; name another field")
    from ..writers.target import Target

    # stdout guarded as label's: closed (>&-) is one line before any file is touched, a write error
    # (a full disk) one line, exit 2
    with Target(None, option=None) as out:
        m = load_model(model, taxonomy)

        ticker, done = Ticker("entries tagged so far"), [0]

        def predict(entries):
            ticker.update(done[0])  # shown while the model works, after 2 s, on a terminal
            try:
                return [None if p.reason else p.tags for p in m.predict(entries, min_words=min_words)]
            finally:
                done[0] += len(entries)
                ticker.clear()  # before bib prints its lines

        try:
            return bibmod.run(files, predict=predict, facets=m.facets, check=check, strict=strict, diff=diff,
                              field=field, encoding=encoding, allow_unreadable=allow_unreadable, remove=remove,
                              max_record_size=max_record_size, out=out,
                              bib_out=out.buffer if "-" in files and not check else None)
        except ValueError as e:
            raise TaggerError(str(e)) from None
