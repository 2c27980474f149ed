//! A [`Table`] as an Arrow [`RecordBatch`] (feature `arrow`): live rows only, nulls as
//! Arrow validity.
//!
//! | column kind | Arrow type |
//! |---|---|
//! | `int8` ... `uint64`, `float16`, `float32`, `float64`, `bool` | the same primitive / `Boolean` |
//! | `string` (fixed width) | `Utf8View` |
//! | `utf8`, `vlstring` | `Utf8` |
//! | `bytes`, `vlbytes` | `Binary` |
//! | `timestamp` | `Timestamp` of the column's unit |
//! | `dictionary` | `Dictionary(Int32, Utf8)` |
//! | `list` of numbers, bools or strings | `List` of `Int64`, `Float64`, `Boolean` or `Utf8` |
//! | `ndarray` of numbers or bools, item shape `(a, b, ...)` | `FixedSizeList(a)` of `FixedSizeList(b)` ... of the primitive |
//!
//! Other kinds (complex numbers, `object`, `struct`, lists of anything else) are refused by
//! name, never dropped.

#![forbid(unsafe_code)]

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, StringBuilder,
    StringDictionaryBuilder,
};
use arrow_array::types::*;
use arrow_array::{
    Array as _, ArrayRef, BinaryArray, BooleanArray, FixedSizeListArray, LargeStringArray,
    PrimitiveArray, RecordBatch, StringArray, StringViewArray, StructArray, UInt32Array,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};

use super::ColumnKind;
use arrow_schema::{Field, Schema};

use super::Table;
use crate::error::{Error, Result};
use crate::format::ctable::Part;
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::element::Element;

