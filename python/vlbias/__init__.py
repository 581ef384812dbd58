"""vlbias: audit vision-language systems for social bias, from Python.

The functions run the C++ engine on numpy arrays (any float dtype or layout is converted to
C-contiguous float32, rows = items) without holding the GIL, and return the same fields as
the JSON that the `vlbias metric ...` command prints (without its provenance block):

    >>> import numpy as np, vlbias
    >>> real = np.random.default_rng(0).normal(size=(500, 64)).astype(np.float32)
    >>> fake = real[:250] + 0.1
    >>> vlbias.prdc(real, fake, k=3)["coverage"]

Errors are vlbias.InputError / vlbias.UsageError (both ValueError) and
vlbias.InternalError (RuntimeError), carrying the engine's one-sentence messages.
"""

import json as _json
import os as _os

from ._vlbias import (  # noqa: F401
    Clip,
    Error,
    FeatureModel,
    InputError,
    InternalError,
    UsageError,
    __version__,
    audit,
    clipscore,
    compare,
    fid,
    inception_score,
    kid,
    maxgap,
    ndkl,
    pmi,
    prdc,
    scweat,
    set_threads,
    skew,
    threads,
    vendi,
)

__all__ = [
    "Clip",
    "Error",
    "FeatureModel",
    "InputError",
    "InternalError",
    "UsageError",
    "__version__",
    "audit",
    "clipscore",
    "compare",
    "fid",
    "inception_score",
    "load_results",
    "kid",
    "maxgap",
    "ndkl",
    "pmi",
    "prdc",
    "scweat",
    "set_threads",
    "skew",
    "threads",
    "vendi",
]


def load_results(run_dir):
    """The results.json of an audit run folder (`vlbias audit` or vlbias.audit) as a dict.

    Its "tables" entry lists the CSV tables written beside it (paths relative to run_dir)."""
    path = _os.path.join(_os.fspath(run_dir), "results.json")
    if not _os.path.isfile(path):
        raise InputError(f"{path}: no results.json in this run folder (did the audit finish?)")
    with open(path, encoding="utf-8") as f:
        return _json.load(f)
