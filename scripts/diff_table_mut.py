"""Randomized differential test of tables changed by b2nd (`b2nd sql --write`: INSERT ...
VALUES, INSERT ... SELECT from the same table, DELETE ... WHERE, UPDATE ... SET ... WHERE,
TRUNCATE; the library's `TableMut`, through `examples/table_ops.rs`: append, delete and update
by position, add_column, rename_column, drop_column) and by python-blosc2 4.14.1 itself
(`extend`, `delete`, column assignment, `add_column`, `compact`) and `b2nd compact`, in random
order on the same `.b2d` tables python wrote.

Each table has the kinds b2nd appends to: `id` int64 (no default), `x` float64
nullable in a mask, `k` int32 nullable by the sentinel -1, `f` bool (default False), `s` string
of at most 5 characters (default ""), `ts` timestamp in ms, `u` utf8 nullable in a mask
(python's extend is preceded by the cut of deleted rows' strings b2nd makes, which
python-blosc2 4.14.1 omits: meaning-audit.md), `d` dictionary nullable (a vocabulary that
grows: new values join the dictionary from both writers), `l` list of int32 nullable (SQL
INSERT ... VALUES writes NULL there, as DataFusion 55 here has no list literal; INSERT ...
SELECT copies lists; python writes lists; python's extend and delete are followed by the
cut of the deleted rows' items b2nd makes); python's `add_column` and b2nd's add int32
columns (`e0`, `e1`, ...; at most two at a time) with a default, which b2nd's INSERTs
(naming the other columns) fill; b2nd renames and drops them. The library's appends leave
out some of the columns that have a default (they take it). A model (a list of live rows, in
live order) follows every step; after each step python-blosc2 (a fresh process, as any user
of the file) must read the model: `nrows`, every column's values and nulls, and `where()` on
`id`; and b2nd must read it too (`SELECT ... ORDER BY id`). Predicates follow SQL's
three-valued logic (a NULL keeps the row).

Usage: SEED=S python scripts/diff_table_mut.py B2ND TABLE_OPS DIR STEPS [TABLES]
(TABLE_OPS: the `table_ops` example, `cargo build --example table_ops`.)
(SEED defaults to a fresh one, printed; the run fails on any mismatch or error.)
"""

import dataclasses
import json
import os
import random
import shutil
import struct
import subprocess
import sys

import blosc2 as b2
import numpy as np
from dead_rows import compact_cells, cut_dead_cells, cut_dead_utf8

assert b2.__version__ == "4.14.1", b2.__version__

B2ND, TABLE_OPS, DIR, STEPS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
TABLES = int(sys.argv[5]) if len(sys.argv) > 5 else 4
SEED = int(os.environ.get("SEED") or random.SystemRandom().randrange(1 << 30))
print(f"diff_table_mut: SEED={SEED} (replays)")
rng = random.Random(SEED)
shutil.rmtree(DIR, ignore_errors=True)
os.makedirs(DIR)


@dataclasses.dataclass
class Row:
    id: int = b2.field(b2.int64())
    ts: np.datetime64 = b2.field(b2.timestamp(unit="ms"))
    x: float = b2.field(b2.float64(nullable=True), default=None)
    k: int = b2.field(b2.int32(nullable=True, null_value=-1), default=None)
    f: bool = b2.field(b2.bool(), default=False)
    s: str = b2.field(b2.string(max_length=5), default="")
    u: str = b2.field(b2.utf8(nullable=True), default=None)
    d: str = b2.field(b2.dictionary(nullable=True), default=None)


@dataclasses.dataclass
class RowWithList(Row):
    l: list[int] = b2.field(b2.list(b2.int32(), nullable=True), default=None)


# The columns of the table at hand (half the tables have `l`).
COLS = ["id", "ts", "x", "k", "f", "s", "u", "d"]
WORDS = ["red", "blue", "green", "é", "it's"]
TEXT = ["", "a", "b", "abc", "héllo", "it's", "日本語", "x" * 40]
next_id = [0]


def new_row():
    next_id[0] += 1
    return {
        "id": next_id[0],
        "ts": rng.randrange(-(10**12), 10**12),
        "x": None if rng.random() < 0.2 else rng.choice([0.0, -1.5, 2.25, rng.uniform(-1e6, 1e6)]),
        "k": None if rng.random() < 0.2 else rng.randrange(0, 1000),
        "f": rng.random() < 0.5,
        "s": rng.choice(["", "a", "abc", "héllo", "zz"]),
        "u": None if rng.random() < 0.15 else rng.choice(TEXT) + rng.choice(TEXT),
        "d": word(),
        "l": None if rng.random() < 0.2 else [rng.randrange(-(2**31), 2**31) for _ in range(rng.randrange(0, 5))],
    }


