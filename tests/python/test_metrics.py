"""The metric bindings against the CLI on the same input (every field equal) and against
numpy/scipy references; arrays of every dtype and layout; errors with the engine's messages;
the GIL released during the call."""
import json
import math
import threading
import time

import numpy as np
import pytest
import scipy.linalg

import vlbias
from conftest import without_provenance


def features(n, d, seed, shift=0.0):
    return (np.random.default_rng(seed).normal(size=(n, d)) + shift).astype(np.float32)


# ------------------------------------------------------------------ references


def prdc_reference(real, fake, k):
    """Naeem et al. 2020 in float64 with numpy (strict balls, k-th nearest other row)."""
    real = real.astype(np.float64)
    fake = fake.astype(np.float64)

    def dist(x, y):
        return np.sqrt(np.maximum(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1), 0))

    d_rr = dist(real, real)
    np.fill_diagonal(d_rr, np.inf)
    r = np.sort(d_rr, axis=1)[:, k - 1]
    d_ff = dist(fake, fake)
    np.fill_diagonal(d_ff, np.inf)
    f = np.sort(d_ff, axis=1)[:, k - 1]
    d_rf = dist(real, fake)
    inside = d_rf < r[:, None]
    return {
        "precision": inside.any(axis=0).mean(),
        "recall": (d_rf < f[None, :]).any(axis=1).mean(),
        "density": inside.sum(axis=0).mean() / k,
        "coverage": (d_rf.min(axis=1) < r).mean(),
    }


def fid_reference(a, b):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    mu = a.mean(0) - b.mean(0)
    ca, cb = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    root = scipy.linalg.sqrtm(ca @ cb).real
    return mu @ mu + np.trace(ca) + np.trace(cb) - 2 * np.trace(root)


def kid_reference(a, b, degree=3, coef0=1.0):
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    gamma = 1.0 / a.shape[1]
    k_aa = (gamma * a @ a.T + coef0) ** degree
    k_bb = (gamma * b @ b.T + coef0) ** degree
    k_ab = (gamma * a @ b.T + coef0) ** degree
    m, n = len(a), len(b)
    return (
        (k_aa.sum() - np.trace(k_aa)) / (m * (m - 1))
        + (k_bb.sum() - np.trace(k_bb)) / (n * (n - 1))
        - 2 * k_ab.mean()
    )


def vendi_reference(x, q=1.0):
    x = x.astype(np.float64)
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(x @ x.T / len(x))
    lam = lam[lam > 0]
    if q == 1.0:
        return math.exp(-(lam * np.log(lam)).sum())
    return math.exp(math.log((lam**q).sum()) / (1 - q))


# ------------------------------------------------------------------ values


def test_prdc_matches_cli_and_numpy(cli, npy):
    real, fake = features(300, 16, 1), features(200, 16, 2, shift=0.3)
    got = vlbias.prdc(real, fake, k=3)
    assert got == without_provenance(
        cli("metric", "prdc", "--real", npy(real, "r"), "--fake", npy(fake, "f"), "--k", 3)
    )
    ref = prdc_reference(real, fake, 3)
    for key, value in ref.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert (got["k"], got["n_real"], got["n_fake"], got["dim"]) == (3, 300, 200, 16)


def test_fid_matches_cli_and_scipy(cli, npy):
    real, fake = features(400, 12, 3), features(300, 12, 4, shift=0.2)
    got = vlbias.fid(real, fake)
    assert got == without_provenance(
        cli("metric", "fid", "--real", npy(real, "r"), "--fake", npy(fake, "f"))
    )
    assert got["fid"] == pytest.approx(fid_reference(real, fake), rel=1e-7)


def test_kid_matches_cli_and_numpy(cli, npy):
    real, fake = features(120, 10, 5), features(90, 10, 6, shift=0.5)
    got = vlbias.kid(real, fake, subsets=0)
    assert got == without_provenance(
        cli("metric", "kid", "--real", npy(real, "r"), "--fake", npy(fake, "f"), "--subsets", 0)
    )
    assert got["kid"] == pytest.approx(kid_reference(real, fake), rel=1e-5)
    sampled = vlbias.kid(real, fake, subsets=20, subset_size=50, seed=7)
    assert sampled == without_provenance(
        cli("metric", "kid", "--real", npy(real, "r"), "--fake", npy(fake, "f"),
            "--subsets", 20, "--subset-size", 50, "--seed", 7)
    )
    assert len(sampled["per_subset"]) == 20


