"""SQL over a python-blosc2 CTable: b2nd's DataFusion provider against DataFusion's Parquet
reader and DuckDB on a Parquet export of the same table, local and over HTTP behind a
latency-injecting proxy, side by side in one run.

usage: bench_sql.py BENCH_BINARY WORKDIR [ROWS] [LATENCIES_MS] [QUERIES]
       (default 6000000, 0,20, every query; QUERIES: comma-separated names)

BENCH_BINARY is bench/sql's `b2nd-bench-sql` (cargo build --release in bench/sql). WORKDIR gets
(made once, kept) `t.b2z`, a CTable python-blosc2 4.14.1 writes with its defaults (zstd 1 +
shuffle, a SUMMARY index per numeric column on close): id i8 (0..ROWS in order), x f8
(log-normal), q i4 (0..999, random), flag bool (random), cat an 8-character `string` column of
5 values (random), ts i8 (rising with id, jittered); `d.b2z`, a 5-row CTable (cat, w f8) to
join; and `t.parquet`, `d.parquet`, the same rows exported by pyarrow with its defaults
(snappy, row groups of 1Mi rows, statistics).

A second table gives, for each query that reads whole columns of `t`, what reading those
columns costs before any query work: b2nd decoding them (bench/sql's `decode`) and
python-blosc2 decompressing every chunk of them, 2 threads each.

Each cell: RUNS runs of one process (a fresh session and open per run, 2 partitions /
threads), the median (and best) wall time; the same answer checked across engines. b2nd and
DataFusion run in bench/sql's binary; DuckDB (python package) in this process over the
Parquet files, a fresh connection per run. nginx (Debian's) serves WORKDIR over HTTP;
bench_remote.py's proxy adds the latency to every request.
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

RUNS = 5
CATS = ["alpha", "beta", "gamma", "delta", "epsilon"]
TS0 = 1_700_000_000_000

QUERIES = {
    "scan": "SELECT count(*), sum(x) FROM t",
    "filter": "SELECT sum(x), count(*) FROM t WHERE q < 100 AND flag",
    "group by string": "SELECT cat, count(*), avg(x) FROM t GROUP BY cat ORDER BY cat",
    "selective": "SELECT sum(x) FROM t WHERE id BETWEEN {a} AND {b}",
    "top-k": "SELECT id, x FROM t ORDER BY x DESC LIMIT 10",
    "distinct": "SELECT count(DISTINCT q) FROM t WHERE ts > {ts}",
    "group by two": "SELECT cat, flag, count(*), sum(x) FROM t GROUP BY cat, flag "
                    "ORDER BY cat, flag",
    "string filter": "SELECT count(*), sum(x) FROM t WHERE cat = 'beta'",
    "like": "SELECT count(*), sum(x) FROM t WHERE cat LIKE '%lta%'",
    "join": "SELECT d.w, count(*), sum(t.x) FROM t JOIN d ON t.cat = d.cat GROUP BY d.w "
            "ORDER BY d.w",
}

# The columns of `t` each query reads whole (no batch skipped: not the selective query, whose
# summaries leave one block, nor top-k and DISTINCT, whose summaries skip batches).
WHOLE = {
    "scan": ["x"],
    "filter": ["q", "flag", "x"],
    "group by string": ["cat", "x"],
    "group by two": ["cat", "flag", "x"],
    "string filter": ["cat", "x"],
    "like": ["cat", "x"],
    "join": ["cat", "x"],
}


def write_table(path, a0, a1, rng):
    """The benchmark's CTable of ids a0..a1 at `path` (python-blosc2's defaults), its other
    columns drawn from `rng` a million rows at a time."""
    import dataclasses

    @dataclasses.dataclass
    class Row:
        id: int = blosc2.field(blosc2.int64())
        x: float = blosc2.field(blosc2.float64())
        q: int = blosc2.field(blosc2.int32())
        flag: bool = blosc2.field(blosc2.bool())
        cat: str = blosc2.field(blosc2.string(max_length=8))
        ts: int = blosc2.field(blosc2.int64())

    t = blosc2.CTable(Row, urlpath=str(path), mode="w", expected_size=a1 - a0)
    step = 1_000_000
    cats = np.array(CATS, dtype="<U8")
    for a in range(a0, a1, step):
        n = min(step, a1 - a)
        ids = np.arange(a, a + n, dtype="i8")
        t.extend({
            "id": ids,
            "x": rng.lognormal(3, 1, n),
            "q": rng.integers(0, 1000, n, dtype="i4"),
            "flag": rng.random(n) < 0.5,
            "cat": cats[rng.integers(0, len(CATS), n)],
            "ts": TS0 + ids * 1000 + rng.integers(0, 1000, n),
        })
    t.close()


def make(work, rows):
    work.mkdir(parents=True, exist_ok=True)
    path, dim = work / "t.b2z", work / "d.b2z"
    if not path.exists():
        write_table(path, 0, rows, np.random.default_rng(20261128))
    if not dim.exists():
        import dataclasses

        @dataclasses.dataclass
        class Dim:
            cat: str = blosc2.field(blosc2.string(max_length=8))
            w: float = blosc2.field(blosc2.float64())

        d = blosc2.CTable(Dim, urlpath=str(dim), mode="w")
        d.extend({"cat": np.array(CATS, dtype="<U8"), "w": np.arange(1, 6, dtype="f8")})
        d.close()
    import pyarrow.parquet as papq
    out = {}
    for name, src in (("t", path), ("d", dim)):
        pq = work / f"{name}.parquet"
        if not pq.exists():
            papq.write_table(blosc2.open(str(src)).to_arrow(), str(pq))
        for f in (src, pq):
            f.chmod(0o644)  # nginx's workers read them (python-blosc2 writes 0600)
        out[name] = (src, pq)
    return out


def rust(binary, kind, sources, query):
    r = subprocess.run([binary, kind, sources, query, str(RUNS), "2"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {kind} {sources} {query}\n{r.stderr}")
    return json.loads(r.stdout)


def duckdb_time(files, query):
    import duckdb
    times, row = [], None
    for _ in range(RUNS):
        t0 = time.perf_counter()
        con = duckdb.connect()
        con.execute("SET threads TO 2")
        for name, pq in files.items():
            con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{pq}')")
        res = con.execute(query).fetchall()
        times.append(time.perf_counter() - t0)
        row = [str(v) for v in res[0]] if res else []
        con.close()
    return {"best": min(times), "median": sorted(times)[len(times) // 2], "row": row}


def decode_time(path, columns):
    """python-blosc2 (its wheel's c-blosc2, 2 threads) decompressing every chunk of the
    table's `columns`, best of RUNS: what reading those columns whole costs before any query
    work, in the file's own codec."""
    blosc2.set_nthreads(2)
    t = blosc2.open(str(path))
    schunks = [t._cols[c].schunk for c in columns]  # 4.14.1's column arrays
    best = None
    for _ in range(RUNS):
        t0 = time.perf_counter()
        for s in schunks:
            for i in range(s.nchunks):
                s.decompress_chunk(i)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def same(a, b):
    """Answers equal: counts and strings exactly, numbers to 1e-9 relative."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        try:
            x, y = float(x), float(y)
        except ValueError:
            if str(x).lower() != str(y).lower():
                return False
            continue
        if abs(x - y) > 1e-9 * max(abs(x), abs(y), 1.0):
            return False
    return True


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 6_000_000
    lats = [int(x) for x in (sys.argv[4] if len(sys.argv) > 4 else "0,20").split(",") if x]
    names = sys.argv[5].split(",") if len(sys.argv) > 5 else list(QUERIES)
    files = make(work, rows)
    a = rows * 2 // 3
    params = {"a": a, "b": a + 100, "ts": TS0 + (rows * 9 // 10) * 1000}
    print(f"{rows} rows; t.b2z {files['t'][0].stat().st_size / 2**20:.1f} MiB, "
          f"t.parquet {files['t'][1].stat().st_size / 2**20:.1f} MiB\n")
    nginx, port = start_nginx(work)
    proxy = Proxy(port)
    out = []
    try:
        for name in names:
            q = QUERIES[name].format(**params)
            used = [n for n in files if f" {n} " in f"{q} " or f" {n}." in q]
            local = lambda i: ",".join(f"{n}={files[n][i]}" for n in used)  # noqa: E731
            lb = rust(binary, "b2nd", local(0), q)
            lp = rust(binary, "parquet", local(1), q)
            dk = duckdb_time({n: files[n][1] for n in used}, q)
            answers = [lb["row"], lp["row"], dk["row"]]
            remote = []
            for ms in lats:
                proxy.delay = ms / 1000
                base = f"http://127.0.0.1:{proxy.port}"
                url = lambda ext: ",".join(f"{n}={base}/{n}.{ext}" for n in used)  # noqa: E731
                proxy.reset()
                rb = rust(binary, "b2nd", url("b2z"), q)
                rb_req = proxy.requests // RUNS
                proxy.reset()
                rp = rust(binary, "parquet", url("parquet"), q)
                rp_req = proxy.requests // RUNS
                answers += [rb["row"], rp["row"]]
                remote.append((ms, rb["median"], rb_req, rp["median"], rp_req))
            if not all(same(answers[0], x) for x in answers[1:]):
                sys.exit(f"{name}: answers differ: {answers}")
            out.append((name, lb, lp, dk, remote))
            print(f"{name}: {q}\n  answer {answers[0]}\n  b2nd scan: {lb['scan']}\n"
                  f"  parquet scan: {lp['scan']}", flush=True)
    finally:
        nginx.terminate()
    print()
    head = ("| query | b2nd | DataFusion / Parquet | b2nd speed | DuckDB / Parquet |"
            " b2nd speed |")
    sep = "|---|---|---|---|---|---|"
    for ms in lats:
        head += f" b2nd HTTP {ms} ms (requests) | Parquet HTTP {ms} ms (requests) | b2nd speed |"
        sep += "---|---|---|"
    print(head)
    print(sep)
    for name, lb, lp, dk, remote in out:
        line = (f"| {name} | {lb['median'] * 1000:.1f} ms | {lp['median'] * 1000:.1f} ms | "
                f"{lp['median'] / lb['median']:.2f}x | {dk['median'] * 1000:.1f} ms | "
                f"{dk['median'] / lb['median']:.2f}x |")
        for ms, rb, rbq, rp, rpq in remote:
            line += f" {rb * 1000:.1f} ms ({rbq}) | {rp * 1000:.1f} ms ({rpq}) | {rp / rb:.2f}x |"
        print(line)
    print("\nmedians of", RUNS, "runs; 'b2nd speed': the peer's time / b2nd's")
    # What the file's codec alone costs on the queries that read whole columns.
    print("\n| query | columns read whole | b2nd decode of them | python-blosc2 decode of them |"
          " b2nd query | DataFusion / Parquet query |")
    print("|---|---|---|---|---|---|")
    for name, lb, lp, dk, remote in out:
        cols = WHOLE.get(name)
        if cols:
            mine = rust(binary, "decode", str(files["t"][0]), ",".join(cols))["median"]
            py = decode_time(files["t"][0], cols)
            print(f"| {name} | {', '.join(cols)} | {mine * 1000:.1f} ms | {py * 1000:.1f} ms |"
                  f" {lb['median'] * 1000:.1f} ms | {lp['median'] * 1000:.1f} ms |")
    print(f"\ndecode: b2nd (bench/sql's `decode`, the table's open included, median of {RUNS})"
          " reading the columns' live rows a few blocks at a time into one buffer each;"
          f" python-blosc2 decompressing every chunk of them, best of {RUNS}; 2 threads")


if __name__ == "__main__":
    main()
