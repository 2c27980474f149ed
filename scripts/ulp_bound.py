"""Measure how far b2nd's computed-column values of each function python-blosc2 evaluates
are from python-blosc2's own, in units in the last place (ulp).

usage: ulp_bound.py B2ND_BINARY OUTDIR [N]

Writes one CTable per float dtype with N random values over several decades (and their
negatives), a computed column per function, reads every computed column with python-blosc2
(`t[name][:]`) and with `b2nd to-npy --column`, and prints the largest ulp distance per
function and dtype (NaN against NaN counts as equal; a NaN against a number fails).
Exits 1 when any function differs by more than its printed bound is allowed (0 ulp).
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np

import blosc2 as b2

FUNCS = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log1p", "log2", "log10",
         "sqrt", "abs", "floor", "ceil", "trunc"]
BINARY = {"arctan2": "arctan2(o0, o1)", "hypot": "hypot(o0, o1)", "pow": "o0 ** o1",
          "div": "o0 / o1", "copysign": "copysign(o0, o1)"}


def ulps(a, b):
    """ulp distance of same-dtype float arrays (NaN vs NaN = 0, NaN vs number = inf)."""
    ia = a.view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.float64)
    ib = b.view(np.int32 if b.dtype == np.float32 else np.int64).astype(np.float64)
    # Map the sign-magnitude bit patterns onto a monotonic integer line.
    top = 2.0 ** (31 if a.dtype == np.float32 else 63)
    ia = np.where(ia < 0, -top - ia, ia)
    ib = np.where(ib < 0, -top - ib, ib)
    d = np.abs(ia - ib)
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0
    d[na ^ nb] = np.inf
    return d


def main():
    binary, out = sys.argv[1], Path(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(12345)
    worst = 0.0
    for dt, spec in [("float64", b2.float64()), ("float32", b2.float32())]:
        @dataclasses.dataclass
        class Row:
            a: float = b2.field(spec, default=0.0)
            b: float = b2.field(spec, default=0.0)

        mag = 10.0 ** rng.uniform(-6, 3, n)
        x = (mag * rng.choice([-1.0, 1.0], n)).astype(dt)
        y = (10.0 ** rng.uniform(-2, 1, n) * rng.choice([-1.0, 1.0], n)).astype(dt)
        path = out / f"ulp_{dt}.b2z"
        t = b2.CTable(Row, urlpath=str(path), mode="w")
        t.extend(list(zip(x.tolist(), y.tolist())))
        exprs = {f: f"{f}(a)" for f in FUNCS}
        exprs.update({k: v.replace("o0", "a").replace("o1", "b") for k, v in BINARY.items()})
        for name, e in exprs.items():
            t.add_computed_column(name, e)
        t.close()
        t = b2.open(str(path))
        for name in exprs:
            with np.errstate(all="ignore"):
                want = np.asarray(t[name][:])
            npy = out / f"{dt}_{name}.npy"
            subprocess.run([binary, "to-npy", "--force", "--column", name, str(path), str(npy)],
                           check=True)
            got = np.load(npy)
            assert got.dtype == want.dtype, (dt, name, got.dtype, want.dtype)
            d = ulps(got, want)
            m = float(d.max())
            worst = max(worst, m)
            print(f"{dt:8} {name:9} result {want.dtype}: max {m:g} ulp, "
                  f"{int((d > 0).sum())} of {n} values differ")
    print(f"ulp_bound: worst {worst:g} ulp")
    sys.exit(0 if worst == 0 else 1)


if __name__ == "__main__":
    main()