impl Table {
    /// Every column as one Arrow array in a [`RecordBatch`], in schema order.
    ///
    /// ```
    /// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
    /// let batch = t.to_record_batch_of(&["id", "score", "txt", "tag", "items"])?;
    /// assert_eq!(batch.num_rows() as u64, t.n_rows());
    /// assert_eq!(batch.column(1).null_count(), 1);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn to_record_batch(&self) -> Result<RecordBatch> {
        let names: Vec<String> = self
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        self.to_record_batch_of(&refs)
    }

    /// The columns `names`, in that order, as a [`RecordBatch`].
    pub fn to_record_batch_of(&self, names: &[&str]) -> Result<RecordBatch> {
        let mut fields = Vec::with_capacity(names.len());
        let mut arrays = Vec::with_capacity(names.len());
        for name in names {
            let a = self.column_to_arrow(name)?;
            fields.push(Field::new(
                *name,
                a.data_type().clone(),
                a.null_count() > 0 || self.column(name)?.nullable(),
            ));
            arrays.push(a);
        }
        RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
            .map_err(|e| Error::InvalidArgument(format!("arrow record batch: {e}")))
    }

    /// Column `name`'s live rows as an Arrow array (see the module table for the types).
    pub fn column_to_arrow(&self, name: &str) -> Result<ArrayRef> {
        self.rows_to_arrow(name, 0..self.n_rows())
    }

    /// Live rows `rows` of column `name` as an Arrow array (see the module table for the
    /// types). Numbers, bools, timestamps, fixed-width strings and bytes, `ndarray` and
    /// `utf8` columns read only the blocks holding those rows (values and nulls); the other
    /// kinds are converted whole and sliced.
    ///
    /// ```
    /// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
    /// let all = t.column_to_arrow("score")?;
    /// let part = t.rows_to_arrow("score", 1..3)?;
    /// assert_eq!(part.to_data(), all.slice(1, 2).to_data());
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn rows_to_arrow(&self, name: &str, rows: std::ops::Range<u64>) -> Result<ArrayRef> {
        let c = self.column(name)?.clone();
        if c.kind == ColumnKind::Utf8 && c.computed.is_none() {
            return self.utf8_to_arrow(name, rows);
        }
        if !c.is_fixed_width() {
            if rows.start > rows.end || rows.end > self.n_rows() {
                return Err(Error::InvalidArgument(format!(
                    "rows {}..{} of a table of {} rows",
                    rows.start,
                    rows.end,
                    self.n_rows()
                )));
            }
            let whole = self.whole_column_to_arrow(name)?;
            return Ok(whole.slice(rows.start as usize, (rows.end - rows.start) as usize));
        }
        let valid = self.read_validity_rows(name, rows.clone())?;
        let ok = |i: usize| valid.as_ref().is_none_or(|v| v[i]);
        // Values straight into Arrow's buffer, nulls as a bitmap: no per-row work.
        fn prim<T, E>(
            t: &Table,
            name: &str,
            rows: std::ops::Range<u64>,
            valid: Option<&[bool]>,
        ) -> Result<ArrayRef>
        where
            T: ArrowPrimitiveType<Native = E>,
            E: Element + Default + arrow_buffer::ArrowNativeType,
        {
            let v: Vec<E> = t.read_rows(name, rows)?;
            let nulls = valid
                .filter(|v| v.contains(&false))
                .map(|v| NullBuffer::from(v.to_vec()));
            Ok(Arc::new(PrimitiveArray::<T>::new(v.into(), nulls)))
        }
        let r = rows.clone();
        let unsupported =
            |what: &str| self.bad(name, format!("a {what} column has no Arrow form here"));
        Ok(match c.kind() {
            ColumnKind::Int8 => prim::<Int8Type, i8>(self, name, r, valid.as_deref())?,
            ColumnKind::Int16 => prim::<Int16Type, i16>(self, name, r, valid.as_deref())?,
            ColumnKind::Int32 => prim::<Int32Type, i32>(self, name, r, valid.as_deref())?,
            ColumnKind::Int64 => prim::<Int64Type, i64>(self, name, r, valid.as_deref())?,
            ColumnKind::UInt8 => prim::<UInt8Type, u8>(self, name, r, valid.as_deref())?,
            ColumnKind::UInt16 => prim::<UInt16Type, u16>(self, name, r, valid.as_deref())?,
            ColumnKind::UInt32 => prim::<UInt32Type, u32>(self, name, r, valid.as_deref())?,
            ColumnKind::UInt64 => prim::<UInt64Type, u64>(self, name, r, valid.as_deref())?,
            ColumnKind::Float16 => {
                let (_, _, bytes) = self.read_rows_bytes(name, r)?;
                let v: Vec<half::f16> = bytes
                    .chunks_exact(2)
                    .map(|b| half::f16::from_le_bytes([b[0], b[1]]))
                    .collect();
                let nulls = valid
                    .as_deref()
                    .filter(|v| v.contains(&false))
                    .map(|v| NullBuffer::from(v.to_vec()));
                Arc::new(PrimitiveArray::<Float16Type>::new(v.into(), nulls))
            }
            ColumnKind::Float32 => prim::<Float32Type, f32>(self, name, r, valid.as_deref())?,
            ColumnKind::Float64 => prim::<Float64Type, f64>(self, name, r, valid.as_deref())?,
            ColumnKind::Bool => {
                // Packed 64 rows to a word, nulls as a bitmap (a builder per row was a quarter
                // of a bool filter's time).
                let v: Vec<bool> = self.read_rows(name, r)?;
                let values = arrow_buffer::BooleanBuffer::collect_bool(v.len(), |i| v[i]);
                let nulls = valid
                    .as_deref()
                    .filter(|v| v.contains(&false))
                    .map(|v| NullBuffer::from(v.to_vec()));
                Arc::new(BooleanArray::new(values, nulls))
            }
            ColumnKind::Timestamp => self.timestamps_to_arrow(name, r, c.unit.as_deref(), &ok)?,
            ColumnKind::Bytes => {
                let (dtype, _, bytes) = self.read_rows_bytes(name, r)?;
                let isz = dtype.itemsize().max(1);
                let rows: Vec<Option<Vec<u8>>> = bytes
                    .chunks_exact(isz)
                    .enumerate()
                    .map(|(i, b)| {
                        // NumPy `S` items drop their trailing NULs.
                        let end = b.iter().rposition(|&x| x != 0).map_or(0, |p| p + 1);
                        ok(i).then(|| b[..end].to_vec())
                    })
                    .collect();
                Arc::new(BinaryArray::from_iter(rows))
            }
            ColumnKind::NdArray => self.ndarrays_to_arrow(name, r, valid)?,
            ColumnKind::String => self.strings_to_arrow(name, r, valid)?,
            other => return Err(unsupported(other.as_str())),
        })
    }

    /// A column of the kinds read whole (strings, `utf8`, `vlstring`, `vlbytes`,
    /// `dictionary`, `list`) as one Arrow array.
    fn whole_column_to_arrow(&self, name: &str) -> Result<ArrayRef> {
        let c = self.column(name)?.clone();
        let values = || self.read_values(name);
        let unsupported =
            |what: &str| self.bad(name, format!("a {what} column has no Arrow form here"));
        Ok(match c.kind() {
            ColumnKind::String | ColumnKind::VlString => {
                let v = values()?;
                let a: StringArray = v
                    .iter()
                    .map(|x| match x {
                        Value::Str(s) => Ok(Some(s.as_str())),
                        Value::Nil => Ok(None),
                        other => Err(self.bad(name, format!("a non-string value {other:?}"))),
                    })
                    .collect::<Result<_>>()?;
                Arc::new(a)
            }
            ColumnKind::VlBytes => {
                let rows: Vec<Option<Vec<u8>>> = values()?
                    .into_iter()
                    .map(|x| match x {
                        Value::Bytes(b) => Ok(Some(b)),
                        Value::Nil => Ok(None),
                        other => Err(self.bad(name, format!("a non-bytes value {other:?}"))),
                    })
                    .collect::<Result<_>>()?;
                Arc::new(BinaryArray::from_iter(rows))
            }
            ColumnKind::Dictionary => {
                let mut b = StringDictionaryBuilder::<Int32Type>::new();
                for x in values()? {
                    match x {
                        Value::Str(s) => {
                            b.append(&s)
                                .map_err(|e| self.bad(name, format!("arrow: {e}")))?;
                        }
                        Value::Nil => b.append_null(),
                        other => {
                            return Err(self.bad(name, format!("a non-string value {other:?}")))
                        }
                    }
                }
                Arc::new(b.finish())
            }
            ColumnKind::Struct => {
                let spec = c.spec.clone();
                struct_array(&spec, values()?).map_err(|why| self.bad(name, why))?
            }
            ColumnKind::List => match self.stored_arrow(name)? {
                Some(a) => a,
                None => list_array(self, name, values()?)?,
            },
            other => return Err(unsupported(other.as_str())),
        })
    }
}

