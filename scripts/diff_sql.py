"""Randomized differential test of `b2nd sql` (DataFusion over b2nd) against python-blosc2.

python-blosc2 4.14.1 writes random CTables (integers with mask and sentinel nulls, floats with
NaN-sentinel and default nulls, bools, fixed strings, utf8 with nulls, dictionary strings,
timestamps; deleted rows; .b2z and .b2d) and random N-d arrays. For each, random queries
(filters on every column kind, aggregates, GROUP BY, ORDER BY + LIMIT, joins of two tables,
arrays as tables of elements, LIMIT / OFFSET on them) run through `b2nd sql --format json`, and their answers are
compared with the same query evaluated here in Python over the rows written (live rows only;
SQL's NULL logic: a row passes a filter only when every term is true). Float sums compare
within 1e-9 relative; everything else exactly. What python-blosc2 reads of each file
(`t[name][:]`, `is_null()`) is compared with the rows written too: where it differs the run
notes the file and counts it (4.14.1 keeps a `utf8` column's rows that a delete of the last
rows trimmed from the other columns: docs/meaning-audit.md).

Any error fails the run; it prints the seed, the number of queries per kind and fails under a
floor. A failure prints the query and both answers; SEED=... replays it.

With PARTS=K, each table is K files of it (`tN/part-J.b2z` or `.b2d`, ids running on from
file to file, each with its own deleted rows) queried as one table through a glob of their
absolute paths; the values compared are the files' live rows one after the other. With
CLUSTER=df://HOST:PORT, every query runs on that Ballista scheduler (`b2nd sql --cluster`).
With S3=http://HOST:PORT (an S3 server that takes unsigned PUTs: moto) and PARTS, the second
table's files and about half of the others' are put in a bucket of that server and queried as
`s3://BUCKET/tN/part-*` (a .b2d is a prefix of objects; AWS_* set for `b2nd sql`, and a
cluster's executors need the same: AWS_ENDPOINT_URL=S3, AWS_ALLOW_HTTP=true,
AWS_ACCESS_KEY_ID=AWS_SECRET_ACCESS_KEY=b2nd-test, AWS_REGION=us-east-1).

Usage: python scripts/diff_sql.py B2ND_BINARY WORKDIR [TABLES]
"""

import dataclasses
import glob
import json
import math
import os
import random
import shutil
import subprocess
import sys
import urllib.request

import blosc2 as b2
import numpy as np

assert b2.__version__ == "4.14.1", b2.__version__
BIN, WORK = sys.argv[1], sys.argv[2]
NTABLES = int(sys.argv[3]) if len(sys.argv) > 3 else 6
SEED = int(os.environ.get("SEED", random.randrange(1 << 31)))
PARTS = int(os.environ.get("PARTS", "1"))
CLUSTER = os.environ.get("CLUSTER")
S3 = os.environ.get("S3") if PARTS > 1 else None
print(f"diff_sql: SEED={SEED} (replays)" + (f", {PARTS} files a table" if PARTS > 1 else "")
      + (f", on the cluster at {CLUSTER}" if CLUSTER else "") + (f", tables in S3 at {S3}" if S3 else ""))
rng = random.Random(SEED)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
WORDS = ["a", "bb", "ccc", "héllo", "zz", ""]
TAGS = ["red", "green", "blue", "x"]


@dataclasses.dataclass
class Row:
    id: int = b2.field(b2.int64())
    k: int = b2.field(b2.int32(), default=0)
    im: int = b2.field(b2.int32(nullable=True, null_storage="mask"), default=None)
    isent: int = b2.field(b2.int16(nullable=True, null_value=-1), default=None)
    f: float = b2.field(b2.float64(), default=0.0)
    fnan: float = b2.field(b2.float32(nullable=True, null_value=float("nan")), default=None)
    fnull: float = b2.field(b2.float64(nullable=True), default=None)
    flag: bool = b2.field(b2.bool(), default=False)
    name: str = b2.field(b2.string(max_length=6), default="")
    txt: str = b2.field(b2.utf8(nullable=True), default=None)
    tag: str = b2.field(b2.dictionary(value_type=b2.vlstring()), default="x")
    ts: np.datetime64 = b2.field(b2.timestamp(unit="s"), default=None)


