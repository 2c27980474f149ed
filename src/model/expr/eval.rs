//! Element-wise evaluation of an [`Expr`] with NumPy 2's dtypes and promotion.
//!
//! Values are held widened while evaluating ([`Wide`]: `i64`, `u64` or `f64` items with the
//! NumPy type they stand for) and brought back to their type after every operation
//! (integers wrapped, floats rounded), so each step has NumPy's result.

#![forbid(unsafe_code)]

use super::{BinOp, Expr, UnOp};
use crate::ffi::libm;

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
enum Kind {
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
    fn is_float(self) -> bool {
        matches!(self, Kind::F16 | Kind::F32 | Kind::F64)
    }
    fn is_signed(self) -> bool {
        matches!(self, Kind::I8 | Kind::I16 | Kind::I32 | Kind::I64)
    }
    fn is_unsigned(self) -> bool {
        matches!(self, Kind::U8 | Kind::U16 | Kind::U32 | Kind::U64)
    }
    fn bits(self) -> u32 {
        match self {
            Kind::Bool | Kind::I8 | Kind::U8 => 8,
            Kind::I16 | Kind::U16 | Kind::F16 => 16,
            Kind::I32 | Kind::U32 | Kind::F32 => 32,
            Kind::I64 | Kind::U64 | Kind::F64 => 64,
        }
    }
    fn signed(bits: u32) -> Kind {
        match bits {
            8 => Kind::I8,
            16 => Kind::I16,
            32 => Kind::I32,
            _ => Kind::I64,
        }
    }
    fn unsigned(bits: u32) -> Kind {
        match bits {
            8 => Kind::U8,
            16 => Kind::U16,
            32 => Kind::U32,
            _ => Kind::U64,
        }
    }
    fn float(bits: u32) -> Kind {
        match bits {
            16 => Kind::F16,
            32 => Kind::F32,
            _ => Kind::F64,
        }
    }
    fn name(self) -> &'static str {
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
    fn from_name(s: &str) -> Option<Kind> {
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
fn promote(a: Kind, b: Kind) -> Kind {
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

/// Whose rules an evaluation follows: python-blosc2 hands an expression to numexpr, and
/// to NumPy only when numexpr refuses it (unicode strings, float16, a function numexpr
/// lacks). The two differ in the types of intermediate results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// numexpr: operands widened to its kinds (bool, int32, int64, float32, float64),
    /// integer constants int32 (int64 beyond), float constants float64, an operation's
    /// kind the larger of its operands' (`int64 + float32` is float32), float functions of
    /// integers float64.
    NumExpr,
    /// NumPy 2: its promotion table, Python scalars weak.
    NumPy,
}

/// The functions numexpr 2.14 evaluates itself (`numexpr.expressions.functions`).
const NUMEXPR_FUNCTIONS: &[&str] = &[
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "ceil",
    "contains", "copysign", "cos", "cosh", "exp", "expm1", "floor", "hypot", "isfinite", "isinf",
    "isnan", "log", "log10", "log1p", "log2", "maximum", "minimum", "sign", "signbit", "sin",
    "sinh", "sqrt", "tan", "tanh", "trunc", "where",
];

/// numexpr's kind for an operand of kind `k`; `None` where numexpr refuses the type.
fn numexpr_kind(k: Kind) -> Option<Kind> {
    Some(match k {
        Kind::Bool => Kind::Bool,
        Kind::I8 | Kind::I16 | Kind::I32 | Kind::U8 | Kind::U16 => Kind::I32,
        Kind::U32 | Kind::I64 | Kind::U64 => Kind::I64,
        Kind::F32 => Kind::F32,
        Kind::F64 => Kind::F64,
        Kind::F16 => return None,
    })
}

/// numexpr's order of kinds: an operation computes in the larger of its operands'.
fn numexpr_rank(k: Kind) -> u8 {
    match k {
        Kind::Bool => 0,
        Kind::I32 => 1,
        Kind::I64 => 2,
        Kind::F32 => 3,
        _ => 4,
    }
}

/// Which rules evaluate `e` over `ops`, as python-blosc2 picks them.
fn mode_of(e: &Expr, ops: &[Column]) -> Mode {
    mode_of_kinds(e, ops.iter().map(Column::wide_kind))
}

/// Whether python-blosc2 hands `e` over operands of these types (NumPy type names) to
/// numexpr, whose integer intermediates are never narrower than int32.
pub(super) fn numexpr_evaluates(e: &Expr, types: &[&str]) -> bool {
    let kinds = types.iter().map(|t| Kind::from_name(t));
    mode_of_kinds(e, kinds) == Mode::NumExpr
}

/// Which rules evaluate `e` over operands of `kinds` (`None`: strings).
fn mode_of_kinds(e: &Expr, kinds: impl IntoIterator<Item = Option<Kind>>) -> Mode {
    fn constant(e: &Expr) -> bool {
        matches!(e, Expr::Int(_) | Expr::Float(_) | Expr::Bool(_))
    }
    /// Whether numexpr's result of `e` is bool.
    fn is_bool(e: &Expr, kinds: &[Option<Kind>]) -> bool {
        use BinOp::*;
        match e {
            Expr::Operand(i) => matches!(kinds.get(*i), Some(Some(Kind::Bool))),
            Expr::Bool(_) => true,
            Expr::Binary(Lt | Le | Gt | Ge | Eq | Ne, ..) => true,
            Expr::Binary(And | Or | Xor | Add | Mul, a, b) => {
                is_bool(a, kinds) && is_bool(b, kinds)
            }
            Expr::Unary(UnOp::Invert | UnOp::Pos, a) => is_bool(a, kinds),
            Expr::Call(f, args) => match f.as_str() {
                "where" => args.len() == 3 && is_bool(&args[1], kinds) && is_bool(&args[2], kinds),
                "isnan" | "isinf" | "isfinite" | "signbit" | "contains" => true,
                _ => false,
            },
            _ => false,
        }
    }
    fn numexpr_calls(e: &Expr, kinds: &[Option<Kind>]) -> bool {
        let all = |args: &[Expr]| args.iter().all(|a| numexpr_calls(a, kinds));
        match e {
            Expr::Call(f, args) => NUMEXPR_FUNCTIONS.contains(&f.as_str()) && all(args),
            // numexpr has no opcode for `-` of a bool (`neg_bb`).
            Expr::Unary(UnOp::Neg, a) if is_bool(a, kinds) => false,
            Expr::Unary(_, a) => numexpr_calls(a, kinds),
            // numexpr's nodes have no reflected `//`, `&`, `|`, `^`: Python raises on
            // `2 // x` and python-blosc2 falls back to NumPy.
            Expr::Binary(BinOp::FloorDiv | BinOp::And | BinOp::Or | BinOp::Xor, a, b)
                if constant(a) && !constant(b) =>
            {
                false
            }
            // Nor opcodes for these of two bools (`sub_bbb`, `floordiv_bbb`, ...).
            Expr::Binary(
                BinOp::Sub | BinOp::FloorDiv | BinOp::Mod | BinOp::Pow | BinOp::Shl | BinOp::Shr,
                a,
                b,
            ) if is_bool(a, kinds) && is_bool(b, kinds) => false,
            Expr::Binary(_, a, b) => numexpr_calls(a, kinds) && numexpr_calls(b, kinds),
            Expr::Str(_) => false,
            _ => true,
        }
    }
    let kinds: Vec<Option<Kind>> = kinds.into_iter().collect();
    let types = kinds.iter().all(|k| k.and_then(numexpr_kind).is_some());
    if types && numexpr_calls(e, &kinds) {
        Mode::NumExpr
    } else {
        Mode::NumPy
    }
}

/// The float type NumPy's float loops pick for an input of kind `k`.
fn float_of(k: Kind) -> Kind {
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
enum Wide {
    Bool(Vec<bool>),
    Int(Kind, Vec<i64>),
    UInt(Kind, Vec<u64>),
    Float(Kind, Vec<f64>),
    Str(Vec<String>),
}

/// A value while evaluating: an array, or a Python scalar (weak, NEP 50).
#[derive(Debug, Clone)]
enum Val {
    Arr(Wide),
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
}

type R<T> = Result<T, String>;

fn wrap_i(k: Kind, v: i64) -> i64 {
    match k {
        Kind::I8 => v as i8 as i64,
        Kind::I16 => v as i16 as i64,
        Kind::I32 => v as i32 as i64,
        _ => v,
    }
}

fn wrap_u(k: Kind, v: u64) -> u64 {
    match k {
        Kind::U8 => v as u8 as u64,
        Kind::U16 => v as u16 as u64,
        Kind::U32 => v as u32 as u64,
        _ => v,
    }
}

/// `v` rounded to float kind `k` (float16 through float32, as NumPy's half loops do).
fn round_f(k: Kind, v: f64) -> f64 {
    match k {
        Kind::F32 => v as f32 as f64,
        Kind::F16 => f64::from(f16_to_f32(f32_to_f16(v as f32))),
        _ => v,
    }
}

/// IEEE binary16 bits of `x`, rounded to nearest even (NumPy's `npy_float_to_half`).
fn f32_to_f16(x: f32) -> u16 {
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

fn f16_to_f32(h: u16) -> f32 {
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

    fn wide_kind(&self) -> Option<Kind> {
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

fn widen(c: Column) -> Wide {
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

fn from_wide(w: Wide) -> Column {
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
    fn head(&self) -> Wide {
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

    fn kind(&self) -> Option<Kind> {
        match self {
            Wide::Bool(_) => Some(Kind::Bool),
            Wide::Int(k, _) | Wide::UInt(k, _) | Wide::Float(k, _) => Some(*k),
            Wide::Str(_) => None,
        }
    }
}

/// An array or weak scalar as items of kind `k`, `len` of them.
fn items_f(v: &Val, k: Kind, len: usize) -> R<Vec<f64>> {
    Ok(match v {
        Val::Arr(w) => match cast(w, k)? {
            Wide::Float(_, x) => x,
            _ => unreachable!("cast to a float kind gives floats"),
        },
        Val::Int(i) => vec![round_f(k, *i as f64); len],
        Val::Float(f) => vec![round_f(k, *f); len],
        Val::Bool(b) => vec![f64::from(u8::from(*b)); len],
        Val::Str(_) => return Err("a string in arithmetic".into()),
    })
}

fn items_i(v: &Val, k: Kind, len: usize) -> R<Vec<i64>> {
    in_bounds(v, k)?;
    Ok(match v {
        Val::Arr(w) => match cast(w, k)? {
            Wide::Int(_, x) => x,
            _ => unreachable!("cast to a signed kind gives signed integers"),
        },
        Val::Int(i) => vec![wrap_i(k, *i as i64); len],
        Val::Bool(b) => vec![i64::from(*b); len],
        Val::Float(_) => return Err("a float scalar in integer arithmetic".into()),
        Val::Str(_) => return Err("a string in arithmetic".into()),
    })
}

fn items_u(v: &Val, k: Kind, len: usize) -> R<Vec<u64>> {
    in_bounds(v, k)?;
    Ok(match v {
        Val::Arr(w) => match cast(w, k)? {
            Wide::UInt(_, x) => x,
            _ => unreachable!("cast to an unsigned kind gives unsigned integers"),
        },
        Val::Int(i) => vec![wrap_u(k, *i as u64); len],
        Val::Bool(b) => vec![u64::from(*b); len],
        Val::Float(_) => return Err("a float scalar in integer arithmetic".into()),
        Val::Str(_) => return Err("a string in arithmetic".into()),
    })
}

/// NumPy 2 refuses a Python int its array's integer type cannot hold (NEP 50:
/// `int8_array + 300` raises). Only weak scalars reach here: numexpr's constants are typed.
fn in_bounds(v: &Val, k: Kind) -> R<()> {
    let Val::Int(i) = v else { return Ok(()) };
    let (lo, hi): (i128, i128) = match k {
        Kind::I8 => (i8::MIN.into(), i8::MAX.into()),
        Kind::I16 => (i16::MIN.into(), i16::MAX.into()),
        Kind::I32 => (i32::MIN.into(), i32::MAX.into()),
        Kind::I64 => (i64::MIN.into(), i64::MAX.into()),
        Kind::U8 => (0, u8::MAX.into()),
        Kind::U16 => (0, u16::MAX.into()),
        Kind::U32 => (0, u32::MAX.into()),
        Kind::U64 => (0, u64::MAX.into()),
        _ => return Ok(()),
    };
    if (lo..=hi).contains(i) {
        Ok(())
    } else {
        Err(format!(
            "Python integer {i} out of bounds for {} (NumPy refuses it)",
            k.name()
        ))
    }
}

/// Truthiness of each item (non-zero numbers, true bools).
fn items_b(v: &Val, len: usize) -> R<Vec<bool>> {
    Ok(match v {
        Val::Arr(w) => match cast(w, Kind::Bool)? {
            Wide::Bool(x) => x,
            _ => unreachable!("cast to bool gives bools"),
        },
        Val::Int(i) => vec![*i != 0; len],
        Val::Float(f) => vec![*f != 0.0; len],
        Val::Bool(b) => vec![*b; len],
        Val::Str(_) => return Err("a string where a bool is needed".into()),
    })
}

/// NumPy's `astype(k)` (unsafe casting) of widened items.
fn cast(w: &Wide, k: Kind) -> R<Wide> {
    if w.kind() == Some(k) {
        return Ok(w.clone());
    }
    type Parts = (Option<Vec<i64>>, Option<Vec<u64>>, Option<Vec<f64>>);
    let (ints, uints, floats): Parts = match w {
        Wide::Bool(v) => (Some(v.iter().map(|&b| i64::from(b)).collect()), None, None),
        Wide::Int(_, v) => (Some(v.clone()), None, None),
        Wide::UInt(_, v) => (None, Some(v.clone()), None),
        Wide::Float(_, v) => (None, None, Some(v.clone())),
        Wide::Str(_) => return Err(format!("a string operand where {} is needed", k.name())),
    };
    Ok(match k {
        Kind::Bool => Wide::Bool(match (ints, uints, floats) {
            (Some(v), _, _) => v.iter().map(|&x| x != 0).collect(),
            (_, Some(v), _) => v.iter().map(|&x| x != 0).collect(),
            (_, _, Some(v)) => v.iter().map(|&x| x != 0.0).collect(),
            _ => unreachable!(),
        }),
        k if k.is_float() => Wide::Float(
            k,
            match (ints, uints, floats) {
                // Integers round straight to float32 (through f64 would round twice).
                (Some(v), _, _) if k == Kind::F32 => {
                    v.iter().map(|&x| f64::from(x as f32)).collect()
                }
                (_, Some(v), _) if k == Kind::F32 => {
                    v.iter().map(|&x| f64::from(x as f32)).collect()
                }
                (Some(v), _, _) => v.iter().map(|&x| round_f(k, x as f64)).collect(),
                (_, Some(v), _) => v.iter().map(|&x| round_f(k, x as f64)).collect(),
                (_, _, Some(v)) => v.iter().map(|&x| round_f(k, x)).collect(),
                _ => unreachable!(),
            },
        ),
        k if k.is_signed() => Wide::Int(
            k,
            match (ints, uints, floats) {
                (Some(v), _, _) => v.iter().map(|&x| wrap_i(k, x)).collect(),
                (_, Some(v), _) => v.iter().map(|&x| wrap_i(k, x as i64)).collect(),
                (_, _, Some(v)) => v.iter().map(|&x| wrap_i(k, float_to_int(k, x))).collect(),
                _ => unreachable!(),
            },
        ),
        k => Wide::UInt(
            k,
            match (ints, uints, floats) {
                (Some(v), _, _) => v.iter().map(|&x| wrap_u(k, x as u64)).collect(),
                (_, Some(v), _) => v.iter().map(|&x| wrap_u(k, x)).collect(),
                (_, _, Some(v)) => v
                    .iter()
                    .map(|&x| wrap_u(k, float_to_int(k, x) as u64))
                    .collect(),
                _ => unreachable!(),
            },
        ),
    })
}

/// A float cast to integer kind `k` as NumPy's C casts do on x86-64 (`cvttsd2si`): truncated
/// toward zero; NaN and values outside the conversion's range give its "integer
/// indefinite" (the most negative value), narrower types keep its low bits.
fn float_to_int(k: Kind, x: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0; // 2^63, exact in f64
    const TWO_31: f64 = 2_147_483_648.0;
    let cvt64 = |x: f64| {
        if (-TWO_63..TWO_63).contains(&x) {
            x as i64
        } else {
            i64::MIN
        }
    };
    match k {
        Kind::I8 | Kind::I16 | Kind::I32 | Kind::U8 | Kind::U16 => {
            if (-TWO_31..TWO_31).contains(&x) {
                x as i64
            } else {
                i64::from(i32::MIN)
            }
        }
        // Unsigned 64-bit: values from 2^63 up converted after subtracting 2^63.
        Kind::U64 if (TWO_63..2.0 * TWO_63).contains(&x) => {
            ((cvt64(x - TWO_63) as u64) ^ (1 << 63)) as i64
        }
        _ => cvt64(x),
    }
}

/// The kind of an operation's operands after promotion (weak scalars follow the array).
fn result_kind(a: &Val, b: &Val, mode: Mode) -> R<Kind> {
    let weak = |v: &Val| match v {
        Val::Int(_) => Some(Kind::I64),
        Val::Float(_) => Some(Kind::F64),
        Val::Bool(_) => Some(Kind::Bool),
        _ => None,
    };
    Ok(match (a, b) {
        (Val::Arr(x), Val::Arr(y)) => {
            let (Some(x), Some(y)) = (x.kind(), y.kind()) else {
                return Err("a string operand in arithmetic".into());
            };
            if mode == Mode::NumExpr {
                if numexpr_rank(x) >= numexpr_rank(y) {
                    x
                } else {
                    y
                }
            } else {
                promote(x, y)
            }
        }
        (Val::Arr(x), s) | (s, Val::Arr(x)) => {
            let k = x.kind().ok_or("a string operand in arithmetic")?;
            match s {
                Val::Int(_) if k == Kind::Bool => Kind::I64,
                Val::Float(_) if !k.is_float() => Kind::F64,
                Val::Str(_) => return Err("a string operand in arithmetic".into()),
                _ => k,
            }
        }
        (x, y) => promote(
            weak(x).ok_or("a string operand in arithmetic")?,
            weak(y).ok_or("a string operand in arithmetic")?,
        ),
    })
}

fn is_scalar(v: &Val) -> bool {
    !matches!(v, Val::Arr(_))
}

/// A length-1 result of two scalars, back to a weak scalar.
fn scalar_of(v: Val) -> Val {
    match v {
        Val::Arr(Wide::Bool(x)) if x.len() == 1 => Val::Bool(x[0]),
        Val::Arr(Wide::Int(_, x)) if x.len() == 1 => Val::Int(i128::from(x[0])),
        Val::Arr(Wide::UInt(_, x)) if x.len() == 1 => Val::Int(i128::from(x[0])),
        Val::Arr(Wide::Float(_, x)) if x.len() == 1 => Val::Float(x[0]),
        v => v,
    }
}

pub(super) fn eval(e: &Expr, ops: &[Column], len: usize) -> R<Column> {
    let v = match mode_of(e, ops) {
        Mode::NumExpr => value(e, ops, len, Mode::NumExpr)?,
        Mode::NumPy => match lazy_value(e, ops, len)? {
            // A lazy expression left at the top is computed into an array of the type
            // python-blosc2 gives it (NumPy's rules over its operands), numexpr's result
            // cast into it: `abs(b) % i8` of a bool `b` is float32 in numexpr, NaN where the
            // i8 is 0, and an int8 0 once stored. Only floats into an integer or bool type
            // are cast here (the float type python-blosc2 gives a node is not always the
            // one b2nd infers: a function of a constant is a float64 array there).
            Lazy {
                val: Val::Arr(w @ Wide::Float(..)),
                lazy: true,
                kind: Some(k),
                ..
            } if !k.is_float() => Val::Arr(cast(&w, k)?),
            l => l.val,
        },
    };
    Ok(from_wide(match v {
        Val::Arr(w) => w,
        // A constant expression: one item per row, Python's default types.
        Val::Int(i) => Wide::Int(Kind::I64, vec![i as i64; len]),
        Val::Float(f) => Wide::Float(Kind::F64, vec![f; len]),
        Val::Bool(b) => Wide::Bool(vec![b; len]),
        Val::Str(s) => Wide::Str(vec![s; len]),
    }))
}

/// A value in python-blosc2's Python evaluation (see [`lazy_value`]).
struct Lazy {
    /// The items (or a scalar).
    val: Val,
    /// Whether python-blosc2 holds it as a lazy expression.
    lazy: bool,
    /// Whether numexpr refuses the lazy expression it is part of (NumPy's rules then).
    numpy: bool,
    /// The type python-blosc2 gives it (NumPy's rules over its operands' types): the type
    /// a `where` is computed into; `None` for a scalar.
    kind: Option<Kind>,
}

impl Lazy {
    /// A value NumPy computed: not lazy, of its own type.
    fn eager(val: Val) -> Lazy {
        let kind = if is_scalar(&val) {
            None
        } else {
            kind_of(&val).ok()
        };
        Lazy {
            val,
            lazy: false,
            numpy: false,
            kind,
        }
    }
}

/// The value of `e` where numexpr refuses the whole expression and python-blosc2 evaluates
/// it in Python over NumPy arrays.
///
/// There python-blosc2's functions return lazy expressions (its string predicates
/// excepted: they compute at once into NumPy arrays), and so does any operation with one:
/// a function call and everything above it is computed when the result is asked for,
/// by python-blosc2's evaluator again (numexpr when it takes that node, else NumPy), over
/// the values NumPy computed below it. `where(c, x, y)` is `c.where(x, y)`: an error when
/// `c` is a NumPy array, or a constant and `x` or `y` an array; its result is computed
/// into the type python-blosc2 gives it before the operations above use it (python-blosc2
/// 4.14.1 computes a function of a `where` from its condition alone: b2nd gives the function
/// of the `where`, docs/meaning-audit.md). Each node is
/// evaluated alone, its children's values standing in as operands (arrays) or constants
/// (scalars).
fn lazy_value(e: &Expr, ops: &[Column], len: usize) -> R<Lazy> {
    let (children, rebuild): (Vec<&Expr>, &dyn Fn(Vec<Expr>) -> Expr) = match e {
        Expr::Unary(op, a) => (vec![a], &|mut c: Vec<Expr>| {
            Expr::Unary(*op, Box::new(c.remove(0)))
        }),
        Expr::Binary(op, a, b) => (vec![a, b], &|mut c: Vec<Expr>| {
            let b = c.remove(1);
            Expr::Binary(*op, Box::new(c.remove(0)), Box::new(b))
        }),
        Expr::Call(f, args) => (args.iter().collect(), &|c: Vec<Expr>| {
            Expr::Call(f.clone(), c)
        }),
        leaf => return Ok(Lazy::eager(value(leaf, ops, len, Mode::NumPy)?)),
    };
    let is_where = matches!(e, Expr::Call(f, _) if f == "where");
    let is_string_predicate = matches!(
        e,
        Expr::Call(f, _) if matches!(f.as_str(), "contains" | "startswith" | "endswith")
    );
    let mut lazy = matches!(e, Expr::Call(..));
    let (mut slots, mut values, mut dummies) = (Vec::new(), Vec::new(), Vec::new());
    let mut scalar_condition = false;
    let mut numpy = false;
    for (i, c) in children.into_iter().enumerate() {
        let Lazy {
            val,
            lazy: l,
            numpy: n,
            kind,
        } = lazy_value(c, ops, len)?;
        if is_where {
            if i == 0 && !l {
                return Err(
                    "where() of a NumPy condition outside numexpr (python-blosc2 \
                            cannot evaluate it either: a NumPy array has no where())"
                        .into(),
                );
            }
            scalar_condition |= i == 0 && is_scalar(&val);
            if i > 0 && scalar_condition && !is_scalar(&val) {
                return Err(
                    "where() of a constant condition and an array outside numexpr \
                            (python-blosc2 cannot evaluate it either)"
                        .into(),
                );
            }
        }
        lazy |= l;
        numpy |= l && n;
        slots.push(match val {
            Val::Int(i) => Expr::Int(i),
            Val::Float(f) => Expr::Float(f),
            Val::Bool(b) => Expr::Bool(b),
            Val::Str(s) => Expr::Str(s),
            Val::Arr(w) => {
                dummies.push(match &w {
                    Wide::Str(_) => Some(from_wide(w.head())),
                    _ => kind.and_then(|k| cast(&w.head(), k).ok()).map(from_wide),
                });
                values.push(from_wide(w));
                Expr::Operand(values.len() - 1)
            }
        });
    }
    let node = rebuild(slots);
    if !lazy || is_string_predicate {
        // A string predicate is computed at once into a NumPy array of bools, as
        // python-blosc2 does inside its evaluator (its string functions go eager there):
        // the operators above it follow NumPy's rules (`u8 - contains(..)` wraps at 0) and
        // a function of it is a lazy expression over the booleans, for numexpr
        // (`log(contains(s, 'x')) // y`: `-inf // 2.0` is `-inf`).
        return Ok(Lazy::eager(value(&node, &values, len, Mode::NumPy)?));
    }
    if values.is_empty() {
        // A node of constants stays a scalar (numexpr would give an array of them).
        let val = value(&node, &values, len, Mode::NumPy)?;
        return Ok(Lazy {
            val,
            lazy,
            numpy,
            kind: None,
        });
    }
    // A lazy expression is computed as one: where numexpr refuses a part of it, all of it
    // follows NumPy's rules.
    let mode = if numpy {
        Mode::NumPy
    } else {
        mode_of(&node, &values)
    };
    numpy = mode == Mode::NumPy;
    let val = value(&node, &values, len, mode)?;
    // python-blosc2's type of the node: NumPy's rules over its operands' types (the first
    // row of each, cast to its type, stands in for them).
    let dummies: Option<Vec<Column>> = dummies.into_iter().collect();
    let kind = match (&node, dummies) {
        (Expr::Call(_, args), Some(d)) if is_where => {
            let (Some(x), Some(y)) = (args.get(1), args.get(2)) else {
                return Err("where() takes three arguments".into());
            };
            let arg = |e: &Expr| value(e, &d, 1, Mode::NumPy);
            result_kind(&arg(x)?, &arg(y)?, Mode::NumPy).ok()
        }
        (_, Some(d)) => value(&node, &d, 1, Mode::NumPy)
            .ok()
            .and_then(|v| kind_of(&v).ok()),
        _ => None,
    };
    if !is_where {
        return Ok(Lazy {
            val,
            lazy,
            numpy,
            kind,
        });
    }
    let k = kind.ok_or("where() outside numexpr over operands whose type b2nd cannot tell")?;
    let Val::Arr(w) = val else {
        return Err("where() outside numexpr gave no array".into());
    };
    // Computed into an array of its own: the expressions above start afresh.
    Ok(Lazy {
        val: Val::Arr(cast(&w, k)?),
        lazy,
        numpy: false,
        kind: Some(k),
    })
}

fn value(e: &Expr, ops: &[Column], len: usize, mode: Mode) -> R<Val> {
    let ne = mode == Mode::NumExpr;
    Ok(match e {
        Expr::Operand(k) => {
            let w = widen(
                ops.get(*k)
                    .ok_or_else(|| format!("no operand o{k}"))?
                    .clone(),
            );
            if ne {
                numexpr_val(Val::Arr(w), len)?
            } else {
                Val::Arr(w)
            }
        }
        // numexpr's constants are typed: int32 (int64 beyond), float64, bool.
        Expr::Int(i) if ne => numexpr_val(Val::Int(*i), len)?,
        Expr::Float(f) if ne => numexpr_val(Val::Float(*f), len)?,
        Expr::Bool(b) if ne => numexpr_val(Val::Bool(*b), len)?,
        Expr::Int(i) => Val::Int(*i),
        Expr::Float(f) => Val::Float(*f),
        Expr::Bool(b) => Val::Bool(*b),
        Expr::Str(s) => Val::Str(s.clone()),
        Expr::Unary(op, a) => unary(*op, value(a, ops, len, mode)?)?,
        // numexpr's "aggressive" rewrites: `x / c` of a float64 `x` is `x * (1 / c)`,
        // `x ** c` of a constant integral or half-integral `c` a chain of products.
        Expr::Binary(BinOp::Div, a, c) if ne && matches!(**c, Expr::Float(_)) => {
            let Expr::Float(c) = **c else { unreachable!() };
            let a = value(a, ops, len, mode)?;
            if matches!(a, Val::Arr(Wide::Float(Kind::F64, _))) {
                let r = Val::Arr(Wide::Float(Kind::F64, vec![1.0 / c; len]));
                return binary(BinOp::Mul, a, r, len, mode);
            }
            let c = Val::Arr(Wide::Float(Kind::F64, vec![c; len]));
            binary(BinOp::Div, a, c, len, mode)?
        }
        Expr::Binary(BinOp::Pow, a, c) if ne && matches!(**c, Expr::Int(_) | Expr::Float(_)) => {
            let x = match **c {
                Expr::Int(i) => i as f64,
                Expr::Float(f) => f,
                _ => unreachable!(),
            };
            let a = value(a, ops, len, mode)?;
            numexpr_pow(a, x, matches!(**c, Expr::Int(_)), len)?
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (value(a, ops, len, mode)?, value(b, ops, len, mode)?);
            if is_scalar(&a) && is_scalar(&b) && !matches!(a, Val::Str(_)) {
                return Ok(scalar_of(binary(*op, a, b, 1, mode)?));
            }
            binary(*op, a, b, len, mode)?
        }
        Expr::Call(f, args) => {
            if ne {
                if let Some(folded) = numpy_folded(e)? {
                    return numexpr_constant(folded, len);
                }
            }
            let vals = args
                .iter()
                .map(|a| value(a, ops, len, mode))
                .collect::<R<Vec<_>>>()?;
            if vals.iter().all(is_scalar) && !vals.iter().any(|v| matches!(v, Val::Str(_))) {
                return Ok(scalar_of(call(f, vals, 1, mode)?));
            }
            call(f, vals, len, mode)?
        }
    })
}

/// NumPy's value of `e` where numexpr folds it before evaluating anything: a function of
/// constants (and of such functions, and arithmetic on them), which numexpr hands to
/// NumPy's function on the Python values (`numexpr.expressions.func`; not `where`, which it
/// folds otherwise). `None` where `e` is not such a function. The value is a NumPy scalar:
/// a length-1 array of its type (`log(True)` is float16, `abs(-3)` int64).
fn numpy_folded(e: &Expr) -> R<Option<Val>> {
    fn operand(e: &Expr) -> R<Option<Val>> {
        Ok(match e {
            Expr::Int(i) => Some(Val::Int(*i)),
            Expr::Float(f) => Some(Val::Float(*f)),
            Expr::Bool(b) => Some(Val::Bool(*b)),
            e => numpy_folded(e)?,
        })
    }
    Ok(match e {
        Expr::Call(f, args) if f != "where" && NUMEXPR_FUNCTIONS.contains(&f.as_str()) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                match operand(a)? {
                    Some(v) => vals.push(v),
                    None => return Ok(None),
                }
            }
            let v = call(f, vals, 1, Mode::NumPy)?;
            if !matches!(v, Val::Arr(_)) {
                return Ok(None);
            }
            Some(v)
        }
        Expr::Unary(op, a) => match numpy_folded(a)? {
            Some(v) => Some(unary(*op, v)?),
            None => None,
        },
        Expr::Binary(op, a, b) => match (operand(a)?, operand(b)?) {
            (Some(x), Some(y)) if !(is_scalar(&x) && is_scalar(&y)) => {
                Some(binary(*op, x, y, 1, Mode::NumPy)?)
            }
            _ => None,
        },
        _ => None,
    })
}

/// A NumPy scalar (a length-1 array) as the numexpr constant it becomes, over `len` rows
/// (`numexpr.expressions.bestConstantType`): float64 stays double, float32 and float16
/// become float, int64 long, other integers int (long beyond int32), bools bool.
fn numexpr_constant(v: Val, len: usize) -> R<Val> {
    let int = |i: i128| match i32::try_from(i) {
        Ok(x) => Wide::Int(Kind::I32, vec![i64::from(x); len]),
        Err(_) => Wide::Int(Kind::I64, vec![i as i64; len]),
    };
    Ok(Val::Arr(match v {
        Val::Arr(Wide::Float(k, x)) if x.len() == 1 => {
            Wide::Float(if k == Kind::F64 { k } else { Kind::F32 }, vec![x[0]; len])
        }
        Val::Arr(Wide::Int(Kind::I64, x)) if x.len() == 1 => Wide::Int(Kind::I64, vec![x[0]; len]),
        Val::Arr(Wide::Int(_, x)) if x.len() == 1 => int(i128::from(x[0])),
        Val::Arr(Wide::UInt(_, x)) if x.len() == 1 => int(i128::from(x[0])),
        Val::Arr(Wide::Bool(x)) if x.len() == 1 => Wide::Bool(vec![x[0]; len]),
        v => {
            return Err(format!(
                "a folded constant that is not a NumPy scalar: {v:?}"
            ))
        }
    }))
}

/// `v` as numexpr holds it: an array widened to numexpr's kinds, a Python scalar typed as
/// numexpr types constants (int32, int64 beyond; float64; bool); strings as they are.
fn numexpr_val(v: Val, len: usize) -> R<Val> {
    Ok(match v {
        Val::Arr(w) => match w.kind().and_then(numexpr_kind) {
            Some(k) => Val::Arr(cast(&w, k)?),
            None => Val::Arr(w),
        },
        Val::Int(i) => match i32::try_from(i) {
            Ok(v) => Val::Arr(Wide::Int(Kind::I32, vec![i64::from(v); len])),
            Err(_) => Val::Arr(Wide::Int(Kind::I64, vec![i as i64; len])),
        },
        Val::Float(f) => Val::Arr(Wide::Float(Kind::F64, vec![f; len])),
        Val::Bool(b) => Val::Arr(Wide::Bool(vec![b; len])),
        s @ Val::Str(_) => s,
    })
}

/// numexpr's `a ** x` for a constant `x` (its "aggressive" optimisation): integral and
/// half-integral powers up to 50 as products (and a square root), others through `pow`.
fn numexpr_pow(a: Val, x: f64, int_exponent: bool, len: usize) -> R<Val> {
    let mode = Mode::NumExpr;
    let k = kind_of(&a)?;
    if int_exponent && !k.is_float() && x < 0.0 {
        return Err("integers to negative integer powers (NumPy refuses them)".into());
    }
    let exponent = |v: f64| -> Val {
        if int_exponent && i32::try_from(v as i64).is_ok() {
            Val::Arr(Wide::Int(Kind::I32, vec![v as i64; len]))
        } else if int_exponent {
            Val::Arr(Wide::Int(Kind::I64, vec![v as i64; len]))
        } else {
            Val::Arr(Wide::Float(Kind::F64, vec![v; len]))
        }
    };
    if (2.0 * x).fract() != 0.0 || x.abs() > 50.0 {
        return binary(BinOp::Pow, a, exponent(x), len, mode);
    }
    let n = x.abs() as u64;
    let half = (2.0 * x.abs()) as u64 % 2 == 1;
    let mut r: Option<Val> = None;
    let mut p = a.clone();
    let mut mask = 1u64;
    loop {
        if n & mask != 0 {
            r = Some(match r {
                None => p.clone(),
                Some(r) => binary(BinOp::Mul, r, p.clone(), len, mode)?,
            });
        }
        mask <<= 1;
        if mask > n {
            break;
        }
        p = binary(BinOp::Mul, p.clone(), p, len, mode)?;
    }
    if half {
        let sqrt_kind = if k.is_float() { k } else { Kind::F64 };
        let s = items_f(&a, sqrt_kind, len)?
            .into_iter()
            .map(|v| fop1(sqrt_kind, v, f64::sqrt, f32::sqrt))
            .collect();
        let s = Val::Arr(Wide::Float(sqrt_kind, s));
        r = Some(match r {
            None => s,
            Some(r) => binary(BinOp::Mul, r, s, len, mode)?,
        });
    }
    let r = match r {
        Some(r) => r,
        // `ones_like(a)`.
        None => Val::Arr(match k {
            Kind::Bool => Wide::Bool(vec![true; len]),
            k if k.is_float() => Wide::Float(k, vec![1.0; len]),
            k if k.is_signed() => Wide::Int(k, vec![1; len]),
            k => Wide::UInt(k, vec![1; len]),
        }),
    };
    if x < 0.0 {
        let one = Val::Arr(Wide::Int(Kind::I32, vec![1; len]));
        return binary(BinOp::Div, one, r, len, mode);
    }
    Ok(r)
}

fn unary(op: UnOp, a: Val) -> R<Val> {
    Ok(match (op, a) {
        (UnOp::Pos, a) => a,
        (UnOp::Neg, Val::Int(i)) => Val::Int(
            i.checked_neg()
                .ok_or("negating the smallest integer constant")?,
        ),
        (UnOp::Neg, Val::Float(f)) => Val::Float(-f),
        (UnOp::Invert, Val::Bool(b)) => Val::Bool(!b),
        (UnOp::Invert, Val::Int(i)) => Val::Int(!i),
        (_, Val::Arr(w)) => Val::Arr(match (op, w) {
            (UnOp::Neg, Wide::Bool(_)) => {
                return Err("the - operator on booleans (NumPy refuses it)".into())
            }
            (UnOp::Neg, Wide::Int(k, v)) => {
                Wide::Int(k, v.iter().map(|&x| wrap_i(k, x.wrapping_neg())).collect())
            }
            (UnOp::Neg, Wide::UInt(k, v)) => {
                Wide::UInt(k, v.iter().map(|&x| wrap_u(k, x.wrapping_neg())).collect())
            }
            (UnOp::Neg, Wide::Float(k, v)) => Wide::Float(k, v.iter().map(|&x| -x).collect()),
            (UnOp::Invert, Wide::Bool(v)) => Wide::Bool(v.iter().map(|&x| !x).collect()),
            (UnOp::Invert, Wide::Int(k, v)) => {
                Wide::Int(k, v.iter().map(|&x| wrap_i(k, !x)).collect())
            }
            (UnOp::Invert, Wide::UInt(k, v)) => {
                Wide::UInt(k, v.iter().map(|&x| wrap_u(k, !x)).collect())
            }
            (op, w) => {
                return Err(format!(
                    "{op:?} on a {} operand",
                    w.kind().map_or("string", Kind::name)
                ))
            }
        }),
        (op, a) => return Err(format!("{op:?} on the constant {a:?}")),
    })
}

/// NumPy's `npy_divmod` for floats: (floor quotient, remainder with the divisor's sign).
macro_rules! divmod {
    ($name:ident, $t:ty) => {
        pub(super) fn $name(a: $t, b: $t) -> ($t, $t) {
            let m = a % b;
            if b == 0.0 {
                return (a / b, m);
            }
            let mut div = (a - m) / b;
            let mut m = m;
            if m != 0.0 {
                if (b < 0.0) != (m < 0.0) {
                    m += b;
                    div -= 1.0;
                }
            } else {
                m = (0.0 as $t).copysign(b);
            }
            let q = if div != 0.0 {
                let mut f = div.floor();
                if div - f > 0.5 {
                    f += 1.0;
                }
                f
            } else {
                (0.0 as $t).copysign(a / b)
            };
            (q, m)
        }
    };
}
divmod!(divmod64, f64);
divmod!(divmod32, f32);

/// A float operation in kind `k`: `f64` math for float64, `f32` math for float32 and
/// float16 (NumPy's half loops compute in float32), rounded to `k`.
fn fop(k: Kind, x: f64, y: f64, f: fn(f64, f64) -> f64, g: fn(f32, f32) -> f32) -> f64 {
    match k {
        Kind::F64 => f(x, y),
        _ => round_f(k, f64::from(g(x as f32, y as f32))),
    }
}

fn fop1(k: Kind, x: f64, f: fn(f64) -> f64, g: fn(f32) -> f32) -> f64 {
    match k {
        Kind::F64 => f(x),
        _ => round_f(k, f64::from(g(x as f32))),
    }
}

fn ipow(mut base: i64, mut exp: u64) -> i64 {
    let mut acc: i64 = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

fn upow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc: u64 = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    )
}

fn cmp_holds(op: BinOp, o: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::*;
    match (op, o) {
        (BinOp::Ne, None) => true,
        (_, None) => false,
        (BinOp::Lt, Some(o)) => o == Less,
        (BinOp::Le, Some(o)) => o != Greater,
        (BinOp::Gt, Some(o)) => o == Greater,
        (BinOp::Ge, Some(o)) => o != Less,
        (BinOp::Eq, Some(o)) => o == Equal,
        (BinOp::Ne, Some(o)) => o != Equal,
        _ => false,
    }
}

/// Items as exact integers, where every item of `v` is one (ints, uints, bools, Python
/// ints).
fn exact_ints(v: &Val, len: usize) -> Option<Vec<i128>> {
    Some(match v {
        Val::Arr(Wide::Int(_, x)) => x.iter().map(|&i| i128::from(i)).collect(),
        Val::Arr(Wide::UInt(_, x)) => x.iter().map(|&i| i128::from(i)).collect(),
        Val::Arr(Wide::Bool(x)) => x.iter().map(|&b| i128::from(b)).collect(),
        Val::Int(i) => vec![*i; len],
        Val::Bool(b) => vec![i128::from(*b); len],
        _ => return None,
    })
}

fn strings(v: &Val, len: usize) -> Option<Vec<String>> {
    match v {
        Val::Arr(Wide::Str(s)) => Some(s.clone()),
        Val::Str(s) => Some(vec![s.clone(); len]),
        _ => None,
    }
}

fn binary(op: BinOp, a: Val, b: Val, len: usize, mode: Mode) -> R<Val> {
    if is_cmp(op) {
        let out: Vec<bool> = if let (Some(x), Some(y)) = (strings(&a, len), strings(&b, len)) {
            x.iter()
                .zip(&y)
                .map(|(p, q)| cmp_holds(op, Some(p.cmp(q))))
                .collect()
        } else if let (Some(x), Some(y)) = (exact_ints(&a, len), exact_ints(&b, len)) {
            // NumPy 2 compares mixed integer types (and Python ints) exactly.
            x.iter()
                .zip(&y)
                .map(|(p, q)| cmp_holds(op, Some(p.cmp(q))))
                .collect()
        } else {
            let k = result_kind(&a, &b, mode)?;
            let k = if k.is_float() { k } else { Kind::F64 };
            let (x, y) = (items_f(&a, k, len)?, items_f(&b, k, len)?);
            x.iter()
                .zip(&y)
                .map(|(p, q)| cmp_holds(op, p.partial_cmp(q)))
                .collect()
        };
        return Ok(Val::Arr(Wide::Bool(out)));
    }
    let k = result_kind(&a, &b, mode)?;
    if matches!(op, BinOp::And | BinOp::Or | BinOp::Xor) {
        return Ok(Val::Arr(match k {
            Kind::Bool => Wide::Bool(bitwise(op, &items_b(&a, len)?, &items_b(&b, len)?)),
            k if k.is_signed() => {
                Wide::Int(k, bitwise(op, &items_i(&a, k, len)?, &items_i(&b, k, len)?))
            }
            k if k.is_unsigned() => {
                Wide::UInt(k, bitwise(op, &items_u(&a, k, len)?, &items_u(&b, k, len)?))
            }
            k => return Err(format!("a bitwise {op:?} on {} operands", k.name())),
        }));
    }
    if matches!(op, BinOp::Shl | BinOp::Shr) {
        return Ok(Val::Arr(match k {
            k if k.is_signed() => {
                let (x, y) = (items_i(&a, k, len)?, items_i(&b, k, len)?);
                let bits = i64::from(k.bits());
                Wide::Int(
                    k,
                    x.iter()
                        .zip(&y)
                        .map(|(&p, &q)| match op {
                            BinOp::Shl if (0..bits).contains(&q) => wrap_i(k, p << q),
                            BinOp::Shl => 0,
                            _ if (0..bits).contains(&q) => p >> q,
                            _ => p >> 63,
                        })
                        .collect(),
                )
            }
            k if k.is_unsigned() => {
                let (x, y) = (items_u(&a, k, len)?, items_u(&b, k, len)?);
                let bits = u64::from(k.bits());
                Wide::UInt(
                    k,
                    x.iter()
                        .zip(&y)
                        .map(|(&p, &q)| match op {
                            _ if q >= bits => 0,
                            BinOp::Shl => wrap_u(k, p << q),
                            _ => p >> q,
                        })
                        .collect(),
                )
            }
            k => return Err(format!("a shift of {} operands", k.name())),
        }));
    }
    // Arithmetic. True division of integers (and bools) is float64.
    let k = match (op, k) {
        (BinOp::Div, k) if !k.is_float() => Kind::F64,
        (BinOp::Sub, Kind::Bool) => {
            return Err("the - operator on booleans (NumPy refuses it)".into())
        }
        (BinOp::FloorDiv | BinOp::Mod | BinOp::Pow, Kind::Bool) => Kind::I8,
        (_, k) => k,
    };
    Ok(Val::Arr(match k {
        Kind::Bool => {
            let (x, y) = (items_b(&a, len)?, items_b(&b, len)?);
            // NumPy's bool add is `or`, bool multiply `and`.
            Wide::Bool(
                x.iter()
                    .zip(&y)
                    .map(|(&p, &q)| if op == BinOp::Add { p | q } else { p & q })
                    .collect(),
            )
        }
        k if k.is_float() => {
            let (x, y) = (items_f(&a, k, len)?, items_f(&b, k, len)?);
            let f: fn(f64, f64) -> f64;
            let g: fn(f32, f32) -> f32;
            match op {
                BinOp::Add => (f, g) = (|p, q| p + q, |p, q| p + q),
                BinOp::Sub => (f, g) = (|p, q| p - q, |p, q| p - q),
                BinOp::Mul => (f, g) = (|p, q| p * q, |p, q| p * q),
                BinOp::Div => (f, g) = (|p, q| p / q, |p, q| p / q),
                BinOp::Pow => (f, g) = (f64::powf, f32::powf),
                // numexpr: floor(a / b) and a - floor(a / b) * b, in the operands' type.
                BinOp::FloorDiv if mode == Mode::NumExpr => {
                    (f, g) = (
                        |p: f64, q: f64| (p / q).floor(),
                        |p: f32, q: f32| (p / q).floor(),
                    )
                }
                BinOp::Mod if mode == Mode::NumExpr => {
                    (f, g) = (
                        |p: f64, q: f64| p - (p / q).floor() * q,
                        |p: f32, q: f32| p - (p / q).floor() * q,
                    )
                }
                // NumPy: its divmod.
                BinOp::FloorDiv => {
                    (f, g) = (
                        |p, q| if q == 0.0 { p / q } else { divmod64(p, q).0 },
                        |p, q| if q == 0.0 { p / q } else { divmod32(p, q).0 },
                    )
                }
                BinOp::Mod => {
                    (f, g) = (
                        |p, q| if q == 0.0 { p % q } else { divmod64(p, q).1 },
                        |p, q| if q == 0.0 { p % q } else { divmod32(p, q).1 },
                    )
                }
                _ => return Err(format!("{op:?} on floats")),
            }
            Wide::Float(
                k,
                x.iter()
                    .zip(&y)
                    .map(|(&p, &q)| fop(k, p, q, f, g))
                    .collect(),
            )
        }
        k if k.is_signed() => {
            let (x, y) = (items_i(&a, k, len)?, items_i(&b, k, len)?);
            let mut out = Vec::with_capacity(len);
            for (&p, &q) in x.iter().zip(&y) {
                out.push(wrap_i(
                    k,
                    match op {
                        BinOp::Add => p.wrapping_add(q),
                        BinOp::Sub => p.wrapping_sub(q),
                        BinOp::Mul => p.wrapping_mul(q),
                        BinOp::FloorDiv if q == 0 => 0,
                        BinOp::FloorDiv => {
                            let d = p.wrapping_div(q);
                            if (p.wrapping_rem(q) != 0) && ((p < 0) != (q < 0)) {
                                d - 1
                            } else {
                                d
                            }
                        }
                        BinOp::Mod if q == 0 => 0,
                        BinOp::Mod => {
                            let m = p.wrapping_rem(q);
                            if m != 0 && ((m < 0) != (q < 0)) {
                                m + q
                            } else {
                                m
                            }
                        }
                        BinOp::Pow if q < 0 => {
                            return Err(
                                "integers to negative integer powers (NumPy refuses them)".into()
                            )
                        }
                        BinOp::Pow => ipow(p, q as u64),
                        _ => return Err(format!("{op:?} on integers")),
                    },
                ));
            }
            Wide::Int(k, out)
        }
        k => {
            let (x, y) = (items_u(&a, k, len)?, items_u(&b, k, len)?);
            let mut out = Vec::with_capacity(len);
            for (&p, &q) in x.iter().zip(&y) {
                out.push(wrap_u(
                    k,
                    match op {
                        BinOp::Add => p.wrapping_add(q),
                        BinOp::Sub => p.wrapping_sub(q),
                        BinOp::Mul => p.wrapping_mul(q),
                        BinOp::FloorDiv | BinOp::Mod if q == 0 => 0,
                        BinOp::FloorDiv => p / q,
                        BinOp::Mod => p % q,
                        BinOp::Pow => upow(p, q),
                        _ => return Err(format!("{op:?} on integers")),
                    },
                ));
            }
            Wide::UInt(k, out)
        }
    }))
}

/// `x[i]` where `c[i]`, else `y[i]`, in the kind both promote to (`where`'s values).
fn select(c: &[bool], x: Val, y: Val, len: usize, mode: Mode) -> R<Val> {
    if let (Some(x), Some(y)) = (strings(&x, len), strings(&y, len)) {
        return Ok(Val::Arr(Wide::Str(
            c.iter()
                .zip(x.into_iter().zip(y))
                .map(|(&c, (p, q))| if c { p } else { q })
                .collect(),
        )));
    }
    let k = result_kind(&x, &y, mode)?;
    let out = match (as_kind(&x, k, len)?, as_kind(&y, k, len)?) {
        (Wide::Bool(p), Wide::Bool(q)) => Wide::Bool(choose(c, p, q)),
        (Wide::Int(k, p), Wide::Int(_, q)) => Wide::Int(k, choose(c, p, q)),
        (Wide::UInt(k, p), Wide::UInt(_, q)) => Wide::UInt(k, choose(c, p, q)),
        (Wide::Float(k, p), Wide::Float(_, q)) => Wide::Float(k, choose(c, p, q)),
        _ => unreachable!("both cast to one kind"),
    };
    Ok(Val::Arr(out))
}

/// `p[i]` where `c[i]`, else `q[i]`.
fn choose<T>(c: &[bool], p: Vec<T>, q: Vec<T>) -> Vec<T> {
    c.iter()
        .zip(p.into_iter().zip(q))
        .map(|(&c, (p, q))| if c { p } else { q })
        .collect()
}

/// `&`, `|` or `^` item by item.
fn bitwise<T>(op: BinOp, x: &[T], y: &[T]) -> Vec<T>
where
    T: Copy
        + std::ops::BitAnd<Output = T>
        + std::ops::BitOr<Output = T>
        + std::ops::BitXor<Output = T>,
{
    x.iter()
        .zip(y)
        .map(|(&p, &q)| match op {
            BinOp::And => p & q,
            BinOp::Or => p | q,
            _ => p ^ q,
        })
        .collect()
}

/// An array or weak scalar as `len` items of kind `k`.
fn as_kind(v: &Val, k: Kind, len: usize) -> R<Wide> {
    Ok(match k {
        Kind::Bool => Wide::Bool(items_b(v, len)?),
        k if k.is_float() => Wide::Float(k, items_f(v, k, len)?),
        k if k.is_signed() => Wide::Int(k, items_i(v, k, len)?),
        k => Wide::UInt(k, items_u(v, k, len)?),
    })
}

fn kind_of(v: &Val) -> R<Kind> {
    Ok(match v {
        Val::Arr(w) => w.kind().ok_or("a string operand to a numeric function")?,
        Val::Int(_) => Kind::I64,
        Val::Float(_) => Kind::F64,
        Val::Bool(_) => Kind::Bool,
        Val::Str(_) => return Err("a string operand to a numeric function".into()),
    })
}

fn arity(f: &str, args: &[Val], n: usize) -> R<()> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("{f}() takes {n} arguments, not {}", args.len()))
    }
}

/// A float function in its float64 and float32 versions.
type Unary = (fn(f64) -> f64, fn(f32) -> f32);
/// A float function of two arguments in its float64 and float32 versions.
type Binary = (fn(f64, f64) -> f64, fn(f32, f32) -> f32);

fn call(f: &str, mut args: Vec<Val>, len: usize, mode: Mode) -> R<Val> {
    let ne = mode == Mode::NumExpr;
    // numexpr computes a function of integers in float64, of bools in float32.
    let float_kind = |k: Kind| match k {
        Kind::Bool if ne => Kind::F32,
        k if ne && !k.is_float() => Kind::F64,
        k => float_of(k),
    };
    let unary_float: Option<Unary> = match f {
        "sqrt" => Some((f64::sqrt, f32::sqrt)),
        "exp" => Some((f64::exp, f32::exp)),
        "expm1" => Some((f64::exp_m1, f32::exp_m1)),
        "log" => Some((f64::ln, f32::ln)),
        "log1p" => Some((f64::ln_1p, f32::ln_1p)),
        "log2" => Some((f64::log2, f32::log2)),
        "log10" => Some((f64::log10, f32::log10)),
        "sin" => Some((f64::sin, f32::sin)),
        "cos" => Some((f64::cos, f32::cos)),
        "tan" => Some((f64::tan, f32::tan)),
        "arcsin" | "asin" => Some((f64::asin, f32::asin)),
        "arccos" | "acos" => Some((f64::acos, f32::acos)),
        "arctan" | "atan" => Some((f64::atan, f32::atan)),
        "sinh" => Some((f64::sinh, f32::sinh)),
        "cosh" => Some((f64::cosh, f32::cosh)),
        "tanh" => Some((f64::tanh, f32::tanh)),
        // The C library's, as numexpr's and NumPy's (Rust's own differ in the last places).
        "arcsinh" | "asinh" => Some((libm::asinh64, libm::asinh32)),
        "arccosh" | "acosh" => Some((libm::acosh64, libm::acosh32)),
        "arctanh" | "atanh" => Some((libm::atanh64, libm::atanh32)),
        _ => None,
    };
    if let Some((g64, g32)) = unary_float {
        arity(f, &args, 1)?;
        let k = float_kind(kind_of(&args[0])?);
        let x = items_f(&args[0], k, len)?;
        // The sign of the NaN a domain error gives, where NumPy's and numexpr's functions
        // differ from the C library's: NumPy's AVX-512 loops give -NaN (`log(-1)`,
        // `arcsin(2)`; elsewhere NumPy's sign is the C library's, docs/meaning-audit.md);
        // numexpr's float64 `log` and `log2` give +NaN (glibc's -NaN), its `arccosh` -NaN.
        let nan_sign = match (mode, f, k) {
            (Mode::NumPy, ..) => Some(true),
            (_, "log" | "log2", Kind::F64) => Some(false),
            (_, "arccosh" | "acosh", _) => Some(true),
            _ => None,
        };
        return Ok(Val::Arr(Wide::Float(
            k,
            x.iter()
                .map(|&v| {
                    let r = fop1(k, v, g64, g32);
                    match nan_sign {
                        Some(neg) if r.is_nan() && !v.is_nan() => {
                            if neg {
                                -f64::NAN.abs()
                            } else {
                                f64::NAN.abs()
                            }
                        }
                        _ => r,
                    }
                })
                .collect(),
        )));
    }
    let binary_float: Option<Binary> = match f {
        "arctan2" | "atan2" => Some((f64::atan2, f32::atan2)),
        "hypot" => Some((f64::hypot, f32::hypot)),
        "copysign" => Some((f64::copysign, f32::copysign)),
        _ => None,
    };
    if let Some((g64, g32)) = binary_float {
        arity(f, &args, 2)?;
        let k = float_kind(result_kind(&args[0], &args[1], mode)?);
        // numexpr computes hypot and copysign in float64 whatever the operands.
        let k = if ne && f != "arctan2" && f != "atan2" {
            Kind::F64
        } else {
            k
        };
        let (x, y) = (items_f(&args[0], k, len)?, items_f(&args[1], k, len)?);
        return Ok(Val::Arr(Wide::Float(
            k,
            x.iter()
                .zip(&y)
                .map(|(&p, &q)| fop(k, p, q, g64, g32))
                .collect(),
        )));
    }
    let bool_of = |w: Vec<bool>| Ok(Val::Arr(Wide::Bool(w)));
    match f {
        "where" => {
            arity(f, &args, 3)?;
            let c = items_b(&args[0], len)?;
            let (y, x) = (args.pop().expect("3"), args.pop().expect("3"));
            select(&c, x, y, len, mode)
        }
        "abs" | "negative" | "positive" | "square" | "sign" | "floor" | "ceil" | "trunc" => {
            arity(f, &args, 1)?;
            let a = args.pop().expect("1");
            let k = kind_of(&a)?;
            match f {
                "negative" => return unary(UnOp::Neg, a),
                "positive" => return Ok(a),
                "square" => return binary(BinOp::Mul, a.clone(), a, len, mode),
                _ => {}
            }
            // numexpr's kinds (numexpr 2.14): abs, floor and ceil of bools are float32, of
            // integers float64; trunc is always float64; sign of bools and floats float64,
            // of integers their own.
            let ne_kind = match (f, k) {
                ("trunc", _) | ("sign", Kind::Bool | Kind::F32) => Kind::F64,
                ("sign", k) => k,
                (_, Kind::Bool) => Kind::F32,
                (_, k) if !k.is_float() => Kind::F64,
                (_, k) => k,
            };
            let (a, k) = if ne && ne_kind != k {
                (
                    Val::Arr(Wide::Float(ne_kind, items_f(&a, ne_kind, len)?)),
                    ne_kind,
                )
            } else {
                (a, k)
            };
            Ok(Val::Arr(match k {
                Kind::Bool if f == "sign" => {
                    return Err("sign() of booleans (NumPy refuses it)".into())
                }
                Kind::Bool => Wide::Bool(items_b(&a, len)?),
                k if k.is_float() => {
                    let g: fn(f64) -> f64 = match f {
                        "abs" => f64::abs,
                        "floor" => f64::floor,
                        "ceil" => f64::ceil,
                        "trunc" => f64::trunc,
                        _ => |x: f64| {
                            if x.is_nan() {
                                x
                            } else if x == 0.0 {
                                0.0
                            } else {
                                x.signum()
                            }
                        },
                    };
                    Wide::Float(k, items_f(&a, k, len)?.into_iter().map(g).collect())
                }
                k if k.is_signed() => {
                    let x = items_i(&a, k, len)?;
                    Wide::Int(
                        k,
                        x.into_iter()
                            .map(|v| match f {
                                "abs" => wrap_i(k, v.wrapping_abs()),
                                "sign" => v.signum(),
                                _ => v,
                            })
                            .collect(),
                    )
                }
                k => {
                    let x = items_u(&a, k, len)?;
                    Wide::UInt(
                        k,
                        x.into_iter()
                            .map(|v| if f == "sign" { u64::from(v != 0) } else { v })
                            .collect(),
                    )
                }
            }))
        }
        "isnan" | "isinf" | "isfinite" | "signbit" => {
            arity(f, &args, 1)?;
            let k = kind_of(&args[0])?;
            if !k.is_float() {
                let x = exact_ints(&args[0], len).ok_or("isnan() of a non-number")?;
                return bool_of(
                    x.iter()
                        .map(|&v| match f {
                            "isfinite" => true,
                            "signbit" => v < 0,
                            _ => false,
                        })
                        .collect(),
                );
            }
            let x = items_f(&args[0], k, len)?;
            bool_of(
                x.iter()
                    .map(|v| match f {
                        "isnan" => v.is_nan(),
                        "isinf" => v.is_infinite(),
                        "isfinite" => v.is_finite(),
                        _ => v.is_sign_negative(),
                    })
                    .collect(),
            )
        }
        "pow" | "power" => {
            arity(f, &args, 2)?;
            let b = args.pop().expect("2");
            binary(BinOp::Pow, args.pop().expect("2"), b, len, mode)
        }
        "maximum" | "minimum" => {
            arity(f, &args, 2)?;
            let k = result_kind(&args[0], &args[1], mode)?;
            // numexpr's maximum / minimum are float64 whatever the operands.
            let k = if ne { Kind::F64 } else { k };
            let max = f == "maximum";
            if k.is_float() {
                let (x, y) = (items_f(&args[0], k, len)?, items_f(&args[1], k, len)?);
                // NaN propagates, as NumPy's maximum / minimum.
                return Ok(Val::Arr(Wide::Float(
                    k,
                    x.iter()
                        .zip(&y)
                        .map(|(&p, &q)| {
                            if p.is_nan() || q.is_nan() {
                                f64::NAN
                            } else if (p > q) == max {
                                p
                            } else {
                                q
                            }
                        })
                        .collect(),
                )));
            }
            let pick = binary(
                if max { BinOp::Ge } else { BinOp::Le },
                args[0].clone(),
                args[1].clone(),
                len,
                mode,
            )?;
            let c = items_b(&pick, len)?;
            let (y, x) = (args.pop().expect("2"), args.pop().expect("2"));
            select(&c, x, y, len, mode)
        }
        "logical_and" | "logical_or" | "logical_xor" => {
            arity(f, &args, 2)?;
            let (x, y) = (items_b(&args[0], len)?, items_b(&args[1], len)?);
            bool_of(
                x.iter()
                    .zip(&y)
                    .map(|(&p, &q)| match f {
                        "logical_and" => p && q,
                        "logical_or" => p || q,
                        _ => p != q,
                    })
                    .collect(),
            )
        }
        "logical_not" => {
            arity(f, &args, 1)?;
            bool_of(items_b(&args[0], len)?.into_iter().map(|b| !b).collect())
        }
        "contains" | "startswith" | "endswith" => {
            arity(f, &args, 2)?;
            let (Some(x), Some(y)) = (strings(&args[0], len), strings(&args[1], len)) else {
                return Err(format!("{f}() of non-string operands"));
            };
            bool_of(
                x.iter()
                    .zip(&y)
                    .map(|(s, p)| match f {
                        "contains" => s.contains(p.as_str()),
                        "startswith" => s.starts_with(p.as_str()),
                        _ => s.ends_with(p.as_str()),
                    })
                    .collect(),
            )
        }
        other => Err(format!("function {other:?} is not one b2nd evaluates")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Expression;
    use super::*;

    fn ev(src: &str, ops: &[Column]) -> Column {
        let n = ops.first().map_or(1, Column::len);
        Expression::parse(src)
            .unwrap()
            .eval(ops, n)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    /// numexpr has no opcode for `//`, `-`, `%`, `**` of two bools: python-blosc2 takes
    /// them to NumPy (bool // bool is int8 there); a function call there is a lazy
    /// expression numexpr computes, cast to the dtype python-blosc2 records (values from
    /// python-blosc2 4.14.1's `ne_evaluate`).
    #[test]
    fn bool_arithmetic_and_integer_maximum_follow_numpy() {
        let b = [Column::Bool(vec![true, false, true])];
        assert_eq!(ev("o0 // o0", &b), Column::I8(vec![1, 0, 1]));
        assert_eq!(
            ev_as("(o0 > 0.5) // maximum(o0 + o0, o0 // o0)", &b, "int8"),
            Column::I8(vec![1, 0, 1])
        );
        assert_eq!(ev("o0 + o0", &b), Column::Bool(vec![true, false, true]));
        // `abs(o0) % o1` over the NumPy int8 `o1 = o0 // o0` is a lazy expression of dtype
        // int8: numexpr's float32 NaN (where `o1` is 0) is stored as int8 0.
        assert_eq!(ev("abs(o0) % (o0 // o0)", &b), Column::I8(vec![0, 0, 0]));
        assert_eq!(
            ev_as("abs(o0) % (o0 // o0)", &b, "bool"),
            Column::Bool(vec![false, false, false])
        );
        let ops = [Column::I8(vec![-3, 5]), Column::U8(vec![2, 1])];
        assert_eq!(
            ev_as("negative(maximum(o0, o1))", &ops, "int16"),
            Column::I16(vec![-2, -5])
        );
    }

    /// numexpr folds a function of constants with NumPy, whose NaN of a domain error is
    /// -NaN where numexpr's own float64 `log` gives +NaN; the folded value is a NumPy
    /// scalar (`sqrt(True)` float16, a float32 constant to numexpr; `sqrt(2)` float64).
    /// Bits from python-blosc2 4.14.1's `ne_evaluate` over the same operands.
    #[test]
    fn functions_of_constants_are_numpy_scalars() {
        let bits = |c: Column| match c {
            Column::F64(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            c => panic!("{c:?}"),
        };
        let a = [Column::F64(vec![1.0, -2.0])];
        assert_eq!(
            bits(ev("cos(log(-2.812) * o0)", &a)),
            [0xfff8_0000_0000_0000, 0xfff8_0000_0000_0000]
        );
        assert_eq!(bits(ev("log(o0)", &a)), [0, 0x7ff8_0000_0000_0000]);
        let f = [Column::F32(vec![1.5, 2.0])];
        assert_eq!(ev("(sqrt(True) + o0)", &f), Column::F32(vec![2.5, 3.0]));
        assert_eq!(
            bits(ev("(sqrt(2) + o0)", &f)),
            [4613744644356808166, 4614870544263650790]
        );
    }

    #[test]
    fn extreme_operands_do_not_panic() {
        let ops = [Column::I64(vec![i64::MIN, 7]), Column::I64(vec![-1, 0])];
        let got = Expression::parse("o0 // o1 + o0 % o1")
            .unwrap()
            .eval(&ops, 2)
            .unwrap();
        assert_eq!(got, Column::I64(vec![i64::MIN, 0]));
        for src in [
            "-(~170141183460469231731687303715884105727) // -1",
            "(~170141183460469231731687303715884105727) % -1",
            "-(~170141183460469231731687303715884105727)",
        ] {
            let e = Expression::parse(src).unwrap();
            let _ = e.eval(&[], 1);
        }
    }

    #[test]
    fn numpy_promotion() {
        use Kind::*;
        for (a, b, want) in [
            (I32, F32, F64),
            (I8, F32, F32),
            (I16, F16, F32),
            (I8, U64, F64),
            (I64, U64, F64),
            (I8, U8, I16),
            (I32, U16, I32),
            (U32, I32, I64),
            (Bool, I8, I8),
            (F32, F64, F64),
        ] {
            assert_eq!(promote(a, b), want, "{a:?} {b:?}");
            assert_eq!(promote(b, a), want, "{b:?} {a:?}");
        }
    }

    /// `ev` then the cast to the dtype python-blosc2 records, as a computed column reads.
    fn ev_as(src: &str, ops: &[Column], dtype: &str) -> Column {
        ev(src, ops).astype(dtype).unwrap()
    }

    /// Values python-blosc2 4.14.1 (numexpr 2.14, NumPy 2.4) gave for the same expressions and
    /// the dtypes it recorded: int8 `a` = [-6, 2, -83, -95], float32 `f`.
    #[test]
    fn results_match_python_blosc2() {
        let a = Column::I8(vec![-6, 2, -83, -95]);
        // numexpr computes int8 in int32; the recorded int8 wraps.
        assert_eq!(
            ev("o0 + 300", std::slice::from_ref(&a)),
            Column::I32(vec![294, 302, 217, 205])
        );
        assert_eq!(
            ev_as("o0 + 300", std::slice::from_ref(&a), "int8"),
            Column::I8(vec![38, 46, -39, -51])
        );
        assert_eq!(
            ev_as("-o0", std::slice::from_ref(&a), "int8"),
            Column::I8(vec![6, -2, 83, 95])
        );
        assert_eq!(
            ev_as("o0 // 0", std::slice::from_ref(&a), "int8"),
            Column::I8(vec![0; 4])
        );
        assert_eq!(
            ev_as("o0 % 3", std::slice::from_ref(&a), "int8"),
            Column::I8(vec![0, 2, 1, 1])
        );
        assert_eq!(
            ev_as("o0 // 4", std::slice::from_ref(&a), "int8"),
            Column::I8(vec![-2, 0, -21, -24])
        );
        // (c * 300) // 7 on int8 c = [-100, 100]: int32 throughout, then wrapped.
        let c = Column::I8(vec![-100, 100]);
        assert_eq!(
            ev_as("(o0 * 300) // 7", &[c], "int8"),
            Column::I8(vec![66, -67])
        );
        // (u - 1) // 2 on uint16 u = [0, 5]: -1 // 2 in int32, then wrapped to 65535.
        let u = Column::U16(vec![0, 5]);
        assert_eq!(
            ev_as("(o0 - 1) // 2", &[u], "uint16"),
            Column::U16(vec![65535, 2])
        );
        assert_eq!(
            ev("o0 * 1.5", std::slice::from_ref(&a)),
            Column::F64(vec![-9.0, 3.0, -124.5, -142.5])
        );
        let Column::F16(h) = ev_as("sqrt(o0)", std::slice::from_ref(&a), "float16") else {
            unreachable!()
        };
        assert_eq!(f16_to_f32(h[1]), 1.4140625); // NumPy prints 1.414
        assert!(f16_to_f32(h[0]).is_nan());
        // float32 + int32 is float32 in numexpr (16777217 rounds), float64 recorded.
        let (f, i) = (
            Column::F32(vec![0.5, 0.1]),
            Column::I32(vec![16_777_217, 3]),
        );
        assert_eq!(
            ev_as("o0 + o1", &[f.clone(), i.clone()], "float64"),
            Column::F64(vec![16777216.0, 3.0999999046325684])
        );
        assert_eq!(
            ev_as("o1 * o0 * 1.1", &[f.clone(), i], "float64"),
            Column::F64(vec![9227468.8, 0.33000001311302185])
        );
        assert_eq!(
            ev_as("o0 * 3.1", std::slice::from_ref(&f), "float32"),
            Column::F32(vec![1.55, 0.31])
        );
        assert_eq!(
            ev("o0 / o1", &[a.clone(), a.clone()]).type_name(),
            "float64"
        );
        let k = Column::Bool(vec![false, true]);
        assert_eq!(
            ev("o0 > 300", std::slice::from_ref(&a)),
            Column::Bool(vec![false; 4])
        );
        assert_eq!(ev_as("o0 * 3", &[k], "int64"), Column::I64(vec![0, 3]));
        let u = Column::U64(vec![u64::MAX, 0]);
        let i = Column::I64(vec![-1, 0]);
        assert_eq!(
            ev_as("o0 + 1", std::slice::from_ref(&u), "uint64"),
            Column::U64(vec![0, 1])
        );
        assert_eq!(ev("o0 > o1", &[u, i]).type_name(), "bool");
        assert_eq!(
            ev_as(
                "where(o0 > 0, o0, o1)",
                &[Column::I32(vec![-1, 5]), Column::I8(vec![7, 7])],
                "int32"
            ),
            Column::I32(vec![7, 5])
        );
        // Unicode strings: NumPy's rules (numexpr refuses them).
        let s = Column::Str(vec!["x1".into(), "y".into()]);
        assert_eq!(
            ev("contains(o0, 'x')", std::slice::from_ref(&s)),
            Column::Bool(vec![true, false])
        );
        assert_eq!(ev("o0 == 'y'", &[s]), Column::Bool(vec![false, true]));
        assert_eq!(
            ev(
                "o0 % o1",
                &[Column::F64(vec![-7.0, 7.0]), Column::F64(vec![2.0, -2.0])]
            ),
            Column::F64(vec![1.0, -1.0])
        );
        // NumPy's own rules where numexpr is not used (float16 operands, `power`).
        assert_eq!(
            ev("power(o0, 2)", std::slice::from_ref(&a)).type_name(),
            "int8"
        );
        assert_eq!(
            ev("o0 + o1", &[Column::F16(vec![0; 4]), a]).type_name(),
            "float16"
        );
    }

    /// numexpr 2.14's kinds for abs, floor, ceil, trunc and sign (`numexpr.evaluate` of
    /// each over bool, int32, int64, float32 and float64 arrays), and a boolean subtract
    /// python-blosc2 4.14.1 computes through them: `(c0 * c0 == where(c0 > 54, c0, 54)) -
    /// floor(c0 <= 1.999)` is float32 there, recorded bool ([True, True, False, False]).
    #[test]
    fn numexpr_kinds_of_rounding_functions() {
        let b = Column::Bool(vec![true, false]);
        let i4 = Column::I32(vec![3, -4]);
        let i8 = Column::I64(vec![3, -4]);
        let f4 = Column::F32(vec![1.5, -2.5]);
        let f8 = Column::F64(vec![1.5, -2.5]);
        for (f, want) in [
            (
                "abs",
                ["float32", "float64", "float64", "float32", "float64"],
            ),
            (
                "floor",
                ["float32", "float64", "float64", "float32", "float64"],
            ),
            (
                "ceil",
                ["float32", "float64", "float64", "float32", "float64"],
            ),
            ("trunc", ["float64"; 5]),
            ("sign", ["float64", "int32", "int64", "float64", "float64"]),
        ] {
            for (op, want) in [&b, &i4, &i8, &f4, &f8].into_iter().zip(want) {
                let got = ev(&format!("{f}(o0)"), std::slice::from_ref(op));
                assert_eq!(got.type_name(), want, "{f}({})", op.type_name());
            }
        }
        assert_eq!(ev("sign(o0)", &[b]), Column::F64(vec![1.0, 0.0]));
        assert_eq!(ev("sign(o0)", &[f4]), Column::F64(vec![1.0, -1.0]));
        let c0 = [Column::F64(vec![0.5, 1.0, 54.0, 60.0])];
        let e = "(o0 * o0 == where(o0 > 54, o0, 54)) - floor(o0 <= 1.999)";
        assert_eq!(ev(e, &c0), Column::F32(vec![-1.0, -1.0, 0.0, 0.0]));
        assert_eq!(
            ev_as(e, &c0, "bool"),
            Column::Bool(vec![true, true, false, false])
        );
    }

    /// A string predicate is computed first, into a NumPy array of bools: a function of it
    /// goes to numexpr with the booleans as an operand, an operator with a NumPy array
    /// follows NumPy's rules (values from python-blosc2 4.14.1's `ne_evaluate` over these
    /// operands: `log` of a bool is float32 there, `-inf // 45.86` is `-inf`, where
    /// NumPy's float16 `log` and divmod give 0.3333 and NaN; `0u8 - True` is 255).
    #[test]
    fn string_predicates_are_numpy_arrays_computed_first() {
        let s = Column::Str(vec![
            "zxzz".into(),
            "ézé".into(),
            "zy".into(),
            "xy".into(),
            "zy".into(),
        ]);
        let y = Column::F64(vec![f64::NAN, 34.8, -33.4, -72.0, 45.86]);
        let got = ev("log(contains(o0, 'é')) // o1", &[s.clone(), y]);
        let Column::F64(got) = got else {
            panic!("{}", got.type_name())
        };
        let want = [
            f64::NAN,
            0.0,
            f64::INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits(),
                "{got:?}"
            );
        }
        let y = Column::F64(vec![1.0, 34.8, -33.4, -72.0, 45.86]);
        assert_eq!(
            ev(
                "(sqrt(contains(o0, 'x')) / 3) * o1",
                &[s.clone(), y.clone()]
            ),
            Column::F64(vec![
                0.3333333432674408,
                0.0,
                -0.0,
                -24.000000715255737,
                0.0
            ])
        );
        let Column::F64(got) = ev("log(startswith(o0, 'z')) // o1", &[s, y]) else {
            panic!("not float64")
        };
        let want = [0.0, f64::NEG_INFINITY, -0.0, f64::INFINITY, 0.0];
        let bits = |v: &[f64]| v.iter().map(|g| g.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want));

        let u = Column::U8(vec![246, 203, 0, 122, 0]);
        let s = Column::Str(vec![
            "".into(),
            "x".into(),
            "xé".into(),
            "xzéz".into(),
            "zy".into(),
        ]);
        let f = Column::F32(vec![f32::NAN, -2.9, 70.5, -98.97, 15.58]);
        let i = Column::I8(vec![-128, 127, 5, -3, 0]);
        let ops = [u, s, f, i];
        assert_eq!(
            ev("o0 - contains(o1, 'x')", &ops),
            Column::U8(vec![246, 202, 255, 121, 0])
        );
        let Column::F64(got) = ev("((o0 - contains(o1, 'x')) // (144 % o2 * sqrt(71)))", &ops)
        else {
            panic!("not float64")
        };
        assert!(got[0].is_nan(), "{got:?}");
        assert_eq!(bits(&got[1..]), bits(&[-24.0, 10.0, -1.0, 0.0]));
        assert_eq!(
            ev("(contains(o1, 'x') + o3) * 2", &ops),
            Column::I8(vec![0, 0, 12, -4, 0])
        );
        assert_eq!(
            ev("o3 - startswith(o1, 'x')", &ops),
            Column::I8(vec![-128, 126, 4, -4, 0])
        );
        assert_eq!(
            ev("(o3 - endswith(o1, 'z')) / 3", &ops),
            Column::F64(vec![
                -42.666666666666664,
                42.333333333333336,
                1.6666666666666667,
                -1.3333333333333333,
                0.0
            ])
        );
    }

    /// Outside numexpr (a `//` with a constant on its left), python-blosc2 evaluates
    /// `where` as its condition's method: numexpr's `where` when the condition calls a
    /// function, an error on a NumPy condition (values from python-blosc2 4.14.1's
    /// `ne_evaluate`).
    #[test]
    fn where_outside_numexpr_follows_python() {
        let a = Column::F64(vec![1.5, -2.0, 0.3, 7.0, 0.0]);
        assert_eq!(
            ev(
                "where(16 > hypot(0.486 // o0, o0), 16, hypot(0.486 // o0, o0))",
                std::slice::from_ref(&a)
            ),
            Column::F64(vec![16.0, 16.0, 16.0, 16.0, f64::INFINITY])
        );
        let e = Expression::parse("where(2 // o0 > 1, o0, 2)")
            .unwrap()
            .eval(&[a], 5)
            .unwrap_err();
        assert!(e.contains("a NumPy array has no where()"), "{e}");
        let e = Expression::parse("where(sqrt(-0.432) != -0.432, 7 // o0, 119)")
            .unwrap()
            .eval(&[Column::F32(vec![1.0, 2.0])], 2)
            .unwrap_err();
        assert!(e.contains("a constant condition and an array"), "{e}");
        assert_eq!(
            ev_as(
                "where(maximum(-0.965, -2.989) != -0.965, -0.965, -2.989) + 0.486 // o0",
                &[Column::F64(vec![0.25, -1.0])],
                "float64"
            ),
            Column::F64(vec![-2.989 + 1.0, -3.989])
        );
        let b = Column::I8(vec![1, -2, 3, 100, 5]);
        assert_eq!(
            ev_as(
                "where(sqrt(o0) > (2 // o0), o0, 300)",
                std::slice::from_ref(&b),
                "int8"
            ),
            Column::I8(vec![44, 44, 3, 100, 5])
        );
        assert_eq!(
            ev_as("where(abs(o0) > (2 // o0), o0, 300)", &[b], "int8"),
            Column::I8(vec![44, -2, 3, 100, 5])
        );
    }

    #[test]
    fn refusals() {
        assert!(Expression::parse("mean(o0)")
            .unwrap_err()
            .contains("\"mean\""));
        let e = Expression::parse("o0 - o0").unwrap();
        assert!(e
            .eval(&[Column::Bool(vec![true])], 1)
            .unwrap_err()
            .contains("booleans"));
        let e = Expression::parse("o0 ** -1").unwrap();
        assert!(e
            .eval(&[Column::I32(vec![2])], 1)
            .unwrap_err()
            .contains("negative"));
        let e = Expression::parse("o1").unwrap();
        assert!(e.eval(&[Column::I32(vec![2])], 1).is_err());
    }

    #[test]
    fn half_rounding() {
        for (x, bits) in [
            (1.0f32, 0x3c00u16),
            (65504.0, 0x7bff),
            (65520.0, 0x7c00),
            (5.960_464_5e-8, 0x0001),
            (-0.0, 0x8000),
            (1.000_488_3, 0x3c00), // halfway: to even
            (1.001_464_8, 0x3c02), // halfway: to even (up)
        ] {
            assert_eq!(f32_to_f16(x), bits, "{x}");
        }
        for h in 0..=u16::MAX {
            let x = f16_to_f32(h);
            if !x.is_nan() {
                assert_eq!(f32_to_f16(x), h, "{h:#x}");
            }
        }
    }
}
