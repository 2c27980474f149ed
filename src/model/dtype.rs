//! NumPy dtypes as python-blosc2 stores them in the `b2nd` metalayer.
//!
//! python-blosc2 writes `dtype.str` for plain dtypes (`"<f8"`, `"|b1"`, `"<U3"`, `"<M8[ns]"`) and
//! `str(dtype)` for every dtype of kind `'V'`: structured dtypes (a Python literal in list form
//! `[('a', '<i4'), ('b', 'u1')]` or, for aligned or explicitly laid-out structs, dict form
//! `{'names': [...], 'formats': [...], 'offsets': [...], 'itemsize': 16, 'aligned': True}`),
//! subarray dtypes (`('<i4', (2, 2))`) and plain void (`|V8`). Reading, it calls
//! `np.dtype(s)` and falls back to `np.dtype(ast.literal_eval(s))`.
//!
//! [`Dtype::parse`] mirrors that reading: it evaluates the literal with a small, bounded Python
//! literal parser and then follows NumPy's own construction rules (field offsets, `align`
//! propagation into nested structs, alignment checks, `itemsize` overrides, renaming of empty
//! field names to `f0`, `f1`, ...). [`Dtype::to_numpy_str`] writes exactly what NumPy prints, so
//! strings written by python-blosc2 round-trip unchanged.
//!
//! The string comes from an untrusted file: parsing never panics, bounds nesting
//! ([`MAX_NESTING_DEPTH`]) and input length ([`MAX_DTYPE_STR_LEN`]), and rejects any size,
//! offset or itemsize above `i32::MAX` (NumPy's own limit; NumPy silently wraps some of those
//! around, this parser refuses them). Object dtypes (`|O`), anywhere in a dtype, are refused:
//! their items are pointers into the writing process.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

/// Longest dtype string [`Dtype::parse`] accepts, in bytes (1 MiB).
pub const MAX_DTYPE_STR_LEN: usize = 1 << 20;

/// Deepest nesting of structured and subarray dtypes [`Dtype::parse`] accepts (levels below
/// the top-level dtype).
pub const MAX_NESTING_DEPTH: usize = 32;

/// Most dimensions in one subarray shape (NumPy's `NPY_MAXDIMS`).
pub const MAX_SUBARRAY_DIMS: usize = 64;

/// Largest itemsize, offset, string length or subarray item count accepted (`i32::MAX`, the
/// C `int` NumPy keeps them in).
pub const MAX_ITEMSIZE: usize = i32::MAX as usize;

/// Deepest bracket nesting of the Python literal itself.
const MAX_LITERAL_DEPTH: usize = 128;

/// How much of an offending dtype string a [`DtypeError`] keeps.
const ERROR_SNIPPET_CHARS: usize = 200;

const OBJECT_REASON: &str =
    "object dtypes ('O') hold pointers to Python objects and cannot be read";

/// Byte order of a dtype's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ByteOrder {
    /// Little-endian (`<`).
    Little,
    /// Big-endian (`>`).
    Big,
    /// No byte order: one-byte types, booleans, bytes, void and structured dtypes (`|`).
    NotApplicable,
}

impl ByteOrder {
    /// The byte order of the machine running this code.
    pub fn native() -> ByteOrder {
        if cfg!(target_endian = "big") {
            ByteOrder::Big
        } else {
            ByteOrder::Little
        }
    }

    /// The character NumPy uses in `dtype.str`: `<`, `>` or `|`.
    pub fn as_char(self) -> char {
        match self {
            ByteOrder::Little => '<',
            ByteOrder::Big => '>',
            ByteOrder::NotApplicable => '|',
        }
    }

    /// The prefix NumPy prints for structured-dtype fields (`''` where `dtype.str` has `|`).
    fn short_prefix(self) -> &'static str {
        match self {
            ByteOrder::Little => "<",
            ByteOrder::Big => ">",
            ByteOrder::NotApplicable => "",
        }
    }
}

/// The unit of a `datetime64` / `timedelta64` dtype (`<M8[ns]` has unit `Nanosecond`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DatetimeUnit {
    /// No unit (`<M8`): NumPy's generic datetime.
    Generic,
    /// Years (`Y`).
    Year,
    /// Months (`M`).
    Month,
    /// Weeks (`W`).
    Week,
    /// Days (`D`).
    Day,
    /// Hours (`h`).
    Hour,
    /// Minutes (`m`).
    Minute,
    /// Seconds (`s`).
    Second,
    /// Milliseconds (`ms`).
    Millisecond,
    /// Microseconds (`us`).
    Microsecond,
    /// Nanoseconds (`ns`).
    Nanosecond,
    /// Picoseconds (`ps`).
    Picosecond,
    /// Femtoseconds (`fs`).
    Femtosecond,
    /// Attoseconds (`as`).
    Attosecond,
}

impl DatetimeUnit {
    /// The unit code NumPy prints between the brackets (`"ns"`, `"D"`, ...; `"generic"` for
    /// [`DatetimeUnit::Generic`], which NumPy prints without brackets).
    pub fn as_str(self) -> &'static str {
        match self {
            DatetimeUnit::Generic => "generic",
            DatetimeUnit::Year => "Y",
            DatetimeUnit::Month => "M",
            DatetimeUnit::Week => "W",
            DatetimeUnit::Day => "D",
            DatetimeUnit::Hour => "h",
            DatetimeUnit::Minute => "m",
            DatetimeUnit::Second => "s",
            DatetimeUnit::Millisecond => "ms",
            DatetimeUnit::Microsecond => "us",
            DatetimeUnit::Nanosecond => "ns",
            DatetimeUnit::Picosecond => "ps",
            DatetimeUnit::Femtosecond => "fs",
            DatetimeUnit::Attosecond => "as",
        }
    }

    /// The unit for a NumPy unit code (`"ns"`, `"D"`, `"generic"`; `"μs"` is accepted for
    /// microseconds as NumPy does). `None` for anything else.
    pub fn from_code(code: &str) -> Option<DatetimeUnit> {
        Some(match code {
            "generic" => DatetimeUnit::Generic,
            "Y" => DatetimeUnit::Year,
            "M" => DatetimeUnit::Month,
            "W" => DatetimeUnit::Week,
            "D" => DatetimeUnit::Day,
            "h" => DatetimeUnit::Hour,
            "m" => DatetimeUnit::Minute,
            "s" => DatetimeUnit::Second,
            "ms" => DatetimeUnit::Millisecond,
            "us" | "\u{3bc}s" | "\u{b5}s" => DatetimeUnit::Microsecond,
            "ns" => DatetimeUnit::Nanosecond,
            "ps" => DatetimeUnit::Picosecond,
            "fs" => DatetimeUnit::Femtosecond,
            "as" => DatetimeUnit::Attosecond,
            _ => return None,
        })
    }
}

