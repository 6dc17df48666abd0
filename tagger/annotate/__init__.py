"""Making a hand-tagged corpus: tagged batches read and checked (``batches``), merged
(``merge``), compared between annotators (``agreement``), the records a model is least
sure about (``queue``), and the interactive annotator (``session``, ``store``, ``tui``,
``retrain``).

Nothing is imported here: ``tagger --help`` must stay cheap, so every command imports the
module it needs.
"""
