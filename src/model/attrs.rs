//! User attributes (`vlmeta`) as python-blosc2 writes them.
//!
//! python-blosc2 4.x stores every vlmeta value as one MessagePack document
//! produced by `blosc2.msgpack_utils.msgpack_packb`, i.e.
//! `msgpack.packb(value, default=_encode_msgpack_ext, strict_types=True, use_bin_type=True)`,
//! and reads it back with `unpackb(list_hook=decode_tuple_list_hook, ext_hook=...)`.
//! On top of plain MessagePack it uses these conventions:
//!
//! * `str` is a msgpack *str* (UTF-8), `bytes`/`bytearray` a msgpack *bin*
//!   (`use_bin_type=True`); floats are always written as float64.
//! * A tuple is written as an array whose first element is the string
//!   `"__tuple__"`; on reading, *any* array starting with that string becomes a
//!   tuple (so the Python list `["__tuple__", 1]` also reads back as `(1,)`).
//! * Extension types (codes are python-blosc2's own):
//!   * 42: an embedded Blosc2 object (`NDArray`, `SChunk`, ...) as a whole CFrame;
//!   * 43: a structured reference (`blosc2.Ref`, `C2Array`, `LazyExpr`,
//!     `LazyUDF`): a msgpack map `{"kind", "version": 1, ...}`;
//!   * 44: `complex` as `struct.pack(">dd", re, im)` (16 bytes, big-endian);
//!   * 45: `set`/`frozenset` as the msgpack of `list(the_set)`;
//!   * 46: a NumPy array as the msgpack of
//!     `{"dtype": {"str": dtype.str}, "shape": [..], "data": <bin tobytes()>}`
//!     (C order). Structured dtypes write `{"dtype": {"descr": [...]}, ...}`
//!     and object arrays write `{"values": [...], "shape": [...]}`; those two
//!     forms are kept as raw [`Value::Ext`].
//! * NumPy scalars are converted to the plain Python value (`np.float32` is
//!   widened to float64, `np.complex64` becomes ext 44).
//!
//! The MessagePack wire format itself (both ways) is `format::msgpack`.
//!
//! [`Value::decode`] treats its input as untrusted: it never panics, limits
//! nesting to [`MAX_DEPTH`] and never allocates more than the input can justify.

#![forbid(unsafe_code)]

/// Maximum nesting of containers (arrays, maps and the extension payloads of
/// sets and NumPy arrays) accepted by [`Value::decode`].
pub const MAX_DEPTH: usize = 64;

/// Extension code python-blosc2 uses for an embedded Blosc2 object (a CFrame).
pub const EXT_CFRAME: i8 = 42;
/// Extension code python-blosc2 uses for structured references (`blosc2.Ref`, lazy objects).
pub const EXT_REFERENCE: i8 = 43;
/// Extension code python-blosc2 uses for `complex` (payload `>dd`).
pub const EXT_COMPLEX: i8 = 44;
/// Extension code python-blosc2 uses for `set` / `frozenset`.
pub const EXT_SET: i8 = 45;
/// Extension code python-blosc2 uses for NumPy arrays.
pub const EXT_NDARRAY: i8 = 46;

/// The string that marks an array as a Python tuple.
pub const TUPLE_MARKER: &str = "__tuple__";

/// A decoded vlmeta value.
///
/// Integers that fit in `i64` always decode as [`Value::Int`]; only values
/// above `i64::MAX` decode as [`Value::UInt`]. Both encode identically for the
/// same number. Maps keep their entries in stored order (duplicates included);
/// sets keep their elements in stored order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// Python `None` (msgpack nil).
    Nil,
    /// Python `bool`.
    Bool(bool),
    /// A Python `int` that fits in `i64`.
    Int(i64),
    /// A Python `int` in `i64::MAX + 1 ..= u64::MAX`.
    UInt(u64),
    /// Python `float` (msgpack float32 input is widened).
    Float(f64),
    /// Python `str` (msgpack str, always valid UTF-8).
    Str(String),
    /// Python `bytes` (msgpack bin).
    Bytes(Vec<u8>),
    /// Python `list` (msgpack array not starting with `"__tuple__"`).
    Array(Vec<Value>),
    /// Python `dict` (msgpack map); keys may be any value.
    Map(Vec<(Value, Value)>),
    /// Python `tuple`: stored as an array `["__tuple__", items...]`; holds the items only.
    Tuple(Vec<Value>),
    /// Python `complex`: extension 44 with payload `>dd`.
    Complex {
        /// Real part.
        re: f64,
        /// Imaginary part.
        im: f64,
    },
    /// Python `set` or `frozenset`: extension 45 whose payload is a msgpack array.
    Set(Vec<Value>),
    /// NumPy array with a plain (non-structured, non-object) dtype: extension 46.
    NdArray {
        /// NumPy `dtype.str`, e.g. `"<i4"`, `"|b1"`, `"<U2"`, `">f8"`, `"<M8[D]"`.
        dtype: String,
        /// Array shape (empty for 0-d arrays).
        shape: Vec<usize>,
        /// The elements in C order, as `ndarray.tobytes()` gives them.
        data: Vec<u8>,
    },
    /// Any other extension, kept raw: embedded frames (42), references (43),
    /// structured-dtype or object NumPy arrays (46), msgpack timestamps (-1), ...
    Ext {
        /// The extension type code.
        code: i8,
        /// The extension payload.
        data: Vec<u8>,
    },
}

