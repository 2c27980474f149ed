//! Rows as Arrow: the SQL schema of a table or an array, and any range of its rows as a
//! [`RecordBatch`] of some of its columns.
//!
//! Tables: b2nd's Arrow form of each column ([`b2nd::Table::rows_to_arrow`]): numbers,
//! bools, timestamps, fixed-width strings and bytes, `ndarray` and `utf8` columns read only the
//! blocks holding the rows; `dictionary`, `list`, `vlstring` and `vlbytes` columns are
//! converted once per opened table and sliced.
//!
//! Arrays: one row per element in C order; `i0`, `i1`, … (`UInt64`) are its indices and
//! `value` its number or bool. Only the value column reads data; the indices are computed.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use b2nd::{Array, ColumnKind, Dtype, SliceItem, Table};
use datafusion::arrow::array::{ArrayRef, BooleanArray, PrimitiveArray, UInt64Array};
use datafusion::arrow::datatypes::{
    DataType, Field, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type, Int8Type, Schema,
    SchemaRef, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};

pub(crate) fn ext(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::External(e.to_string().into())
}

/// Columns converted whole, per opened table (kinds without row-range reads).
#[derive(Debug, Default)]
pub(crate) struct WholeColumns(Mutex<HashMap<String, ArrayRef>>);

impl WholeColumns {
    fn get(&self, t: &Table, name: &str) -> Result<ArrayRef> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = m.get(name) {
            return Ok(a.clone());
        }
        let a = t.column_to_arrow(name).map_err(ext)?;
        m.insert(name.to_string(), a.clone());
        Ok(a)
    }
}

/// Whether a column's rows are read by range (else converted whole and sliced).
fn by_range(c: &b2nd::Column) -> bool {
    c.is_fixed_width() || (c.kind() == &ColumnKind::Utf8 && c.computed().is_none())
}

/// The SQL schema of a table: one nullable field per column, its b2nd Arrow type.
pub(crate) fn table_schema(t: &Table, whole: &WholeColumns) -> Result<SchemaRef> {
    let mut fields = Vec::with_capacity(t.columns().len());
    for c in t.columns() {
        let unevaluated = c.computed().is_some_and(|cc| cc.evaluable().is_err());
        let dt = match c.kind() {
            // A computed column b2nd cannot evaluate keeps its place and type; only a query
            // that reads it fails, naming it.
            k if unevaluated => kind_type(k).unwrap_or(DataType::Null),
            ColumnKind::String => DataType::Utf8View,
            ColumnKind::Utf8 | ColumnKind::VlString => DataType::Utf8,
            ColumnKind::VlBytes => DataType::Binary,
            ColumnKind::Dictionary => {
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
            }
            // A column with no Arrow form (object, struct, complex) keeps its place as a
            // NULL-typed column: only a query that reads it fails, naming it and its kind.
            _ if by_range(c) => t
                .rows_to_arrow(c.name(), 0..0)
                .map_or(DataType::Null, |a| a.data_type().clone()),
            // Lists: the item type comes from the items.
            _ => whole
                .get(t, c.name())
                .map_or(DataType::Null, |a| a.data_type().clone()),
        };
        fields.push(Field::new(c.name(), dt, true));
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// The Arrow type of a numeric or bool column kind.
fn kind_type(kind: &ColumnKind) -> Option<DataType> {
    Some(match kind {
        ColumnKind::Bool => DataType::Boolean,
        ColumnKind::Int8 => DataType::Int8,
        ColumnKind::Int16 => DataType::Int16,
        ColumnKind::Int32 => DataType::Int32,
        ColumnKind::Int64 => DataType::Int64,
        ColumnKind::UInt8 => DataType::UInt8,
        ColumnKind::UInt16 => DataType::UInt16,
        ColumnKind::UInt32 => DataType::UInt32,
        ColumnKind::UInt64 => DataType::UInt64,
        ColumnKind::Float16 => DataType::Float16,
        ColumnKind::Float32 => DataType::Float32,
        ColumnKind::Float64 => DataType::Float64,
        _ => return None,
    })
}

/// Live rows `rows` of the table's columns named in `schema`.
pub(crate) fn table_batch(
    t: &Table,
    whole: &WholeColumns,
    schema: &SchemaRef,
    rows: Range<u64>,
) -> Result<RecordBatch> {
    let mut arrays = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        arrays.push(table_rows(t, whole, f.name(), rows.clone())?);
    }
    batch(schema, arrays, rows.end - rows.start)
}

/// Live rows `rows` of the table's column `name`.
pub(crate) fn table_rows(
    t: &Table,
    whole: &WholeColumns,
    name: &str,
    rows: Range<u64>,
) -> Result<ArrayRef> {
    let c = t.column(name).map_err(ext)?;
    Ok(if by_range(c) {
        t.rows_to_arrow(name, rows).map_err(ext)?
    } else {
        whole
            .get(t, name)?
            .slice(rows.start as usize, (rows.end - rows.start) as usize)
    })
}

/// A batch of `schema` of `n` rows.
pub(crate) fn batch(schema: &SchemaRef, arrays: Vec<ArrayRef>, n: u64) -> Result<RecordBatch> {
    let options =
        datafusion::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(n as usize));
    RecordBatch::try_new_with_options(schema.clone(), arrays, &options).map_err(Into::into)
}