def word():
    """A dictionary value: mostly a known word, sometimes a new one, sometimes a null."""
    r = rng.random()
    if r < 0.15:
        return None
    if r < 0.25:
        return f"w{rng.randrange(10**6)}"
    return rng.choice(WORDS)


def python_extend(path, rows):
    t = b2.open(path, mode="a")
    cut_dead_utf8(t)
    cut_dead_cells(t)
    t.extend({
        "id": np.array([r["id"] for r in rows], dtype=np.int64),
        "ts": np.array([r["ts"] for r in rows], dtype="datetime64[ms]"),
        "x": [r["x"] for r in rows],
        # python-blosc2 4.14.1's extend cannot take None for an integer sentinel column:
        # the sentinel itself is a null (meaning-audit.md).
        "k": [-1 if r["k"] is None else r["k"] for r in rows],
        "f": [r["f"] for r in rows],
        "s": [r["s"] for r in rows],
        "u": [r["u"] for r in rows],
        "d": [r["d"] for r in rows],
        **({"l": [r["l"] for r in rows]} if "l" in COLS else {}),
    })
    t.close()


def sql_literal(v, col):
    if v is None or col == "l":
        return "NULL"
    if col == "ts":
        return str(v)  # INSERT casts it to the column's Timestamp(ms): a count of ms
    if col == "f":
        return "true" if v else "false"
    if col in ("s", "u", "d"):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def b2nd(path, query, write=False):
    args = [B2ND, "sql", query, "--table", f"t={path}", "--format", "json"]
    if write:
        args.append("--write")
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{query}: {p.stderr.strip()}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


# The declared defaults of the columns that have one (what a library append leaving the
# column out writes).
DEFAULTS = {"x": None, "k": None, "f": False, "s": "", "u": None, "d": None, "l": None}
# Each column's type in `table_ops`'s JSON.
OPS_TYPES = {"id": "i64", "ts": "ts_ms", "x": "f64bits", "k": "i32", "f": "bool", "s": "str",
             "u": "str", "d": "str", "l": "ints"}


def ops_columns(rows, cols):
    """`table_ops`'s COLUMNS for the values of `cols` in `rows` (extras are int32)."""
    def enc(c, v):
        if v is not None and c == "x":
            return struct.unpack("<Q", struct.pack("<d", v))[0]
        return v
    return {c: {"type": OPS_TYPES.get(c, "i32"), "values": [enc(c, r[c]) for r in rows]}
            for c in cols}


