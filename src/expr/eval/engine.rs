//! Which engine python-blosc2 hands an expression to, numexpr or NumPy, and the kinds
//! numexpr computes in.

#![forbid(unsafe_code)]

use super::*;

/// Whose rules an evaluation follows: python-blosc2 hands an expression to numexpr, and
/// to NumPy only when numexpr refuses it (unicode strings, float16, a function numexpr
/// lacks). The two differ in the types of intermediate results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// numexpr: operands widened to its kinds (bool, int32, int64, float32, float64),
    /// integer constants int32 (int64 beyond), float constants float64, an operation's
    /// kind the larger of its operands' (`int64 + float32` is float32), float functions of
    /// integers float64.
    NumExpr,
    /// NumPy 2: its promotion table, Python scalars weak.
    NumPy,
}

/// The functions numexpr 2.14 evaluates itself (`numexpr.expressions.functions`).
pub(crate) const NUMEXPR_FUNCTIONS: &[&str] = &[
    "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "ceil",
    "contains", "copysign", "cos", "cosh", "exp", "expm1", "floor", "hypot", "isfinite", "isinf",
    "isnan", "log", "log10", "log1p", "log2", "maximum", "minimum", "sign", "signbit", "sin",
    "sinh", "sqrt", "tan", "tanh", "trunc", "where",
];

/// numexpr's kind for an operand of kind `k`; `None` where numexpr refuses the type.
pub(crate) fn numexpr_kind(k: Kind) -> Option<Kind> {
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
pub(crate) fn numexpr_rank(k: Kind) -> u8 {
    match k {
        Kind::Bool => 0,
        Kind::I32 => 1,
        Kind::I64 => 2,
        Kind::F32 => 3,
        _ => 4,
    }
}

/// Which rules evaluate `e` over `ops`, as python-blosc2 picks them.
pub(crate) fn mode_of(e: &Expr, ops: &[Column]) -> Mode {
    mode_of_kinds(e, ops.iter().map(Column::wide_kind))
}

/// Whether python-blosc2 hands `e` over operands of these types (NumPy type names) to
/// numexpr, whose integer intermediates are never narrower than int32.
pub(crate) fn numexpr_evaluates(e: &Expr, types: &[&str]) -> bool {
    let kinds = types.iter().map(|t| Kind::from_name(t));
    mode_of_kinds(e, kinds) == Mode::NumExpr
}

/// Which rules evaluate `e` over operands of `kinds` (`None`: strings).
pub(crate) fn mode_of_kinds(e: &Expr, kinds: impl IntoIterator<Item = Option<Kind>>) -> Mode {
    pub(crate) fn constant(e: &Expr) -> bool {
        matches!(e, Expr::Int(_) | Expr::Float(_) | Expr::Bool(_))
    }
    /// Whether numexpr's result of `e` is bool.
    pub(crate) fn is_bool(e: &Expr, kinds: &[Option<Kind>]) -> bool {
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
    pub(crate) fn numexpr_calls(e: &Expr, kinds: &[Option<Kind>]) -> bool {
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
