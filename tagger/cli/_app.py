"""The click group that every command module registers with."""

from __future__ import annotations

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             invoke_without_command=True)
@click.version_option(package_name="tagger", message="tagger %(version)s")
def cli():
    """Tag scientific paper abstracts with the labels of a YAML taxonomy, offline.

    \b
    tagger label abstracts.txt            tag paragraphs of a text file
    tagger label --input-format jsonl - < day.jsonl > out.jsonl
    tagger filter 'modality:image and not method:cnn' day.jsonl
    tagger bib refs.bib                   write tags into a .bib file's keywords
    tagger train                          retrain from the hand-tagged corpus
    tagger annotate pool.txt --out mine.jsonl --annotator me    hand-tag in the terminal
    """
    ctx = click.get_current_context()
    if ctx.invoked_subcommand is None:  # a bare `tagger`: this help, exit 0
        click.echo(ctx.get_help())
        ctx.exit(0)
