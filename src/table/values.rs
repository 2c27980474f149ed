//! Values of every column kind as python reads them: strings, validity (mask and sentinel
//! nulls), and any column as [`Value`]s.

#![forbid(unsafe_code)]

use super::{number, rows_slice, ColumnKind, Table};
use crate::error::Result;
use crate::format::ctable::Part;
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;

impl Table {
    /// A text column's live rows as strings, `None` for nulls, whatever its kind: `string`
    /// (fixed-width `U`), `utf8`, `vlstring` or `dictionary` (of strings).
    pub fn read_strings(&self, name: &str) -> Result<Vec<Option<String>>> {
        let c = self.column(name)?;
        match &c.kind {
            ColumnKind::Utf8 => self.read_utf8(name),
            ColumnKind::String | ColumnKind::VlString | ColumnKind::Dictionary => {
                let valid = if c.kind == ColumnKind::String {
                    self.read_validity(name)?
                } else {
                    None
                };
                self.read_values(name)?
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        _ if valid.as_ref().is_some_and(|ok| !ok[i]) => Ok(None),
                        Value::Str(s) => Ok(Some(s)),
                        Value::Nil => Ok(None),
                        other => Err(self.bad(name, format!("row {i}: {other:?}, not a string"))),
                    })
                    .collect()
            }
            other => Err(self.bad(name, format!("a {other} column, not a text column"))),
        }
    }

    /// Which live rows of column `name` hold a value (`true`) rather than a null; `None`
    /// when the column is not nullable. Mask-stored nulls come from the `.notnull` array
    /// (absent: no nulls), sentinel-stored ones from comparing with `null_value` (`NaN`
    /// matching any NaN).
    pub fn read_validity(&self, name: &str) -> Result<Option<Vec<bool>>> {
        self.read_validity_rows(name, 0..self.valid.live())
    }

    /// [`Table::read_validity`] for live rows `rows` only (only the chunks of the mask, or
    /// of the column for sentinel nulls, holding them are read).
    pub fn read_validity_rows(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<Option<Vec<bool>>> {
        let c = self.column(name)?.clone();
        self.check_live_rows(&rows)?;
        let n = (rows.end - rows.start) as usize;
        if !c.nullable && c.null_value.is_none() {
            return Ok(None);
        }
        let mask_key = self.key(name, Part::NotNull);
        if self.store.contains(&mask_key) {
            let m = self.shared_array(&mask_key)?;
            if m.ndim() != 1 || m.dtype_str() != "|b1" || m.shape()[0] < self.physical_rows() {
                return Err(self.bad(
                    name,
                    format!(
                        "its `.notnull` mask is {} of shape {:?}",
                        m.dtype_str(),
                        m.shape()
                    ),
                ));
            }
            if let Some(span) = self.valid.consecutive(rows.clone()) {
                if span.is_empty() {
                    return Ok(Some(Vec::new()));
                }
                let bytes = m.read_slice_bytes(&rows_slice(&span))?;
                return Ok(Some(bytes.iter().map(|&b| b != 0).collect()));
            }
            let picked = self.live_range(rows.clone());
            let (Some(&first), Some(&last)) = (picked.first(), picked.last()) else {
                return Ok(Some(Vec::new()));
            };
            let span = m.read_slice_bytes(&[crate::model::selection::SliceItem::Range {
                start: Some(first as i64),
                stop: Some(last as i64 + 1),
                step: 1,
            }])?;
            return Ok(Some(picked.iter().map(|&i| span[i - first] != 0).collect()));
        }
        if matches!(
            c.kind,
            ColumnKind::Dictionary
                | ColumnKind::List
                | ColumnKind::VlString
                | ColumnKind::VlBytes
                | ColumnKind::Object
                | ColumnKind::Struct
        ) {
            // Nulls in the items themselves: a dictionary code of -1, a nil item.
            let values = self.read_values(name)?;
            return Ok(Some(
                values[rows.start as usize..rows.end as usize]
                    .iter()
                    .map(|v| !v.is_nil())
                    .collect(),
            ));
        }
        let Some(sentinel) = &c.null_value else {
            // Mask storage with no mask written yet (or no sentinel): every row holds a value.
            return Ok(Some(vec![true; n]));
        };
        if c.kind == ColumnKind::Utf8 {
            let Value::Str(sentinel) = sentinel else {
                return Err(self.bad(
                    name,
                    format!("a utf8 column whose null_value {sentinel:?} is not a string"),
                ));
            };
            let strings = self.utf8_rows(name, rows)?;
            return Ok(Some(
                (0..strings.len())
                    .map(|i| strings.row(i) != sentinel.as_bytes())
                    .collect(),
            ));
        }
        let (dtype, shape, bytes) = self.read_rows_bytes(name, rows)?;
        if shape.len() != 1 {
            return Err(self.bad(name, "sentinel nulls on an ndarray column".into()));
        }
        sentinel_validity(&dtype, &bytes, sentinel)
            .map(Some)
            .map_err(|why| self.bad(name, why))
    }

    /// Any column's live rows as msgpack-style values, as python-blosc2's `t[name][:]` gives
    /// them: `Nil` for nulls. Variable-length kinds (`list`, `vlstring`, `vlbytes`,
    /// `object`, `struct`) come from their BatchArray / ListArray (one item per physical
    /// row), `dictionary` columns from their int32 codes (-1: null) and their values,
    /// `utf8` from offsets and bytes, fixed-width columns from their numbers, bools and
    /// strings (other fixed-width dtypes: read them with [`Table::read_column_bytes`]).
    pub fn read_values(&self, name: &str) -> Result<Vec<Value>> {
        let c = self.column(name)?.clone();
        match &c.kind {
            ColumnKind::Utf8 => Ok(self
                .read_utf8(name)?
                .into_iter()
                .map(|s| s.map_or(Value::Nil, Value::Str))
                .collect()),
            ColumnKind::Dictionary => {
                let codes_arr = self.store.open_array(&self.key(name, Part::Values))?;
                if codes_arr.dtype_str() != "<i4" || codes_arr.ndim() != 1 {
                    return Err(self.bad(
                        name,
                        format!(
                            "dictionary codes are {} of shape {:?}, not 1-d int32",
                            codes_arr.dtype_str(),
                            codes_arr.shape()
                        ),
                    ));
                }
                let codes: Vec<i32> = codes_arr.read()?;
                if (codes.len() as u64) < self.physical_rows() {
                    return Err(self.bad(
                        name,
                        format!("{} codes for {} rows", codes.len(), self.physical_rows()),
                    ));
                }
                let values = self
                    .store
                    .open_schunk(&self.key(name, Part::Dict))?
                    .read_objects()?;
                self.live()
                    .map(|i| match codes[i] {
                        -1 => Ok(Value::Nil),
                        k => usize::try_from(k)
                            .ok()
                            .and_then(|k| values.get(k))
                            .cloned()
                            .ok_or_else(|| {
                                self.bad(
                                    name,
                                    format!(
                                        "row {i}: code {k} outside its {} values",
                                        values.len()
                                    ),
                                )
                            }),
                    })
                    .collect()
            }
            ColumnKind::List
            | ColumnKind::VlString
            | ColumnKind::VlBytes
            | ColumnKind::Object
            | ColumnKind::Struct => {
                let items = self
                    .store
                    .open_schunk(&self.key(name, Part::Values))?
                    .read_objects()?;
                if (items.len() as u64) < self.physical_rows() {
                    return Err(self.bad(
                        name,
                        format!(
                            "{} stored rows for the table's {}",
                            items.len(),
                            self.physical_rows()
                        ),
                    ));
                }
                Ok(self.live().map(|i| items[i].clone()).collect())
            }
            _ => {
                let (dtype, shape, bytes) = self.read_column_bytes(name)?;
                if shape.len() != 1 {
                    return Err(self.bad(
                        name,
                        "an ndarray column: read it with read_column_bytes".into(),
                    ));
                }
                let s = dtype.to_numpy_str();
                let isz = dtype.itemsize().max(1);
                let values: Vec<Value> = if matches!(s.as_bytes()[1], b'U' | b'S') {
                    crate::read::typed::strings(&dtype, &bytes, "String")?
                        .into_iter()
                        .map(Value::Str)
                        .collect()
                } else {
                    bytes
                        .chunks_exact(isz)
                        .map(|b| number(&s, b))
                        .collect::<Option<_>>()
                        .ok_or_else(|| {
                            self.bad(
                                name,
                                format!("{s} values: read them with read_column_bytes"),
                            )
                        })?
                };
                let valid = self.read_validity(name)?;
                Ok(values
                    .into_iter()
                    .enumerate()
                    .map(|(i, v)| match &valid {
                        Some(ok) if !ok[i] => Value::Nil,
                        _ => v,
                    })
                    .collect())
            }
        }
    }
}