/// A NumPy dtype, as far as fixed-size binary data goes.
///
/// Values produced by [`Dtype::parse`] are normalised the way NumPy normalises them: one-byte
/// integers and booleans have [`ByteOrder::NotApplicable`], multi-byte types always have
/// [`ByteOrder::Little`] or [`ByteOrder::Big`] (`=` and `|` mean the machine's order), struct
/// field offsets and itemsizes are explicit, and a subarray never has an empty shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dtype {
    /// `|b1`: one byte, 0 or 1.
    Bool,
    /// Signed integer (`|i1`, `<i2`, `<i4`, `<i8`).
    Int {
        /// Size in bytes: 1, 2, 4 or 8.
        size: usize,
        /// Byte order ([`ByteOrder::NotApplicable`] for size 1).
        order: ByteOrder,
    },
    /// Unsigned integer (`|u1`, `<u2`, `<u4`, `<u8`).
    UInt {
        /// Size in bytes: 1, 2, 4 or 8.
        size: usize,
        /// Byte order ([`ByteOrder::NotApplicable`] for size 1).
        order: ByteOrder,
    },
    /// IEEE float (`<f2`, `<f4`, `<f8`; `<f16` is the platform `long double`, x87 80-bit
    /// extended precision padded to 16 bytes on x86-64).
    Float {
        /// Size in bytes: 2, 4, 8 or 16.
        size: usize,
        /// Byte order.
        order: ByteOrder,
    },
    /// Complex: two floats, real then imaginary (`<c8`, `<c16`, `<c32`).
    Complex {
        /// Size in bytes of the pair: 8, 16 or 32.
        size: usize,
        /// Byte order.
        order: ByteOrder,
    },
    /// `datetime64`: an 8-byte signed count of `count` × `unit` since the Unix epoch
    /// (`<M8[ns]`, `<M8[10s]`, generic `<M8`).
    Datetime {
        /// The unit.
        unit: DatetimeUnit,
        /// The unit multiplier (`10` in `<M8[10s]`); 1 for generic datetimes.
        count: u32,
        /// Byte order.
        order: ByteOrder,
    },
    /// `timedelta64`: an 8-byte signed count of `count` × `unit` (`<m8[s]`).
    Timedelta {
        /// The unit.
        unit: DatetimeUnit,
        /// The unit multiplier; 1 for generic timedeltas.
        count: u32,
        /// Byte order.
        order: ByteOrder,
    },
    /// `|S{len}`: fixed-length bytes, NUL-padded.
    Bytes {
        /// Length in bytes (the itemsize).
        len: usize,
    },
    /// `<U{chars}`: fixed-length UCS-4 text, 4 bytes per character, NUL-padded.
    Unicode {
        /// Length in characters (the itemsize is 4 × `chars`).
        chars: usize,
        /// Byte order of each 4-byte code point.
        order: ByteOrder,
    },
    /// `|V{len}`: raw bytes without structure.
    Void {
        /// Length in bytes.
        len: usize,
    },
    /// A structured dtype (NumPy kind `'V'` with fields).
    Struct(StructDtype),
    /// A subarray dtype: `shape` items of `base` in C order, e.g. `('<i4', (2, 2))`.
    SubArray {
        /// The item dtype (itself possibly a subarray: NumPy does not flatten those).
        base: Box<Dtype>,
        /// The subarray shape (never empty: NumPy turns `(base, ())` into `base`).
        shape: Vec<usize>,
    },
}

/// The layout of a structured dtype.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StructDtype {
    /// The fields in NumPy's `dtype.names` order (not necessarily offset order; fields may
    /// overlap when the dtype was built with explicit offsets).
    pub fields: Vec<Field>,
    /// Size of one item in bytes, padding included.
    pub itemsize: usize,
    /// NumPy's `isalignedstruct`: built with `align=True` (C-struct layout). Nested structs
    /// of an aligned struct are aligned too.
    pub aligned: bool,
}

impl StructDtype {
    /// The field called `name`, if any (titles are not searched).
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// One field of a [`StructDtype`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Field {
    /// The field name.
    pub name: String,
    /// The optional title (NumPy's alternative name for the field: `(('T', 'a'), 'u1')`).
    pub title: Option<String>,
    /// Byte offset of the field inside one item.
    pub offset: usize,
    /// The field's dtype (a [`Dtype::SubArray`] for fields such as `('a', '<i4', (2,))`).
    pub dtype: Dtype,
}

/// A dtype string that cannot be parsed, or a dtype that cannot be represented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid dtype {dtype:?}: {reason}")]
pub struct DtypeError {
    /// The offending dtype string (cut to its first 200 characters, with `…` appended, when
    /// longer).
    pub dtype: String,
    /// Why it was refused.
    pub reason: String,
}

impl DtypeError {
    fn new(dtype: &str, reason: String) -> DtypeError {
        let dtype = match dtype.char_indices().nth(ERROR_SNIPPET_CHARS) {
            Some((cut, _)) => format!("{}…", &dtype[..cut]),
            None => dtype.to_string(),
        };
        DtypeError { dtype, reason }
    }
}

type R<T> = Result<T, String>;

/// The `dtype.str` form of a NumPy scalar type name (`"int32"` -> `"<i4"`), for the draft
/// metalayer; `None` when `s` is not such a name.
fn numpy_type_name(s: &str) -> Option<String> {
    let unit = |prefix: &str, code: &str| -> Option<String> {
        let rest = s.strip_prefix(prefix)?;
        match rest {
            "" => Some(format!("<{code}8")),
            _ if rest.starts_with('[') && rest.ends_with(']') => Some(format!("<{code}8{rest}")),
            _ => None,
        }
    };
    if let Some(t) = unit("datetime64", "M").or_else(|| unit("timedelta64", "m")) {
        return Some(t);
    }
    let t = match s {
        "bool" => "|b1",
        "int8" => "|i1",
        "uint8" => "|u1",
        "int16" => "<i2",
        "uint16" => "<u2",
        "int32" => "<i4",
        "uint32" => "<u4",
        "int64" => "<i8",
        "uint64" => "<u8",
        "float16" => "<f2",
        "float32" => "<f4",
        "float64" => "<f8",
        "float128" | "longdouble" => "<f16",
        "complex64" => "<c8",
        "complex128" => "<c16",
        "complex256" | "clongdouble" => "<c32",
        _ => return None,
    };
    Some(t.to_string())
}

impl Dtype {
    /// Parses a dtype string as python-blosc2 stores it in the `b2nd` metalayer: a
    /// `dtype.str` such as `"<f8"`, or `str(dtype)` of a structured or subarray dtype, a
    /// Python literal. The result is what NumPy builds from the same string.
    ///
    /// ```
    /// use b2nd::dtype::{ByteOrder, Dtype};
    ///
    /// assert_eq!(Dtype::parse("<f8")?, Dtype::Float { size: 8, order: ByteOrder::Little });
    /// assert_eq!(Dtype::parse("<U3")?.itemsize(), 12);
    ///
    /// let d = Dtype::parse("{'names': ['a', 'b'], 'formats': ['u1', '<i8'], \
    ///                       'offsets': [0, 8], 'itemsize': 16, 'aligned': True}")?;
    /// let Dtype::Struct(s) = &d else { unreachable!() };
    /// assert_eq!((s.fields[1].name.as_str(), s.fields[1].offset, s.itemsize), ("b", 8, 16));
    ///
    /// let sub = Dtype::parse("('<i4', (2, 2))")?;
    /// assert_eq!(sub.npy_descr(), ("'<i4'".to_string(), vec![2, 2]));
    ///
    /// assert!(Dtype::parse("|O").is_err()); // object arrays hold pointers
    /// # Ok::<(), b2nd::dtype::DtypeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`DtypeError`] for anything NumPy would not read, for object and `StringDType`
    /// dtypes, for forms python-blosc2 never writes (comma strings such as `"i4,f8"`, type names
    /// such as `"int32"`, `(base, new_dtype)` reinterpretation tuples, non-string titles), and
    /// for strings beyond the limits: [`MAX_DTYPE_STR_LEN`], [`MAX_NESTING_DEPTH`],
    /// [`MAX_SUBARRAY_DIMS`], sizes over [`MAX_ITEMSIZE`].
    pub fn parse(s: &str) -> Result<Dtype, DtypeError> {
        parse_str(s).map_err(|reason| DtypeError::new(s, reason))
    }

    /// Parse the dtype of a 6-element draft `b2nd` metalayer, whose spec shows NumPy type names
    /// as `repr` prints them (`"int32"`, `"float64"`, `"uint8"`, `"bool"`, `"datetime64[ns]"`),
    /// stored little-endian as NumPy names them; anything else is parsed as by
    /// [`Dtype::parse`].
    ///
    /// ```
    /// use b2nd::Dtype;
    /// assert_eq!(Dtype::parse_draft("int32")?, Dtype::parse("<i4")?);
    /// assert_eq!(Dtype::parse_draft("<f8")?, Dtype::parse("<f8")?);
    /// assert!(Dtype::parse("int32").is_err()); // current metalayers store `dtype.str`
    /// # Ok::<(), b2nd::dtype::DtypeError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Dtype::parse`].
    pub fn parse_draft(s: &str) -> Result<Dtype, DtypeError> {
        match numpy_type_name(s) {
            Some(str_form) => Dtype::parse(&str_form),
            None => Dtype::parse(s),
        }
    }

    /// The dtype python-blosc2 assumes for caterva arrays, which carry no dtype: `|S{n}` with
    /// `n` the typesize.
    pub fn bytes(n: usize) -> Dtype {
        Dtype::Bytes { len: n }
    }

