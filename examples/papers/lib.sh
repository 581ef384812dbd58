# shellcheck shell=bash
# Resumable steps for the paper recipes (examples/papers/*/run.sh source this file).
#
#   OUT_DIR=runs/004
#   step NAME --in PATH... --out PATH... -- COMMAND [ARG...]
#
# runs COMMAND unless OUT_DIR/.steps/NAME.sha256 holds the SHA-256 of the command line and the
# content of every --in path (a file by its bytes, a folder by the sorted list of its files'
# relative paths and their hashes) and every --out path exists. Content, never timestamps: a
# touched but unchanged input skips the step, an edited one reruns it (and the steps that read
# its outputs, whose content then changes). The stamp is removed before the command runs and
# written only after it succeeded, so a failed or killed step runs again; the command sees the
# digest as $STEP_DIGEST (resume_or_fresh uses it). Safe under
# `set -euo pipefail`; paths may hold spaces. COMMAND should be a program: a shell function
# runs without `set -e` here, so it must check its own commands.

# Prints the SHA-256 of a file's bytes, or of a folder's sorted list of (relative path, file
# hash). Folders are hashed again by every step that reads them (no memo): a folder edited
# between two steps of one run must not pass for its old content.
_step_hash_path() (
  set -o pipefail  # an unreadable file fails the hash, even where the caller did not ask
  local path=$1
  if [[ -d $path ]]; then
    # -L: a linked file or folder counts by what it points to. LC_ALL=C: the same order on
    # every machine. sha256sum escapes names with newlines or backslashes, so the list is
    # unambiguous.
    cd -- "$path" && find -L . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum -- |
      sha256sum | cut -d' ' -f1
  else
    sha256sum -- "$path" | cut -d' ' -f1
  fi
)