/// Why a vlmeta value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("attribute value: {reason}")]
pub struct AttrError {
    /// Human-readable description of the problem.
    pub reason: String,
}

pub(crate) fn err(reason: impl Into<String>) -> AttrError {
    AttrError {
        reason: reason.into(),
    }
}

impl Value {
    /// Python's truth value of the decoded value (`None`, `False`, zero and empty are false).
    #[must_use]
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::UInt(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::Array(a) | Value::Tuple(a) | Value::Set(a) => !a.is_empty(),
            Value::Map(m) => !m.is_empty(),
            _ => true,
        }
    }

    /// The string, if this is a [`Value::Str`].
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The bytes, if this is a [`Value::Bytes`].
    #[must_use]
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The integer, if this is an integer that fits in `i64`.
    #[must_use]
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Int(i) => Some(i),
            Value::UInt(u) => i64::try_from(u).ok(),
            _ => None,
        }
    }

    /// The integer, if this is a non-negative integer.
    #[must_use]
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(i) => u64::try_from(i).ok(),
            Value::UInt(u) => Some(u),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a [`Value::Float`] or an integer
    /// (integers beyond 2^53 are rounded).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Float(f) => Some(f),
            Value::Int(i) => Some(i as f64),
            Value::UInt(u) => Some(u as f64),
            _ => None,
        }
    }

    /// The boolean, if this is a [`Value::Bool`].
    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match *self {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The items of a [`Value::Array`], [`Value::Tuple`] or [`Value::Set`].
    #[must_use]
    pub fn as_slice(&self) -> Option<&[Value]> {
        match self {
            Value::Array(v) | Value::Tuple(v) | Value::Set(v) => Some(v),
            _ => None,
        }
    }

    /// The entries of a [`Value::Map`], in stored order.
    #[must_use]
    pub fn as_map(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// For a [`Value::Map`], the value under the string key `key` (the last one
    /// if the key is repeated, as a Python `dict` would keep).
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_map()?
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Whether this is [`Value::Nil`] (Python `None`).
    #[must_use]
    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }
}

impl From<&str> for Value {
    /// A [`Value::Str`].
    fn from(s: &str) -> Self {
        Value::Str(s.to_owned())
    }
}

impl From<String> for Value {
    /// A [`Value::Str`].
    fn from(s: String) -> Self {
        Value::Str(s)
    }
}

impl From<i64> for Value {
    /// A [`Value::Int`].
    fn from(i: i64) -> Self {
        Value::Int(i)
    }
}

impl From<u64> for Value {
    /// A [`Value::Int`] if it fits in `i64`, else a [`Value::UInt`].
    fn from(u: u64) -> Self {
        match i64::try_from(u) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::UInt(u),
        }
    }
}

impl From<f64> for Value {
    /// A [`Value::Float`].
    fn from(f: f64) -> Self {
        Value::Float(f)
    }
}

