#!/usr/bin/env bash
# Fill fuzz/corpus/<target> with seeds from the committed fixtures (frames, stores, tables,
# .npy headers, dtype strings). usage: bash scripts/fuzz_seeds.sh
set -euo pipefail
cd "$(dirname "$0")/.."
C=fuzz/corpus
mkdir -p "$C/frame_read" "$C/slice_read" "$C/parsers" "$C/store_open" "$C/roundtrip" \
    "$C/sparse_read" "$C/inplace"
for f in tests/data/*.b2nd; do
    [ -f "$f" ] || continue
    n=$(basename "$f")
    cp "$f" "$C/frame_read/$n"
    { printf '\x01\x00\x05\x02\x01\x01\x06\x01\x00\x03\x00\x00\x01\x00\x02\x01'; cat "$f"; } > "$C/slice_read/$n"
    # In-place: a region write, a resize and an attribute edit of each frame.
    for op in '\x00\x01\x02\x03\x04\x05\x06\x07' '\x01\x03\x01\x02\x00\x03\x01\x02' '\x02\x07\x00\x00\x00\x00\x00\x00'; do
        { printf "$op"; cat "$f"; } > "$C/inplace/${n}_$(printf "$op" | head -c1 | od -An -tu1 | tr -d ' ')"
    done
done
# Sparse frames: chunks.b2frame, then the chunk files by id, each after its u32 LE length.
for d in tests/data/*.b2nd/ tests/data/slices/*.b2nd/; do
    [ -f "$d/chunks.b2frame" ] || continue
    python3 - "$d" "$C/sparse_read/$(basename "$d")" <<'PY'
import os, struct, sys
d, out = sys.argv[1], sys.argv[2]
names = sorted(f for f in os.listdir(d) if f.endswith(".chunk"))
parts = [open(os.path.join(d, "chunks.b2frame"), "rb").read()]
ids = [int(f[:-6], 16) for f in names]
for i in range(max(ids) + 1 if ids else 0):
    f = os.path.join(d, "%08X.chunk" % i)
    parts.append(open(f, "rb").read() if os.path.exists(f) else b"")
open(out, "wb").write(b"".join(struct.pack("<I", len(p)) + p for p in parts))
PY
done
for f in tests/data/stores/*.b2z tests/data/stores/*.b2e tests/data/tables/*.b2z; do
    [ -f "$f" ] || continue
    n=$(basename "$f")
    case "$n" in *.b2e) p='\x01' ;; *) p='\x00' ;; esac
    { printf "$p"; cat "$f"; } > "$C/store_open/$n"
done
i=0
for s in '<i4' '>f8' '|S5' '<U3' "[('a', '<i2'), ('b', '<f8', (2, 3))]" '<M8[s]' '|V7'; do
    { printf '\x02'; printf '%s' "$s"; } > "$C/parsers/dtype_$i"; i=$((i + 1))
done
for f in tests/data/inplace/*.npy; do
    { printf '\x04'; head -c 128 "$f"; } > "$C/parsers/npy_$(basename "$f")"
done
printf '\x03\x83\xa1a\x01\xa1b\x92\xc3\xc0\xa1c\xcb\x3f\xf0\x00\x00\x00\x00\x00\x00' > "$C/parsers/msgpack_map"
printf '\x03\x00\x00\x02\x01\x01\x03\x00\x01\x00\x05\x0b\x01\x02\x03\x04\x05\x06\x07\x08' > "$C/roundtrip/seed_0"
echo "seeds: $(find "$C" -type f | wc -l) files in $C"
