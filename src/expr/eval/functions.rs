//! The function library: each function numexpr or NumPy evaluates, with its result type
//! and the sign of the NaN a domain error gives.

#![forbid(unsafe_code)]

use super::*;
use crate::ffi::libm;

pub(crate) fn arity(f: &str, args: &[Val], n: usize) -> R<()> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("{f}() takes {n} arguments, not {}", args.len()))
    }
}

/// A float function in its float64 and float32 versions.
pub(crate) type Unary = (fn(f64) -> f64, fn(f32) -> f32);

/// A float function of two arguments in its float64 and float32 versions.
pub(crate) type Binary = (fn(f64, f64) -> f64, fn(f32, f32) -> f32);

pub(crate) fn call(f: &str, mut args: Vec<Val>, len: usize, mode: Mode) -> R<Val> {
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
