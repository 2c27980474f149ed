//! The values an evaluation holds: NumPy's kinds and their promotion, result columns
//! ([`Column`]) and the widened arrays and scalars evaluated over ([`Wide`], [`Val`]).

#![forbid(unsafe_code)]

use super::*;

/// One operand or result column: NumPy's numeric, bool and string types.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// `bool`
    Bool(Vec<bool>),
    /// `int8`
    I8(Vec<i8>),
    /// `int16`
    I16(Vec<i16>),
    /// `int32`
    I32(Vec<i32>),
    /// `int64`
    I64(Vec<i64>),
    /// `uint8`
    U8(Vec<u8>),
    /// `uint16`
    U16(Vec<u16>),
    /// `uint32`
    U32(Vec<u32>),
    /// `uint64`
    U64(Vec<u64>),
    /// `float16`, as IEEE half-precision bits.
    F16(Vec<u16>),
    /// `float32`
    F32(Vec<f32>),
    /// `float64`
    F64(Vec<f64>),
    /// NumPy `U` or `S` strings (trailing NULs removed).
    Str(Vec<String>),
}

/// NumPy's numeric kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    F32,
    F64,
}

impl Kind {
    pub(crate) fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::F32 | Kind::F64)
    }
    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Kind::I8 | Kind::I16 | Kind::I32 | Kind::I64)
    }
    pub(crate) fn is_unsigned(self) -> bool {
        matches!(self, Kind::U8 | Kind::U16 | Kind::U32 | Kind::U64)
    }
    pub(crate) fn bits(self) -> u32 {
        match self {
            Kind::Bool | Kind::I8 | Kind::U8 => 8,
            Kind::I16 | Kind::U16 | Kind::F16 => 16,
            Kind::I32 | Kind::U32 | Kind::F32 => 32,
            Kind::I64 | Kind::U64 | Kind::F64 => 64,
        }
    }
    pub(crate) fn signed(bits: u32) -> Kind {
        match bits {
            8 => Kind::I8,
            16 => Kind::I16,
            32 => Kind::I32,
            _ => Kind::I64,
        }
    }
    pub(crate) fn unsigned(bits: u32) -> Kind {
        match bits {
            8 => Kind::U8,
            16 => Kind::U16,
            32 => Kind::U32,
            _ => Kind::U64,
        }
    }
    pub(crate) fn float(bits: u32) -> Kind {
        match bits {
            16 => Kind::F16,
            32 => Kind::F32,
            _ => Kind::F64,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Bool => "bool",
            Kind::I8 => "int8",
            Kind::I16 => "int16",
            Kind::I32 => "int32",
            Kind::I64 => "int64",
            Kind::U8 => "uint8",
            Kind::U16 => "uint16",
            Kind::U32 => "uint32",
            Kind::U64 => "uint64",
            Kind::F16 => "float16",
            Kind::F32 => "float32",
            Kind::F64 => "float64",
        }
    }
    pub(crate) fn from_name(s: &str) -> Option<Kind> {
        Some(match s {
            "bool" | "b1" | "|b1" => Kind::Bool,
            "int8" | "i1" | "|i1" => Kind::I8,
            "int16" | "i2" | "<i2" => Kind::I16,
            "int32" | "i4" | "<i4" => Kind::I32,
            "int64" | "i8" | "<i8" => Kind::I64,
            "uint8" | "u1" | "|u1" => Kind::U8,
            "uint16" | "u2" | "<u2" => Kind::U16,
            "uint32" | "u4" | "<u4" => Kind::U32,
            "uint64" | "u8" | "<u8" => Kind::U64,
            "float16" | "f2" | "<f2" => Kind::F16,
            "float32" | "f4" | "<f4" => Kind::F32,
            "float64" | "f8" | "<f8" => Kind::F64,
            _ => return None,
        })
    }
}

