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

pub use crate::error::DtypeError;

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
pub(super) const MAX_LITERAL_DEPTH: usize = 128;

/// How much of an offending dtype string a [`DtypeError`] keeps.
pub(super) const ERROR_SNIPPET_CHARS: usize = 200;

pub(super) const OBJECT_REASON: &str =
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

impl DtypeError {
    fn new(dtype: &str, reason: String) -> DtypeError {
        let dtype = match dtype.char_indices().nth(ERROR_SNIPPET_CHARS) {
            Some((cut, _)) => format!("{}…", &dtype[..cut]),
            None => dtype.to_string(),
        };
        DtypeError { dtype, reason }
    }
}

pub(super) type R<T> = Result<T, String>;

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

mod build;
mod literal;
mod print;
mod typestr;

#[allow(unused_imports)]
use build::*;
#[allow(unused_imports)]
use literal::*;
#[allow(unused_imports)]
use print::*;
#[allow(unused_imports)]
use typestr::*;

#[cfg(test)]
mod tests;
