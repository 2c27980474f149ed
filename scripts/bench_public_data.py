"""The public SQL benchmarks' data, as Parquet and as python-blosc2 CTables of the same rows.

usage: bench_public_data.py WORKDIR [tpch|h2o ...]

Makes (once, kept) under WORKDIR:
- `tpch/`: TPC-H SF1 by tpchgen-cli (its Parquet), then each table normalized by pyarrow into
  `tpch/parquet/<table>.parquet` (decimals as float64, dates as timestamp[ms], as
  `CTable.from_parquet` stores them) and written by `CTable.from_parquet` with its defaults into
  `tpch/b2/<table>.b2z`.
- `h2o/`: the h2o groupby table of 1e7 rows and 100 groups (falsa, seed 42) the same way,
  `h2o/parquet/x.parquet` and `h2o/b2/x.b2z`.

Needs (PyPI): blosc2==4.16.1, pyarrow, tpchgen-cli, falsa.
"""

import subprocess
import sys
from pathlib import Path

import blosc2
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

assert blosc2.__version__ == "4.16.1", blosc2.__version__

TPCH = ["nation", "region", "part", "supplier", "partsupp", "customer", "orders", "lineitem"]


def normalized(src: Path, dst: Path) -> None:
    """`src` rewritten to `dst` with decimals as float64 and dates as timestamp[ms]."""
    t = pq.read_table(src)
    cols, fields = [], []
    for f, c in zip(t.schema, t.columns):
        if pa.types.is_decimal(f.type):
            c, f = pc.cast(c, pa.float64()), pa.field(f.name, pa.float64(), f.nullable)
        elif pa.types.is_date(f.type):
            ts = pa.timestamp("ms")
            c, f = pc.cast(c, ts), pa.field(f.name, ts, f.nullable)
        elif pa.types.is_large_string(f.type) or pa.types.is_string_view(f.type):
            c, f = pc.cast(c, pa.string()), pa.field(f.name, pa.string(), f.nullable)
        cols.append(c)
        fields.append(f)
    pq.write_table(pa.Table.from_arrays(cols, schema=pa.schema(fields)), dst)


def write(parquet: Path, b2: Path) -> None:
    if not b2.exists():
        tmp = b2.with_suffix(".tmp.b2z")
        t = blosc2.CTable.from_parquet(str(parquet), urlpath=str(tmp), mode="w")
        t.close()
        tmp.rename(b2)
    print(f"{b2}: {b2.stat().st_size / 2**20:.1f} MiB", flush=True)


def tpch(work: Path) -> None:
    raw, pqd, b2d = work / "tpch" / "raw", work / "tpch" / "parquet", work / "tpch" / "b2"
    for d in (raw, pqd, b2d):
        d.mkdir(parents=True, exist_ok=True)
    if not (raw / "lineitem.parquet").exists():
        subprocess.run(["tpchgen-cli", "parquet", "-s", "1", f"--output-dir={raw}"], check=True)
    for name in TPCH:
        if not (pqd / f"{name}.parquet").exists():
            normalized(raw / f"{name}.parquet", pqd / f"{name}.parquet")
        write(pqd / f"{name}.parquet", b2d / f"{name}.b2z")


def h2o(work: Path) -> None:
    raw, pqd, b2d = work / "h2o" / "raw", work / "h2o" / "parquet", work / "h2o" / "b2"
    for d in (raw, pqd, b2d):
        d.mkdir(parents=True, exist_ok=True)
    made = sorted(raw.glob("G1_*.parquet"))
    if not made:
        subprocess.run(["falsa", "groupby", "--path-prefix", str(raw), "--size", "SMALL",
                        "--k", "100", "--nas", "0", "--seed", "42", "--data-format", "PARQUET"],
                       check=True)
        made = sorted(raw.glob("G1_*.parquet"))
    if not (pqd / "x.parquet").exists():
        normalized(made[0], pqd / "x.parquet")
    write(pqd / "x.parquet", b2d / "x.b2z")


if __name__ == "__main__":
    work = Path(sys.argv[1])
    which = sys.argv[2:] or ["tpch", "h2o"]
    for w in which:
        {"tpch": tpch, "h2o": h2o}[w](work)
