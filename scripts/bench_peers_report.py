#!/usr/bin/env python3
"""Markdown tables from scripts/bench_peers.sh's JSON lines.

Usage: bench_peers_report.py OUT.jsonl

Per file, operation and thread count (the best of the rounds): each implementation's result (read/write MiB/s of the
logical bytes, higher is better; slice/box microseconds, lower is better), b2nd's ratio to each
peer (> 1: b2nd faster), and the peak RSS (MiB) of each measurement's process. Then what each
peer could not do: failures, and reads whose checksum differs from python-blosc2's.
"""
import json
import sys

IMPLS = ["python", "b2nd", "blosc2", "pure"]
LABEL = {"python": "python-blosc2", "b2nd": "b2nd", "blosc2": "blosc2 crate", "pure": "blosc2-pure-rs"}


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    # Each measurement's best round (a failure only when every round failed).
    by = {}
    for r in rows:
        k = (r["file"], r["op"], r["threads"], r["impl"])
        old = by.get(k)
        if old is None or (r.get("ok") and not old.get("ok")):
            by[k] = r
        elif r.get("ok") and old.get("ok") and r["seconds"] < old["seconds"]:
            by[k] = r
    files = list(dict.fromkeys(r["file"] for r in rows))
    ops = list(dict.fromkeys(r["op"] for r in rows))
    threads = sorted({r["threads"] for r in rows})
    problems = []
    sizes = []
    for op in ops:
        speed = op in ("read", "write")
        unit = "MiB/s" if speed else "us"
        print(f"\n**{op}** ({unit}; ratio = b2nd's speed over the peer's; RSS MiB in brackets)\n")
        print("| file | T | " + " | ".join(LABEL[i] for i in IMPLS) + " | b2nd / python | b2nd / blosc2 crate | b2nd / pure-rs |")
        print("|---|---|" + "---|" * (len(IMPLS) + 3))
        for f in files:
            for t in threads:
                cells, val = [], {}
                for i in IMPLS:
                    r = by.get((f, op, t, i))
                    if r is None:
                        cells.append("")
                        continue
                    if not r.get("ok"):
                        cells.append("fails")
                        problems.append((i, f, op, t, r.get("error", "")[:200]))
                        continue
                    v = r["mibs"] if speed else r["seconds"] * 1e6
                    val[i] = v
                    ref = by.get((f, op, t, "python"))
                    wrong = (op != "write" and ref and ref.get("ok") and i != "python"
                             and r.get("sum") != ref.get("sum"))
                    if wrong:
                        problems.append((i, f, op, t, "returned other bytes than python-blosc2 (checksum)"))
                    note = ""
                    if op == "write" and "check" in r:  # (runs before the checks have none)
                        # Read back by python-blosc2 and compared; size against python-blosc2's.
                        c = r.get("check") or {}
                        rc = (ref or {}).get("check") or {}
                        if not c.get("same"):
                            wrong = True
                            problems.append((i, f, op, t, "wrote another array: " + c.get("error", "other bytes")))
                        elif not c.get("params"):
                            problems.append((i, f, op, t, "wrote other chunks, blocks, codec or filters"))
                        if c.get("disk_bytes") and rc.get("disk_bytes"):
                            d = c["disk_bytes"] / rc["disk_bytes"] - 1
                            sizes.append((f, t, i, c["disk_bytes"], d))
                            if abs(d) > 0.02:
                                note = f" size {d:+.1%}"
                                problems.append((i, f, op, t, f"{c['disk_bytes']} bytes on disk, {d:+.1%} from python-blosc2's"))
                    cells.append(f"{v:.0f}{' WRONG' if wrong else ''}{note} ({r['rss_kib'] / 1024:.0f})")
                ratios = []
                for p in ("python", "blosc2", "pure"):
                    if "b2nd" in val and p in val:
                        x = val["b2nd"] / val[p] if speed else val[p] / val["b2nd"]
                        ratios.append(f"{x:.2f}x")
                    else:
                        ratios.append("")
                print(f"| {f.removesuffix('.b2nd')} | {t} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
    if sizes:
        print("\n**Writes checked** (read back by python-blosc2 4.14.1 and compared with the "
              "source; bytes on disk, and the difference from python-blosc2's)\n")
        print("| file | T | " + " | ".join(LABEL[i] for i in IMPLS) + " |")
        print("|---|---|" + "---|" * len(IMPLS))
        for f in files:
            for t in threads:
                row = {i: (n, d) for (ff, tt, i, n, d) in sizes if ff == f and tt == t}
                if row:
                    print(f"| {f.removesuffix('.b2nd')} | {t} | " + " | ".join(
                        f"{row[i][0]:,} ({row[i][1]:+.2%})" if i in row else "" for i in IMPLS) + " |")
    print("\n**What each implementation could not do**\n")
    if not problems:
        print("Nothing: every read matched python-blosc2's bytes.")
    seen = set()
    for i, f, op, t, e in problems:
        key = (i, f, op, e)
        if key in seen:
            continue
        seen.add(key)
        print(f"- {LABEL[i]}, {f}, {op}: {e}")


if __name__ == "__main__":
    main()
