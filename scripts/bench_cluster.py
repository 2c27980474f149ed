"""SQL over many CTables as one table: one process against a Ballista cluster of one and of
two executors (b2nd-scheduler, b2nd-executor), side by side in one run.

usage: bench_cluster.py BIN_DIR WORKDIR [ROWS] [FILES] [QUERIES]
       (default 20000000 rows in 8 files; QUERIES: comma-separated names)

BIN_DIR holds release builds of `b2nd` (the CLI with the `cluster` feature), `b2nd-scheduler`
and `b2nd-executor`:
    cargo build --release -p b2nd-ballista --bins -p b2nd-cli --features b2nd-cli/cluster
WORKDIR gets (made once, kept) `part-0.b2z` ... `part-{FILES-1}.b2z`, CTables python-blosc2
4.14.1 writes with its defaults, ROWS rows in all, the columns of bench_sql.py's table (id
i8 running on across the files, x f8 log-normal, q i4 0..999, flag bool, cat an 8-character
string of 5 values, ts i8 rising: bench_sql.py's `write_table`), queried as
`t=WORKDIR/part-*.b2z`.

Layouts, each with 2 task slots in all but the first cluster one (the machine's cores):
`one process` (`b2nd sql`, 2 partitions), `1 executor x 1 slot`, `1 executor x 2 slots`,
`2 executors x 1 slot`. Each cell: RUNS runs of the whole `b2nd sql` process (a cluster run
includes the client's planning, the scheduler's stages and the executors' shuffles), the
median (and best) wall time; the same answer checked across layouts (floats to 1e-9
relative: a cluster adds sums in another order). The tasks each executor
ran for a query come from its log (`RUST_LOG=info`, one "Execute task" line a task:
[TID job/stage.attempt/partition.attempt]).
"""

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__

RUNS = 3

sys.path.insert(0, str(Path(__file__).parent))
from bench_sql import QUERIES as SQL_QUERIES  # noqa: E402
from bench_sql import write_table  # noqa: E402

QUERIES = {n: SQL_QUERIES[n] for n in ("scan", "filter", "group by string", "selective", "top-k")}
QUERIES["group by q"] = "SELECT q, count(*), sum(x) FROM t GROUP BY q ORDER BY q LIMIT 5"


def make(work: Path, rows: int, files: int):
    """`part-F.b2z` for each of `files` files, ids running on across them (kept if there)."""
    work.mkdir(parents=True, exist_ok=True)
    per = -(-rows // files)
    for f in range(files):
        path = work / f"part-{f}.b2z"
        if path.exists():
            continue
        tmp = work / f".part-{f}.b2z"
        write_table(tmp, f * per, min(rows, (f + 1) * per), np.random.default_rng([20261201, f]))
        tmp.rename(path)


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port: int):
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


class Cluster:
    """A scheduler and executors (each `slots` task slots) on 127.0.0.1, logs in a temp dir."""

    def __init__(self, bins: Path, executors: int, slots: int):
        self.dir = Path(tempfile.mkdtemp(prefix="b2nd-bench-cluster-"))
        self.procs, self.logs = [], []
        env = dict(os.environ, RUST_LOG="info")
        self.port = free_port()
        self.procs.append(subprocess.Popen(
            [bins / "b2nd-scheduler", "--bind", f"127.0.0.1:{self.port}"],
            stdout=open(self.dir / "scheduler.log", "w"), stderr=subprocess.STDOUT, env=env))
        wait_port(self.port)
        for e in range(executors):
            work = self.dir / f"w{e}"
            work.mkdir()
            log = self.dir / f"executor-{e}.log"
            p, g = free_port(), free_port()
            self.procs.append(subprocess.Popen(
                [bins / "b2nd-executor", "--scheduler", f"127.0.0.1:{self.port}",
                 "--bind", "127.0.0.1", "--port", str(p), "--grpc-port", str(g),
                 "--work-dir", str(work), "--concurrent-tasks", str(slots)],
                stdout=open(log, "w"), stderr=subprocess.STDOUT, env=env))
            self.logs.append(log)
            wait_port(p)
        time.sleep(1.0)  # the executors' first heartbeats: registered before the first query

    def tasks(self):
        """Tasks each executor logged so far, as (stage, partition) lists."""
        out = []
        for log in self.logs:
            text = log.read_text(errors="replace")
            out.append(re.findall(r"Execute task.*?\[\S+ \S+/(\d+)\.\d+/(\d+)\.\d+\]", text))
        return out

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


