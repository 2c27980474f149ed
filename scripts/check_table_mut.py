"""python-blosc2 reads the tables b2nd changed (`TableMut`, tests/table_mut.rs with
B2ND_TABLE_MUT_OUT=OUT) as the tables its own changes make: every `<name>.ops.json` in OUT is
replayed with python-blosc2 (`extend`, `delete`, a column assignment, `rename_column`,
`drop_column`, `add_column`, `compact` or `attrs` changes, then `close`, each) on a fresh copy of the fixture `<name>` (or the
`fixture` the file names) from FIXTURES, and python's reads of both tables must agree: row
count, user attributes, column names, every column's values and nulls, `where()` over the summarised
columns, the schema's cached row count, the epochs, the index descriptors' stale flags and
summaries, and the length of every array.

Usage: python scripts/check_table_mut.py OUT FIXTURES
"""

import json
import math
import os
import shutil
import sys
import tempfile
import zipfile

import blosc2 as b2
import numpy as np
from dead_rows import compact_cells, cut_dead_cells, cut_dead_utf8, type_arrow_batches

assert b2.__version__ == "4.14.1", b2.__version__
type_arrow_batches()

OUT, FIXTURES = sys.argv[1], sys.argv[2]


def number(x):
    return float(x) if isinstance(x, str) else x


def python_values(t, name, values):
    """The JSON values of column `name` as python-blosc2's writers take them."""
    spec = t._schema.columns_by_name[name].spec.to_metadata_dict()
    kind = spec["kind"]
    if kind == "timestamp":
        return np.array(values, dtype=f"datetime64[{spec['unit']}]")
    if kind == "vlbytes":
        return [bytes(v["__bytes__"]) if isinstance(v, dict) else v for v in values]
    if kind.startswith("float"):
        values = [None if v is None else number(v) for v in values]
    if "null_value" in spec:
        # python-blosc2 4.14.1's extend cannot take None for an integer column with a
        # null_value (TypeError in np.ascontiguousarray): its users write the sentinel
        # itself, which is what b2nd stores for a null there.
        values = [spec["null_value"] if v is None else v for v in values]
    return values


def replay(path, ops):
    """Replay `ops` with python-blosc2 on the table at `path`; returns {new: old} for the
    renames python-blosc2 4.14.1 cannot make (a dictionary column's: it leaves the values
    store `<old>_dict` behind and its close fails; a list column's: it copies `<old>.b2b` to
    `<new>.b2f` and then opens `<new>.b2b`; see docs/meaning-audit.md), which are left out:
    b2nd's renamed column is compared with python's column under the old name."""
    aliases = {}
    # One session per operation: within one session, python-blosc2 4.14.1 reads a row that
    # `extend` puts where a deleted row held a null as null (its extend writes a mask only for
    # batches holding a null; `close` trims the deleted tail away), see meaning-audit.md.
    for op in ops:
        t = b2.open(path, mode="a")
        if op["op"] == "append":
            cut_dead_utf8(t)
            cut_dead_cells(t)
            t.extend({name: python_values(t, name, v) for name, v in op["columns"].items()})
        elif op["op"] == "delete":
            t.delete(op["rows"])
            cut_dead_utf8(t)
            cut_dead_cells(t)
        elif op["op"] == "rename" and op.get("python_breaks"):
            aliases[op["new"]] = op["old"]
        elif op["op"] == "rename":
            t.rename_column(op["old"], op["new"])
        elif op["op"] == "drop":
            t.drop_column(op["name"])
        elif op["op"] == "add_column":
            kw = {"nullable": True} if op.get("nullable") else {}
            for k in ("max_length", "unit"):
                if k in op:
                    kw[k] = op[k]
            spec = getattr(b2, op["kind"])(**kw)
            if "default" in op:
                spec = b2.field(spec, default=op["default"])
            values = op.get("values")
            t.add_column(op["name"], spec, values=values)
        elif op["op"] == "attrs":
            for k, v in op.get("set", {}).items():
                t.attrs[k] = v
            for k in op.get("delete", []):
                del t.attrs[k]
        elif op["op"] == "compact" and op.get("gapless"):
            # b2nd's compact of a table without a gap changes nothing; python-blosc2 4.14.1's,
            # on a table opened afresh, rewrites it anyway, advancing value_epoch and marking
            # every index stale (see docs/meaning-audit.md): not replayed.
            pass
        elif op["op"] == "compact":
            compact_cells(t, path)
            t = b2.open(path, mode="a")
        elif op["op"] == "update":
            for name, values in op["columns"].items():
                t[name][op["rows"]] = python_values(t, name, values)
        else:
            raise ValueError(op)
        t.close()
    return aliases


