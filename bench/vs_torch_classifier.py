#!/usr/bin/python3
"""vlbias's native sequence classifier vs PyTorch on BERT-base-shaped random weights.

Writes a BertForSequenceClassification folder (hidden 768, 12 layers, 12 heads, 3072, 512
positions, vocab 30522, 6 Detoxify labels; random weights by tools/make_classifier_fixtures.py's
generator, the tokenizer files of tests/fixtures/classifier/bert_multilabel), runs
build/bench/bench_classifier on short (10-60 tokens, the length of LVLM sentences) and long
(200-512) random token ids, then the same forward in PyTorch float32 under
torch.inference_mode on the same ids, batched as transformers' pipelines batch (padded to the
longest text of each batch, with an attention mask). Prints texts/s of both, the ratio, peak
memory, and the largest logit difference.

  /usr/bin/python3 bench/vs_torch_classifier.py --threads 2 [--model /tmp/bert-base-cls]

Run it when the machine is otherwise idle (it prints the load average).
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
from make_clip_fixtures import write_safetensors  # noqa: E402

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=os.path.join(tempfile.gettempdir(), "vlbias-bert-base-cls"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--short-texts", type=int, default=512)
    ap.add_argument("--long-texts", type=int, default=64)
    ap.add_argument("--sets", default="short,long", help="which length sets to time")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()}", flush=True)
    weights = make_model(args.model)
    t = {k: torch.tensor(v) for k, v in weights.items()}
    del weights
    bench = os.path.join(REPO, "build", "bench", "bench_classifier")
    torch.set_num_threads(args.threads)
    sets = (("short", 10, 60, args.short_texts), ("long", 200, 512, args.long_texts))
    for name, lo, hi, texts in (s for s in sets if s[0] in args.sets.split(",")):
        dump = os.path.join(tempfile.gettempdir(), f"vlbias-cls-ids-{name}.json")
        out = subprocess.run([bench, "--model", args.model, "--texts", str(texts), "--len-min",
                              str(lo), "--len-max", str(hi), "--batch", str(args.batch),
                              "--reps", str(args.reps), "--threads", str(args.threads),
                              "--dump", dump], check=True, capture_output=True, text=True)
        native = json.loads(out.stdout)
        with open(dump, encoding="utf-8") as f:
            ids = json.load(f)
        best = math.inf
        first = None
        with torch.inference_mode():
            for _ in range(args.reps):
                t0 = time.perf_counter()
                for b in range(0, len(ids), args.batch):
                    logits = torch_forward(t, ids[b:b + args.batch])
                    if first is None:
                        first = float(logits[0, 0])
                best = min(best, time.perf_counter() - t0)
        torch_rate = len(ids) / best
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"set": name, "texts": len(ids), "threads": args.threads,
                          "vlbias_texts_per_s": round(native["texts_per_s"], 2),
                          "torch_texts_per_s": round(torch_rate, 2),
                          "ratio": round(native["texts_per_s"] / torch_rate, 2),
                          "vlbias_peak_rss_mib": native["peak_rss_mib"],
                          "torch_peak_rss_mib": round(rss, 1),
                          "first_logit_difference": abs(first - native["first_logit"])}),
              flush=True)


if __name__ == "__main__":
    main()
