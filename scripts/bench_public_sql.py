"""The public SQL benchmarks, TPC-H SF1 and the h2o groupby (1e7 rows, 100 groups), over
CTables python-blosc2 writes from Parquet: b2nd's DataFusion provider against DataFusion over
the same Parquet and DuckDB over it, side by side in one run, with each engine's peak memory.

usage: bench_public_sql.py BENCH_BINARY WORKDIR QUERIES_DIR [tpch|h2o] [RUNS] [NAMES]

BENCH_BINARY: bench/sql's `b2nd-bench-sql` (`cargo build --release` in bench/sql).
WORKDIR: made by `bench_public_data.py WORKDIR` (the Parquet files and the CTables).
QUERIES_DIR: the queries as files, one a query: TPC-H's `q1.sql` ... `q22.sql` (DataFusion's
`benchmarks/queries`; q15's view as a `WITH` clause, one statement) and the h2o groupby's
`h2o/q1.sql` ... `h2o/q10.sql` (DataFusion's `benchmarks/queries/h2o/groupby.sql`, a query a
file). They are the TPC's and H2O's text, not kept in this repository.

Each cell: one process per engine and query (b2nd and DataFusion in bench/sql's binary, each
run opening every table anew in a fresh session; DuckDB in a python process over the Parquet,
a fresh connection a run), RUNS runs (default 3), the median wall time; the peak resident
memory of that process (GNU time); 2 partitions / threads everywhere. Answers are compared by
their row counts, and by their first rows (numbers to 6 significant digits) where the query
sorts its rows (outside any parentheses). Ratios: the peer's time / b2nd's (above 1:
b2nd faster); geometric means over the queries.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TPCH = ["nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]

DUCK = r"""
import sys, time, json, duckdb
tables, query, runs = json.loads(sys.argv[1]), open(sys.argv[2]).read(), int(sys.argv[3])
times, row = [], []
for _ in range(runs):
    t0 = time.perf_counter()
    c = duckdb.connect()
    c.execute("SET threads = 2")
    c.execute("SET enable_progress_bar = false")
    for name, path in tables.items():
        c.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{path}')")
    rows = c.execute(query).fetchall()
    times.append(time.perf_counter() - t0)
    row = [str(x) for x in rows[0]] if rows else []
    n = len(rows)
    c.close()
times.sort()
print(json.dumps({"best": times[0], "median": times[len(times) // 2], "rows": n, "row": row}))
"""


def timed(cmd: list[str]) -> tuple[dict, float]:
    """`cmd`'s JSON line and its peak resident memory in MiB."""
    with tempfile.NamedTemporaryFile("r") as f:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f.name] + cmd,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:]}, 0.0
        return json.loads(p.stdout.strip().splitlines()[-1]), int(f.read().split()[-1]) / 1024


def norm(row: list[str]) -> list[str]:
    out = []
    for v in row:
        try:
            x = float(v)
            out.append(f"{x:.6g}")
        except ValueError:
            out.append(v.strip())
    return out


def main() -> None:
    binary, work, qdir = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    bench = sys.argv[4] if len(sys.argv) > 4 else "tpch"
    runs = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    names = sys.argv[6].split(",") if len(sys.argv) > 6 else None
    if bench == "tpch":
        tables = TPCH
        queries = {f"q{i}": qdir / f"q{i}.sql" for i in range(1, 23)}
    else:
        tables = ["x"]
        queries = {f"q{i}": qdir / "h2o" / f"q{i}.sql" for i in range(1, 11)}
    if names:
        queries = {k: v for k, v in queries.items() if k in names}
    b2 = ",".join(f"{t}={work / bench / 'b2' / (t + '.b2z')}" for t in tables)
    pq = ",".join(f"{t}={work / bench / 'parquet' / (t + '.parquet')}" for t in tables)
    duck_tables = json.dumps({t: str(work / bench / "parquet" / (t + ".parquet")) for t in tables})
    print(f"| query | b2nd ms | DataFusion ms | DuckDB ms | DF/b2nd | DuckDB/b2nd "
          f"| b2nd MiB | DF MiB | DuckDB MiB | same answer |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios_df, ratios_duck = [], []
    for name, path in queries.items():
        q = path.read_text()
        b, bm = timed([binary, "b2nd", b2, q, str(runs), "2"])
        d, dm = timed([binary, "parquet", pq, q, str(runs), "2"])
        k, km = timed([sys.executable, "-c", DUCK, duck_tables, str(path), str(runs)])
        if "error" in b or "error" in d:
            print(f"| {name} | {b.get('error', '')} | {d.get('error', '')} | | | | | | | no |")
            continue
        # Ordered where the outermost query sorts (not a window's or a subquery's ORDER BY).
        ordered = "order by" in q.lower().rsplit(")", 1)[-1]
        same = b["rows"] == d["rows"] == k.get("rows", b["rows"]) and (
            not ordered or norm(b["row"]) == norm(d["row"]))
        rd = d["median"] / b["median"]
        ratios_df.append(rd)
        rk = k["median"] / b["median"] if "median" in k else float("nan")
        if not math.isnan(rk):
            ratios_duck.append(rk)
        kms = f"{k['median'] * 1e3:.0f}" if "median" in k else "error"
        print(f"| {name} | {b['median'] * 1e3:.0f} | {d['median'] * 1e3:.0f} | {kms} "
              f"| {rd:.2f}x | {rk:.2f}x | {bm:.0f} | {dm:.0f} | {km:.0f} "
              f"| {'yes' if same else 'NO: ' + str((b['rows'], b['row'])) + ' vs ' + str((d['rows'], d['row']))} |",
              flush=True)
    g = lambda r: math.exp(sum(map(math.log, r)) / len(r)) if r else float("nan")
    print(f"\ngeomean: DataFusion/b2nd {g(ratios_df):.2f}x, DuckDB/b2nd {g(ratios_duck):.2f}x "
          f"({len(ratios_df)} queries; {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
