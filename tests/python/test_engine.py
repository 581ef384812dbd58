"""compare, the CLIP encoder and whole audits from Python, against the CLI on the same input,
scipy, and the PyTorch embeddings of the encoder fixtures (tools/make_encode_e2e_fixtures)."""
import csv
import json
import pathlib
import threading

import numpy as np
import pytest
import scipy.stats

import vlbias
from conftest import BUILD, ROOT, without_provenance

E2E = ROOT / "tests/fixtures/encode/e2e"


def expect_rows_match(got, want):
    """The issue-4 parity bar: |diff| <= 1e-5 + 1e-4 |want|."""
    assert got.shape == want.shape
    assert got.dtype == np.float32
    assert np.all(np.abs(got - want) <= 1e-5 + 1e-4 * np.abs(want))


# ------------------------------------------------------------------ compare


def test_compare_matches_cli_and_scipy(cli, tmp_path):
    rng = np.random.default_rng(1)
    groups = ["Black"] * 30 + ["White"] * 25 + ["Asian"] * 20
    values = np.concatenate([rng.normal(0.3, 1, 30), rng.normal(0, 1, 25), rng.normal(0, 2, 20)])
    table = tmp_path / "t.csv"
    table.write_text("value,race\n" + "".join(f"{v!r},{g}\n" for v, g in zip(values, groups)))
    by_group = {g: values[np.array(groups) == g] for g in ("Asian", "Black", "White")}

    anova = vlbias.compare(values, {"race": groups})
    assert anova == without_provenance(cli("compare", "--table", table, "--value", "value", "--by", "race"))
    # A plain list of labels is one column named "group".
    assert vlbias.compare(values, groups)["comparisons"][0]["groups"][0]["key"] == {"group": "Asian"}
    f, p = scipy.stats.f_oneway(*by_group.values())
    result = anova["comparisons"][0]
    assert result["statistic"] == pytest.approx(f, rel=1e-9)
    assert result["p_value"] == pytest.approx(p, rel=1e-6)

    kruskal = vlbias.compare(values, groups, test="kruskal")
    h, p = scipy.stats.kruskal(*by_group.values())
    assert kruskal["comparisons"][0]["statistic"] == pytest.approx(h, rel=1e-9)
    assert kruskal["comparisons"][0]["p_value"] == pytest.approx(p, rel=1e-6)

    welch = vlbias.compare(values, {"race": groups}, test="welch", pairwise=True)
    assert welch == without_provenance(
        cli("compare", "--table", table, "--value", "value", "--by", "race", "--test", "welch", "--pairwise")
    )
    assert len(welch["comparisons"]) == 3
    first = welch["comparisons"][0]
    a, b = (by_group[g["key"]["race"]] for g in first["groups"])
    t, p = scipy.stats.ttest_ind(a, b, equal_var=False)
    assert abs(first["statistic"]) == pytest.approx(abs(t), rel=1e-9)
    assert first["p_value"] == pytest.approx(p, rel=1e-6)