    /// Size of one item in bytes. Never overflows: dtypes from [`Dtype::parse`] are at most
    /// [`MAX_ITEMSIZE`]; hand-built ones saturate at `usize::MAX`.
    pub fn itemsize(&self) -> usize {
        match self {
            Dtype::Bool => 1,
            Dtype::Int { size, .. }
            | Dtype::UInt { size, .. }
            | Dtype::Float { size, .. }
            | Dtype::Complex { size, .. } => *size,
            Dtype::Datetime { .. } | Dtype::Timedelta { .. } => 8,
            Dtype::Bytes { len } | Dtype::Void { len } => *len,
            Dtype::Unicode { chars, .. } => chars.saturating_mul(4),
            Dtype::Struct(s) => s.itemsize,
            Dtype::SubArray { base, shape } => {
                if shape.contains(&0) {
                    0
                } else {
                    shape
                        .iter()
                        .fold(base.itemsize(), |acc, &d| acc.saturating_mul(d))
                }
            }
        }
    }

    /// NumPy's `dtype.kind`: `b i u f c M m S U V` (`V` for void, structured and subarray
    /// dtypes).
    pub fn kind(&self) -> char {
        match self {
            Dtype::Bool => 'b',
            Dtype::Int { .. } => 'i',
            Dtype::UInt { .. } => 'u',
            Dtype::Float { .. } => 'f',
            Dtype::Complex { .. } => 'c',
            Dtype::Datetime { .. } => 'M',
            Dtype::Timedelta { .. } => 'm',
            Dtype::Bytes { .. } => 'S',
            Dtype::Unicode { .. } => 'U',
            Dtype::Void { .. } | Dtype::Struct(_) | Dtype::SubArray { .. } => 'V',
        }
    }

    /// NumPy's `dtype.alignment` on x86-64 / aarch64 Linux: the C alignment of the type
    /// (`<c16` → 8, `<f16` → 16, `<U3` → 4), the largest field alignment for aligned structs,
    /// 1 for packed structs, the base's for subarrays. Never 0.
    pub fn alignment(&self) -> usize {
        let a = match self {
            Dtype::Bool | Dtype::Bytes { .. } | Dtype::Void { .. } => 1,
            Dtype::Int { size, .. } | Dtype::UInt { size, .. } | Dtype::Float { size, .. } => *size,
            Dtype::Complex { size, .. } => *size / 2,
            Dtype::Datetime { .. } | Dtype::Timedelta { .. } => 8,
            Dtype::Unicode { .. } => 4,
            Dtype::Struct(s) => {
                if s.aligned {
                    s.fields
                        .iter()
                        .map(|f| f.dtype.alignment())
                        .max()
                        .unwrap_or(1)
                } else {
                    1
                }
            }
            Dtype::SubArray { base, .. } => base.alignment(),
        };
        a.max(1)
    }

    /// Byte order of the values: that of the scalar type, that of the base for a subarray,
    /// [`ByteOrder::NotApplicable`] for one-byte types, booleans, bytes, void and structs
    /// (whose fields each have their own).
    pub fn byte_order(&self) -> ByteOrder {
        match self {
            Dtype::Int { order, .. }
            | Dtype::UInt { order, .. }
            | Dtype::Float { order, .. }
            | Dtype::Complex { order, .. }
            | Dtype::Datetime { order, .. }
            | Dtype::Timedelta { order, .. }
            | Dtype::Unicode { order, .. } => *order,
            Dtype::SubArray { base, .. } => base.byte_order(),
            Dtype::Bool | Dtype::Bytes { .. } | Dtype::Void { .. } | Dtype::Struct(_) => {
                ByteOrder::NotApplicable
            }
        }
    }

    /// Whether the values can be used on this machine without byte swapping: true when the
    /// byte order is the machine's or not applicable, and for structs and subarrays when every
    /// field / the base is.
    pub fn is_native_order(&self) -> bool {
        match self {
            Dtype::Struct(s) => s.fields.iter().all(|f| f.dtype.is_native_order()),
            Dtype::SubArray { base, .. } => base.is_native_order(),
            other => {
                matches!(other.byte_order(), ByteOrder::NotApplicable)
                    || other.byte_order() == ByteOrder::native()
            }
        }
    }

    /// The string python-blosc2 stores for this dtype: `dtype.str` for plain types (`"|b1"`,
    /// `"<U3"`, `">i4"`, `"<M8[ns]"`, `"|V8"`), `str(dtype)` for structured dtypes (list form,
    /// or dict form when aligned or not packed, exactly as NumPy prints it) and subarray
    /// dtypes (`"('<i4', (2, 2))"`).
    ///
    /// For every dtype NumPy can describe in a string, `Dtype::parse(&d.to_numpy_str()) == d`.
    /// Where NumPy's own `str()` loses information (an aligned struct inside a subarray or a
    /// packed struct, a field named `''`), this writes the dict form, which NumPy reads back
    /// unchanged, instead of NumPy's lossy list form. [`Dtype::validate`] tells whether a
    /// hand-built dtype survives the round trip.
    ///
    /// Field names and titles are written as Python's `repr()` does, except that unassigned
    /// code points (which Python escapes, depending on its Unicode version) are written as is.
    pub fn to_numpy_str(&self) -> String {
        let mut out = String::new();
        match self {
            Dtype::Struct(s) => write_struct(s, &mut out, false),
            Dtype::SubArray { base, shape } => {
                out.push('(');
                base.write_short(&mut out, false);
                out.push_str(", ");
                write_shape(shape, &mut out);
                out.push(')');
            }
            scalar => scalar.write_typestr(&mut out),
        }
        out
    }

    /// The `'descr'` value of a `.npy` header for an array of this dtype, and the extra
    /// trailing dimensions to append to the array shape.
    ///
    /// This is `repr(np.lib.format.dtype_to_descr(dtype))`: `"'<f8'"` for plain types, the
    /// `dtype.descr` list for structured dtypes (gaps as `('', '|V4')` padding fields, one-byte
    /// types with `|`, titles as `(('T', 'a'), '|u1')`, subarray fields as
    /// `('a', '<i4', (2,))`). A top-level subarray dtype is expanded as NumPy expands it when
    /// it makes an array: `('<i4', (2, 2))` gives `("'<i4'", vec![2, 2])`.
    ///
    /// NumPy cannot describe structs with overlapping or out-of-order fields in a `.npy`
    /// header; for those this returns raw bytes, `'|V{itemsize}'`. Use
    /// [`Dtype::try_npy_descr`] to get an error instead.
    pub fn npy_descr(&self) -> (String, Vec<usize>) {
        match self.try_npy_descr() {
            Ok(d) => d,
            Err(_) => {
                let (base, shape) = self.expand_subarrays();
                (format!("'|V{}'", base.itemsize()), shape)
            }
        }
    }

    /// Like [`Dtype::npy_descr`], but an error (as `np.save` raises) for structs whose fields
    /// overlap or are out of offset order.
    ///
    /// # Errors
    ///
    /// A [`DtypeError`] when some struct, at any depth, has overlapping or out-of-order fields.
    pub fn try_npy_descr(&self) -> Result<(String, Vec<usize>), DtypeError> {
        let (base, shape) = self.expand_subarrays();
        let mut out = String::new();
        base.write_descr(&mut out)
            .map_err(|reason| DtypeError::new(&self.to_numpy_str(), reason))?;
        Ok((out, shape))
    }

    /// Checks that NumPy would read [`Dtype::to_numpy_str`] back as this very dtype: sizes and
    /// byte orders as NumPy normalises them, offsets inside the itemsize, names unique,
    /// alignment consistent. Always true for dtypes from [`Dtype::parse`].
    ///
    /// # Errors
    ///
    /// A [`DtypeError`] describing the string NumPy would misread or refuse.
    pub fn validate(&self) -> Result<(), DtypeError> {
        let s = self.to_numpy_str();
        match Dtype::parse(&s) {
            Ok(d) if d == *self => Ok(()),
            Ok(_) => Err(DtypeError::new(
                &s,
                "NumPy would read this string back as a different dtype (byte order, size, \
                 offsets, alignment or field names are not as NumPy normalises them)"
                    .to_string(),
            )),
            Err(e) => Err(e),
        }
    }

