#!/usr/bin/python3
"""vlbias's native sequence classifier vs PyTorch on BERT-base-shaped random weights.

Writes a BertForSequenceClassification folder (hidden 768, 12 layers, 12 heads, 3072, 512
positions, vocab 30522, 6 Detoxify labels; random weights by tools/make_classifier_fixtures.py's
generator, the tokenizer files of tests/fixtures/classifier/bert_multilabel; a folder already
there is reused), runs build/bench/bench_classifier on short (10-60 tokens, the length of LVLM
sentences) and long (200-512) random token ids, then the same forward in PyTorch float32 under
torch.inference_mode on the same ids, batched as transformers' pipelines batch (padded to the
longest text of each batch, with an attention mask). Prints texts/s of both, the ratio, peak
memory, and the largest logit difference, per round and as median / min / max over rounds: the
engines alternate, so a change in the machine's load hits both alike.

  /usr/bin/python3 bench/vs_torch_classifier.py --threads 2 [--rounds 3] [--model /tmp/bert-base-cls]
  [--baseline-bench OLD/bench_classifier]   # before/after: another build timed in the same rounds

Run it when the machine is otherwise idle (it prints the load average, also per round).
"""
import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools"))
import make_classifier_fixtures as mcf  # noqa: E402
from make_clip_fixtures import read_safetensors, write_safetensors  # noqa: E402

VOCAB = 30522


def make_model(folder):
    mcf.HIDDEN, mcf.LAYERS, mcf.HEADS, mcf.INTERMEDIATE, mcf.MAX_TOKENS = 768, 12, 12, 3072, 512
    os.makedirs(folder, exist_ok=True)
    src = os.path.join(REPO, "tests", "fixtures", "classifier", "bert_multilabel")
    for f in os.listdir(src):
        if f not in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(src, f), os.path.join(folder, f))
    rng = np.random.default_rng(1)
    weights = mcf.random_weights("bert", VOCAB, mcf.DETOXIFY_ORIGINAL, rng)
    write_safetensors(os.path.join(folder, "model.safetensors"), weights)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(mcf.config_json("bert", VOCAB, mcf.DETOXIFY_ORIGINAL,
                                  "multi_label_classification", "gelu", 0), f, indent=1)
    return weights


def torch_forward(t, ids_batch):
    """BertForSequenceClassification logits (float32) of a batch padded to its longest text."""
    n = max(len(x) for x in ids_batch)
    b = len(ids_batch)
    ids = torch.zeros((b, n), dtype=torch.long)
    mask = torch.zeros((b, n), dtype=torch.float32)
    for i, x in enumerate(ids_batch):
        ids[i, :len(x)] = torch.tensor(x)
        mask[i, :len(x)] = 1
    add_mask = (1.0 - mask)[:, None, None, :] * torch.finfo(torch.float32).min
    p = "bert."
    h_dim, heads = 768, 12
    d = h_dim // heads

    def lin(name, x):
        return torch.nn.functional.linear(x, t[name + ".weight"], t[name + ".bias"])

    def ln(name, x):
        return torch.nn.functional.layer_norm(x, (h_dim,), t[name + ".weight"], t[name + ".bias"],
                                              1e-12)

    x = t[p + "embeddings.word_embeddings.weight"][ids] + \
        t[p + "embeddings.token_type_embeddings.weight"][0] + \
        t[p + "embeddings.position_embeddings.weight"][:n]
    x = ln(p + "embeddings.LayerNorm", x)
    for i in range(12):
        q = f"{p}encoder.layer.{i}."

        def split(y):
            return y.view(b, n, heads, d).transpose(1, 2)

        qh = split(lin(q + "attention.self.query", x))
        kh = split(lin(q + "attention.self.key", x))
        vh = split(lin(q + "attention.self.value", x))
        scores = qh @ kh.transpose(-1, -2) / math.sqrt(d) + add_mask
        a = (torch.softmax(scores, -1) @ vh).transpose(1, 2).reshape(b, n, h_dim)
        x = ln(q + "attention.output.LayerNorm", lin(q + "attention.output.dense", a) + x)
        f = lin(q + "output.dense", torch.nn.functional.gelu(lin(q + "intermediate.dense", x)))
        x = ln(q + "output.LayerNorm", f + x)
    pooled = torch.tanh(lin(p + "pooler.dense", x[:, 0]))
    return lin("classifier", pooled)


