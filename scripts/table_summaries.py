"""Shared by check_tables_written.py and diff_tables.py: compare the SUMMARY indexes of a
CTable b2nd wrote (`ours`) with those python-blosc2 4.14.1 built on its own copy (`theirs`).
"""

import numpy as np
from blosc2 import indexing

GEOMETRY = {"shape", "chunks", "blocks"}


def compare_summaries(t, p):
    """Assert that table `t` (b2nd's) carries the SUMMARY indexes python built for `p`: the
    same columns, each descriptor python's but for the geometry (b2nd's column chunks and
    blocks), and records equal to python's `_compute_segment_summaries` of b2nd's column
    (null-aware where the descriptor says so). Returns the indexed column names."""
    ours, theirs = t._get_index_catalog(), p._get_index_catalog()
    assert sorted(ours) == sorted(theirs), (sorted(ours), sorted(theirs))
    for c in theirs:
        a, b = dict(ours[c]), dict(theirs[c])
        la, lb = a.pop("levels")["block"], b.pop("levels")["block"]
        for k in GEOMETRY:
            a.pop(k), b.pop(k)
        assert a == b, (c, a, b)
        assert la["dtype"] == lb["dtype"], (c, la, lb)
        arr = t._cols[c]
        seg = int(arr.blocks[0])
        assert la["segment_len"] == seg, (c, la)
        assert ours[c]["shape"] == arr.shape and ours[c]["chunks"] == arr.chunks, (c, ours[c])
        values = arr[:]
        valid = ~np.asarray(t[c].is_null()) if ours[c]["null_aware"] else None
        want = indexing._compute_segment_summaries(values, values.dtype, seg, valid)
        got = indexing._open_sidecar_file(la["path"])[:]
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (
            c, "records differ from python's", got[:3], want[:3])
    return sorted(theirs)
