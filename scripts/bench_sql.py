"""SQL over a python-blosc2 CTable: b2nd's DataFusion provider against python-blosc2's own
`where` / `group_by` and against DataFusion's Parquet reader on a Parquet export of the same
table, local and over HTTP behind a latency-injecting proxy, side by side in one run.

usage: bench_sql.py BENCH_BINARY WORKDIR [ROWS] [LATENCIES_MS]    (default 6000000, 0,20)

BENCH_BINARY is bench/sql's `b2nd-bench-sql` (cargo build --release in bench/sql). WORKDIR gets
(made once, kept) `t.b2z`, a CTable python-blosc2 4.14.1 writes (its defaults: zstd 1 +
shuffle, a SUMMARY index per numeric column on close): id i8 (0..ROWS in order), price f8
(log-normal), qty i4 (1..100, random), cat i1 (0..9, random); and `t.parquet`, the same rows
exported by pyarrow with its defaults (snappy, row groups of 1Mi rows, statistics). Queries:

  selective  count and sum of price where id is in a range of 100 rows (pruning)
  filter     count and sum of price where qty > 90 (no zone can be skipped: a full scan)
  group by   count and sum of price per cat

Each cell is the best of 3 runs of one process (fresh session and open per run, 2 partitions
/ threads), the same answer checked across engines. python-blosc2 runs in-process:
`t.where(expr)` then the sum, `t.group_by("cat").agg(...)`, on the local file and, over HTTP,
on the RemoteCTable `blosc2.open(URL)` returns (needs fsspec and aiohttp, as blosc2[fsspec]).
nginx (Debian's) serves WORKDIR; bench_remote.py's proxy adds the latency to every request.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import blosc2
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_remote import Proxy, start_nginx  # noqa: E402

assert blosc2.__version__ == "4.14.1", blosc2.__version__

QUERIES = {
    "selective": "SELECT count(*), sum(price) FROM t WHERE id BETWEEN {a} AND {b}",
    "filter": "SELECT count(*), sum(price) FROM t WHERE qty > 90",
    "group by": "SELECT cat, count(*), sum(price) FROM t GROUP BY cat ORDER BY cat",
}


def make(work, rows):
    work.mkdir(parents=True, exist_ok=True)
    path = work / "t.b2z"
    if not path.exists():
        import dataclasses

        @dataclasses.dataclass
        class Row:
            id: int = blosc2.field(blosc2.int64())
            price: float = blosc2.field(blosc2.float64())
            qty: int = blosc2.field(blosc2.int32())
            cat: int = blosc2.field(blosc2.int8())

        rng = np.random.default_rng(20261126)
        t = blosc2.CTable(Row, urlpath=str(path), mode="w", expected_size=rows)
        step = 1_000_000
        for a in range(0, rows, step):
            n = min(step, rows - a)
            t.extend({
                "id": np.arange(a, a + n, dtype="i8"),
                "price": rng.lognormal(3, 1, n),
                "qty": rng.integers(1, 101, n, dtype="i4"),
                "cat": rng.integers(0, 10, n, dtype="i1"),
            })
        t.close()
    pq = work / "t.parquet"
    if not pq.exists():
        import pyarrow.parquet as papq
        t = blosc2.open(str(path))
        papq.write_table(t.to_arrow(), str(pq))
    for f in (path, pq):
        f.chmod(0o644)  # nginx's workers read them (python-blosc2 writes 0600)
    return path, pq


def python_time(path, name, a, b):
    best, answer = float("inf"), None
    for _ in range(3):
        t0 = time.perf_counter()
        t = blosc2.open(str(path))
        if name == "selective":
            v = t.where(f"(id >= {a}) & (id <= {b})")
            price = v["price"][:]
            answer = [len(price), float(price.sum())]
        elif name == "filter":
            v = t.where("qty > 90")
            price = v["price"][:]
            answer = [len(price), float(price.sum())]
        else:
            g = t.group_by("cat").agg(n=("price", "count"), s=("price", "sum"))
            answer = [int(np.asarray(g["cat"][:])[0]), int(np.asarray(g["n"][:])[0]),
                      float(np.asarray(g["s"][:])[0])]
        best = min(best, time.perf_counter() - t0)
    return best, answer


def rust(binary, kind, loc, query):
    r = subprocess.run([binary, kind, loc, query, "3", "2"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {kind} {loc} {query}\n{r.stderr}")
    return json.loads(r.stdout)


def same(a, b):
    """Answers equal: counts exactly, sums to 1e-9 relative."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = float(x), float(y)
        if abs(x - y) > 1e-9 * max(abs(x), abs(y), 1.0):
            return False
    return True


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 6_000_000
    lats = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "0,20").split(",")]
    blosc2.set_nthreads(2)
    path, pq = make(work, rows)
    a = rows * 2 // 5 + 12345
    b = a + 99
    print(f"{rows} rows; t.b2z {path.stat().st_size / 2**20:.1f} MiB, "
          f"t.parquet {pq.stat().st_size / 2**20:.1f} MiB\n")
    nginx, port = start_nginx(work)
    proxy = Proxy(port)
    out = []
    try:
        for name, q in QUERIES.items():
            q = q.format(a=a, b=b)
            py, py_answer = python_time(path, name, a, b)
            local_b = rust(binary, "b2nd", str(path), q)
            local_p = rust(binary, "parquet", str(pq), q)
            answers = [local_b["row"], local_p["row"], py_answer]
            remote = []
            for ms in lats:
                proxy.delay = ms / 1000
                base = f"http://127.0.0.1:{proxy.port}"
                proxy.reset()
                rb = rust(binary, "b2nd", f"{base}/t.b2z", q)
                rb_req = proxy.requests // 3
                proxy.reset()
                rp = rust(binary, "parquet", f"{base}/t.parquet", q)
                rp_req = proxy.requests // 3
                proxy.reset()
                # python-blosc2's RemoteCTable (fsspec over HTTP, 4.14), a fresh open per run.
                rpy, rpy_answer = python_time(f"{base}/t.b2z", name, a, b)
                rpy_req = proxy.requests // 3
                answers += [rb["row"], rp["row"], rpy_answer]
                remote.append((ms, rb["best"], rb_req, rp["best"], rp_req, rpy, rpy_req))
            ok = all(same(answers[0], x) for x in answers[1:])
            if not ok:
                sys.exit(f"{name}: answers differ: {answers}")
            out.append((name, py, local_b, local_p, remote))
            print(f"{name}: {q}\n  answer {answers[0]}\n  b2nd scan: {local_b['scan']}\n"
                  f"  parquet scan: {local_p['scan']}", flush=True)
    finally:
        nginx.terminate()
    print()
    head = "| query | python-blosc2 | b2nd | Parquet | b2nd / Parquet |"
    sep = "|---|---|---|---|---|"
    for ms in lats:
        head += (f" b2nd HTTP {ms} ms (requests) | Parquet HTTP {ms} ms (requests) |"
                 f" python-blosc2 HTTP {ms} ms (requests) |")
        sep += "---|---|---|"
    print(head)
    print(sep)
    for name, py, lb, lp, remote in out:
        line = (f"| {name} | {py * 1000:.1f} ms | {lb['best'] * 1000:.1f} ms | "
                f"{lp['best'] * 1000:.1f} ms | {lp['best'] / lb['best']:.2f}x |")
        for ms, rb, rbq, rp, rpq, rpy, rpyq in remote:
            line += (f" {rb * 1000:.1f} ms ({rbq}) | {rp * 1000:.1f} ms ({rpq}) |"
                     f" {rpy * 1000:.1f} ms ({rpyq}) |")
        print(line)
    print("\npython-blosc2 / b2nd (local): " + ", ".join(
        f"{name} {py / lb['best']:.2f}x" for name, py, lb, _, _ in out))


if __name__ == "__main__":
    main()
