//! Items of a value as another kind: NumPy's casts (floats to integers as x86's
//! `cvttsd2si`), Python integers checked against their array's type (NEP 50).

#![forbid(unsafe_code)]

use super::*;

/// An array or weak scalar as items of kind `k`, `len` of them.
pub(crate) fn items_f(v: &Val, k: Kind, len: usize) -> R<Vec<f64>> {
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

pub(crate) fn items_i(v: &Val, k: Kind, len: usize) -> R<Vec<i64>> {
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

pub(crate) fn items_u(v: &Val, k: Kind, len: usize) -> R<Vec<u64>> {
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
pub(crate) fn in_bounds(v: &Val, k: Kind) -> R<()> {
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
pub(crate) fn items_b(v: &Val, len: usize) -> R<Vec<bool>> {
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
pub(crate) fn cast(w: &Wide, k: Kind) -> R<Wide> {
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
pub(crate) fn float_to_int(k: Kind, x: f64) -> i64 {
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

/// An array or weak scalar as `len` items of kind `k`.
pub(crate) fn as_kind(v: &Val, k: Kind, len: usize) -> R<Wide> {
    Ok(match k {
        Kind::Bool => Wide::Bool(items_b(v, len)?),
        k if k.is_float() => Wide::Float(k, items_f(v, k, len)?),
        k if k.is_signed() => Wide::Int(k, items_i(v, k, len)?),
        k => Wide::UInt(k, items_u(v, k, len)?),
    })
}

pub(crate) fn kind_of(v: &Val) -> R<Kind> {
    Ok(match v {
        Val::Arr(w) => w.kind().ok_or("a string operand to a numeric function")?,
        Val::Int(_) => Kind::I64,
        Val::Float(_) => Kind::F64,
        Val::Bool(_) => Kind::Bool,
        Val::Str(_) => return Err("a string operand to a numeric function".into()),
    })
}
