#!/bin/bash
# b2nd's filter kernels against c-blosc2 2.15's, same binary: B2ND_SIMD=sse2 keeps the Rust
# kernels off the read path (c-blosc2 undoes SHUFFLE / BITSHUFFLE with its SSE2 code, as
# before the kernels existed), B2ND_SIMD=avx2 (the default on an AVX2 CPU) lets c-blosc2 run
# the codec only and the per-block hook undo the filters.
#
# usage: scripts/bench_simd_ab.sh DIR NAME... (NAME = a file of DIR without .b2nd)
# env: ROUNDS (2), MODES ("sse2 avx2"), TS (threads, "1 2"), BENCH (examples/bench binary)
# Build first: cargo build --release --example bench
set -euo pipefail
DIR=$1
shift
BENCH=${BENCH:-target/release/examples/bench}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
for r in $(seq 1 "${ROUNDS:-2}"); do
  for f in "$@"; do
    for mode in ${MODES:-sse2 avx2}; do
      for T in ${TS:-1 2}; do
        B2ND_SIMD=$mode "$BENCH" "$DIR" --only "$f.b2nd" --threads "$T" --no-npy --no-write \
          --reps 4 --json "$OUT" > /dev/null 2>&1
        python3 - "$OUT" "$f" "$mode" "$T" "$r" <<'PY'
import json, sys
out, f, mode, t, r = sys.argv[1:]
v = next(iter(json.load(open(out))["files"].values()))
print("round %s %-18s %-5s T=%s read %6.0f reused %6.0f slice %6.1f us"
      % (r, f, mode, t, v["read_mibs"], v["read_reused_mibs"], v["slice_us"]))
PY
      done
    done
  done
done
