"""Generate the CTable fixtures (tests/data/tables) with python-blosc2 4.14.1, and for each
table an `<name>.json` of what python-blosc2 reads from it: row count, the schema's columns
(name, kind), and for every column python-blosc2 exposes, `t[name].to_numpy()` (dtype, shape,
C-order bytes in hex), its nulls (`is_null()`) and, for utf8 columns, the values.

Usage: python scripts/gen_table_fixtures.py tests/data/tables
"""

import dataclasses
import json
import os
import shutil
import sys
import zipfile

import blosc2 as b2
import numpy as np

assert b2.__version__ == "4.14.1", b2.__version__

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
b2.set_nthreads(1)


def p(name):
    return os.path.join(OUT, name)


@dataclasses.dataclass
class Row:
    id: int = b2.field(b2.int64())
    score: float = b2.field(b2.float64(nullable=True), default=None)
    name: str = b2.field(b2.string(max_length=8), default="")
    opt: int = b2.field(b2.int32(nullable=True, null_storage="mask"), default=None)
    sent: int = b2.field(b2.int16(nullable=True, null_value=-1), default=None)
    fsent: float = b2.field(b2.float32(nullable=True, null_value=float("nan")), default=None)
    txt: str = b2.field(b2.utf8(nullable=True), default=None)
    flag: bool = b2.field(b2.bool(), default=False)
    vec: np.ndarray = b2.field(b2.ndarray((2,), dtype="u1"), default=None)
    when: np.datetime64 = b2.field(b2.timestamp(unit="s"), default=None)
    tag: str = b2.field(b2.dictionary(value_type=b2.vlstring()), default="a")
    items: list[int] = b2.field(b2.list(b2.int32()), default=None)


def rows(n):
    for i in range(n):
        yield Row(
            id=i,
            score=None if i == 2 else i * 1.5,
            name=f"n{i}",
            opt=None if i % 3 == 0 else i,
            sent=-1 if i == 3 else i * 10,
            fsent=float("nan") if i == 6 else i / 4,
            txt=None if i == 4 else "héllo" * i,
            flag=i % 2 == 0,
            vec=np.array([i, 255 - i], dtype="u1"),
            when=np.datetime64(1_700_000_000 + i, "s"),
            tag="abc"[i % 3],
            items=list(range(i % 4)),
        )


def make(path):
    t = b2.CTable(Row, urlpath=path, mode="w")
    for r in rows(9):
        t.append(r)
    t.delete([1, 5, 8])
    t.close()


