"""Randomized differential test of stores and tables: python-blosc2 writes them, b2nd lists and
reads them through its command line, both must agree.

usage: diff_stores.py B2ND_BINARY WORKDIR [CASES]        (CASES defaults to 60)
       SEED=N diff_stores.py ...                         replay a run (the seed is printed)
       SEED=N CASE=K diff_stores.py ...                  replay one case of that run

Each case draws, from its own seed, either a store (DictStore or TreeStore as `.b2z` or `.b2d`
with a random threshold, or an EmbedStore) of 1 to 6 members at random nested keys (N-d arrays
of random dtypes, shapes, chunks and codecs, SChunks, ObjectArrays and BatchArrays of random
nested items with random codecs and dictionaries, group attributes), or a
CTable (random number, bool and string columns, nullable by mask or by sentinel, random
appends and deletes; as `.b2z` or `.b2d`). Then:

- `b2nd ls --json` must list python-blosc2's keys (`sorted(store.keys())`) with the kind of
  `store[key]` (python's class, lowercase), and shape and dtype for arrays; for a table, its
  row count and columns;
- `b2nd to-npy --key KEY` must equal `store[key][()]` byte for byte (dtype included), for every
  array python-blosc2 can read (and the data written where it cannot: embedded items over 255
  bytes);
- `b2nd cat --key KEY` must equal `bytes(store[key][:])` for every SChunk, and the items python
  returns for every ObjectArray and BatchArray (as JSON); where python-blosc2 cannot read such a
  member it wrote, the bytes or items written (counted "python wrong");
- `b2nd to-npy --column NAME` must equal `t[NAME].to_numpy()` for every fixed-width column,
  computed columns included: a table gets up to 4 of them, random expressions (arithmetic,
  comparisons, `&`/`|`, `where`, math functions, `contains`) over its random columns;
  Where python-blosc2's `t[NAME]` disagrees with its own evaluator (`ne_evaluate`), or
  composes a `where` wrongly (its value differs from the evaluation with every `where`
  computed alone first), b2nd must give the evaluator's (or that) value, or refuse a `where`
  python-blosc2 gives no meaning (docs/meaning-audit.md); such columns are counted as
  "python wrong". A column that differs only where numexpr folded a function of constants
  with NumPy's own math passes when b2nd equals it folded by the C library (counted "numpy
  math": `c_library_folded`). Where numexpr refuses the expression (a unicode `contains`)
  and python-blosc2's lazy fallback computes it in types of its own, b2nd must equal NumPy's
  evaluation (counted "python wrong"). `EXPRS=where` draws mostly expressions numexpr refuses (a
  constant `//` a column) around `where`s whose conditions call functions: python-blosc2's lazy `where`;
- `b2nd cat --key /_cols/NAME` must give python's `t[NAME][:]` for every live row of every list
  column (msgpack- or Arrow-serialized; the binary needs b2nd's `arrow` feature, as the CLI's
  `sql` build has).

An exception python-blosc2 raises writing a case is counted as its refusal; one the harness
raises fails the run. A run fails unless it compares 80 % of its cases and every member kind.

A failure keeps its files in WORKDIR/failures/case-K. Exit status 1 on any failure.
"""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import blosc2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from diff_test import raised_by_blosc2  # noqa: E402

assert blosc2.__version__ == "4.14.1", blosc2.__version__
blosc2.set_nthreads(1)

DTYPES = ["<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8", "<f4", "<f8", "|b1",
          ">i4", ">f8", "<U5", "|S3", "<U70", "<c8"]
CODECS = [blosc2.Codec.ZSTD, blosc2.Codec.LZ4, blosc2.Codec.BLOSCLZ, blosc2.Codec.LZ4HC]


def rand_array(r: random.Random):
    dtype = np.dtype(r.choice(DTYPES))
    ndim = r.randint(0, 3)
    shape = tuple(r.randint(0, 9) if r.random() < 0.1 else r.randint(1, 40) for _ in range(ndim))
    n = int(np.prod(shape)) if shape else 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        data = np.array([r.randint(max(info.min, -1000), min(info.max, 1000)) for _ in range(n)], dtype=dtype)
    elif dtype.kind == "f":
        data = np.array([r.uniform(-1e3, 1e3) for _ in range(n)], dtype=dtype)
    elif dtype.kind == "c":
        data = np.array([complex(r.random(), r.random()) for _ in range(n)], dtype=dtype)
    elif dtype.kind == "b":
        data = np.array([r.random() < 0.5 for _ in range(n)], dtype=dtype)
    elif dtype.kind == "U":
        data = np.array(["".join(r.choice("abcé€") for _ in range(r.randint(0, 5))) for _ in range(n)], dtype=dtype)
    else:
        data = np.array([bytes(r.randint(65, 90) for _ in range(r.randint(0, 3))) for _ in range(n)], dtype=dtype)
    data = data.reshape(shape)
    cparams = blosc2.CParams(codec=r.choice(CODECS), clevel=r.randint(0, 9))
    kw = {"cparams": cparams}
    if shape and all(s > 0 for s in shape) and r.random() < 0.6:
        chunks = tuple(r.randint(1, s) for s in shape)
        kw["chunks"] = chunks
        kw["blocks"] = tuple(r.randint(1, c) for c in chunks)
    return data, blosc2.asarray(data, **kw)