/// NumPy's promotion of two array dtypes (`np.result_type`).
pub(crate) fn promote(a: Kind, b: Kind) -> Kind {
    use Kind::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (Bool, x) | (x, Bool) => x,
        (x, y) if x.is_float() && y.is_float() => Kind::float(x.bits().max(y.bits())),
        (f, i) | (i, f) if f.is_float() => {
            // The smallest float holding every integer of the int type exactly enough:
            // 8-bit ints fit float16, 16-bit float32, wider float64.
            let need = match i.bits() {
                8 => 16,
                16 => 32,
                _ => 64,
            };
            Kind::float(f.bits().max(need))
        }
        (x, y) if x.is_signed() == y.is_signed() => {
            if x.is_signed() {
                Kind::signed(x.bits().max(y.bits()))
            } else {
                Kind::unsigned(x.bits().max(y.bits()))
            }
        }
        (s, u) | (u, s) if s.is_signed() => {
            if s.bits() > u.bits() {
                s
            } else if u.bits() < 64 {
                Kind::signed(u.bits() * 2)
            } else {
                F64
            }
        }
        _ => F64,
    }
}

/// The float type NumPy's float loops pick for an input of kind `k`.
pub(crate) fn float_of(k: Kind) -> Kind {
    match k {
        Kind::Bool | Kind::I8 | Kind::U8 => Kind::F16,
        Kind::I16 | Kind::U16 => Kind::F32,
        k if k.is_float() => k,
        _ => Kind::F64,
    }
}

/// Items held widened: integers as `i64` / `u64`, floats as `f64` (holding exactly a value
/// of their kind).
#[derive(Debug, Clone)]
pub(crate) enum Wide {
    Bool(Vec<bool>),
    Int(Kind, Vec<i64>),
    UInt(Kind, Vec<u64>),
    Float(Kind, Vec<f64>),
    Str(Vec<String>),
}

/// A value while evaluating: an array, or a Python scalar (weak, NEP 50).
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Arr(Wide),
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
}

pub(crate) type R<T> = Result<T, String>;

pub(crate) fn wrap_i(k: Kind, v: i64) -> i64 {
    match k {
        Kind::I8 => v as i8 as i64,
        Kind::I16 => v as i16 as i64,
        Kind::I32 => v as i32 as i64,
        _ => v,
    }
}

pub(crate) fn wrap_u(k: Kind, v: u64) -> u64 {
    match k {
        Kind::U8 => v as u8 as u64,
        Kind::U16 => v as u16 as u64,
        Kind::U32 => v as u32 as u64,
        _ => v,
    }
}

/// `v` rounded to float kind `k` (float16 through float32, as NumPy's half loops do).
pub(crate) fn round_f(k: Kind, v: f64) -> f64 {
    match k {
        Kind::F32 => v as f32 as f64,
        Kind::F16 => f64::from(f16_to_f32(f32_to_f16(v as f32))),
        _ => v,
    }
}

/// IEEE binary16 bits of `x`, rounded to nearest even (NumPy's `npy_float_to_half`).
pub(crate) fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign
            | 0x7c00
            | if man != 0 {
                0x200 | (man >> 13) as u16
            } else {
                0
            };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let up = rem > mid || (rem == mid && half & 1 == 1);
        return sign | (half + u32::from(up)) as u16;
    }
    let half = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1fff;
    let up = rem > 0x1000 || (rem == 0x1000 && half & 1 == 1);
    // A carry out of the mantissa rounds up into the exponent (and to infinity): right.
    sign | (half + u32::from(up)) as u16
}

pub(crate) fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from((h >> 10) & 0x1f);
    let man = u32::from(h & 0x3ff);
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalise.
            let mut e = 127 - 15 + 1;
            let mut m = m;
            while m & 0x400 == 0 {
                m <<= 1;
                e -= 1;
            }
            sign | (e << 23) | ((m & 0x3ff) << 13)
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 127 - 15) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

