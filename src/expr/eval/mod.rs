//! Element-wise evaluation of an [`Expr`] with NumPy 2's dtypes and promotion.
//!
//! Values are held widened while evaluating ([`Wide`]: `i64`, `u64` or `f64` items with the
//! NumPy type they stand for) and brought back to their type after every operation
//! (integers wrapped, floats rounded), so each step has NumPy's result.
//!
//! Here the evaluators (numexpr's and NumPy's rules, lazy sub-expressions, what numexpr folds
//! with NumPy); `types.rs` the kinds, their promotion and the values held, `cast.rs` casts,
//! `engine.rs` which engine python-blosc2 picks, `ops.rs` the operators, `functions.rs` the
//! functions.

#![forbid(unsafe_code)]

use super::{BinOp, Expr, UnOp};

mod cast;
mod engine;
mod functions;
mod ops;
mod types;

use cast::*;
pub(super) use engine::numexpr_evaluates;
use engine::*;
use functions::*;
pub(super) use ops::divmod64;
use ops::*;
pub use types::Column;
use types::*;

/// The kind of an operation's operands after promotion (weak scalars follow the array).
pub(super) fn result_kind(a: &Val, b: &Val, mode: Mode) -> R<Kind> {
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

pub(super) fn is_scalar(v: &Val) -> bool {
    !matches!(v, Val::Arr(_))
}

/// A length-1 result of two scalars, back to a weak scalar.
pub(super) fn scalar_of(v: Val) -> Val {
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
pub(super) struct Lazy {
    /// The items (or a scalar).
    pub(super) val: Val,
    /// Whether python-blosc2 holds it as a lazy expression.
    pub(super) lazy: bool,
    /// Whether numexpr refuses the lazy expression it is part of (NumPy's rules then).
    pub(super) numpy: bool,
    /// The type python-blosc2 gives it (NumPy's rules over its operands' types): the type
    /// a `where` is computed into; `None` for a scalar.
    pub(super) kind: Option<Kind>,
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
pub(super) fn lazy_value(e: &Expr, ops: &[Column], len: usize) -> R<Lazy> {
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

pub(super) fn value(e: &Expr, ops: &[Column], len: usize, mode: Mode) -> R<Val> {
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
pub(super) fn numpy_folded(e: &Expr) -> R<Option<Val>> {
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
pub(super) fn numexpr_constant(v: Val, len: usize) -> R<Val> {
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
pub(super) fn numexpr_val(v: Val, len: usize) -> R<Val> {
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