impl Table {
    /// Live rows `rows` of a `utf8` column as Arrow strings, from their offsets and bytes
    /// alone; nulls from the mask or the sentinel.
    fn utf8_to_arrow(&self, name: &str, rows: std::ops::Range<u64>) -> Result<ArrayRef> {
        let strings = self.utf8_rows(name, rows.clone())?;
        let valid = match self.utf8_sentinel_validity(name, &strings)? {
            Some(v) => Some(v),
            None => self.read_validity_rows(name, rows)?,
        };
        let nulls = valid.filter(|v| v.contains(&false)).map(NullBuffer::from);
        let too_large = || {
            self.bad(
                name,
                format!(
                    "{} bytes of strings: more than one Arrow string array holds; read fewer rows",
                    strings.bytes.len()
                ),
            )
        };
        let offsets: Vec<i32> = strings
            .offsets
            .iter()
            .map(|&o| i32::try_from(o))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| too_large())?;
        // Offsets in order from 0 and within the bytes (`utf8_rows`); Arrow checks the UTF-8.
        StringArray::try_new(
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            arrow_buffer::Buffer::from_vec(strings.bytes),
            nulls,
        )
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| self.bad(name, format!("not UTF-8 ({e})")))
    }

    /// An Arrow-serialized column's live rows as the Arrow array python-blosc2 stored (list
    /// and struct items keep their Arrow types); `None` for columns stored otherwise.
    fn stored_arrow(&self, name: &str) -> Result<Option<ArrayRef>> {
        let sc = self.store.open_schunk(&self.key(name, Part::Values))?;
        let Some(all) = sc.read_arrow_array()? else {
            return Ok(None);
        };
        let physical = self.physical_rows();
        if (all.len() as u64) < physical {
            return Err(self.bad(
                name,
                format!("{} stored rows for the table's {physical}", all.len()),
            ));
        }
        let mut keep = vec![false; all.len()];
        for i in self.live() {
            keep[i] = true;
        }
        arrow_select::filter::filter(all.as_ref(), &BooleanArray::from(keep))
            .map(Some)
            .map_err(|e| self.bad(name, format!("arrow: {e}")))
    }

    /// A timestamp column's live rows `rows` in `unit` (`s`, `ms`, `us` or `ns`).
    fn timestamps_to_arrow(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        unit: Option<&str>,
        ok: &dyn Fn(usize) -> bool,
    ) -> Result<ArrayRef> {
        let (dtype, _, bytes) = self.read_rows_bytes(name, rows)?;
        if !dtype.to_numpy_str().starts_with("<M8") {
            // Stored as anything but little-endian int64, its items are not the
            // unit counts read below.
            return Err(self.bad(
                name,
                format!("a timestamp column stored as {}", dtype.to_numpy_str()),
            ));
        }
        let raw: Vec<Option<i64>> = bytes
            .chunks_exact(8)
            .enumerate()
            .map(|(i, b)| ok(i).then(|| i64::from_le_bytes(b.try_into().expect("8"))))
            .collect();
        let a: ArrayRef = match unit {
            Some("s") => Arc::new(PrimitiveArray::<TimestampSecondType>::from(raw)),
            Some("ms") => Arc::new(PrimitiveArray::<TimestampMillisecondType>::from(raw)),
            Some("us") => Arc::new(PrimitiveArray::<TimestampMicrosecondType>::from(raw)),
            Some("ns") => Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(raw)),
            other => {
                return Err(self.bad(
                    name,
                    format!("a timestamp[{other:?}] column has no Arrow form here"),
                ))
            }
        };
        Ok(a)
    }

    /// Live rows `rows` of a fixed-width `string` column (NumPy `U`): a dictionary of its
    /// few distinct strings (string views) and each row's key (nulls on the keys) when the
    /// rows hold at most 32 distinct strings, else every row's view; `None` for another
    /// kind of column. A predicate over the column can then be evaluated on the few values
    /// alone.
    ///
    /// ```
    /// use arrow_array::Array;
    /// use b2nd::StringRows;
    /// let t = b2nd::Table::open("tests/data/tables/basic.b2z")?;
    /// let Some(StringRows::Dictionary(d)) = t.string_rows("name", 0..t.n_rows())? else {
    ///     panic!("few names")
    /// };
    /// assert_eq!(d.len() as u64, t.n_rows());
    /// let whole = t.rows_to_arrow("name", 0..t.n_rows())?;
    /// let taken = arrow_select::take::take(d.values(), d.keys(), None)?;
    /// assert_eq!(taken.to_data(), whole.to_data());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn string_rows(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
    ) -> Result<Option<StringRows>> {
        if !matches!(self.column(name)?.kind(), ColumnKind::String) {
            return Ok(None);
        }
        let valid = self.read_validity_rows(name, rows.clone())?;
        let mut bytes = CODE_POINTS.take();
        let r = self.strings_of(name, rows, valid, &mut bytes);
        if bytes.capacity() <= KEPT_CODE_POINTS {
            CODE_POINTS.set(bytes);
        }
        r.map(Some)
    }

    /// Rows of a fixed-width `string` column (NumPy `U`) as Arrow string views: its code
    /// points decoded into one UTF-8 buffer, each row a view (short strings, up to 12 bytes,
    /// held in the view itself), nulls as a bitmap.
    fn strings_to_arrow(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        valid: Option<Vec<bool>>,
    ) -> Result<ArrayRef> {
        let mut bytes = CODE_POINTS.take();
        let r = self.strings_of(name, rows, valid, &mut bytes);
        if bytes.capacity() <= KEPT_CODE_POINTS {
            CODE_POINTS.set(bytes);
        }
        let bad = |e: arrow_schema::ArrowError| self.bad(name, format!("arrow: {e}"));
        match r? {
            // Each row's view taken from the few distinct ones (no conversion per row).
            StringRows::Dictionary(d) => {
                arrow_select::take::take(d.values(), d.keys(), None).map_err(bad)
            }
            StringRows::Views(v) => Ok(v),
        }
    }

    /// A `string` column's rows read into `bytes`: a dictionary of a batch's few distinct
    /// strings (python's category-like columns: only those few converted), else views of
    /// every row. Rows of Latin-1 strings are read one byte a character
    /// ([`Table::read_rows_latin1_into`]), others four.
    fn strings_of(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        valid: Option<Vec<bool>>,
        bytes: &mut Vec<u8>,
    ) -> Result<StringRows> {
        let nulls = valid.map(NullBuffer::from);
        let bad = |e: arrow_schema::ArrowError| self.bad(name, format!("arrow: {e}"));
        if self.read_rows_latin1_into(name, rows.clone(), bytes)? {
            let Dtype::Unicode { chars, order } = self.column_dtype(name)?.0 else {
                return Err(self.bad(name, "a string column of another dtype".into()));
            };
            // The few distinct strings found among 1-byte characters, and only they (or, with
            // many, every row) turned back into code points.
            if let Some((distinct, keys)) = few_distinct(bytes, chars, FEW_DISTINCT) {
                let units = widen(&distinct.concat());
                let (utf8, offsets) = crate::read::typed::ucs4_to_utf8(chars, order, &units)?;
                return dictionary(utf8, offsets, keys, nulls).map_err(bad);
            }
            let units = widen(bytes);
            return string_views(chars, order, &units, nulls, &bad);
        }
        let (dtype, _) = self.read_rows_bytes_into(name, rows, bytes)?;
        let bytes = &bytes[..];
        let Dtype::Unicode { chars, order } = dtype else {
            return Err(self.bad(
                name,
                format!("a string column of dtype {}", dtype.to_numpy_str()),
            ));
        };
        // A code unit that is no character fails below, naming its row.
        if let Some((distinct, keys)) = few_distinct(bytes, chars * 4, FEW_DISTINCT) {
            if let Ok((utf8, offsets)) =
                crate::read::typed::ucs4_to_utf8(chars, order, &distinct.concat())
            {
                return dictionary(utf8, offsets, keys, nulls).map_err(bad);
            }
        }
        string_views(chars, order, bytes, nulls, &bad)
    }

    /// An ndarray column's live rows `rows` as nested fixed-size lists (nulls on the rows only).
    fn ndarrays_to_arrow(
        &self,
        name: &str,
        rows: std::ops::Range<u64>,
        valid: Option<Vec<bool>>,
    ) -> Result<ArrayRef> {
        let (dtype, shape, bytes) = self.read_rows_bytes(name, rows)?;
        let mut a = flat_array(&dtype, &bytes).ok_or_else(|| {
            self.bad(
                name,
                format!(
                    "a ndarray of {} column has no Arrow form here",
                    dtype.to_numpy_str()
                ),
            )
        })?;
        // Innermost dimension first; nulls only on the rows (the outermost list).
        for (d, &side) in shape.iter().enumerate().skip(1).rev() {
            let size = i32::try_from(side)
                .map_err(|_| self.bad(name, format!("an item dimension of {side}")))?;
            let nulls = (d == 1)
                .then(|| valid.clone().map(arrow_buffer::NullBuffer::from))
                .flatten();
            let field = Arc::new(Field::new_list_field(
                a.data_type().clone(),
                d > 1 || a.null_count() > 0,
            ));
            a = Arc::new(
                FixedSizeListArray::try_new(field, size, a, nulls)
                    .map_err(|e| self.bad(name, format!("arrow: {e}")))?,
            );
        }
        Ok(a)
    }
}

