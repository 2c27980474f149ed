"""Generate the in-place fixtures (tests/data/inplace): arrays python-blosc2 4.14.1 wrote
and then changed in place, with `a[region] = values`, `a.resize(shape)`, `a.append(values)`
(1-D) and attribute edits, contiguous and sparse. For each `<name>` (a .b2nd file or a
.b2nd.d directory): `<name>.npy`, what python-blosc2 reads after the changes, and an entry
in `inplace.json` with the shape, the attributes, and the changes made (in words). Each
fixture's generator checks that the changes really happened (the shape moved, the written
values are there, the frame grew or its chunk count changed).

Usage: python scripts/gen_inplace_fixtures.py tests/data/inplace
"""

import json
import os
import shutil
import sys

import blosc2
import numpy as np

assert blosc2.__version__ == "4.14.1", blosc2.__version__

OUT = sys.argv[1]
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)
blosc2.set_nthreads(1)
rng = np.random.default_rng(12)
manifest = []


def path(name):
    return os.path.join(OUT, name)


def finish(name, a, changes):
    a = blosc2.open(path(name), mode="r")
    np.save(path(name + ".npy"), np.ascontiguousarray(a[...]))
    attrs = {k: v for k, v in a.schunk.vlmeta.getall().items()}
    manifest.append({"path": name, "expected": name + ".npy", "shape": list(a.shape),
                     "attrs": attrs, "changes": changes})


# 1-D int32, appended to (scalar, array), then a slice overwritten.
name = "py_append_1d_i4.b2nd"
x = np.arange(50, dtype="<i4")
a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(16,), blocks=(4,))
n0 = a.schunk.nchunks
a.append(7)
a.append(np.arange(100, 140, dtype="<i4"))
a[3:9] = -1
assert a.shape == (91,) and a.schunk.nchunks > n0 and a[3] == -1 and a[50] == 7
finish(name, a, ["append(7)", "append(arange(100, 140))", "[3:9] = -1"])

# 2-D float64: a region over several chunks, grow, shrink, attributes.
name = "py_setitem_resize_2d_f8.b2nd"
x = rng.standard_normal((30, 20))
a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(8, 8), blocks=(3, 5),
                   cparams={"codec": blosc2.Codec.LZ4, "clevel": 3})
a[5:17, 2:15] = 2.5
a.resize((41, 23))
a[35:41, :] = -3.0
a.resize((38, 23))
a.schunk.vlmeta["unit"] = "K"
a.schunk.vlmeta["n"] = [1, 2, 3]
assert a.shape == (38, 23) and a[6, 3] == 2.5 and a[36, 0] == -3.0 and a[0, 21] == 0
finish(name, a, ["[5:17, 2:15] = 2.5", "resize((41, 23))", "[35:41, :] = -3", "resize((38, 23))",
                 "vlmeta unit, n"])

# Sparse 2-D uint16: a region write and a grow on both axes.
name = "py_sparse_2d_u2.b2nd.d"
x = rng.integers(0, 60000, (17, 9), dtype="<u2")
a = blosc2.asarray(x, urlpath=path(name), mode="w", contiguous=False, chunks=(5, 4),
                   blocks=(2, 4))
a[0:6, 0:4] = 9
a.resize((20, 13))
a[18:20, 10:13] = 1
assert a.shape == (20, 13) and a[0, 0] == 9 and a[19, 12] == 1
finish(name, a, ["[0:6, 0:4] = 9", "resize((20, 13))", "[18:20, 10:13] = 1"])

# 3-D with blocks not dividing chunks, zstd + bitshuffle: writes across chunk edges.
name = "py_3d_ragged_i8.b2nd"
x = rng.integers(-5, 5, (11, 7, 6), dtype="<i8")
a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(4, 3, 5), blocks=(3, 2, 2),
                   cparams={"filters": [blosc2.Filter.BITSHUFFLE], "filters_meta": [0]})
a[2:9, 1:6, 3:6] = 42
a.resize((13, 7, 8))
assert a.shape == (13, 7, 8) and a[2, 1, 3] == 42 and a[12, 6, 7] == 0
finish(name, a, ["[2:9, 1:6, 3:6] = 42", "resize((13, 7, 8))"])

# Shrunk to nothing, then grown back and written.
name = "py_empty_regrow_f4.b2nd"
x = np.arange(24, dtype="<f4").reshape(6, 4)
a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(4, 4), blocks=(2, 2))
a.resize((0, 4))
assert a.schunk.nchunks == 0
a.resize((5, 4))
a[1:3] = 8.5
assert a.shape == (5, 4) and a[1, 0] == 8.5 and a[0, 0] == 0
finish(name, a, ["resize((0, 4))", "resize((5, 4))", "[1:3] = 8.5"])

# Strings, 1-D, appended to.
name = "py_append_1d_U3.b2nd"
x = np.array(["ab", "cde", "f"] * 5, dtype="<U3")
a = blosc2.asarray(x, urlpath=path(name), mode="w", chunks=(6,), blocks=(2,))
a.append(np.array(["xyz", "q"], dtype="<U3"))
a[0] = "zz"
assert a.shape == (17,) and a[15] == "xyz" and a[0] == "zz"
finish(name, a, ["append(['xyz', 'q'])", "[0] = 'zz'"])

with open(path("inplace.json"), "w") as f:
    json.dump(manifest, f, indent=1)
print(f"{len(manifest)} in-place fixtures in {OUT}")