def test_compare_intersectional_and_within(cli, tmp_path):
    rng = np.random.default_rng(2)
    n = 80
    race = [["Black", "White"][i % 2] for i in range(n)]
    gender = [["female", "male"][(i // 2) % 2] for i in range(n)]
    values = rng.normal(size=n)
    table = tmp_path / "t.csv"
    table.write_text(
        "value,race,gender\n" + "".join(f"{v!r},{r},{g}\n" for v, r, g in zip(values, race, gender))
    )
    got = vlbias.compare(values, {"race": race}, test="welch", within={"gender": gender})
    assert got == without_provenance(
        cli("compare", "--table", table, "--value", "value", "--by", "race", "--within", "gender",
            "--test", "welch")
    )
    assert len(got["comparisons"]) == 2
    both = vlbias.compare(values, {"race": race, "gender": gender})
    assert both == without_provenance(
        cli("compare", "--table", table, "--value", "value", "--by", "race,gender")
    )


def test_compare_errors():
    with pytest.raises(ValueError, match="3 labels for 2 values"):
        vlbias.compare([1.0, 2.0], ["a", "b", "c"])
    with pytest.raises(vlbias.UsageError, match="pairwise"):
        vlbias.compare([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], list("aabbcc"), test="welch")
    with pytest.raises(vlbias.UsageError):
        vlbias.compare([1.0, 2.0], ["a", "b"], test="ttest")


# ------------------------------------------------------------------ the encoder


def test_clip_matches_pytorch_and_the_cli(tmp_path):
    model = vlbias.Clip(str(E2E / "hf"))
    folder = json.loads((E2E / "expected.json").read_text())["folder_order"]
    images = model.encode_images([E2E / "images" / name for name in folder])
    expect_rows_match(images, np.load(E2E / "hf_images_folder.npy"))
    assert images.shape == (4, model.embed_dim)
    assert np.allclose(np.linalg.norm(images, axis=1), 1, atol=1e-5)

    with open(E2E / "texts.csv", newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    expect_rows_match(model.encode_texts(texts), np.load(E2E / "hf_texts.npy"))

    out = tmp_path / "texts.npy"
    import subprocess

    subprocess.run(
        [str(BUILD / "vlbias"), "--quiet", "encode", "--model", str(E2E / "hf"), "--texts",
         str(E2E / "texts.csv"), "--out", str(out)],
        check=True,
    )
    assert np.array_equal(model.encode_texts(texts), np.load(out))

    # Batches change the answer only by float rounding (GEMM blocking).
    from_paths = model.encode_images([str(E2E / "images" / folder[0])] * 3, batch_size=2)
    assert np.allclose(from_paths, images[0][None, :], atol=1e-6)
    raw = model.encode_images([E2E / "images" / folder[0]], normalize=False)
    assert not np.allclose(np.linalg.norm(raw), 1)
    # Token counts as the PyTorch reference tokenizer gave them.
    counts = json.loads((E2E / "expected.json").read_text())["token_counts"]
    context = model.describe()["model"]["context_length"]
    assert [len(model.tokenize(t)) for t in texts] == [min(c, context) for c in counts[: len(texts)]]
    assert model.describe()["model"]["embed_dim"] == model.embed_dim


def test_clip_errors_name_the_problem(tmp_path):
    with pytest.raises(vlbias.InputError, match="config"):
        vlbias.Clip(str(tmp_path))
    model = vlbias.Clip(str(E2E / "hf"))
    with pytest.raises(vlbias.InputError, match="broken.jpg"):
        model.encode_images([E2E / "broken.jpg"])
    with pytest.raises(TypeError, match="paths or H x W x 3"):
        model.encode_images([np.zeros((4, 4), dtype=np.uint8)])
    with pytest.raises(vlbias.UsageError):
        vlbias.Clip(str(E2E / "hf"), crop_rounding="ceil")


def test_clip_releases_the_gil():
    model = vlbias.Clip(str(E2E / "hf"))
    texts = ["a photo of a person"] * 64
    results = []
    threads = [threading.Thread(target=lambda: results.append(model.encode_texts(texts))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2 and np.array_equal(results[0], results[1])


# ------------------------------------------------------------------ audits


def test_audit_equals_the_cli_run(cli, tmp_path):
    spec = ROOT / "examples/trait_pairs/spec.yaml"
    results = vlbias.audit(str(spec), str(tmp_path / "py"))
    import subprocess

    subprocess.run(
        [str(BUILD / "vlbias"), "--quiet", "audit", str(spec), "--out", str(tmp_path / "cli")],
        check=True,
    )
    cli_results = vlbias.load_results(tmp_path / "cli")
    strip = lambda r: {k: v for k, v in r.items() if k != "provenance"}
    assert strip(results) == strip(cli_results)
    assert results == vlbias.load_results(tmp_path / "py")
    assert (tmp_path / "py" / "report.html").exists()
    with pytest.raises(vlbias.InputError, match="results.json"):
        vlbias.load_results(tmp_path)
    with pytest.raises(vlbias.Error):
        vlbias.audit(str(tmp_path / "missing.yaml"), str(tmp_path / "x"))


# ------------------------------------------------------------------ packaging


def test_pip_install_from_the_checkout(tmp_path):
    """`pip install .` drives the project's CMake (reusing the build) and installs a package
    that imports on its own, stubs included."""
    import subprocess
    import sys

    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
         "--target", str(target), str(ROOT)],
        check=True, capture_output=True, text=True,
        env={**__import__("os").environ, "VLBIAS_BUILD_DIR": str(BUILD)},
    )
    assert (target / "vlbias" / "_vlbias.pyi").exists() and (target / "vlbias" / "py.typed").exists()
    check = subprocess.run(
        [sys.executable, "-c",
         "import vlbias, numpy as np; print(vlbias.__file__); "
         "print(vlbias.fid(np.eye(3), np.ones((3, 3)) + np.eye(3))['fid'])"],
        check=True, capture_output=True, text=True, cwd=tmp_path,
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )
    path, fid = check.stdout.split()
    assert path.startswith(str(target))
    assert float(fid) == pytest.approx(vlbias.fid(np.eye(3), np.ones((3, 3)) + np.eye(3))["fid"])


def test_clip_open_clip_layout_matches_pytorch():
    """An open_clip directory: torchvision's round crop and open_clip's text cleaning."""
    model = vlbias.Clip(E2E / "open_clip")
    folder = json.loads((E2E / "expected.json").read_text())["folder_order"]
    expect_rows_match(model.encode_images([E2E / "images" / n for n in folder]),
                      np.load(E2E / "open_clip_images_folder.npy"))
    with open(E2E / "texts.csv", newline="", encoding="utf-8") as f:
        texts = [row["text"] for row in csv.DictReader(f)]
    expect_rows_match(model.encode_texts(texts), np.load(E2E / "open_clip_texts.npy"))
    assert model.describe()["model"]["layout"] == "open_clip"
