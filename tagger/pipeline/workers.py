"""The worker processes of ``--jobs N``: one pool per (model, N) and process, each worker
with the model (forked after it was loaded, or loading it once) and one BLAS/OpenMP thread.

:func:`pool` gives the executor, :func:`in_worker` is what its tasks run, and
:func:`shutdown_pools` stops them (registered to run at exit).
"""

from __future__ import annotations

_POOL: dict = {}  # (model path, jobs) -> executor, one per process


def pool(model, jobs: int):
    """A pool of ``jobs`` worker processes, each with ``model``, each with one BLAS/OpenMP
    thread (no oversubscription).

    Where the platform can fork (Linux, macOS), the standard library's ProcessPoolExecutor
    forks them from this process after the model is loaded: they start in milliseconds and
    share its memory.  Elsewhere joblib's loky executor spawns them and each loads the model
    from ``model.path`` once.  (loky cannot fork, and spawning costs about 0.4 s per worker
    before the first batch: a fifth of a 20,000-abstract run on 2 cores.)
    """
    import multiprocessing

    key = (str(model.path), jobs)
    if key not in _POOL:
        if "fork" in multiprocessing.get_all_start_methods():
            from concurrent.futures import ProcessPoolExecutor

            _WORKER_MODEL[:] = [model]
            _POOL[key] = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                             initializer=_start_worker, initargs=(str(model.path),))
            if len(_POOL) == 1:  # a long-lived process (the API, tests): stop the workers before the interpreter's end
                import atexit

                atexit.register(shutdown_pools)
        else:
            import os

            from joblib.externals.loky import get_reusable_executor

            # after Ctrl-C, loky's resource tracker reports the semaphores it cleans up
            os.environ.setdefault("PYTHONWARNINGS", "ignore::UserWarning")
            _POOL[key] = get_reusable_executor(max_workers=jobs, env=dict(_ONE_THREAD), initializer=_start_worker,
                                               initargs=(str(model.path),), reuse=True)
    return _POOL[key]


def shutdown_pools() -> None:
    """Stop the worker pools of this process (at exit: otherwise the standard library's
    executor, torn down with the interpreter, can print a traceback from its weakref callback)."""
    for executor in list(_POOL.values()):
        try:
            executor.shutdown(wait=True, cancel_futures=True)
        except Exception:  # noqa: BLE001  (a pool already broken: nothing to stop)
            pass
    _POOL.clear()


#: environment that keeps BLAS and OpenMP (LightGBM, for --explain) to one thread per worker
_ONE_THREAD = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
_WORKER_MODEL = []


def _start_worker(path: str) -> None:
    """Worker initialiser: have the model (inherited, or loaded once); on Ctrl-C just stop
    (the parent reports it)."""
    import os
    import signal

    # Ctrl-C reaches the whole process group: the parent reports it (exit 130); a worker
    # just stops, without a traceback of its own
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a forked worker inherits tagger's own handler
    os.environ.update(_ONE_THREAD)  # before anything here loads BLAS or OpenMP
    _die_with_parent()
    if not _WORKER_MODEL:
        from ..model import Model

        _WORKER_MODEL[:] = [Model.load(path)]


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this worker when the tagger process that started it
    dies, however it dies (a worker blocked on its task queue would never notice)."""
    import ctypes
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent was already gone
        os._exit(1)


def in_worker(job, batch):
    """Run ``job`` on ``batch`` in a worker, with the model the worker loaded."""
    return job(_WORKER_MODEL[0], batch)