    /// Base dtype and concatenated shape of nested top-level subarrays (outer dims first).
    fn expand_subarrays(&self) -> (&Dtype, Vec<usize>) {
        let mut d = self;
        let mut shape = Vec::new();
        while let Dtype::SubArray { base, shape: s } = d {
            shape.extend_from_slice(s);
            d = base;
        }
        (d, shape)
    }

    /// NumPy's `PyDataType_ISUNSIZED`: itemsize 0 and no fields. `S0`, `U0` and `V0` are
    /// the unsized flexible types `(type, n)` gives a size to; NumPy also counts zero-size
    /// subarrays, which then accept no shape.
    fn is_unsized(&self) -> bool {
        match self {
            Dtype::Bytes { len: 0 } | Dtype::Void { len: 0 } | Dtype::Unicode { chars: 0, .. } => {
                true
            }
            Dtype::SubArray { .. } => self.itemsize() == 0,
            _ => false,
        }
    }

    /// `dtype.str`.
    fn write_typestr(&self, out: &mut String) {
        let order = |o: ByteOrder, size: usize| if size == 1 { '|' } else { o.as_char() };
        match self {
            Dtype::Bool => out.push_str("|b1"),
            Dtype::Int { size, order: o } => {
                push_fmt(out, format_args!("{}i{size}", order(*o, *size)))
            }
            Dtype::UInt { size, order: o } => {
                push_fmt(out, format_args!("{}u{size}", order(*o, *size)))
            }
            Dtype::Float { size, order: o } => {
                push_fmt(out, format_args!("{}f{size}", order(*o, *size)))
            }
            Dtype::Complex { size, order: o } => {
                push_fmt(out, format_args!("{}c{size}", order(*o, *size)))
            }
            Dtype::Datetime {
                unit,
                count,
                order: o,
            } => {
                out.push(o.as_char());
                out.push_str("M8");
                write_datetime_meta(*unit, *count, out);
            }
            Dtype::Timedelta {
                unit,
                count,
                order: o,
            } => {
                out.push(o.as_char());
                out.push_str("m8");
                write_datetime_meta(*unit, *count, out);
            }
            Dtype::Bytes { len } => push_fmt(out, format_args!("|S{len}")),
            Dtype::Unicode { chars, order: o } => {
                push_fmt(out, format_args!("{}U{chars}", o.as_char()))
            }
            Dtype::Void { len } => push_fmt(out, format_args!("|V{len}")),
            Dtype::Struct(_) | Dtype::SubArray { .. } => {
                push_fmt(out, format_args!("|V{}", self.itemsize()))
            }
        }
    }

    /// NumPy's `_construction_repr(dtype, short=True)`: how a dtype is printed inside a struct
    /// or subarray literal. `ctx_aligned` tells whether NumPy parses this position with
    /// `align=True` (inside an aligned struct).
    fn write_short(&self, out: &mut String, ctx_aligned: bool) {
        let prefix = |o: ByteOrder, size: usize| if size == 1 { "" } else { o.short_prefix() };
        match self {
            Dtype::Struct(s) => write_struct(s, out, ctx_aligned),
            Dtype::SubArray { base, shape } => {
                out.push('(');
                base.write_short(out, ctx_aligned);
                out.push_str(", ");
                write_shape(shape, out);
                out.push(')');
            }
            Dtype::Bool => out.push_str("'?'"),
            Dtype::Int { size, order } => {
                push_fmt(out, format_args!("'{}i{size}'", prefix(*order, *size)))
            }
            Dtype::UInt { size, order } => {
                push_fmt(out, format_args!("'{}u{size}'", prefix(*order, *size)))
            }
            Dtype::Float { size, order } => {
                push_fmt(out, format_args!("'{}f{size}'", prefix(*order, *size)))
            }
            Dtype::Complex { size, order } => {
                push_fmt(out, format_args!("'{}c{size}'", prefix(*order, *size)))
            }
            Dtype::Datetime { unit, count, order } => {
                push_fmt(out, format_args!("'{}M8", order.short_prefix()));
                write_datetime_meta(*unit, *count, out);
                out.push('\'');
            }
            Dtype::Timedelta { unit, count, order } => {
                push_fmt(out, format_args!("'{}m8", order.short_prefix()));
                write_datetime_meta(*unit, *count, out);
                out.push('\'');
            }
            Dtype::Bytes { len: 0 } => out.push_str("'S'"),
            Dtype::Bytes { len } => push_fmt(out, format_args!("'S{len}'")),
            Dtype::Unicode { chars: 0, order } => {
                push_fmt(out, format_args!("'{}U'", order.short_prefix()))
            }
            Dtype::Unicode { chars, order } => {
                push_fmt(out, format_args!("'{}U{chars}'", order.short_prefix()))
            }
            Dtype::Void { len: 0 } => out.push_str("'V'"),
            Dtype::Void { len } => push_fmt(out, format_args!("'V{len}'")),
        }
    }

    /// NumPy's `_array_descr`: the `.npy` descr of a (non-expanded) dtype.
    fn write_descr(&self, out: &mut String) -> R<()> {
        match self {
            Dtype::Struct(s) => {
                out.push('[');
                let mut offset = 0usize;
                let mut first = true;
                let mut sep = |out: &mut String| {
                    if !first {
                        out.push_str(", ");
                    }
                    first = false;
                };
                for f in &s.fields {
                    if f.offset > offset {
                        sep(out);
                        push_fmt(out, format_args!("('', '|V{}')", f.offset - offset));
                        offset = f.offset;
                    } else if f.offset < offset {
                        return Err(format!(
                            "a .npy header cannot describe a struct whose fields overlap or are \
                             out of offset order (field {:?} at offset {} starts before byte {})",
                            f.name, f.offset, offset
                        ));
                    }
                    sep(out);
                    out.push('(');
                    write_field_name(f, out);
                    out.push_str(", ");
                    match &f.dtype {
                        Dtype::SubArray { base, shape } => {
                            base.write_descr(out)?;
                            out.push_str(", ");
                            write_shape(shape, out);
                        }
                        other => other.write_descr(out)?,
                    }
                    out.push(')');
                    offset = offset.saturating_add(f.dtype.itemsize());
                }
                if s.itemsize > offset {
                    sep(out);
                    push_fmt(out, format_args!("('', '|V{}')", s.itemsize - offset));
                }
                out.push(']');
            }
            Dtype::SubArray { base, shape } => {
                out.push('(');
                base.write_descr(out)?;
                out.push_str(", ");
                write_shape(shape, out);
                out.push(')');
            }
            scalar => {
                out.push('\'');
                scalar.write_typestr(out);
                out.push('\'');
            }
        }
        Ok(())
    }
}

impl fmt::Display for Dtype {
    /// Same as [`Dtype::to_numpy_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_numpy_str())
    }
}

impl FromStr for Dtype {
    type Err = DtypeError;

    /// Same as [`Dtype::parse`].
    fn from_str(s: &str) -> Result<Dtype, DtypeError> {
        Dtype::parse(s)
    }
}

// ---------------------------------------------------------------------------------------------
// Printing helpers

fn push_fmt(out: &mut String, args: fmt::Arguments<'_>) {
    use fmt::Write as _;
    // Writing into a String cannot fail.
    let _ = out.write_fmt(args);
}

fn write_datetime_meta(unit: DatetimeUnit, count: u32, out: &mut String) {
    match (unit, count) {
        (DatetimeUnit::Generic, _) => {}
        (unit, 1) => push_fmt(out, format_args!("[{}]", unit.as_str())),
        (unit, n) => push_fmt(out, format_args!("[{n}{}]", unit.as_str())),
    }
}

/// Python's `repr()` of a tuple of ints: `(2,)`, `(2, 3)`, `()`.
fn write_shape(shape: &[usize], out: &mut String) {
    out.push('(');
    for (i, d) in shape.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_fmt(out, format_args!("{d}"));
    }
    if shape.len() == 1 {
        out.push(',');
    }
    out.push(')');
}

/// `'name'` or `('title', 'name')`, as Python's `repr()` writes them.
fn write_field_name(f: &Field, out: &mut String) {
    match &f.title {
        Some(t) => {
            out.push('(');
            write_py_str(t, out);
            out.push_str(", ");
            write_py_str(&f.name, out);
            out.push(')');
        }
        None => write_py_str(&f.name, out),
    }
}

