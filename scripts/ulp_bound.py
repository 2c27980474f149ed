"""Measure how far b2nd's computed-column values of each function python-blosc2 evaluates
are from python-blosc2's own, in units in the last place (ulp).

usage: ulp_bound.py B2ND_BINARY OUTDIR [N]

Writes one CTable per float dtype with N random values over several decades (and their
negatives), a computed column per function, reads every computed column with python-blosc2
(`t[name][:]`) and with `b2nd to-npy --column`, and prints the largest ulp distance per
function and dtype (a NaN against a NaN of the same sign counts as equal; against a NaN of the
other sign or a number it fails). The values include the special ones (zeros of both signs,
infinities, NaNs of both signs, the edges of each function's domain) in every pairing, so the
sign of each NaN a domain error gives is compared too. Each function also gets columns of it
applied to constants (`f(C) + 0 * a`): numexpr folds those with NumPy before it evaluates
anything, so their types are NumPy's, their values within FOLDED_ULP of it (b2nd computes them
with the C library); the sign of the NaN NumPy gives there for a domain error depends on the
CPU NumPy runs on (-NaN from its AVX-512 loops, +NaN from the C library's `log`, `arcsin`, ...
elsewhere), so a folded NaN only has to be a NaN.
Exits 1 when any function differs by more than its printed bound allows (0 ulp, FOLDED_ULP
for the folded columns).
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


# Values every function is evaluated at, beside the random ones, each paired with every one of
# them for the functions of two arguments.
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5,
           1e300, -1e300]


# numexpr folds a function of constants with NumPy, whose own SIMD functions (AVX-512 here)
# differ from the C library's, which b2nd and numexpr call, by up to this much: the largest
# distance `numpy_against_c_library` measures (tanh, tan, arcsin, log in float32; 2 ulp in
# float64 but for tanh).
FOLDED_ULP = 3


def folded_constants(f):
    """The constants function `f`'s folded columns apply it to: one outside the domain of
    the logarithms, square root and inverse functions, one inside, an int and a bool (NumPy's
    `f(True)` is float16, a float32 constant to numexpr)."""
    outside = {"arccosh": 0.5, "arcsin": 2.5, "arccos": 2.5, "arctanh": 2.5}.get(f, -2.812)
    inside = 1.7 if f == "arccosh" else 0.3
    return {"neg": outside, "pos": inside, "int": 2, "bool": True}


def ulps(a, b):
    """ulp distance of same-dtype float arrays (NaN vs NaN of the same sign = 0, NaN vs a NaN
    of the other sign or a number = inf)."""
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    bits = np.int32 if a.dtype == np.float32 else np.int64
    # Map the sign-magnitude bit patterns onto a monotonic integer line, in integers: float64
    # holds int64 bit patterns only to within 1024.
    ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
    top = np.int64(np.iinfo(bits).min)
    ia = np.where(ia < 0, top - ia, ia)
    ib = np.where(ib < 0, top - ib, ib)
    # Same side of zero: the difference is exact in int64 (then in float64 while under 2**53).
    same = (ia < 0) == (ib < 0)
    d = np.where(same, np.abs(np.where(same, ia - ib, 0)).astype(np.float64),
                 np.abs(ia.astype(np.float64) - ib.astype(np.float64)))
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0
    d[na ^ nb] = np.inf
    d[na & nb & (np.signbit(a) != np.signbit(b))] = np.inf
    return d


def numpy_against_c_library(x):
    """The largest ulp distance, over `x`, of NumPy's own function from numexpr's (the C
    library's), for each function; NaN against NaN counted equal whatever their signs."""
    import numexpr

    out = {}
    for f in FUNCS:
        with np.errstate(all="ignore"):
            a, b = getattr(np, f)(x), numexpr.evaluate(f"{f}(x)", {"x": x})
        if a.dtype != b.dtype:
            continue  # numexpr's trunc is float64 whatever the operand: exact in both
        d = ulps(a, b)[~(np.isnan(a) & np.isnan(b))]
        out[f] = float(d.max())
    return out


def show(v):
    """A value as text, the sign of a NaN shown."""
    return ("-nan" if np.signbit(v) else "nan") if np.isnan(v) else repr(float(v))


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
        theirs = numpy_against_c_library(x)
        print(f"{dt:8} NumPy's own functions against the C library's: "
              + ", ".join(f"{f} {m:g}" for f, m in theirs.items() if m) + " ulp")
        sx, sy = np.meshgrid(np.array(SPECIAL), np.array(SPECIAL))
        x = np.concatenate([x, sx.ravel().astype(dt)])
        y = np.concatenate([y, sy.ravel().astype(dt)])
        assert np.signbit(x[np.isnan(x)]).any() and not np.signbit(x[np.isnan(x)]).all()
        path = out / f"ulp_{dt}.b2z"
        t = b2.CTable(Row, urlpath=str(path), mode="w")
        t.extend(list(zip(x.tolist(), y.tolist())))
        # The folded columns first: python-blosc2 takes a name in an expression for a column
        # where one has it (the column `sin` below).
        exprs = {f"{f}_{what}": f"({f}({c}) + 0 * a)" for f in FUNCS
                 for what, c in folded_constants(f).items()}
        folded = set(exprs)
        exprs.update({f: f"{f}(a)" for f in FUNCS})
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
            if name in folded:
                d[np.isnan(got) & np.isnan(want)] = 0
            m = float(d.max())
            bound = FOLDED_ULP if name in folded else 0
            worst = max(worst, m - bound)
            print(f"{dt:8} {name:15} result {want.dtype}: max {m:g} ulp (allowed {bound}), "
                  f"{int((d > 0).sum())} of {len(x)} values differ"
                  + (f" (first at a={show(x[d > 0][0])}, b={show(y[d > 0][0])}: b2nd "
                     f"{show(got[d > 0][0])}, python {show(want[d > 0][0])})" if m > 0 else ""))
    print(f"ulp_bound: worst {worst:g} ulp beyond the allowed")
    sys.exit(0 if worst <= 0 else 1)


if __name__ == "__main__":
    main()