def table_ops(path, op):
    p = subprocess.run([TABLE_OPS, path, json.dumps(op)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"table_ops {op['op']}: {p.stderr.strip()}")
    return json.loads(p.stdout)["count"]


# Predicates: (SQL text, model function returning True / False / None).
def predicate():
    kind = rng.randrange(11)
    if kind == 0:
        m, r = rng.randrange(2, 6), rng.randrange(0, 2)
        return f"id % {m} = {r}", lambda row: row["id"] % m == r
    if kind == 1:
        v = rng.uniform(-1e6, 1e6)
        return f"x > {v!r}", lambda row: None if row["x"] is None else row["x"] > v
    if kind == 2:
        return "x IS NULL", lambda row: row["x"] is None
    if kind == 3:
        v = rng.randrange(0, 1000)
        return f"k <= {v}", lambda row: None if row["k"] is None else row["k"] <= v
    if kind == 4:
        return "f", lambda row: row["f"]
    if kind == 5:
        v = rng.choice(["", "a", "abc"])
        return f"s = '{v}'", lambda row: row["s"] == v
    if kind == 6:
        return "u IS NULL", lambda row: row["u"] is None
    if kind == 7:
        v = rng.choice(TEXT)
        return (f"u >= {sql_literal(v, 'u')}",
                lambda row: None if row["u"] is None else row["u"].encode() >= v.encode())
    if kind == 8:
        v = rng.choice(WORDS)
        return (f"d = {sql_literal(v, 'd')}",
                lambda row: None if row["d"] is None else row["d"] == v)
    if kind == 9:
        return "d IS NULL", lambda row: row["d"] is None
    a_sql, a = predicate()
    b_sql, b = predicate()

    def both(row):
        x, y = a(row), b(row)
        if x is False or y is False:
            return False
        if x is None or y is None:
            return None
        return True

    return f"({a_sql}) AND ({b_sql})", both


# New values for UPDATE: (column, SQL text, model function of the row).
def assignment(col):
    if col == "x":
        return rng.choice([
            ("x", "NULL", lambda r: None),
            ("x", "x * 2", lambda r: None if r["x"] is None else r["x"] * 2),
            *[("x", repr(v), lambda r, v=v: v) for v in [rng.uniform(-1e6, 1e6), 0.5]],
        ])
    if col == "k":
        v = rng.randrange(0, 1000)
        return rng.choice([
            ("k", "NULL", lambda r: None),
            ("k", "k + 1", lambda r: None if r["k"] is None else r["k"] + 1),
            ("k", str(v), lambda r: v),
        ])
    if col == "f":
        return rng.choice([
            ("f", "NOT f", lambda r: not r["f"]),
            ("f", "true", lambda r: True),
        ])
    if col == "u":
        v = rng.choice(TEXT) + rng.choice(TEXT)
        return rng.choice([
            ("u", "NULL", lambda r: None),
            ("u", "u || 'ü'", lambda r: None if r["u"] is None else r["u"] + "ü"),
            ("u", sql_literal(v, "u"), lambda r: v),
        ])
    if col == "l":
        return ("l", "NULL", lambda r: None)
    if col == "d":
        v = word()
        return rng.choice([
            ("d", "NULL", lambda r: None),
            ("d", sql_literal(v, "d"), lambda r: v),
        ])
    v = rng.choice(["", "b", "héllo", "zzz"])
    return ("s", f"'{v}'", lambda r: v)


def python_update(path, positions, col, values):
    t = b2.open(path, mode="a")
    if col == "k":
        values = [-1 if v is None else v for v in values]  # the sentinel is the null
    t[col][positions] = values
    t.close()


def python_reads(path, model, where_id):
    t = b2.open(path, mode="r")
    got = {"nrows": t.nrows}
    want = {"nrows": len(model)}
    for c in COLS + [e for e, _ in extras]:
        col = t[c]
        vals = col[:]
        nulls = [bool(v) for v in np.asarray(col.is_null())]
        if c == "ts":
            vals = np.asarray(vals).astype("datetime64[ms]").astype(np.int64).tolist()
        elif isinstance(vals, np.ma.MaskedArray):
            vals = vals.data.tolist()
        elif isinstance(vals, list):
            pass
        else:
            vals = np.asarray(vals).tolist()
        got[c] = [None if n else v for v, n in zip(vals, nulls)]
        want[c] = [r[c] for r in model]
    got["where"] = sorted(np.asarray(t.where(f"id > {where_id}")["id"][:]).tolist())
    want["where"] = sorted(r["id"] for r in model if r["id"] > where_id)
    return got, want


def b2nd_reads(path, model):
    cols = COLS + [e for e, _ in extras]
    rows = b2nd(path, "SELECT id, CAST(ts AS BIGINT) AS ts, " + ", ".join(COLS[2:])
                + "".join(f", {e}" for e, _ in extras) + " FROM t ORDER BY id")
    got = [{c: r.get(c) for c in cols} for r in rows]
    want = sorted(({c: r[c] for c in cols} for r in model), key=lambda r: r["id"])
    return got, want


def with_defaults(rows):
    """`rows` with the added columns' defaults (what python's extend and b2nd's INSERT
    naming the original columns leave there)."""
    return [dict(r, **{e: d for e, d in extras}) for r in rows]


failures = []
steps = 0
ran = {}
for ti in range(TABLES):
    path = os.path.join(DIR, f"t{ti}.b2d")
    extras = []
    next_extra = [0]
    with_list = rng.random() < 0.5
    COLS = ["id", "ts", "x", "k", "f", "s", "u", "d"] + (["l"] if with_list else [])
    model = [new_row() for _ in range(rng.randrange(0, 3000))]
    t = b2.CTable(RowWithList if with_list else Row, urlpath=path, mode="w")
    t.close()
    if model:
        python_extend(path, model)
    if model and rng.random() < 0.7:
        gone = sorted(set(rng.randrange(len(model)) for _ in range(rng.randrange(1, 20))))
        t = b2.open(path, mode="a")
        t.delete(gone)
        t.close()
        model = [r for i, r in enumerate(model) if i not in set(gone)]
    for step in range(STEPS):
        op = rng.choices(
            ["insert", "insert_select", "delete", "update", "py_extend", "py_delete",
             "py_update", "truncate", "py_add_column", "py_compact", "compact",
             "lib_append", "lib_delete", "lib_update", "lib_add_column", "lib_rename", "lib_drop"],
            [5, 1, 4, 4, 3, 3, 2, 0.3, 0.4, 0.7, 0.7, 3, 2, 3, 0.4, 0.3, 0.3],
        )[0]
        what = op
        try:
            if op == "insert":
                rows = [new_row() for _ in range(rng.randrange(1, 6))]
                values = ", ".join(
                    "(" + ", ".join(sql_literal(r[c], c) for c in COLS) + ")" for r in rows
                )
                what = f"INSERT INTO t ({', '.join(COLS)}) VALUES {values}"
                for r in rows:
                    r["l"] = None  # no list literal: VALUES writes NULL
                out = b2nd(path, what, write=True)
                assert out == [{"count": len(rows)}], out
                model += with_defaults(rows)
            elif op == "insert_select":
                cut = rng.randrange(0, next_id[0] + 1)
                shift = 10**9 * (step + 1) + ti * 10**7
                what = (f"INSERT INTO t ({', '.join(COLS)}) SELECT id + {shift}, {', '.join(COLS[1:])} "
                        f"FROM t WHERE id < {cut}")
                copies = with_defaults([dict(r, id=r["id"] + shift) for r in model if r["id"] < cut])
                out = b2nd(path, what, write=True)
                assert out == [{"count": len(copies)}], out
                model += copies
            elif op == "delete":
                text, fn = predicate()
                what = f"DELETE FROM t WHERE {text}"
                keep = [r for r in model if fn(r) is not True]
                out = b2nd(path, what, write=True)
                assert out == [{"count": len(model) - len(keep)}], out
                model = keep
            elif op == "update":
                sets = [assignment(c) for c in rng.sample(COLS[2:], rng.randrange(1, 4))]
                text, fn = predicate() if rng.random() < 0.9 else ("true", lambda r: True)
                what = f"UPDATE t SET {', '.join(f'{c} = {v}' for c, v, _ in sets)} WHERE {text}"
                hit = [r for r in model if fn(r) is True]
                out = b2nd(path, what, write=True)
                assert out == [{"count": len(hit)}], out
                for r in hit:
                    new = {c: f(r) for c, _, f in sets}
                    r.update(new)
            elif op == "py_update" and model:
                positions = sorted(set(rng.randrange(len(model)) for _ in range(rng.randrange(1, 8))))
                rng.shuffle(positions)
                col, _, _ = assignment(rng.choice(COLS[2:]))
                values = [new_row()[col] for _ in positions]
                what = f"python {col}[{positions}] = {values}"
                python_update(path, positions, col, values)
                for p, v in zip(positions, values):
                    model[p][col] = v
            elif op == "truncate":
                what = "TRUNCATE TABLE t"
                out = b2nd(path, what, write=True)
                assert out == [{"count": len(model)}], out
                model = []
            elif op == "py_extend":
                rows = [new_row() for _ in range(rng.randrange(1, 40))]
                python_extend(path, rows)
                model += with_defaults(rows)
            elif op in ("py_add_column", "lib_add_column") and len(extras) < 2:
                name, default = f"e{next_extra[0]}", rng.randrange(-1000, 1000)
                next_extra[0] += 1
                if op == "py_add_column":
                    what = f"python add_column({name!r}, int32, default={default})"
                    t = b2.open(path, mode="a")
                    t.add_column(name, b2.field(b2.int32(), default=default))
                    t.close()
                else:
                    what = f"b2nd add_column({name!r}, int32, default={default})"
                    table_ops(path, {"op": "add_column", "name": name, "default": default})
                extras.append((name, default))
                for r in model:
                    r[name] = default
            elif op == "lib_append":
                rows = [new_row() for _ in range(rng.randrange(1, 60))]
                given = ["id", "ts"] + [c for c in COLS[2:] if rng.random() < 0.8]
                for r in rows:
                    for c in COLS[2:]:
                        if c not in given:
                            r[c] = DEFAULTS[c]
                    for e, default in extras:
                        r[e] = default
                for e, _ in extras:
                    if rng.random() < 0.5:
                        given.append(e)
                        for r in rows:
                            r[e] = rng.randrange(-(2**31), 2**31)
                what = f"b2nd append {len(rows)} rows of {given}"
                assert table_ops(path, {"op": "append", "columns": ops_columns(rows, given)}) == len(rows)
                model += rows
            elif op == "lib_delete" and model:
                gone = sorted(set(rng.randrange(len(model)) for _ in range(rng.randrange(1, 12))))
                what = f"b2nd delete {gone}"
                assert table_ops(path, {"op": "delete", "rows": gone}) == len(gone)
                model = [r for i, r in enumerate(model) if i not in set(gone)]
            elif op == "lib_update" and model:
                positions = sorted(set(rng.randrange(len(model)) for _ in range(rng.randrange(1, 10))))
                rng.shuffle(positions)
                cols = rng.sample(COLS[2:] + [e for e, _ in extras], rng.randrange(1, 4))
                news = []
                for _ in positions:
                    n = new_row()
                    news.append({c: n[c] if c in n else rng.randrange(-(2**31), 2**31) for c in cols})
                what = f"b2nd update rows {positions} of {cols}"
                assert table_ops(path, {"op": "update", "rows": positions,
                                        "columns": ops_columns(news, cols)}) == len(positions)
                for p, n in zip(positions, news):
                    model[p].update(n)
            elif op == "lib_rename" and extras:
                i = rng.randrange(len(extras))
                old, default = extras[i]
                new = f"e{next_extra[0]}"
                next_extra[0] += 1
                what = f"b2nd rename_column({old!r}, {new!r})"
                table_ops(path, {"op": "rename_column", "old": old, "new": new})
                extras[i] = (new, default)
                for r in model:
                    r[new] = r.pop(old)
            elif op == "lib_drop" and extras:
                old, _ = extras.pop(rng.randrange(len(extras)))
                what = f"b2nd drop_column({old!r})"
                table_ops(path, {"op": "drop_column", "name": old})
                for r in model:
                    del r[old]
            elif op == "py_compact":
                # python-blosc2 4.14.1's compact leaves a list column's file as it was (its
                # rows then pair with the wrong items: meaning-audit.md); the list column is
                # compacted after it as b2nd compacts it.
                what = "python compact()"
                compact_cells(b2.open(path, mode="a"), path)
            elif op == "compact":
                what = "b2nd compact"
                p = subprocess.run([B2ND, "compact", path], capture_output=True, text=True)
                if p.returncode != 0:
                    raise RuntimeError(f"b2nd compact: {p.stderr.strip()}")
            elif op == "py_delete" and model:
                gone = sorted(set(rng.randrange(len(model)) for _ in range(rng.randrange(1, 6))))
                # Never every row: python-blosc2 4.14.1 then keeps the arrays (no trim), and
                # its next extend of a batch without nulls reads as null where a deleted null
                # was (meaning-audit.md), a defect of python alone.
                if len(gone) == len(model):
                    gone = gone[:-1]
                what = f"python delete {gone}"
                t = b2.open(path, mode="a")
                t.delete(gone)
                # The dead strings and items past the table's end cut, as b2nd's delete cuts
                # them: python-blosc2 4.14.1 keeps them, and then fails to read a utf8
                # column whose mask its close trimmed (meaning-audit.md).
                cut_dead_utf8(t)
                cut_dead_cells(t)
                t.close()
                model = [r for i, r in enumerate(model) if i not in set(gone)]
            steps += 1
            ran[op] = ran.get(op, 0) + 1
            if os.environ.get("VERBOSE"):
                print(f"  table {ti} step {step}: {what[:150]} -> {len(model)} rows")
            got, want = python_reads(path, model, rng.randrange(0, next_id[0] + 1))
            for key in want:
                if got[key] != want[key]:
                    g, w = got[key], want[key]
                    if isinstance(w, list) and isinstance(g, list):
                        i = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
                        raise AssertionError(
                            f"python reads {key}[{i}] = {g[i:i + 3]}, model {w[i:i + 3]} "
                            f"({len(g)} rows, model {len(w)}; row id {model[i]['id'] if i < len(model) else None})")
                    raise AssertionError(f"python reads {key}: {g} != model {w}")
            got, want = b2nd_reads(path, model)
            if got != want:
                bad = next(i for i, (g, w) in enumerate(zip(got + [None] * len(want), want + [None] * len(got))) if g != w)
                raise AssertionError(f"b2nd reads row {bad}: {got[bad:bad + 1]} != model {want[bad:bad + 1]} ({len(got)} rows, model {len(want)})")
        except Exception as e:
            failures.append(f"table {ti} step {step} ({what[:200]}): {type(e).__name__}: {e}")
            break
    print(f"table {ti}{' (with l)' if with_list else ''}: {len(model)} live rows after {step + 1} steps")

print(f"{steps} steps, {len(failures)} failed (SEED={SEED}); by kind: "
      + ", ".join(f"{k} {v}" for k, v in sorted(ran.items())))
if failures:
    print("\n".join(failures))
    sys.exit(1)
if steps < TABLES * STEPS // 2:
    sys.exit(f"only {steps} steps ran")