/// NumPy's `_is_packed`: fields in order, each where a (possibly aligned) packed layout puts
/// it, and nothing after the last but alignment padding.
fn is_packed(s: &StructDtype) -> bool {
    let mut total = 0usize;
    let mut max_align = 1usize;
    for f in &s.fields {
        if s.aligned {
            let a = f.dtype.alignment();
            max_align = max_align.max(a);
            total = round_up_saturating(total, a);
        }
        if f.offset != total {
            return false;
        }
        total = total.saturating_add(f.dtype.itemsize());
    }
    if s.aligned {
        total = round_up_saturating(total, max_align);
    }
    total == s.itemsize
}

/// NumPy's `_struct_str`, with one deliberate difference: an aligned struct in a position that
/// NumPy parses with `align=False` gets the dict form with `'aligned': True` (NumPy only does
/// that at top level and otherwise prints a form that reads back unaligned), and a struct with
/// a field named `''` gets the dict form (the list form renames it `f0`...).
fn write_struct(s: &StructDtype, out: &mut String, ctx_aligned: bool) {
    let aligned_flag = s.aligned && !ctx_aligned;
    let empty_name = s.fields.iter().any(|f| f.name.is_empty());
    let child_ctx = s.aligned;
    if !aligned_flag && !empty_name && is_packed(s) {
        out.push('[');
        for (i, f) in s.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push('(');
            write_field_name(f, out);
            out.push_str(", ");
            match &f.dtype {
                Dtype::SubArray { base, shape } => {
                    base.write_short(out, child_ctx);
                    out.push_str(", ");
                    write_shape(shape, out);
                }
                other => other.write_short(out, child_ctx),
            }
            out.push(')');
        }
        out.push(']');
        return;
    }
    out.push_str("{'names': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_py_str(&f.name, out);
    }
    out.push_str("], 'formats': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f.dtype.write_short(out, child_ctx);
    }
    out.push_str("], 'offsets': [");
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_fmt(out, format_args!("{}", f.offset));
    }
    if s.fields.iter().any(|f| f.title.is_some()) {
        out.push_str("], 'titles': [");
        for (i, f) in s.fields.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            match &f.title {
                Some(t) => write_py_str(t, out),
                None => out.push_str("None"),
            }
        }
    }
    push_fmt(out, format_args!("], 'itemsize': {}", s.itemsize));
    if aligned_flag {
        out.push_str(", 'aligned': True");
    }
    out.push('}');
}

/// Code points Python's `str.isprintable()` rejects, other than unassigned ones (whose set
/// depends on Python's Unicode version): categories Cc, Cf, Cs, Co, Zs (except the space), Zl
/// and Zp, plus the permanently unassigned noncharacters (Python 3.11, Unicode 14).
#[rustfmt::skip]
const NON_PRINTABLE: &[(u32, u32)] = &[
    (0x0, 0x1F), (0x7F, 0xA0), (0xAD, 0xAD), (0x600, 0x605), (0x61C, 0x61C), (0x6DD, 0x6DD),
    (0x70F, 0x70F), (0x890, 0x891), (0x8E2, 0x8E2), (0x1680, 0x1680), (0x180E, 0x180E),
    (0x2000, 0x200F), (0x2028, 0x202F), (0x205F, 0x2064), (0x2066, 0x206F), (0x3000, 0x3000),
    (0xD800, 0xF8FF), (0xFDD0, 0xFDEF), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xFFFE, 0xFFFF),
    (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x13438), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0x1FFFE, 0x1FFFF), (0x2FFFE, 0x2FFFF), (0x3FFFE, 0x3FFFF),
    (0x4FFFE, 0x4FFFF), (0x5FFFE, 0x5FFFF), (0x6FFFE, 0x6FFFF), (0x7FFFE, 0x7FFFF),
    (0x8FFFE, 0x8FFFF), (0x9FFFE, 0x9FFFF), (0xAFFFE, 0xAFFFF), (0xBFFFE, 0xBFFFF),
    (0xCFFFE, 0xCFFFF), (0xDFFFE, 0xDFFFF), (0xE0001, 0xE0001), (0xE0020, 0xE007F),
    (0xEFFFE, 0x10FFFF),
];

fn is_py_printable(c: char) -> bool {
    let c = c as u32;
    NON_PRINTABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_err()
}

/// Python's `repr()` of a `str`.
fn write_py_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c == ' ' || (c.is_ascii_graphic()) => out.push(c),
            c if is_py_printable(c) => out.push(c),
            c => {
                let v = c as u32;
                if v <= 0xFF {
                    push_fmt(out, format_args!("\\x{v:02x}"));
                } else if v <= 0xFFFF {
                    push_fmt(out, format_args!("\\u{v:04x}"));
                } else {
                    push_fmt(out, format_args!("\\U{v:08x}"));
                }
            }
        }
    }
    out.push(quote);
}

// ---------------------------------------------------------------------------------------------
// Parsing: entry point and type strings

fn parse_str(s: &str) -> R<Dtype> {
    if s.len() > MAX_DTYPE_STR_LEN {
        return Err(format!(
            "the dtype string is {} bytes long, more than the {MAX_DTYPE_STR_LEN} accepted",
            s.len()
        ));
    }
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0c']);
    let mut chars = t.chars();
    let first = chars.next();
    let second = chars.next();
    let literal = match first {
        Some('[' | '(' | '{' | '\'' | '"') => true,
        Some('u' | 'U' | 'r' | 'R' | 'b' | 'B') => matches!(second, Some('\'' | '"')),
        _ => false,
    };
    if literal {
        let lit = LitParser::parse_all(t)?;
        convert(&lit, false, 0)
    } else {
        parse_typestr(s)
    }
}

/// A NumPy type string: `<f8`, `|b1`, `?`, `u1`, `S5`, `S`, `<U3`, `V8`, `<M8[ns]`, ...
fn parse_typestr(s: &str) -> R<Dtype> {
    let (order, body) = match s.as_bytes().first() {
        Some(b'<') => (ByteOrder::Little, &s[1..]),
        Some(b'>') => (ByteOrder::Big, &s[1..]),
        Some(b'|' | b'=') => (ByteOrder::native(), &s[1..]),
        _ => (ByteOrder::native(), s),
    };
    let not_understood = || format!("data type {s:?} not understood");
    let mut chars = body.chars();
    let kind = chars
        .next()
        .ok_or_else(|| format!("empty type code in {s:?}"))?;
    if !kind.is_ascii() {
        return Err(not_understood());
    }
    let rest = &body[1..];
    match kind {
        '?' if rest.is_empty() => Ok(Dtype::Bool),
        'O' => Err(OBJECT_REASON.to_string()),
        'T' => Err(
            "variable-width string dtypes ('T', StringDType) hold pointers and cannot be read"
                .to_string(),
        ),
        'M' | 'm' => {
            let meta = rest.strip_prefix('8').ok_or_else(not_understood)?;
            let (unit, count) = if meta.is_empty() {
                (DatetimeUnit::Generic, 1)
            } else {
                parse_datetime_meta(meta)?
            };
            Ok(if kind == 'M' {
                Dtype::Datetime { unit, count, order }
            } else {
                Dtype::Timedelta { unit, count, order }
            })
        }
        'b' | 'i' | 'u' | 'f' | 'c' => {
            if rest.is_empty() {
                return Err(format!(
                    "type code {s:?} has no size (only sized codes such as 'i4' are accepted)"
                ));
            }
            let n = parse_size(rest).ok_or_else(not_understood)?;
            let ord = if n == 1 {
                ByteOrder::NotApplicable
            } else {
                order
            };
            match (kind, n) {
                ('b', 1) => Ok(Dtype::Bool),
                ('i', 1 | 2 | 4 | 8) => Ok(Dtype::Int {
                    size: n,
                    order: ord,
                }),
                ('u', 1 | 2 | 4 | 8) => Ok(Dtype::UInt {
                    size: n,
                    order: ord,
                }),
                ('f', 2 | 4 | 8 | 16) => Ok(Dtype::Float {
                    size: n,
                    order: ord,
                }),
                ('c', 8 | 16 | 32) => Ok(Dtype::Complex {
                    size: n,
                    order: ord,
                }),
                _ => Err(format!(
                    "data type {s:?} not understood (no such size for kind '{kind}')"
                )),
            }
        }
        'S' | 'a' | 'U' | 'V' => {
            let n = if rest.is_empty() {
                0
            } else {
                parse_size(rest).ok_or_else(|| {
                    format!("data type {s:?} not understood (size must be at most {MAX_ITEMSIZE})")
                })?
            };
            match kind {
                'S' | 'a' => Ok(Dtype::Bytes { len: n }),
                'V' => Ok(Dtype::Void { len: n }),
                _ => {
                    if n > MAX_ITEMSIZE / 4 {
                        return Err(format!(
                            "data type {s:?} not understood (itemsize 4 × {n} exceeds {MAX_ITEMSIZE})"
                        ));
                    }
                    Ok(Dtype::Unicode { chars: n, order })
                }
            }
        }
        _ => Err(not_understood()),
    }
}

