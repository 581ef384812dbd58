"""vlbias.FeatureModel and vlbias.inception_score against the PyTorch reference features of the
tests' width-scaled random FID Inception (tools/make_inception_fixtures.py), the CLI and scipy."""
import csv
import pathlib
import subprocess

import numpy as np
import pytest
from scipy.special import softmax

import vlbias
from conftest import BUILD, ROOT

INCEPTION = ROOT / "tests" / "fixtures" / "encode" / "inception"


def fixture_images():
    with open(INCEPTION / "images.csv", newline="", encoding="utf-8") as f:
        return [INCEPTION / row["path"] for row in csv.DictReader(f)]


def scaled_error(got, want):
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-3))


@pytest.mark.parametrize("preprocess", ["pytorch-fid", "clean-fid"])
def test_inception_features_match_pytorch_and_the_cli(tmp_path, preprocess):
    model = vlbias.FeatureModel(INCEPTION / "model.safetensors", preprocess=preprocess)
    assert model.kind == "inception-v3-fid"
    feats = model.features(fixture_images(), batch_size=2)
    want = np.load(INCEPTION / f"features_{preprocess}.npy")
    assert feats.shape == want.shape == (5, model.dim)
    assert scaled_error(feats, want) < 1e-4
    out = tmp_path / "f.npy"
    subprocess.run(
        [str(BUILD / "vlbias"), "--quiet", "features", "--model", str(INCEPTION / "model.safetensors"),
         "--images", str(INCEPTION / "images.csv"), "--out", str(out), "--preprocess", preprocess],
        check=True,
    )
    assert np.allclose(feats, np.load(out), rtol=0, atol=1e-6 * np.max(np.abs(want)))
    assert model.describe()["preprocessing"]["mode"] == preprocess


def test_inception_score_of_the_unbiased_logits_matches_scipy():
    model = vlbias.FeatureModel(INCEPTION / "model.safetensors", output="logits-unbiased")
    logits = model.features(fixture_images())
    p = softmax(logits.astype(np.float64), axis=1)
    parts = np.array_split(p, 2)
    scores = [np.exp(np.mean(np.sum(q * (np.log(q) - np.log(q.mean(0))), axis=1))) for q in parts]
    got = vlbias.inception_score(logits, splits=2)
    assert got["n"] == 5 and got["classes"] == logits.shape[1]
    assert got["inception_score"] == pytest.approx(np.mean(scores), rel=1e-9)
    assert got["sd"] == pytest.approx(np.std(scores), rel=1e-9, abs=1e-12)


def test_feature_model_errors_name_the_problem(tmp_path):
    with pytest.raises(vlbias.InputError):
        vlbias.FeatureModel(tmp_path)
    with pytest.raises(vlbias.UsageError, match="pool3"):
        vlbias.FeatureModel(INCEPTION / "model.safetensors", output="pool4")
    model = vlbias.FeatureModel(INCEPTION / "model.safetensors")
    with pytest.raises(TypeError, match="paths or H x W x 3"):
        model.features([np.zeros((4, 4), dtype=np.uint8)])
    with pytest.raises(vlbias.InputError):
        model.features([tmp_path / "missing.jpg"])
    with pytest.raises(ValueError, match="logits"):
        vlbias.inception_score(np.zeros(3))
