"""The primitives of reading and writing files, shared by :mod:`tagger.readers`,
:mod:`tagger.writers` and :mod:`tagger.bib`: replacing a file atomically
(:mod:`~tagger.files.atomic`), the limits of what is read, ``--max-record-size``
(:mod:`~tagger.files.limits`), and what a file is by its first bytes (:mod:`~tagger.files.magic`).

A package of its own, below all three: the writers import the readers and the readers the
bib package, so what they share would otherwise have to live in ``bib/``, which is about
BibTeX.  It imports nothing from the rest of tagger.
"""