/// The Arrow type of an array's elements, or why it has none here.
fn value_type(d: &Dtype) -> std::result::Result<DataType, String> {
    let s = d.to_numpy_str();
    Ok(match s.get(1..).unwrap_or("") {
        "b1" => DataType::Boolean,
        "i1" => DataType::Int8,
        "i2" => DataType::Int16,
        "i4" => DataType::Int32,
        "i8" => DataType::Int64,
        "u1" => DataType::UInt8,
        "u2" => DataType::UInt16,
        "u4" => DataType::UInt32,
        "u8" => DataType::UInt64,
        "f4" => DataType::Float32,
        "f8" => DataType::Float64,
        _ => {
            return Err(format!(
                "an array of dtype {s} has no SQL form here (numbers and bools only)"
            ))
        }
    })
}

/// The SQL schema of an array: `i0`, … `i{ndim-1}` and `value`.
pub(crate) fn array_schema(a: &Array) -> Result<SchemaRef> {
    let dt = value_type(a.dtype()).map_err(|e| ext(format!("{}: {e}", a.source())))?;
    let mut fields: Vec<Field> = (0..a.ndim())
        .map(|d| Field::new(format!("i{d}"), DataType::UInt64, false))
        .collect();
    fields.push(Field::new("value", dt, false));
    Ok(Arc::new(Schema::new(fields)))
}

/// Elements `rows` (C order; whole rows of the first dimension) of the array's columns
/// named in `schema`.
pub(crate) fn array_batch(a: &Array, schema: &SchemaRef, rows: Range<u64>) -> Result<RecordBatch> {
    let shape = a.shape();
    let n = rows.end - rows.start;
    let mut arrays: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        let name = f.name().as_str();
        if name == "value" {
            arrays.push(values(a, rows.clone())?);
            continue;
        }
        let d: usize = name
            .strip_prefix('i')
            .and_then(|x| x.parse().ok())
            .filter(|&d| d < shape.len())
            .ok_or_else(|| ext(format!("{}: no column {name:?}", a.source())))?;
        // Index along dimension d of flat position p: (p / stride) % side.
        let stride: u64 = shape[d + 1..].iter().product();
        let side = shape[d].max(1);
        let idx: UInt64Array = (rows.clone()).map(|p| (p / stride.max(1)) % side).collect();
        arrays.push(Arc::new(idx));
    }
    batch(schema, arrays, n)
}

/// The values of elements `rows` (flat, C order): the rows of the first dimension they
/// touch are read, and cut to `rows` (a limit may end mid-row).
fn values(a: &Array, rows: Range<u64>) -> Result<ArrayRef> {
    let shape = a.shape();
    let inner: u64 = shape.get(1..).unwrap_or(&[]).iter().product::<u64>().max(1);
    let (first, last) = (rows.start / inner, rows.end.div_ceil(inner));
    let sel: Vec<SliceItem> = if shape.is_empty() {
        Vec::new()
    } else {
        vec![SliceItem::Range {
            start: Some(first as i64),
            stop: Some(last as i64),
            step: 1,
        }]
    };
    let whole = whole_rows(a, &sel)?;
    let skip = (rows.start - first * inner) as usize;
    let len = (rows.end - rows.start) as usize;
    if skip + len > whole.len() {
        return Err(ext(format!(
            "{}: elements {rows:?} beyond the {} read",
            a.source(),
            whole.len()
        )));
    }
    Ok(whole.slice(skip, len))
}

/// The elements of selection `sel` as one Arrow array of the array's value type.
fn whole_rows(a: &Array, sel: &[SliceItem]) -> Result<ArrayRef> {
    macro_rules! prim {
        ($t:ty, $e:ty) => {{
            let v: Vec<$e> = a.read_slice(sel).map_err(ext)?;
            Arc::new(PrimitiveArray::<$t>::from(v)) as ArrayRef
        }};
    }
    Ok(match value_type(a.dtype()).map_err(ext)? {
        DataType::Boolean => {
            let v: Vec<bool> = a.read_slice(sel).map_err(ext)?;
            Arc::new(BooleanArray::from(v))
        }
        DataType::Int8 => prim!(Int8Type, i8),
        DataType::Int16 => prim!(Int16Type, i16),
        DataType::Int32 => prim!(Int32Type, i32),
        DataType::Int64 => prim!(Int64Type, i64),
        DataType::UInt8 => prim!(UInt8Type, u8),
        DataType::UInt16 => prim!(UInt16Type, u16),
        DataType::UInt32 => prim!(UInt32Type, u32),
        DataType::UInt64 => prim!(UInt64Type, u64),
        DataType::Float32 => prim!(Float32Type, f32),
        DataType::Float64 => prim!(Float64Type, f64),
        other => return Err(ext(format!("no values of type {other}"))),
    })
}
