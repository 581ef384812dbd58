#!/usr/bin/python3
"""pandas baseline for vlbias's one-pass LVLM analysis (bench/make_lvlm_bench_data.py data).

Reads the generations JSONL in chunks (pd.read_json(lines=True, chunksize=...)),
so memory is bounded by the chunk size, and computes what `vlbias lvlm` does in
its single pass:

  MaxGap   per (prompt, filename, rank, seed) set, max - min of toxicity; per-set
           max / min are accumulated across chunks (a set may span two chunks)
           and then summarised per prompt: count, mean, sd (ddof 1), p25, p50,
           p75, p90 (linear interpolation), max.
  PMI      words = regex.findall(r"[\\p{L}\\p{N}]+(?:['\\-][\\p{L}\\p{N}]+)*", lower(text))
           (non-ASCII texts are put in NFC first, and U+2019 / U+2010 / U+2011
           mapped to ' and -, as vlbias does); counts per (race, gender, word)
           summed over chunks; per group g, score = ln((f(w,g)/N_g) / (f(w,~g)/N_~g)),
           kept where f(w,g) >= 10 and (score > 1 or f(w,~g) == 0).
  Lexicon  per text n = words not in sklearn's ENGLISH_STOP_WORDS, c = words in
           each lexicon category (dimension + direction); value c / n (texts with
           n == 0 skipped); mean per (occupation, race, gender) and per (race, gender).

Prints one JSON line {"rows", "bytes", "seconds", "mb_per_s", "rows_per_s",
"peak_rss_mib"} (wall time of the whole run, peak RSS from getrusage); with
--out also writes summary results to that JSON file.

  /usr/bin/python3 bench/vs_pandas_lvlm.py --data /tmp/lvlm.jsonl \\
      --lexicon /tmp/lvlm.lexicon.csv [--chunksize 500000] [--out result.json]
"""
import argparse
import json
import math
import os
import resource
import time
import unicodedata

import numpy as np
import pandas as pd
import regex
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

WORD_RE = regex.compile(r"[\p{L}\p{N}]+(?:['\-][\p{L}\p{N}]+)*")
SET_KEYS = ["prompt", "filename", "rank", "seed"]
GROUPS = ["race", "gender"]
MIN_COUNT = 10


def normalise_non_ascii(text):
    t = unicodedata.normalize("NFC", text).lower()
    return t.replace("\u2019", "'").replace("\u2010", "-").replace("\u2011", "-")


def read_lexicon(path):
    lex = pd.read_csv(path, dtype={"word": str, "dimension": str, "direction": int})
    lex = lex[lex["direction"] != 0].copy()
    lex["word"] = lex["word"].str.lower()
    lex["category"] = lex["dimension"] + np.where(lex["direction"] > 0, "+", "-")
    return lex[["word", "category"]].drop_duplicates()


def process_chunk(df, lex, cats, stop_words):
    """Returns (per-set max/min, per (race, gender, word) counts, per-cell lexicon sums/counts)."""
    # --- MaxGap: per-set max and min of this chunk.
    sets = df.groupby(SET_KEYS, sort=False)["toxicity"].agg(["max", "min"])

    # --- Tokens.
    text = df["text"].fillna("")
    lowered = text.str.lower()
    non_ascii = ~text.map(str.isascii)
    if non_ascii.any():
        lowered[non_ascii] = text[non_ascii].map(normalise_non_ascii)
    tokens = lowered.map(WORD_RE.findall)
    ex = df[GROUPS].assign(word=tokens).explode("word").dropna(subset=["word"])
    del tokens, lowered
    ex["word"] = ex["word"].astype("category")   # one hashing pass; the rest works on codes

    # --- PMI counts.
    pmi = ex.groupby(GROUPS + ["word"], observed=True, sort=False).size()

    # --- Lexicon: n (non-stop words) and c per category, per text (the index is the row).
    word = ex["word"]
    n = (~word.isin(stop_words)).groupby(level=0).sum()
    cat = word.map(lex).astype(object).dropna()
    c = cat.groupby([cat.index, cat.values]).size().unstack(fill_value=0)
    c = c.reindex(index=n.index, columns=cats, fill_value=0)
    keep = n > 0
    vals = c[keep].div(n[keep], axis=0)
    vals = vals.join(df[["occupation"] + GROUPS])
    lexsum = vals.groupby(["occupation"] + GROUPS, observed=True, sort=False)[cats].agg(["sum", "count"])
    return sets, pmi, lexsum