/// Which items of a 1-d column (`bytes`, its raw values) differ from the sentinel (`NaN`
/// matching any NaN).
pub(super) fn sentinel_validity(
    dtype: &Dtype,
    bytes: &[u8],
    sentinel: &Value,
) -> std::result::Result<Vec<bool>, String> {
    let isz = dtype.itemsize();
    if isz == 0 {
        return Err("a zero-size dtype".into());
    }
    let s = dtype.to_numpy_str();
    if matches!(s.as_bytes().get(1), Some(b'U' | b'S')) {
        let target = match sentinel {
            Value::Str(t) => t.clone(),
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => return Err(format!("sentinel {other:?} on a {s} column")),
        };
        let strings =
            crate::read::typed::strings(dtype, bytes, "String").map_err(|e| e.to_string())?;
        return Ok(strings.iter().map(|v| *v != target).collect());
    }
    let differs = |v: Value| -> Option<bool> {
        Some(match (v, sentinel) {
            (Value::Float(x), t) => {
                let t = t.as_f64()?;
                if t.is_nan() {
                    !x.is_nan()
                } else {
                    x != t
                }
            }
            (Value::Bool(x), Value::Bool(t)) => x != *t,
            (Value::Bool(x), t) => u64::from(x) != t.as_u64()?,
            (v, t) => match (v.as_i64(), t.as_i64()) {
                (Some(a), Some(b)) => a != b,
                _ => v.as_u64()? != t.as_u64()?,
            },
        })
    };
    bytes
        .chunks_exact(isz)
        .map(|b| number(&s, b).and_then(differs))
        .collect::<Option<_>>()
        .ok_or_else(|| format!("sentinel {sentinel:?} on a {s} column"))
}
