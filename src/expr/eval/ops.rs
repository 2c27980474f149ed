//! The operators: unary, binary (arithmetic, comparisons, bitwise, strings), `where`, and
//! numexpr's `**`.

#![forbid(unsafe_code)]

use super::*;

/// numexpr's `a ** x` for a constant `x` (its "aggressive" optimisation): integral and
/// half-integral powers up to 50 as products (and a square root), others through `pow`.
pub(crate) fn numexpr_pow(a: Val, x: f64, int_exponent: bool, len: usize) -> R<Val> {
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

pub(crate) fn unary(op: UnOp, a: Val) -> R<Val> {
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
        pub(crate) fn $name(a: $t, b: $t) -> ($t, $t) {
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
pub(crate) fn fop(k: Kind, x: f64, y: f64, f: fn(f64, f64) -> f64, g: fn(f32, f32) -> f32) -> f64 {
    match k {
        Kind::F64 => f(x, y),
        _ => round_f(k, f64::from(g(x as f32, y as f32))),
    }
}

pub(crate) fn fop1(k: Kind, x: f64, f: fn(f64) -> f64, g: fn(f32) -> f32) -> f64 {
    match k {
        Kind::F64 => f(x),
        _ => round_f(k, f64::from(g(x as f32))),
    }
}

pub(crate) fn ipow(mut base: i64, mut exp: u64) -> i64 {
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

pub(crate) fn upow(mut base: u64, mut exp: u64) -> u64 {
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

pub(crate) fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    )
}

pub(crate) fn cmp_holds(op: BinOp, o: Option<std::cmp::Ordering>) -> bool {
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
pub(crate) fn exact_ints(v: &Val, len: usize) -> Option<Vec<i128>> {
    Some(match v {
        Val::Arr(Wide::Int(_, x)) => x.iter().map(|&i| i128::from(i)).collect(),
        Val::Arr(Wide::UInt(_, x)) => x.iter().map(|&i| i128::from(i)).collect(),
        Val::Arr(Wide::Bool(x)) => x.iter().map(|&b| i128::from(b)).collect(),
        Val::Int(i) => vec![*i; len],
        Val::Bool(b) => vec![i128::from(*b); len],
        _ => return None,
    })
}

pub(crate) fn strings(v: &Val, len: usize) -> Option<Vec<String>> {
    match v {
        Val::Arr(Wide::Str(s)) => Some(s.clone()),
        Val::Str(s) => Some(vec![s.clone(); len]),
        _ => None,
    }
}

pub(crate) fn binary(op: BinOp, a: Val, b: Val, len: usize, mode: Mode) -> R<Val> {
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
pub(crate) fn select(c: &[bool], x: Val, y: Val, len: usize, mode: Mode) -> R<Val> {
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
pub(crate) fn choose<T>(c: &[bool], p: Vec<T>, q: Vec<T>) -> Vec<T> {
    c.iter()
        .zip(p.into_iter().zip(q))
        .map(|(&c, (p, q))| if c { p } else { q })
        .collect()
}

/// `&`, `|` or `^` item by item.
pub(crate) fn bitwise<T>(op: BinOp, x: &[T], y: &[T]) -> Vec<T>
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
