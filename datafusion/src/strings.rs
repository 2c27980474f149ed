//! Filters over one fixed-width string column evaluated in the scan: DataFusion pushes a
//! filter's conjuncts into the scan, and one that reads a single `Utf8View` column and is
//! deterministic (`cat = 'beta'`, `LIKE`, `IN`, ...) becomes a [`StringFilter`]. Where a
//! batch of the column holds a few distinct strings
//! ([`b2nd::Table::string_rows`]), the filter is evaluated on those few values
//! and each row takes its value's answer; a batch no row of which passes is skipped before
//! any other column is read; the other columns are read and filtered by the rows that pass.
//! Elsewhere the filter is evaluated on the column's rows. Either way the scan's rows are
//! exactly the rows that pass (the filter is reported pushed down, DataFusion drops it).

use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanArray, DictionaryArray, UInt32Array,
};
use datafusion::arrow::compute::{and, concat, filter, prep_null_mask_filter, take};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, UInt32Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::Volatility;
use datafusion::physical_expr::expressions as px;
use datafusion::physical_expr::{PhysicalExpr, ScalarFunctionExpr};
use datafusion::physical_expr_common::physical_expr::snapshot_generation;

use b2nd::StringRows;

use crate::rows::{batch, ext, table_rows};
use crate::source::Opened;

/// A filter over one string column of a scan, evaluated in the scan.
#[derive(Debug, Clone)]
pub(crate) struct StringFilter {
    /// The filter over the scan's columns (as DataFusion pushed it).
    pub(crate) expr: Arc<dyn PhysicalExpr>,
    /// The column's name and position in the scan's columns.
    column: (String, usize),
    /// The filter over a batch of that column alone (its column at position 0).
    on_column: Arc<dyn PhysicalExpr>,
}

impl StringFilter {
    /// The filter `expr` over `schema` (the scan's columns), when it reads one `Utf8View`
    /// column, is deterministic and of the expression kinds below, and gives bools.
    pub(crate) fn of(expr: &Arc<dyn PhysicalExpr>, schema: &Schema) -> Option<StringFilter> {
        if snapshot_generation(expr) != 0
            || !matches!(expr.data_type(schema).ok()?, DataType::Boolean)
        {
            return None;
        }
        let mut column: Option<(String, usize)> = None;
        let mut ok = true;
        expr.apply(|e| {
            if let Some(c) = e.downcast_ref::<px::Column>() {
                let this = (c.name().to_string(), c.index());
                ok &= column.as_ref().is_none_or(|k| *k == this);
                column = Some(this);
            } else if let Some(f) = e.downcast_ref::<ScalarFunctionExpr>() {
                ok &= f.fun().signature().volatility == Volatility::Immutable;
            } else {
                ok &= e.downcast_ref::<px::Literal>().is_some()
                    || e.downcast_ref::<px::BinaryExpr>().is_some()
                    || e.downcast_ref::<px::LikeExpr>().is_some()
                    || e.downcast_ref::<px::InListExpr>().is_some()
                    || e.downcast_ref::<px::NotExpr>().is_some()
                    || e.downcast_ref::<px::IsNullExpr>().is_some()
                    || e.downcast_ref::<px::IsNotNullExpr>().is_some()
                    || e.downcast_ref::<px::CastExpr>().is_some()
                    || e.downcast_ref::<px::TryCastExpr>().is_some()
                    || e.downcast_ref::<px::CaseExpr>().is_some();
            }
            Ok(if ok {
                TreeNodeRecursion::Continue
            } else {
                TreeNodeRecursion::Stop
            })
        })
        .ok()?;
        let (name, index) = column.filter(|_| ok)?;
        let field = schema.fields().get(index)?;
        if field.name() != &name || field.data_type() != &DataType::Utf8View {
            return None;
        }
        let on_column = Arc::clone(expr)
            .transform(|e| {
                Ok(match e.downcast_ref::<px::Column>() {
                    Some(c) => Transformed::yes(Arc::new(px::Column::new(c.name(), 0)) as _),
                    None => Transformed::no(e),
                })
            })
            .ok()?
            .data;
        Some(StringFilter {
            expr: Arc::clone(expr),
            column: (name, index),
            on_column,
        })
    }

