#!/bin/sh
# Runs libFuzzer harnesses for a while each and reports what they found.
#   sh tests/fuzz/run.sh BUILD SECONDS HARNESS...      (make fuzz / make fuzz-check)
# For each harness: BUILD/fuzz_<h> in fork mode (a crash, leak, timeout or out-of-memory input
# is saved and the run goes on, so one run reports every finding it reaches) over the corpus
# BUILD/corpus/<h> (grown run after run) and the seeds BUILD/seeds/<h>. Prints
#   fuzz_<h>: N executions in S s, F findings
# and, per finding, its artifact BUILD/artifacts/<h>/<kind>-<sha1>, replayed once so that
# <artifact>.log holds the sanitizer's (or the harness's FUZZ FINDING) report, and that
# report's one-line summary. Exit status 1 if anything was found (or a harness did not run).
# Environment: FUZZ_JOBS (parallel fuzzing processes per harness, default 1),
# FUZZ_TIMEOUT (seconds an input may take before it counts as a hang, default 10; 60 for the
# option harness, whose inputs build and train whole layers under ASan: a loaded machine
# took 30 s for a legal TransformerEncoderLayer with dim_feedforward=90155).
B=$1; S=$2; shift 2
[ -n "$B" ] && [ -n "$S" ] && [ $# -gt 0 ] || { echo "usage: $0 BUILD SECONDS HARNESS..." >&2; exit 2; }
JOBS=${FUZZ_JOBS:-1}
status=0; all=""
for h in "$@"; do
    bin=$B/fuzz_$h; corpus=$B/corpus/$h; seeds=$B/seeds/$h; art=$B/artifacts/$h; log=$B/logs/$h.log
    mkdir -p "$corpus" "$art" "$B/logs"
    if [ ! -x "$bin" ]; then echo "fuzz_$h: not built ($bin)"; status=1; continue; fi
    # a reader of a file must never allocate far more than the file holds: a 256 MiB
    # allocation from a few KiB of input is a finding; the option texts may ask for large
    # tensors legitimately, so there only ASan's cap (64 MiB, returned as NULL) applies
    # (onnx: loading runs the model once on zero inputs of the shapes it declares)
    case $h in options|onnx) mem="-rss_limit_mb=2048 -malloc_limit_mb=2048"; TO=${FUZZ_TIMEOUT:-60} ;;
               *) mem="-rss_limit_mb=2048 -malloc_limit_mb=256"; TO=${FUZZ_TIMEOUT:-10} ;; esac
    stamp=$B/logs/$h.start; touch "$stamp"; sleep 1
    start=$(date +%s)
    "$bin" -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$S" -timeout="$TO" $mem \
        -artifact_prefix="$art/" "$corpus" "$seeds" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    execs=$(grep -oE '^#[0-9]+:' "$log" | tail -n 1 | tr -d '#:')
    found=$(find "$art" -type f -newer "$stamp" ! -name '*.log' | sort)
    n=0; [ -n "$found" ] && n=$(echo "$found" | wc -l)
    distinct=""
    for a in $found; do
        "$bin" -timeout="$TO" $mem "$a" >"$a.log" 2>&1
        why=$(grep -m1 -E '^FUZZ FINDING:|^SUMMARY:|ERROR: libFuzzer: (timeout|out-of-memory)' "$a.log" | cut -c1-220)
        [ -n "$why" ] || why="(no report on replay: flaky or environment-dependent; see $log)"
        distinct="$distinct
$why"
        all="$all
  fuzz_$h: $a
      $why"
    done
    # distinct: the same report line once the details that vary per input are gone (the
    # library's error message after "(error:", byte positions, scratch file names, hashes)
    d=0; [ -n "$distinct" ] && d=$(echo "$distinct" | sed '/^$/d' | sed 's/ (error: .*//; s/ at byte [0-9]*//; s/tn_fuzz_[0-9]*_//g; s/[0-9a-f]\{40\}//' | sort -u | wc -l)
    echo "fuzz_$h: ${execs:-0} executions in $secs s, $n findings ($d distinct)"
    if [ "$rc" -ne 0 ]; then echo "fuzz_$h: libFuzzer exited $rc; the last lines of $log:"; tail -n 5 "$log"; status=1; fi
    [ "$n" -eq 0 ] || status=1
done
if [ -n "$all" ]; then
    echo "findings (reproduce: BUILD/fuzz_<harness> ARTIFACT; the report is ARTIFACT.log):$all"
fi
exit $status
