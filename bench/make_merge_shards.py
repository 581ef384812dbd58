#!/usr/bin/python3
"""Synthetic encode shards for timing `vlbias merge` at scale (docs/scaling.md).

Writes N shard folders as `vlbias encode --shard I/N` lays them out (emb.npy, emb.rows.csv,
emb.manifest.json with the fields merge reads, the SHA-256 checks included), for ROWS random float32 rows of DIM columns in
chunks of CHUNK, chunk c in shard c mod N. (The merge's bytes are checked against one process
in the tests and bench/shard_overhead.sh; this times it at scale.)

  D=/tmp/merge-bench
  /usr/bin/python3 bench/make_merge_shards.py $D --rows 1000000 --dim 512 --shards 4
  /usr/bin/time -f "%e s %M KiB" build/vlbias merge $D/merged/emb.npy $D/shards/*
"""
import argparse
import hashlib
import json
import os

import numpy as np


def write_rows(path, rows, names):
    with open(path, "w", newline="") as f:
        f.write("row,input_row,path\n")
        for j, r in enumerate(rows):
            f.write(f"{j},{r},{names(r)}\n")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def items_sha256(items):
    # encode_internal::items_sha256 (src/encode/jobs/encode_job.cpp): blocks of 4,096 items, each as
    # its byte length, ':', its bytes and a newline; the blocks' hex digests, one per line.
    digests = b""
    for b in range(0, len(items), 4096):
        block = b"".join(b"%d:%s\n" % (len(x), x) for x in (i.encode() for i in items[b:b + 4096]))
        digests += hashlib.sha256(block).hexdigest().encode() + b"\n"
    return hashlib.sha256(digests).hexdigest()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--chunk", type=int, default=256)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    names = lambda r: f"images/{r // 1000:05d}/{r:08d}.jpg"  # noqa: E731
    chunks = (a.rows + a.chunk - 1) // a.chunk
    base = {"vlbias_version": "bench", "complete": True, "kind": "images",
            "row_order": "table rows in file order",
            "input": {"path": "images.csv", "sha256": "0" * 64, "column": "path", "items": a.rows},
            "model": {"weights_sha256": "1" * 64}, "chunk": a.chunk, "batch": 32, "failed": [],
            "resumed_items": 0, "seconds": 1.0}
    all_items = items_sha256([names(r) for r in range(a.rows)])
    for i in range(a.shards):
        mine = [c for c in range(chunks) if c % a.shards == i]
        rows = np.concatenate([np.arange(c * a.chunk, min(a.rows, (c + 1) * a.chunk)) for c in mine]) \
            if mine else np.zeros(0, dtype=np.int64)
        d = os.path.join(a.out, "shards", str(i))
        os.makedirs(d, exist_ok=True)
        emb = rng.standard_normal((len(rows), a.dim), dtype=np.float32)
        np.save(os.path.join(d, "emb.npy"), emb)
        write_rows(os.path.join(d, "emb.rows.csv"), rows, names)
        m = dict(base)
        m["output"] = {"path": "emb.npy", "format": "npy", "tensor": None, "rows": len(rows),
                       "cols": a.dim, "dtype": "float32", "normalized": True}
        m["rows_file"] = "emb.rows.csv"
        m["shard"] = {"index": i, "count": a.shards, "scheme": "chunk mod count",
                      "source": f"--shard {i}/{a.shards}", "items": len(rows),
                      "items_sha256": all_items,
                      "output_sha256": sha256_file(os.path.join(d, "emb.npy")),
                      "rows_sha256": sha256_file(os.path.join(d, "emb.rows.csv"))}
        with open(os.path.join(d, "emb.manifest.json"), "w") as f:
            json.dump(m, f, indent=2)
    os.makedirs(os.path.join(a.out, "merged"), exist_ok=True)


if __name__ == "__main__":
    main()
