//! python-blosc2's lazy expressions (`"(o0 * 2 + o1)"`), parsed and evaluated element-wise
//! with NumPy's semantics.
//!
//! [`Expression::parse`] reads the string python-blosc2 stores (a CTable's computed columns;
//! the same strings as saved lazy expressions); [`Expression::eval`] evaluates it over
//! operand columns ([`Column`], one per `oN`) with NumPy 2's type promotion: strong array
//! dtypes promote by NumPy's table, Python scalars are weak (NEP 50: `int8 + 300` stays
//! `int8`, wrapping; `int32 * 1.5` is `float64`), true division of integers is `float64`,
//! float functions of small integers are `float16` / `float32` as NumPy's loops choose.
//! Integer arithmetic wraps; integer division and remainder by zero give 0, as NumPy's.
//! python-blosc2 hands an expression to numexpr first and to NumPy when numexpr refuses it,
//! and the two type intermediate results differently: [`Expression::eval`] follows the
//! engine python-blosc2 would use (numexpr's kinds: int32 for small integers, float32 for
//! `int + float32`, float64 for float functions of integers; NumPy's promotion otherwise).
//! Floating-point `+ - * /` are IEEE operations in the operands' type (bit-exact with
//! NumPy); the transcendental functions are the C library's (`f32` ones for `float32`), as
//! numexpr's: `scripts/ulp_bound.py` measures 0 ulp from python-blosc2's values.
//!
//! Supported functions: `where`, `abs`, `negative`, `positive`, `square`, `sign`, `sqrt`,
//! `exp`, `expm1`, `log`, `log1p`, `log2`, `log10`, `sin`, `cos`, `tan`, `arcsin`, `arccos`,
//! `arctan`, `sinh`, `cosh`, `tanh`, `arcsinh`, `arccosh`, `arctanh` (and their `asin`-style
//! names), `arctan2`/`atan2`, `hypot`, `copysign`, `pow`/`power`, `maximum`, `minimum`,
//! `floor`, `ceil`, `trunc`, `isnan`, `isinf`, `isfinite`, `signbit`, `logical_and`,
//! `logical_or`, `logical_xor`, `logical_not`, and on strings `contains`, `startswith`,
//! `endswith`. Any other name is refused by name when the expression is parsed.

#![forbid(unsafe_code)]

mod bounds;
mod eval;
mod parse;

pub use eval::Column;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Neg,
    Pos,
    Invert,
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    /// `oN`: the N-th operand.
    Operand(usize),
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(String),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

/// The functions [`Expression::eval`] knows, by every name python-blosc2 accepts for them.
const FUNCTIONS: &[&str] = &[
    "where",
    "abs",
    "negative",
    "positive",
    "square",
    "sign",
    "sqrt",
    "exp",
    "expm1",
    "log",
    "log1p",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "asin",
    "arccos",
    "acos",
    "arctan",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "asinh",
    "arccosh",
    "acosh",
    "arctanh",
    "atanh",
    "arctan2",
    "atan2",
    "hypot",
    "copysign",
    "pow",
    "power",
    "maximum",
    "minimum",
    "floor",
    "ceil",
    "trunc",
    "isnan",
    "isinf",
    "isfinite",
    "signbit",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "contains",
    "startswith",
    "endswith",
];

/// A lazy expression, parsed: what python-blosc2 stores as a computed column's
/// `expression`.
///
/// ```
/// use b2nd::expr::{Column, Expression};
///
/// let e = Expression::parse("(o0 * 2 + o1)")?;
/// let out = e.eval(&[Column::I32(vec![1, 2]), Column::F32(vec![0.5, 0.25])], 2)?;
/// // numexpr computes int32 + float32 in float32; python-blosc2 records NumPy's float64.
/// assert_eq!(out, Column::F32(vec![2.5, 4.25]));
/// assert_eq!(out.astype("float64")?, Column::F64(vec![2.5, 4.25]));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Expression {
    source: String,
    tree: Expr,
    operands: usize,
}