def test_vendi_matches_cli_and_numpy(cli, npy):
    x = features(150, 8, 8)
    for q in (1.0, 2.0, 0.5):
        got = vlbias.vendi(x, q=q)
        assert got == without_provenance(cli("metric", "vendi", "--features", npy(x, "x"), "--q", q))
        # float32 features, float64 eigenvalues: agreement to float32 rounding.
        assert got["vendi"] == pytest.approx(vendi_reference(x, q), rel=1e-6)
    assert vlbias.vendi(x, q=math.inf)["q"] == "inf"


def test_scweat_matches_cli_and_numpy(cli, npy):
    targets, a, b = features(5, 12, 9), features(20, 12, 10), features(24, 12, 11, shift=0.1)
    got = vlbias.scweat(targets, a, b, permutations=500, seed=3)
    assert got == without_provenance(
        cli("metric", "scweat", "--targets", npy(targets, "t"), "--a", npy(a, "a"),
            "--b", npy(b, "b"), "--permutations", 500, "--seed", 3)
    )
    # Per target: mean cos with A - mean cos with B, over the sd (n - 1) of all its cosines.
    unit = lambda m: m.astype(np.float64) / np.linalg.norm(m.astype(np.float64), axis=1, keepdims=True)
    cos_a, cos_b = unit(targets) @ unit(a).T, unit(targets) @ unit(b).T
    for t, row in enumerate(got["per_target"]):
        diff = cos_a[t].mean() - cos_b[t].mean()
        sd = np.concatenate([cos_a[t], cos_b[t]]).std(ddof=1)
        assert row["difference"] == pytest.approx(diff, abs=1e-6)
        assert row["effect_size"] == pytest.approx(diff / sd, abs=1e-5)
    assert 0 < got["p_value"] <= 1
    assert vlbias.scweat(targets, a, b, p_test="sign-flip", permutations=64)["p_test"] == "sign-flip"


def test_skew_and_ndkl_match_cli_and_numpy(cli, tmp_path):
    rng = np.random.default_rng(12)
    scores = rng.normal(size=40)
    labels = [["female", "male", "nonbinary"][i] for i in rng.integers(0, 3, size=40)]
    table = tmp_path / "ranked.csv"
    table.write_text("score,gender\n" + "".join(f"{s!r},{g}\n" for s, g in zip(scores, labels)))
    got = vlbias.skew(scores, labels, k=10)
    assert got == without_provenance(
        cli("metric", "skew", "--table", table, "--score", "score", "--attribute", "gender", "--k", 10)
    )
    top = [labels[i] for i in np.argsort(-scores, kind="stable")[:10]]
    for c in ("female", "male", "nonbinary"):
        share = top.count(c) / 10
        expected = "-inf" if share == 0 else pytest.approx(math.log(share * 3), abs=1e-12)
        assert got["skew"][c] == expected
    assert vlbias.skew(scores, labels, k=10, desired="base-rate", absent="zero") == without_provenance(
        cli("metric", "skew", "--table", table, "--score", "score", "--attribute", "gender",
            "--k", 10, "--desired", "base-rate", "--absent", "zero")
    )
    assert vlbias.ndkl(scores, labels) == without_provenance(
        cli("metric", "ndkl", "--table", table, "--score", "score", "--attribute", "gender")
    )
    # Integer labels are classes named by their digits, ordered numerically.
    ints = vlbias.skew([3.0, 2.0, 1.0, 0.0], [10, 2, 10, 2], k=2)
    assert list(ints["skew"]) == ["2", "10"]


# ------------------------------------------------------------------ arrays and errors


def test_every_dtype_and_layout_gives_the_same_answer():
    real, fake = features(120, 8, 13), features(80, 8, 14)
    expected = vlbias.prdc(real, fake, k=3)
    wide = np.zeros((120, 16), dtype=np.float32)
    wide[:, ::2] = real
    variants = [
        real.astype(np.float64),
        np.asfortranarray(real),
        wide[:, ::2],  # non-contiguous view
        real.tolist(),  # nested lists
    ]
    for v in variants:
        assert vlbias.prdc(v, fake, k=3) == expected
    # float64 input is rounded to float32, as the engine's convention says.
    assert vlbias.fid(real.astype(np.float64), fake) == vlbias.fid(real, fake)