step() {
  local name=$1
  shift
  [[ -n ${OUT_DIR:-} ]] || { echo "step $name: OUT_DIR is not set" >&2; return 2; }
  local -a inputs=() outputs=()
  local mode=""
  while (($#)); do
    case $1 in
      --in | --out) mode=${1#--}; shift ;;
      --) shift; break ;;
      *)
        [[ -n $mode ]] || { echo "step $name: expected --in, --out or -- before '$1'" >&2; return 2; }
        if [[ $mode == in ]]; then inputs+=("$1"); else outputs+=("$1"); fi
        shift ;;
    esac
  done
  (($#)) || { echo "step $name: no command after --" >&2; return 2; }

  # %q quotes each argument, so ("a b") and ("a" "b") differ.
  local manifest path hash
  manifest="command$(printf ' %q' "$@")"$'\n'
  for path in ${inputs[@]+"${inputs[@]}"}; do
    [[ -e $path ]] || { echo "step $name: input '$path' does not exist" >&2; return 2; }
    hash=$(_step_hash_path "$path") || { echo "step $name: could not read '$path'" >&2; return 2; }
    manifest+="input $(printf '%q' "$path") $hash"$'\n'
  done
  local digest
  digest=$(printf '%s' "$manifest" | sha256sum | cut -d' ' -f1)

  local stamp="$OUT_DIR/.steps/$name.sha256"
  local complete=1
  for path in ${outputs[@]+"${outputs[@]}"}; do
    [[ -e $path ]] || complete=0
  done
  if ((complete)) && [[ -f $stamp ]] && [[ $(<"$stamp") == "$digest" ]]; then
    echo "step $name: up to date"
    return 0
  fi
  echo "step $name: running"
  mkdir -p -- "$OUT_DIR/.steps"
  rm -f -- "$stamp"
  local rc=0
  # STEP_DIGEST tells a command which inputs it runs for (e.g. whether a resumable run folder
  # left by an interrupted attempt was started for the same inputs: resume_or_fresh).
  STEP_DIGEST=$digest "$@" || rc=$?
  if ((rc != 0)); then
    echo "step $name: failed (exit $rc)" >&2
    return "$rc"
  fi
  for path in ${outputs[@]+"${outputs[@]}"}; do
    [[ -e $path ]] || { echo "step $name: the command did not write '$path'" >&2; return 1; }
  done
  printf '%s\n' "$digest" >"$stamp.tmp"
  mv -f -- "$stamp.tmp" "$stamp"
}

# Prints the vlbias executable the recipe runs: $VLBIAS when set, else `vlbias` on PATH, else
# REPO_ROOT/build/vlbias (the developer build).
find_vlbias() {
  local repo_root=$1 found
  if [[ -n ${VLBIAS:-} ]]; then
    found=$VLBIAS
  elif found=$(command -v vlbias); then
    :
  else
    found=$repo_root/build/vlbias
  fi
  [[ -x $found ]] || {
    echo "no vlbias executable at '$found': set VLBIAS=/path/to/vlbias or put vlbias on PATH" >&2
    return 2
  }
  printf '%s\n' "$found"
}

# Copies SRC to DST unless DST already holds the same bytes (a recipe's own files, copied next
# to the step outputs that they name by relative path).
copy_if_changed() {
  if ! cmp -s -- "$1" "$2"; then
    cp -- "$1" "$2.tmp" && mv -f -- "$2.tmp" "$2"
  fi
}

# For a step whose command fills a resumable run folder (`vlbias generate`, `vlbias score`):
# succeeds (0) when RUN_DIR was started by an attempt of this step with the same inputs and
# command ($STEP_DIGEST, kept in RUN_DIR.inputs), so the command can continue it (--resume)
# and send only what is missing; otherwise removes RUN_DIR, records the digest and fails (1),
# so the command starts afresh: a run folder never mixes answers for two versions of a step's
# inputs.
resume_or_fresh() {
  local run_dir=$1
  [[ -n ${STEP_DIGEST:-} ]] || { echo "resume_or_fresh: call it from a step's command" >&2; return 2; }
  if [[ -d $run_dir && -f $run_dir.inputs && $(<"$run_dir.inputs") == "$STEP_DIGEST" ]]; then
    return 0
  fi
  rm -rf -- "$run_dir"
  printf '%s\n' "$STEP_DIGEST" >"$run_dir.inputs"
  return 1
}

# Writes standard input to DST unless DST already holds the same bytes (a spec run.sh fills in
# from its arguments: rewritten only when they change, so the steps reading it stay current).
write_if_changed() {
  cat >"$1.new" || return
  if cmp -s -- "$1.new" "$1"; then
    rm -f -- "$1.new"
  else
    mv -f -- "$1.new" "$1"
  fi
}

# Prints TEXT as a double-quoted YAML scalar (\ and " escaped), for the specs run.sh writes.
yaml_quote() {
  local text=${1//\\/\\\\}
  printf '"%s"' "${text//\"/\\\"}"
}

# A step's command for `VLBIAS generate KIND SPEC --out RUN [ARG...]` (t2i, lvlm, llm; ARGs such
# as --concurrency N are passed on): requests cost
# time and money, so an interrupted or partly failed run of the same step (the same command
# line and inputs: resume_or_fresh) continues with --resume --retry-failed and sends only what
# is missing; a run left by other inputs (another prompt table, spec or endpoint) is removed
# first, since its requests are not this step's. Fails when every request failed.
generate_run() {
  local vlbias=$1 kind=$2 spec=$3 run=$4
  shift 4
  local -a resume=()
  if resume_or_fresh "$run"; then
    if [[ -f $run/store.sqlite ]]; then
      resume=(--resume --retry-failed)
    else
      rm -rf -- "$run" || return  # stopped before its store existed: nothing to continue
    fi
  fi
  # The run's JSON summary goes to stderr, beside the progress: stdout lists the steps. A run
  # whose every request failed fails the step (check_requests).
  "$vlbias" generate "$kind" "$spec" --out "$run" "$@" ${resume[@]+"${resume[@]}"} >&2 &&
    check_requests "$run"
}

# Succeeds when URL is an http(s) URL without spaces, quotes or backslashes (the recipes write
# URLs into YAML and comments).
check_url() {
  [[ $1 =~ ^https?://[^[:space:]\"\\]+$ ]]
}

# Prints URL with PATH appended to its path, before its query and fragment (RFC 3986, 3.3: the
# path ends at the first ? or #): url_join 'http://h:8000/v1/?api-version=2' /chat/completions
# prints http://h:8000/v1/chat/completions?api-version=2. A path that already ends in PATH is
# kept as it is.
url_join() {
  local url=$1 path=$2 rest=""
  if [[ $url =~ ^([^?#]*)([?#].*)$ ]]; then
    url=${BASH_REMATCH[1]}
    rest=${BASH_REMATCH[2]}
  fi
  url=${url%/}
  [[ $url == *"$path" ]] || url+=$path
  printf '%s%s\n' "$url" "$rest"
}

# Prints URL without its fragment and with every query value replaced by [redacted] (a
# parameter without '=' counts whole), as vlbias redacts them: the form a recipe may write.
redacted_url() {
  local url=${1%%#*} out sep='?' param
  if [[ $url != *\?* ]]; then
    printf '%s\n' "$url"
    return 0
  fi
  out=${url%%\?*}
  local -a params=()
  IFS='&' read -r -a params <<<"${url#*\?}"
  for param in ${params[@]+"${params[@]}"}; do
    [[ -n $param ]] || continue
    if [[ $param == *=* ]]; then out+="$sep${param%%=*}=[redacted]"; else out+="$sep[redacted]"; fi
    sep='&'
  done
  printf '%s\n' "$out"
}

# The endpoint URL as a spec's entry: `url: "URL"`, or, when URL has a query (which may hold a
# key: ?key=, ?api-key=), `url_env: VAR`, so that no file the recipe writes holds a query value;
# the recipe exports VAR=URL for the commands it runs (vlbias reads endpoint.url_env with the
# spec: docs/specs.md). Flow or block style alike.
url_entry() {
  if [[ $1 == *\?* ]]; then
    printf 'url_env: %s' "$2"
  else
    printf 'url: %s' "$(yaml_quote "$1")"
  fi
}

# A comment line for a spec whose URL url_entry keeps in VAR: the URL with its query values
# redacted (a new host or path still changes the spec, so its steps run again). Nothing for a
# URL without a query.
url_note() {
  if [[ $1 == *\?* ]]; then
    printf '# endpoint: %s (the URL itself is read from $%s when the recipe runs)\n' \
      "$(redacted_url "$1")" "$2"
  fi
}

# After a request step (`vlbias generate`, `vlbias score judge`/perspective/moderation): fails
# (1) naming the first error when RUN_DIR's requests.jsonl has requests and every one failed. A
# wrong URL, model or key fails every request; vlbias records them and exits 0 (a resumed run
# retries them), and the steps after it would turn nothing into empty tables. A run with some
# answers passes (vlbias warns about the failed ones).
check_requests() {
  local rows=$1/requests.jsonl total failed first
  [[ -f $rows ]] || return 0
  # Every row starts {"key":"...","status":"..." and ends with "error":"..."}
  # (RunStore::export_jsonl, src/generate/run_store.cpp).
  local failed_row='^\{"key":"([^"\\]|\\.)*","status":"failed",'
  total=$(grep -c '' -- "$rows") || true
  failed=$(grep -E -c -- "$failed_row" "$rows") || true
  ((total > 0 && failed == total)) || return 0
  first=$(grep -E -m1 -- "$failed_row" "$rows" | grep -E -o '"error":"([^"\\]|\\.)*"\}$') || true
  first=${first#\"error\":}
  echo "every one of the $total requests of $1 failed (the first: ${first%\}});" \
    "check the endpoint URL, the model and the API key. $rows lists them; running the recipe" \
    "again retries them." >&2
  return 1
}