impl Expression {
    /// Parse `source`; refuses, with the reason, syntax b2nd does not evaluate (a function
    /// it does not know, `and`/`or`, chained comparisons, attribute access, ...).
    pub fn parse(source: &str) -> Result<Expression, String> {
        let tree = fold(parse::parse(source)?);
        let mut operands = 0;
        check(&tree, &mut operands)?;
        Ok(Expression {
            source: source.to_string(),
            tree,
            operands,
        })
    }

    /// Bounds `(lo, hi)` of the values the expression takes when each operand `oN`, of
    /// NumPy type `operands[N].0` (`int32`, `float64`, ...), lies in `operands[N].1 ..=
    /// operands[N].2` (finite, no NaN), or `None` when b2nd cannot bound them: only
    /// `+ - * /`, unary minus and `abs` of operands and constants are bounded, and never
    /// where an integer intermediate could wrap (beyond int32 in numexpr's rules, any
    /// integer operand in NumPy's). Rounding is allowed for: the bounds are a little wider
    /// than exact arithmetic gives.
    ///
    /// ```
    /// let e = b2nd::expr::Expression::parse("(o0 * 2 + o1)").unwrap();
    /// let (lo, hi) = e.bounds(&[("int32", 0.0, 10.0), ("float64", -1.0, 1.0)]).unwrap();
    /// assert!(lo <= -1.0 && hi >= 21.0 && hi < 21.001);
    /// ```
    pub fn bounds(&self, operands: &[(&str, f64, f64)]) -> Option<(f64, f64)> {
        let types: Vec<&str> = operands.iter().map(|o| o.0).collect();
        let ranges: Vec<(f64, f64)> = operands.iter().map(|o| (o.1, o.2)).collect();
        // The largest magnitude every intermediate type holds (floats: without overflowing
        // to infinity; integers: without wrapping).
        let numexpr = eval::numexpr_evaluates(&self.tree, &types);
        let mut limit = f64::MAX;
        for t in &types {
            limit = limit.min(match *t {
                "float64" | "<f8" => f64::MAX,
                "float32" | "<f4" => f64::from(f32::MAX),
                "float16" | "<f2" => 65504.0,
                _ if numexpr => f64::from(i32::MAX),
                _ => return None,
            });
        }
        if ranges
            .iter()
            .any(|r| !(r.0.is_finite() && r.1.is_finite() && r.0 <= r.1))
        {
            return None;
        }
        bounds::bounds(&self.tree, &ranges, limit)
    }

    /// The text parsed.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// How many operands (`o0 .. oN`) the expression names: one more than the largest N.
    pub fn operands(&self) -> usize {
        self.operands
    }

    /// Evaluate over `operands` (one column per `oN`, each of `len` items), NumPy's way.
    pub fn eval(&self, operands: &[Column], len: usize) -> Result<Column, String> {
        if operands.len() < self.operands {
            return Err(format!(
                "{} operands for an expression naming {}",
                operands.len(),
                self.operands
            ));
        }
        if let Some(c) = operands.iter().find(|c| c.len() != len) {
            return Err(format!("an operand of {} items, not {len}", c.len()));
        }
        eval::eval(&self.tree, operands, len)
    }
}

/// Constant sub-expressions folded as Python folds them before numexpr or NumPy see them
/// (`~(2.5 == 1)` is the Python int -1, `2 ** 3` is 8, `7 // 2` is 3).
fn fold(e: Expr) -> Expr {
    match e {
        Expr::Unary(op, a) => {
            let a = fold(*a);
            match (op, &a) {
                (UnOp::Neg, Expr::Int(i)) if i.checked_neg().is_some() => Expr::Int(-i),
                (UnOp::Neg, Expr::Float(f)) => Expr::Float(-f),
                (UnOp::Neg, Expr::Bool(b)) => Expr::Int(-i128::from(*b)),
                (UnOp::Pos, Expr::Int(_) | Expr::Float(_)) => a,
                (UnOp::Pos, Expr::Bool(b)) => Expr::Int(i128::from(*b)),
                (UnOp::Invert, Expr::Int(i)) => Expr::Int(!i),
                (UnOp::Invert, Expr::Bool(b)) => Expr::Int(!i128::from(*b)),
                _ => Expr::Unary(op, Box::new(a)),
            }
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (fold(*a), fold(*b));
            py_binary(op, &a, &b).unwrap_or(Expr::Binary(op, Box::new(a), Box::new(b)))
        }
        Expr::Call(f, args) => Expr::Call(f, args.into_iter().map(fold).collect()),
        e => e,
    }
}