def rand_key(r: random.Random, used: set) -> str:
    while True:
        depth = r.randint(1, 3)
        key = "/" + "/".join(r.choice(["a", "b", "grp", "x1", "data.v2", "n_"]) + str(r.randint(0, 3)) for _ in range(depth))
        # A key must not be a prefix group of another key, nor have one as its prefix.
        if key not in used and not any(u.startswith(key + "/") or key.startswith(u + "/") for u in used):
            used.add(key)
            return key


def rand_item(r: random.Random):
    """An item of an ObjectArray or BatchArray: msgpack-able python values, nested."""
    k = r.random()
    if k < 0.2:
        return r.randint(-2**40, 2**40)
    if k < 0.35:
        return r.uniform(-1e6, 1e6)
    if k < 0.55:
        return "".join(r.choice("abcé€ ") for _ in range(r.randint(0, 30)))
    if k < 0.65:
        return None
    if k < 0.75:
        return r.random() < 0.5
    if k < 0.88:
        return [rand_item(r) for _ in range(r.randint(0, 3))] if r.random() < 0.7 else []
    return {f"k{i}": rand_item(r) for i in range(r.randint(0, 3))}


def rand_cparams(r: random.Random):
    """Codec and dictionary of an object member (dictionaries need big enough chunks:
    c-blosc2 trains one only then, which the test does not require)."""
    return {"codec": r.choice(CODECS), "use_dict": r.random() < 0.3}


class Written(NamedTuple):
    """A member that is not an N-d array as it was written: an SChunk's bytes, or the
    items of an ObjectArray or of a BatchArray (its batches one after another)."""

    kind: str
    value: object


def make_store(r: random.Random, path: Path, case: dict):
    kind = r.choice(["dict", "tree", "embed"])
    ext = ".b2e" if kind == "embed" else r.choice([".b2z", ".b2d"])
    path = path.with_suffix(ext)
    threshold = r.choice([0, None, 200, 2000, 50000])
    case.update(kind=kind, path=path.name, threshold=threshold)
    written = {}
    used = set()
    if kind == "embed":
        store = blosc2.EmbedStore(str(path), mode="w")
    elif kind == "dict":
        store = blosc2.DictStore(str(path), mode="w", threshold=threshold)
    else:
        store = blosc2.TreeStore(str(path), mode="w", threshold=threshold)
    for _ in range(r.randint(1, 6)):
        key = rand_key(r, used)
        what = r.random()
        if what < 0.7:
            data, arr = rand_array(r)
            store[key] = arr
            written[key] = data
        elif what < 0.8:
            chunksize = r.randint(10, 300)
            data = bytes(r.randrange(256) for _ in range(r.randint(0, 900)))
            store[key] = blosc2.SChunk(chunksize=chunksize, data=data)
            written[key] = Written("schunk", data)
        elif what < 0.9:
            oa = blosc2.ObjectArray(cparams=rand_cparams(r))
            items = [rand_item(r) for _ in range(r.randint(1, 20))]
            oa.extend(items)
            store[key] = oa
            written[key] = Written("objectarray", items)
        else:
            ba = blosc2.BatchArray(items_per_block=r.randint(1, 12), cparams=rand_cparams(r))
            batches = [[rand_item(r) for _ in range(r.randint(1, 40))] for _ in range(r.randint(1, 4))]
            ba.extend(batches)
            store[key] = ba
            written[key] = Written("batcharray", [item for batch in batches for item in batch])
    if kind == "tree" and used and r.random() < 0.7:
        store.vlmeta["note"] = "root"
    if kind == "embed":
        del store
    else:
        store.close()
    return path, written


