#!/usr/bin/env bash
# Slices and streaming, measured: a 200-million-item <f8 array (1.6 GB) written by
# python-blosc2 (default codec, explicit chunks/blocks: 200 chunks x 100 blocks), then
#   - the whole-array read time, in process (examples/slice_bench.rs) and `b2nd to-npy FILE /dev/null`,
#   - 10-item slices with b2nd (in process and through the CLI) and with python-blosc2,
#   - peak RSS of `b2nd to-npy FILE /dev/null` (and of a slice conversion).
#
# usage: scripts/bench_slices.sh [PYTHON]   (PYTHON: a python with blosc2 4.14.1, default
#        /tmp/venv-b2/bin/python). The array goes to ${BENCH_DIR:-/tmp/b2nd-bench}, never into
#        the repository; it is reused when present.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${1:-/tmp/venv-b2/bin/python}"
DIR="${BENCH_DIR:-/tmp/b2nd-bench}"
BIG="$DIR/big_f8.b2nd"
TARGET="${CARGO_TARGET_DIR:-target}"
SPECS=("123456789:123456799" "::20000000")
mkdir -p "$DIR"

if ! [ -x /usr/bin/time ]; then
    apt-get update -qq && apt-get install -y -qq --no-install-recommends time
fi

echo "=== machine"
nproc; grep -m1 "model name" /proc/cpuinfo || true
free -g | head -2
"$PY" -c 'import blosc2, numpy; print("python-blosc2", blosc2.__version__, "numpy", numpy.__version__)'

echo "=== create $BIG (once)"
if ! [ -e "$BIG" ]; then
    "$PY" - "$BIG" <<'PYEOF'
import sys, time
import numpy as np
import blosc2
path = sys.argv[1]
n, chunk, block = 200_000_000, 1_000_000, 10_000
t = time.perf_counter()
a = blosc2.empty((n,), dtype="<f8", chunks=(chunk,), blocks=(block,), urlpath=path, mode="w")
for i in range(0, n, chunk):
    x = np.arange(i, i + chunk, dtype="<f8")
    a[i:i + chunk] = np.round(np.sin(x / 1000.0) * 1000.0, 3)   # smooth, not trivially compressible
print(f"written in {time.perf_counter() - t:.1f} s: {a.schunk.nchunks} chunks, "
      f"cratio {a.schunk.cratio:.2f}, codec {a.schunk.cparams.codec.name}")
PYEOF
fi
ls -l "$BIG"

echo "=== build (release)"
cargo build --release --bin b2nd --example slice_bench 2>&1 | tail -1
B2ND="$TARGET/release/b2nd"

echo "=== b2nd in process (examples/slice_bench.rs)"
"$TARGET/release/examples/slice_bench" "$BIG" "${SPECS[@]}"

echo "=== b2nd CLI: whole array to /dev/null (wall time, peak RSS)"
for _ in 1 2; do
    /usr/bin/time -f "to-npy whole: %e s wall, %M KiB max RSS" "$B2ND" to-npy "$BIG" /dev/null
done
echo "=== b2nd CLI: 10-item slices (whole process: start, open, read, write .npy; mean of 20)"
for spec in "${SPECS[@]}"; do
    t0=$(date +%s%N)
    for _ in $(seq 20); do
        "$B2ND" to-npy --force "$BIG" "$DIR/slice.npy" --slice "$spec"
    done
    t1=$(date +%s%N)
    echo "to-npy --slice $spec: $(( (t1 - t0) / 20000 )) us per run"
    /usr/bin/time -f "to-npy --slice $spec: %M KiB max RSS" \
        "$B2ND" to-npy --force "$BIG" "$DIR/slice.npy" --slice "$spec"
done
"$PY" -c "import numpy as np; print('last slice:', np.load('$DIR/slice.npy'))"

echo "=== python-blosc2: the same slices (open + arr[key], median of 21) and a whole read"
"$PY" - "$BIG" "${SPECS[@]}" <<'PYEOF'
import statistics, sys, time
import numpy as np
import blosc2
path, specs = sys.argv[1], sys.argv[2:]
def key(spec):
    return tuple(slice(*[int(p) if p else None for p in s.split(":")]) if ":" in s else int(s)
                 for s in spec.split(","))
t = time.perf_counter(); full = blosc2.open(path)[...]; tf = time.perf_counter() - t
print(f"python-blosc2 whole read: {tf:.3f} s ({blosc2.nthreads} threads)")
for spec in specs:
    times = []
    for _ in range(21):
        t = time.perf_counter()
        got = blosc2.open(path)[key(spec)]
        times.append(time.perf_counter() - t)
    assert np.array_equal(got, full[key(spec)])
    print(f"python-blosc2 slice {spec:>22} -> {got.shape}: open+read median "
          f"{statistics.median(times) * 1e3:.2f} ms, best {min(times) * 1e3:.2f} ms")
PYEOF