/// Python's result of `a op b` on number constants; `None` where Python would raise or
/// the operands are not both constants.
fn py_binary(op: BinOp, a: &Expr, b: &Expr) -> Option<Expr> {
    let int = |e: &Expr| match e {
        Expr::Int(i) => Some(*i),
        Expr::Bool(b) => Some(i128::from(*b)),
        _ => None,
    };
    let float = |e: &Expr| match e {
        Expr::Float(f) => Some(*f),
        e => int(e).map(|i| i as f64),
    };
    let (fa, fb) = (float(a)?, float(b)?);
    let both_int = matches!((int(a), int(b)), (Some(_), Some(_)));
    let cmp = |o: Option<std::cmp::Ordering>| {
        use std::cmp::Ordering::*;
        Some(Expr::Bool(match op {
            BinOp::Lt => o == Some(Less),
            BinOp::Le => matches!(o, Some(Less | Equal)),
            BinOp::Gt => o == Some(Greater),
            BinOp::Ge => matches!(o, Some(Greater | Equal)),
            BinOp::Eq => o == Some(Equal),
            _ => o != Some(Equal),
        }))
    };
    if matches!(
        op,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
    ) {
        return if both_int {
            cmp(int(a)?.partial_cmp(&int(b)?))
        } else {
            cmp(fa.partial_cmp(&fb))
        };
    }
    if let (Expr::Bool(x), Expr::Bool(y)) = (a, b) {
        match op {
            BinOp::And => return Some(Expr::Bool(x & y)),
            BinOp::Or => return Some(Expr::Bool(x | y)),
            BinOp::Xor => return Some(Expr::Bool(x ^ y)),
            _ => {}
        }
    }
    if both_int {
        let (x, y) = (int(a)?, int(b)?);
        let r = match op {
            BinOp::Add => x.checked_add(y)?,
            BinOp::Sub => x.checked_sub(y)?,
            BinOp::Mul => x.checked_mul(y)?,
            BinOp::And => x & y,
            BinOp::Or => x | y,
            BinOp::Xor => x ^ y,
            BinOp::FloorDiv if y != 0 => {
                x.checked_div_euclid(y)? - i128::from(y < 0 && x.checked_rem_euclid(y)? != 0)
            }
            BinOp::Mod if y != 0 => {
                let m = x.checked_rem(y)?;
                if m != 0 && ((m < 0) != (y < 0)) {
                    m + y
                } else {
                    m
                }
            }
            BinOp::Pow if (0..=128).contains(&y) => x.checked_pow(y as u32)?,
            BinOp::Div if y != 0 => return Some(Expr::Float(x as f64 / y as f64)),
            _ => return None,
        };
        return Some(Expr::Int(r));
    }
    Some(Expr::Float(match op {
        BinOp::Add => fa + fb,
        BinOp::Sub => fa - fb,
        BinOp::Mul => fa * fb,
        BinOp::Div if fb != 0.0 => fa / fb,
        BinOp::FloorDiv if fb != 0.0 => eval::divmod64(fa, fb).0,
        BinOp::Mod if fb != 0.0 => eval::divmod64(fa, fb).1,
        BinOp::Pow if fa >= 0.0 || fb.fract() == 0.0 => fa.powf(fb),
        _ => return None,
    }))
}

/// Every function named is known; counts the operands.
fn check(e: &Expr, operands: &mut usize) -> Result<(), String> {
    match e {
        Expr::Operand(k) => {
            *operands = (*operands).max(k + 1);
            Ok(())
        }
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Str(_) => Ok(()),
        Expr::Unary(_, a) => check(a, operands),
        Expr::Binary(_, a, b) => {
            check(a, operands)?;
            check(b, operands)
        }
        Expr::Call(f, args) => {
            if !FUNCTIONS.contains(&f.as_str()) {
                return Err(format!("function {f:?} is not one b2nd evaluates"));
            }
            args.iter().try_for_each(|a| check(a, operands))
        }
    }
}
