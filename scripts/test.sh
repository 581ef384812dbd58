#!/usr/bin/env bash
# The README's test command. Installs dependencies, then:
#   1. Release build, every test (ctest);
#   2. clang ASan+UBSan build with libFuzzer's coverage, every test again (the parsers'
#      hostile-input tests matter most here);
#   3. from the same build, each parser fuzzed briefly from its seed corpus;
# before them, the structure check (scripts/check_stages.py) and clang-format.
# Ends with one line "tests: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --deps-only --test-deps || exit 1

jobs=$(nproc)
fuzz_seconds=${VLBIAS_FUZZ_SECONDS:-10}
passed=0
failed=0

# Runs ctest in $1 and adds its counts to the totals.
run_ctest() {
  local dir=$1 log
  log=$(mktemp)
  (cd "$dir" && ctest --output-on-failure -j "$jobs") 2>&1 | tee "$log" | grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "test: no ctest summary in $dir"
    failed=$((failed + 1))
  else
    local total fails
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    fails=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
    passed=$((passed + total - fails))
    failed=$((failed + fails))
  fi
  rm -f "$log"
}

build() {  # build DIR [cmake args...]; $targets (optional) limits what is built
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null && cmake --build "$dir" -j "$jobs" ${targets:+--target $targets}
}

echo "== Structure and formatting (${SECONDS}s)"
# The stage graph, private headers, namespaces and size limits (DEVELOPERS.md, Stages).
if /usr/bin/python3 scripts/check_stages.py .; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# Every C++ file as .clang-format wants it (fix with: clang-format -i FILE).
mapfile -t cxx_files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find src include tests bench fuzz python -name '*.cpp' -o -name '*.h')
if clang-format --dry-run -Werror "${cxx_files[@]}" 2>&1 | head -n 40 | grep .; then
  echo "format: the files above differ from .clang-format"
  failed=$((failed + 1))
else
  echo "format: ${#cxx_files[@]} files ok"
  passed=$((passed + 1))
fi

echo "== Release build and tests (${SECONDS}s)"
if build build -DCMAKE_BUILD_TYPE=Release; then run_ctest build; else failed=$((failed + 1)); fi

echo "== Python bindings (pytest against build/python) (${SECONDS}s)"
# Counts pytest's passed and failed tests like ctest's.
log=$(mktemp)
# Debian's interpreter: the one with python3-pytest/-numpy/-scipy and the module's ABI.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" -m pytest -q -p no:cacheprovider tests/python 2>&1 | tee "$log" | tail -n 30
line=$(grep -E '^=* ?[0-9]+ (passed|failed|errors?|skipped)' "$log" | tail -n 1)
if [ -z "$line" ]; then echo "pytest: no summary"; failed=$((failed + 1)); fi
for n in $(grep -Eo '[0-9]+ passed' <<<"$line" | grep -Eo '^[0-9]+'); do passed=$((passed + n)); done
for n in $(grep -Eo '[0-9]+ (failed|errors?)' <<<"$line" | grep -Eo '^[0-9]+'); do failed=$((failed + n)); done
rm -f "$log"

echo "== ASan+UBSan build (clang, with libFuzzer's coverage) and tests (${SECONDS}s)"
# One clang build serves the sanitised tests and the fuzzers (VLBIAS_FUZZ instruments every
# library for libFuzzer; the tests link without its main): one build instead of two. -O1 keeps
# both fast; line tables let a report name file and line.
sanitizer_flags="-O1 -gline-tables-only"
if CC=clang CXX=clang++ build build-asan -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_C_FLAGS_DEBUG=$sanitizer_flags" "-DCMAKE_CXX_FLAGS_DEBUG=$sanitizer_flags" \
    -DVLBIAS_SANITIZE=ON -DVLBIAS_FUZZ=ON -DVLBIAS_BENCH=OFF; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan
  asan_built=1
else
  failed=$((failed + 1))
  asan_built=0
fi

echo "== libFuzzer (${fuzz_seconds}s per parser) (${SECONDS}s)"
if [ "$asan_built" -eq 1 ]; then
  # One fuzzer per core at a time; each writes its verdict to its own file, read in name order.
  verdicts=$(mktemp -d)
  started=0
  for fuzzer in build-asan/fuzz/fuzz_*; do
    [ -x "$fuzzer" ] || continue
    started=$((started + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    name=$(basename "$fuzzer")
    (
      corpus_seed="fuzz/corpus/${name#fuzz_}"
      work=$(mktemp -d)
      [ -d "$corpus_seed" ] && cp -r "$corpus_seed"/. "$work"/
      if "$fuzzer" -max_total_time="$fuzz_seconds" -rss_limit_mb=2048 -print_final_stats=0 \
          "$work" >"$work.log" 2>&1; then
        echo "fuzz $name: ok ($(grep -Eo 'Done [0-9]+ runs' "$work.log" | tail -n1))" >"$verdicts/$name.ok"
      else
        { echo "fuzz $name: FAILED"; tail -n 40 "$work.log"; } >"$verdicts/$name.failed"
      fi
      rm -rf "$work" "$work.log"
    ) &
  done
  wait
  for verdict in "$verdicts"/*; do
    [ -e "$verdict" ] || continue
    cat "$verdict"
    case "$verdict" in
      *.ok) passed=$((passed + 1)) ;;
      *) failed=$((failed + 1)) ;;
    esac
  done
  if [ "$started" -eq 0 ] || [ "$(ls "$verdicts" | wc -l)" -ne "$started" ]; then
    echo "fuzz: $started fuzzers started, $(ls "$verdicts" | wc -l) verdicts"
    failed=$((failed + 1))
  fi
  rm -rf "$verdicts"
else
  echo "fuzz: not run (the sanitizer build failed)"
fi

echo "== Done in ${SECONDS}s"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
