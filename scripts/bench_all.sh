#!/usr/bin/env bash
# Benchmark b2nd against python-blosc2 on a suite of realistic files (see BENCHMARKS.md).
#
# usage: scripts/bench_all.sh [OUTDIR]        (default OUTDIR: /tmp/b2nd-bench-files)
#
# Environment:
#   PYTHON=python3       a Python with scripts/requirements.txt installed (python-blosc2 4.14.1)
#   THREADS=2            threads on both sides
#   ROUNDS=2             rounds over the suite; each metric keeps its best value
#   QUIET_BUSY=15        before each run, wait until the CPUs are less than this % busy...
#   QUIET_WAIT=300       ...for at most this many seconds (other load skews the numbers)
#   PY_ARGS, RS_ARGS     extra arguments for scripts/bench_python.py / the bench example
#
# Builds the release binary and the bench example, makes the files if absent (about 2 GB
# in OUTDIR, 1.5 GB on disk), runs python-blosc2 and b2nd file by file, alternating, and
# writes OUTDIR/results-DATE/tables.md (BENCHMARKS.md-ready) plus the raw JSON.
# Delete OUTDIR afterwards: rm -rf OUTDIR.
set -euo pipefail

OUTDIR=${1:-/tmp/b2nd-bench-files}
PYTHON=${PYTHON:-python3}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-2}
QUIET_BUSY=${QUIET_BUSY:-15}
QUIET_WAIT=${QUIET_WAIT:-300}
NAMES="f8_2d.b2nd i4_3d_lz4.b2nd f4_1d_bytedelta.b2nd u_strings.b2nd sparse_f8.b2nd"

cd "$(dirname "$0")/.."
ROOT=$(pwd)

echo "== build" >&2
cargo build --release --bin b2nd --example bench >&2
TARGET=$(cargo metadata --format-version 1 --no-deps |
    "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
BENCH="$TARGET/release/examples/bench"
B2ND="$TARGET/release/b2nd"

mkdir -p "$OUTDIR"
missing=0
for n in $NAMES; do [ -e "$OUTDIR/$n" ] || missing=1; done
[ -e "$OUTDIR/manifest.json" ] || missing=1
if [ $missing = 1 ]; then
    echo "== making the files in $OUTDIR" >&2
    "$PYTHON" scripts/bench_make_files.py "$OUTDIR" >/dev/null
fi

RES="$OUTDIR/results-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RES"

{
    echo "date (UTC)      $(date -u '+%Y-%m-%d %H:%M')"
    echo "commit          $(git -C "$ROOT" rev-parse --short HEAD) ($(git -C "$ROOT" rev-parse --abbrev-ref HEAD))$(git -C "$ROOT" diff --quiet HEAD -- src Cargo.toml || echo ', src modified')"
    echo "nproc           $(nproc)"
    echo "cpu             $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "memory          $(grep MemTotal /proc/meminfo | awk '{printf "%.1f GiB", $2/1048576}')"
    echo "THP enabled     $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo n/a)"
    echo "THP defrag      $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo n/a)"
    echo "kernel          $(uname -r)"
    echo "rustc           $(rustc --version)"
    echo "python          $("$PYTHON" -c 'import sys, blosc2, numpy; print(sys.version.split()[0], "blosc2", blosc2.__version__, "numpy", numpy.__version__)')"
    echo "files in        $OUTDIR ($(df -T "$OUTDIR" | awk 'NR==2 {print $2}'))"
} > "$RES/machine.txt"
cat "$RES/machine.txt" >&2

# Busy percentage of all CPUs over one second, from /proc/stat.
busy() {
    local a b
    a=($(head -1 /proc/stat))
    sleep 1
    b=($(head -1 /proc/stat))
    local idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
    local total=0 i
    for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
    echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}

wait_quiet() {
    local what=$1 waited=0 b
    b=$(busy)
    while [ "$b" -ge "$QUIET_BUSY" ] && [ "$waited" -lt "$QUIET_WAIT" ]; do
        sleep 4
        waited=$((waited + 5))
        b=$(busy)
    done
    echo "$(date -u +%H:%M:%S) $what: cpu ${b}% busy after waiting ${waited}s, load $(cut -d' ' -f1-3 /proc/loadavg)" |
        tee -a "$RES/quiet.log" >&2
}

for round in $(seq 1 "$ROUNDS"); do
    for n in $NAMES; do
        wait_quiet "round $round python $n"
        "$PYTHON" scripts/bench_python.py "$OUTDIR" --threads "$THREADS" --only "$n" \
            --json "$RES/python-$n-$round.json" ${PY_ARGS:-} >/dev/null
        wait_quiet "round $round b2nd   $n"
        "$BENCH" "$OUTDIR" --threads "$THREADS" --only "$n" --b2nd "$B2ND" \
            --json "$RES/b2nd-$n-$round.json" ${RS_ARGS:-} >/dev/null
    done
done

"$PYTHON" scripts/bench_report.py "$RES" --manifest "$OUTDIR/manifest.json" > "$RES/tables.md"
cat "$RES/tables.md"
echo "== tables: $RES/tables.md" >&2