/// Decimal digits only, at most [`MAX_ITEMSIZE`].
fn parse_size(digits: &str) -> Option<usize> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut n: usize = 0;
    for b in digits.bytes() {
        n = n.checked_mul(10)?.checked_add(usize::from(b - b'0'))?;
        if n > MAX_ITEMSIZE {
            return None;
        }
    }
    Some(n)
}

/// `[ns]`, `[10s]`, `[generic]`.
fn parse_datetime_meta(meta: &str) -> R<(DatetimeUnit, u32)> {
    let bad = || format!("invalid datetime metadata {meta:?}");
    let inner = meta
        .strip_prefix('[')
        .and_then(|m| m.strip_suffix(']'))
        .ok_or_else(bad)?;
    let split = inner
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(inner.len());
    let (digits, code) = inner.split_at(split);
    let unit = DatetimeUnit::from_code(code)
        .ok_or_else(|| format!("invalid datetime unit {code:?} in {meta:?}"))?;
    let count = if digits.is_empty() {
        1
    } else {
        let n = parse_size(digits).ok_or_else(bad)?;
        u32::try_from(n).map_err(|_| bad())?
    };
    // NumPy keeps a multiplier on generic units but never prints it; it means nothing.
    let count = if unit == DatetimeUnit::Generic {
        1
    } else {
        count
    };
    Ok((unit, count))
}

// ---------------------------------------------------------------------------------------------
// Parsing: Python literals (what `ast.literal_eval` accepts, restricted to what dtypes use)