impl From<bool> for Value {
    /// A [`Value::Bool`].
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<Vec<u8>> for Value {
    /// A [`Value::Bytes`].
    fn from(b: Vec<u8>) -> Self {
        Value::Bytes(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from python-blosc2 4.14.1 (msgpack 1.2.4, numpy 2.4.6): `arr.vlmeta[name] = value`,
    /// then the raw stored bytes via `blosc2_ext.vlmeta.get_vlmeta(arr.schunk.vlmeta, name)`.
    const VECTORS: &[(&str, &str)] = &[
        ("str", "a568656c6c6f"),
        ("str_empty", "a0"),
        ("str_utf8", "aa68c3a96c6c6f20e29c93"),
        (
            "str_32",
            "d9206161616161616161616161616161616161616161616161616161616161616161",
        ),
        (
            "str_300",
            concat!(
                "da012c62626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "62626262626262626262626262626262626262626262626262626262626262626262626262626262",
                "6262626262626262626262626262626262626262626262",
            ),
        ),
        ("int_0", "00"),
        ("int_small", "07"),
        ("int_127", "7f"),
        ("int_128", "cc80"),
        ("int_255", "ccff"),
        ("int_256", "cd0100"),
        ("int_65536", "ce00010000"),
        ("int_2p32", "cf0000000100000000"),
        ("int_neg1", "ff"),
        ("int_neg32", "e0"),
        ("int_neg33", "d0df"),
        ("int_neg128", "d080"),
        ("int_neg129", "d1ff7f"),
        ("int_neg32769", "d2ffff7fff"),
        ("int_neg2p31m1", "d3ffffffff7fffffff"),
        ("int_u64max", "cfffffffffffffffff"),
        ("int_i64max", "cf7fffffffffffffff"),
        ("int_i64min", "d38000000000000000"),
        ("float", "cb3ff8000000000000"),
        ("float_neg", "cbbfb999999999999a"),
        ("float_inf", "cb7ff0000000000000"),
        ("float_nan", "cb7ff8000000000000"),
        ("bool_t", "c3"),
        ("bool_f", "c2"),
        ("none", "c0"),
        ("bytes", "c4030001ff"),
        ("bytes_empty", "c400"),
        (
            "bytes_300",
            concat!(
                "c5012c000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324",
                "25262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c",
                "4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727374",
                "75767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c",
                "9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4",
                "c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebec",
                "edeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff000000000000000000000000000000000000000000",
                "0000000000000000000000000000000000000000000000",
            ),
        ),
        ("list", "9301a161cb4004000000000000"),
        ("list_empty", "90"),
        ("list_20", "dc0014000102030405060708090a0b0c0d0e0f10111213"),
        ("dict_str", "82a16101a16292c3c0"),
        ("dict_int", "8201a17802a179"),
        ("dict_empty", "80"),
        (
            "dict_20",
            concat!(
                "de0014a26b3000a26b3101a26b3202a26b3303a26b3404a26b3505a26b3606a26b3707a26b3808a2",
                "6b3909a36b31300aa36b31310ba36b31320ca36b31330da36b31340ea36b31350fa36b313610a36b",
                "313711a36b313812a36b313913",
            ),
        ),
        ("dict_bytes_key", "81c4016b01"),
        (
            "nested",
            "82a161930181a16293a95f5f7475706c655f5f020392049105a16381a16481a165c0",
        ),
        ("tuple", "93a95f5f7475706c655f5f01a161"),
        ("tuple_empty", "91a95f5f7475706c655f5f"),
        (
            "tuple_nested",
            "93a95f5f7475706c655f5f93a95f5f7475706c655f5f0102920392a95f5f7475706c655f5f04",
        ),
        ("list_fake_tuple", "92a95f5f7475706c655f5f01"),
        ("complex", "d82c3ff00000000000004000000000000000"),
        ("complex_neg", "d82cbfe0000000000000421bf08eb0000000"),
        ("set", "d52d9103"),
        ("set_str", "c7032d91a178"),
        ("set_empty", "d42d90"),
        ("frozenset", "d52d9107"),
        ("np_int32", "fb"),
        ("np_uint64", "cfffffffffffffffff"),
        ("np_float32", "cb3fb99999a0000000"),
        ("np_float64", "cb4004000000000000"),
        ("np_bool", "c3"),
        ("np_complex64", "d82c3ff0000000000000bff0000000000000"),
        ("np_str", "a26869"),
        ("np_bytes", "c4026869"),
        (
            "nd_i4",
            concat!(
                "c72b2e83a5647479706581a3737472a33c6934a573686170659103a464617461c40c010000000200",
                "000003000000",
            ),
        ),
        (
            "nd_f8_2d",
            concat!(
                "c7502e83a5647479706581a3737472a33c6638a57368617065920203a464617461c4300000000000",
                "000000000000000000f03f0000000000000040000000000000084000000000000010400000000000",
                "001440",
            ),
        ),
        (
            "nd_bool",
            "c7212e83a5647479706581a3737472a37c6231a573686170659102a464617461c4020100",
        ),
        (
            "nd_U",
            concat!(
                "c72f2e83a5647479706581a3737472a33c5532a573686170659102a464617461c410610000006200",
                "00006300000000000000",
            ),
        ),
        (
            "nd_S",
            "c7232e83a5647479706581a3737472a37c5332a573686170659102a464617461c40461626300",
        ),
        (
            "nd_be_i2",
            "c7232e83a5647479706581a3737472a33e6932a573686170659102a464617461c40400010002",
        ),
        (
            "nd_0d",
            concat!(
                "c7262e83a5647479706581a3737472a33c6938a5736861706590a464617461c40805000000000000",
                "00",
            ),
        ),
        (
            "nd_empty",
            "c7202e83a5647479706581a3737472a37c7531a57368617065920002a464617461c400",
        ),
        (
            "nd_c16",
            concat!(
                "c7302e83a5647479706581a3737472a43c633136a573686170659101a464617461c4100000000000",
                "00f03f0000000000000040",
            ),
        ),
        (
            "nd_M8",
            concat!(
                "c72a2e83a5647479706581a3737472a63c4d385b445da573686170659101a464617461c408564700",
                "0000000000",
            ),
        ),
        (
            "nd_fortran",
            concat!(
                "c7282e83a5647479706581a3737472a33c6932a57368617065920202a464617461c4080000010002",
                "000300",
            ),
        ),
        (
            "nd_struct",
            concat!(
                "c7582e83a5647479706581a564657363729293a95f5f7475706c655f5fa161a33c693493a95f5f74",
                "75706c655f5fa162a33c6638a573686170659102a464617461c41800000000000000000000000000",
                "0000000000000000000000",
            ),
        ),
        (
            "nd_object",
            "c7142e82a676616c7565739201a178a573686170659102",
        ),
        (
            "list_of_nd",
            concat!(
                "92c7202e83a5647479706581a3737472a37c7531a573686170659101a464617461c40101d82c3ff0",
                "0000000000000000000000000000",
            ),
        ),
        ("set_in_tuple", "93a95f5f7475706c655f5fd52d910102"),
        (
            "ref",
            concat!(
                "c7462b83a46b696e64a3726566a776657273696f6e01a372656683a46b696e64a775726c70617468",
                "a776657273696f6e01a775726c70617468af2f746d702f6f746865722e62326e64",
            ),
        ),
        ("ext_user", "c70305616263"),
        ("bytearray", "c4027879"),
        (
            "embedded_ndarray",
            concat!(
                "c801092a9ea862326672616d6500d200000092cf0000000000000109a412005502d3000000000000",
                "000cd3000000000000002cd200000004d20000000cd20000000cd10000d10001c2d8060000000000",
                "010500000000000000000093cd0011de0001a462326e64d20000006bdc0001c60000002297000191",
                "d3000000000000000391d20000000391d20000000300db000000033c6934050107040c0000000c00",
                "00002c00000000000000000105000000000000000000000000000100000002000000050107080800",
                "00000800000028000000000000000001000000000000000000000000000000000000940193cd0006",
                "de0000dc0000ce00000023d80000000000000000000000000000000000",
            ),
        ),
        ("tuple_key", "8193a95f5f7475706c655f5f010203"),
        ("timestamp", "d6ff00000001"),
        ("set_tuple_marker", "c70b2d91a95f5f7475706c655f5f"),
        (
            "nd_bool_2d_empty",
            "c7202e83a5647479706581a3737472a37c6231a57368617065920200a464617461c400",
        ),
        (
            "nd_float16",
            "c7212e83a5647479706581a3737472a33c6632a573686170659101a464617461c402003c",
        ),
        (
            "nd_V",
            "c7222e83a5647479706581a3737472a37c5633a573686170659101a464617461c403000000",
        ),
    ];

    fn unhex(h: &str) -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    }

    fn raw(name: &str) -> Vec<u8> {
        let (_, h) = VECTORS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no vector {name}"));
        unhex(h)
    }

    fn s(x: &str) -> Value {
        Value::Str(x.to_owned())
    }
    fn i(x: i64) -> Value {
        Value::Int(x)
    }
    fn arr(v: Vec<Value>) -> Value {
        Value::Array(v)
    }
    fn tup(v: Vec<Value>) -> Value {
        Value::Tuple(v)
    }
    fn map(v: Vec<(Value, Value)>) -> Value {
        Value::Map(v)
    }
    fn nd(dtype: &str, shape: &[usize], data: &[u8]) -> Value {
        Value::NdArray {
            dtype: dtype.into(),
            shape: shape.to_vec(),
            data: data.to_vec(),
        }
    }
    fn le<T: Copy, const N: usize>(xs: &[T], f: fn(T) -> [u8; N]) -> Vec<u8> {
        xs.iter().flat_map(|&x| f(x)).collect()
    }

    /// The value python-blosc2 wrote for each vector.
    #[allow(clippy::too_many_lines)]
    fn expected(name: &str) -> Value {
        let ext_after = |header: usize, code: i8| {
            let r = raw(name);
            Value::Ext {
                code,
                data: r[header..].to_vec(),
            }
        };
        match name {
            "str" => s("hello"),
            "str_empty" => s(""),
            "str_utf8" => s("héllo ✓"),
            "str_32" => s(&"a".repeat(32)),
            "str_300" => s(&"b".repeat(300)),
            "int_0" => i(0),
            "int_small" => i(7),
            "int_127" => i(127),
            "int_128" => i(128),
            "int_255" => i(255),
            "int_256" => i(256),
            "int_65536" => i(65536),
            "int_2p32" => i(1 << 32),
            "int_neg1" => i(-1),
            "int_neg32" => i(-32),
            "int_neg33" => i(-33),
            "int_neg128" => i(-128),
            "int_neg129" => i(-129),
            "int_neg32769" => i(-32769),
            "int_neg2p31m1" => i(-(1 << 31) - 1),
            "int_u64max" | "np_uint64" => Value::UInt(u64::MAX),
            "int_i64max" => i(i64::MAX),
            "int_i64min" => i(i64::MIN),
            "float" => Value::Float(1.5),
            "float_neg" => Value::Float(-0.1),
            "float_inf" => Value::Float(f64::INFINITY),
            "float_nan" => Value::Float(f64::NAN),
            "bool_t" | "np_bool" => Value::Bool(true),
            "bool_f" => Value::Bool(false),
            "none" => Value::Nil,
            "bytes" => Value::Bytes(vec![0, 1, 255]),
            "bytes_empty" => Value::Bytes(vec![]),
            "bytes_300" => Value::Bytes((0..=255u8).chain(std::iter::repeat_n(0, 44)).collect()),
            "list" => arr(vec![i(1), s("a"), Value::Float(2.5)]),
            "list_empty" => arr(vec![]),
            "list_20" => arr((0..20).map(i).collect()),
            "dict_str" => map(vec![
                (s("a"), i(1)),
                (s("b"), arr(vec![Value::Bool(true), Value::Nil])),
            ]),
            "dict_int" => map(vec![(i(1), s("x")), (i(2), s("y"))]),
            "dict_empty" => map(vec![]),
            "dict_20" => map((0..20).map(|k| (s(&format!("k{k}")), i(k))).collect()),
            "dict_bytes_key" => map(vec![(Value::Bytes(b"k".to_vec()), i(1))]),
            "nested" => map(vec![
                (
                    s("a"),
                    arr(vec![
                        i(1),
                        map(vec![(s("b"), tup(vec![i(2), i(3)]))]),
                        arr(vec![i(4), arr(vec![i(5)])]),
                    ]),
                ),
                (s("c"), map(vec![(s("d"), map(vec![(s("e"), Value::Nil)]))])),
            ]),
            "tuple" => tup(vec![i(1), s("a")]),
            "tuple_empty" => tup(vec![]),
            "tuple_nested" => tup(vec![
                tup(vec![i(1), i(2)]),
                arr(vec![i(3), tup(vec![i(4)])]),
            ]),
            // The Python list ["__tuple__", 1]: python-blosc2 itself reads it back as (1,).
            "list_fake_tuple" => tup(vec![i(1)]),
            "complex" => Value::Complex { re: 1.0, im: 2.0 },
            "complex_neg" => Value::Complex { re: -0.5, im: 3e10 },
            "np_complex64" => Value::Complex { re: 1.0, im: -1.0 },
            "set" => Value::Set(vec![i(3)]),
            "set_str" => Value::Set(vec![s("x")]),
            "set_empty" => Value::Set(vec![]),
            "frozenset" => Value::Set(vec![i(7)]),
            // python-blosc2 would read this back as set() (its list hook eats the
            // marker); we keep what was written.
            "set_tuple_marker" => Value::Set(vec![s(TUPLE_MARKER)]),
            "np_int32" => i(-5),
            "np_float32" => Value::Float(f64::from(0.1f32)),
            "np_float64" => Value::Float(2.5),
            "np_str" => s("hi"),
            "np_bytes" => Value::Bytes(b"hi".to_vec()),
            "bytearray" => Value::Bytes(b"xy".to_vec()),
            "nd_i4" => nd("<i4", &[3], &le(&[1i32, 2, 3], i32::to_le_bytes)),
            "nd_f8_2d" => nd(
                "<f8",
                &[2, 3],
                &le(&[0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], f64::to_le_bytes),
            ),
            "nd_bool" => nd("|b1", &[2], &[1, 0]),
            "nd_U" => nd(
                "<U2",
                &[2],
                &le(
                    &[u32::from('a'), u32::from('b'), u32::from('c'), 0],
                    u32::to_le_bytes,
                ),
            ),
            "nd_S" => nd("|S2", &[2], b"abc\0"),
            "nd_be_i2" => nd(">i2", &[2], &[0, 1, 0, 2]),
            "nd_0d" => nd("<i8", &[], &5i64.to_le_bytes()),
            "nd_empty" => nd("|u1", &[0, 2], &[]),
            "nd_c16" => nd("<c16", &[1], &le(&[1.0f64, 2.0], f64::to_le_bytes)),
            "nd_M8" => nd("<M8[D]", &[1], &18262i64.to_le_bytes()),
            "nd_fortran" => nd("<i2", &[2, 2], &le(&[0i16, 1, 2, 3], i16::to_le_bytes)),
            "nd_bool_2d_empty" => nd("|b1", &[2, 0], &[]),
            "nd_float16" => nd("<f2", &[1], &[0x00, 0x3c]),
            "nd_V" => nd("|V3", &[1], &[0, 0, 0]),
            // Structured dtype ({"descr": ...}) and object arrays ({"values": ...}) stay raw.
            "nd_struct" | "nd_object" => ext_after(3, EXT_NDARRAY),
            "list_of_nd" => arr(vec![
                nd("|u1", &[1], &[1]),
                Value::Complex { re: 1.0, im: 0.0 },
            ]),
            "set_in_tuple" => tup(vec![Value::Set(vec![i(1)]), i(2)]),
            "ref" => ext_after(3, EXT_REFERENCE),
            "ext_user" => Value::Ext {
                code: 5,
                data: b"abc".to_vec(),
            },
            "embedded_ndarray" => ext_after(4, EXT_CFRAME),
            // Python writes a tuple key as a list; python-blosc2 cannot read it back.
            "tuple_key" => map(vec![(tup(vec![i(1), i(2)]), i(3))]),
            "timestamp" => Value::Ext {
                code: -1,
                data: vec![0, 0, 0, 1],
            },
            other => panic!("no expectation for {other}"),
        }
    }

    /// Equality that treats NaN bit patterns as equal.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }

    #[test]
    fn python_vectors_decode() {
        for (name, _) in VECTORS {
            let bytes = raw(name);
            let got = Value::decode(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = expected(name);
            assert!(same(&got, &want), "{name}: got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn python_vectors_encode_exactly() {
        for (name, _) in VECTORS {
            let bytes = raw(name);
            assert_eq!(expected(name).encode(), bytes, "{name}");
            // And decode -> encode is the identity on python's bytes.
            assert_eq!(Value::decode(&bytes).unwrap().encode(), bytes, "{name}");
        }
    }

    #[test]
    fn raw_extension_payloads_are_python_messages() {
        // Ref: {"kind": "ref", "version": 1, "ref": {"kind": "urlpath", "version": 1, "urlpath": ...}}
        let Value::Ext { data, .. } = expected("ref") else {
            unreachable!()
        };
        let payload = Value::decode(&data).unwrap();
        assert_eq!(payload.get("kind").and_then(Value::as_str), Some("ref"));
        assert_eq!(payload.get("version").and_then(Value::as_i64), Some(1));
        let r = payload.get("ref").unwrap();
        assert_eq!(
            r.get("urlpath").and_then(Value::as_str),
            Some("/tmp/other.b2nd")
        );
        // Structured NumPy dtype: descr entries are tuples.
        let Value::Ext { data, .. } = expected("nd_struct") else {
            unreachable!()
        };
        let payload = Value::decode(&data).unwrap();
        let descr = payload.get("dtype").unwrap().get("descr").unwrap();
        assert_eq!(descr.as_slice().unwrap()[0], tup(vec![s("a"), s("<i4")]));
        // Object array.
        let Value::Ext { data, .. } = expected("nd_object") else {
            unreachable!()
        };
        let payload = Value::decode(&data).unwrap();
        assert_eq!(payload.get("values"), Some(&arr(vec![i(1), s("x")])));
        // Embedded CFrame starts with the frame header (a msgpack array, then "b2frame").
        let Value::Ext { data, .. } = expected("embedded_ndarray") else {
            unreachable!()
        };
        assert_eq!(&data[1..9], b"\xa8b2frame");
    }

    #[test]
    fn header_widths_match_python() {
        // First bytes of python-blosc2's encoding (python-blosc2 4.14.1, `msgpack_packb`).
        let cases: Vec<(Value, &str)> = vec![
            (arr((0..65536).map(|_| i(0)).collect()), "dd00010000"),
            (
                map((0..65536).map(|k| (s(&k.to_string()), i(0))).collect()),
                "df00010000",
            ),
            (s(&"x".repeat(65536)), "db00010000"),
            (Value::Bytes(vec![b'x'; 65536]), "c600010000"),
            (Value::Bytes(vec![b'x'; 256]), "c50100"),
            (
                Value::Ext {
                    code: 7,
                    data: vec![b'x'; 256],
                },
                "c8010007",
            ),
            (
                Value::Ext {
                    code: 7,
                    data: vec![b'x'; 65536],
                },
                "c90001000007",
            ),
            (
                Value::Ext {
                    code: 7,
                    data: vec![],
                },
                "c70007",
            ),
            (arr((0..16).map(i).collect()), "dc0010"),
            (
                map((0..16).map(|k| (s(&k.to_string()), i(0))).collect()),
                "de0010",
            ),
            (s(&"y".repeat(31)), "bf79"),
            (s(&"y".repeat(256)), "da0100"),
            (s(&"y".repeat(65535)), "daffff"),
        ];
        for (v, prefix) in cases {
            let enc = v.encode();
            assert_eq!(
                &enc[..prefix.len() / 2],
                unhex(prefix).as_slice(),
                "{prefix}"
            );
            assert!(same(&Value::decode(&enc).unwrap(), &v));
        }
    }

    #[test]
    fn round_trips() {
        let values = vec![
            Value::UInt(u64::MAX),
            Value::Int(i64::MIN),
            Value::Float(-0.0),
            tup(vec![tup(vec![]), Value::Set(vec![tup(vec![i(1)])])]),
            map(vec![(
                i(-3),
                Value::Complex {
                    re: f64::INFINITY,
                    im: -0.0,
                },
            )]),
            nd("<U1", &[3, 1], &[0; 12]),
            nd("<O", &[1], &[1, 2, 3]), // unknown itemsize: not checked
            Value::Ext {
                code: -128,
                data: vec![1; 5],
            },
            Value::Ext {
                code: EXT_CFRAME,
                data: vec![],
            },
            Value::Set(vec![s(TUPLE_MARKER), i(1)]),
        ];
        for v in values {
            let enc = v.encode();
            let back = Value::decode(&enc).unwrap_or_else(|e| panic!("{v:?}: {e}"));
            assert!(same(&back, &v), "{v:?} -> {back:?}");
            assert_eq!(back.encode(), enc);
        }
        // Positive UInt normalises to Int, encoding identically.
        assert_eq!(Value::UInt(5).encode(), i(5).encode());
        assert_eq!(Value::decode(&Value::UInt(5).encode()).unwrap(), i(5));
        // A non-canonical msgpack width still decodes to the same number.
        assert_eq!(Value::decode(&[0xd0, 0x05]).unwrap(), i(5));
        assert_eq!(
            Value::decode(&[0xcf, 0, 0, 0, 0, 0, 0, 0, 9]).unwrap(),
            i(9)
        );
        // float32 is widened; encode then writes float64 as python would.
        let f = Value::decode(&[0xca, 0x3f, 0xc0, 0, 0]).unwrap();
        assert_eq!(f, Value::Float(1.5));
        assert_eq!(f.encode(), unhex("cb3ff8000000000000"));
    }

    #[test]
    fn conveniences() {
        let v = Value::decode(&raw("dict_str")).unwrap();
        assert_eq!(v.get("a").and_then(Value::as_i64), Some(1));
        assert_eq!(v.get("a").and_then(Value::as_f64), Some(1.0));
        assert_eq!(
            v.get("b").and_then(Value::as_slice).map(<[Value]>::len),
            Some(2)
        );
        assert!(v.get("b").unwrap().as_slice().unwrap()[1].is_nil());
        assert_eq!(v.get("missing"), None);
        assert_eq!(s("x").as_str(), Some("x"));
        assert_eq!(i(-1).as_u64(), None);
        assert_eq!(Value::UInt(u64::MAX).as_i64(), None);
        assert_eq!(Value::UInt(u64::MAX).as_u64(), Some(u64::MAX));
        assert_eq!(Value::Bool(true).as_bool(), Some(true));
        assert_eq!(Value::Bytes(vec![1]).as_bytes(), Some(&[1u8][..]));
        assert_eq!(i(1).as_str(), None);
        assert_eq!(
            map(vec![(s("k"), i(1)), (s("k"), i(2))]).get("k"),
            Some(&i(2))
        );
        assert_eq!(Value::from(u64::MAX), Value::UInt(u64::MAX));
        assert_eq!(Value::from(7u64), i(7));
    }

    #[test]
    fn rejects_malformed_input() {
        let bad: &[(&str, &[u8])] = &[
            ("empty", &[]),
            ("trailing", &[0xc0, 0xc0]),
            ("reserved", &[0xc1]),
            ("truncated u16", &[0xcd, 0x01]),
            ("truncated str", &[0xa5, b'a']),
            ("bad utf8", &[0xa2, 0xc3, 0x28]),
            ("truncated array", &[0x93, 0x01]),
            ("truncated map", &[0x81, 0x01]),
            ("huge array", &[0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0]),
            ("huge map", &[0xdf, 0xff, 0xff, 0xff, 0xff]),
            ("huge str", &[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']),
            ("huge bin", &[0xc6, 0xff, 0xff, 0xff, 0xff, 0]),
            ("huge ext", &[0xc9, 0xff, 0xff, 0xff, 0xff, 5, 0]),
            ("complex too short", &[0xd7, 0x2c, 0, 0, 0, 0, 0, 0, 0, 0]),
            ("set not array", &[0xd4, 0x2d, 0x01]),
            ("set trailing", &[0xd5, 0x2d, 0x90, 0xc0]),
            ("set truncated", &[0xd4, 0x2d, 0x91]),
            ("ndarray empty payload", &[0xc7, 0x00, 0x2e]),
        ];
        for (what, b) in bad {
            assert!(Value::decode(b).is_err(), "{what} should fail");
        }
        // NumPy payload with data length inconsistent with dtype*shape.
        let mut good = raw("nd_i4");
        let Value::NdArray { dtype, data, .. } = Value::decode(&good).unwrap() else {
            unreachable!()
        };
        let wrong = Value::NdArray {
            dtype,
            shape: vec![4],
            data,
        }
        .encode();
        assert!(Value::decode(&wrong)
            .unwrap_err()
            .reason
            .contains("need 16 bytes"));
        // Negative shape entry.
        let pos = good.windows(2).position(|w| w == [0x91, 0x03]).unwrap();
        good[pos + 1] = 0xff; // shape [-1]
        assert!(Value::decode(&good).is_err());
        // Overflowing shape.
        let huge = nd("<i4", &[usize::MAX, 2], &[]).encode();
        assert!(Value::decode(&huge).is_err());
        let err = Value::decode(&[0xc1]).unwrap_err();
        assert!(err.to_string().starts_with("attribute value: "));
    }

    #[test]
    fn noncanonical_ndarray_payload_kept_raw() {
        // Extra key: python would read it, we cannot represent it: raw.
        let payload = map(vec![
            (s("dtype"), map(vec![(s("str"), s("|u1"))])),
            (s("shape"), arr(vec![i(1)])),
            (s("data"), Value::Bytes(vec![7])),
            (s("extra"), Value::Nil),
        ])
        .encode();
        let v = Value::Ext {
            code: EXT_NDARRAY,
            data: payload,
        };
        assert_eq!(Value::decode(&v.encode()).unwrap(), v);
        // Keys in another order are still an NdArray (re-encoded in python's order).
        let payload = map(vec![
            (s("data"), Value::Bytes(vec![7])),
            (s("shape"), arr(vec![i(1)])),
            (s("dtype"), map(vec![(s("str"), s("|u1"))])),
        ])
        .encode();
        let v = Value::Ext {
            code: EXT_NDARRAY,
            data: payload,
        };
        assert_eq!(Value::decode(&v.encode()).unwrap(), nd("|u1", &[1], &[7]));
    }

    #[test]
    fn depth_is_bounded() {
        let nested = |n: usize, open: &[u8]| {
            let mut b = Vec::new();
            for _ in 0..n {
                b.extend_from_slice(open);
            }
            b.push(0xc0);
            b
        };
        assert!(Value::decode(&nested(MAX_DEPTH, &[0x91])).is_ok());
        assert!(Value::decode(&nested(MAX_DEPTH + 1, &[0x91])).is_err());
        assert!(Value::decode(&nested(MAX_DEPTH + 1, &[0x81, 0xc0])).is_err());
        assert!(Value::decode(&nested(100_000, &[0x91])).is_err());
        // Sets nested through their extension payloads.
        let mut v = Value::Nil;
        for _ in 0..200 {
            v = Value::Set(vec![v]);
        }
        assert!(Value::decode(&v.encode()).is_err());
        let mut v = Value::Nil;
        for _ in 0..MAX_DEPTH / 2 {
            v = Value::Set(vec![v]);
        }
        assert!(Value::decode(&v.encode()).is_ok());
        // ext 46 directly inside ext 46, over and over.
        let wrap = |levels: usize| {
            let mut b = vec![0xc0];
            for _ in 0..levels {
                b = Value::Ext {
                    code: EXT_NDARRAY,
                    data: b,
                }
                .encode();
            }
            b
        };
        assert!(Value::decode(&wrap(MAX_DEPTH)).is_ok());
        assert!(Value::decode(&wrap(MAX_DEPTH + 1)).is_err());
        assert!(Value::decode(&wrap(2000)).is_err());
    }

    /// Tiny LCG fuzzer: random and mutated inputs must never panic, and whatever
    /// decodes must re-encode to something that decodes to the same value.
    #[test]
    #[allow(clippy::cast_possible_truncation)]
    fn fuzz_never_panics() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as u32
        };
        let seeds: Vec<Vec<u8>> = VECTORS.iter().map(|(_, h)| unhex(h)).collect();
        let interesting = [
            0x00u8, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc4, 0xc7, 0xc9, 0xcf, 0xd4, 0xd8, 0xdc,
            0xdd, 0xdf, 0xe0, 0xff, 0x2c, 0x2d, 0x2e,
        ];
        let mut decoded = 0usize;
        for round in 0..200_000u32 {
            let mut input = if round % 4 == 0 {
                let len = (next() % 64) as usize;
                (0..len).map(|_| next() as u8).collect::<Vec<u8>>()
            } else {
                seeds[(next() as usize) % seeds.len()].clone()
            };
            let mutations = 1 + next() % 4;
            for _ in 0..mutations {
                if input.is_empty() {
                    input.push(next() as u8);
                    continue;
                }
                let pos = (next() as usize) % input.len();
                match next() % 6 {
                    0 => input[pos] = next() as u8,
                    1 => input[pos] = interesting[(next() as usize) % interesting.len()],
                    2 => input[pos] ^= 1 << (next() % 8),
                    3 => input.truncate(pos),
                    4 => input.insert(pos, interesting[(next() as usize) % interesting.len()]),
                    _ => {
                        let end = (pos + 1 + (next() as usize) % 8).min(input.len());
                        let chunk = input[pos..end].to_vec();
                        input.splice(pos..pos, chunk);
                    }
                }
            }
            if let Ok(v) = Value::decode(&input) {
                decoded += 1;
                let again = Value::decode(&v.encode()).expect("re-encoded value must decode");
                assert_eq!(again.encode(), v.encode());
            }
        }
        assert!(
            decoded > 1000,
            "fuzzer should also hit valid inputs ({decoded})"
        );
    }
}
