#!/usr/bin/env bash
# The peers benchmark (BENCHMARKS.md, issue 14): python-blosc2 4.14.1, b2nd, the `blosc2` crate
# 0.2.3 and `blosc2-pure-rs` 0.2.4 on the same files, in one run, with the same threads:
# whole read, 10-item slice, a box of a quarter of every dimension, write; threads 1 and 2;
# peak RSS (`/usr/bin/time -f %M`) of each measurement's own process. A read whose checksum
# differs from python-blosc2's, or that fails, is reported as what that peer cannot read.
# Every write's output is read back by python-blosc2 and compared with the source, and its
# size on disk recorded (scripts/bench_check_write.py); the report flags a write that differs
# or whose size is more than 2 % from python-blosc2's.
#
# usage: scripts/bench_peers.sh [FILES_DIR] [OUT.jsonl]
#   FILES_DIR: made by scripts/bench_make_files.py (default /tmp/b2nd-bench-files)
# Environment: PYTHON (with scripts/requirements.txt), REPS=3, SLOW_REPS=1 (blosc2-pure-rs,
# 20-150x slower), THREADS="1 2", IMPLS="python b2nd blosc2 pure", OPS="read slice box write",
# ROUNDS=2 (the whole matrix again, implementations in reverse order; the report keeps each
# measurement's best round), PURE_ROUNDS=1 (rounds that include blosc2-pure-rs).
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
ROUNDS=${ROUNDS:-2}
PURE_ROUNDS=${PURE_ROUNDS:-1}
NAMES=${NAMES:-"f8_2d.b2nd i4_3d_lz4.b2nd f4_1d_bytedelta.b2nd u_strings.b2nd sparse_f8.b2nd walk_f8_3d.b2nd i8_2d_bitshuffle_lz4.b2nd u2_3d_bytedelta.b2nd f4_1d_blosclz.b2nd"}
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PEERS_TARGET=${PEERS_TARGET:-$ROOT/target/peers}
cargo build --release --example bench_peer_op >&2
(cd bench/peers && CARGO_TARGET_DIR="$PEERS_TARGET" cargo build --release >&2)
TARGET=$(cargo metadata --format-version 1 --no-deps |
    "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
: > "$OUT"
for round in $(seq 1 "$ROUNDS"); do
impls=$IMPLS
[ $((round % 2)) -eq 0 ] && impls=$(echo "$IMPLS" | tr ' ' '\n' | tac | tr '\n' ' ')
for name in $NAMES; do
  for op in $OPS; do
    for t in $THREADS; do
      for impl in $impls; do
        reps=$REPS
        env=()
        case $impl in
          # c-blosc2 3.x (python-blosc2) and 2.21 (the blosc2 crate) take their threads from
          # BLOSC_NTHREADS; b2nd's c-blosc2 2.15 would too, over what b2nd asks for, so b2nd
          # and blosc2-pure-rs run without it and take T from their APIs.
          python) cmd=("$PYTHON" scripts/bench_peer_op.py); env=(BLOSC_NTHREADS=$t) ;;
          b2nd) cmd=("$TARGET/release/examples/bench_peer_op") ;;
          blosc2) cmd=("$PEERS_TARGET/release/b2nd-bench-peers"); env=(BLOSC_NTHREADS=$t) ;;
          pure) cmd=("$PEERS_TARGET/release/b2nd-bench-peers"); reps=$SLOW_REPS
                [ "$round" -le "$PURE_ROUNDS" ] || continue ;;
        esac
        line=$(env -u BLOSC_NTHREADS "${env[@]}" /usr/bin/time -f "RSS %M" -o /tmp/bench_peers.time \
            "${cmd[@]}" "$impl" "$op" "$DIR/$name" --manifest "$DIR/manifest.json" \
            --threads "$t" --reps "$reps" 2>/tmp/bench_peers.err || true)
        [ -n "$line" ] || line='{"ok": false, "error": "crashed: '"$(tail -c 300 /tmp/bench_peers.err | tr -d '"\\\n')"'"}'
        rss=$(grep -o 'RSS [0-9]*' /tmp/bench_peers.time | cut -d' ' -f2 || echo 0)
        if [ "$op" = write ]; then
            # The write's output, read back by python-blosc2 and compared with the source.
            base=${name%.b2nd}
            case $impl in
              python) out="$DIR/$name.python.peerwrite" ;;
              *) out="$DIR/$base.$impl.peerwrite" ;;
            esac
            if [ -e "$out" ]; then
                check=$("$PYTHON" scripts/bench_check_write.py "$DIR/$name" "$out")
                rm -rf "$out"
            else
                check='{"same": false, "error": "no output"}'
            fi
            line=$("$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); d["check"]=json.loads(sys.argv[2]); print(json.dumps(d))' "$line" "$check")
        fi
        "$PYTHON" -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(file=sys.argv[2], op=sys.argv[3], threads=int(sys.argv[4]), impl=sys.argv[5], rss_kib=int(sys.argv[6] or 0), reps=int(sys.argv[7]), round=int(sys.argv[8])); print(json.dumps(d))' \
            "$line" "$name" "$op" "$t" "$impl" "${rss:-0}" "$reps" "$round" | tee -a "$OUT" >&2
      done
    done
  done
done
done
echo "$OUT"
