#!/usr/bin/env bash
# Before/after benchmark of two builds of b2nd on the same files (the refactor issue's rule:
# nothing slower beyond noise): the bench example of each build, alternating, 3 rounds.
#
# usage: scripts/bench_before_after.sh BASE_RELEASE_DIR NEW_RELEASE_DIR FILES_DIR OUT_DIR
#   *_RELEASE_DIR: a target/release holding b2nd and examples/bench of that build
#   (cargo build --release --bin b2nd --example bench --example bench_inplace);
#   FILES_DIR: python scripts/bench_make_files.py FILES_DIR --scale 0.25
# Then: python3 scripts/bench_before_after_report.py OUT_DIR (best of all rounds per side).
set -euo pipefail
BASE=$1; NEW=$2; D=$3; OUT=$4; mkdir -p "$OUT"
for round in 1 2 3; do
  for side in base new; do
    if [ $side = base ]; then B=$BASE; else B=$NEW; fi
    "$B/examples/bench" "$D" --threads 2 --reps 10 --slice-reps 300 --write-reps 6 --npy-reps 5 \
      --b2nd "$B/b2nd" --json "$OUT/${side}_$round.json" > "$OUT/${side}_$round.txt" 2>&1
    echo "$side round $round done"
  done
done
