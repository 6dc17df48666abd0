"""Write predicted tags into BibTeX files without changing any other byte.

The library behind ``tagger bib FILE...`` and the pre-commit hooks, by concern:

* :mod:`.locate`: blocks (bibtexparser) and the offsets of keys, fields and values (a strict
  scanner), bounded so that a broken entry costs only its own length;
* :mod:`.read`: which entries can be read safely, the two kinds of problem (unreadable,
  warning), recovery after a broken entry; :mod:`.values`: the model text of a value;
* :mod:`.merge`: the tool's terms (the taxonomy's label ids only), merging them into a
  keywords field, and the corrections of a ``tagger`` field;
* :mod:`.layout` and :mod:`.edit`: the text of a new field in the entry's layout, planning,
  splicing and verifying the edits (:func:`update_bib_text`);
* :mod:`.run`: files, encodings, atomic writes, and what a run prints (:func:`run`).

bibtexparser is imported only when a file is parsed.
"""

from .edit import BibReport, EntryResult, update_bib_text
from .merge import Vocabulary
from .read import Problem, read_records
from .run import run

__all__ = ["BibReport", "EntryResult", "Problem", "Vocabulary", "read_records", "run", "update_bib_text"]
