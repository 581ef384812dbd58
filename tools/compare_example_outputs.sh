#!/usr/bin/env bash
# Runs every bundled example (examples/run.sh, which audits each examples/*/spec.yaml) with this
# checkout's build/vlbias into a folder, or compares two such folders: results.json, summary.json,
# every table (tables/*.csv, units/*.csv, the top-level *.json and *.csv) and report.html must be
# identical (JSON: the same keys in the same order, numbers as written; the rest byte for byte)
# once provenance is removed: every "provenance" object, times ("created_utc", "seconds",
# "*_per_second"), report.html's run time and inputs table, and the output folder's own path. For a refactor that
# must not change outputs (issue 38):
#   tools/compare_example_outputs.sh run /tmp/before      # on the commit before
#   tools/compare_example_outputs.sh run /tmp/after       # on the change
#   tools/compare_example_outputs.sh compare /tmp/before /tmp/after
set -euo pipefail
args=("${1:-}")
for a in "${@:2}"; do args+=("$(realpath -m "$a")"); done
set -- "${args[@]}"
cd "$(dirname "$0")/.."
case "${1:-}" in
  run)
    [ $# -eq 2 ] || { echo "usage: $0 run DIR" >&2; exit 2; }
    rm -rf "$2"
    bash examples/run.sh "$2" >/dev/null
    ;;
  compare)
    [ $# -eq 3 ] || { echo "usage: $0 compare BEFORE AFTER" >&2; exit 2; }
    /usr/bin/python3 - "$2" "$3" <<'PY'
import json, os, re, sys

before, after = sys.argv[1], sys.argv[2]

def files(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.relpath(os.path.join(d, f), root)
            if f.endswith((".json", ".csv", ".html", ".jsonl")) and ".state" not in p:
                out.add(p)
    return out

# Keys whose values are when or how fast a run ran, not what it found.
VOLATILE = {"provenance", "created_utc", "seconds"}

def literal(kind):
    return lambda text: (kind, text)  # numbers compared as written, not as parsed

def strip(obj):
    if isinstance(obj, list) and all(isinstance(x, tuple) and len(x) == 2 and
                                     isinstance(x[0], str) for x in obj) and obj:
        return [(k, strip(v)) for k, v in obj
                if k not in VOLATILE and not k.endswith("_per_second")]
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj

def canon(path, root):
    data = open(path, "rb").read().replace(os.path.abspath(root).encode(), b"<out>")
    if path.endswith(".json"):
        try:
            tree = json.loads(data, object_pairs_hook=list, parse_float=literal("f"),
                              parse_int=literal("i"))
        except ValueError:
            return data
        return repr(strip(tree)).encode()
    if path.endswith(".html"):
        # The run's time and the inputs' hashes (the provenance table) may change.
        data = re.sub(rb"<dt>Run at \(UTC\)</dt><dd>[^<]*</dd>", b"", data)
        return re.sub(rb'<table class="inputs">.*?</table>', b"", data, flags=re.S)
    return data

fb, fa = files(before), files(after)
bad = 0
for p in sorted(fb ^ fa):
    print(f"only in {'before' if p in fb else 'after'}: {p}")
    bad += 1
for p in sorted(fb & fa):
    if canon(os.path.join(before, p), before) != canon(os.path.join(after, p), after):
        print(f"differs: {p}")
        bad += 1
print(f"{len(fb & fa)} files compared, {bad} differences")
sys.exit(1 if bad else 0)
PY
    ;;
  *) echo "usage: $0 run DIR | compare BEFORE AFTER" >&2; exit 2 ;;
esac