/// Values (one per row, `Nil` for null) of a struct column or field described by schema
/// entry `spec` (`{"kind": "struct", "fields": [{"name", "kind", ...}, ...]}`) as an Arrow
/// `StructArray`, each field typed by its kind; a number or string field is its Arrow
/// type, a row's missing key a null.
fn struct_array(spec: &Value, rows: Vec<Value>) -> std::result::Result<ArrayRef, String> {
    use arrow_schema::Fields;
    let specs = spec
        .get("fields")
        .and_then(Value::as_slice)
        .ok_or("a struct column without `fields` in its schema")?;
    let mut fields = Vec::with_capacity(specs.len());
    let mut children = Vec::with_capacity(specs.len());
    for f in specs {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a struct field without a name")?;
        let vals: Vec<Value> = rows
            .iter()
            .map(|r| match r {
                Value::Map(m) => m
                    .iter()
                    .find(|(k, _)| k.as_str() == Some(name))
                    .map_or(Value::Nil, |(_, v)| v.clone()),
                _ => Value::Nil,
            })
            .collect();
        let a = field_array(f, vals).map_err(|why| format!("field {name:?}: {why}"))?;
        fields.push(Field::new(name, a.data_type().clone(), true));
        children.push(a);
    }
    for (i, r) in rows.iter().enumerate() {
        if !matches!(r, Value::Map(_) | Value::Nil) {
            return Err(format!("row {i} is not a dict: {r:?}"));
        }
    }
    let nulls = NullBuffer::from(rows.iter().map(|r| !r.is_nil()).collect::<Vec<bool>>());
    let nulls = (nulls.null_count() > 0).then_some(nulls);
    if fields.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(rows.len(), nulls)));
    }
    StructArray::try_new(Fields::from(fields), children, nulls)
        .map(|a| Arc::new(a) as ArrayRef)
        .map_err(|e| format!("arrow: {e}"))
}

