//! Zone maps: per zone of rows (one storage chunk of the scan's row order), the minimum and
//! maximum of a numeric column, computed by b2nd on the first filtered scan that needs them
//! and kept by the table; and which zones a conjunction of `column <op> literal` filters can
//! match. Scans read only those zones; DataFusion still applies the filters exactly (the
//! pushdown is `Inexact`).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, Float64Type, Int64Type, Schema};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};

use crate::source::Opened;

/// A bound of a zone, or a literal, in the column's number domain.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Num {
    Int(i64),
    Float(f64),
}

/// One zone's extrema (`None`: no value in the zone, only NULLs), and whether it holds NaN.
#[derive(Debug, Clone, Copy)]
struct Zone {
    range: Option<(Num, Num)>,
    nan: bool,
}

/// The zones of one column.
#[derive(Debug)]
pub(crate) struct ZoneMap {
    unit: u64,
    zones: Vec<Zone>,
}

/// Whether the planner may push filters on a column of this type into the scan.
pub(crate) fn prunable(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Float32
            | DataType::Float64
    )
}

impl ZoneMap {
    /// The zones of `column` (of type `dt`) in `opened`, `unit` rows each.
    fn compute(opened: &Opened, column: &str, dt: &DataType, unit: u64) -> Result<ZoneMap> {
        let schema = Arc::new(Schema::new(vec![Field::new(column, dt.clone(), true)]));
        let n = opened.n_rows();
        let mut zones = Vec::with_capacity(n.div_ceil(unit.max(1)) as usize);
        let mut at = 0;
        while at < n {
            let end = (at + unit).min(n);
            let b = opened.batch(&schema, at..end)?;
            zones.push(zone_of(b.column(0).as_ref(), dt)?);
            at = end;
        }
        Ok(ZoneMap { unit, zones })
    }

    /// Which zones may hold rows where `op` holds against `lit` (`column op lit`).
    fn keep(&self, op: Operator, lit: Num, out: &mut [bool]) {
        for (k, z) in self.zones.iter().enumerate() {
            if !out[k] || z.nan {
                continue; // NaN compares greater than every number in Arrow's order
            }
            let Some((lo, hi)) = z.range else {
                out[k] = false; // only NULLs: no comparison is true
                continue;
            };
            let (lo, hi, v) = match (lo, hi, lit) {
                (Num::Int(a), Num::Int(b), Num::Int(v)) => {
                    out[k] = match op {
                        Operator::Eq => a <= v && v <= b,
                        Operator::Lt => a < v,
                        Operator::LtEq => a <= v,
                        Operator::Gt => b > v,
                        Operator::GtEq => b >= v,
                        _ => true,
                    };
                    continue;
                }
                (lo, hi, v) => (as_f64(lo), as_f64(hi), as_f64(v)),
            };
            // Floats: signed zeros are one value here (bounds and literal), and strict
            // comparisons are taken as inclusive, so that IEEE and total-order comparison
            // agree on what may match.
            let z = |x: f64| if x == 0.0 { 0.0 } else { x };
            let (lo, hi, v) = (z(lo), z(hi), z(v));
            out[k] = match op {
                Operator::Eq => lo <= v && v <= hi,
                Operator::Lt | Operator::LtEq => lo <= v,
                Operator::Gt | Operator::GtEq => hi >= v,
                _ => true,
            };
        }
    }
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    }
}

