#!/usr/bin/env bash
# In-place changes of two builds, before/after: append 300 rows of 1 MiB one at a time
# (chunks of 8 rows, python-blosc2's empty array), compact the result, overwrite a
# 400 x 1000 box of f8_2d.b2nd; 3 rounds alternating; one JSON line per run.
#
# usage: scripts/bench_before_after_inplace.sh BASE_RELEASE_DIR NEW_RELEASE_DIR FILES_DIR WORK PYTHON
set -euo pipefail
BASE=$1; NEW=$2; FILES=$3; W=$4; PY=$5
rm -rf "$W"; mkdir -p "$W"
"$PY" -c "
import blosc2
blosc2.zeros((0, 131072), dtype='<f8', urlpath='$W/empty.b2nd', mode='w', chunks=(8, 131072), blocks=(1, 32768))"
for round in 1 2 3; do
  for side in base new; do
    if [ $side = base ]; then B=$BASE/examples/bench_inplace; else B=$NEW/examples/bench_inplace; fi
    cp "$W/empty.b2nd" "$W/a.b2nd"
    echo "{\"side\":\"$side\",\"op\":\"append\",\"r\":$("$B" append "$W/a.b2nd" 300 131072 2)}"
    echo "{\"side\":\"$side\",\"op\":\"compact\",\"r\":$("$B" compact "$W/a.b2nd")}"
    cp "$FILES/f8_2d.b2nd" "$W/o.b2nd"
    echo "{\"side\":\"$side\",\"op\":\"overwrite\",\"r\":$("$B" overwrite "$W/o.b2nd" 1000 1400 500 1500 2)}"
  done
done