def time_torch(t, ids, batch, reps):
    """Best of `reps` seconds for PyTorch over ids in batches, and the first logit."""
    best, first = math.inf, None
    with torch.inference_mode():
        for _ in range(reps):
            t0 = time.perf_counter()
            for b in range(0, len(ids), batch):
                logits = torch_forward(t, ids[b:b + batch])
                if first is None:
                    first = float(logits[0, 0])
            best = min(best, time.perf_counter() - t0)
    return best, first


def run_native(bench, args, lo, hi, texts, dump):
    out = subprocess.run([bench, "--model", args.model, "--texts", str(texts), "--len-min",
                          str(lo), "--len-max", str(hi), "--batch", str(args.batch),
                          "--reps", str(args.reps), "--threads", str(args.threads),
                          "--dump", dump], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def spread(values):
    v = sorted(values)
    return {"median": round(v[len(v) // 2], 2), "min": round(v[0], 2), "max": round(v[-1], 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(tempfile.gettempdir(), "vlbias-bert-base-cls"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=1, help="repetitions per round (best is kept)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds of (vlbias, PyTorch) back to back: the ratio per round")
    ap.add_argument("--short-texts", type=int, default=512)
    ap.add_argument("--long-texts", type=int, default=64)
    ap.add_argument("--sets", default="short,long", help="which length sets to time")
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "bench", "bench_classifier"))
    ap.add_argument("--baseline-bench", default=None,
                    help="another bench_classifier build (e.g. of the previous commit) timed in "
                         "the same rounds: before/after under the same load")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    if os.path.exists(os.path.join(args.model, "model.safetensors")):
        weights = read_safetensors(os.path.join(args.model, "model.safetensors"))
    else:
        weights = make_model(args.model)
    t = {k: torch.tensor(v) for k, v in weights.items()}
    del weights
    torch.set_num_threads(args.threads)
    sets = (("short", 10, 60, args.short_texts), ("long", 200, 512, args.long_texts))
    sets = [s for s in sets if s[0] in args.sets.split(",")]
    # Rounds interleave the engines so that a change in the machine's load hits both alike.
    rates = {name: {"vlbias": [], "torch": [], "ratio": [], "baseline": []} for name, *_ in sets}
    for rnd in range(args.rounds):
        for name, lo, hi, texts in sets:
            dump = os.path.join(tempfile.gettempdir(), f"vlbias-cls-ids-{name}.json")
            native = run_native(args.bench, args, lo, hi, texts, dump)
            with open(dump, encoding="utf-8") as f:
                ids = json.load(f)
            seconds, first = time_torch(t, ids, args.batch, args.reps)
            torch_rate = len(ids) / seconds
            r = rates[name]
            r["vlbias"].append(native["texts_per_s"])
            r["torch"].append(torch_rate)
            r["ratio"].append(native["texts_per_s"] / torch_rate)
            line = {"round": rnd, "set": name, "texts": len(ids), "threads": args.threads,
                    "vlbias_texts_per_s": round(native["texts_per_s"], 2),
                    "torch_texts_per_s": round(torch_rate, 2),
                    "ratio": round(native["texts_per_s"] / torch_rate, 2),
                    "vlbias_peak_rss_mib": native["peak_rss_mib"],
                    "torch_peak_rss_mib":
                        round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                    "first_logit_difference": abs(first - native["first_logit"]),
                    "load_average": round(os.getloadavg()[0], 2)}
            if args.baseline_bench:
                base = run_native(args.baseline_bench, args, lo, hi, texts, dump)
                r["baseline"].append(base["texts_per_s"])
                line["baseline_texts_per_s"] = round(base["texts_per_s"], 2)
            print(json.dumps(line), flush=True)
    for name, r in rates.items():
        summary = {"set": name, "rounds": args.rounds, "vlbias_texts_per_s": spread(r["vlbias"]),
                   "torch_texts_per_s": spread(r["torch"]), "ratio": spread(r["ratio"])}
        if r["baseline"]:
            summary["baseline_texts_per_s"] = spread(r["baseline"])
        print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