/// One struct field's values as the Arrow array of its schema kind.
fn field_array(spec: &Value, vals: Vec<Value>) -> std::result::Result<ArrayRef, String> {
    let kind = spec.get("kind").and_then(Value::as_str).unwrap_or("?");
    let wrong = |v: &Value| format!("a {kind} field holding {v:?}");
    macro_rules! prim {
        ($t:ty, $get:expr) => {{
            let v: std::result::Result<Vec<_>, String> = vals
                .iter()
                .map(|x| {
                    if x.is_nil() {
                        Ok(None)
                    } else {
                        $get(x).map(Some).ok_or_else(|| wrong(x))
                    }
                })
                .collect();
            Arc::new(PrimitiveArray::<$t>::from(v?)) as ArrayRef
        }};
    }
    let int = |x: &Value| x.as_i64();
    let uint = |x: &Value| x.as_u64();
    Ok(match kind {
        "int8" => prim!(Int8Type, |x: &Value| int(x)
            .and_then(|v| i8::try_from(v).ok())),
        "int16" => prim!(Int16Type, |x: &Value| int(x)
            .and_then(|v| i16::try_from(v).ok())),
        "int32" => prim!(Int32Type, |x: &Value| int(x)
            .and_then(|v| i32::try_from(v).ok())),
        "int64" => prim!(Int64Type, int),
        "uint8" => prim!(UInt8Type, |x: &Value| uint(x)
            .and_then(|v| u8::try_from(v).ok())),
        "uint16" => prim!(UInt16Type, |x: &Value| uint(x)
            .and_then(|v| u16::try_from(v).ok())),
        "uint32" => prim!(UInt32Type, |x: &Value| uint(x)
            .and_then(|v| u32::try_from(v).ok())),
        "uint64" => prim!(UInt64Type, uint),
        "float32" => prim!(Float32Type, |x: &Value| x.as_f64().map(|v| v as f32)),
        "float64" => prim!(Float64Type, |x: &Value| x.as_f64()),
        "bool" => {
            let v: std::result::Result<Vec<Option<bool>>, String> = vals
                .iter()
                .map(|x| match x {
                    Value::Nil => Ok(None),
                    x => x.as_bool().map(Some).ok_or_else(|| wrong(x)),
                })
                .collect();
            Arc::new(BooleanArray::from(v?))
        }
        "string" | "vlstring" | "utf8" => {
            let v: std::result::Result<Vec<Option<&str>>, String> = vals
                .iter()
                .map(|x| match x {
                    Value::Nil => Ok(None),
                    x => x.as_str().map(Some).ok_or_else(|| wrong(x)),
                })
                .collect();
            Arc::new(StringArray::from(v?))
        }
        "bytes" | "vlbytes" => {
            let v: std::result::Result<Vec<Option<&[u8]>>, String> = vals
                .iter()
                .map(|x| match x {
                    Value::Nil => Ok(None),
                    Value::Bytes(b) => Ok(Some(b.as_slice())),
                    x => Err(wrong(x)),
                })
                .collect();
            Arc::new(BinaryArray::from(v?))
        }
        "struct" => struct_array(spec, vals)?,
        other => return Err(format!("a {other} field has no Arrow form here")),
    })
}

