#!/usr/bin/env bash
# The README's test command. Installs dependencies, then:
#   1. Release build (g++: the vlbias command, the Python module, the benchmarks) and pytest;
#   2. clang ASan+UBSan build with libFuzzer's coverage, which compiles the tests once and links
#      them twice: every test runs against the Release build (build/) and again under the
#      sanitizers (build-asan/) (the parsers' hostile-input tests matter most there);
#   3. from the same build, each parser fuzzed briefly from its seed corpus;
# before them, the structure check (scripts/check_stages.py) and clang-format.
# Ends with one line "tests: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fuzz_seconds=${VLBIAS_FUZZ_SECONDS:-10}
passed=0
failed=0

# Each phase's seconds, printed as a table at the end: the CI budget per phase is in
# bench/ci_budget.md (compare with it before adding to a phase).
phase_names=()
phase_seconds=()
phase_started=$SECONDS
phase() {  # phase NAME: ends the running phase and starts NAME
  if [ ${#phase_names[@]} -gt 0 ]; then
    phase_seconds+=($((SECONDS - phase_started)))
  fi
  phase_started=$SECONDS
  [ -n "${1:-}" ] || return 0
  phase_names+=("$1")
  echo "== $1 (${SECONDS}s)"
}

phase "Dependencies (apt-get)"
bash scripts/setup.sh --deps-only --test-deps || exit 1

# One test process more than cores: about an eighth of the suites' time is spent waiting (on
# servers, child processes, Slurm, the kernel) rather than computing, and a third process fills
# it: both suites 505 -> 444 s wall on 2 cores (bench/ci_budget.md).
test_jobs=$((jobs + 1))

# Runs ctest in $1 and adds its counts to the totals.
run_ctest() {
  local dir=$1 log
  log=$(mktemp)
  rm -rf "$dir/gtest-xml"
  (cd "$dir" && ctest --output-on-failure -j "$test_jobs") 2>&1 | tee "$log" | grep -vE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed' || true
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
  # With VLBIAS_TESTS_PER_SUITE each ctest test is a googletest suite, which wrote its results
  # to gtest-xml/: count the tests inside them (a suite that crashed wrote none, and failed above).
  if [ -d "$dir/gtest-xml" ]; then
    local suites cases case_failures
    suites=$(find "$dir/gtest-xml" -name '*.xml' | wc -l)
    cases=$(cat "$dir"/gtest-xml/*.xml | grep -c '<testcase ' || true)
    case_failures=$(cat "$dir"/gtest-xml/*.xml | grep -c '<failure ' || true)
    echo "googletest: $cases tests in $suites suites, $case_failures failures"
  fi
  rm -f "$log"
}

build() {  # build DIR [cmake args...]; $targets (optional) limits what is built
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null && cmake --build "$dir" -j "$jobs" ${targets:+--target $targets}
}

phase "Structure and formatting"
# The stage graph, private headers, namespaces and size limits (DEVELOPERS.md, Stages).
if /usr/bin/python3 scripts/check_stages.py .; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
# Every C++ file as .clang-format wants it (fix with: clang-format -i FILE).
mapfile -t cxx_files < <(git ls-files '*.cpp' '*.h' 2>/dev/null || find src include tests bench fuzz python -name '*.cpp' -o -name '*.h')
# The output decides, not the pipeline's status: under pipefail, clang-format's own exit status
# (1 for a difference) made the pipeline fail and the check pass.
format_report=$(clang-format --dry-run -Werror "${cxx_files[@]}" 2>&1)
if [ -n "$format_report" ]; then
  printf '%s\n' "$format_report" | head -n 40
  echo "format: the files above differ from .clang-format"
  failed=$((failed + 1))
else
  echo "format: ${#cxx_files[@]} files ok"
  passed=$((passed + 1))
fi

phase "Release build of vlbias and the Python module (what scripts/setup.sh builds)"
# The tests are compiled once, in the sanitizer build below, and linked against this build's
# libraries there too (tests/CMakeLists.txt, VLBIAS_RELEASE_DIR).
release_built=0
if targets="vlbias _vlbias" build build -DCMAKE_BUILD_TYPE=Release -DVLBIAS_TESTS=OFF; then
  release_built=1
  phase "Release build of the benchmarks"
  build build || failed=$((failed + 1))
else
  failed=$((failed + 1))
fi

phase "Python bindings (pytest against build/python)"
if [ "$release_built" -eq 1 ]; then
  # README's Python line, exactly as written there, from the build just made.
  if PYTHONPATH=build/python python3 -c "import vlbias"; then
    echo "python: README's import line works"
    passed=$((passed + 1))
  else
    echo "python: PYTHONPATH=build/python python3 -c \"import vlbias\" failed"
    failed=$((failed + 1))
  fi
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
fi

phase "Sanitizer build (clang ASan+UBSan with libFuzzer's coverage; the tests, compiled once)"
# One clang build serves the sanitised tests, the Release suite and the fuzzers (VLBIAS_FUZZ
# gives the fuzzed stages libFuzzer's coverage; the tests link without its main). -O1 keeps the
# libraries fast; line tables let a report name file and line. With VLBIAS_RELEASE_DIR the test
# objects are linked a second time, against build/'s libraries: release_test_<stage>, whose
# tests (named "release.*") run the Release libraries and the Release vlbias.
sanitizer_flags="-O1 -gline-tables-only"
release_dir=()
[ "$release_built" -eq 1 ] && release_dir=("-DVLBIAS_RELEASE_DIR=$PWD/build")
if CC=clang CXX=clang++ build build-asan -DCMAKE_BUILD_TYPE=Debug \
    "-DCMAKE_C_FLAGS_DEBUG=$sanitizer_flags" "-DCMAKE_CXX_FLAGS_DEBUG=$sanitizer_flags" \
    -DVLBIAS_SANITIZE=ON -DVLBIAS_FUZZ=ON -DVLBIAS_BENCH=OFF -DVLBIAS_TESTS_PER_SUITE=ON \
    "${release_dir[@]}"; then
  asan_built=1
  phase "Tests: the Release suite and the ASan+UBSan suite"
  # malloc_context_size=5: allocation stacks of 5 frames in a report instead of 30 (detection is
  # the same; the allocation-heavy tests run about a sixth faster).
  ASAN_OPTIONS=detect_leaks=1:malloc_context_size=5 UBSAN_OPTIONS=print_stacktrace=1 run_ctest build-asan
else
  failed=$((failed + 1))
  asan_built=0
fi

phase "libFuzzer (${fuzz_seconds}s per parser)"
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

phase ""
echo "== Done in ${SECONDS}s"
for i in "${!phase_names[@]}"; do
  printf 'phase %6ss  %s\n' "${phase_seconds[$i]}" "${phase_names[$i]}"
done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
