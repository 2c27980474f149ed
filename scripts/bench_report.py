#!/usr/bin/env python3
"""Turn the JSON of bench_python.py and examples/bench.rs into BENCHMARKS.md-ready tables.

Usage: bench_report.py RESULTS_DIR [--manifest OUTDIR/manifest.json]

RESULTS_DIR holds python-*.json and b2nd-*.json (one or more runs each, e.g. one per file and
round, as scripts/bench_all.sh writes them) and optionally machine.txt and quiet.log. For
every file and metric the best value over all runs is used (highest MiB/s, lowest time).
Prints Markdown.
"""

import argparse
import glob
import json
import math
import os

ORDER = ["f8_2d.b2nd", "i4_3d_lz4.b2nd", "f4_1d_bytedelta.b2nd", "u_strings.b2nd", "sparse_f8.b2nd"]
MIB = 1 << 20


def merge(paths):
    """{file: {metric: best value}} over several JSON result files."""
    out = {}
    meta = {}
    allv = {}
    for p in sorted(paths):
        with open(p) as f:
            d = json.load(f)
        for k, v in d.items():
            if k != "files":
                meta.setdefault(k, v)
        for name, r in d["files"].items():
            cur = out.setdefault(name, {})
            for k, v in r.items():
                if k.endswith("_mibs"):
                    allv.setdefault(name, {}).setdefault(k, []).append(v)
                if k not in cur or not isinstance(v, (int, float)) or isinstance(v, bool):
                    cur.setdefault(k, v)
                    continue
                if k.endswith("_mibs"):
                    cur[k] = max(cur[k], v)
                elif k.endswith("_s") or k.endswith("_us"):
                    cur[k] = min(cur[k], v)
    return out, meta, allv