def cells(t, name):
    col = t[name]
    values = col[:]
    if isinstance(values, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(values).tolist()
        values = values.data.tolist()
    else:
        values = np.asarray(values).tolist() if isinstance(values, np.ndarray) else list(values)
        mask = [False] * len(values)
    out = []
    for v, m in zip(values, mask):
        if m or v is None:
            out.append(None)
        elif isinstance(v, float) and math.isnan(v):
            out.append("nan")
        else:
            out.append(repr(v))
    nulls = [bool(x) for x in np.asarray(col.is_null())]
    return out, nulls


def as_dir(path):
    """The table at `path` as a directory: a `.b2z` unpacked into a fresh one."""
    if os.path.isdir(path):
        return path
    out = os.path.join(tempfile.mkdtemp(), "t.b2d")
    with zipfile.ZipFile(path) as z:
        z.extractall(out)
    return out


def layout(path):
    path = as_dir(path)
    t = b2.open(path, mode="r")
    meta = t._storage._open_meta()
    schema = json.loads(meta.vlmeta["schema"])
    catalog = meta.vlmeta.get("index_catalog") or {}
    epochs = (int(meta.vlmeta.get("value_epoch", 0) or 0), int(meta.vlmeta.get("visibility_epoch", 0) or 0))
    lengths = {}
    for root, _, files in os.walk(os.path.join(path, "_cols")):
        for f in files:
            if f.endswith(".b2nd"):
                rel = os.path.relpath(os.path.join(root, f), path)
                lengths[rel] = b2.open(os.path.join(path, rel)).shape[0]
    lengths["_valid_rows"] = b2.open(os.path.join(path, "_valid_rows.b2nd")).shape[0]
    summaries = {}
    for col, d in catalog.items():
        for level, spec in (d.get("levels") or {}).items():
            p = spec.get("path") if isinstance(spec, dict) else None
            if p and not os.path.isabs(p) and os.path.exists(os.path.join(path, p)):
                summaries[f"{col}/{level}"] = (p, b2.open(os.path.join(path, p))[:].tolist())
    return {
        "n_rows_cached": schema.get("n_rows"),
        "summaries": repr(summaries),
        "index_columns": sorted(catalog),
        "epochs": epochs,
        "stale": {k: bool(v.get("stale")) for k, v in catalog.items()},
        "lengths": lengths,
    }


def rebuilt_summaries(path):
    """(column, summary as stored, summary after python's rebuild_index) for every fresh
    summary index of the table at `path` (rebuilt on a copy)."""
    tmp = tempfile.mkdtemp()
    copy = os.path.join(tmp, "t.b2d")
    shutil.copytree(path, copy)
    out = []
    t = b2.open(copy, mode="a")
    catalog = t._storage._open_meta().vlmeta.get("index_catalog") or {}
    for col, d in catalog.items():
        if d.get("kind") != "summary" or d.get("stale"):
            continue
        p = os.path.join(copy, d["levels"]["block"]["path"])
        before = repr(b2.open(p)[:].tolist())
        t.rebuild_index(col)
        d2 = t._storage._open_meta().vlmeta["index_catalog"][col]
        after = repr(b2.open(os.path.join(copy, d2["levels"]["block"]["path"]))[:].tolist())
        out.append((col, before, after))
    t.close()
    shutil.rmtree(tmp)
    return out


failures = []
checked = 0
names = sorted(f[: -len(".ops.json")] for f in os.listdir(OUT) if f.endswith(".ops.json"))
assert names, f"nothing to check in {OUT}"
for name in names:
    with open(os.path.join(OUT, name + ".ops.json")) as f:
        ops = json.load(f)
    fixture = name
    if isinstance(ops, dict):
        fixture, ops = ops["fixture"], ops["ops"]
    tmp = tempfile.mkdtemp()
    mine = os.path.join(tmp, name)
    # A fixture python wrote, or the table as b2nd found it (left beside the ops).
    src = os.path.join(FIXTURES, fixture)
    if not os.path.exists(src):
        src = os.path.join(OUT, fixture)
    if os.path.isdir(src):
        shutil.copytree(src, mine)
    else:
        shutil.copyfile(src, mine)
    aliases = replay(mine, ops)
    theirs = os.path.join(OUT, name)
    tp, tb = b2.open(mine, mode="r"), b2.open(theirs, mode="r")

    def same(what, a, b):
        global checked
        checked += 1
        if a != b:
            failures.append(f"{name}: {what}: python {a!r}, b2nd {b!r}")

    same("nrows", tp.nrows, tb.nrows)
    same("attrs", dict(tp.attrs[:]), dict(tb.attrs[:]))
    same("columns", list(tp.col_names), [aliases.get(c, c) for c in tb.col_names])
    for c in tb.col_names:
        cp = aliases.get(c, c)
        by_name = tp._schema.columns_by_name
        kind = by_name[cp].spec.to_metadata_dict()["kind"] if cp in by_name else None
        if kind in ("list", "ndarray"):
            same(f"column {c}", repr(tp[cp][:]), repr(tb[c][:]))
            continue
        same(f"column {c}", cells(tp, cp), cells(tb, c))
    for expr in ["id > 3", "id < 150", "(id > 0) & (id < 200)", "points > 1", "points < 2"]:
        if not all(c in tp.col_names for c in ("id", expr.split()[0].strip("("))):
            continue
        same(f"where({expr!r})", tp.where(expr)["id"][:].tolist(), tb.where(expr)["id"][:].tolist())
    lp, lb = layout(mine), layout(theirs)
    # python-blosc2 4.14.1's rename_column, drop_column and add_column save the schema as a new `_meta`
    # holding only kind, version and schema: its epochs and index catalog are lost (the
    # sidecars left behind). b2nd keeps them; its summaries must then be true, which python's
    # own rebuild_index tells.
    columns_changed = any(op["op"] in ("rename", "drop", "add_column") for op in ops)
    for k in lp:
        if columns_changed and k in ("summaries", "index_columns", "epochs", "stale"):
            continue
        if k == "lengths":
            for new, old in aliases.items():
                at = "_cols/" + new.replace(".", "/") + "."
                lb[k] = {("_cols/" + old + "." + p[len(at):] if p.startswith(at) else p): n for p, n in lb[k].items()}
        same(k, lp[k], lb[k])
    if columns_changed:
        for col, before, after in rebuilt_summaries(as_dir(theirs)):
            same(f"summary of {col} (b2nd's, python's rebuild_index)", after, before)
    shutil.rmtree(tmp)
    print(f"{name}: {len(ops)} operations, python's replay and b2nd's table agree")

print(f"{checked} comparisons")
if failures:
    print("\n".join(failures))
    sys.exit(1)
