//! The parts of a filter zone maps can use: `column <op> literal` comparisons (the column
//! maybe cast in a way that keeps the order of values) AND-ed together, with the literal as
//! a number of the column's domain; from the planner's filters (logical) and from the
//! dynamic filters a top-k pushes into a running scan (physical).

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use datafusion::physical_expr::PhysicalExpr;

/// A bound of a zone, or a literal, in the column's number domain.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub(crate) enum Num {
    /// Every integer type's values exactly (`u64` included).
    Int(i128),
    Float(f64),
}

/// A number as `f64` (integers beyond 2^53 rounded).
pub(crate) fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

/// A literal as a number of the column's domain, or `None` (not a number, or not exact).
fn literal(s: &ScalarValue) -> Option<Num> {
    Some(match s {
        ScalarValue::Int8(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int16(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int32(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int64(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt8(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt16(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt32(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt64(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Float32(Some(v)) if v.is_finite() => Num::Float((*v).into()),
        ScalarValue::Float64(Some(v)) if v.is_finite() => Num::Float(*v),
        _ => return None,
    })
}

/// One prunable part of a filter: `column op literal`, the column maybe cast first.
#[derive(Debug)]
pub(crate) struct Term {
    pub(crate) column: String,
    /// The type the column is cast to before the comparison, if it is.
    pub(crate) cast: Option<DataType>,
    pub(crate) op: Operator,
    pub(crate) lit: Num,
}

/// `column op literal` terms of a filter (its AND-ed parts; `CAST(column AS type)` too, as
/// DataFusion writes a comparison of a `f4` column with a `f8` literal); other parts are
/// left out (they prune nothing).
pub(crate) fn terms(e: &Expr, out: &mut Vec<Term>) {
    let Expr::BinaryExpr(BinaryExpr { left, op, right }) = e else {
        if let Expr::Between(b) = e {
            if !b.negated {
                terms(&b.expr.clone().gt_eq((*b.low).clone()), out);
                terms(&b.expr.clone().lt_eq((*b.high).clone()), out);
            }
        }
        return;
    };
    if *op == Operator::And {
        terms(left, out);
        terms(right, out);
        return;
    }
    let (side, op, lit) = match (left.as_ref(), right.as_ref()) {
        (c, Expr::Literal(l, _)) => (c, *op, l),
        (Expr::Literal(l, _), c) => (c, flip(*op), l),
        _ => return,
    };
    let (col, cast) = match side {
        Expr::Column(c) => (c, None),
        Expr::Cast(c) => match c.expr.as_ref() {
            Expr::Column(col) => (col, Some(c.field.data_type().clone())),
            _ => return,
        },
        _ => return,
    };
    if !comparison(op) {
        return;
    }
    if let Some(v) = literal(lit) {
        out.push(Term {
            column: col.name.clone(),
            cast,
            op,
            lit: v,
        });
    }
}

/// `column op literal` terms of a physical filter (a dynamic filter's snapshot, as a top-k
/// pushes it to the scan): its AND-ed parts, and the comparison of `column IS NULL OR
/// comparison` where the column never holds a NULL (`never_null`; a descending top-k's
/// filter).
pub(crate) fn physical_terms(
    e: &Arc<dyn PhysicalExpr>,
    never_null: &dyn Fn(&str) -> bool,
    out: &mut Vec<Term>,
) {
    use datafusion::physical_expr::expressions::{self as px};
    let Some(b) = e.downcast_ref::<px::BinaryExpr>() else {
        return;
    };
    let (left, op, right) = (b.left(), *b.op(), b.right());
    let no_null_column = |e: &Arc<dyn PhysicalExpr>| {
        e.downcast_ref::<px::IsNullExpr>()
            .and_then(|n| n.arg().downcast_ref::<px::Column>())
            .is_some_and(|c| never_null(c.name()))
    };
    match op {
        Operator::And => {
            physical_terms(left, never_null, out);
            physical_terms(right, never_null, out);
        }
        Operator::Or if no_null_column(left) => physical_terms(right, never_null, out),
        Operator::Or if no_null_column(right) => physical_terms(left, never_null, out),
        _ => {
            let lit = |e: &Arc<dyn PhysicalExpr>| {
                e.downcast_ref::<px::Literal>().map(|l| l.value().clone())
            };
            let column = |e: &Arc<dyn PhysicalExpr>| -> Option<(String, Option<DataType>)> {
                if let Some(c) = e.downcast_ref::<px::Column>() {
                    return Some((c.name().to_string(), None));
                }
                let c = e.downcast_ref::<px::CastExpr>()?;
                let col = c.expr().downcast_ref::<px::Column>()?;
                Some((col.name().to_string(), Some(c.cast_type().clone())))
            };
            let (side, op, value) = match (lit(left), lit(right)) {
                (None, Some(v)) => (left, op, v),
                (Some(v), None) => (right, flip(op), v),
                _ => return,
            };
            if let (Some((column, cast)), Some(lit)) = (column(side), literal(&value)) {
                if comparison(op) {
                    out.push(Term {
                        column,
                        cast,
                        op,
                        lit,
                    });
                }
            }
        }
    }
}

/// `a op b` as `b op' a`.
fn flip(op: Operator) -> Operator {
    match op {
        Operator::Lt => Operator::Gt,
        Operator::LtEq => Operator::GtEq,
        Operator::Gt => Operator::Lt,
        Operator::GtEq => Operator::LtEq,
        o => o,
    }
}

/// Whether zones can use `op`.
fn comparison(op: Operator) -> bool {
    matches!(
        op,
        Operator::Eq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
    )
}

/// Whether casting `from` to `to` keeps the order of values (never reverses two of them), so
/// that bounds of the column bound the cast values: to a float, or to an integer type that
/// holds every value of `from`.
pub(crate) fn keeps_order(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let int = |d: &DataType| match d {
        Int8 => Some((true, 8)),
        Int16 => Some((true, 16)),
        Int32 => Some((true, 32)),
        Int64 => Some((true, 64)),
        UInt8 => Some((false, 8)),
        UInt16 => Some((false, 16)),
        UInt32 => Some((false, 32)),
        UInt64 => Some((false, 64)),
        _ => None,
    };
    match (int(from), int(to)) {
        _ if matches!(to, Float32 | Float64) => true,
        (Some((fs, fb)), Some((ts, tb))) => (fs == ts && tb >= fb) || (!fs && ts && tb > fb),
        _ => false,
    }
}

/// Whether a filter has a part the zones can use.
pub(crate) fn usable(e: &Expr) -> bool {
    let mut t = Vec::new();
    terms(e, &mut t);
    !t.is_empty()
}

#[cfg(test)]
mod tests {
    use super::{keeps_order, physical_terms, Num};
    use datafusion::arrow::datatypes::DataType::*;
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::{col, is_null, lit, BinaryExpr};
    use datafusion::physical_expr::PhysicalExpr;
    use std::sync::Arc;

    #[test]
    fn comparisons_of_dynamic_filters() {
        let schema = Schema::new(vec![
            Field::new("a", Int64, true),
            Field::new("n", Int64, true),
        ]);
        let bin = |l: Arc<dyn PhysicalExpr>,
                   op,
                   r: Arc<dyn PhysicalExpr>|
         -> Arc<dyn PhysicalExpr> { Arc::new(BinaryExpr::new(l, op, r)) };
        let c = |name: &str| col(name, &schema).unwrap();
        let found = |e: Arc<dyn PhysicalExpr>| {
            let mut t = Vec::new();
            physical_terms(&e, &|c| c == "a", &mut t);
            t.into_iter()
                .map(|t| (t.column, t.op, t.lit))
                .collect::<Vec<_>>()
        };
        let gt5 = |name| bin(c(name), Operator::Gt, lit(5i64));
        // A descending top-k's filter: the NULL test is dropped only where no NULL can be.
        assert_eq!(
            found(bin(is_null(c("a")).unwrap(), Operator::Or, gt5("a"))),
            [("a".to_string(), Operator::Gt, Num::Int(5))]
        );
        assert_eq!(
            found(bin(is_null(c("n")).unwrap(), Operator::Or, gt5("n"))),
            []
        );
        // A literal on the left is flipped; AND-ed parts all count; OR-ed ones none.
        assert_eq!(
            found(bin(lit(5i64), Operator::Lt, c("a"))),
            [("a".to_string(), Operator::Gt, Num::Int(5))]
        );
        assert_eq!(found(bin(gt5("a"), Operator::And, gt5("n"))).len(), 2);
        assert_eq!(found(bin(gt5("a"), Operator::Or, gt5("n"))), []);
        assert_eq!(found(bin(c("a"), Operator::Plus, lit(5i64))), []);
    }

    #[test]
    fn casts_that_keep_the_order_of_values() {
        for (from, to, keeps) in [
            (Float32, Float64, true),
            (Int64, Float64, true),
            (UInt64, Float32, true),
            (Int32, Int64, true),
            (UInt32, Int64, true),
            (UInt8, UInt16, true),
            (Int64, Int32, false),
            (Int32, UInt64, false),
            (UInt64, Int64, false),
            (Float64, Int64, false),
        ] {
            assert_eq!(keeps_order(&from, &to), keeps, "{from} -> {to}");
        }
    }
}
