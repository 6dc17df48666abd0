"""The labelling pipeline: inputs read into batches, tagged (in this process or the
``--jobs`` pool), written.

- :mod:`~tagger.pipeline.inputs`: the input files of a command as one stream of records;
  :mod:`~tagger.pipeline.batches`: records in batches (JSON Lines as undecoded chunks).
- :mod:`~tagger.pipeline.labeling`: :func:`~tagger.pipeline.labeling.label_stream` and
  :func:`~tagger.pipeline.labeling.render_stream`, the work on a batch, the same in a worker
  (:mod:`~tagger.pipeline.workers`); :mod:`~tagger.pipeline.trusted`: records that carry tags
  keep them (``tagger filter``).
- :mod:`~tagger.pipeline.tagging`: ``tagger label`` and ``tagger filter`` as functions, from
  inputs to a :class:`~tagger.writers.target.Target`.
- :mod:`~tagger.pipeline.partitions`: one partition file of ``tagger label --dask``.

The public faces over it are :mod:`tagger.api` and :mod:`tagger.dask`; nothing here imports
them or the CLI.  Progress is reported through a plain callback ``progress(done, total, what)``.
"""