def describe(name, t):
    out = {"n_rows": len(t), "columns": [], "values": {}}
    schema = t.schema_dict() if hasattr(t, "schema_dict") else None
    for c in t._schema.columns:
        spec = c.spec.to_metadata_dict()
        out["columns"].append({"name": c.name, "kind": spec["kind"]})
    for c in out["columns"]:
        col = t[c["name"]]
        v = {}
        if c["kind"] not in ("timestamp", "ndarray", "complex64", "complex128"):
            rows = col[:]
            if isinstance(rows, np.ma.MaskedArray):
                rows = [None if m else x for x, m in zip(rows.data.tolist(), np.ma.getmaskarray(rows).tolist())]
            elif isinstance(rows, np.ndarray):
                rows = rows.tolist()
            rows = [None if isinstance(x, float) and x != x else x for x in rows]
            if c["kind"] == "vlbytes":
                v["rows_hex"] = [None if x is None else x.hex() for x in rows]
            else:
                v["rows"] = rows
        try:
            arr = col.to_numpy()
        except Exception as e:
            v["python_error"] = f"{type(e).__name__}: {e}"
            out["values"][c["name"]] = v
            continue
        if c["kind"] == "utf8":
            v["strings"] = [None if isinstance(x, np.ma.core.MaskedConstant) or x is None else str(x) for x in col[:]]
        elif arr.dtype.kind != "O":
            arr = np.ascontiguousarray(arr)
            v["dtype"] = arr.dtype.str
            v["shape"] = list(arr.shape)
            v["hex"] = arr.tobytes().hex()
        try:
            v["nulls"] = [bool(x) for x in np.asarray(col.is_null())]
        except Exception:
            pass
        out["values"][c["name"]] = v
    with open(p(name + ".json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return out


make(p("basic.b2z"))
make(p("basic.b2d"))
for name in ["basic.b2z", "basic.b2d"]:
    t = b2.open(p(name))
    assert isinstance(t, b2.CTable), type(t)
    d = describe(name, t)
    # The fixture proves what it is named for: deleted rows, nulls of both storages.
    assert d["n_rows"] == 6, d["n_rows"]
    assert any(d["values"]["opt"]["nulls"]) and any(d["values"]["sent"]["nulls"])
# Nested columns (a struct flattened into `trip.lon`, `trip.lat` at `_cols/trip/...`), a
# list of strings, and a field name needing escapes, as from_arrow writes them.
import pyarrow as pa

arrow = pa.table(
    {
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "trip": pa.array(
            [{"lon": 1.5, "lat": 2.5}, None, {"lon": 3.5, "lat": None}, {"lon": 5.5, "lat": 6.5}],
            pa.struct([("lon", pa.float64()), ("lat", pa.float64())]),
        ),
        "tags": pa.array([["a"], [], None, ["b", "c"]], pa.list_(pa.string())),
        "50%/x": pa.array([1.0, 2.0, 3.0, 4.0], pa.float32()),
    }
)
t = b2.CTable.from_arrow(arrow, urlpath=p("nested.b2z"), mode="w")
t.close()
t = b2.open(p("nested.b2z"))
d = describe("nested.b2z", t)
assert [c["name"] for c in d["columns"]] == ["id", "trip.lon", "trip.lat", "tags", "50%\\/x"], d["columns"]
with zipfile.ZipFile(p("nested.b2z")) as z:
    names = z.namelist()
    assert "_cols/trip/lon.b2nd" in names and "_cols/50%25%2Fx.b2nd" in names, names

with zipfile.ZipFile(p("basic.b2z")) as z:
    names = z.namelist()
    assert "_cols/opt.notnull.b2nd" in names and "_cols/txt.utf8.b2nd" in names, names

# Crafted: basic.b2z with its scalar columns `opt` (mask nulls) and `sent` (sentinel nulls)
# stored as 2-D arrays, two values per row. Only `ndarray` columns hold a sub-array per row,
# so a reader must refuse it by name (values and null flags would not line up).
phys = len(b2.open(p("basic.b2z"))._valid_rows)
with zipfile.ZipFile(p("basic.b2z")) as src, zipfile.ZipFile(p("crafted_scalar_2d.b2z"), "w") as dst:
    for info in src.infolist():
        data = src.read(info)
        col = {"_cols/opt.b2nd": "<i4", "_cols/sent.b2nd": "<i2"}.get(info.filename)
        if col:
            vals = np.arange(phys * 2, dtype=col).reshape(phys, 2)
            vals[3] = -1
            data = b2.asarray(vals).to_cframe()
        dst.writestr(info, data)
with zipfile.ZipFile(p("crafted_scalar_2d.b2z")) as z:
    for n in ["_cols/opt.b2nd", "_cols/sent.b2nd"]:
        assert b2.ndarray_from_cframe(z.read(n)).shape == (phys, 2), n
        assert z.getinfo(n).compress_type == zipfile.ZIP_STORED
print("table fixtures written to", OUT)

# SUMMARY indexes (python-blosc2 builds one per numeric column on close): 3000 rows in blocks
# of 250 rows (12 segments), deleted rows across segments, NaN (f), values beyond i64 (u), a
# mask-null column with an all-null block (x), sentinel nulls (s); and a copy whose indexes a
# later write made stale. `<name>.summary.json`: python's records and descriptor flags.


@dataclasses.dataclass
class Summ:
    id: int = b2.field(b2.int64(), chunks=(1000,), blocks=(250,))
    f: float = b2.field(b2.float32(), chunks=(1000,), blocks=(250,))
    u: int = b2.field(b2.uint64(), chunks=(1000,), blocks=(250,))
    x: float = b2.field(b2.float64(nullable=True, null_storage="mask"), default=None, chunks=(1000,), blocks=(250,))
    s: int = b2.field(b2.int16(nullable=True, null_value=-1), default=None, chunks=(1000,), blocks=(250,))


def summ_rows(n):
    for i in range(n):
        yield (
            3000 - i if i < 1500 else i,
            float("nan") if i % 500 == 3 or 1000 <= i < 1250 else i * 0.5,
            2**63 + i,
            None if i % 7 == 0 or 500 <= i < 750 else float(i % 100) - 50.0,
            -1 if i % 11 == 0 else i % 50,
        )


def make_summ(path, stale):
    t = b2.CTable(Summ, urlpath=path, mode="w", expected_size=3000)
    t.extend(list(summ_rows(3000)))
    t.delete(list(range(100, 400)) + list(range(2990, 3000)))
    t.close()
    if stale:
        # A value write to the closed table: python marks every index stale and keeps the
        # old records (a write before the first close is summarised on close instead).
        t = b2.open(path, mode="a")
        t["id"][5] = -7
        t.close()


def describe_summaries(name):
    t = b2.open(p(name))
    cat = t._storage.load_index_catalog()
    out = {"physical_rows": len(t._valid_rows), "n_rows": len(t), "columns": {}}
    for c in ["id", "f", "u", "x", "s"]:
        d = cat[c]
        level = d["levels"]["block"]
        with b2.TreeStore(p(name), mode="r") as st:
            recs = st[f"/_indexes/{c}/summary.block"][:]
        out["columns"][c] = {
            "stale": bool(d.get("stale", False)),
            "segment_len": level["segment_len"],
            "min": [float(v) if recs.dtype["min"].kind == "f" else int(v) for v in recs["min"]],
            "max": [float(v) if recs.dtype["max"].kind == "f" else int(v) for v in recs["max"]],
            "flags": [int(v) for v in recs["flags"]],
        }
    with open(p(name + ".summary.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return out


for name, stale in [("summaries.b2z", False), ("summaries_stale.b2z", True)]:
    make_summ(p(name), stale)
    d = describe_summaries(name)
    # The fixture proves what it is named for: 12 segments per column, fresh or stale indexes,
    # NaN and all-null segments, values beyond i64, deleted rows.
    for c, v in d["columns"].items():
        assert v["stale"] == stale and v["segment_len"] == 250 and len(v["flags"]) == 12, (name, c, v)
    # python drops the trailing deleted rows (2990 physical rows), keeps the others.
    assert d["physical_rows"] == 2990 and d["n_rows"] == 2690, d
    assert d["columns"]["f"]["flags"][4] & 1 and any(x & 2 for x in d["columns"]["f"]["flags"])
    assert d["columns"]["x"]["flags"][2] & 4, d["columns"]["x"]["flags"]
    assert d["columns"]["u"]["max"][-1] > 2**63

# Computed columns (virtual: only the schema's `computed_columns` entry is stored): numbers of
# several widths, mask nulls (the raw slot values are the operands, as python evaluates them),
# deleted rows, strings for `contains`, and a DSL kernel column b2nd lists but cannot evaluate.
# `computed.b2z.json`: python's column names, each computed column's readable expression,
# dtype and values (`t[name][:]`, C-order bytes in hex).


@dataclasses.dataclass
class Comp:
    a: int = b2.field(b2.int32(), default=0)
    b: float = b2.field(b2.float32(nullable=True, null_storage="mask"), default=None)
    c: int = b2.field(b2.int8(), default=0)
    u: int = b2.field(b2.uint16(), default=0)
    g: float = b2.field(b2.float64(), default=0.0)
    k: bool = b2.field(b2.bool(), default=False)
    s: str = b2.field(b2.string(max_length=6), default="")


COMPUTED = {
    "total": "a * 2 + b",
    "both": "(a > 3) & (c < 2)",
    "mixed": "a + c - u",
    "wide": "c * 300 + u",
    "ratio": "g * 1.5 - a",
    "fl": "a // 3 + c % 4",
    "pw": "a ** 2",
    "pick": "where(a > 4, a, c)",
    "trig": "sqrt(abs(g)) + sin(a) * cos(b)",
    "half": "sqrt(c)",
    "flag": "~k | (g < 0)",
    "has1": "contains(s, 'x1')",
}


def make_computed(path):
    t = b2.CTable(Comp, urlpath=path, mode="w")
    t.extend(
        [
            (i * 7 - 20, None if i % 5 == 2 else i * 0.75, (i * 37) % 256 - 128, i * 1000 % 65536, (i - 9) * 1.25, i % 3 == 0, f"x{i}")
            for i in range(23)
        ]
    )
    t.delete([1, 8, 9, 22])
    for name, e in COMPUTED.items():
        t.add_computed_column(name, e)

    @b2.dsl_kernel
    def kern(x, y):
        return x + y

    t.add_computed_column("dsl", kern, inputs=["a", "g"])
    t.close()


make_computed(p("computed.b2z"))
t = b2.open(p("computed.b2z"))
out = {"col_names": list(t.col_names), "n_rows": len(t), "computed": {}}
for name in t.col_names:
    cc = t._computed_cols.get(name)
    if cc is None:
        continue
    v = {"readable": t._readable_computed_expr(cc), "kind": cc.get("kind", "expression")}
    if v["kind"] == "expression":
        arr = np.ascontiguousarray(np.asarray(t[name][:]))
        assert arr.dtype == np.dtype(cc["dtype"]), (name, arr.dtype, cc["dtype"])
        v.update(dtype=arr.dtype.str, hex=arr.tobytes().hex())
    out["computed"][name] = v
with open(p("computed.b2z.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
# The fixture proves what it is named for: computed columns in the schema and nowhere else,
# a mask-null operand with nulls, deleted rows, a float16 result, a DSL column.
with b2.TreeStore(p("computed.b2z"), mode="r") as st:
    meta = st["/_meta"]
    schema = json.loads(meta.vlmeta["schema"])
names = [c["name"] for c in schema["computed_columns"]]
assert names == list(COMPUTED) + ["dsl"], names
with zipfile.ZipFile(p("computed.b2z")) as z:
    assert not [n for n in z.namelist() if any(f"_cols/{c}." in n for c in names)], z.namelist()
    assert "_cols/b.notnull.b2nd" in z.namelist()
assert out["computed"]["half"]["dtype"] == "<f2" and out["computed"]["dsl"]["kind"] == "dsl"
assert len(t._valid_rows) > len(t) == 19, len(t)
print("computed-column fixture written")

# Arrow-serialized list columns (`from_arrow(..., list_serializer="arrow")`, as `from_parquet`
# wrote them from 4.3 to 4.13): BatchArray blocks that are Arrow IPC streams; and a copy whose
# blocks are bare record-batch messages (the older form), the schema only in the metalayer;
# and a `.b2d` copy (for changes python replays through its own files).
# A deleted row. `<name>.json`: python's rows of every list column (`t[name][:]`) and the
# Arrow type each was written with.
ARROW_LISTS = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "li": pa.array([[1, 2], None, [], [3, None], [7]], pa.list_(pa.int32())),
        "ls": pa.array([["a", "é"], [], None, ["b"], ["c", "d", "e"]], pa.list_(pa.string())),
        "lf": pa.array([[0.5], [1.5, None], None, [], [2.0]], pa.list_(pa.float64())),
        "lst": pa.array(
            [[{"x": 1, "y": "p"}], None, [{"x": None, "y": "q"}, {"x": 3, "y": None}], [], [{"x": 4, "y": "r"}]],
            pa.list_(pa.struct([("x", pa.int64()), ("y", pa.string())])),
        ),
    }
)


def arrow_list_table(path, bare):
    import blosc2.batch_array as ba

    orig = ba.BatchArray._serialize_arrow_block
    if bare:

        def bare_block(self, items):
            batch = pa.record_batch([items], schema=self._get_arrow_schema())
            return batch.serialize().to_pybytes()

        ba.BatchArray._serialize_arrow_block = bare_block
    try:
        t = b2.CTable.from_arrow(ARROW_LISTS, urlpath=path, mode="w", list_serializer="arrow")
        t.delete([2])  # live rows are a subset of the stored Arrow rows
        t.close()
    finally:
        ba.BatchArray._serialize_arrow_block = orig


for name, bare in [("arrow_lists.b2z", False), ("arrow_lists_bare.b2z", True),
                   ("arrow_lists.b2d", False)]:
    arrow_list_table(p(name), bare)
    t = b2.open(p(name))
    rows = {c: [x for x in t[c][:]] for c in ["li", "ls", "lf", "lst"]}
    types = {c: str(ARROW_LISTS.schema.field(c).type) for c in rows}
    assert len(t) == 4 and rows["li"][2] == [3, None], rows["li"]
    with open(p(name + ".json"), "w") as f:
        json.dump({"n_rows": len(t), "rows": rows, "arrow_types": types}, f, indent=1,
                  sort_keys=True)
    # The fixture proves what it is named for: arrow-serialized BatchArray columns, whose
    # blocks are IPC streams (or, bare, are not, and the schema is in the metalayer).
    with b2.TreeStore(p(name), mode="r") as st:
        col = st["/_cols/li"]
        meta = col.schunk.meta["batcharray"]
        assert meta["serializer"] == "arrow" and meta["arrow_schema"], meta
        raw = b2.blosc2_ext.vldecompress(col.schunk.get_chunk(0))[0]
        assert raw[:4] == b"\xff\xff\xff\xff"
        is_stream = True
        try:
            pa.ipc.open_stream(pa.BufferReader(raw)).read_next_batch()
        except Exception:
            is_stream = False
        assert is_stream != bare, (name, is_stream)
print("arrow-serialized list fixtures written")

# Computed columns over columns with SUMMARY indexes (python builds them on close): 2000 rows
# in blocks of 250 (8 segments), values rising by block so that filters on the computed
# columns can skip blocks through the summaries of `a` and `b`, deleted rows. The json holds
# python's count of live rows for each filter (col, op, literal), from `t[col][:]`.


@dataclasses.dataclass
class CompSumm:
    a: int = b2.field(b2.int32(), chunks=(1000,), blocks=(250,))
    b: float = b2.field(b2.float64(), chunks=(1000,), blocks=(250,))


def make_computed_summaries(path):
    t = b2.CTable(CompSumm, urlpath=path, mode="w", expected_size=2000)
    t.extend([(i // 250 * 100 + i % 7, (i // 250) * 10.0 + (i % 13) * 0.25) for i in range(2000)])
    t.delete(list(range(260, 300)))
    t.add_computed_column("total", "a * 2 + b")
    t.add_computed_column("ratio", "b / 4 - a")
    t.add_computed_column("wave", "sin(a) + b")
    t.close()


make_computed_summaries(p("computed_summaries.b2z"))
t = b2.open(p("computed_summaries.b2z"))
cat = t._storage.load_index_catalog()
assert all(c in cat and not cat[c].get("stale", False) for c in ["a", "b"]), cat.keys()
assert cat["a"]["levels"]["block"]["segment_len"] == 250
filters = [("total", ">", 1200.0), ("total", "<=", 215.0), ("ratio", "<", -650.0),
           ("ratio", ">=", -20.0), ("wave", ">", 60.0)]
answers = []
for col, op, lit in filters:
    v = np.asarray(t[col][:])
    hit = {">": v > lit, "<=": v <= lit, "<": v < lit, ">=": v >= lit}[op]
    answers.append({"column": col, "op": op, "literal": lit, "count": int(hit.sum())})
assert all(0 < a["count"] < len(t) for a in answers), answers
with open(p("computed_summaries.b2z.json"), "w") as f:
    json.dump({"n_rows": len(t), "filters": answers}, f, indent=1)
with zipfile.ZipFile(p("computed_summaries.b2z")) as z:
    assert not [n for n in z.namelist() if "total" in n or "ratio" in n], z.namelist()

# One column of each kind no other fixture holds: vlstring (nulls), vlbytes, object
# (heterogeneous rows), struct stored whole (one dict per row, nulls), complex64, complex128;
# deleted rows. `kinds.b2z.json` as describe() writes it.


@dataclasses.dataclass
class Kinds:
    id: int = b2.field(b2.int32(), default=0)
    vs: str = b2.field(b2.vlstring(nullable=True), default=None)
    vb: bytes = b2.field(b2.vlbytes(), default=b"")
    ob: object = b2.field(b2.object(), default=None)
    st: dict = b2.field(b2.struct({"x": b2.int64(), "y": b2.string(max_length=4)}, nullable=True),
                        default=None)
    c8: complex = b2.field(b2.complex64(), default=0j)
    c16: complex = b2.field(b2.complex128(), default=0j)


t = b2.CTable(Kinds, urlpath=p("kinds.b2z"), mode="w")
t.extend([(i, None if i % 3 == 1 else f"s{i}\u00e9", bytes([i, 0, 255]),
           [i, {"k": "v"}, None] if i % 2 else f"o{i}",
           None if i == 2 else {"x": i * 10, "y": f"y{i}"}, complex(i, -i), complex(i / 2, 1e300))
          for i in range(6)])
t.delete([4])
t.close()
d = describe("kinds.b2z", b2.open(p("kinds.b2z")))
kinds = {c["name"]: c["kind"] for c in d["columns"]}
assert kinds == {"id": "int32", "vs": "vlstring", "vb": "vlbytes", "ob": "object", "st": "struct",
                 "c8": "complex64", "c16": "complex128"}, kinds
assert d["values"]["vs"]["rows"][1] is None and d["values"]["st"]["rows"][2] is None
assert isinstance(d["values"]["ob"]["rows"][0], str) and isinstance(d["values"]["ob"]["rows"][1], list)
assert d["values"]["c16"]["dtype"] == "<c16" and d["n_rows"] == 5
with zipfile.ZipFile(p("kinds.b2z")) as z:
    names = z.namelist()
    assert "_cols/st.b2b" in names and "_cols/ob.b2b" in names, names


# A table of the column kinds b2nd's TableMut appends to (numbers, bool, timestamp, string;
# nulls in a mask and by sentinel; declared defaults), as a directory (`.b2d`, changed in
# place), with summary indexes and deleted rows (the last row deleted too: python's close then
# trims the arrays to the last live row, where its next append goes).
@dataclasses.dataclass
class Mutable:
    id: int = b2.field(b2.int64())
    when: np.datetime64 = b2.field(b2.timestamp(unit="ms"))
    score: float = b2.field(b2.float64(nullable=True), default=None)
    name: str = b2.field(b2.string(max_length=6), default="")
    opt: int = b2.field(b2.int32(nullable=True, null_storage="mask"), default=None)
    sent: int = b2.field(b2.int16(nullable=True, null_value=-1), default=None)
    fsent: float = b2.field(b2.float32(nullable=True, null_value=float("nan")), default=None)
    flag: bool = b2.field(b2.bool(), default=False)
    small: int = b2.field(b2.uint8(), default=7)


t = b2.CTable(Mutable, urlpath=p("mutable.b2d"), mode="w")
t.extend({
    "id": np.arange(9, dtype=np.int64),
    "score": [None if i == 2 else i * 1.5 for i in range(9)],
    "name": [f"r{i}" for i in range(9)],
    "opt": [None if i % 3 == 0 else i for i in range(9)],
    "sent": [-1 if i == 4 else i * 10 for i in range(9)],
    "fsent": [float("nan") if i == 6 else i / 4 for i in range(9)],
    "flag": [i % 2 == 0 for i in range(9)],
    "when": np.array([1_700_000_000_000 + i for i in range(9)], dtype="datetime64[ms]"),
    "small": np.arange(9, dtype=np.uint8),
})
t.delete([1, 8])
t.close()
d = describe("mutable.b2d", b2.open(p("mutable.b2d")))
# The fixture proves what it is named for: a directory, deleted rows (the last one among
# them), nulls of both storages, summaries, declared defaults.
assert os.path.isdir(p("mutable.b2d")) and d["n_rows"] == 7, d["n_rows"]
st = b2.open(p("mutable.b2d"), mode="r")
valid = st._valid_rows[:]
assert valid.tolist() == [True, False] + [True] * 6, valid
assert all(b2.open(p(f"mutable.b2d/_cols/{c}.b2nd")).shape == (8,) for c in ("id", "name", "when"))
assert any(d["values"]["opt"]["nulls"]) and any(d["values"]["sent"]["nulls"]) and any(d["values"]["score"]["nulls"])
cat = st._storage._open_meta().vlmeta["index_catalog"]
assert {"id", "score", "opt"} <= set(cat) and not any(x["stale"] for x in cat.values()), cat
spec = json.loads(st._storage._open_meta().vlmeta["schema"])
defaults = {c["name"]: c.get("default", "MISSING") for c in spec["columns"]}
assert defaults["small"] == 7 and defaults["id"] == "MISSING", defaults
assert os.path.exists(p("mutable.b2d/_cols/opt.notnull.b2nd"))

# A table of utf8 columns (nulls in a mask, by the sentinel "NA", none with a default "")
# whose last rows python deleted: python-blosc2 4.14.1 keeps a utf8 column's strings of the
# deleted rows past the last live one (its offsets and bytes have no capacity to trim), while
# its close trims the masks and `_valid_rows`; its next extend then appends after those
# strings, one row off per deleted row (docs/meaning-audit.md). b2nd appends at the table's next row.


@dataclasses.dataclass
class Text:
    id: int = b2.field(b2.int64())
    txt: str = b2.field(b2.utf8(nullable=True), default=None)
    tag: str = b2.field(b2.utf8(null_value="NA"), default="NA")
    note: str = b2.field(b2.utf8(), default="")


t = b2.CTable(Text, urlpath=p("utf8.b2d"), mode="w")
t.extend({
    "id": np.arange(6, dtype=np.int64),
    "txt": ["a", None, "ccc", "dé", None, "ffffff"],
    "tag": ["x", "y", "NA", "x", "z", "y"],
    "note": ["n0", "", "n2", "n3", "n4", "n5"],
})
t.delete([1, 5])
t.close()
# The fixture proves what it is named for: deleted rows, the last among them; strings of the
# deleted last row still stored past `_valid_rows`; nulls in a mask and by sentinel.
st = b2.open(p("utf8.b2d"), mode="r")
assert st._valid_rows[:].tolist() == [True, False, True, True, True], st._valid_rows[:]
for c in ("txt", "tag", "note"):
    offsets = b2.open(p(f"utf8.b2d/_cols/{c}.b2nd"))
    assert offsets.shape == (7,) and offsets.dtype == np.int64, (c, offsets.shape)
    assert b2.open(p(f"utf8.b2d/_cols/{c}.utf8.b2nd")).dtype == np.uint8
assert bytes(b2.open(p("utf8.b2d/_cols/txt.utf8.b2nd"))[:]) == b"acccd\xc3\xa9ffffff"
assert b2.open(p("utf8.b2d/_cols/txt.notnull.b2nd"))[:].tolist() == [True, False, True, True, False]
assert not os.path.exists(p("utf8.b2d/_cols/tag.notnull.b2nd"))
spec = json.loads(st._storage._open_meta().vlmeta["schema"])
assert [c.get("null_value") for c in spec["columns"]][2] == "NA", spec
# python's own extend on a copy pairs its new row with the deleted row's strings.
shutil.copytree(p("utf8.b2d"), p("utf8.b2d.tmp"))
tc = b2.open(p("utf8.b2d.tmp"), mode="a")
tc.extend({"id": [9], "txt": ["new"], "tag": ["new"], "note": ["new"]})
tc.close()
tc = b2.open(p("utf8.b2d.tmp"), mode="r")
assert tc["id"][:].tolist() == [0, 2, 3, 4, 9] and tc["note"][:].tolist()[-1] == "n5", tc["note"][:]
shutil.rmtree(p("utf8.b2d.tmp"))
print("utf8 fixture written")

# A table with generated (materialized) columns, python-blosc2's `add_generated_column`:
# stored columns its `extend` fills from the values given for their dependencies.


@dataclasses.dataclass
class Gen:
    id: int = b2.field(b2.int64())
    small: int = b2.field(b2.uint8(), default=7)
    x: float = b2.field(b2.float32(), default=0.0)


t = b2.CTable(Gen, urlpath=p("generated.b2d"), mode="w")
t.extend({"id": np.arange(5, dtype=np.int64), "small": np.arange(5, dtype=np.uint8) * 3,
          "x": np.linspace(-1, 1, 5, dtype=np.float32)})
t.add_generated_column("twice", values="id * 2 + small", dtype=np.int64)
t.add_generated_column("half", values="sqrt(abs(x)) / 2 + small", dtype=np.float32)
t.delete([1])
t.close()
# The fixture proves what it is named for: generated columns stored and in the schema's
# materialized_columns, computed by python's extend.
st = b2.open(p("generated.b2d"), mode="r")
gen = json.loads(st._storage._open_meta().vlmeta["schema"])["materialized_columns"]
assert [g["name"] for g in gen] == ["twice", "half"] and all(g["transformer_kind"] == "expression" for g in gen), gen
assert os.path.exists(p("generated.b2d/_cols/twice.b2nd")) and st["twice"][:].tolist() == [0, 10, 15, 20]
shutil.copytree(p("generated.b2d"), p("generated.b2d.tmp"))
tc = b2.open(p("generated.b2d.tmp"), mode="a")
tc.extend({"id": [9], "small": [1], "x": [0.25]})
tc.close()
assert b2.open(p("generated.b2d.tmp"))["twice"][:].tolist()[-1] == 19
shutil.rmtree(p("generated.b2d.tmp"))
print("generated-column fixture written")

# Tables of dictionary columns (values in a BatchArray `<name>_dict`, int32 codes, -1 for a
# null): `dictionary.b2d` with values, deleted rows (the last among them) and nulls;
# `dictionary_empty.b2d` with no row ever written, so its values stores hold no batch and
# record no `items_per_block` yet (python chooses it at the first batch).


@dataclasses.dataclass
class Cat:
    id: int = b2.field(b2.int64())
    cat: str = b2.field(b2.dictionary(nullable=True), default=None)
    tag: str = b2.field(b2.dictionary(nullable=False), default="a")


t = b2.CTable(Cat, urlpath=p("dictionary.b2d"), mode="w")
t.extend({"id": np.arange(6, dtype=np.int64), "cat": ["red", None, "blue", "red", "green", "blue"],
          "tag": ["a", "b", "a", "c", "b", "a"]})
t.delete([1, 5])
t.close()
t = b2.CTable(Cat, urlpath=p("dictionary_empty.b2d"), mode="w")
t.close()
# The fixtures prove what they are named for: codes, values, nulls, deleted rows; and no
# batch nor items_per_block in the empty table's values stores.
st = b2.open(p("dictionary.b2d"), mode="r")
assert st._valid_rows[:].tolist() == [True, False, True, True, True], st._valid_rows[:]
assert b2.open(p("dictionary.b2d/_cols/cat.b2nd"))[:].tolist() == [0, -1, 1, 0, 2]
dict_cat = b2.open(p("dictionary.b2d/_cols/cat_dict.b2b"))
assert [x for batch in dict_cat for x in batch] == ["red", "blue", "green"]
assert st["cat"][:] == ["red", "blue", "red", "green"] and st["cat"].is_null().tolist() == [False, False, False, False]
for c in ("cat", "tag"):
    e = b2.open(p(f"dictionary_empty.b2d/_cols/{c}_dict.b2b"))
    assert len(e) == 0 and e.meta["batcharray"]["items_per_block"] is None, e.meta["batcharray"]
assert [c.get("nullable") for c in json.loads(st._storage._open_meta().vlmeta["schema"])["columns"]][1:] == [True, False]
print("dictionary fixtures written")

# A table of the columns python-blosc2 keeps one msgpack item per row in a BatchArray (a
# list, a vlstring, a vlbytes and a struct), whose last row python deleted: its close trims
# `_valid_rows` but keeps the deleted row's items past it, and its next extend appends after
# them, one row off (docs/meaning-audit.md). b2nd appends at the table's next row.


@dataclasses.dataclass
class Var:
    id: int = b2.field(b2.int64())
    items: list[int] = b2.field(b2.list(b2.int32(), nullable=True), default=None)
    vs: str = b2.field(b2.vlstring(nullable=True), default=None)
    vb: bytes = b2.field(b2.vlbytes(), default=b"")
    st: dict = b2.field(b2.struct({"x": b2.int64(), "y": b2.string(max_length=4)}, nullable=True), default=None)


t = b2.CTable(Var, urlpath=p("varlen.b2d"), mode="w")
t.extend({
    "id": np.arange(6, dtype=np.int64),
    "items": [[1, 2], None, [], [3], [4, 5, 6], [7]],
    "vs": ["a", "b", None, "dé", "e", "f"],
    "vb": [b"\x00", b"", b"xy", b"z", b"w", b"v"],
    "st": [{"x": 1, "y": "a"}, None, {"x": 3, "y": "cc"}, {"x": 4, "y": "d"}, None, {"x": 6, "y": "f"}],
})
t.delete([1, 5])
t.close()
st = b2.open(p("varlen.b2d"), mode="r")
assert st._valid_rows[:].tolist() == [True, False, True, True, True], st._valid_rows[:]
for c in ("items", "vs", "vb", "st"):
    # The deleted last row's item is still stored past `_valid_rows`.
    assert len(st._cols[c]) == 6, (c, len(st._cols[c]))
assert st["items"][:] == [[1, 2], [], [3], [4, 5, 6]], st["items"][:]
assert st["st"][:] == [{"x": 1, "y": "a"}, {"x": 3, "y": "cc"}, {"x": 4, "y": "d"}, None], st["st"][:]
kinds = [c["kind"] for c in json.loads(st._storage._open_meta().vlmeta["schema"])["columns"]]
assert kinds == ["int64", "list", "vlstring", "vlbytes", "struct"], kinds
shutil.copytree(p("varlen.b2d"), p("varlen.b2d.tmp"))
tc = b2.open(p("varlen.b2d.tmp"), mode="a")
tc.extend({"id": [9], "items": [[9]], "vs": ["new"], "vb": [b"n"], "st": [None]})
tc.close()
assert b2.open(p("varlen.b2d.tmp"))["items"][:][-1] == [7], "python's extend pairs its row with the dead item"
shutil.rmtree(p("varlen.b2d.tmp"))
print("varlen fixture written")