def make_table(path, n, keys, first_id=0):
    t = b2.CTable(Row, urlpath=path, mode="w")
    rows = []
    for i in range(n):
        rows.append(Row(
            id=first_id + i,
            k=rng.choice(keys),
            im=None if rng.random() < 0.2 else rng.randrange(-50, 50),
            isent=-1 if rng.random() < 0.2 else rng.randrange(0, 100),
            f=round(rng.uniform(-100, 100), 3),
            fnan=float("nan") if rng.random() < 0.15 else rng.randrange(-8, 8) / 4,
            fnull=None if rng.random() < 0.25 else round(rng.uniform(0, 10), 2),
            flag=rng.random() < 0.5,
            name=rng.choice(WORDS[:5]),
            txt=None if rng.random() < 0.2 else rng.choice(WORDS),
            tag=rng.choice(TAGS),
            ts=np.datetime64(1_700_000_000 + rng.randrange(0, 1000), "s"),
        ))
    t.extend([dataclasses.astuple(r) for r in rows])
    # Rows deleted from most tables; always from the run's first table of 300 rows or more,
    # so that a run over more than 1 000 rows has deleted rows to prove.
    first = n >= 300 and proof["deleted"] == 0
    gone = []
    if n > 0 and (first or rng.random() < 0.8):
        gone = sorted(rng.sample(range(n), rng.randrange(int(first), max(1, n // 5))))
        t.delete(gone)
        proof["deleted"] += len(gone)
    t.close()
    dead = set(gone)
    live = [r for i, r in enumerate(rows) if i not in dead]
    WRITTEN[os.path.abspath(path)] = {
        f.name: [sql_value(f.name, getattr(r, f.name)) for r in live] for f in dataclasses.fields(Row)
    }


# Each table file's live rows as written (absolute path -> column -> values as SQL sees them),
# and the files python-blosc2 reads otherwise.
WRITTEN = {}
MISREAD = set()


def sql_value(column, x):
    """A value written to `column` as SQL reads it: None for NULL (the sentinels included)."""
    if x is None or (column == "isent" and x == -1) or (column == "fnan" and x != x):
        return None
    if column == "fnan":
        return float(np.float32(x))
    if column == "ts":
        return int(np.datetime64(x, "s").astype("int64"))
    if column in ("name", "txt", "tag"):
        return str(x)
    return x


BUCKET = f"diff-sql-{SEED}"
# The S3 glob of a table -> the local glob of the same files (python-blosc2 reads those).
LOCAL = {}


def s3_put(key, body):
    """An unsigned PUT of `body` at `key` (`BUCKET` or `BUCKET/KEY`) of the S3 server."""
    # Not urllib's default form type: moto would take the body for a form and store nothing.
    req = urllib.request.Request(f"{S3}/{key}", data=body, method="PUT",
                                 headers={"Content-Type": "application/octet-stream"})
    with urllib.request.urlopen(req, timeout=60) as r:
        assert r.status == 200, (key, r.status)


if S3:
    os.environ.update(AWS_ENDPOINT_URL=S3, AWS_ALLOW_HTTP="true", AWS_ACCESS_KEY_ID="b2nd-test",
                      AWS_SECRET_ACCESS_KEY="b2nd-test", AWS_REGION="us-east-1")
    s3_put(BUCKET, b"")


def make_parts(path, n, keys, ti):
    """The table as PARTS files in directory `path` (rows split at random, each file .b2z or
    .b2d); the glob naming them: of their absolute paths, or with S3 of their objects."""
    os.makedirs(path)
    cuts = sorted(rng.randrange(0, n + 1) for _ in range(PARTS - 1))
    bounds = [0] + cuts + [n]
    for j in range(PARTS):
        ext = rng.choice([".b2z", ".b2d"])
        make_table(os.path.join(path, f"part-{j}{ext}"), bounds[j + 1] - bounds[j], keys, bounds[j])
    proof["files"] += PARTS
    local = os.path.join(os.path.abspath(path), "part-*")
    if not S3 or not (ti == 1 or (ti > 1 and rng.random() < 0.5)):
        return local
    for root, _, files in os.walk(path):
        for f in sorted(files):
            key = os.path.relpath(os.path.join(root, f), WORK)
            with open(os.path.join(root, f), "rb") as fh:
                s3_put(f"{BUCKET}/{key}", fh.read())
            proof["objects"] += 1
    spec = f"s3://{BUCKET}/{os.path.relpath(path, WORK)}/part-*"
    LOCAL[spec] = local
    return spec


def live_values(spec):
    """Column name -> list of live-row values (None for NULL) as SQL sees them: of the file
    `spec`, or of the files a glob names one after the other, in the order of their names."""
    spec = LOCAL.get(spec, spec)
    if "*" in spec:
        out = {}
        for path in sorted(glob.glob(spec)):
            for c, v in live_values(path).items():
                out.setdefault(c, []).extend(v)
        return out
    written = WRITTEN[os.path.abspath(spec)]
    try:
        read = python_values(spec)
    except Exception as e:  # noqa: BLE001 - python-blosc2 failing on its own file
        read = f"{type(e).__name__}: {e}"
    if read != written and spec not in MISREAD:
        MISREAD.add(spec)
        what = read if isinstance(read, str) else "columns " + ", ".join(
            c for c in written if read.get(c) != written[c])
        print(f"NOTE {spec}: python-blosc2 misreads the file it wrote ({what}); the rows "
              "written are compared")
    return written


def python_values(path):
    """Column name -> list of live-row values (None for NULL) as python-blosc2 reads them."""
    t = b2.open(path, mode="r")
    out = {}
    for c in t.col_names:
        v = t[c][:]
        if isinstance(v, np.ma.MaskedArray):
            vals = [None if m else x for x, m in zip(v.data.tolist(), np.ma.getmaskarray(v).tolist())]
        elif isinstance(v, np.ndarray):
            vals = v.tolist()
        else:
            vals = list(v)
        # Sentinel nulls (`null_value`) come back as values from `t[c][:]`: python-blosc2's
        # `is_null()` says which rows are NULL.
        nulls = np.asarray(t[c].is_null()).tolist() if hasattr(t[c], "is_null") else [False] * len(vals)
        vals = [None if nul or (isinstance(x, float) and x != x) else x for x, nul in zip(vals, nulls)]
        if c == "ts":
            vals = [None if x is None else int(np.datetime64(x, "s").astype("int64")) for x in vals]
        if c in ("name", "txt", "tag"):
            vals = [None if x is None or x is np.ma.masked else str(x) for x in vals]
        out[c] = vals
    return out


# What Ballista 55 refuses, with an error (never a wrong answer), on any table: its shuffle
# hands a dictionary-encoded column (GROUP BY over it, or selected across a shuffle) on as
# plain strings where the plan says dictionary; a provably empty filter (`x = 'a' AND x = 'b'`) becomes an empty relation whose
# schema the logical plan's protobuf loses, so the scheduler cannot parse the plan.
BALLISTA_REFUSALS = {
    "RowConverter column schema mismatch, expected Dictionary": "a dictionary column through a shuffle",
    "column types must match schema types, expected Dictionary": "a dictionary column through a shuffle",
    "Could not parse plan: DataFusion error: Schema error: No field named": "an empty relation",
}


class BallistaRefused(Exception):
    """A query Ballista refuses (BALLISTA_REFUSALS)."""


def sql(query, tables=(), arrays=()):
    args = [BIN, "sql", query, "--format", "json"] + (["--cluster", CLUSTER] if CLUSTER else [])
    for n, p in tables:
        args += ["--table", f"{n}={p}"]
    for n, p in arrays:
        args += ["--array", f"{n}={p}"]
    r = subprocess.run(args, capture_output=True, text=True)
    for text, what in BALLISTA_REFUSALS.items():
        if r.returncode != 0 and CLUSTER and text in r.stderr:
            raise BallistaRefused(what)
    if r.returncode != 0:
        raise RuntimeError(f"b2nd sql failed ({r.returncode}): {query}\n{r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


NUM = ["id", "k", "im", "isent", "f", "fnan", "fnull"]


def literal(c, vals):
    present = [v for v in vals if v is not None]
    if c in ("name", "txt", "tag"):
        w = rng.choice(present) if present and rng.random() < 0.8 else rng.choice(WORDS + TAGS)
        return "'" + w.replace("'", "''") + "'", w
    if c == "flag":
        return None, None
    v = rng.choice(present) if present and rng.random() < 0.7 else rng.uniform(-100, 100)
    if c in ("id", "k", "im", "isent"):
        v = int(round(v))
    return repr(v), v


def term(cols, vals):
    """A random filter term: (SQL, python predicate returning True / False / None)."""
    c = rng.choice(cols)
    vs = vals[c]
    r = rng.random()
    if r < 0.15:
        return f"{c} IS NULL", (lambda i, c=c: vals[c][i] is None)
    if r < 0.25:
        return f"{c} IS NOT NULL", (lambda i, c=c: vals[c][i] is not None)
    if c == "flag":
        neg = rng.random() < 0.5
        return ("NOT flag" if neg else "flag"), (lambda i: None if vals["flag"][i] is None
                                                 else (not vals["flag"][i]) if neg else vals["flag"][i])
    if c == "ts":
        v = 1_700_000_000 + rng.randrange(0, 1000)
        return (f"CAST(ts AS BIGINT) >= {v}",
                lambda i, v=v: None if vals["ts"][i] is None else vals["ts"][i] >= v)
    lit, v = literal(c, vs)
    ops = ["=", "<>"] if c in ("name", "txt", "tag") else ["=", "<>", "<", "<=", ">", ">="]
    op = rng.choice(ops)
    f = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
         "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
    return f"{c} {op} {lit}", (lambda i, c=c, v=v, f=f: None if vals[c][i] is None else f(vals[c][i], v))


def where(cols, vals, n):
    terms = [term(cols, vals) for _ in range(rng.randrange(0, 3))]
    if not terms:
        return "", list(range(n))
    keep = [i for i in range(n) if all(p(i) is True for _, p in terms)]
    return " WHERE " + " AND ".join(s for s, _ in terms), keep


def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def agg(name, xs):
    xs = [x for x in xs if x is not None]
    if name == "count":
        return len(xs)
    if not xs:
        return None
    return {"sum": sum, "min": min, "max": max}[name](xs)


counts = {}
failures = []
proof = {"rows": 0, "deleted": 0, "nulls": {}, "files": 0, "objects": 0}


def check(kind, query, got, want, tables=()):
    counts[kind] = counts.get(kind, 0) + 1
    ok = len(got) == len(want) and all(
        len(g) == len(w) and all(close(g.get(k), w[k]) for k in w) for g, w in zip(got, want))
    if not ok:
        failures.append((query, tables, got[:5], want[:5]))
        print(f"MISMATCH {kind}: {query} on {tables}\n  got  {got[:5]}\n  want {want[:5]}")


def refused(e, query, expected):
    """Count a query Ballista refused (only on a cluster, only what BALLISTA_REFUSALS names
    where the query can meet it: `tag`, the dictionary column, in it; a filter of several
    terms)."""
    assert CLUSTER and expected, f"{query}: {e}"
    counts[f"refused by Ballista ({e})"] = counts.get(f"refused by Ballista ({e})", 0) + 1


def run_table(path, other):
    vals = live_values(path)
    n = len(vals["id"])
    proof["rows"] += n
    for c, v in vals.items():
        proof["nulls"][c] = proof["nulls"].get(c, 0) + sum(x is None for x in v)
    cols = list(vals)
    tbl = [("t", path)]
    for _ in range(12):
        w, keep = where(cols, vals, n)
        q = f"SELECT count(*) AS n FROM t{w}"
        try:
            check("count", q, sql(q, tbl), [{"n": len(keep)}], tbl)
        except BallistaRefused as e:
            refused(e, q, "tag" in q or "AND" in q)
        c = rng.choice(NUM)
        q = (f"SELECT count({c}) AS a, sum({c}) AS b, min({c}) AS c, max({c}) AS d FROM t{w}")
        xs = [vals[c][i] for i in keep]
        want = {"a": agg("count", xs), "b": agg("sum", xs), "c": agg("min", xs), "d": agg("max", xs)}
        try:
            got = sql(q, tbl)
            # JSON omits NULL fields: absent means NULL.
            check("aggregate", q, [{k: g.get(k) for k in want} for g in got], [want], tbl)
        except BallistaRefused as e:
            refused(e, q, "tag" in q or "AND" in q)
        g = rng.choice(["tag", "flag", "name", "k"])
        q = f"SELECT {g} AS g, count(*) AS n, sum(id) AS s FROM t{w} GROUP BY {g} ORDER BY {g}"
        groups = {}
        for i in keep:
            groups.setdefault(vals[g][i], []).append(vals["id"][i])
        want = [{"g": k, "n": len(v), "s": sum(v)} for k, v in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0]))]
        try:
            got = [{k: r.get(k) for k in ("g", "n", "s")} for r in sql(q, tbl)]
            check("group by", q, got, want, tbl)
        except BallistaRefused as e:
            refused(e, q, "tag" in q or "AND" in q)
        lim = rng.randrange(1, 20)
        c = rng.choice(cols)
        q = f"SELECT id, {c} AS v FROM t{w} ORDER BY id DESC LIMIT {lim}"
        rows = sorted(keep, key=lambda i: -vals["id"][i])[:lim]
        want = [{"id": vals["id"][i]} for i in rows]
        try:
            got = [{"id": r.get("id")} for r in sql(q, tbl)]
            check("order by limit", q, got, want, tbl)
        except BallistaRefused as e:
            refused(e, q, "tag" in q or "AND" in q)
    # A join on k with another table.
    ov = live_values(other)
    if True:
        q = "SELECT count(*) AS n, sum(a.id + b.id) AS s FROM a JOIN b ON a.k = b.k WHERE a.flag"
        by_k = {}
        for j in range(len(ov["k"])):
            by_k.setdefault(ov["k"][j], []).append(ov["id"][j])
        nn = s = 0
        for i in range(n):
            if vals["flag"][i]:
                for bid in by_k.get(vals["k"][i], []):
                    nn += 1
                    s += vals["id"][i] + bid
        got = [{k: r.get(k) for k in ("n", "s")} for r in sql(q, [("a", path), ("b", other)])]
        check("join", q, got, [{"n": nn, "s": s if nn else None}], (path, other))


def run_array(path, arr):
    shape = arr.shape
    for _ in range(6):
        d = rng.randrange(len(shape))
        lim = rng.randrange(0, shape[d] + 1)
        thr = float(np.quantile(arr, rng.random())) if arr.size else 0.0
        q = f"SELECT count(*) AS n, sum(value) AS s FROM a WHERE i{d} < {lim} AND value > {thr!r}"
        idx = np.indices(shape)[d] if len(shape) else np.zeros((), int)
        sel = (idx < lim) & (arr > thr)
        n = int(sel.sum())
        s = (arr[sel].astype("f8" if arr.dtype.kind == "f" else "i8").sum().item()) if n else None
        got = [{k: r.get(k) for k in ("n", "s")} for r in sql(q, arrays=[("a", path)])]
        check("array", q, got, [{"n": n, "s": s}], (path,))
    # LIMIT and OFFSET anywhere, mid-row included: the first elements in C order.
    flat = arr.ravel()
    order = ", ".join(f"i{d}" for d in range(len(shape))) or "value"
    for _ in range(3):
        lim = rng.randrange(0, flat.size + 2)
        off = rng.randrange(0, flat.size + 1)
        q = f"SELECT value AS v FROM a ORDER BY {order} LIMIT {lim} OFFSET {off}"
        want = [{"v": x} for x in flat[off:off + lim].tolist()]
        check("array", q, sql(q, arrays=[("a", path)]), want, (path,))
        q = f"SELECT count(*) AS n FROM (SELECT value FROM a LIMIT {lim})"
        got = [{"n": r.get("n")} for r in sql(q, arrays=[("a", path)])]
        check("array", q, got, [{"n": min(lim, flat.size)}], (path,))


tables = []
for ti in range(NTABLES):
    n = rng.choice([0, 1, 7, 300, 5000, 40000])
    keys = list(range(rng.randrange(1, 30)))
    if PARTS > 1:
        tables.append(make_parts(os.path.join(WORK, f"t{ti}"), n, keys, ti))
        continue
    ext = rng.choice([".b2z", ".b2d"])
    path = os.path.join(WORK, f"t{ti}{ext}")
    make_table(path, n, keys)
    tables.append(path)
for ti, path in enumerate(tables):
    try:
        run_table(path, tables[(ti + 1) % len(tables)])
    except Exception as e:  # noqa: BLE001 - every error fails the run, with its table
        failures.append((str(e), path, None, None))
        print(f"ERROR on {path}: {e}")
for ai in range(4):
    nd = rng.randrange(1, 4)
    shape = tuple(rng.randrange(1, 40) for _ in range(nd))
    dt = rng.choice(["<i4", "<i8", "<f8", "<u2", "<f4"])
    arr = (np.random.default_rng(SEED + ai).integers(-1000, 1000, size=shape)).astype(dt)
    if arr.dtype.kind == "f":
        arr = arr / 8
    path = os.path.join(WORK, f"a{ai}.b2nd")
    chunks = tuple(max(1, s // rng.randrange(1, 4)) for s in shape)
    b2.asarray(arr, urlpath=path, mode="w", chunks=chunks)
    try:
        run_array(path, arr)
    except Exception as e:  # noqa: BLE001
        failures.append((str(e), path, None, None))
        print(f"ERROR on {path}: {e}")

total = sum(counts.values())
# The run proves what it is named for: deleted rows and NULLs of every storage were there.
print(f"diff_sql: {proof['rows']} live rows, {proof['deleted']} deleted, NULLs per column {proof['nulls']}, "
      f"files python-blosc2 misreads {len(MISREAD)}"
      + (f", {proof['files']} table files" if PARTS > 1 else "")
      + (f", {len(LOCAL)} tables in S3 ({proof['objects']} objects)" if S3 else ""))
if S3 and (not LOCAL or len(LOCAL) == len(tables)):
    failures.append(("the tables are not both in S3 and on disk", None, None, None))
for c in ("im", "isent", "fnan", "fnull", "txt"):
    if proof["nulls"].get(c, 0) == 0 and proof["rows"] > 1000:
        failures.append((f"no NULLs in {c}", None, None, None))
print(f"diff_sql: SEED={SEED}: {total} queries ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}), "
      f"{len(failures)} failed")
if total < 30 * NTABLES:
    print(f"diff_sql: {total} queries, under the floor of {30 * NTABLES}")
if proof["rows"] > 1000 and proof["deleted"] == 0:
    print("diff_sql: no deleted rows in over 1 000 rows")
if failures or total < 30 * NTABLES or (proof["rows"] > 1000 and proof["deleted"] == 0):
    sys.exit(1)
