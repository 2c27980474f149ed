//! Bounds of an expression's values from bounds of its operands (interval arithmetic), for
//! pruning by a computed column through the summaries of the columns it is computed from.
//!
//! Only `+ - * /`, unary `-`/`+` and `abs` of operands and number constants are bounded;
//! anything else, a division by an interval holding zero, a bound beyond what the types
//! hold without wrapping (integers) or overflowing (floats), gives `None`. Each operation's
//! bounds are widened outward by 2^-20 of their size, more than float32 rounding can move
//! a result (2^-24), so the bounds hold for what numexpr and NumPy compute, not only for
//! exact arithmetic.

#![forbid(unsafe_code)]

use super::{BinOp, Expr, UnOp};

/// An interval `lo ..= hi` of finite values.
type Iv = (f64, f64);

/// Bounds of `e` when operand `oN` lies in `ops[N]`; intermediate values beyond `limit` in
/// magnitude give `None` (so integer intermediates never wrap).
pub(super) fn bounds(e: &Expr, ops: &[Iv], limit: f64) -> Option<Iv> {
    let iv = match e {
        Expr::Operand(i) => *ops.get(*i)?,
        Expr::Int(n) => (*n as f64, *n as f64),
        Expr::Float(f) => (*f, *f),
        Expr::Unary(UnOp::Neg, a) => {
            let (lo, hi) = bounds(a, ops, limit)?;
            (-hi, -lo)
        }
        Expr::Unary(UnOp::Pos, a) => bounds(a, ops, limit)?,
        Expr::Call(f, args) if f == "abs" && args.len() == 1 => {
            let (lo, hi) = bounds(&args[0], ops, limit)?;
            if lo >= 0.0 {
                (lo, hi)
            } else if hi <= 0.0 {
                (-hi, -lo)
            } else {
                (0.0, hi.max(-lo))
            }
        }
        Expr::Binary(op, a, b) => {
            let (x, y) = (bounds(a, ops, limit)?, bounds(b, ops, limit)?);
            match op {
                BinOp::Add => (x.0 + y.0, x.1 + y.1),
                BinOp::Sub => (x.0 - y.1, x.1 - y.0),
                BinOp::Mul => corners(x, y, |p, q| p * q),
                BinOp::Div if y.0 > 0.0 || y.1 < 0.0 => corners(x, y, |p, q| p / q),
                _ => return None,
            }
        }
        _ => return None,
    };
    widen(iv, limit)
}

/// The smallest and largest of `f` at the corners of `x` × `y`.
fn corners(x: Iv, y: Iv, f: impl Fn(f64, f64) -> f64) -> Iv {
    let c = [f(x.0, y.0), f(x.0, y.1), f(x.1, y.0), f(x.1, y.1)];
    let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}

/// `iv` widened outward by 2^-20 of each bound's size (and a little more near zero), or
/// `None` when it is not finite or reaches beyond `limit`.
fn widen((lo, hi): Iv, limit: f64) -> Option<Iv> {
    let pad = |v: f64| v.abs() * (1.0 / 1048576.0) + 1e-300;
    let out = (lo - pad(lo), hi + pad(hi));
    (out.0.is_finite() && out.1.is_finite() && out.0 >= -limit && out.1 <= limit).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::super::{Column, Expression};

    /// Random operand intervals and values inside them: every value the evaluator computes
    /// lies within the bounds (float32 and int32 intermediates included).
    #[test]
    fn bounds_contain_every_evaluated_value() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let exprs = [
            "o0 * 2 + o1",
            "o1 / 4 - o0",
            "(o0 - o1) * (o1 + 3.5)",
            "-o0 * o1 / (o2 + 100)",
            "abs(o0 - o2) * 1.25",
        ];
        let mut checked = 0;
        for round in 0..300 {
            let src = exprs[round % exprs.len()];
            let e = Expression::parse(src).unwrap();
            let types = ["int32", "float32", "float64"];
            let mut ops = Vec::new();
            let mut ranges = Vec::new();
            for (i, t) in types.iter().enumerate() {
                let a = (next() - 0.5) * 2e4;
                let b = a + next() * 1e4;
                let (a, b) = if i == 0 {
                    (a.round(), b.round())
                } else {
                    (a, b)
                };
                ranges.push((*t, a, b));
                let vals: Vec<f64> = (0..64).map(|_| a + (b - a) * next()).collect();
                ops.push(match i {
                    0 => Column::I32(vals.iter().map(|v| v.round() as i32).collect()),
                    1 => Column::F32(
                        vals.iter()
                            .map(|&v| (v as f32).clamp(a as f32, b as f32))
                            .collect(),
                    ),
                    _ => Column::F64(vals),
                });
            }
            // The float32 operand's interval as float32 holds it.
            ranges[1].1 = f64::from(ranges[1].1 as f32);
            ranges[1].2 = f64::from(ranges[1].2 as f32);
            let Some((lo, hi)) = e.bounds(&ranges) else {
                continue;
            };
            let got = e.eval(&ops, 64).unwrap().astype("float64").unwrap();
            let Column::F64(v) = got else { unreachable!() };
            for x in v {
                assert!(
                    lo <= x && x <= hi,
                    "{src} over {ranges:?}: {x} outside {lo} ..= {hi}"
                );
                checked += 1;
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn bounds_hold_what_the_expression_computes() {
        let e = Expression::parse("(o0 * 2 + o1) / (o1 - 10)").unwrap();
        let (lo, hi) = e
            .bounds(&[("float64", -3.0, 5.0), ("float64", 1.0, 2.0)])
            .unwrap();
        // o1 - 10 in [-9, -8]; o0 * 2 + o1 in [-5, 12]: the quotient in [-1.5, 0.625].
        assert!(
            (-1.5001..=-1.5).contains(&lo) && (0.625..0.6251).contains(&hi),
            "{lo} {hi}"
        );
        // Division by an interval holding zero, functions b2nd does not bound: unknown.
        assert!(e
            .bounds(&[("float64", 0.0, 1.0), ("float64", 5.0, 11.0)])
            .is_none());
        let s = Expression::parse("sin(o0)").unwrap();
        assert!(s.bounds(&[("float64", 0.0, 1.0)]).is_none());
        // Integers that could wrap are not bounded: int8 in NumPy's rules (float16 operand
        // sends it to NumPy), int32 past 2^31 in numexpr's.
        let w = Expression::parse("o0 * 100 + o1").unwrap();
        assert!(w
            .bounds(&[("int8", 0.0, 100.0), ("float16", 0.0, 1.0)])
            .is_none());
        assert!(w
            .bounds(&[("int32", 0.0, 1e8), ("int32", 0.0, 1.0)])
            .is_none());
        assert!(w
            .bounds(&[("int32", 0.0, 1e6), ("int32", 0.0, 1.0)])
            .is_some());
        let a = Expression::parse("abs(o0 - 3)").unwrap();
        let (lo, hi) = a.bounds(&[("int64", 1.0, 10.0)]).unwrap();
        assert!(lo <= 0.0 && (7.0..7.001).contains(&hi), "{lo} {hi}");
    }
}
