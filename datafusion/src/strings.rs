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
use datafusion::arrow::buffer::{BooleanBuffer, Buffer};
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
                keyed_answers(d.keys(), &answers)
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

/// Each row's answer from its key's: `answers[k]` for key `k`, the last answer for a NULL
/// row. With at most 64 answers, a bitmask looked up 64 rows at a time; else a take.
fn keyed_answers(keys: &UInt32Array, answers: &BooleanArray) -> Result<BooleanArray> {
    let n = keys.len();
    let null_answer = answers
        .len()
        .checked_sub(1)
        .is_some_and(|i| answers.value(i));
    let on_values = answers.len().saturating_sub(1);
    if answers.len() > 64 {
        let null_key = on_values as u32;
        let keys: UInt32Array = keys.iter().map(|k| Some(k.unwrap_or(null_key))).collect();
        return Ok(take(answers, &keys, None)?.as_boolean().clone());
    }
    // Bit `k` of `bits`: string `k` passes (a key beyond the strings fails).
    let bits = (0..on_values)
        .filter(|&k| answers.value(k))
        .fold(0u64, |b, k| b | 1 << k);
    let of_keys = if bits == 0 {
        BooleanBuffer::new_unset(n)
    } else {
        // 64 rows to a word, without a branch (a key beyond 63 fails).
        let words: Vec<u64> = keys
            .values()
            .chunks(64)
            .map(|c| {
                c.iter().enumerate().fold(0u64, |w, (j, &k)| {
                    let pass = (bits >> (k & 63)) & u64::from(k < 64);
                    w | (pass & 1) << j
                })
            })
            .collect();
        BooleanBuffer::new(Buffer::from_vec(words), 0, n)
    };
    let rows = match keys.nulls() {
        None => of_keys,
        // A NULL row's key is any: the NULL's answer is put in its place.
        Some(valid) if null_answer => &of_keys | &!valid.inner(),
        Some(valid) => &of_keys & valid.inner(),
    };
    Ok(BooleanArray::new(rows, None))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_answers_are_each_rows_keys_answer() {
        // Keys of 3 and of 70 strings, every 5th row NULL (its key left at a value of its
        // own), each string's answer drawn; the NULL's answer both ways.
        let mut x = 0x9E37_79B9u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for strings in [1usize, 3, 63, 64, 70] {
            for null_answer in [false, true] {
                let n = 1000;
                let keys: Vec<u32> = (0..n).map(|_| (next() % strings as u64) as u32).collect();
                let valid: Vec<bool> = (0..n).map(|i| i % 5 != 0).collect();
                let keys = UInt32Array::new(keys.into(), Some(valid.clone().into()));
                let mut answers: Vec<bool> = (0..strings).map(|_| next() % 2 == 0).collect();
                answers.push(null_answer);
                let got = keyed_answers(&keys, &BooleanArray::from(answers.clone())).unwrap();
                let want: Vec<Option<bool>> = (0..n)
                    .map(|i| {
                        Some(match valid[i] {
                            true => answers[keys.value(i) as usize],
                            false => null_answer,
                        })
                    })
                    .collect();
                assert_eq!(got, BooleanArray::from(want), "{strings} strings");
                assert_eq!(got.null_count(), 0);
            }
        }
    }
}
