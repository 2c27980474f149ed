//! NumPy's answers for dtype strings, and the parser's limits.
use super::*;

/// One dtype string and what NumPy says about it.
struct Case {
    /// The string (python-blosc2's stored string, or a hand-written one NumPy reads).
    s: &'static str,
    /// `dtype.kind`.
    kind: char,
    /// `dtype.itemsize`.
    itemsize: usize,
    /// `dtype.alignment`.
    alignment: usize,
    /// `dtype.isalignedstruct`.
    aligned: bool,
    /// What python-blosc2 would store for the dtype NumPy reads from `s`.
    canon: &'static str,
    /// Top-level `(name, offset)` pairs in `dtype.names` order.
    offsets: &'static [(&'static str, usize)],
    /// `repr(np.lib.format.dtype_to_descr(base))` after expanding top-level subarrays;
    /// `None` where NumPy raises (overlapping / out-of-order fields).
    npy: Option<&'static str>,
    /// The shape the top-level subarray expansion adds.
    npy_shape: &'static [usize],
    /// NumPy's `canon` does not read back as the same dtype (NumPy's `str()` is lossy).
    numpy_lossy: bool,
}

// Generated with NumPy 2.4.6 and python-blosc2 4.14.1: for each dtype `d` built in Python,
// `s` is what python-blosc2 stores (`str(d)` if `d.kind == 'V'` else `d.str`; for 143 of them
// also read back from the `b2nd` metalayer of an array python-blosc2 wrote), the other
// columns come from the dtype python-blosc2 reads back from `s`. The last rows are strings
// NumPy reads but never writes, and strings found in real python-blosc2 files (`asarray`
// turns padding into phantom `('f1', 'V7')` fields and a plain `V8` into `[('f0', 'V8')]`).
#[rustfmt::skip]
const NUMPY_CASES: &[Case] = &[
    Case { s: "|b1", kind: 'b', itemsize: 1, alignment: 1, aligned: false, canon: "|b1", offsets: &[], npy: Some("'|b1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|i1", kind: 'i', itemsize: 1, alignment: 1, aligned: false, canon: "|i1", offsets: &[], npy: Some("'|i1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|u1", kind: 'u', itemsize: 1, alignment: 1, aligned: false, canon: "|u1", offsets: &[], npy: Some("'|u1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<i2", kind: 'i', itemsize: 2, alignment: 2, aligned: false, canon: "<i2", offsets: &[], npy: Some("'<i2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">i2", kind: 'i', itemsize: 2, alignment: 2, aligned: false, canon: ">i2", offsets: &[], npy: Some("'>i2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<u2", kind: 'u', itemsize: 2, alignment: 2, aligned: false, canon: "<u2", offsets: &[], npy: Some("'<u2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">u2", kind: 'u', itemsize: 2, alignment: 2, aligned: false, canon: ">u2", offsets: &[], npy: Some("'>u2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<i4", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">i4", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: ">i4", offsets: &[], npy: Some("'>i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<u4", kind: 'u', itemsize: 4, alignment: 4, aligned: false, canon: "<u4", offsets: &[], npy: Some("'<u4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">u4", kind: 'u', itemsize: 4, alignment: 4, aligned: false, canon: ">u4", offsets: &[], npy: Some("'>u4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<i8", kind: 'i', itemsize: 8, alignment: 8, aligned: false, canon: "<i8", offsets: &[], npy: Some("'<i8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">i8", kind: 'i', itemsize: 8, alignment: 8, aligned: false, canon: ">i8", offsets: &[], npy: Some("'>i8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<u8", kind: 'u', itemsize: 8, alignment: 8, aligned: false, canon: "<u8", offsets: &[], npy: Some("'<u8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">u8", kind: 'u', itemsize: 8, alignment: 8, aligned: false, canon: ">u8", offsets: &[], npy: Some("'>u8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<f2", kind: 'f', itemsize: 2, alignment: 2, aligned: false, canon: "<f2", offsets: &[], npy: Some("'<f2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">f2", kind: 'f', itemsize: 2, alignment: 2, aligned: false, canon: ">f2", offsets: &[], npy: Some("'>f2'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<f4", kind: 'f', itemsize: 4, alignment: 4, aligned: false, canon: "<f4", offsets: &[], npy: Some("'<f4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">f4", kind: 'f', itemsize: 4, alignment: 4, aligned: false, canon: ">f4", offsets: &[], npy: Some("'>f4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<f8", kind: 'f', itemsize: 8, alignment: 8, aligned: false, canon: "<f8", offsets: &[], npy: Some("'<f8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">f8", kind: 'f', itemsize: 8, alignment: 8, aligned: false, canon: ">f8", offsets: &[], npy: Some("'>f8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<f16", kind: 'f', itemsize: 16, alignment: 16, aligned: false, canon: "<f16", offsets: &[], npy: Some("'<f16'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">f16", kind: 'f', itemsize: 16, alignment: 16, aligned: false, canon: ">f16", offsets: &[], npy: Some("'>f16'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<c8", kind: 'c', itemsize: 8, alignment: 4, aligned: false, canon: "<c8", offsets: &[], npy: Some("'<c8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">c8", kind: 'c', itemsize: 8, alignment: 4, aligned: false, canon: ">c8", offsets: &[], npy: Some("'>c8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<c16", kind: 'c', itemsize: 16, alignment: 8, aligned: false, canon: "<c16", offsets: &[], npy: Some("'<c16'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">c16", kind: 'c', itemsize: 16, alignment: 8, aligned: false, canon: ">c16", offsets: &[], npy: Some("'>c16'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<c32", kind: 'c', itemsize: 32, alignment: 16, aligned: false, canon: "<c32", offsets: &[], npy: Some("'<c32'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">c32", kind: 'c', itemsize: 32, alignment: 16, aligned: false, canon: ">c32", offsets: &[], npy: Some("'>c32'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8", offsets: &[], npy: Some("'<M8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">M8", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: ">M8", offsets: &[], npy: Some("'>M8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<m8", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: "<m8", offsets: &[], npy: Some("'<m8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">m8", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: ">m8", offsets: &[], npy: Some("'>m8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[Y]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[Y]", offsets: &[], npy: Some("'<M8[Y]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[M]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[M]", offsets: &[], npy: Some("'<M8[M]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[W]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[W]", offsets: &[], npy: Some("'<M8[W]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[D]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[D]", offsets: &[], npy: Some("'<M8[D]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[h]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[h]", offsets: &[], npy: Some("'<M8[h]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[m]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[m]", offsets: &[], npy: Some("'<M8[m]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[s]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[s]", offsets: &[], npy: Some("'<M8[s]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[ms]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[ms]", offsets: &[], npy: Some("'<M8[ms]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[us]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[us]", offsets: &[], npy: Some("'<M8[us]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[ns]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[ns]", offsets: &[], npy: Some("'<M8[ns]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[ps]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[ps]", offsets: &[], npy: Some("'<M8[ps]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[fs]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[fs]", offsets: &[], npy: Some("'<M8[fs]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[as]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[as]", offsets: &[], npy: Some("'<M8[as]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<m8[Y]", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: "<m8[Y]", offsets: &[], npy: Some("'<m8[Y]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<m8[s]", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: "<m8[s]", offsets: &[], npy: Some("'<m8[s]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">m8[us]", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: ">m8[us]", offsets: &[], npy: Some("'>m8[us]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">M8[us]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: ">M8[us]", offsets: &[], npy: Some("'>M8[us]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[10s]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[10s]", offsets: &[], npy: Some("'<M8[10s]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[25us]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[25us]", offsets: &[], npy: Some("'<M8[25us]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<m8[7D]", kind: 'm', itemsize: 8, alignment: 8, aligned: false, canon: "<m8[7D]", offsets: &[], npy: Some("'<m8[7D]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[3M]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[3M]", offsets: &[], npy: Some("'<M8[3M]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[0s]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[0s]", offsets: &[], npy: Some("'<M8[0s]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[2147483647as]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[2147483647as]", offsets: &[], npy: Some("'<M8[2147483647as]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S0", kind: 'S', itemsize: 0, alignment: 1, aligned: false, canon: "|S0", offsets: &[], npy: Some("'|S0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S1", kind: 'S', itemsize: 1, alignment: 1, aligned: false, canon: "|S1", offsets: &[], npy: Some("'|S1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S5", kind: 'S', itemsize: 5, alignment: 1, aligned: false, canon: "|S5", offsets: &[], npy: Some("'|S5'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S100", kind: 'S', itemsize: 100, alignment: 1, aligned: false, canon: "|S100", offsets: &[], npy: Some("'|S100'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S2147483647", kind: 'S', itemsize: 2147483647, alignment: 1, aligned: false, canon: "|S2147483647", offsets: &[], npy: Some("'|S2147483647'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<U0", kind: 'U', itemsize: 0, alignment: 4, aligned: false, canon: "<U0", offsets: &[], npy: Some("'<U0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<U1", kind: 'U', itemsize: 4, alignment: 4, aligned: false, canon: "<U1", offsets: &[], npy: Some("'<U1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<U3", kind: 'U', itemsize: 12, alignment: 4, aligned: false, canon: "<U3", offsets: &[], npy: Some("'<U3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">U3", kind: 'U', itemsize: 12, alignment: 4, aligned: false, canon: ">U3", offsets: &[], npy: Some("'>U3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<U100", kind: 'U', itemsize: 400, alignment: 4, aligned: false, canon: "<U100", offsets: &[], npy: Some("'<U100'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<U536870911", kind: 'U', itemsize: 2147483644, alignment: 4, aligned: false, canon: "<U536870911", offsets: &[], npy: Some("'<U536870911'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|V0", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "|V0", offsets: &[], npy: Some("'|V0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|V1", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "|V1", offsets: &[], npy: Some("'|V1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|V8", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "|V8", offsets: &[], npy: Some("'|V8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|V2147483647", kind: 'V', itemsize: 2147483647, alignment: 1, aligned: false, canon: "|V2147483647", offsets: &[], npy: Some("'|V2147483647'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4'), ('b', '<f8'), ('c', 'S3')]", kind: 'V', itemsize: 15, alignment: 1, aligned: false, canon: "[('a', '<i4'), ('b', '<f8'), ('c', 'S3')]", offsets: &[("a", 0), ("b", 4), ("c", 12)], npy: Some("[('a', '<i4'), ('b', '<f8'), ('c', '|S3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', [('x', '<f4'), ('y', 'u1')])]", kind: 'V', itemsize: 6, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', [('x', '<f4'), ('y', 'u1')])]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('x', '<f4'), ('y', '|u1')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (2,)), ('m', '<f8', (2, 3))]", kind: 'V', itemsize: 56, alignment: 1, aligned: false, canon: "[('a', '<i4', (2,)), ('m', '<f8', (2, 3))]", offsets: &[("a", 0), ("m", 8)], npy: Some("[('a', '<i4', (2,)), ('m', '<f8', (2, 3))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(('T', 'a'), 'u1'), ('b', '<i2')]", kind: 'V', itemsize: 3, alignment: 1, aligned: false, canon: "[(('T', 'a'), 'u1'), ('b', '<i2')]", offsets: &[("a", 0), ("b", 1)], npy: Some("[(('T', 'a'), '|u1'), ('b', '<i2')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(('Title with space', 'x'), '<f8'), (('', 'y'), 'u1')]", kind: 'V', itemsize: 9, alignment: 1, aligned: false, canon: "[(('Title with space', 'x'), '<f8'), (('', 'y'), 'u1')]", offsets: &[("x", 0), ("y", 8)], npy: Some("[(('Title with space', 'x'), '<f8'), (('', 'y'), '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('b', '?'), ('i', 'i1'), ('u', 'u1'), ('S', 'S'), ('U0', '<U'), ('U', '<U2'), ('V', 'V4'), ('V0', 'V'), ('M', '<M8[ns]'), ('m', '>m8[3s]'), ('g', '<M8'), ('bu', '>U3')]", kind: 'V', itemsize: 51, alignment: 1, aligned: false, canon: "[('b', '?'), ('i', 'i1'), ('u', 'u1'), ('S', 'S'), ('U0', '<U'), ('U', '<U2'), ('V', 'V4'), ('V0', 'V'), ('M', '<M8[ns]'), ('m', '>m8[3s]'), ('g', '<M8'), ('bu', '>U3')]", offsets: &[("b", 0), ("i", 1), ("u", 2), ("S", 3), ("U0", 3), ("U", 3), ("V", 11), ("V0", 15), ("M", 15), ("m", 23), ("g", 31), ("bu", 39)], npy: Some("[('b', '|b1'), ('i', '|i1'), ('u', '|u1'), ('S', '|S0'), ('U0', '<U0'), ('U', '<U2'), ('V', '|V4'), ('V0', '|V0'), ('M', '<M8[ns]'), ('m', '>m8[3s]'), ('g', '<M8'), ('bu', '>U3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('be', '>i8'), ('le', '<i8'), ('bf', '>f4'), ('bc', '>c16'), ('bh', '>f2')]", kind: 'V', itemsize: 38, alignment: 1, aligned: false, canon: "[('be', '>i8'), ('le', '<i8'), ('bf', '>f4'), ('bc', '>c16'), ('bh', '>f2')]", offsets: &[("be", 0), ("le", 8), ("bf", 16), ("bc", 20), ("bh", 36)], npy: Some("[('be', '>i8'), ('le', '<i8'), ('bf', '>f4'), ('bc', '>c16'), ('bh', '>f2')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(\"it's\", 'u1'), ('q\"x', 'u1'), ('back\\\\s', 'u1'), ('nl\\n', 'u1'), ('uni\u{e9}', 'u1'), ('tab\\t', 'u1'), ('both\\'\"', 'u1')]", kind: 'V', itemsize: 7, alignment: 1, aligned: false, canon: "[(\"it's\", 'u1'), ('q\"x', 'u1'), ('back\\\\s', 'u1'), ('nl\\n', 'u1'), ('uni\u{e9}', 'u1'), ('tab\\t', 'u1'), ('both\\'\"', 'u1')]", offsets: &[("it's", 0), ("q\"x", 1), ("back\\s", 2), ("nl\u{a}", 3), ("uni\u{e9}", 4), ("tab\u{9}", 5), ("both'\"", 6)], npy: Some("[(\"it's\", '|u1'), ('q\"x', '|u1'), ('back\\\\s', '|u1'), ('nl\\n', '|u1'), ('uni\u{e9}', '|u1'), ('tab\\t', '|u1'), ('both\\'\"', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('nul\\x00', 'u1'), ('del\\x7f', 'u1'), ('nbsp\\xa0', 'u1'), ('shy\\xad', 'u1'), ('zw\\u200b', 'u1'), ('pua\\ue000', 'u1'), ('emoji\u{1f600}', 'u1'), ('cjk\u{4e2d}', 'u1'), ('bom\\ufeff', 'u1'), ('ls\\u2028', 'u1'), ('c1\\x85', 'u1'), ('supPUA\\U00100000', 'u1'), ('tag\\U000e0041', 'u1'), ('cr\\r', 'u1'), ('esc\\x1b', 'u1')]", kind: 'V', itemsize: 15, alignment: 1, aligned: false, canon: "[('nul\\x00', 'u1'), ('del\\x7f', 'u1'), ('nbsp\\xa0', 'u1'), ('shy\\xad', 'u1'), ('zw\\u200b', 'u1'), ('pua\\ue000', 'u1'), ('emoji\u{1f600}', 'u1'), ('cjk\u{4e2d}', 'u1'), ('bom\\ufeff', 'u1'), ('ls\\u2028', 'u1'), ('c1\\x85', 'u1'), ('supPUA\\U00100000', 'u1'), ('tag\\U000e0041', 'u1'), ('cr\\r', 'u1'), ('esc\\x1b', 'u1')]", offsets: &[("nul\u{0}", 0), ("del\u{7f}", 1), ("nbsp\u{a0}", 2), ("shy\u{ad}", 3), ("zw\u{200b}", 4), ("pua\u{e000}", 5), ("emoji\u{1f600}", 6), ("cjk\u{4e2d}", 7), ("bom\u{feff}", 8), ("ls\u{2028}", 9), ("c1\u{85}", 10), ("supPUA\u{100000}", 11), ("tag\u{e0041}", 12), ("cr\u{d}", 13), ("esc\u{1b}", 14)], npy: Some("[('nul\\x00', '|u1'), ('del\\x7f', '|u1'), ('nbsp\\xa0', '|u1'), ('shy\\xad', '|u1'), ('zw\\u200b', '|u1'), ('pua\\ue000', '|u1'), ('emoji\u{1f600}', '|u1'), ('cjk\u{4e2d}', '|u1'), ('bom\\ufeff', '|u1'), ('ls\\u2028', '|u1'), ('c1\\x85', '|u1'), ('supPUA\\U00100000', '|u1'), ('tag\\U000e0041', '|u1'), ('cr\\r', '|u1'), ('esc\\x1b', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'V')]", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "[('a', 'V')]", offsets: &[("a", 0)], npy: Some("[('a', '|V0')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[]", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "[]", offsets: &[], npy: Some("[]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', []), ('b', 'u1')]", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', []), ('b', 'u1')]", offsets: &[("a", 0), ("b", 0)], npy: Some("[('a', []), ('b', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1', (2, 2)), ('b', [('c', '<i4', (3,))], (2,))]", kind: 'V', itemsize: 28, alignment: 1, aligned: false, canon: "[('a', 'u1', (2, 2)), ('b', [('c', '<i4', (3,))], (2,))]", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1', (2, 2)), ('b', [('c', '<i4', (3,))], (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (1,))]", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "[('a', '<i4', (1,))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (1,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (0,))]", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "[('a', '<i4', (0,))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (0,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (2, 0, 3))]", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "[('a', '<i4', (2, 0, 3))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (2, 0, 3))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', ('<i4', (2,)), (3,))]", kind: 'V', itemsize: 24, alignment: 1, aligned: false, canon: "[('a', ('<i4', (2,)), (3,))]", offsets: &[("a", 0)], npy: Some("[('a', ('<i4', (2,)), (3,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', (('<i4', (2,)), (3,)), (4,))]", kind: 'V', itemsize: 96, alignment: 1, aligned: false, canon: "[('a', (('<i4', (2,)), (3,)), (4,))]", offsets: &[("a", 0)], npy: Some("[('a', (('<i4', (2,)), (3,)), (4,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'V8'), ('b', 'S3'), ('c', 'S')]", kind: 'V', itemsize: 11, alignment: 1, aligned: false, canon: "[('a', 'V8'), ('b', 'S3'), ('c', 'S')]", offsets: &[("a", 0), ("b", 8), ("c", 11)], npy: Some("[('a', '|V8'), ('b', '|S3'), ('c', '|S0')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))]", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "[('a', '<i4', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('x', [('y', [('z', [('w', [('v', '<f8', (2,))])])])])]", kind: 'V', itemsize: 16, alignment: 1, aligned: false, canon: "[('x', [('y', [('z', [('w', [('v', '<f8', (2,))])])])])]", offsets: &[("x", 0)], npy: Some("[('x', [('y', [('z', [('w', [('v', '<f8', (2,))])])])])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', [('x', 'u1'), ('y', '<i8')], (3,))]", kind: 'V', itemsize: 28, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', [('x', 'u1'), ('y', '<i8')], (3,))]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('x', '|u1'), ('y', '<i8')], (3,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<U1', (2,)), ('d', '<M8[D]', (2,)), ('b', '?', (3,))]", kind: 'V', itemsize: 27, alignment: 1, aligned: false, canon: "[('a', '<U1', (2,)), ('d', '<M8[D]', (2,)), ('b', '?', (3,))]", offsets: &[("a", 0), ("d", 8), ("b", 24)], npy: Some("[('a', '<U1', (2,)), ('d', '<M8[D]', (2,)), ('b', '|b1', (3,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('f0', '<i4'), ('f1', '<i4')]", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('f0', '<i4'), ('f1', '<i4')]", offsets: &[("f0", 0), ("f1", 4)], npy: Some("[('f0', '<i4'), ('f1', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('names', '<i4'), ('formats', '<i4'), ('offsets', 'u1'), ('itemsize', 'u1'), ('aligned', '?')]", kind: 'V', itemsize: 11, alignment: 1, aligned: false, canon: "[('names', '<i4'), ('formats', '<i4'), ('offsets', 'u1'), ('itemsize', 'u1'), ('aligned', '?')]", offsets: &[("names", 0), ("formats", 4), ("offsets", 8), ("itemsize", 9), ("aligned", 10)], npy: Some("[('names', '<i4'), ('formats', '<i4'), ('offsets', '|u1'), ('itemsize', '|u1'), ('aligned', '|b1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1', (2147483647,))]", kind: 'V', itemsize: 2147483647, alignment: 1, aligned: false, canon: "[('a', 'u1', (2147483647,))]", offsets: &[("a", 0)], npy: Some("[('a', '|u1', (2147483647,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(('T', 'a'), 'u1', (2,)), (('U', 'b'), [('c', 'u1')])]", kind: 'V', itemsize: 3, alignment: 1, aligned: false, canon: "[(('T', 'a'), 'u1', (2,)), (('U', 'b'), [('c', 'u1')])]", offsets: &[("a", 0), ("b", 2)], npy: Some("[(('T', 'a'), '|u1', (2,)), (('U', 'b'), [('c', '|u1')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}", kind: 'V', itemsize: 16, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', '<i8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['<i4', 'u1'], 'offsets': [0, 4], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['<i4', 'u1'], 'offsets': [0, 4], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '<i4'), ('b', '|u1'), ('', '|V3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 1, 'aligned': True}", kind: 'V', itemsize: 1, alignment: 1, aligned: true, canon: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 1, 'aligned': True}", offsets: &[("a", 0)], npy: Some("[('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', [('x', 'u1'), ('y', '<i8')]], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", kind: 'V', itemsize: 24, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', [('x', 'u1'), ('y', '<i8')]], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', [('x', '|u1'), ('', '|V7'), ('y', '<i8')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', ('<i8', (2,))], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", kind: 'V', itemsize: 24, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', ('<i8', (2,))], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', '<i8', (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<c16'], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", kind: 'V', itemsize: 24, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<c16'], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', '<c16')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<c8'], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", kind: 'V', itemsize: 12, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<c8'], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<c8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<c32'], 'offsets': [0, 16], 'itemsize': 48, 'aligned': True}", kind: 'V', itemsize: 48, alignment: 16, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<c32'], 'offsets': [0, 16], 'itemsize': 48, 'aligned': True}", offsets: &[("a", 0), ("b", 16)], npy: Some("[('a', '|u1'), ('', '|V15'), ('b', '<c32')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<U3'], 'offsets': [0, 4], 'itemsize': 16, 'aligned': True}", kind: 'V', itemsize: 16, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<U3'], 'offsets': [0, 4], 'itemsize': 16, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<U3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['<f16', 'u1'], 'offsets': [0, 16], 'itemsize': 32, 'aligned': True}", kind: 'V', itemsize: 32, alignment: 16, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['<f16', 'u1'], 'offsets': [0, 16], 'itemsize': 32, 'aligned': True}", offsets: &[("a", 0), ("b", 16)], npy: Some("[('a', '<f16'), ('b', '|u1'), ('', '|V15')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b', 'c', 'd'], 'formats': ['u1', '<f2', 'u1', '>M8[s]'], 'offsets': [0, 2, 4, 8], 'itemsize': 16, 'aligned': True}", kind: 'V', itemsize: 16, alignment: 8, aligned: true, canon: "{'names': ['a', 'b', 'c', 'd'], 'formats': ['u1', '<f2', 'u1', '>M8[s]'], 'offsets': [0, 2, 4, 8], 'itemsize': 16, 'aligned': True}", offsets: &[("a", 0), ("b", 2), ("c", 4), ("d", 8)], npy: Some("[('a', '|u1'), ('', '|V1'), ('b', '<f2'), ('c', '|u1'), ('', '|V3'), ('d', '>M8[s]')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'titles': ['T', 'U'], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'titles': ['T', 'U'], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[(('T', 'a'), '|u1'), ('', '|V3'), (('U', 'b'), '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', [('c', 'u1'), ('d', [('e', 'u1'), ('f', '<f8')])]], 'offsets': [0, 8], 'itemsize': 32, 'aligned': True}", kind: 'V', itemsize: 32, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', [('c', 'u1'), ('d', [('e', 'u1'), ('f', '<f8')])]], 'offsets': [0, 8], 'itemsize': 32, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', [('c', '|u1'), ('', '|V7'), ('d', [('e', '|u1'), ('', '|V7'), ('f', '<f8')])])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b', 'c', 'd'], 'formats': ['S3', 'V5', '?', '>i2'], 'offsets': [0, 3, 8, 10], 'itemsize': 12, 'aligned': True}", kind: 'V', itemsize: 12, alignment: 2, aligned: true, canon: "{'names': ['a', 'b', 'c', 'd'], 'formats': ['S3', 'V5', '?', '>i2'], 'offsets': [0, 3, 8, 10], 'itemsize': 12, 'aligned': True}", offsets: &[("a", 0), ("b", 3), ("c", 8), ("d", 10)], npy: Some("[('a', '|S3'), ('b', '|V5'), ('c', '|b1'), ('', '|V1'), ('d', '>i2')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', (('<i4', (2,)), (3,))], 'offsets': [0, 4], 'itemsize': 28, 'aligned': True}", kind: 'V', itemsize: 28, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', (('<i4', (2,)), (3,))], 'offsets': [0, 4], 'itemsize': 28, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', ('<i4', (2,)), (3,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', ([('x', '<i2')], (3,))], 'offsets': [0, 2], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 2, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', ([('x', '<i2')], (3,))], 'offsets': [0, 2], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 2)], npy: Some("[('a', '|u1'), ('', '|V1'), ('b', [('x', '<i2')], (3,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': [], 'formats': [], 'offsets': [], 'itemsize': 0, 'aligned': True}", kind: 'V', itemsize: 0, alignment: 1, aligned: true, canon: "{'names': [], 'formats': [], 'offsets': [], 'itemsize': 0, 'aligned': True}", offsets: &[], npy: Some("[]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'e'], 'formats': ['u1', []], 'offsets': [0, 1], 'itemsize': 1, 'aligned': True}", kind: 'V', itemsize: 1, alignment: 1, aligned: true, canon: "{'names': ['a', 'e'], 'formats': ['u1', []], 'offsets': [0, 1], 'itemsize': 1, 'aligned': True}", offsets: &[("a", 0), ("e", 1)], npy: Some("[('a', '|u1'), ('e', [])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b', 'c'], 'formats': ['u1', '<U', 'u1'], 'offsets': [0, 4, 4], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 4, aligned: true, canon: "{'names': ['a', 'b', 'c'], 'formats': ['u1', '<U', 'u1'], 'offsets': [0, 4, 4], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 4), ("c", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<U0'), ('c', '|u1'), ('', '|V3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 8], 'itemsize': 12}", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 8], 'itemsize': 12}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 1], 'itemsize': 12}", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 1], 'itemsize': 12}", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', '<i4'), ('', '|V7')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [4, 0], 'itemsize': 5}", kind: 'V', itemsize: 5, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [4, 0], 'itemsize': 5}", offsets: &[("a", 4), ("b", 0)], npy: None, npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['<i4', '<i2'], 'offsets': [0, 0], 'itemsize': 4}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['<i4', '<i2'], 'offsets': [0, 0], 'itemsize': 4}", offsets: &[("a", 0), ("b", 0)], npy: None, npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['<i4', '<i2'], 'offsets': [0, 2], 'itemsize': 4}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['<i4', '<i2'], 'offsets': [0, 2], 'itemsize': 4}", offsets: &[("a", 0), ("b", 2)], npy: None, npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 8], 'titles': ['TA', None], 'itemsize': 12}", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 8], 'titles': ['TA', None], 'itemsize': 12}", offsets: &[("a", 0), ("b", 8)], npy: Some("[(('TA', 'a'), '|u1'), ('', '|V7'), ('b', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'titles': ['TA', 'TB'], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'titles': ['TA', 'TB'], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[(('TA', 'a'), '|u1'), ('', '|V3'), (('TB', 'b'), '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', [('x', '<i4'), ('y', 'u1')]], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", kind: 'V', itemsize: 12, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', [('x', '<i4'), ('y', 'u1')]], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', [('x', '<i4'), ('y', '|u1'), ('', '|V3')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', ('<i4', (2,))], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", kind: 'V', itemsize: 12, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', ('<i4', (2,))], 'offsets': [0, 4], 'itemsize': 12, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<i4', (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 4}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 4}", offsets: &[("a", 0)], npy: Some("[('a', '|u1'), ('', '|V3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['u1'], 'offsets': [3], 'itemsize': 4}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "{'names': ['a'], 'formats': ['u1'], 'offsets': [3], 'itemsize': 4}", offsets: &[("a", 3)], npy: Some("[('', '|V3'), ('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': [], 'formats': [], 'offsets': [], 'itemsize': 4}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "{'names': [], 'formats': [], 'offsets': [], 'itemsize': 4}", offsets: &[], npy: Some("[('', '|V4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 4, 'aligned': True}", kind: 'V', itemsize: 4, alignment: 1, aligned: true, canon: "{'names': ['a'], 'formats': ['u1'], 'offsets': [0], 'itemsize': 4, 'aligned': True}", offsets: &[("a", 0)], npy: Some("[('a', '|u1'), ('', '|V3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['<i8', 'u1'], 'offsets': [8, 0], 'itemsize': 24, 'aligned': True}", kind: 'V', itemsize: 24, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['<i8', 'u1'], 'offsets': [8, 0], 'itemsize': 24, 'aligned': True}", offsets: &[("a", 8), ("b", 0)], npy: None, npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6})]", kind: 'V', itemsize: 7, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6})]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('', '|V2'), ('x', '<i2'), ('', '|V2')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6}], 'offsets': [0, 2], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 2, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6}], 'offsets': [0, 2], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 2)], npy: Some("[('a', '|u1'), ('', '|V1'), ('b', [('', '|V2'), ('x', '<i2'), ('', '|V2')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': [('u1', (3,)), [('x', '<i8')]], 'offsets': [0, 16], 'itemsize': 32}", kind: 'V', itemsize: 32, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': [('u1', (3,)), [('x', '<i8')]], 'offsets': [0, 16], 'itemsize': 32}", offsets: &[("a", 0), ("b", 16)], npy: Some("[('a', '|u1', (3,)), ('', '|V13'), ('b', [('x', '<i8')]), ('', '|V8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'itemsize': 8, 'aligned': True}", kind: 'V', itemsize: 8, alignment: 4, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'itemsize': 8, 'aligned': True}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b', 'c'], 'formats': ['u1', 'V', '<i4'], 'offsets': [0, 1, 4], 'itemsize': 8}", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "{'names': ['a', 'b', 'c'], 'formats': ['u1', 'V', '<i4'], 'offsets': [0, 1, 4], 'itemsize': 8}", offsets: &[("a", 0), ("b", 1), ("c", 4)], npy: Some("[('a', '|u1'), ('b', '|V0'), ('', '|V3'), ('c', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['x y', \"it's\"], 'formats': ['>f8', '<U2'], 'offsets': [0, 16], 'titles': [\"t'1\", 't\"2'], 'itemsize': 32}", kind: 'V', itemsize: 32, alignment: 1, aligned: false, canon: "{'names': ['x y', \"it's\"], 'formats': ['>f8', '<U2'], 'offsets': [0, 16], 'titles': [\"t'1\", 't\"2'], 'itemsize': 32}", offsets: &[("x y", 0), ("it's", 16)], npy: Some("[((\"t'1\", 'x y'), '>f8'), ('', '|V8'), (('t\"2', \"it's\"), '<U2'), ('', '|V8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', 'u1'], 'offsets': [2147483646, 0], 'itemsize': 2147483647}", kind: 'V', itemsize: 2147483647, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', 'u1'], 'offsets': [2147483646, 0], 'itemsize': 2147483647}", offsets: &[("a", 2147483646), ("b", 0)], npy: None, npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6}, (2,))]", kind: 'V', itemsize: 13, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', {'names': ['x'], 'formats': ['<i2'], 'offsets': [2], 'itemsize': 6}, (2,))]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('', '|V2'), ('x', '<i2'), ('', '|V2')], (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', [('p', 'u1'), ('q', '<i8')])]", kind: 'V', itemsize: 10, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', [('p', 'u1'), ('q', '<i8')])]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('p', '|u1'), ('q', '<i8')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', [(('P', 'p'), 'u1')])]", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', [(('P', 'p'), 'u1')])]", offsets: &[("a", 0)], npy: Some("[('a', [(('P', 'p'), '|u1')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('<i4', (2, 2))", kind: 'V', itemsize: 16, alignment: 4, aligned: false, canon: "('<i4', (2, 2))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[2, 2], numpy_lossy: false },
    Case { s: "('<i4', (2,))", kind: 'V', itemsize: 8, alignment: 4, aligned: false, canon: "('<i4', (2,))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('<i4', (3,))", kind: 'V', itemsize: 12, alignment: 4, aligned: false, canon: "('<i4', (3,))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[3], numpy_lossy: false },
    Case { s: "('?', (2,))", kind: 'V', itemsize: 2, alignment: 1, aligned: false, canon: "('?', (2,))", offsets: &[], npy: Some("'|b1'"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('u1', (3, 1))", kind: 'V', itemsize: 3, alignment: 1, aligned: false, canon: "('u1', (3, 1))", offsets: &[], npy: Some("'|u1'"), npy_shape: &[3, 1], numpy_lossy: false },
    Case { s: "('S3', (2,))", kind: 'V', itemsize: 6, alignment: 1, aligned: false, canon: "('S3', (2,))", offsets: &[], npy: Some("'|S3'"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('<U2', (2,))", kind: 'V', itemsize: 16, alignment: 4, aligned: false, canon: "('<U2', (2,))", offsets: &[], npy: Some("'<U2'"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('>M8[ns]', (4,))", kind: 'V', itemsize: 32, alignment: 8, aligned: false, canon: "('>M8[ns]', (4,))", offsets: &[], npy: Some("'>M8[ns]'"), npy_shape: &[4], numpy_lossy: false },
    Case { s: "('<i4', (0,))", kind: 'V', itemsize: 0, alignment: 4, aligned: false, canon: "('<i4', (0,))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[0], numpy_lossy: false },
    Case { s: "('<i4', (2, 0))", kind: 'V', itemsize: 0, alignment: 4, aligned: false, canon: "('<i4', (2, 0))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[2, 0], numpy_lossy: false },
    Case { s: "(('<i4', (2,)), (3,))", kind: 'V', itemsize: 24, alignment: 4, aligned: false, canon: "(('<i4', (2,)), (3,))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[3, 2], numpy_lossy: false },
    Case { s: "([('a', 'u1'), ('b', '>i4')], (2,))", kind: 'V', itemsize: 10, alignment: 1, aligned: false, canon: "([('a', 'u1'), ('b', '>i4')], (2,))", offsets: &[], npy: Some("[('a', '|u1'), ('b', '>i4')]"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "([('a', 'u1'), ('b', '<i8')], (2,))", kind: 'V', itemsize: 18, alignment: 1, aligned: false, canon: "([('a', 'u1'), ('b', '<i8')], (2,))", offsets: &[], npy: Some("[('a', '|u1'), ('b', '<i8')]"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "({'names': ['a'], 'formats': ['u1'], 'offsets': [1], 'itemsize': 2}, (2,))", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "({'names': ['a'], 'formats': ['u1'], 'offsets': [1], 'itemsize': 2}, (2,))", offsets: &[], npy: Some("[('', '|V1'), ('a', '|u1')]"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('V3', (2,))", kind: 'V', itemsize: 6, alignment: 1, aligned: false, canon: "('V3', (2,))", offsets: &[], npy: Some("'|V3'"), npy_shape: &[2], numpy_lossy: false },
    Case { s: "('<f8', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))", kind: 'V', itemsize: 8, alignment: 8, aligned: false, canon: "('<f8', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))", offsets: &[], npy: Some("'<f8'"), npy_shape: &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], numpy_lossy: false },
    Case { s: "('u1', (2147483647,))", kind: 'V', itemsize: 2147483647, alignment: 1, aligned: false, canon: "('u1', (2147483647,))", offsets: &[], npy: Some("'|u1'"), npy_shape: &[2147483647], numpy_lossy: false },
    Case { s: "[('a', '<i4', 2)]", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('a', '<i4', (2,))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', [2, 3])]", kind: 'V', itemsize: 24, alignment: 1, aligned: false, canon: "[('a', '<i4', (2, 3))]", offsets: &[("a", 0)], npy: Some("[('a', '<i4', (2, 3))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('<i4', [2, 2])", kind: 'V', itemsize: 16, alignment: 4, aligned: false, canon: "('<i4', (2, 2))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[2, 2], numpy_lossy: false },
    Case { s: "[('a', 'S', 5)]", kind: 'V', itemsize: 5, alignment: 1, aligned: false, canon: "[('a', 'S5')]", offsets: &[("a", 0)], npy: Some("[('a', '|S5')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<U', 5)]", kind: 'V', itemsize: 20, alignment: 1, aligned: false, canon: "[('a', '<U5')]", offsets: &[("a", 0)], npy: Some("[('a', '<U5')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'U', 5)]", kind: 'V', itemsize: 20, alignment: 1, aligned: false, canon: "[('a', '<U5')]", offsets: &[("a", 0)], npy: Some("[('a', '<U5')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('V', 7)", kind: 'V', itemsize: 7, alignment: 1, aligned: false, canon: "|V7", offsets: &[], npy: Some("'|V7'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('S', 3)", kind: 'S', itemsize: 3, alignment: 1, aligned: false, canon: "|S3", offsets: &[], npy: Some("'|S3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('U', 3)", kind: 'U', itemsize: 12, alignment: 4, aligned: false, canon: "<U3", offsets: &[], npy: Some("'<U3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('>U', 3)", kind: 'U', itemsize: 12, alignment: 4, aligned: false, canon: ">U3", offsets: &[], npy: Some("'>U3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('<i4', ())", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('<i4', 0)", kind: 'V', itemsize: 0, alignment: 4, aligned: false, canon: "('<i4', (0,))", offsets: &[], npy: Some("'<i4'"), npy_shape: &[0], numpy_lossy: false },
    Case { s: "[('a', ('S', 3))]", kind: 'V', itemsize: 3, alignment: 1, aligned: false, canon: "[('a', 'S3')]", offsets: &[("a", 0)], npy: Some("[('a', '|S3')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ('a',), 'formats': ('u1',)}", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', 'u1')]", offsets: &[("a", 0)], npy: Some("[('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['u1'], 'titles': [None]}", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', 'u1')]", offsets: &[("a", 0)], npy: Some("[('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['<i4', 'u1'], 'foo': 3}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "[('a', '<i4')]", offsets: &[("a", 0)], npy: Some("[('a', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'itemsize': 12, 'aligned': False}", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [0, 4], 'itemsize': 12}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<i4'), ('', '|V4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(u'a', 'u1'),]", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', 'u1')]", offsets: &[("a", 0)], npy: Some("[('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: " [ ( 'a' , 'u1' ) ] ", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a', 'u1')]", offsets: &[("a", 0)], npy: Some("[('a', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('', '<i4'), ('', 'u1')]", kind: 'V', itemsize: 5, alignment: 1, aligned: false, canon: "[('f0', '<i4'), ('f1', 'u1')]", offsets: &[("f0", 0), ("f1", 4)], npy: Some("[('f0', '<i4'), ('f1', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(\"d\", \"<f8\")]", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('d', '<f8')]", offsets: &[("d", 0)], npy: Some("[('d', '<f8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': [''], 'formats': ['<i4']}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "[('', '<i4')]", offsets: &[("", 0)], npy: Some("[('', '<i4')]"), npy_shape: &[], numpy_lossy: true },
    Case { s: "{'names': [''], 'formats': ['<i4'], 'titles': ['T']}", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "[(('T', ''), '<i4')]", offsets: &[("", 0)], npy: Some("[(('T', ''), '<i4')]"), npy_shape: &[], numpy_lossy: true },
    Case { s: "'<i4'", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', [('x', 'u1'), ('y', '<i8')]], 'aligned': True}", kind: 'V', itemsize: 24, alignment: 8, aligned: true, canon: "{'names': ['a', 'b'], 'formats': ['u1', [('x', 'u1'), ('y', '<i8')]], 'offsets': [0, 8], 'itemsize': 24, 'aligned': True}", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', [('x', '|u1'), ('', '|V7'), ('y', '<i8')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a', 'b'], 'formats': ['u1', ('<i4', 2)], 'offsets': [0, 4]}", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "{'names': ['a', 'b'], 'formats': ['u1', ('<i4', (2,))], 'offsets': [0, 4], 'itemsize': 12}", offsets: &[("a", 0), ("b", 4)], npy: Some("[('a', '|u1'), ('', '|V3'), ('b', '<i4', (2,))]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', {'names': ['x'], 'formats': ['<i8'], 'aligned': True})]", kind: 'V', itemsize: 9, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', [('x', '<i8')])]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', [('x', '<i8')])]"), npy_shape: &[], numpy_lossy: true },
    Case { s: "({'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}, (2,))", kind: 'V', itemsize: 32, alignment: 8, aligned: true, canon: "([('a', 'u1'), ('b', '<i8')], (2,))", offsets: &[], npy: Some("[('a', '|u1'), ('', '|V7'), ('b', '<i8')]"), npy_shape: &[2], numpy_lossy: true },
    Case { s: "[('esc', 'u1'), ('\\x41\\u00e9\\U0001F600\\101\\n', 'u1')]", kind: 'V', itemsize: 2, alignment: 1, aligned: false, canon: "[('esc', 'u1'), ('A\u{e9}\u{1f600}A\\n', 'u1')]", offsets: &[("esc", 0), ("A\u{e9}\u{1f600}A\u{a}", 1)], npy: Some("[('esc', '|u1'), ('A\u{e9}\u{1f600}A\\n', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('b', '<i8', ())]", kind: 'V', itemsize: 9, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('b', '<i8')]", offsets: &[("a", 0), ("b", 1)], npy: Some("[('a', '|u1'), ('b', '<i8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['<i8'], 'itemsize': 8, 'aligned': True, 'aligned': False}", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('a', '<i8')]", offsets: &[("a", 0)], npy: Some("[('a', '<i8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "{'names': ['a'], 'formats': ['<i8'], 'names': ['b']}", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('b', '<i8')]", offsets: &[("b", 0)], npy: Some("[('b', '<i8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('f0', 'V8')]", kind: 'V', itemsize: 8, alignment: 1, aligned: false, canon: "[('f0', 'V8')]", offsets: &[("f0", 0)], npy: Some("[('f0', '|V8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('f1', 'V7'), ('b', '<i8')]", kind: 'V', itemsize: 16, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('f1', 'V7'), ('b', '<i8')]", offsets: &[("a", 0), ("f1", 1), ("b", 8)], npy: Some("[('a', '|u1'), ('f1', '|V7'), ('b', '<i8')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', 'u1'), ('f1', 'V7'), ('b', '<i4')]", kind: 'V', itemsize: 12, alignment: 1, aligned: false, canon: "[('a', 'u1'), ('f1', 'V7'), ('b', '<i4')]", offsets: &[("a", 0), ("f1", 1), ("b", 8)], npy: Some("[('a', '|u1'), ('f1', '|V7'), ('b', '<i4')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (2,)), ('b', 'u1')]", kind: 'V', itemsize: 9, alignment: 1, aligned: false, canon: "[('a', '<i4', (2,)), ('b', 'u1')]", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '<i4', (2,)), ('b', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<M8[1s]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[s]", offsets: &[], npy: Some("'<M8[s]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "M8[ns]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8[ns]", offsets: &[], npy: Some("'<M8[ns]'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "?", kind: 'b', itemsize: 1, alignment: 1, aligned: false, canon: "|b1", offsets: &[], npy: Some("'|b1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|?", kind: 'b', itemsize: 1, alignment: 1, aligned: false, canon: "|b1", offsets: &[], npy: Some("'|b1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "('<i4')", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[(r'a\\b', 'u1')]", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('a\\\\b', 'u1')]", offsets: &[("a\\b", 0)], npy: Some("[('a\\\\b', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a' 'b', 'u1')]", kind: 'V', itemsize: 1, alignment: 1, aligned: false, canon: "[('ab', 'u1')]", offsets: &[("ab", 0)], npy: Some("[('ab', '|u1')]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "[('a', '<i4', (2,)), ('b', {'names': ['x'], 'formats': ['u1'], 'offsets': [1], 'itemsize': 3})]", kind: 'V', itemsize: 11, alignment: 1, aligned: false, canon: "[('a', '<i4', (2,)), ('b', {'names': ['x'], 'formats': ['u1'], 'offsets': [1], 'itemsize': 3})]", offsets: &[("a", 0), ("b", 8)], npy: Some("[('a', '<i4', (2,)), ('b', [('', '|V1'), ('x', '|u1'), ('', '|V1')])]"), npy_shape: &[], numpy_lossy: false },
    Case { s: "=i4", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|i4", kind: 'i', itemsize: 4, alignment: 4, aligned: false, canon: "<i4", offsets: &[], npy: Some("'<i4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<u1", kind: 'u', itemsize: 1, alignment: 1, aligned: false, canon: "|u1", offsets: &[], npy: Some("'|u1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: ">b1", kind: 'b', itemsize: 1, alignment: 1, aligned: false, canon: "|b1", offsets: &[], npy: Some("'|b1'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<S3", kind: 'S', itemsize: 3, alignment: 1, aligned: false, canon: "|S3", offsets: &[], npy: Some("'|S3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "<V4", kind: 'V', itemsize: 4, alignment: 1, aligned: false, canon: "|V4", offsets: &[], npy: Some("'|V4'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "a5", kind: 'S', itemsize: 5, alignment: 1, aligned: false, canon: "|S5", offsets: &[], npy: Some("'|S5'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "S00003", kind: 'S', itemsize: 3, alignment: 1, aligned: false, canon: "|S3", offsets: &[], npy: Some("'|S3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "i08", kind: 'i', itemsize: 8, alignment: 8, aligned: false, canon: "<i8", offsets: &[], npy: Some("'<i8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "M8[generic]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8", offsets: &[], npy: Some("'<M8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "M8[3generic]", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8", offsets: &[], npy: Some("'<M8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|M8", kind: 'M', itemsize: 8, alignment: 8, aligned: false, canon: "<M8", offsets: &[], npy: Some("'<M8'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "=U3", kind: 'U', itemsize: 12, alignment: 4, aligned: false, canon: "<U3", offsets: &[], npy: Some("'<U3'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|S", kind: 'S', itemsize: 0, alignment: 1, aligned: false, canon: "|S0", offsets: &[], npy: Some("'|S0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "|U", kind: 'U', itemsize: 0, alignment: 4, aligned: false, canon: "<U0", offsets: &[], npy: Some("'<U0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "=V", kind: 'V', itemsize: 0, alignment: 1, aligned: false, canon: "|V0", offsets: &[], npy: Some("'|V0'"), npy_shape: &[], numpy_lossy: false },
    Case { s: "b1", kind: 'b', itemsize: 1, alignment: 1, aligned: false, canon: "|b1", offsets: &[], npy: Some("'|b1'"), npy_shape: &[], numpy_lossy: false },
];

// Strings refused by Dtype::parse. `numpy_accepts` marks those NumPy 2.4.6 reads (python-blosc2's
// np.dtype(s), then np.dtype(ast.literal_eval(s))) but this crate refuses on purpose.
#[rustfmt::skip]
const REJECTS: &[(&str, bool)] = &[
    ("", false),
    (" ", false),
    ("<i16", false),
    ("c4", false),
    ("f3", false),
    ("<f12", false),
    ("b2", false),
    ("i3", false),
    ("u16", false),
    ("S-1", false),
    ("M16", false),
    ("M4", false),
    ("<M8[]", false),
    ("M8[ns", false),
    ("M8ns", false),
    ("M8[B]", false),
    ("M8[-1s]", false),
    ("M8[2147483648s]", false),
    ("M8[99999999999999999999s]", false),
    ("U536870912", false),
    ("S2147483648", false),
    ("V2147483648", false),
    ("S99999999999999999999999", false),
    ("<x4", false),
    ("Z", false),
    ("<", false),
    (">", false),
    ("|", false),
    ("[('a','u1'),('a','u1')]", false),
    ("[(('a','b'),'u1'),('a','u1')]", false),
    ("[(('T', ''), 'u1')]", false),
    ("[(('a', 'a'), 'u1')]", false),
    ("[(('', ''), 'u1')]", false),
    ("[('a', 'S', (2,))]", false),
    ("('V', (2,))", false),
    ("[('a', 'V', (2,))]", false),
    ("('u1', -1)", false),
    ("[('a', '<i4', (-1,))]", false),
    ("{'names':['a'],'formats':['<i4'],'offsets':[2],'aligned':True}", false),
    ("{'names':['a'],'formats':['<i4'],'itemsize':6,'aligned':True}", false),
    ("{'names':['a'],'formats':['<i4'],'itemsize':2}", false),
    ("{'names':['a', 'b'],'formats':['<i4']}", false),
    ("{'names':['a'],'formats':['<i4'],'aligned':1}", false),
    ("{'names':['a'],'formats':['u1'],'offsets':[-1]}", false),
    ("{'names':['a', 'a'],'formats':['u1', 'u1']}", false),
    ("{'names':['a', 'b'],'formats':['u1', 'u1'], 'titles': ['b', None]}", false),
    ("[('a', '<i4', (2147483647,))]", false),
    ("[('a', 'u1', (2147483648,))]", false),
    ("[('a', '<i4', True)]", false),
    ("[['a', '<i4']]", false),
    ("[('a',)]", false),
    ("[('a', '<i4', (2,), 3)]", false),
    ("{'names':['a'],'formats':['u1'],'offsets':[True]}", false),
    ("{'names':['a'],'formats':['u1'],'itemsize':True}", false),
    ("[(('T', 'a', 'x'), 'u1')]", false),
    ("[(b'a', 'u1')]", false),
    ("[('a', '<i4', (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1))]", false),
    ("['<i4', 'u1']", false),
    ("['<i4']", false),
    ("[('a', 'u1')", false),
    ("[('a', 'u1')]]", false),
    ("[('a' 'u1')]", false),
    ("[('a', 'u1'),,]", false),
    ("('<i4',)", false),
    ("('<i4', (2,), 3)", false),
    ("('<i4', [])", false),
    ("[('a', ' <i4')]", false),
    ("[('a\\N{DIGIT ONE}', 'u1')]", true),
    ("{'formats': ['u1']}", false),
    ("{'names': ['a']}", false),
    ("{}", true),
    ("()", false),
    ("[('a', None)]", true),
    ("[(None, 'u1')]", false),
    ("None", true),
    ("True", false),
    ("3", false),
    ("[('a', 'u1')] x", false),
    ("[('a\u{a}', 'u1')]", false),
    ("('<i4', (2, 2)", false),
    ("{'names': ['a'], 'formats': ['u1'], 'itemsize': -1}", false),
    ("[('a', 'u1', (2, -3))]", false),
    ("('<i4', (1073741824,))", false),
    ("('<i4', (65536, 32768))", false),
    ("|O", true),
    ("O", true),
    ("O8", true),
    ("[('a', 'O')]", true),
    ("[('a', 'u1'), ('b', [('c', '|O')])]", true),
    ("('O', (2,))", true),
    ("StringDType()", false),
    ("int32", true),
    ("float64", true),
    ("i", true),
    ("d", true),
    ("i4,f8", true),
    ("(2,)i4", true),
    ("M8[us/2]", true),
    ("M8[ 3s]", true),
    ("[((1, 'a'), 'u1')]", true),
    ("{'names':['a'],'formats':['u1'],'titles':[3]}", true),
    ("[('a', 'u1', (2147483647,)), ('b', 'u1')]", true),
    ("{'names':['a','b'],'formats':['u1','u1'],'offsets':[2147483647, 0]}", true),
    ("(numpy.record, [('a', '<i4')])", false),
    ("('<i4', [('a', '<i2'), ('b', '<i2')])", true),
    ("{'a': ('<i4', 0)}", true),
    ("{'names': 'ab', 'formats': ['u1', 'u1']}", true),
    ("[('a', '<i4', 1 + 1)]", false),
    ("[('a', '<i4', 0x2)]", true),
    ("[('a', '<i4', 1_0)]", true),
];

fn top_aligned(d: &Dtype) -> bool {
    match d {
        Dtype::Struct(s) => s.aligned,
        Dtype::SubArray { base, .. } => top_aligned(base),
        _ => false,
    }
}

/// Properties every parsed dtype has.
fn check_invariants(src: &str, d: &Dtype) {
    let s = d.to_numpy_str();
    match Dtype::parse(&s) {
        Ok(back) => assert_eq!(&back, d, "round trip of {src:?} through {s:?}"),
        Err(e) => panic!("{src:?} parsed but its string {s:?} does not: {e}"),
    }
    assert!(d.itemsize() <= MAX_ITEMSIZE, "{src:?}");
    assert!(d.validate().is_ok(), "{src:?}");
    let _ = d.npy_descr();
    let _ = d.byte_order();
    let _ = d.is_native_order();
    fn fields_inside(d: &Dtype) {
        match d {
            Dtype::Struct(s) => {
                for f in &s.fields {
                    assert!(f.offset + f.dtype.itemsize() <= s.itemsize);
                    fields_inside(&f.dtype);
                }
            }
            Dtype::SubArray { base, shape } => {
                assert!(!shape.is_empty());
                fields_inside(base);
            }
            _ => {}
        }
    }
    fields_inside(d);
}

#[test]
fn numpy_strings() {
    for c in NUMPY_CASES {
        let d = Dtype::parse(c.s).unwrap_or_else(|e| panic!("{:?}: {e}", c.s));
        assert_eq!(d.kind(), c.kind, "kind of {:?}", c.s);
        assert_eq!(d.itemsize(), c.itemsize, "itemsize of {:?}", c.s);
        assert_eq!(d.alignment(), c.alignment, "alignment of {:?}", c.s);
        assert_eq!(top_aligned(&d), c.aligned, "isalignedstruct of {:?}", c.s);
        match &d {
            Dtype::Struct(st) => {
                let got: Vec<(&str, usize)> = st
                    .fields
                    .iter()
                    .map(|f| (f.name.as_str(), f.offset))
                    .collect();
                assert_eq!(got, c.offsets, "offsets of {:?}", c.s);
            }
            _ => assert!(c.offsets.is_empty(), "{:?}", c.s),
        }
        let out = d.to_numpy_str();
        if c.numpy_lossy {
            assert_ne!(out, c.canon, "{:?}", c.s);
        } else {
            assert_eq!(out, c.canon, "to_numpy_str of {:?}", c.s);
            assert_eq!(Dtype::parse(c.canon).as_ref(), Ok(&d), "{:?}", c.canon);
        }
        assert_eq!(d.to_string(), out);
        assert_eq!(c.s.parse::<Dtype>().as_ref(), Ok(&d));
        check_invariants(c.s, &d);
        match c.npy {
            Some(descr) => {
                let want = (descr.to_string(), c.npy_shape.to_vec());
                assert_eq!(
                    d.try_npy_descr().as_ref(),
                    Ok(&want),
                    "npy descr of {:?}",
                    c.s
                );
                assert_eq!(d.npy_descr(), want, "npy descr of {:?}", c.s);
            }
            None => {
                assert!(d.try_npy_descr().is_err(), "{:?}", c.s);
                assert_eq!(d.npy_descr(), (format!("'|V{}'", c.itemsize), vec![]));
            }
        }
    }
}

#[test]
fn rejected_strings() {
    for &(s, _numpy_accepts) in REJECTS {
        match Dtype::parse(s) {
            Ok(d) => panic!("{s:?} should be refused, parsed as {d:?}"),
            Err(e) => {
                assert!(!e.reason.is_empty());
                assert!(e.to_string().contains(&e.reason));
            }
        }
    }
    for s in [
        "|O",
        "O8",
        "[('a', 'u1'), ('b', [('c', '|O')])]",
        "('O', (2,))",
    ] {
        let e = Dtype::parse(s).unwrap_err();
        assert!(
            e.reason.contains("object") && e.reason.contains("pointers"),
            "{e}"
        );
    }
    let e = Dtype::parse("<x4").unwrap_err();
    assert!(e.reason.contains("not understood"), "{e}");
    // NumPy itself wraps these itemsizes around (-2147483648, 1); refused here.
    for s in [
        "[('a', 'u1', (2147483647,)), ('b', 'u1')]",
        "{'names':['a','b'],'formats':['u1','u1'],'offsets':[2147483647, 0]}",
    ] {
        assert!(
            Dtype::parse(s).unwrap_err().reason.contains("2147483647"),
            "{s}"
        );
    }
}

#[test]
fn scalars() {
    use ByteOrder::*;
    assert_eq!(Dtype::parse("|b1"), Ok(Dtype::Bool));
    assert_eq!(
        Dtype::parse("|i1"),
        Ok(Dtype::Int {
            size: 1,
            order: NotApplicable
        })
    );
    assert_eq!(
        Dtype::parse(">i4"),
        Ok(Dtype::Int {
            size: 4,
            order: Big
        })
    );
    assert_eq!(
        Dtype::parse("<u8"),
        Ok(Dtype::UInt {
            size: 8,
            order: Little
        })
    );
    assert_eq!(
        Dtype::parse("<c16"),
        Ok(Dtype::Complex {
            size: 16,
            order: Little
        })
    );
    assert_eq!(Dtype::parse("|S5"), Ok(Dtype::bytes(5)));
    assert_eq!(
        Dtype::parse("<U3"),
        Ok(Dtype::Unicode {
            chars: 3,
            order: Little
        })
    );
    assert_eq!(Dtype::parse("<U3").unwrap().itemsize(), 12);
    assert_eq!(Dtype::parse("|V8"), Ok(Dtype::Void { len: 8 }));
    assert_eq!(
        Dtype::parse("<M8[10s]"),
        Ok(Dtype::Datetime {
            unit: DatetimeUnit::Second,
            count: 10,
            order: Little
        })
    );
    assert_eq!(
        Dtype::parse(">m8[us]"),
        Ok(Dtype::Timedelta {
            unit: DatetimeUnit::Microsecond,
            count: 1,
            order: Big
        })
    );
    assert_eq!(
        Dtype::parse("<M8"),
        Ok(Dtype::Datetime {
            unit: DatetimeUnit::Generic,
            count: 1,
            order: Little
        })
    );
    assert_eq!(
        Dtype::parse("M8[\u{3bc}s]").unwrap().to_numpy_str(),
        "<M8[us]"
    );
    assert_eq!(Dtype::bytes(7).to_numpy_str(), "|S7");
    assert_eq!(Dtype::bytes(7).itemsize(), 7);
}

#[test]
fn byte_orders() {
    let native = ByteOrder::native();
    assert_eq!(
        native,
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    );
    assert_eq!(Dtype::parse("=i4").unwrap().byte_order(), native);
    assert_eq!(
        Dtype::parse("|u1").unwrap().byte_order(),
        ByteOrder::NotApplicable
    );
    assert_eq!(
        Dtype::parse("|S3").unwrap().byte_order(),
        ByteOrder::NotApplicable
    );
    assert_eq!(
        Dtype::parse("[('a', '>i4')]").unwrap().byte_order(),
        ByteOrder::NotApplicable
    );
    assert_eq!(
        Dtype::parse("('>i4', (2,))").unwrap().byte_order(),
        ByteOrder::Big
    );
    let swapped = if native == ByteOrder::Little {
        '>'
    } else {
        '<'
    };
    let own = native.as_char();
    assert!(Dtype::parse(&format!("{own}f8")).unwrap().is_native_order());
    assert!(!Dtype::parse(&format!("{swapped}f8"))
        .unwrap()
        .is_native_order());
    assert!(Dtype::parse("|b1").unwrap().is_native_order());
    assert!(Dtype::parse(&format!("[('a', 'u1'), ('b', '{own}i8')]"))
        .unwrap()
        .is_native_order());
    assert!(
        !Dtype::parse(&format!("[('a', 'u1'), ('b', [('c', '{swapped}U2')])]"))
            .unwrap()
            .is_native_order()
    );
    assert!(!Dtype::parse(&format!("('{swapped}i2', (3,))"))
        .unwrap()
        .is_native_order());
}

#[test]
fn struct_layouts() {
    use ByteOrder::*;
    let d = Dtype::parse("[('a', 'u1'), ('b', [('x', '<f4'), ('y', 'u1')])]").unwrap();
    let inner = Dtype::Struct(StructDtype {
        fields: vec![
            Field {
                name: "x".into(),
                title: None,
                offset: 0,
                dtype: Dtype::Float {
                    size: 4,
                    order: Little,
                },
            },
            Field {
                name: "y".into(),
                title: None,
                offset: 4,
                dtype: Dtype::UInt {
                    size: 1,
                    order: NotApplicable,
                },
            },
        ],
        itemsize: 5,
        aligned: false,
    });
    let want = Dtype::Struct(StructDtype {
        fields: vec![
            Field {
                name: "a".into(),
                title: None,
                offset: 0,
                dtype: Dtype::UInt {
                    size: 1,
                    order: NotApplicable,
                },
            },
            Field {
                name: "b".into(),
                title: None,
                offset: 1,
                dtype: inner,
            },
        ],
        itemsize: 6,
        aligned: false,
    });
    assert_eq!(d, want);

    // Titles and subarray fields.
    let d = Dtype::parse("[(('T', 'a'), 'u1'), ('m', '<f8', (2, 3))]").unwrap();
    let Dtype::Struct(s) = &d else { panic!() };
    assert_eq!(s.fields[0].title.as_deref(), Some("T"));
    assert_eq!(s.field("m").unwrap().offset, 1);
    assert_eq!(
        s.fields[1].dtype,
        Dtype::SubArray {
            base: Box::new(Dtype::Float {
                size: 8,
                order: Little
            }),
            shape: vec![2, 3]
        }
    );
    assert_eq!(s.itemsize, 49);

    // align=True reaches nested list forms: the inner struct is laid out as a C struct.
    let d = Dtype::parse(
        "{'names': ['a', 'b'], 'formats': ['u1', [('x', 'u1'), ('y', '<i8')]], \
         'offsets': [0, 8], 'itemsize': 24, 'aligned': True}",
    )
    .unwrap();
    let Dtype::Struct(s) = &d else { panic!() };
    let Dtype::Struct(inner) = &s.fields[1].dtype else {
        panic!()
    };
    assert!(s.aligned && inner.aligned);
    assert_eq!((inner.fields[1].offset, inner.itemsize), (8, 16));
    assert_eq!(d.alignment(), 8);
}

#[test]
fn python_blosc2_lossy_subarray() {
    // python-blosc2 stores this for np.dtype((np.dtype([('a','u1'),('b','<i8')], align=True),
    // (2,))) with typesize 32, but NumPy (and this parser) read 18 bytes back: a reader
    // must compare the itemsize with the frame typesize.
    let d = Dtype::parse("([('a', 'u1'), ('b', '<i8')], (2,))").unwrap();
    assert_eq!(d.itemsize(), 18);
    // Written by this crate, the same dtype keeps its layout.
    let aligned = Dtype::SubArray {
        base: Box::new(Dtype::parse("{'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}").unwrap()),
        shape: vec![2],
    };
    assert_eq!(
        aligned.to_numpy_str(),
        "({'names': ['a', 'b'], 'formats': ['u1', '<i8'], 'offsets': [0, 8], 'itemsize': 16, 'aligned': True}, (2,))"
    );
    assert_eq!(
        Dtype::parse(&aligned.to_numpy_str()).unwrap().itemsize(),
        32
    );
    assert!(aligned.validate().is_ok());
}

#[test]
fn npy_descr_fallback() {
    let d = Dtype::parse(
        "{'names': ['a', 'b'], 'formats': ['u1', '<i4'], 'offsets': [4, 0], 'itemsize': 5}",
    )
    .unwrap();
    assert!(d.try_npy_descr().unwrap_err().reason.contains("overlap"));
    assert_eq!(d.npy_descr(), ("'|V5'".to_string(), vec![]));
    let sub = Dtype::SubArray {
        base: Box::new(d),
        shape: vec![3],
    };
    assert_eq!(sub.npy_descr(), ("'|V5'".to_string(), vec![3]));
    assert_eq!(
        Dtype::parse("(('<i4', (2,)), (3,))").unwrap().npy_descr(),
        ("'<i4'".to_string(), vec![3, 2])
    );
}

#[test]
fn hand_built_dtypes() {
    use ByteOrder::*;
    assert!(Dtype::Int {
        size: 4,
        order: NotApplicable
    }
    .validate()
    .is_err());
    assert!(Dtype::Int {
        size: 1,
        order: Little
    }
    .validate()
    .is_err());
    assert!(Dtype::Int {
        size: 3,
        order: Little
    }
    .validate()
    .is_err());
    assert!(Dtype::SubArray {
        base: Box::new(Dtype::Bool),
        shape: vec![]
    }
    .validate()
    .is_err());
    let u8f = |name: &str, offset| Field {
        name: name.into(),
        title: None,
        offset,
        dtype: Dtype::UInt {
            size: 1,
            order: NotApplicable,
        },
    };
    // A field past the itemsize.
    let bad = Dtype::Struct(StructDtype {
        fields: vec![u8f("a", 4)],
        itemsize: 4,
        aligned: false,
    });
    assert!(bad.validate().is_err());
    // A packed struct inside an aligned one cannot be written: NumPy aligns it on reading.
    let packed = Dtype::Struct(StructDtype {
        fields: vec![
            u8f("x", 0),
            Field {
                name: "y".into(),
                title: None,
                offset: 1,
                dtype: Dtype::Int {
                    size: 8,
                    order: Little,
                },
            },
        ],
        itemsize: 9,
        aligned: false,
    });
    let outer = Dtype::Struct(StructDtype {
        fields: vec![Field {
            name: "p".into(),
            title: None,
            offset: 0,
            dtype: packed.clone(),
        }],
        itemsize: 9,
        aligned: true,
    });
    assert!(outer.validate().is_err());
    // A field named '' is written in dict form (the list form would rename it 'f0').
    let empty = Dtype::Struct(StructDtype {
        fields: vec![u8f("", 0)],
        itemsize: 1,
        aligned: false,
    });
    assert_eq!(
        empty.to_numpy_str(),
        "{'names': [''], 'formats': ['u1'], 'offsets': [0], 'itemsize': 1}"
    );
    assert!(empty.validate().is_ok());
    assert!(packed.validate().is_ok());
    assert_eq!(packed.to_numpy_str(), "[('x', 'u1'), ('y', '<i8')]");
}

#[test]
fn python_repr_of_names() {
    let mut s = String::new();
    for (name, want) in [
        ("a", "'a'"),
        ("it's", "\"it's\""),
        ("q\"x", "'q\"x'"),
        ("both'\"", "'both\\'\"'"),
        (
            "\u{7}\u{ad}\u{e9}\u{200b}\u{1f600}\u{10ffff}",
            "'\\x07\\xad\u{e9}\\u200b\u{1f600}\\U0010ffff'",
        ),
        // Unassigned code points: Python escapes them, this writes them as they are.
        ("\u{378}", "'\u{378}'"),
    ] {
        s.clear();
        write_py_str(name, &mut s);
        assert_eq!(s, want);
        let lit = LitParser::parse_all(&s).unwrap();
        assert_eq!(lit, Lit::Str(name.to_string()));
    }
    assert_eq!(
        LitParser::parse_all("'\\q\\x41\\101\\\n'").unwrap(),
        Lit::Str("\\qAA".into())
    );
    assert!(LitParser::parse_all("'\\ud800'").is_err());
}

#[test]
fn nesting_and_size_limits() {
    fn nested(levels: usize) -> String {
        let mut s = "'<i4'".to_string();
        for _ in 0..levels {
            s = format!("[('f', {s})]");
        }
        s
    }
    let ok = Dtype::parse(&nested(MAX_NESTING_DEPTH)).unwrap();
    assert_eq!(ok.itemsize(), 4);
    check_invariants("nested", &ok);
    let e = Dtype::parse(&nested(MAX_NESTING_DEPTH + 1)).unwrap_err();
    assert!(e.reason.contains("deeper"), "{e}");
    for open in ["[", "(", "{", "[(", "{'a': "] {
        let s = open.repeat(100_000);
        assert!(Dtype::parse(&s).is_err());
    }
    let long = format!("[('{}', 'u1')]", "x".repeat(MAX_DTYPE_STR_LEN));
    let e = Dtype::parse(&long).unwrap_err();
    assert!(e.reason.contains("bytes long"));
    assert!(e.dtype.chars().count() <= ERROR_SNIPPET_CHARS + 1 && e.dtype.ends_with('…'));
    assert!(Dtype::parse("('u1', (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1))").is_err());
    assert!(Dtype::parse("('<i4', (9223372036854775807,))").is_err());
    assert!(Dtype::parse("('<i4', (9223372036854775808,))").is_err());
    assert!(Dtype::parse("('u1', (2147483647, 2))").is_err());
    assert_eq!(
        Dtype::parse("('<i8', (2147483647, 0))").unwrap().itemsize(),
        0
    );
}

/// A tiny linear congruential generator (Knuth's MMIX constants).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn try_parse(s: &str) {
    if let Ok(d) = Dtype::parse(s) {
        check_invariants(s, &d);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Lcg(0x5eed);
    for _ in 0..20_000 {
        let len = rng.below(48);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        try_parse(&String::from_utf8_lossy(&bytes));
        // Mostly ASCII punctuation and type letters, to get past the first byte.
        const ALPHABET: &[u8] = b"[](){}'\",: <>|=?biufcSUVMm8O0124[]s_xna\\";
        let s: String = (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())] as char)
            .collect();
        try_parse(&s);
    }
}

#[test]
fn mutated_numpy_strings_never_panic() {
    const INSERTS: &[&str] = &[
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        ",",
        ":",
        " ",
        "'",
        "\"",
        "\\",
        "0",
        "1",
        "7",
        "9",
        "-",
        "2147483647",
        "99999999999999999999",
        "<",
        ">",
        "|",
        "u1",
        "'<i8'",
        "'V'",
        "'S'",
        "True",
        "None",
        "'aligned': True",
        "'itemsize': 3",
        "(2,)",
        "'a'",
        "\u{e9}",
        "\\x00",
        "\\U0010ffff",
    ];
    let mut rng = Lcg(42);
    let seeds: Vec<&str> = NUMPY_CASES.iter().map(|c| c.s).collect();
    for _ in 0..40_000 {
        let mut s: Vec<char> = seeds[rng.below(seeds.len())].chars().collect();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(s.len() + 1);
            match rng.below(4) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 if at < s.len() => {
                    let end = (at + rng.below(8)).min(s.len());
                    let chunk: Vec<char> = s[at..end].to_vec();
                    s.splice(at..at, chunk);
                }
                2 if at < s.len() => {
                    s[at] = INSERTS[rng.below(INSERTS.len())]
                        .chars()
                        .next()
                        .unwrap_or('x')
                }
                _ => {
                    let ins: Vec<char> = INSERTS[rng.below(INSERTS.len())].chars().collect();
                    s.splice(at..at, ins);
                }
            }
        }
        let s: String = s.into_iter().collect();
        try_parse(&s);
    }
}

#[test]
fn random_token_soup_never_panics() {
    const TOKENS: &[&str] = &[
        "[",
        "]",
        "(",
        ")",
        "{",
        "}",
        ", ",
        ",",
        ": ",
        "'a'",
        "'b'",
        "'T'",
        "''",
        "'<i4'",
        "'u1'",
        "'S3'",
        "'?'",
        "'<U2'",
        "'>f8'",
        "'V'",
        "'S'",
        "'<U'",
        "'<M8[ns]'",
        "'O'",
        "'names'",
        "'formats'",
        "'offsets'",
        "'itemsize'",
        "'aligned'",
        "'titles'",
        "True",
        "False",
        "None",
        "0",
        "1",
        "2",
        "3",
        "8",
        "16",
        "-1",
        "2147483647",
        "(2,)",
        "()",
    ];
    let mut rng = Lcg(7);
    let mut parsed = 0;
    for _ in 0..60_000 {
        let n = 1 + rng.below(24);
        let s: String = (0..n).map(|_| TOKENS[rng.below(TOKENS.len())]).collect();
        if let Ok(d) = Dtype::parse(&s) {
            parsed += 1;
            check_invariants(&s, &d);
        }
    }
    assert!(
        parsed > 100,
        "the generator should produce some valid dtypes ({parsed})"
    );
}
