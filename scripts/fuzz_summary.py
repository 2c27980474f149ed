"""Per-target totals of the fuzz runs logged by scripts/fuzz_run.sh, as a Markdown table.

usage: python3 scripts/fuzz_summary.py [--since EPOCH_SECONDS]

Reads fuzz/logs/TARGET.START.log (START: the run's start, seconds since the epoch; --since
keeps the runs that started then or later). Per run: libFuzzer's last status line
(executions, coverage, features, corpus, oom/timeout/crash counts, seconds) and the
`cpu_seconds U user S sys` line /usr/bin/time appends; CPU time is user + sys.
"""

import argparse
import collections
import pathlib
import re

STATUS = re.compile(
    r"^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+).*"
    r"oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s"
)
CPU = re.compile(r"cpu_seconds ([\d.]+) user ([\d.]+) sys")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--since", type=int, default=0)
    args = ap.parse_args()
    logs = pathlib.Path(__file__).resolve().parent.parent / "fuzz" / "logs"
    tot = collections.defaultdict(lambda: collections.Counter())
    running = collections.Counter()
    for f in sorted(logs.glob("*.log")):
        target, start = f.name.split(".")[:2]
        if int(start) < args.since:
            continue
        text = f.read_text(errors="replace")
        status = [m for m in map(STATUS.match, text.splitlines()) if m]
        if not status:
            continue
        m = status[-1]
        d = tot[target]
        d["runs"] += 1
        d["execs"] += int(m.group(1))
        for k, g in (("cov", 2), ("ft", 3), ("corp", 4)):
            d[k] = max(d[k], int(m.group(g)))
        for k, g in (("oom", 5), ("timeout", 6), ("crash", 7), ("wall", 8)):
            d[k] += int(m.group(g))
        c = CPU.search(text)
        if c:
            d["cpu"] += float(c.group(1)) + float(c.group(2))
        else:
            running[target] += int(m.group(8))
    print("| target | runs | CPU s (user+sys) | wall s | executions | coverage (edges) "
          "| features | corpus | oom/timeout/crash |")
    print("|---|---|---|---|---|---|---|---|---|")
    total = 0.0
    for t, d in sorted(tot.items()):
        total += d["cpu"]
        more = f" (+{running[t]} s running)" if running[t] else ""
        print(f"| `{t}` | {d['runs']} | {d['cpu']:.0f}{more} | {d['wall']} | {d['execs']:,} "
              f"| {d['cov']:,} | {d['ft']:,} | {d['corp']:,} "
              f"| {d['oom']}/{d['timeout']}/{d['crash']} |")
    print(f"Total: {total:.0f} CPU-seconds = {total / 3600:.2f} CPU-hours")


if __name__ == "__main__":
    main()