/// Items of a number or bool dtype (`bytes`, C order) as one flat Arrow array.
fn flat_array(dtype: &crate::model::dtype::Dtype, bytes: &[u8]) -> Option<ArrayRef> {
    let s = dtype.to_numpy_str();
    let isz = dtype.itemsize().max(1);
    let items = || bytes.chunks_exact(isz).map(|b| super::number(&s, b));
    macro_rules! prim {
        ($t:ty, $get:expr) => {{
            let v: Option<Vec<_>> = items().map(|x| x.and_then($get)).collect();
            Arc::new(PrimitiveArray::<$t>::from(v?)) as ArrayRef
        }};
    }
    Some(match &s[1..] {
        "b1" => Arc::new(BooleanArray::from(
            items()
                .map(|x| x.and_then(|v| v.as_bool()))
                .collect::<Option<Vec<bool>>>()?,
        )),
        "i1" => prim!(Int8Type, |v: Value| v
            .as_i64()
            .and_then(|x| i8::try_from(x).ok())),
        "i2" => prim!(Int16Type, |v: Value| v
            .as_i64()
            .and_then(|x| i16::try_from(x).ok())),
        "i4" => prim!(Int32Type, |v: Value| v
            .as_i64()
            .and_then(|x| i32::try_from(x).ok())),
        "i8" => prim!(Int64Type, |v: Value| v.as_i64()),
        "u1" => prim!(UInt8Type, |v: Value| v
            .as_u64()
            .and_then(|x| u8::try_from(x).ok())),
        "u2" => prim!(UInt16Type, |v: Value| v
            .as_u64()
            .and_then(|x| u16::try_from(x).ok())),
        "u4" => prim!(UInt32Type, |v: Value| v
            .as_u64()
            .and_then(|x| u32::try_from(x).ok())),
        "u8" => prim!(UInt64Type, |v: Value| v.as_u64()),
        "f4" => prim!(Float32Type, |v: Value| v.as_f64().map(|x| x as f32)),
        "f8" => prim!(Float64Type, |v: Value| v.as_f64()),
        _ => return None,
    })
}