def make_table(r: random.Random, path: Path, case: dict):
    import dataclasses

    path = path.with_suffix(r.choice([".b2z", ".b2d"]))
    specs = []
    for i in range(r.randint(1, 6)):
        kind = r.choice(["int32", "int64", "float64", "float32", "bool", "string", "uint8",
                         "list_msgpack", "list_arrow"])
        fixed = kind not in ("bool", "string") and not kind.startswith("list")
        null = r.choice([None, "mask", "sentinel"]) if fixed else None
        specs.append((f"c{i}", kind, null))
    case.update(kind="ctable", path=path.name, columns=specs)
    fields = []
    for name, kind, null in specs:
        if kind.startswith("list"):
            item, py = r.choice([(blosc2.int32(nullable=True), int), (blosc2.string(nullable=True), str),
                                 (blosc2.float64(nullable=True), float)])
            spec = blosc2.list(item, nullable=True, serializer=kind.split("_")[1])
            typ, default = list[py], None
        elif kind == "string":
            spec, typ, default = blosc2.string(max_length=6), str, ""
        elif kind == "bool":
            spec, typ, default = blosc2.bool(), bool, False
        else:
            mk = getattr(blosc2, kind)
            typ = float if kind.startswith("float") else int
            if null == "mask":
                spec, default = mk(nullable=True, null_storage="mask"), None
            elif null == "sentinel":
                sentinel = float("nan") if typ is float else 7
                spec, default = mk(nullable=True, null_value=sentinel), sentinel
            else:
                spec, default = mk(), typ(0)
        fields.append((name, typ, blosc2.field(spec, default=default)))
    Row = dataclasses.make_dataclass("Row", fields)
    t = blosc2.CTable(Row, urlpath=str(path), mode="w")
    n = r.randint(0, 60)
    for i in range(n):
        vals = {}
        for name, kind, null in specs:
            if null == "mask" and r.random() < 0.2:
                vals[name] = None
                continue
            if null == "sentinel" and r.random() < 0.2:
                vals[name] = float("nan") if kind.startswith("float") else 7
                continue
            if kind.startswith("list"):
                vals[name] = None if r.random() < 0.2 else rand_list(r, t._schema.columns_by_name[name].spec)
            elif kind == "string":
                vals[name] = "".join(r.choice("xyzé") for _ in range(r.randint(0, 6)))
            elif kind == "bool":
                vals[name] = r.random() < 0.5
            elif kind.startswith("float"):
                vals[name] = r.uniform(-100, 100)
            elif kind == "uint8":
                vals[name] = r.randint(0, 255)
            else:
                vals[name] = r.randint(-1000, 1000)
        t.append(Row(**vals))
    if n > 2 and r.random() < 0.6:
        t.delete(sorted(r.sample(range(n), r.randint(1, n // 2))))
    computed = []
    names = [name for name, _, _ in specs]
    for j in range(r.choice([0, 0, 1, 2, 4])):
        expr = rand_expr(r, specs, r.randint(1, 3))
        if not any(n in expr for n in names):
            continue  # a constant: python-blosc2 cannot read such a column (IndexError)
        try:
            t.add_computed_column(f"x{j}", expr)
        except Exception:
            continue  # python-blosc2 refuses this expression: nothing to compare
        # python-blosc2 4.14.1 records some dtypes as "<class 'blosc2.schema.float64'>" and then
        # cannot open the table again (docs/meaning-audit.md): keep only what python reopens.
        try:
            np.dtype(str(t._computed_cols[f"x{j}"]["dtype"]))
        except TypeError:
            t.drop_column(f"x{j}")
            continue
        computed.append((f"x{j}", expr))
    case["computed"] = computed
    t.close()
    return path


def rand_list(r: random.Random, spec):
    """A random list for a list column of `spec` (items int32, string or float64; python-blosc2's
    row validation takes no null items from a dataclass row)."""
    kind = spec.to_metadata_dict()["item"]["kind"]
    out = []
    for _ in range(r.randint(0, 3)):
        if kind == "string":
            out.append("".join(r.choice("abé") for _ in range(r.randint(0, 3))))
        elif kind.startswith("float"):
            out.append(r.uniform(-10, 10))
        else:
            out.append(r.randint(-1000, 1000))
    return out


def rand_expr(r: random.Random, specs, depth: int) -> str:
    """A random lazy expression over a table's columns, as users write them (`EXPRS=where`:
    mostly `lazy_where`)."""
    if os.environ.get("EXPRS") == "where" and depth > 0 and r.random() < 0.8:
        return lazy_where(r, specs, depth)
    return any_expr(r, specs, depth)


def lazy_where(r: random.Random, specs, depth: int) -> str:
    """A `where` in an expression numexpr refuses (a constant `//` a column), its condition
    calling a function (python-blosc2's lazy `where`), a NumPy array, or a constant."""
    nums = [name for name, kind, _ in specs if kind != "string" and not kind.startswith("list")]
    if not nums:
        return any_expr(r, specs, depth)
    a, b = any_expr(r, specs, depth - 1), any_expr(r, specs, depth - 1)
    col = r.choice(nums)
    f = r.choice(["sqrt", "abs", "sin", "floor", "hypot", "maximum", "arctan2", "exp"])
    call = f"{f}({a}, {b})" if f in ("hypot", "maximum", "arctan2") else f"{f}({a})"
    force = f"({r.choice(['2', '0.486', '7', '-3'])} // {col})"
    cond = r.choice([f"({call} > {force})", f"(({col} > {b}) & ({call} < {r.randint(-5, 50)}))",
                     f"({force} > {r.randint(-3, 3)})", f"({call} != {a})"])
    x = r.choice([a, force, str(r.randint(-300, 300)), f"{r.uniform(-3, 3):.3f}", call])
    y = r.choice([b, force, str(r.randint(-300, 300)), col])
    e = f"where({cond}, {x}, {y})"
    return e if "//" in e else f"({e} + {force})"


def any_expr(r: random.Random, specs, depth: int) -> str:
    """A random lazy expression over a table's columns."""
    nums = [name for name, kind, _ in specs if kind != "string" and not kind.startswith("list")]
    strs = [name for name, kind, _ in specs if kind == "string"]
    if depth == 0 or r.random() < 0.25:
        if nums and r.random() < 0.75:
            return r.choice(nums)
        return r.choice([str(r.randint(-5, 300)), f"{r.uniform(-3, 3):.3f}"])
    a, b = rand_expr(r, specs, depth - 1), rand_expr(r, specs, depth - 1)
    form = r.random()
    if form < 0.4:
        return f"({a} {r.choice(['+', '-', '*', '/', '//', '%'])} {b})"
    if form < 0.45:
        return f"({a} ** 2)"
    if form < 0.6:
        return f"({a} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {b})"
    if form < 0.67:
        return f"(({a} > {b}) {r.choice(['&', '|'])} ~({b} == 1))"
    if form < 0.82:
        f = r.choice(["sqrt", "abs", "sin", "cos", "exp", "log", "floor", "ceil", "arctan", "tanh"])
        return f"{f}({a})"
    if form < 0.9:
        return f"where({a} > {b}, {a}, {b})"
    if form < 0.95 and strs:
        return f"contains({r.choice(strs)}, '{r.choice(['x', 'yz', 'é'])}')"
    return f"{r.choice(['maximum', 'minimum', 'arctan2', 'hypot'])}({a}, {b})"


def c_order(x):
    """`x` as a C-order array, 0-d kept 0-d (np.ascontiguousarray makes it 1-d)."""
    return np.array(x, order="C", copy=True)


def run(b2nd, *args):
    return subprocess.run([b2nd, *map(str, args)], capture_output=True)


def npy_bytes(path):
    a = np.load(path, allow_pickle=False)
    return a.dtype.str, list(a.shape), c_order(a).tobytes()


def npy_differs(b2nd, what, arr, work: Path, *args) -> list:
    """`b2nd to-npy ARGS` must give `arr` exactly (dtype and shape included)."""
    npy = work / "out.npy"
    out = run(b2nd, "to-npy", "--force", *args, npy)
    if out.returncode != 0:
        return [f"{what}: to-npy failed: {out.stderr.decode().strip()}"]
    if npy_bytes(npy) != (arr.dtype.str, list(arr.shape), arr.tobytes()):
        return [f"{what}: values differ"]
    return []


def check_store(b2nd, path: Path, written: dict, work: Path) -> list:
    problems = []
    store = blosc2.open(str(path), mode="r")
    out = run(b2nd, "ls", "--json", path)
    if out.returncode != 0:
        return [f"ls failed: {out.stderr.decode().strip()}"]
    listing = json.loads(out.stdout)
    want_kind = type(store).__name__.lower()
    if listing["kind"] != want_kind:
        problems.append(f"kind {listing['kind']} != {want_kind}")
    keys = sorted(store.keys())
    got_keys = [m["key"] for m in listing["members"]]
    if got_keys != keys:
        problems.append(f"keys {got_keys} != {keys}")
        return problems
    for m in listing["members"]:
        key = m["key"]
        try:
            value = store[key]
            kind = type(value).__name__.lower()
        except Exception as e:
            if key not in written:
                problems.append(f"{key}: python-blosc2 cannot read it ({e}) and nothing was written there")
                continue
            # python-blosc2 cannot open a member it wrote (seen: 0-d embedded arrays; a
            # member of an EmbedStore whose byte range python's SChunk slicing gets wrong,
            # docs/meaning-audit.md): compare with the data written.
            print(f"NOTE {path.name} {key}: python-blosc2 fails to read it ({e}); checked against the data written")
            w = written[key]
            if isinstance(w, Written):
                value, kind = w.value, w.kind
                COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
            else:
                value, kind = None, "ndarray"
        if m["kind"] != kind:
            problems.append(f"{key}: kind {m['kind']} != {kind}")
            continue
        COMPARED[kind] = COMPARED.get(kind, 0) + 1
        if kind == "schunk":
            out = run(b2nd, "cat", path, "--key", key)
            if out.returncode != 0:
                problems.append(f"{key}: cat failed: {out.stderr.decode().strip()}")
            elif out.stdout != bytes(value[:]):  # bytes: an SChunk or what was written
                problems.append(f"{key}: SChunk bytes differ ({len(out.stdout)} vs "
                                f"{len(bytes(value[:]))})")
            continue
        if kind in ("objectarray", "batcharray"):
            if isinstance(value, list):  # what was written
                items = value
            else:
                items = list(value.items) if kind == "batcharray" else list(value)
            out = run(b2nd, "cat", path, "--key", key)
            if out.returncode != 0:
                problems.append(f"{key}: cat failed: {out.stderr.decode().strip()}")
            elif json.loads(out.stdout) != json.loads(json.dumps(items)):
                problems.append(f"{key}: items differ: {out.stdout[:200]!r} vs {items[:5]!r}")
            continue
        if kind == "treestore":
            continue  # a group: its keys are among those compared above
        if kind != "ndarray":
            problems.append(f"{key}: a {kind} member, which this test does not compare")
            continue
        try:
            arr = c_order(value[()])
        except Exception:
            arr = c_order(written[key])  # python-blosc2 cannot read its own member
        if m["shape"] != list(arr.shape) or m["dtype"] != arr.dtype.str:
            problems.append(f"{key}: {m['shape']} {m['dtype']} != {list(arr.shape)} {arr.dtype.str}")
            continue
        problems += npy_differs(b2nd, key, arr, work, "--key", key, path)
    return problems


def own_evaluation(t, name):
    """A computed column as python-blosc2's own expression evaluator (`ne_evaluate`: numexpr,
    else NumPy) gives it from the stored values of the live rows, cast to the recorded dtype."""
    from blosc2.lazyexpr import ne_evaluate

    cc, ops = live_operands(t, name)
    return c_order(np.asarray(ne_evaluate(cc["expression"], ops)).astype(cc["dtype"]))


def numpy_evaluation(t, name):
    """A computed column by NumPy's own rules (its operators and functions over the stored
    values of the live rows, Python scalars weak), cast to the recorded dtype: where numexpr
    has no opcode python-blosc2 falls back to NumPy."""
    cc, ops = live_operands(t, name)
    env = {f: getattr(np, f) for f in dir(np) if not f.startswith("_")}
    env["contains"] = lambda a, sub: np.strings.find(a, sub) >= 0  # python-blosc2's, in NumPy
    env.update(ops)
    value = eval(cc["expression"], {"__builtins__": {}}, env)  # noqa: S307 - our own expression
    return c_order(np.asarray(value).astype(cc["dtype"]))


def equals_numpy(b2nd, t, name, what, work, path) -> bool:
    """b2nd's computed column `name` equals NumPy's evaluation of it (False where NumPy
    has no value for it)."""
    try:
        want = numpy_evaluation(t, name)
    except Exception:
        return False
    return not npy_differs(b2nd, what, want, work, "--column", name, path)


def live_operands(t, name):
    """Computed column `name`'s record and its operands (`o0`, `o1`, ... as the expression
    names them): the stored values of its dependencies at the live rows."""
    cc = t._computed_cols[name]
    valid = np.asarray(t._valid_rows[:], dtype=bool)
    ops = {}
    for i, dep in enumerate(cc["col_deps"]):
        ops[f"o{i}"] = np.asarray(t._cols[dep][: len(valid)])[valid]
    return cc, ops


def numexpr_refuses(t, name) -> bool:
    """numexpr cannot evaluate computed column `name` over its operands (a unicode operand of
    `contains`): python-blosc2 falls back to its lazy expressions in Python."""
    import numexpr

    cc, ops = live_operands(t, name)
    try:
        numexpr.evaluate(cc["expression"], local_dict=dict(ops))
    except Exception:
        return True
    return False


# NumPy's functions with a C library one in Python's `math` (which calls the C library).
C_LIBRARY = {"sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log": "log", "log1p": "log1p",
             "log2": "log2", "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan",
             "arcsin": "asin", "arccos": "acos", "arctan": "atan", "sinh": "sinh",
             "cosh": "cosh", "tanh": "tanh", "arcsinh": "asinh", "arccosh": "acosh",
             "arctanh": "atanh", "arctan2": "atan2", "hypot": "hypot"}


def c_library_folded(t, name):
    """A computed column as python-blosc2's evaluator gives it with every function of number
    constants computed by the C library (Python's `math`) and standing in as a NumPy float64
    operand, or None where the expression has none. numexpr folds such a call with NumPy,
    whose own SIMD functions differ from the C library's by up to 3 ulp (`ulp_bound.py`);
    b2nd computes it as numexpr computes functions of columns, with the C library. Calls of
    bools (a float16 to NumPy), domain errors and overflows stay NumPy's."""
    import ast
    import math

    from blosc2.lazyexpr import ne_evaluate

    cc, ops = live_operands(t, name)

    def number(node):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = number(node.operand)
            return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        return None

    class Fold(ast.NodeTransformer):
        changed = False

        def visit_Call(self, node):
            self.generic_visit(node)
            args = [number(a) for a in node.args]
            if not (isinstance(node.func, ast.Name) and node.func.id in C_LIBRARY
                    and args and None not in args):
                return node
            try:
                v = getattr(math, C_LIBRARY[node.func.id])(*args)
            except (ValueError, OverflowError):
                return node
            if not math.isfinite(v):
                return node
            # A NumPy float64 operand, as strong in NumPy's rules as NumPy's folded value.
            key = f"k{len(ops)}"
            ops[key] = np.float64(v)
            self.changed = True
            return ast.Name(id=key, ctx=ast.Load())

    fold = Fold()
    tree = fold.visit(ast.parse(cc["expression"], mode="eval"))
    if not fold.changed:
        return None
    return c_order(np.asarray(ne_evaluate(ast.unparse(tree), dict(ops))).astype(cc["dtype"]))


def constant_where_over_arrays(expression: str) -> bool:
    """Whether `expression` has a where() whose condition names no column and one of whose
    branches does."""
    import ast

    def names(node):
        return any(isinstance(n, ast.Name) and n.id[:1] == "o" for n in ast.walk(node))

    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "where"
        and len(n.args) == 3 and not names(n.args[0]) and (names(n.args[1]) or names(n.args[2]))
        for n in ast.walk(ast.parse(expression, mode="eval"))
    )


class ScalarWhere(Exception):
    """python-blosc2 computes a where() over arrays as a scalar, or cannot compute it."""


def where_materialized(t, name):
    """A computed column as python-blosc2's evaluator gives it with every `where(...)` of the
    expression computed alone first, innermost first, and standing in as an operand: the
    meaning python-blosc2 4.14.1 loses when it composes a lazy `where` into a larger
    expression outside numexpr (a function of it is computed from its condition alone,
    some compositions mix up operands: docs/meaning-audit.md)."""
    import ast

    from blosc2.lazyexpr import ne_evaluate

    cc, ops = live_operands(t, name)

    class Materialize(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id == "where":
                key = f"w{len(ops)}"
                try:
                    value = np.asarray(ne_evaluate(ast.unparse(node), dict(ops)))
                except Exception as e:
                    raise ScalarWhere(f"{ast.unparse(node)}: {e}") from e
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                if value.ndim == 0 and names & set(ops):
                    # A where() of a constant condition over arrays: python-blosc2 gives
                    # a scalar (the first item of a branch, or the constant), no meaning.
                    raise ScalarWhere(ast.unparse(node))
                # Held as a python-blosc2 array, as lazy as the where() it stands for.
                ops[key] = blosc2.asarray(value) if value.ndim else value
                return ast.Name(id=key, ctx=ast.Load())
            return node

    tree = Materialize().visit(ast.parse(cc["expression"], mode="eval"))
    return c_order(np.asarray(ne_evaluate(ast.unparse(tree), dict(ops))).astype(cc["dtype"]))


def python_wrong_where(t, name, arr, b2nd, what, work, path) -> bool:
    """Whether python-blosc2's value of computed column `name` (`arr`, or None where its own
    evaluator raised) is not its where-materialized meaning (`where_materialized`), which b2nd
    gives, or has none (a where() over arrays computed as a scalar), and b2nd refuses it."""
    expression = t._computed_cols[name]["expression"]
    if "where" not in expression:
        return False
    try:
        # None: python-blosc2 gives the first item of the array branch it picks, or
        # cannot compute a where() alone; no meaning to follow, b2nd must refuse it.
        want = None if constant_where_over_arrays(expression) else where_materialized(t, name)
    except ScalarWhere:
        want = None
    except Exception:
        return False
    if want is None:
        npy = work / "out.npy"
        return run(b2nd, "to-npy", "--force", "--column", name, path, npy).returncode != 0
    if arr is not None and want.tobytes() == arr.tobytes():
        return False
    return not npy_differs(b2nd, what, want, work, "--column", name, path)


def check_table(b2nd, path: Path, work: Path) -> list:
    problems = []
    t = blosc2.open(str(path), mode="r")
    out = run(b2nd, "ls", "--json", path)
    if out.returncode != 0:
        return [f"ls failed: {out.stderr.decode().strip()}"]
    listing = json.loads(out.stdout)
    if listing["kind"] != "ctable" or listing["n_rows"] != len(t):
        problems.append(f"listing {listing['kind']} {listing['n_rows']} != ctable {len(t)}")
    if [c["name"] for c in listing["columns"]] != list(t.col_names):
        problems.append(f"columns {listing['columns']} != {t.col_names}")
        return problems
    for c in listing["columns"]:
        name = c["name"]
        if c.get("kind") == "list":
            # Every live row equal to python's `t[name][:]` (the member's items, physical
            # rows, through `b2nd cat`; deleted rows dropped here).
            out = run(b2nd, "cat", "--key", f"/_cols/{name}", path)
            if out.returncode != 0:
                problems.append(f"{name}: cat failed: {out.stderr.decode().strip()}")
                continue
            items = json.loads(out.stdout)
            valid = np.asarray(t._valid_rows[:], dtype=bool)
            got = [x for x, ok in zip(items, valid) if ok]
            want = json.loads(json.dumps(list(t[name][:])))
            if got != want:
                problems.append(f"{name}: list rows differ: {got[:3]} != {want[:3]}")
            COMPARED["list column"] = COMPARED.get("list column", 0) + 1
            continue
        try:
            arr = c_order(t[name].to_numpy())
        except Exception as e:
            if name not in t._computed_cols:
                raise
            # python-blosc2 cannot evaluate this computed column (NumPy refuses the
            # expression, e.g. a boolean subtract): b2nd must refuse it too.
            npy = work / "out.npy"
            out = run(b2nd, "to-npy", "--force", "--column", name, path, npy)
            expr = t._readable_computed_expr(t._computed_cols[name])
            if out.returncode == 0 and isinstance(e, RecursionError):
                # python-blosc2 4.14.1 recurses without end on some expressions numexpr
                # refuses (a boolean `//` under `maximum` of a constant:
                # docs/meaning-audit.md); NumPy, its fallback, has a meaning b2nd must give.
                if equals_numpy(b2nd, t, name, expr, work, path):
                    print(f"NOTE {path.name} {name} = {expr}: python-blosc2 recurses without "
                          "end; b2nd gives NumPy's meaning")
                    COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                    continue
            if out.returncode == 0 and python_wrong_where(t, name, None, b2nd, expr, work, path):
                print(f"NOTE {path.name} {name} = {expr}: python-blosc2 composes a where() "
                      f"wrongly and refuses it ({e}); b2nd gives the where-materialized meaning")
                COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                continue
            if out.returncode == 0:
                problems.append(f"{name} = {expr}: python refuses it ({e}), b2nd read it")
            COMPARED["refused computed"] = COMPARED.get("refused computed", 0) + 1
            continue
        if c.get("dtype") != arr.dtype.str:
            problems.append(f"{name}: dtype {c.get('dtype')} != {arr.dtype.str}")
            continue
        what = name
        if name in t._computed_cols:
            what = f"{name} = {t._readable_computed_expr(t._computed_cols[name])}"
            try:
                own = own_evaluation(t, name)
            except Exception:
                own = None  # python's evaluator over whole columns raises where t[name] did not
            if python_wrong_where(t, name, own, b2nd, what, work, path):
                print(f"NOTE {path.name} {what}: python-blosc2 composes a where() wrongly; b2nd "
                      "gives the where-materialized meaning")
                COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                continue
            if own is None:
                # python-blosc2's evaluator refuses what its lazy path computed (a where()
                # of a NumPy condition, or of a constant one and an array): b2nd follows the
                # evaluator and must refuse too, or give t[name].
                npy = work / "out.npy"
                if run(b2nd, "to-npy", "--force", "--column", name, path, npy).returncode != 0:
                    print(f"NOTE {path.name} {what}: python-blosc2's evaluator refuses what "
                          f"t[{name!r}] computes; b2nd refuses it too")
                    COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                    continue
                own = arr
            if own.tobytes() != arr.tobytes() and not npy_differs(b2nd, what, own, work, "--column", name, path):
                # python-blosc2's lazy expression disagrees with its own evaluator (numexpr,
                # then NumPy) on the same operands, and b2nd agrees with the evaluator: a
                # python-blosc2 defect (docs/meaning-audit.md), counted, not a failure.
                print(f"NOTE {path.name} {what}: python-blosc2's t[{name!r}] differs from "
                      f"its own evaluator; b2nd equals the evaluator")
                COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                continue
        differs = npy_differs(b2nd, what, arr, work, "--column", name, path)
        if differs and name in t._computed_cols and numexpr_refuses(t, name):
            if equals_numpy(b2nd, t, name, what, work, path):
                # numexpr refuses the expression (a unicode `contains`) and python-blosc2's
                # lazy fallback computes its parts into types of its own (`contains(s, 'x')
                # ** 2` as int8, a true division cast into that int8: docs/meaning-audit.md);
                # b2nd equals NumPy's evaluation, the fallback's documented meaning.
                print(f"NOTE {path.name} {what}: python-blosc2's fallback for what numexpr "
                      "refuses computes in its own types; b2nd equals NumPy's evaluation")
                COMPARED["python wrong"] = COMPARED.get("python wrong", 0) + 1
                differs = []
        if differs and name in t._computed_cols:
            try:
                folded = c_library_folded(t, name)
            except Exception:
                folded = None
            if folded is not None and not npy_differs(b2nd, what, folded, work, "--column",
                                                      name, path):
                # numexpr folded a function of constants with NumPy's own math; b2nd equals
                # the same expression with the C library's value of it.
                print(f"NOTE {path.name} {what}: python-blosc2 folds a function of constants "
                      "with NumPy's own math; b2nd equals it folded by the C library")
                COMPARED["numpy math"] = COMPARED.get("numpy math", 0) + 1
                differs = []
        problems += differs
        COMPARED["column"] = COMPARED.get("column", 0) + 1
        if name in t._computed_cols:
            COMPARED["computed"] = COMPARED.get("computed", 0) + 1
    return problems


# Members and columns compared, by kind; a run of 40 cases or more must compare each kind.
COMPARED = {}
KINDS = ("ndarray", "schunk", "objectarray", "batcharray", "column", "computed", "list column")


def main():
    b2nd, work = sys.argv[1], Path(sys.argv[2])
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    seed = int(os.environ.get("SEED", random.SystemRandom().randrange(2**32)))
    only = os.environ.get("CASE")
    print(f"diff_stores: SEED={seed} ({cases} cases; replay with SEED={seed})", flush=True)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    failed = stores = tables = refused = 0
    for k in range(cases):
        if only is not None and k != int(only):
            continue
        r = random.Random(seed * 1000003 + k)
        d = work / f"case-{k}"
        d.mkdir()
        case = {"seed": seed, "case": k}
        is_store = r.random() < 0.6
        try:
            if is_store:
                path, written = make_store(r, d / "s", case)
            else:
                path = make_table(r, d / "t", case)
        except Exception as e:
            if raised_by_blosc2(e):  # python-blosc2 refusing to write a combination: counted
                refused += 1
                print(f"NOTE case {k}: python-blosc2 refused to write it ({type(e).__name__}: {e})")
                shutil.rmtree(d)
                continue
            # The harness failed building the case: a failure of the run, not a refusal.
            failed += 1
            print(f"FAIL case {k}: harness error building it: {type(e).__name__}: {e}", flush=True)
            continue
        try:
            if is_store:
                problems = check_store(b2nd, path, written, d)
                stores += 1
            else:
                problems = check_table(b2nd, path, d)
                tables += 1
        except Exception as e:
            problems = [f"the check raised {type(e).__name__}: {e}"]
        if problems:
            failed += 1
            keep = work / "failures" / f"case-{k}"
            shutil.copytree(d, keep)
            (keep / "case.json").write_text(json.dumps(case, default=str, indent=1))
            print(f"FAIL case {k} ({case.get('kind')}): " + "; ".join(problems[:5]), flush=True)
        else:
            shutil.rmtree(d)
    print(
        f"diff_stores: {stores} stores and {tables} tables: {stores + tables - failed} passed, "
        f"{failed} failed ({refused} combinations python-blosc2 refused to write); compared: "
        + ", ".join(f"{COMPARED.get(k, 0)} {k}"
                    for k in KINDS + ("refused computed", "python wrong", "numpy math"))
    )
    if only is None and cases >= 40:
        short = [k for k in KINDS if COMPARED.get(k, 0) == 0]
        if stores + tables < 0.8 * cases or short:
            print(f"FAIL: under the floor: {stores + tables} of {cases} cases compared (floor "
                  f"80 %), kinds never compared: {short}")
            failed += 1
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