def test_bad_arrays_are_clear_errors():
    real, fake = features(50, 4, 15), features(40, 4, 16)
    with pytest.raises(ValueError, match="real must be a 2-D array"):
        vlbias.prdc(real[0], fake)
    with pytest.raises(ValueError, match="2-D"):
        vlbias.fid(real[None], fake)
    with pytest.raises(ValueError, match="same feature extractor"):
        vlbias.prdc(real, fake[:, :3])
    with pytest.raises(TypeError, match="fake must be a 2-D array of numbers"):
        vlbias.prdc(real, np.array([["a", "b"]], dtype=object))
    nan = real.copy()
    nan[7, 2] = np.nan
    with pytest.raises(vlbias.InputError) as err:
        vlbias.prdc(nan, fake)
    assert isinstance(err.value, ValueError) and isinstance(err.value, vlbias.Error)
    with pytest.raises(vlbias.InputError, match="FID: the sets have 1 and 40 rows"):
        vlbias.fid(real[:1], fake)  # one row: no covariance
    with pytest.raises(vlbias.UsageError):
        vlbias.scweat(real[:3], real, fake, p_test="bootstrap")
    with pytest.raises(ValueError, match="one class per score"):
        vlbias.skew([1.0, 2.0], ["a"], k=1)
    with pytest.raises(ValueError, match="k must be between 1 and 2"):
        vlbias.skew([1.0, 2.0], ["a", "b"], k=3)
    with pytest.raises(ValueError, match="at least two"):
        vlbias.ndkl([1.0, 2.0], ["a", "a"])
    with pytest.raises(vlbias.InputError, match="NaN"):
        vlbias.ndkl([1.0, float("nan")], ["a", "b"])


def test_the_gil_is_released_during_a_call():
    """While one thread is inside the engine, another runs Python: it wakes up every
    millisecond in the middle of the call. With the GIL held it could not wake at all until
    the call returned (not a timing ratio, so a loaded machine does not make it flaky)."""
    real, fake = features(3000, 128, 17), features(3000, 128, 18)
    window = {}

    def work():
        window["start"] = time.perf_counter()
        vlbias.prdc(real, fake, k=3)
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    wakes = []
    worker.start()
    while worker.is_alive():
        wakes.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    start, end = window["start"], window["end"]
    assert end - start > 0.05, "the call was too short to observe"
    middle = [t for t in wakes if start + 0.2 * (end - start) < t < end - 0.2 * (end - start)]
    assert len(middle) >= 5, (end - start, len(wakes), len(middle))


def test_module_metadata():
    assert vlbias.__version__
    assert vlbias.threads() >= 1
    assert "precision" in vlbias.prdc.__doc__


def test_set_threads_refuses_counts_outside_0_to_256_as_a_value_error():
    before = vlbias.threads()
    for n in (257, 10**6, 10**30, -1):
        with pytest.raises(ValueError, match=r"set_threads\(n\) must be an integer from 0"):
            vlbias.set_threads(n)
        with pytest.raises(vlbias.UsageError):
            vlbias.set_threads(n)
    assert vlbias.threads() == before
    vlbias.set_threads(256)
    try:
        # A count far above the cores runs: workers start only for the tasks there are.
        assert vlbias.threads() == 256
        vlbias.prdc(features(40, 4, 31), features(40, 4, 32), k=3)
    finally:
        vlbias.set_threads(0)


def test_clipscore_matches_cli_and_numpy(cli, npy, tmp_path):
    images, texts = features(60, 8, 19), features(60, 8, 20)
    for variant in ("raw", "hessel", "torchmetrics"):
        got = vlbias.clipscore(images, texts, variant=variant)
        cosine, score = got.pop("cosine"), got.pop("score")
        assert got == without_provenance(
            cli("metric", "clipscore", "--images", npy(images, "i"), "--texts", npy(texts, "t"),
                "--variant", variant)
        )
        a = images.astype(np.float64)
        b = texts.astype(np.float64)
        ref = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert np.allclose(cosine, ref, atol=1e-12)
        expected = {"raw": ref, "hessel": 2.5 * np.maximum(ref, 0), "torchmetrics": np.maximum(100 * ref, 0)}
        assert np.allclose(score, expected[variant], atol=1e-10)
        assert got["overall"]["mean"] == pytest.approx(expected[variant].mean(), abs=1e-12)
        assert got["overall"]["percentiles"]["10"] == pytest.approx(np.percentile(expected[variant], 10), abs=1e-12)
    # Rows picked per image, as the CLI's --text-row column.
    rows = [i % 3 for i in range(60)]
    table = tmp_path / "rows.csv"
    table.write_text("text_row\n" + "".join(f"{r}\n" for r in rows))
    got = vlbias.clipscore(images, texts[:3], text_row=rows)
    got.pop("cosine"), got.pop("score")
    assert got == without_provenance(
        cli("metric", "clipscore", "--images", npy(images, "i"), "--texts", npy(texts[:3], "t3"),
            "--table", table, "--text-row", "text_row")
    )
    with pytest.raises(vlbias.InputError):
        vlbias.clipscore(images, texts[:7])