fn zone_of(a: &dyn Array, dt: &DataType) -> Result<Zone> {
    let mut z = Zone {
        range: None,
        nan: false,
    };
    match dt {
        DataType::Float32 | DataType::Float64 => {
            let f = cast(a, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            for i in 0..f.len() {
                if f.is_null(i) {
                    continue;
                }
                let v = f.value(i);
                if v.is_nan() {
                    z.nan = true;
                    continue;
                }
                z.range = Some(match z.range {
                    None => (Num::Float(v), Num::Float(v)),
                    Some((Num::Float(lo), Num::Float(hi))) => {
                        (Num::Float(lo.min(v)), Num::Float(hi.max(v)))
                    }
                    Some(r) => r,
                });
            }
        }
        DataType::UInt64 => {
            // Beyond i64: kept as floats, widened by one unit of their precision.
            let f = cast(a, &DataType::Float64)?;
            let f = f.as_primitive::<Float64Type>();
            for i in (0..f.len()).filter(|&i| f.is_valid(i)) {
                let v = f.value(i);
                let (lo, hi) = (
                    v - v.abs() * f64::EPSILON - 1.0,
                    v + v.abs() * f64::EPSILON + 1.0,
                );
                z.range = Some(match z.range {
                    None => (Num::Float(lo), Num::Float(hi)),
                    Some((Num::Float(a), Num::Float(b))) => {
                        (Num::Float(a.min(lo)), Num::Float(b.max(hi)))
                    }
                    Some(r) => r,
                });
            }
        }
        _ => {
            let v = cast(a, &DataType::Int64)?;
            let v = v.as_primitive::<Int64Type>();
            for i in (0..v.len()).filter(|&i| v.is_valid(i)) {
                let x = v.value(i);
                z.range = Some(match z.range {
                    None => (Num::Int(x), Num::Int(x)),
                    Some((Num::Int(lo), Num::Int(hi))) => {
                        (Num::Int(lo.min(x)), Num::Int(hi.max(x)))
                    }
                    Some(r) => r,
                });
            }
        }
    }
    Ok(z)
}

/// A literal as a number of the column's domain, or `None` (not a number, or not exact).
fn literal(s: &ScalarValue) -> Option<Num> {
    Some(match s {
        ScalarValue::Int8(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int16(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int32(Some(v)) => Num::Int((*v).into()),
        ScalarValue::Int64(Some(v)) => Num::Int(*v),
        ScalarValue::UInt8(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt16(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt32(Some(v)) => Num::Int((*v).into()),
        ScalarValue::UInt64(Some(v)) => Num::Int(i64::try_from(*v).ok()?),
        ScalarValue::Float32(Some(v)) if v.is_finite() => Num::Float((*v).into()),
        ScalarValue::Float64(Some(v)) if v.is_finite() => Num::Float(*v),
        _ => return None,
    })
}

/// `column op literal` terms of a filter (its AND-ed parts), with the column's name; other
/// parts are left out (they prune nothing).
fn terms(e: &Expr, out: &mut Vec<(String, Operator, Num)>) {
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
    let flip = |op: Operator| match op {
        Operator::Lt => Operator::Gt,
        Operator::LtEq => Operator::GtEq,
        Operator::Gt => Operator::Lt,
        Operator::GtEq => Operator::LtEq,
        o => o,
    };
    let (col, op, lit) = match (left.as_ref(), right.as_ref()) {
        (Expr::Column(c), Expr::Literal(l, _)) => (c, *op, l),
        (Expr::Literal(l, _), Expr::Column(c)) => (c, flip(*op), l),
        _ => return,
    };
    if !matches!(
        op,
        Operator::Eq | Operator::Lt | Operator::LtEq | Operator::Gt | Operator::GtEq
    ) {
        return;
    }
    if let Some(v) = literal(lit) {
        out.push((col.name.clone(), op, v));
    }
}

/// Whether a filter has a part the zones can use.
pub(crate) fn usable(e: &Expr) -> bool {
    let mut t = Vec::new();
    terms(e, &mut t);
    !t.is_empty()
}

/// Zone maps of a table's columns, computed once each.
#[derive(Debug, Default)]
pub(crate) struct Zones(Mutex<HashMap<String, Arc<ZoneMap>>>);

impl Zones {
    fn get(&self, opened: &Opened, column: &str, dt: &DataType, unit: u64) -> Result<Arc<ZoneMap>> {
        if let Some(z) = self.0.lock().unwrap_or_else(|e| e.into_inner()).get(column) {
            return Ok(z.clone());
        }
        let z = Arc::new(ZoneMap::compute(opened, column, dt, unit)?);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(column.to_string(), z.clone());
        Ok(z)
    }

    /// The row ranges of `opened` (zones of `unit` rows) that the AND of `filters` may
    /// match, merged; every row when no filter part can prune.
    pub(crate) fn ranges(
        &self,
        opened: &Opened,
        schema: &Schema,
        filters: &[Expr],
        unit: u64,
    ) -> Result<Vec<Range<u64>>> {
        let n = opened.n_rows();
        let nzones = n.div_ceil(unit.max(1)) as usize;
        let mut keep = vec![true; nzones];
        let mut all = Vec::new();
        for f in filters {
            terms(f, &mut all);
        }
        for (col, op, v) in all {
            let Ok(field) = schema.field_with_name(&col) else {
                continue;
            };
            if !prunable(field.data_type()) {
                continue;
            }
            let z = self.get(opened, &col, field.data_type(), unit)?;
            if z.unit == unit && z.zones.len() == nzones {
                z.keep(op, v, &mut keep);
            }
        }
        let mut out: Vec<Range<u64>> = Vec::new();
        for (k, _) in keep.iter().enumerate().filter(|(_, &k)| k) {
            let r = k as u64 * unit..((k as u64 + 1) * unit).min(n);
            match out.last_mut() {
                Some(last) if last.end == r.start => last.end = r.end,
                _ => out.push(r),
            }
        }
        Ok(out)
    }
}
