"""Check, with python-blosc2, the stores b2nd wrote (tests/store_write.rs with
B2ND_STORE_OUT=DIR): each opens as the right class, lists the expected keys, holds the
expected values, and (TreeStores) the expected group attributes. Also checks that
python-blosc2 can unpack each .b2z (zip checksums) and reopen the copy.

Usage: python scripts/check_stores_written.py DIR
"""

import json
import os
import sys
import tempfile

import blosc2
import numpy as np

d = sys.argv[1]
manifest = json.load(open(os.path.join(d, "manifest.json")))
passed = failed = 0
for m in manifest:
    path = os.path.join(d, m["name"])
    try:
        s = blosc2.open(path, mode="r")
        want_cls = {"dictstore": blosc2.DictStore, "treestore": blosc2.TreeStore}[m["kind"]]
        assert type(s) is want_cls, (type(s), want_cls)
        assert sorted(s.keys()) == m["keys"], (sorted(s.keys()), m["keys"])
        assert s["/small"][:].tolist() == m["values"]["/small"]
        assert s["/dir1/sub/ints"][:].tolist() == m["values"]["/dir1/sub/ints"]
        big = s["/dir1/big"]
        assert list(big.shape) == m["values"]["/dir1/big"]["shape"]
        assert big[-1, -1] == m["values"]["/dir1/big"]["last"]
        assert np.array_equal(big[:].ravel(), np.arange(600) * 0.5)
        for g, attrs in m["group_attrs"].items():
            sub = s if g == "/" else s[g]
            assert dict(sub.vlmeta[:]) == attrs, (g, dict(sub.vlmeta[:]), attrs)
        if path.endswith(".b2z"):
            with tempfile.TemporaryDirectory() as tmp:
                out = s.to_b2d(os.path.join(tmp, "copy.b2d"))
                again = blosc2.open(out, mode="r")
                assert sorted(again.keys()) == m["keys"]
        passed += 1
    except Exception as e:  # report every failure, then fail
        failed += 1
        print(f"FAIL {m['name']}: {type(e).__name__}: {e}")
print(f"stores written: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