#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Str(String),
    Int(i64),
    Bool(bool),
    None,
    Tuple(Vec<Lit>),
    List(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

impl Lit {
    fn describe(&self) -> String {
        match self {
            Lit::Str(s) => format!("the string {s:?}"),
            Lit::Int(n) => format!("the integer {n}"),
            Lit::Bool(b) => (if *b { "True" } else { "False" }).to_string(),
            Lit::None => "None".to_string(),
            Lit::Tuple(v) => format!("a tuple of {} items", v.len()),
            Lit::List(v) => format!("a list of {} items", v.len()),
            Lit::Dict(v) => format!("a dict of {} entries", v.len()),
        }
    }
}

struct LitParser<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> LitParser<'a> {
    fn parse_all(s: &'a str) -> R<Lit> {
        let mut p = LitParser {
            s,
            pos: 0,
            depth: 0,
        };
        p.skip_ws();
        let v = p.value()?;
        p.skip_ws();
        if p.pos != s.len() {
            return Err(format!(
                "unexpected text after the Python literal at byte {}",
                p.pos
            ));
        }
        Ok(v)
    }

    fn peek(&self) -> Option<char> {
        self.s[self.pos..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        let mut it = self.s[self.pos..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn skip_ws(&mut self) {
        while let Some(' ' | '\t' | '\n' | '\r' | '\x0c') = self.peek() {
            self.pos += 1;
        }
    }

    fn unexpected(&self) -> String {
        match self.peek() {
            Some(c) => format!(
                "unexpected character {c:?} at byte {} of the Python literal",
                self.pos
            ),
            None => "unexpected end of the Python literal".to_string(),
        }
    }

    fn value(&mut self) -> R<Lit> {
        self.depth += 1;
        if self.depth > MAX_LITERAL_DEPTH {
            return Err(format!(
                "the Python literal nests deeper than {MAX_LITERAL_DEPTH} levels"
            ));
        }
        let v = self.value_inner();
        self.depth -= 1;
        v
    }

    fn value_inner(&mut self) -> R<Lit> {
        match self.peek() {
            Some('[') => {
                self.pos += 1;
                let (items, _) = self.sequence(']')?;
                Ok(Lit::List(items))
            }
            Some('(') => {
                self.pos += 1;
                let (mut items, comma) = self.sequence(')')?;
                if items.len() == 1 && !comma {
                    Ok(items.pop().unwrap_or(Lit::None))
                } else if items.is_empty() && comma {
                    Err(self.unexpected())
                } else {
                    Ok(Lit::Tuple(items))
                }
            }
            Some('{') => {
                self.pos += 1;
                self.dict()
            }
            Some('\'' | '"') => self.strings(),
            Some('u' | 'U' | 'r' | 'R' | 'b' | 'B') if matches!(self.peek2(), Some('\'' | '"')) => {
                self.strings()
            }
            Some('-' | '+' | '0'..='9') => self.int(),
            Some(c) if c.is_alphabetic() || c == '_' => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    if c.is_alphanumeric() || c == '_' || c == '.' {
                        self.pos += c.len_utf8();
                    } else {
                        break;
                    }
                }
                match &self.s[start..self.pos] {
                    "True" => Ok(Lit::Bool(true)),
                    "False" => Ok(Lit::Bool(false)),
                    "None" => Ok(Lit::None),
                    name => Err(format!(
                        "the name {name:?} is not a Python literal (only strings, integers, \
                         True/False/None, tuples, lists and dicts are accepted)"
                    )),
                }
            }
            _ => Err(self.unexpected()),
        }
    }

    /// Items up to `close`, separated by commas; also whether any comma was seen.
    fn sequence(&mut self, close: char) -> R<(Vec<Lit>, bool)> {
        let mut items = Vec::new();
        let mut comma = false;
        self.skip_ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok((items, false));
        }
        loop {
            items.push(self.value()?);
            self.skip_ws();
            match self.bump() {
                Some(',') => {
                    comma = true;
                    self.skip_ws();
                    if self.peek() == Some(close) {
                        self.pos += 1;
                        return Ok((items, comma));
                    }
                }
                Some(c) if c == close => return Ok((items, comma)),
                Some(c) => {
                    return Err(format!(
                    "expected ',' or {close:?} but found {c:?} at byte {} of the Python literal",
                    self.pos - c.len_utf8()
                ))
                }
                None => return Err(format!("unclosed bracket: expected {close:?}")),
            }
        }
    }

    fn dict(&mut self) -> R<Lit> {
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek() == Some('}') {
            self.pos += 1;
            return Ok(Lit::Dict(entries));
        }
        loop {
            let k = self.value()?;
            self.skip_ws();
            if self.bump() != Some(':') {
                return Err("expected ':' after a dict key in the Python literal".to_string());
            }
            self.skip_ws();
            let v = self.value()?;
            entries.push((k, v));
            self.skip_ws();
            match self.bump() {
                Some(',') => {
                    self.skip_ws();
                    if self.peek() == Some('}') {
                        self.pos += 1;
                        return Ok(Lit::Dict(entries));
                    }
                }
                Some('}') => return Ok(Lit::Dict(entries)),
                _ => return Err("expected ',' or '}' in a dict of the Python literal".to_string()),
            }
        }
    }

    fn int(&mut self) -> R<Lit> {
        let negative = match self.peek() {
            Some('-') => {
                self.pos += 1;
                true
            }
            Some('+') => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let start = self.pos;
        while let Some('0'..='9') = self.peek() {
            self.pos += 1;
        }
        let digits = &self.s[start..self.pos];
        if digits.is_empty() {
            return Err(self.unexpected());
        }
        if let Some(c) = self.peek() {
            if c.is_alphanumeric() || c == '_' || c == '.' {
                return Err(format!(
                    "unsupported number literal at byte {start} (only decimal integers are accepted)"
                ));
            }
        }
        if digits.len() > 1 && digits.starts_with('0') && digits.bytes().any(|b| b != b'0') {
            return Err(format!(
                "leading zeros in the integer {digits:?} are not valid Python"
            ));
        }
        let mut n: i64 = 0;
        for b in digits.bytes() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(i64::from(b - b'0')))
                .ok_or_else(|| format!("the integer {digits} is too large"))?;
        }
        Ok(Lit::Int(if negative { -n } else { n }))
    }

    /// One string literal, or several adjacent ones (Python concatenates them).
    fn strings(&mut self) -> R<Lit> {
        let mut s = self.string()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            let next = self.peek();
            let starts = matches!(next, Some('\'' | '"'))
                || (matches!(next, Some('u' | 'U' | 'r' | 'R' | 'b' | 'B'))
                    && matches!(self.peek2(), Some('\'' | '"')));
            if !starts {
                self.pos = save;
                return Ok(Lit::Str(s));
            }
            s.push_str(&self.string()?);
        }
    }

    fn string(&mut self) -> R<String> {
        let mut raw = false;
        match self.peek() {
            Some('b' | 'B') => return Err("bytes literals are not valid in a dtype".to_string()),
            Some('r' | 'R') => {
                raw = true;
                self.pos += 1;
            }
            Some('u' | 'U') => self.pos += 1,
            _ => {}
        }
        let quote = self.bump().ok_or_else(|| self.unexpected())?;
        let mut out = String::new();
        loop {
            let c = self
                .bump()
                .ok_or_else(|| "unterminated string in the Python literal".to_string())?;
            match c {
                '\n' | '\r' => return Err("unterminated string in the Python literal".to_string()),
                c if c == quote => return Ok(out),
                '\\' if raw => {
                    out.push('\\');
                    match self.bump() {
                        Some('\n' | '\r') | None => {
                            return Err("unterminated string in the Python literal".to_string())
                        }
                        Some(c) => out.push(c),
                    }
                }
                '\\' => self.escape(&mut out)?,
                c => out.push(c),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> R<()> {
        let c = self
            .bump()
            .ok_or_else(|| "unterminated string in the Python literal".to_string())?;
        match c {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(c),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                out.push(char::from_u32(v).ok_or_else(|| "invalid octal escape".to_string())?);
            }
            'x' | 'u' | 'U' => {
                let n = match c {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    let d = self
                        .peek()
                        .and_then(|d| d.to_digit(16))
                        .ok_or_else(|| format!("truncated \\{c} escape in the Python literal"))?;
                    self.pos += 1;
                    v = v * 16 + d;
                }
                out.push(char::from_u32(v).ok_or_else(|| {
                    format!("the escape \\{c}{v:x} is not a Unicode scalar value")
                })?);
            }
            'N' => return Err("\\N{...} escapes are not supported".to_string()),
            other => {
                // Python keeps unknown escapes as they are.
                out.push('\\');
                out.push(other);
            }
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing: NumPy's dtype construction from a literal (`_convert_from_any` and friends)

fn convert(lit: &Lit, align: bool, depth: usize) -> R<Dtype> {
    if depth > MAX_NESTING_DEPTH {
        return Err(format!(
            "the dtype nests deeper than {MAX_NESTING_DEPTH} levels"
        ));
    }
    match lit {
        Lit::Str(s) => parse_typestr(s),
        Lit::Tuple(items) => {
            if items.len() != 2 {
                return Err(format!(
                    "a dtype tuple must have 2 items (base dtype, shape), not {}",
                    items.len()
                ));
            }
            let base = convert(&items[0], align, depth + 1)?;
            apply_shape(base, &items[1])
        }
        Lit::List(items) => convert_list(items, align, depth),
        Lit::Dict(entries) => convert_dict(entries, align, depth),
        other => Err(format!("{} is not a dtype", other.describe())),
    }
}

/// `(base, n)` / `(base, shape)`: a sized flexible type, or a subarray (`_convert_from_tuple`).
fn apply_shape(base: Dtype, spec: &Lit) -> R<Dtype> {
    let (dims, is_tuple): (Vec<i64>, bool) = match spec {
        Lit::Int(n) => {
            if base.is_unsized() {
                return sized_flexible(base, *n);
            }
            (vec![*n], false)
        }
        Lit::Tuple(v) | Lit::List(v) if v.iter().all(|x| matches!(x, Lit::Int(_))) => {
            if base.is_unsized() {
                return Err(
                    "invalid itemsize in generic type tuple: an unsized 'S', 'U' or 'V' \
                            takes an integer size, not a shape, and a zero-size subarray takes \
                            neither"
                        .to_string(),
                );
            }
            let dims = v
                .iter()
                .map(|x| if let Lit::Int(n) = x { *n } else { 0 })
                .collect();
            (dims, matches!(spec, Lit::Tuple(_)))
        }
        Lit::Bool(_) => return Err("invalid shape in fixed-type tuple".to_string()),
        other => {
            return Err(format!(
                "(base dtype, {}) tuples, which reinterpret a dtype, are not supported",
                other.describe()
            ))
        }
    };
    if dims.is_empty() {
        if is_tuple {
            return Ok(base); // NumPy: (base, ()) is base itself.
        }
        return Err("invalid shape in fixed-type tuple: empty list".to_string());
    }
    if dims.len() > MAX_SUBARRAY_DIMS {
        return Err(format!(
            "a subarray shape has {} dimensions, more than {MAX_SUBARRAY_DIMS}",
            dims.len()
        ));
    }
    let mut shape = Vec::with_capacity(dims.len());
    for &d in &dims {
        if d < 0 {
            return Err(format!("invalid subarray shape: dimension {d} is negative"));
        }
        let d = usize::try_from(d).map_err(|_| "invalid subarray shape".to_string())?;
        if d > MAX_ITEMSIZE {
            return Err(format!(
                "invalid subarray shape: dimension {d} exceeds {MAX_ITEMSIZE}"
            ));
        }
        shape.push(d);
    }
    if !shape.contains(&0) {
        let mut items: usize = 1;
        for &d in &shape {
            items = items.saturating_mul(d);
            if items > MAX_ITEMSIZE {
                return Err(format!(
                    "a subarray of shape {shape:?} has more than {MAX_ITEMSIZE} items"
                ));
            }
        }
        match items.checked_mul(base.itemsize()) {
            Some(n) if n <= MAX_ITEMSIZE => {}
            _ => {
                return Err(format!(
                    "a subarray of shape {shape:?} of {}-byte items exceeds {MAX_ITEMSIZE} bytes",
                    base.itemsize()
                ))
            }
        }
    }
    Ok(Dtype::SubArray {
        base: Box::new(base),
        shape,
    })
}

/// `('S', 5)`, `('U', 3)`, `('V', 7)`: NumPy's generic type with an itemsize.
fn sized_flexible(base: Dtype, n: i64) -> R<Dtype> {
    let too_big = || format!("invalid itemsize {n} in generic type tuple");
    let n = usize::try_from(n).map_err(|_| too_big())?;
    match base {
        Dtype::Bytes { .. } if n <= MAX_ITEMSIZE => Ok(Dtype::Bytes { len: n }),
        Dtype::Void { .. } if n <= MAX_ITEMSIZE => Ok(Dtype::Void { len: n }),
        Dtype::Unicode { order, .. } if n <= MAX_ITEMSIZE / 4 => {
            Ok(Dtype::Unicode { chars: n, order })
        }
        _ => Err(too_big()),
    }
}

fn round_up(x: usize, a: usize) -> R<usize> {
    let a = a.max(1);
    match x % a {
        0 => Ok(x),
        r => x
            .checked_add(a - r)
            .filter(|&v| v <= MAX_ITEMSIZE)
            .ok_or_else(|| format!("the struct itemsize exceeds {MAX_ITEMSIZE}")),
    }
}

fn round_up_saturating(x: usize, a: usize) -> usize {
    let a = a.max(1);
    match x % a {
        0 => x,
        r => x.saturating_add(a - r),
    }
}

fn add_size(a: usize, b: usize) -> R<usize> {
    a.checked_add(b)
        .filter(|&v| v <= MAX_ITEMSIZE)
        .ok_or_else(|| format!("the struct itemsize exceeds {MAX_ITEMSIZE}"))
}

/// Names and titles share one namespace and must all differ.
fn claim_names(used: &mut HashSet<String>, name: &str, title: Option<&str>) -> R<()> {
    if used.contains(name) {
        return Err(format!("field {name:?} occurs more than once"));
    }
    used.insert(name.to_string());
    if let Some(t) = title {
        if used.contains(t) {
            return Err(format!(
                "title {t:?} is already used as a field name or title"
            ));
        }
        used.insert(t.to_string());
    }
    Ok(())
}

/// `[('a', '<i4'), (('T', 'b'), 'u1', (2,)), ...]` (`_convert_from_array_descr`).
fn convert_list(items: &[Lit], align: bool, depth: usize) -> R<Dtype> {
    let mut fields = Vec::with_capacity(items.len());
    let mut used = HashSet::new();
    let mut total = 0usize;
    let mut max_align = 1usize;
    for (i, item) in items.iter().enumerate() {
        let parts = match item {
            Lit::Tuple(t) if (2..=3).contains(&t.len()) => t,
            other => {
                return Err(format!(
                    "struct fields must be 2- or 3-tuples (name, dtype[, shape]), found {}",
                    other.describe()
                ))
            }
        };
        let (title, mut name) = match &parts[0] {
            Lit::Str(n) => (None, n.clone()),
            Lit::Tuple(p) if p.len() == 2 => {
                let title = match &p[0] {
                    Lit::Str(t) => t.clone(),
                    other => {
                        return Err(format!(
                            "field titles must be strings (found {}): non-string titles are not supported",
                            other.describe()
                        ))
                    }
                };
                match &p[1] {
                    Lit::Str(n) => (Some(title), n.clone()),
                    other => {
                        return Err(format!(
                            "field names must be strings, found {}",
                            other.describe()
                        ))
                    }
                }
            }
            other => {
                return Err(format!(
                    "a field's first item must be a name or a (title, name) pair, found {}",
                    other.describe()
                ))
            }
        };
        if name.is_empty() {
            match &title {
                None => name = format!("f{i}"),
                Some(t) if !t.is_empty() => name = t.clone(),
                Some(_) => return Err("field titles must be non-empty strings".to_string()),
            }
        }
        let dtype = if parts.len() == 2 {
            convert(&parts[1], align, depth + 1)?
        } else {
            let base = convert(&parts[1], align, depth + 1)?;
            apply_shape(base, &parts[2])?
        };
        claim_names(&mut used, &name, title.as_deref())?;
        if align {
            let a = dtype.alignment();
            max_align = max_align.max(a);
            total = round_up(total, a)?;
        }
        let offset = total;
        total = add_size(total, dtype.itemsize())?;
        fields.push(Field {
            name,
            title,
            offset,
            dtype,
        });
    }
    if align {
        total = round_up(total, max_align)?;
    }
    Ok(Dtype::Struct(StructDtype {
        fields,
        itemsize: total,
        aligned: align,
    }))
}

fn as_seq<'l>(v: &'l Lit, key: &str) -> R<&'l [Lit]> {
    match v {
        Lit::List(x) | Lit::Tuple(x) => Ok(x),
        other => Err(format!(
            "the dict entry {key:?} must be a list, found {}",
            other.describe()
        )),
    }
}

fn as_int(v: &Lit, what: &str) -> R<i64> {
    match v {
        Lit::Int(n) => Ok(*n),
        other => Err(format!(
            "{what} must be an integer, found {}",
            other.describe()
        )),
    }
}

/// `{'names': [...], 'formats': [...], 'offsets': [...], 'titles': [...], 'itemsize': n,
/// 'aligned': True}` (`_convert_from_dict`).
fn convert_dict(entries: &[(Lit, Lit)], align: bool, depth: usize) -> R<Dtype> {
    // Python dicts keep the last value of a repeated key; NumPy ignores unknown keys.
    let get = |key: &str| {
        entries
            .iter()
            .rev()
            .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
            .map(|(_, v)| v)
    };
    if let Some((k, _)) = entries.iter().find(|(k, _)| !matches!(k, Lit::Str(_))) {
        return Err(format!(
            "dtype dict keys must be strings, found {}",
            k.describe()
        ));
    }
    let (names, formats) = match (get("names"), get("formats")) {
        (Some(n), Some(f)) => (as_seq(n, "names")?, as_seq(f, "formats")?),
        _ => {
            return Err(
                "a dict dtype needs 'names' and 'formats' (the {name: (dtype, offset)} \
                        form is not supported)"
                    .to_string(),
            )
        }
    };
    let offsets = get("offsets").map(|v| as_seq(v, "offsets")).transpose()?;
    let titles = get("titles").map(|v| as_seq(v, "titles")).transpose()?;
    let n = names.len();
    if formats.len() < n
        || offsets.is_some_and(|o| o.len() < n)
        || titles.is_some_and(|t| t.len() < n)
    {
        return Err(
            "'names', 'formats', 'offsets' and 'titles' must have the same length".to_string(),
        );
    }
    let mut align = align;
    match get("aligned") {
        None | Some(Lit::Bool(false)) => {}
        Some(Lit::Bool(true)) => align = true,
        Some(other) => {
            return Err(format!(
                "'aligned' must be True or False, found {}",
                other.describe()
            ))
        }
    }
    let mut fields = Vec::with_capacity(n);
    let mut used = HashSet::new();
    let mut total = 0usize;
    let mut max_align = 1usize;
    for i in 0..n {
        let title = match titles.map(|t| &t[i]) {
            None | Some(Lit::None) => None,
            Some(Lit::Str(t)) => Some(t.clone()),
            Some(other) => {
                return Err(format!(
                    "field titles must be strings or None (found {}): non-string titles are not supported",
                    other.describe()
                ))
            }
        };
        let dtype = convert(&formats[i], align, depth + 1)?;
        let a = dtype.alignment();
        if align {
            max_align = max_align.max(a);
        }
        let size = dtype.itemsize();
        let offset = match offsets {
            Some(offs) => {
                let off = as_int(&offs[i], "a field offset")?;
                if off < 0 {
                    return Err(format!("offset {off} cannot be negative"));
                }
                let off = usize::try_from(off)
                    .ok()
                    .filter(|&o| o <= MAX_ITEMSIZE)
                    .ok_or_else(|| format!("offset {off} exceeds {MAX_ITEMSIZE}"))?;
                if align && off % a != 0 {
                    return Err(format!(
                        "offset {off} is not divisible by the field alignment {a} with align=True"
                    ));
                }
                let end = add_size(off, size).map_err(|_| {
                    format!("a field at offset {off} of {size} bytes ends past {MAX_ITEMSIZE}")
                })?;
                total = total.max(end);
                off
            }
            None => {
                if align {
                    total = round_up(total, a)?;
                }
                let off = total;
                total = add_size(total, size)?;
                off
            }
        };
        let name = match &names[i] {
            Lit::Str(s) => s.clone(),
            other => {
                return Err(format!(
                    "field names must be strings, found {}",
                    other.describe()
                ))
            }
        };
        claim_names(&mut used, &name, title.as_deref())?;
        fields.push(Field {
            name,
            title,
            offset,
            dtype,
        });
    }
    if align {
        total = round_up(total, max_align)?;
    }
    if let Some(v) = get("itemsize") {
        let requested = as_int(v, "'itemsize'")?;
        let isz = usize::try_from(requested).map_err(|_| {
            format!("the fields need {total} bytes, more than the itemsize {requested}")
        })?;
        if isz < total {
            return Err(format!(
                "the fields need {total} bytes, more than the itemsize {isz}"
            ));
        }
        if isz > MAX_ITEMSIZE {
            return Err(format!("itemsize {isz} exceeds {MAX_ITEMSIZE}"));
        }
        if align && isz % max_align != 0 {
            return Err(format!(
                "an aligned struct needs an itemsize divisible by its alignment {max_align}, not {isz}"
            ));
        }
        total = isz;
    }
    Ok(Dtype::Struct(StructDtype {
        fields,
        itemsize: total,
        aligned: align,
    }))
}

#[cfg(test)]
mod tests {
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
}
