"""pytest set-up for the Python bindings: import vlbias from the build tree (build/python,
or $VLBIAS_BUILD_DIR/python) and find the CLI beside it, to compare the two."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("VLBIAS_BUILD_DIR", ROOT / "build"))
if os.environ.get("VLBIAS_PYTHON_INSTALLED") != "1":
    sys.path.insert(0, str(BUILD / "python"))


@pytest.fixture
def cli(tmp_path):
    """cli("metric", "fid", "--real", path, ...) -> the parsed JSON the command prints."""

    def run(*args):
        out = subprocess.run(
            [str(BUILD / "vlbias"), "--quiet", *map(str, args)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    return run


@pytest.fixture
def npy(tmp_path):
    """npy(array, "name") -> path of the array saved as float32 .npy."""

    def save(array, name):
        path = tmp_path / f"{name}.npy"
        np.save(path, np.ascontiguousarray(array, dtype=np.float32))
        return path

    return save


def without_provenance(result):
    result = dict(result)
    result.pop("provenance", None)
    return result