impl Column {
    /// Number of items.
    pub fn len(&self) -> usize {
        match self {
            Column::Bool(v) => v.len(),
            Column::I8(v) => v.len(),
            Column::I16(v) => v.len(),
            Column::I32(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::U8(v) => v.len(),
            Column::U16(v) => v.len(),
            Column::U32(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::F16(v) => v.len(),
            Column::F32(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Str(v) => v.len(),
        }
    }

    /// Whether the column has no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// NumPy's name of the column's type (`int8`, `float64`, `bool`, ...; `str` for strings).
    pub fn type_name(&self) -> &'static str {
        match self.wide_kind() {
            Some(k) => k.name(),
            None => "str",
        }
    }

    pub(crate) fn wide_kind(&self) -> Option<Kind> {
        Some(match self {
            Column::Bool(_) => Kind::Bool,
            Column::I8(_) => Kind::I8,
            Column::I16(_) => Kind::I16,
            Column::I32(_) => Kind::I32,
            Column::I64(_) => Kind::I64,
            Column::U8(_) => Kind::U8,
            Column::U16(_) => Kind::U16,
            Column::U32(_) => Kind::U32,
            Column::U64(_) => Kind::U64,
            Column::F16(_) => Kind::F16,
            Column::F32(_) => Kind::F32,
            Column::F64(_) => Kind::F64,
            Column::Str(_) => return None,
        })
    }

    /// Items of NumPy type `dtype` (`"<i4"`, `"|b1"`, `"<f8"`, ...: little-endian or
    /// one-byte numbers and bools) from their bytes.
    pub fn from_le_bytes(dtype: &str, bytes: &[u8]) -> Result<Column, String> {
        let k = Kind::from_name(dtype).ok_or_else(|| format!("a {dtype} operand"))?;
        let n = usize::try_from(k.bits() / 8).unwrap_or(1);
        if !bytes.len().is_multiple_of(n) {
            return Err(format!("{} bytes of {dtype} items", bytes.len()));
        }
        macro_rules! le {
            ($t:ty, $v:ident) => {
                Column::$v(
                    bytes
                        .chunks_exact(n)
                        .map(|b| <$t>::from_le_bytes(b.try_into().expect("item size")))
                        .collect(),
                )
            };
        }
        Ok(match k {
            Kind::Bool => Column::Bool(bytes.iter().map(|&b| b != 0).collect()),
            Kind::I8 => le!(i8, I8),
            Kind::I16 => le!(i16, I16),
            Kind::I32 => le!(i32, I32),
            Kind::I64 => le!(i64, I64),
            Kind::U8 => le!(u8, U8),
            Kind::U16 => le!(u16, U16),
            Kind::U32 => le!(u32, U32),
            Kind::U64 => le!(u64, U64),
            Kind::F16 => le!(u16, F16),
            Kind::F32 => le!(f32, F32),
            Kind::F64 => le!(f64, F64),
        })
    }

    /// The items as little-endian bytes (bools as 0 / 1); strings have none.
    pub fn to_le_bytes(&self) -> Result<Vec<u8>, String> {
        macro_rules! le {
            ($v:expr) => {
                $v.iter().flat_map(|x| x.to_le_bytes()).collect()
            };
        }
        Ok(match self {
            Column::Bool(v) => v.iter().map(|&b| u8::from(b)).collect(),
            Column::I8(v) => le!(v),
            Column::I16(v) => le!(v),
            Column::I32(v) => le!(v),
            Column::I64(v) => le!(v),
            Column::U8(v) => v.clone(),
            Column::U16(v) => le!(v),
            Column::U32(v) => le!(v),
            Column::U64(v) => le!(v),
            Column::F16(v) => le!(v),
            Column::F32(v) => le!(v),
            Column::F64(v) => le!(v),
            Column::Str(_) => return Err("string results have no fixed-width bytes".into()),
        })
    }

    /// The column as NumPy's `astype(name)` gives it (`name`: `int8` ... `float64`, `bool`,
    /// or their codes `i1`, `<f8`, ...): floats to integers truncate toward zero (NaN to 0),
    /// integers wrap, numbers to bool test for non-zero.
    pub fn astype(self, name: &str) -> Result<Column, String> {
        let k = Kind::from_name(name).ok_or_else(|| format!("a result of type {name:?}"))?;
        Ok(from_wide(cast(&widen(self), k)?))
    }
}

pub(crate) fn widen(c: Column) -> Wide {
    match c {
        Column::Bool(v) => Wide::Bool(v),
        Column::I8(v) => Wide::Int(Kind::I8, v.into_iter().map(i64::from).collect()),
        Column::I16(v) => Wide::Int(Kind::I16, v.into_iter().map(i64::from).collect()),
        Column::I32(v) => Wide::Int(Kind::I32, v.into_iter().map(i64::from).collect()),
        Column::I64(v) => Wide::Int(Kind::I64, v),
        Column::U8(v) => Wide::UInt(Kind::U8, v.into_iter().map(u64::from).collect()),
        Column::U16(v) => Wide::UInt(Kind::U16, v.into_iter().map(u64::from).collect()),
        Column::U32(v) => Wide::UInt(Kind::U32, v.into_iter().map(u64::from).collect()),
        Column::U64(v) => Wide::UInt(Kind::U64, v),
        Column::F16(v) => Wide::Float(
            Kind::F16,
            v.into_iter().map(|h| f64::from(f16_to_f32(h))).collect(),
        ),
        Column::F32(v) => Wide::Float(Kind::F32, v.into_iter().map(f64::from).collect()),
        Column::F64(v) => Wide::Float(Kind::F64, v),
        Column::Str(v) => Wide::Str(v),
    }
}

pub(crate) fn from_wide(w: Wide) -> Column {
    match w {
        Wide::Bool(v) => Column::Bool(v),
        Wide::Int(k, v) => match k {
            Kind::I8 => Column::I8(v.into_iter().map(|x| x as i8).collect()),
            Kind::I16 => Column::I16(v.into_iter().map(|x| x as i16).collect()),
            Kind::I32 => Column::I32(v.into_iter().map(|x| x as i32).collect()),
            _ => Column::I64(v),
        },
        Wide::UInt(k, v) => match k {
            Kind::U8 => Column::U8(v.into_iter().map(|x| x as u8).collect()),
            Kind::U16 => Column::U16(v.into_iter().map(|x| x as u16).collect()),
            Kind::U32 => Column::U32(v.into_iter().map(|x| x as u32).collect()),
            _ => Column::U64(v),
        },
        Wide::Float(k, v) => match k {
            Kind::F16 => Column::F16(v.into_iter().map(|x| f32_to_f16(x as f32)).collect()),
            Kind::F32 => Column::F32(v.into_iter().map(|x| x as f32).collect()),
            _ => Column::F64(v),
        },
        Wide::Str(v) => Column::Str(v),
    }
}

impl Wide {
    /// The first item alone (an item of the same kind when there is none).
    pub(crate) fn head(&self) -> Wide {
        fn first<T: Clone + Default>(v: &[T]) -> Vec<T> {
            vec![v.first().cloned().unwrap_or_default()]
        }
        match self {
            Wide::Bool(v) => Wide::Bool(first(v)),
            Wide::Int(k, v) => Wide::Int(*k, first(v)),
            Wide::UInt(k, v) => Wide::UInt(*k, first(v)),
            Wide::Float(k, v) => Wide::Float(*k, first(v)),
            Wide::Str(v) => Wide::Str(first(v)),
        }
    }

    pub(crate) fn kind(&self) -> Option<Kind> {
        match self {
            Wide::Bool(_) => Some(Kind::Bool),
            Wide::Int(k, _) | Wide::UInt(k, _) | Wide::Float(k, _) => Some(*k),
            Wide::Str(_) => None,
        }
    }
}