    /// The filter's answer for each row of `values` (the column's rows or distinct strings):
    /// true where it passes, false where it fails or is NULL.
    fn passes(&self, values: ArrayRef) -> Result<BooleanArray> {
        let schema = Arc::new(Schema::new(vec![Field::new(
            &self.column.0,
            DataType::Utf8View,
            true,
        )]));
        let n = values.len();
        let b = RecordBatch::try_new(schema, vec![values])?;
        let out = self.on_column.evaluate(&b)?.into_array(n)?;
        let out = out.as_boolean_opt().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "b2nd scan: the filter {} gave {}, not bools",
                self.expr,
                out.data_type()
            ))
        })?;
        Ok(match out.nulls() {
            Some(_) => prep_null_mask_filter(out),
            None => out.clone(),
        })
    }
}

/// A string column as read for a filter: a dictionary of its few strings, or its rows.
enum Read {
    Keyed(DictionaryArray<UInt32Type>),
    Rows(ArrayRef),
}

impl Read {
    /// Which rows pass `f`.
    fn passes(&self, f: &StringFilter) -> Result<BooleanArray> {
        match self {
            Read::Rows(a) => f.passes(Arc::clone(a)),
            Read::Keyed(d) => {
                // The few strings and a NULL after them; each row's answer is its key's
                // (a NULL row the NULL's).
                let values = d.values();
                let with_null = concat(&[values.as_ref(), &new_null_array(values.data_type(), 1)])?;
                let answers = f.passes(with_null)?;
                let null_key = values.len() as u32;
                let keys = d.keys();
                let keys: UInt32Array = if keys.null_count() == 0 {
                    keys.clone()
                } else {
                    keys.iter().map(|k| Some(k.unwrap_or(null_key))).collect()
                };
                Ok(take(&answers, &keys, None)?.as_boolean().clone())
            }
        }
    }

    /// The column's rows that pass (`mask`).
    fn rows(&self, mask: &BooleanArray) -> Result<ArrayRef> {
        Ok(match self {
            Read::Rows(a) => filter(a, mask)?,
            Read::Keyed(d) => take(d.values(), &filter(d.keys(), mask)?, None)?,
        })
    }
}

/// Rows `rows` of `schema`'s columns of `opened` that pass every filter of `filters`, or
/// `None` when none does.
pub(crate) fn filtered_batch(
    opened: &Opened,
    schema: &SchemaRef,
    rows: Range<u64>,
    filters: &[StringFilter],
) -> Result<Option<RecordBatch>> {
    let Opened::Table(t, whole) = opened else {
        // An array's columns are numbers and bools: no string filter is made for them.
        return Err(DataFusionError::Internal(
            "b2nd scan: a string filter over an array".into(),
        ));
    };
    let mut read: Vec<Option<Read>> = (0..schema.fields().len()).map(|_| None).collect();
    let mut mask: Option<BooleanArray> = None;
    for f in filters {
        let (name, i) = &f.column;
        let slot = read.get_mut(*i).ok_or_else(|| {
            DataFusionError::Internal(format!("b2nd scan: no column {i} for {}", f.expr))
        })?;
        if slot.is_none() {
            *slot = Some(match t.string_rows(name, rows.clone()).map_err(ext)? {
                Some(StringRows::Dictionary(d)) => Read::Keyed(d),
                Some(StringRows::Views(a)) => Read::Rows(a),
                None => Read::Rows(table_rows(t, whole, name, rows.clone())?),
            });
        }
        let m = slot.as_ref().expect("read above").passes(f)?;
        let m = match mask {
            Some(k) => and(&k, &m)?,
            None => m,
        };
        if m.true_count() == 0 {
            return Ok(None);
        }
        mask = Some(m);
    }
    let mut arrays = Vec::with_capacity(read.len());
    for (f, r) in schema.fields().iter().zip(read) {
        let r = match r {
            Some(r) => r,
            None => Read::Rows(table_rows(t, whole, f.name(), rows.clone())?),
        };
        arrays.push(match &mask {
            Some(m) => r.rows(m)?,
            None => match r {
                Read::Rows(a) => a,
                Read::Keyed(d) => take(d.values(), d.keys(), None)?,
            },
        });
    }
    let n = mask
        .as_ref()
        .map_or(rows.end - rows.start, |m| m.true_count() as u64);
    batch(schema, arrays, n).map(Some)
}