def run(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: {out.stderr.strip()[-400:]}")
    return dt, out.stdout


def same(a: str, b: str) -> bool:
    """Equal CSV answers, floats to 1e-9 relative (sums are added in another order on a
    cluster: its partitions are other)."""
    ra, rb = [r.split(",") for r in a.split("\n")], [r.split(",") for r in b.split("\n")]
    if [len(r) for r in ra] != [len(r) for r in rb]:
        return False
    for x, y in zip(sum(ra, []), sum(rb, [])):
        if x == y:
            continue
        try:
            fx, fy = float(x), float(y)
        except ValueError:
            return False
        if abs(fx - fy) > 1e-9 * max(abs(fx), abs(fy)):
            return False
    return True


def main():
    bins, work = Path(sys.argv[1]), Path(sys.argv[2])
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 20_000_000
    files = int(sys.argv[4]) if len(sys.argv) > 4 else 8
    names = sys.argv[5].split(",") if len(sys.argv) > 5 else list(QUERIES)
    t0 = time.perf_counter()
    make(work, rows, files)
    print(f"data: {rows} rows in {files} files ({sum(p.stat().st_size for p in work.glob('part-*.b2z')) / 1e6:.0f} MB, "
          f"made or found in {time.perf_counter() - t0:.0f} s)", flush=True)
    mid = rows // 2
    queries = {n: QUERIES[n].format(a=mid, b=mid + 100) for n in names}
    table = ["--table", f"t={work}/part-*.b2z"]
    cli = bins / "b2nd"
    layouts = [("one process", None), ("1 executor x 1 slot", (1, 1)),
               ("1 executor x 2 slots", (1, 2)), ("2 executors x 1 slot", (2, 1))]
    times, answers, spread = {}, {}, {}
    for layout, shape in layouts:
        cluster = Cluster(bins, *shape) if shape else None
        try:
            for name, q in queries.items():
                cmd = [cli, "sql", q, *table, "--format", "csv"]
                cmd += ["--cluster", f"df://127.0.0.1:{cluster.port}"] if cluster else ["--threads", "2"]
                before = cluster.tasks() if cluster else None
                samples = []
                for _ in range(RUNS):
                    dt, out = run(cmd)
                    samples.append(dt)
                    answers.setdefault(name, {})[layout] = out
                times[(layout, name)] = samples
                if cluster:
                    after = cluster.tasks()
                    per = [a[len(b):] for a, b in zip(after, before)]
                    # Per executor: tasks a run, by stage (the lowest stage reads the files).
                    first = min((int(s) for t in per for s, _ in t), default=0)
                    spread[(layout, name)] = " / ".join(
                        f"{len(t) / RUNS:g} tasks, {sum(int(s) == first for s, _ in t) / RUNS:g} scans"
                        for t in per)
                print(f"{layout:22} {name:16} median {statistics.median(samples) * 1000:7.0f} ms "
                      f"best {min(samples) * 1000:7.0f} ms {spread.get((layout, name), '')}",
                      flush=True)
        finally:
            if cluster:
                cluster.stop()
    wrong = [n for n, a in answers.items()
             if not all(same(out, a["one process"]) for out in a.values())]
    print()
    print("| query | " + " | ".join(l for l, _ in layouts) + " |")
    print("|---|" + "---|" * len(layouts))
    for name in queries:
        base = statistics.median(times[("one process", name)])
        cells = []
        for layout, _ in layouts:
            m = statistics.median(times[(layout, name)])
            cells.append(f"{m * 1000:.0f} ms" + ("" if layout == "one process" else f" ({base / m:.2f}x)"))
        print(f"| `{name}` | " + " | ".join(cells) + " |")
    print()
    print("tasks a query ran on each executor (first stage: the scans), per run:")
    for (layout, name), s in spread.items():
        print(f"  {layout:22} {name:16} {s}")
    if wrong:
        print(f"FAIL: answers differ across layouts: {wrong}")
        for n in wrong:
            for layout, out in answers[n].items():
                print(f"  {layout}: {out.strip()[:200]!r}")
        sys.exit(1)
    print("answers equal across layouts")


if __name__ == "__main__":
    main()