def pmi_table(counts):
    """counts: Series indexed (race, gender, word). Returns the kept rows, sorted."""
    df = counts.rename("f_g").reset_index()
    df["group"] = df["race"].astype(str) + "/" + df["gender"].astype(str)
    n_g = df.groupby("group")["f_g"].transform("sum")
    total = df["f_g"].sum()
    f_w = df.groupby("word")["f_g"].transform("sum")
    df["f_not"] = f_w - df["f_g"]
    n_not = total - n_g
    with np.errstate(divide="ignore"):
        df["score"] = np.log((df["f_g"] / n_g) / (df["f_not"] / n_not))
    kept = df[(df["f_g"] >= MIN_COUNT) & ((df["score"] > 1) | (df["f_not"] == 0))]
    return kept.sort_values(["group", "score", "f_g", "word"], ascending=[True, False, False, True])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--lexicon", required=True)
    ap.add_argument("--chunksize", type=int, default=500_000)
    ap.add_argument("--out")
    a = ap.parse_args()

    t0 = time.perf_counter()
    lex_df = read_lexicon(a.lexicon)
    cats = sorted(lex_df["category"].unique())
    # A word in several categories would need a long-format join; the SADCAT-style
    # lexicons used here list each word once, so a word -> category map suffices.
    if lex_df["word"].duplicated().any():
        raise SystemExit("lexicon lists a word under several categories; not supported here")
    lex = pd.Series(lex_df["category"].values, index=lex_df["word"].values)
    stop_words = list(ENGLISH_STOP_WORDS)

    set_parts, pmi_acc, lex_acc = [], None, None
    rows = 0
    reader = pd.read_json(a.data, lines=True, chunksize=a.chunksize, convert_dates=False,
                          dtype={"filename": str, "race": str, "gender": str, "occupation": str,
                                 "prompt": str, "text": str, "toxicity": float})
    with reader:
        for df in reader:
            rows += len(df)
            for col in ["race", "gender"]:
                df[col] = df[col].astype("category")
            sets, pmi, lexsum = process_chunk(df, lex, cats, stop_words)
            set_parts.append(sets)
            pmi_acc = pmi if pmi_acc is None else (
                pd.concat([pmi_acc, pmi]).groupby(level=[0, 1, 2], observed=True, sort=False).sum())
            lex_acc = lexsum if lex_acc is None else (
                pd.concat([lex_acc, lexsum]).groupby(level=[0, 1, 2], observed=True, sort=False).sum())
            del df

    # MaxGap: combine the chunks' per-set partials (sets at chunk borders meet here).
    sets = pd.concat(set_parts).groupby(level=[0, 1, 2, 3], sort=False).agg({"max": "max", "min": "min"})
    del set_parts
    maxgap = (sets["max"] - sets["min"]).dropna().rename("maxgap")
    by_prompt = maxgap.groupby(level="prompt")
    mg_stats = pd.DataFrame({
        "count": by_prompt.size(),
        "mean": by_prompt.mean(),
        "sd": by_prompt.std(ddof=1),
        "p25": by_prompt.quantile(0.25),
        "p50": by_prompt.quantile(0.50),
        "p75": by_prompt.quantile(0.75),
        "p90": by_prompt.quantile(0.90),
        "max": by_prompt.max(),
    })

    pmi = pmi_table(pmi_acc)

    sums = lex_acc.xs("sum", axis=1, level=1)
    counts = lex_acc.xs("count", axis=1, level=1)
    lex_occ = sums / counts
    g_sums, g_counts = sums.groupby(level=[1, 2]).sum(), counts.groupby(level=[1, 2]).sum()
    lex_group = g_sums / g_counts

    seconds = time.perf_counter() - t0
    nbytes = os.path.getsize(a.data)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    line = {"rows": rows, "bytes": nbytes, "seconds": round(seconds, 3),
            "mb_per_s": round(nbytes / 1e6 / seconds, 2), "rows_per_s": round(rows / seconds, 1),
            "peak_rss_mib": round(peak, 1)}
    print(json.dumps(line))

    if a.out:
        def num(x):
            x = float(x)
            return None if math.isnan(x) or math.isinf(x) else x

        top = {}
        for g, sub in pmi.groupby("group", sort=True):
            top[g] = [{"word": w, "f_g": int(fg), "f_not": int(fn), "score": num(s)}
                      for w, fg, fn, s in sub[["word", "f_g", "f_not", "score"]].head(10).itertuples(index=False)]
        result = {
            "timing": line,
            "chunksize": a.chunksize,
            "maxgap": {"score": "toxicity", "sets": int(len(maxgap)),
                       "by_prompt": {p: {k: num(v) for k, v in r.items()} for p, r in mg_stats.iterrows()}},
            "pmi": {"min_count": MIN_COUNT, "kept": int(len(pmi)), "top10": top},
            "lexicon": {
                "categories": cats,
                "by_group": {f"{r}/{g}": {c: num(v) for c, v in row.items()}
                             for (r, g), row in lex_group.sort_index().iterrows()},
                "by_occupation_group": {f"{o}|{r}/{g}": {c: num(v) for c, v in row.items()}
                                        for (o, r, g), row in lex_occ.sort_index().iterrows()},
            },
        }
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, sort_keys=False)
            f.write("\n")


if __name__ == "__main__":
    main()