def fmt(x, nd=0):
    if x is None:
        return "n/a"
    if isinstance(x, str):
        return x
    return f"{x:,.{nd}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def gmean(xs):
    xs = [x for x in xs if x]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def table(head, rows):
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("--manifest")
    args = ap.parse_args()
    py, pymeta, pyall = merge(glob.glob(os.path.join(args.results, "python-*.json")))
    rs, rsmeta, rsall = merge(glob.glob(os.path.join(args.results, "b2nd-*.json")))
    man = {}
    if args.manifest and os.path.exists(args.manifest):
        with open(args.manifest) as f:
            man = json.load(f)
    names = [n for n in ORDER if n in rs or n in py] + sorted((set(rs) | set(py)) - set(ORDER))
    out = []

    mtxt = os.path.join(args.results, "machine.txt")
    if os.path.exists(mtxt):
        out.append("### Machine\n\n```\n" + open(mtxt).read().strip() + "\n```\n")
    threads = rsmeta.get("threads", pymeta.get("threads"))
    out.append(f"Threads: {threads} on both sides. python-blosc2 {pymeta.get('python_blosc2')} "
               f"(c-blosc2 {str(pymeta.get('c_blosc2', '')).split(' ')[0]}), NumPy "
               f"{pymeta.get('numpy')}; b2nd links c-blosc2 2.15 (blosc2-src 0.1.4). "
               "Best of all repetitions and rounds. MiB/s are of the logical (uncompressed) "
               "bytes; files are in the page cache (warm).\n")

    if man.get("files"):
        rows = []
        for n in names:
            m = man["files"].get(n)
            if not m:
                continue
            filt = [f"{f}({mm})" if mm else f for f, mm in zip(m["filters"], m["filters_meta"])
                    if f != "NOFILTER"]
            rows.append([f"`{n}`", "x".join(map(str, m["shape"])), m["dtype"],
                         "x".join(map(str, m["chunks"])), "x".join(map(str, m["blocks"])),
                         str(m["nchunks"]), f"{m['codec'].lower()} {'+'.join(filt).lower()}",
                         "contiguous" if m["contiguous"] else "sparse",
                         fmt(m["nbytes"] / MIB), fmt(m["ratio"], 2)])
        out.append("### Files\n\n" + table(
            ["file", "shape", "dtype", "chunks", "blocks", "nchunks", "codec + filters",
             "frame", "MiB", "ratio"], rows) + "\n")

    rows = []
    r_py, r_bound, r_bound_full = [], [], []
    for n in names:
        r, p = rs.get(n, {}), py.get(n, {})
        b = r.get("read_mibs")
        pr = p.get("read_mibs")
        bd = r.get("bound_mibs")
        kind = r.get("bound_kind")
        rp, rb = ratio(b, pr), ratio(b, bd)
        r_py.append(rp)
        r_bound.append(rb)
        if kind == "full":
            r_bound_full.append(rb)
        co = "" if kind == "full" else " (codec-only)"
        rows.append([f"`{n}`", fmt(b), fmt(r.get("read_reused_mibs")), fmt(pr),
                     fmt(bd) + co, fmt(r.get("bound_thp_mibs")) + co,
                     fmt(rp, 2), fmt(rb, 2)])
    rows.append(["**geometric mean**", "", "", "", "", "", fmt(gmean(r_py), 2),
                 fmt(gmean(r_bound), 2) + f" (full-bound files only: {fmt(gmean(r_bound_full), 2)})"])
    out.append("### Whole-array read (MiB/s)\n\n" + table(
        ["file", "b2nd read (fresh buffer)", "b2nd read (reused buffer)", "python-blosc2 read",
         "decode bound", "decode bound (THP buffer)", "b2nd / python", "b2nd / bound"], rows)
        + "\n")
    out.append(
        "b2nd read = `Array::open` + `vec![0u8; nbytes]` + `read_bytes_into`; python = "
        "`blosc2.open(p)[...]`. Decode bound = c-blosc2 alone decompressing every chunk into "
        "its own slot of a fresh nchunks x chunksize buffer, same threads, no scatter into C "
        "order; its buffer is a `Vec` like b2nd's (4 KiB pages when THP is `madvise`); the "
        "THP variant decodes into a `MADV_HUGEPAGE` mapping instead, as NumPy's allocations "
        "are. *codec-only*: the linked c-blosc2 2.15 cannot undo the file's filters "
        "(BYTEDELTA; SHUFFLE with byte-group meta 4 for `<U`), so the bound decodes a copy of "
        "each chunk with the filter bytes cleared: the codec cost without the filters, which "
        "b2nd undoes in Rust. Such a bound is not reachable by a reader that must also undo "
        "the filters.\n")

    def spread(d, n, k):
        v = d.get(n, {}).get(k, [])
        return f"{fmt(min(v))} – {fmt(max(v))}" if v else "n/a"

    rows = []
    for n in names:
        rows.append([f"`{n}`", spread(rsall, n, "read_mibs"), spread(rsall, n, "read_reused_mibs"),
                     spread(pyall, n, "read_mibs"), spread(rsall, n, "bound_mibs"),
                     spread(rsall, n, "bound_thp_mibs"),
                     spread(rsall, n, "write_mibs"), spread(pyall, n, "write_mibs")])
    out.append("Run-to-run spread (best of each run, lowest – highest over the rounds), MiB/s:\n\n"
               + table(["file", "b2nd read", "b2nd read (reused)", "python read",
                        "decode bound", "bound (THP)", "b2nd write", "python write"], rows) + "\n")

    rows = []
    for n in names:
        r, p = rs.get(n, {}), py.get(n, {})
        rows.append([f"`{n}`", fmt(r.get("read_mibs")), fmt(r.get("read_thp_mibs")),
                     fmt(r.get("touch_mibs")), fmt(r.get("huge_kib_after_read")),
                     fmt(r.get("huge_kib_after_read_thp")), fmt(p.get("huge_kib_after_read")),
                     fmt(r.get("open_s", 0) * 1e3, 2) if r.get("open_s") is not None else "n/a"])
    out.append("### Where the read time goes (diagnostics)\n\n" + table(
        ["file", "b2nd read (MiB/s)", "b2nd read into MADV_HUGEPAGE buffer (MiB/s)",
         "fault-in + fill a fresh buffer (MiB/s)", "AnonHugePages after b2nd read (KiB)",
         "… after THP read (KiB)", "… after python read (KiB)", "Array::open (ms)"], rows)
        + "\n")

    rows = []
    for n in names:
        r, p = rs.get(n, {}), py.get(n, {})
        rows.append([f"`{n}`", fmt(r.get("npy_devnull_mibs")), fmt(r.get("npy_stdout_mibs")),
                     fmt(r.get("npy_shm_mibs")), fmt(r.get("npy_disk_mibs")),
                     fmt(r.get("read_mibs")), fmt(p.get("read_mibs"))])
    out.append("### `b2nd to-npy` end to end (MiB/s, wall time of the process)\n\n" + table(
        ["file", "to /dev/null", "to stdout (`-`)", "to /dev/shm file", "to disk file (fsync)",
         "b2nd read", "python read"], rows) + "\n")
    if not rsmeta.get("npy_devnull_supported", True):
        out.append("`/dev/null` was not measured: the binary renames a temporary file over its "
                   "output (unsafe for devices).\n")
    if not rsmeta.get("npy_stdout_supported", False):
        out.append("`-` (stdout) is not supported by this binary yet: n/a.\n")

    rows = []
    for n in names:
        r, p = rs.get(n, {}), py.get(n, {})
        rows.append([f"`{n}`", str(r.get("slice_start", p.get("slice_start"))),
                     fmt(r.get("slice_us"), 1), fmt(p.get("slice_us"), 1),
                     fmt(ratio(r.get("slice_us"), p.get("slice_us")), 1)])
    out.append("### Small slice: 10 items from the middle (µs, best of many)\n\n" + table(
        ["file", "start", "b2nd `read_slice_bytes_into`", "python `arr[...]`",
         "b2nd time / python time"], rows) + "\n")

    rows = []
    for n in names:
        r, p = rs.get(n, {}), py.get(n, {})
        rows.append([f"`{n}`", fmt(r.get("write_mibs")), fmt(p.get("write_mibs")),
                     fmt(ratio(r.get("write_mibs"), p.get("write_mibs")), 2),
                     fmt(r.get("write_cbytes", 0) / MIB, 1) if r.get("write_cbytes") else "n/a",
                     fmt(p.get("write_cbytes", 0) / MIB, 1) if p.get("write_cbytes") else "n/a",
                     r.get("write_filters_note", "n/a")])
    out.append("### Whole-array write (MiB/s)\n\n" + table(
        ["file", "b2nd `ArrayBuilder`", "python `blosc2.asarray`", "b2nd / python",
         "b2nd MiB written", "python MiB written", "b2nd filters vs the file's"], rows) + "\n")

    qlog = os.path.join(args.results, "quiet.log")
    if os.path.exists(qlog):
        out.append("### Machine load before each run\n\n```\n" + open(qlog).read().strip()
                   + "\n```\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
