#!/usr/bin/env bash
# The peers benchmark (BENCHMARKS.md, issue 14): python-blosc2 4.14.1, b2nd, the `blosc2` crate
# 0.2.3 and `blosc2-pure-rs` 0.2.4 on the same files, in one run, with the same threads:
# whole read, 10-item slice, a box of a quarter of every dimension, write; threads 1 and 2;
# peak RSS (`/usr/bin/time -f %M`) of each measurement's own process. A read whose checksum
# differs from python-blosc2's, or that fails, is reported as what that peer cannot read.
#
# usage: scripts/bench_peers.sh [FILES_DIR] [OUT.jsonl]
#   FILES_DIR: made by scripts/bench_make_files.py (default /tmp/b2nd-bench-files)
# Environment: PYTHON (with scripts/requirements.txt), REPS=3, SLOW_REPS=1 (blosc2-pure-rs,
# 20-40x slower), THREADS="1 2", IMPLS="python b2nd blosc2 pure", OPS="read slice box write".
# Needs cmake and libclang (the `blosc2` crate builds c-blosc2 2.21.3 with CMake and bindgen):
# `apt-get install cmake libclang-dev clang`; b2nd itself never does.
# Report: python3 scripts/bench_peers_report.py OUT.jsonl
set -euo pipefail
DIR=${1:-/tmp/b2nd-bench-files}
OUT=${2:-$DIR/peers.jsonl}
PYTHON=${PYTHON:-python3}
REPS=${REPS:-3}
SLOW_REPS=${SLOW_REPS:-1}
THREADS=${THREADS:-"1 2"}
IMPLS=${IMPLS:-"python b2nd blosc2 pure"}
OPS=${OPS:-"read slice box write"}
NAMES=${NAMES:-"f8_2d.b2nd i4_3d_lz4.b2nd f4_1d_bytedelta.b2nd u_strings.b2nd sparse_f8.b2nd"}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PEERS_TARGET=${PEERS_TARGET:-$ROOT/target/peers}
cargo build --release --example bench_peer_op >&2
(cd bench/peers && CARGO_TARGET_DIR="$PEERS_TARGET" cargo build --release >&2)
TARGET=$(cargo metadata --format-version 1 --no-deps |
    "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
: > "$OUT"
for name in $NAMES; do
  for op in $OPS; do
    for t in $THREADS; do
      for impl in $IMPLS; do
        reps=$REPS
        case $impl in
          python) cmd=("$PYTHON" scripts/bench_peer_op.py) ;;
          b2nd) cmd=("$TARGET/release/examples/bench_peer_op") ;;
          blosc2) cmd=("$PEERS_TARGET/release/b2nd-bench-peers") ;;
          pure) cmd=("$PEERS_TARGET/release/b2nd-bench-peers"); reps=$SLOW_REPS ;;
        esac
        # c-blosc2 (python-blosc2's and the blosc2 crate's) takes its threads from here too.
        line=$(BLOSC_NTHREADS=$t /usr/bin/time -f "RSS %M" -o /tmp/bench_peers.time \
            "${cmd[@]}" "$impl" "$op" "$DIR/$name" --manifest "$DIR/manifest.json" \
            --threads "$t" --reps "$reps" 2>/tmp/bench_peers.err || true)
        [ -n "$line" ] || line='{"ok": false, "error": "crashed: '"$(tail -c 300 /tmp/bench_peers.err | tr -d '"\\\n')"'"}'
        rss=$(grep -o 'RSS [0-9]*' /tmp/bench_peers.time | cut -d' ' -f2 || echo 0)
        "$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(file=sys.argv[2], op=sys.argv[3], threads=int(sys.argv[4]), impl=sys.argv[5], rss_kib=int(sys.argv[6] or 0), reps=int(sys.argv[7])); print(json.dumps(d))' \
            "$line" "$name" "$op" "$t" "$impl" "${rss:-0}" "$reps" | tee -a "$OUT" >&2
      done
    done
  done
done
echo "$OUT"