/// A list column as an Arrow list of the one element type its items share.
fn list_array(t: &Table, name: &str, rows: Vec<Value>) -> Result<ArrayRef> {
    let items = || rows.iter().filter_map(|r| r.as_slice()).flatten();
    let all = |f: fn(&Value) -> bool| items().all(|x| x.is_nil() || f(x));
    let bad_row = |r: &Value| t.bad(name, format!("a list row that is not a list: {r:?}"));
    macro_rules! build {
        ($builder:expr, $push:expr) => {{
            let mut b = ListBuilder::new($builder);
            for r in &rows {
                match r {
                    Value::Nil => b.append_null(),
                    Value::Array(xs) | Value::Tuple(xs) => {
                        for x in xs {
                            $push(b.values(), x);
                        }
                        b.append(true);
                    }
                    other => return Err(bad_row(other)),
                }
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    Ok(if all(|x| matches!(x, Value::Int(_))) {
        build!(Int64Builder::new(), |b: &mut Int64Builder, x: &Value| b
            .append_option(x.as_i64()))
    } else if all(|x| matches!(x, Value::Int(_) | Value::Float(_))) {
        build!(
            Float64Builder::new(),
            |b: &mut Float64Builder, x: &Value| b.append_option(x.as_f64())
        )
    } else if all(|x| matches!(x, Value::Bool(_))) {
        build!(
            BooleanBuilder::new(),
            |b: &mut BooleanBuilder, x: &Value| b.append_option(x.as_bool())
        )
    } else if all(|x| matches!(x, Value::Str(_))) {
        build!(StringBuilder::new(), |b: &mut StringBuilder, x: &Value| b
            .append_option(x.as_str()))
    } else {
        return Err(t.bad(
            name,
            "a list column of mixed or nested items has no Arrow form here".into(),
        ));
    })
}

/// Strings (`utf8` cut at `offsets`) as string views and each row's key among them, nulls on
/// the keys.
fn dictionary(
    utf8: Vec<u8>,
    offsets: Vec<usize>,
    keys: Vec<u32>,
    nulls: Option<NullBuffer>,
) -> std::result::Result<StringRows, arrow_schema::ArrowError> {
    let offsets = offsets.iter().map(|&o| o as i32).collect::<Vec<_>>();
    let strings = StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        arrow_buffer::Buffer::from_vec(utf8),
        None,
    )?;
    let keys = UInt32Array::new(ScalarBuffer::from(keys), nulls);
    let values: ArrayRef = Arc::new(StringViewArray::from(&strings));
    arrow_array::DictionaryArray::try_new(keys, values).map(StringRows::Dictionary)
}

/// Every row of `units` (code points of `chars` characters a row) as a string view.
fn string_views(
    chars: usize,
    order: crate::model::dtype::ByteOrder,
    units: &[u8],
    nulls: Option<NullBuffer>,
    bad: &dyn Fn(arrow_schema::ArrowError) -> crate::error::Error,
) -> Result<StringRows> {
    let (utf8, offsets) = crate::read::typed::ucs4_to_utf8(chars, order, units)?;
    // One UTF-8 check of the whole buffer (as a string array), then views of it: Arrow's
    // string views built one by one check each string again.
    let values = arrow_buffer::Buffer::from_vec(utf8);
    let views = match i32::try_from(values.len()) {
        Ok(_) => {
            let offsets = offsets.iter().map(|&o| o as i32).collect::<Vec<_>>();
            let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
            StringViewArray::from(&StringArray::try_new(offsets, values, nulls).map_err(bad)?)
        }
        Err(_) => {
            let offsets = offsets.iter().map(|&o| o as i64).collect::<Vec<_>>();
            let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
            let strings = LargeStringArray::try_new(offsets, values, nulls).map_err(bad)?;
            StringViewArray::from(&strings)
        }
    };
    Ok(StringRows::Views(Arc::new(views)))
}

/// Latin-1 bytes back to little-endian 4-byte code units (each byte its own code point).
fn widen(latin1: &[u8]) -> Vec<u8> {
    latin1.iter().flat_map(|&b| [b, 0, 0, 0]).collect()
}

/// A `string` column's rows as [`Table::string_rows`] reads them.
#[derive(Debug)]
pub enum StringRows {
    /// A few distinct strings (string views) and each row's key, nulls on the keys.
    Dictionary(arrow_array::DictionaryArray<UInt32Type>),
    /// Every row's string view, nulls included.
    Views(ArrayRef),
}

/// At most this many distinct strings in a batch make it a take of their views.
const FEW_DISTINCT: usize = 32;

thread_local! {
    /// Each thread's buffer for the code points of the string rows it converts, kept from
    /// one batch of rows to the next (its pages written once, not for every batch).
    static CODE_POINTS: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The largest [`CODE_POINTS`] buffer a thread keeps (64 MiB).
const KEPT_CODE_POINTS: usize = 64 << 20;

/// The distinct items of `raw` (items of `item` bytes each), in first-seen order, and each
/// item's index among them; `None` when there are more than `max` (or no items of bytes).
/// An item's first 8 bytes pick a slot of a small table holding the index last seen
/// there; the item is then compared whole with that one.
fn few_distinct(raw: &[u8], item: usize, max: usize) -> Option<(Vec<&[u8]>, Vec<u32>)> {
    if item == 0 || !raw.len().is_multiple_of(item) {
        return None;
    }
    // Items of whole 8-byte words (NumPy `U` of an even length) compared as word arrays.
    match item {
        8 => few_distinct_words::<1>(raw, max),
        16 => few_distinct_words::<2>(raw, max),
        24 => few_distinct_words::<3>(raw, max),
        32 => few_distinct_words::<4>(raw, max),
        40 => few_distinct_words::<5>(raw, max),
        48 => few_distinct_words::<6>(raw, max),
        56 => few_distinct_words::<7>(raw, max),
        64 => few_distinct_words::<8>(raw, max),
        _ => few_distinct_bytes(raw, item, max),
    }
}

/// The slot of [`few_distinct`]'s table for an item starting with `head`.
fn slot(head: u64) -> usize {
    (head.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize
}

/// Slots of [`few_distinct`]'s table (the 6 bits [`slot`] keeps).
const SLOTS: usize = 64;

/// [`few_distinct`] of items of `W` words.
fn few_distinct_words<const W: usize>(raw: &[u8], max: usize) -> Option<(Vec<&[u8]>, Vec<u32>)> {
    let words = |it: &[u8]| -> [u64; W] {
        let mut w = [0u64; W];
        for (x, b) in w.iter_mut().zip(it.chunks_exact(8)) {
            *x = u64::from_ne_bytes(b.try_into().unwrap_or_default());
        }
        w
    };
    few_distinct_by(raw, W * 8, max, words, |w| w[0])
}

/// [`few_distinct`] of items of any length.
fn few_distinct_bytes(raw: &[u8], item: usize, max: usize) -> Option<(Vec<&[u8]>, Vec<u32>)> {
    let head = |it: &&[u8]| {
        let mut w = [0u8; 8];
        let n = item.min(8);
        w[..n].copy_from_slice(&it[..n]);
        u64::from_ne_bytes(w)
    };
    few_distinct_by(raw, item, max, |it| it, head)
}

/// [`few_distinct`] with items compared as the keys `key` makes of them, `head` a key's
/// first 8 bytes.
fn few_distinct_by<'a, K: PartialEq>(
    raw: &'a [u8],
    item: usize,
    max: usize,
    key: impl Fn(&'a [u8]) -> K,
    head: impl Fn(&K) -> u64,
) -> Option<(Vec<&'a [u8]>, Vec<u32>)> {
    let mut slots = [u32::MAX; SLOTS];
    let mut seen: Vec<K> = Vec::new();
    let mut distinct: Vec<&[u8]> = Vec::new();
    let mut keys = Vec::with_capacity(raw.len() / item);
    for it in raw.chunks_exact(item) {
        let w = key(it);
        let s = slot(head(&w));
        let k = slots[s] as usize;
        let k = if seen.get(k) == Some(&w) {
            k
        } else {
            let k = match seen.iter().position(|d| *d == w) {
                Some(k) => k,
                None if seen.len() == max => return None,
                None => {
                    seen.push(w);
                    distinct.push(it);
                    seen.len() - 1
                }
            };
            slots[s] = k as u32;
            k
        };
        keys.push(k as u32);
    }
    Some((distinct, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distinct items and keys by the plain definition.
    fn naive(raw: &[u8], item: usize, max: usize) -> Option<(Vec<&[u8]>, Vec<u32>)> {
        let mut distinct: Vec<&[u8]> = Vec::new();
        let mut keys = Vec::new();
        for it in raw.chunks_exact(item) {
            let k = match distinct.iter().position(|d| *d == it) {
                Some(k) => k,
                None if distinct.len() == max => return None,
                None => {
                    distinct.push(it);
                    distinct.len() - 1
                }
            };
            keys.push(k as u32);
        }
        Some((distinct, keys))
    }

    #[test]
    fn few_distinct_is_the_plain_definition() {
        // Items differing in any byte (the first 8 alike for many), of every length up to 72.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut checked = 0;
        for item in 1..=72usize {
            for kinds in [1usize, 3, 31, 32, 33] {
                let proto: Vec<Vec<u8>> = (0..kinds)
                    .map(|_| {
                        let mut v = vec![7u8; item];
                        let at = (next() as usize) % item;
                        v[at] = (next() % 4) as u8;
                        v
                    })
                    .collect();
                let raw: Vec<u8> = (0..300)
                    .flat_map(|_| proto[(next() as usize) % kinds].clone())
                    .collect();
                assert_eq!(
                    few_distinct(&raw, item, FEW_DISTINCT),
                    naive(&raw, item, FEW_DISTINCT),
                    "items of {item} bytes, {kinds} kinds"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 72 * 5);
        assert_eq!(few_distinct(&[1, 2, 3], 2, 4), None);
        assert_eq!(few_distinct(&[], 0, 4), None);
    }
}
