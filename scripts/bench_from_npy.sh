#!/usr/bin/env bash
# `b2nd from-npy` end to end against python-blosc2's `np.load` + `blosc2.asarray`,
# on the same .npy inputs with the same chunks, blocks, codec, level, filters and threads.
#
# usage: scripts/bench_from_npy.sh [FILES_DIR] [OUT.jsonl]
#   FILES_DIR: made by scripts/bench_make_files.py (its manifest.json gives the parameters);
#   each NAME.b2nd is exported once to NAME.npy beside it (by python-blosc2).
# Environment: PYTHON (with scripts/requirements.txt), REPS=3 (best of), THREADS="1 2",
# NAMES (default: the four write files and f8_2d).
# b2nd's time is its whole process (start-up, reading the .npy, writing, syncing the file);
# python's is the time inside the interpreter from `np.load` to the end of `asarray` (its
# start-up and imports left out, in python's favour; `process_seconds` has its whole process
# too). Both outputs are read back by
# python-blosc2 and compared with the source (scripts/bench_check_write.py).
set -euo pipefail
DIR=${1:-/tmp/b2nd-bench-files}
OUT=${2:-$DIR/from_npy.jsonl}
PYTHON=${PYTHON:-python3}
REPS=${REPS:-3}
THREADS=${THREADS:-"1 2"}
NAMES=${NAMES:-"walk_f8_3d.b2nd i8_2d_bitshuffle_lz4.b2nd u2_3d_bytedelta.b2nd f4_1d_blosclz.b2nd f8_2d.b2nd"}
cd "$(dirname "$0")/.."
cargo build --release -p b2nd-cli >&2
B2ND=$(cargo metadata --format-version 1 --no-deps |
    "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/b2nd
# python's side: the time from np.load to the end of asarray, printed by the process.
PYWRITE='
import sys, time, os
import blosc2, numpy as np
src, npy, out, t = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
a = blosc2.open(src)
cp = a.schunk.cparams
cp.nthreads = t
if os.path.exists(out):
    os.remove(out)
t0 = time.perf_counter()
x = np.load(npy)
blosc2.asarray(x, urlpath=out, mode="w", chunks=a.chunks, blocks=a.blocks, cparams=cp)
print(time.perf_counter() - t0)
'
: > "$OUT"
for name in $NAMES; do
  src="$DIR/$name"
  npy="$DIR/${name%.b2nd}.npy"
  [ -e "$npy" ] || "$PYTHON" -c 'import blosc2, numpy as np, sys; np.save(sys.argv[2], blosc2.open(sys.argv[1])[...])' "$src" "$npy"
  # chunks, blocks, codec, clevel, filters (b2nd's syntax) from the manifest.
  read -r chunks blocks codec clevel filters nbytes < <("$PYTHON" - "$DIR/manifest.json" "$name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["files"][sys.argv[2]]
names = {"SHUFFLE": "shuffle", "BITSHUFFLE": "bitshuffle", "BYTEDELTA": "bytedelta", "DELTA": "delta"}
fs = [names[f] + (f":{m['filters_meta'][i]}" if f == "SHUFFLE" and m["filters_meta"][i] else "")
      for i, f in enumerate(m["filters"]) if f != "NOFILTER"]
fs = [f for f in fs if not f.startswith("bytedelta")] + [f for f in fs if f.startswith("bytedelta")]
print(",".join(map(str, m["chunks"])), ",".join(map(str, m["blocks"])), m["codec"].lower(),
      m["clevel"], ",".join(fs) or "none", m["nbytes"])
PY
)
  for t in $THREADS; do
    for impl in python b2nd; do
      best=""
      procbest=""
      for r in $(seq 1 "$REPS"); do
        if [ $impl = b2nd ]; then
          out="$DIR/${name%.b2nd}.fromnpy.b2nd"
          s=$("$PYTHON" -c 'import subprocess, sys, time; t = time.perf_counter(); subprocess.run(sys.argv[1:], check=True); print(time.perf_counter() - t)' \
              "$B2ND" from-npy "$npy" "$out" --chunks "$chunks" --blocks "$blocks" --codec "$codec" \
              --clevel "$clevel" --filters "$filters" --threads "$t" --force)
        else
          out="$DIR/${name%.b2nd}.fromnpy.python.b2nd"
          s=$(BLOSC_NTHREADS=$t "$PYTHON" -c 'import subprocess, sys, time; t = time.perf_counter(); r = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True); print(r.stdout.strip() + " " + str(time.perf_counter() - t))' \
              "$PYTHON" -c "$PYWRITE" "$src" "$npy" "$out" "$t")
          proc=${s#* }; s=${s% *}
          procbest=$("$PYTHON" -c 'import sys; v=[float(x) for x in sys.argv[1:] if x]; print(min(v))' $procbest $proc)
        fi
        best=$("$PYTHON" -c 'import sys; v=[float(x) for x in sys.argv[1:] if x]; print(min(v))' $best $s)
      done
      check=$("$PYTHON" scripts/bench_check_write.py "$src" "$out")
      rm -rf "$out"
      line=$("$PYTHON" -c 'import json,sys; print(json.dumps({"file": sys.argv[1], "threads": int(sys.argv[2]), "impl": sys.argv[3], "seconds": float(sys.argv[4]), "mibs": int(sys.argv[5]) / 2**20 / float(sys.argv[4]), "check": json.loads(sys.argv[6]), "process_seconds": float(sys.argv[7] or sys.argv[4])}))' \
          "$name" "$t" "$impl" "$best" "$nbytes" "$check" "$procbest")
      echo "$line" | tee -a "$OUT" >&2
    done
  done
done
echo "$OUT"