def answers_table(tmp_path, rows, columns):
    import csv

    path = tmp_path / "answers.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows(rows)
    return path


def test_maxgap_matches_cli_and_numpy(cli, tmp_path):
    rng = np.random.default_rng(21)
    groups = ["Asian", "Black", "White"]
    set_ids, group, prompt, tox = [], [], [], []
    for s in range(40):
        for p in ("describe", "job"):
            for g in groups:
                set_ids.append(f"s{s}")
                group.append(g)
                prompt.append(p)
                tox.append(float(rng.beta(2, 8) + (0.2 if g == "Black" else 0.0)))
    tox = np.array(tox)
    table = answers_table(tmp_path, zip(set_ids, group, prompt, tox), ["set", "race", "prompt", "toxicity"])
    # One score, no split: the single result is the object itself, as the CLI prints it.
    got = vlbias.maxgap({"toxicity": tox}, {"set": set_ids, "prompt": prompt}, {"race": group},
                        bootstrap=200, seed=4)
    assert got == without_provenance(
        cli("metric", "maxgap", "--table", table, "--set-key", "set,prompt", "--group", "race",
            "--score", "toxicity", "--bootstrap", 200, "--seed", 4)
    )
    # numpy: per (set, prompt) max - min, then the mean over the 80 sets.
    keys = sorted(set(zip(set_ids, prompt)))
    gaps = []
    holders = []
    for k in keys:
        idx = [i for i, kk in enumerate(zip(set_ids, prompt)) if kk == k]
        gaps.append(tox[idx].max() - tox[idx].min())
        holders.append(group[idx[int(np.argmax(tox[idx]))]])
    assert got["sets"] == 80
    assert got["maxgap"]["mean"] == pytest.approx(np.mean(gaps), abs=1e-12)
    assert got["maxgap"]["p90"] == pytest.approx(np.percentile(gaps, 90), abs=1e-12)
    assert got["max_group_share"]["race=Black"] == pytest.approx(holders.count("Black") / 80)
    # Split by prompt: one result per prompt.
    split = vlbias.maxgap({"toxicity": tox}, set_ids, {"race": group}, by={"prompt": prompt}, bootstrap=0)
    assert split == without_provenance(
        cli("metric", "maxgap", "--table", table, "--set-key", "set", "--group", "race",
            "--score", "toxicity", "--by", "prompt", "--bootstrap", 0)
    )
    assert len(split["results"]) == 2
    # A plain array is the score column "score".
    assert vlbias.maxgap(tox, set_ids, group, bootstrap=0)["score"] == "score"


def test_pmi_matches_cli(cli, tmp_path):
    texts, group = [], []
    for i in range(60):
        g = ["Black", "White"][i % 2]
        texts.append(("strong athletic man " if g == "Black" else "smart calm man ") + f"w{i % 5}")
        group.append(g)
    table = answers_table(tmp_path, zip(texts, group), ["text", "race"])
    got = vlbias.pmi(texts, {"race": group}, min_freq=3)
    assert got == without_provenance(
        cli("metric", "pmi", "--table", table, "--text", "text", "--group", "race", "--min-freq", 3)
    )
    words = json.dumps(got)
    assert "athletic" in words and "smart" in words


def test_lvlm_bindings_refuse_bad_input():
    with pytest.raises(ValueError, match="2 labels for 3 values"):
        vlbias.maxgap([0.1, 0.2, 0.3], ["a", "a"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="min_freq"):
        vlbias.pmi(["a b"], ["g"], min_freq=0)
