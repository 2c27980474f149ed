//! [`TableBuilder`]: writing CTables python-blosc2 opens as its own (the layout
//! [`crate::Table`] reads): a TreeStore with the `_meta` manifest (`kind`, `version`,
//! `schema`), `_valid_rows`, and one array per column under `_cols`, plus a `.notnull` mask
//! for nullable columns and the offsets / bytes pair of `utf8` columns.

#![forbid(unsafe_code)]

use super::builder::ArrayBuilder;
use super::store::StoreBuilder;
use crate::error::Error;
use crate::error::Result;
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::element::Element;
use crate::store::StoreKind;
use std::path::Path;

/// One column to write.
#[derive(Debug, Clone)]
struct ColumnData {
    name: String,
    /// The schema kind (`int64`, `string`, `utf8`, ...).
    kind: String,
    /// Extra schema fields (`max_length`).
    extra: Vec<(String, Value)>,
    /// Fixed-width values (a CFrame per array) keyed by the suffix of their storage key.
    arrays: Vec<(Part, Vec<u8>)>,
    nullable: bool,
    /// The SUMMARY index python-blosc2 builds for numeric and bool columns.
    summary: Option<Summary>,
}

/// A column's SUMMARY index (see [`super::summary`]): its records and the geometry it was
/// built for.
#[derive(Debug, Clone)]
struct Summary {
    /// The column's dtype string (`<i8`, `|b1`, ...).
    dtype: String,
    records: Vec<u8>,
    nsegments: usize,
    /// The column array's shape, chunks and blocks (one dimension).
    geometry: [u64; 3],
    null_aware: bool,
}

/// A CTable to write: columns of equal length, written as a `.b2z` or `.b2d`.
///
/// ```
/// use b2nd::{Table, TableBuilder};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.b2z");
/// TableBuilder::new()
///     .column("id", &[1i64, 2, 3])?
///     .nullable_column("score", &[0.5f64, 0.0, 2.5], &[true, false, true])?
///     .utf8_column("name", &[Some("a"), None, Some("héllo")])?
///     .write(&path)?;
/// let t = Table::open(&path)?;
/// assert_eq!(t.read_column::<i64>("id")?, [1, 2, 3]);
/// assert_eq!(t.read_validity("score")?, Some(vec![true, false, true]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct TableBuilder {
    columns: Vec<ColumnData>,
    rows: Option<u64>,
    overwrite: bool,
}

/// The schema kind of a column of this dtype, and extra schema fields.
pub(crate) fn kind_of(dtype: &Dtype) -> Result<(String, Vec<(String, Value)>)> {
    let s = dtype.to_numpy_str();
    let kind = match &s[1..] {
        "b1" => "bool",
        "i1" => "int8",
        "i2" => "int16",
        "i4" => "int32",
        "i8" => "int64",
        "u1" => "uint8",
        "u2" => "uint16",
        "u4" => "uint32",
        "u8" => "uint64",
        "f4" => "float32",
        "f8" => "float64",
        "c8" => "complex64",
        "c16" => "complex128",
        _ => {
            if let Dtype::Unicode { chars, .. } = dtype {
                return Ok((
                    "string".into(),
                    vec![("max_length".into(), Value::Int(*chars as i64))],
                ));
            }
            return Err(Error::InvalidArgument(format!(
                "a table column of dtype {s} (numbers, bool and U strings are written)"
            )));
        }
    };
    Ok((kind.into(), Vec::new()))
}

impl TableBuilder {
    /// An empty table.
    pub fn new() -> TableBuilder {
        TableBuilder::default()
    }

    /// Replace an existing target (default: refuse it).
    pub fn overwrite(mut self, overwrite: bool) -> TableBuilder {
        self.overwrite = overwrite;
        self
    }

    fn rows(&mut self, name: &str, n: u64) -> Result<()> {
        if self.columns.iter().any(|c| c.name == name) {
            return Err(Error::InvalidArgument(format!(
                "column {name:?} added twice"
            )));
        }
        // Dots nest columns in python-blosc2 (struct fields), which this builder does not write.
        if name.is_empty() || name.contains(['\0', '.', '/', '\\']) {
            return Err(Error::InvalidArgument(format!(
                "column name {name:?}: empty, or holding one of NUL . / \\"
            )));
        }
        match self.rows {
            Some(r) if r != n => Err(Error::InvalidArgument(format!(
                "column {name:?} has {n} rows, the table {r}"
            ))),
            _ => {
                self.rows = Some(n);
                Ok(())
            }
        }
    }

    /// Add a column of numbers or bools.
    pub fn column<T: Element>(self, name: &str, values: &[T]) -> Result<TableBuilder> {
        self.fixed(
            name,
            T::dtype(),
            &T::as_bytes(values),
            values.len() as u64,
            None,
        )
    }

    /// Add a nullable column (nulls in a `.notnull` mask: `valid[i]` is `false` for a null;
    /// the value stored there is kept as given).
    pub fn nullable_column<T: Element>(
        self,
        name: &str,
        values: &[T],
        valid: &[bool],
    ) -> Result<TableBuilder> {
        if valid.len() != values.len() {
            return Err(Error::InvalidArgument(format!(
                "column {name:?}: {} validity flags for {} values",
                valid.len(),
                values.len()
            )));
        }
        self.fixed(
            name,
            T::dtype(),
            &T::as_bytes(values),
            values.len() as u64,
            Some(valid),
        )
    }

    /// Add a fixed-width column from raw C-order bytes of `dtype` (numbers, bool, or `U`
    /// strings, whose schema kind is `string` with `max_length`).
    pub fn column_bytes(self, name: &str, dtype: Dtype, bytes: &[u8]) -> Result<TableBuilder> {
        let isz = dtype.itemsize().max(1);
        if !bytes.len().is_multiple_of(isz) {
            return Err(Error::InvalidArgument(format!(
                "column {name:?}: {} bytes are not whole items of {isz}",
                bytes.len()
            )));
        }
        let n = (bytes.len() / isz) as u64;
        self.fixed(name, dtype, bytes, n, None)
    }

    fn fixed(
        mut self,
        name: &str,
        dtype: Dtype,
        bytes: &[u8],
        n: u64,
        valid: Option<&[bool]>,
    ) -> Result<TableBuilder> {
        self.rows(name, n)?;
        let (kind, extra) = kind_of(&dtype)?;
        let frame = ArrayBuilder::new(&[n], dtype.clone()).bytes_to_vec(bytes)?;
        let summary = {
            let col = crate::array::Array::from_bytes(frame.clone())?;
            let geometry = [n, col.chunks()[0], col.blocks()[0]];
            super::summary::column_summaries(&dtype, bytes, valid, geometry[2] as usize).map(
                |(records, nsegments)| Summary {
                    dtype: dtype.to_numpy_str(),
                    records,
                    nsegments,
                    geometry,
                    null_aware: valid.is_some(),
                },
            )
        };
        let mut arrays = vec![(Part::Values, frame)];
        if let Some(v) = valid {
            arrays.push((
                Part::NotNull,
                ArrayBuilder::for_type::<bool>(&[n]).to_vec(v)?,
            ));
        }
        self.columns.push(ColumnData {
            name: name.to_string(),
            kind,
            extra,
            arrays,
            nullable: valid.is_some(),
            summary,
        });
        Ok(self)
    }

    /// Add a `timestamp` column: `values` counted in `unit` (`s`, `ms`, `us` or `ns`) from
    /// the Unix epoch, stored as int64 and read back by python-blosc2 as `datetime64[unit]`.
    pub fn timestamp_column(
        mut self,
        name: &str,
        unit: &str,
        values: &[i64],
    ) -> Result<TableBuilder> {
        if !matches!(unit, "s" | "ms" | "us" | "ns") {
            return Err(Error::InvalidArgument(format!(
                "column {name:?}: timestamp unit {unit:?} (s, ms, us or ns)"
            )));
        }
        self.rows(name, values.len() as u64)?;
        let frame = ArrayBuilder::for_type::<i64>(&[values.len() as u64]).to_vec(values)?;
        self.columns.push(ColumnData {
            name: name.to_string(),
            kind: "timestamp".into(),
            extra: vec![("unit".into(), Value::Str(unit.into()))],
            arrays: vec![(Part::Values, frame)],
            nullable: false,
            summary: None,
        });
        Ok(self)
    }

    /// Add an `ndarray` column: one item of shape `item_shape` per row, `values` holding
    /// the rows one after the other in C order.
    pub fn ndarray_column<T: Element>(
        mut self,
        name: &str,
        item_shape: &[u64],
        values: &[T],
    ) -> Result<TableBuilder> {
        let per_row = item_shape.iter().product::<u64>();
        if item_shape.is_empty() || per_row == 0 || !(values.len() as u64).is_multiple_of(per_row) {
            return Err(Error::InvalidArgument(format!(
                "column {name:?}: {} values are not whole items of shape {item_shape:?}",
                values.len()
            )));
        }
        let n = values.len() as u64 / per_row;
        self.rows(name, n)?;
        let mut shape = vec![n];
        shape.extend_from_slice(item_shape);
        let dtype = T::dtype();
        let frame = ArrayBuilder::new(&shape, dtype.clone()).to_vec(values)?;
        let dims = item_shape.iter().map(|&d| Value::Int(d as i64)).collect();
        self.columns.push(ColumnData {
            name: name.to_string(),
            kind: "ndarray".into(),
            extra: vec![
                ("item_shape".into(), Value::Array(dims)),
                ("dtype_str".into(), Value::Str(dtype.to_numpy_str())),
            ],
            arrays: vec![(Part::Values, frame)],
            nullable: false,
            summary: None,
        });
        Ok(self)
    }

    /// Add a `utf8` column (variable-length strings; `None` is a null).
    pub fn utf8_column(mut self, name: &str, values: &[Option<&str>]) -> Result<TableBuilder> {
        self.rows(name, values.len() as u64)?;
        let mut offsets = Vec::with_capacity(values.len() + 1);
        let mut data = Vec::new();
        offsets.push(0i64);
        for v in values {
            data.extend_from_slice(v.unwrap_or("").as_bytes());
            offsets.push(data.len() as i64);
        }
        let nullable = values.iter().any(Option::is_none);
        let mut arrays = vec![
            (
                Part::Values,
                ArrayBuilder::for_type::<i64>(&[offsets.len() as u64]).to_vec(&offsets)?,
            ),
            (
                Part::Utf8Bytes,
                ArrayBuilder::for_type::<u8>(&[data.len() as u64]).to_vec(&data)?,
            ),
        ];
        if nullable {
            let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
            arrays.push((
                Part::NotNull,
                ArrayBuilder::for_type::<bool>(&[valid.len() as u64]).to_vec(&valid)?,
            ));
        }
        self.columns.push(ColumnData {
            name: name.to_string(),
            kind: "utf8".into(),
            extra: Vec::new(),
            arrays,
            nullable,
            summary: None,
        });
        Ok(self)
    }

    /// The schema JSON python-blosc2 reads (`schema_to_dict`'s layout).
    fn schema(&self) -> String {
        let s = |x: &str| Value::Str(x.to_string());
        let mask = self.columns.iter().any(|c| c.nullable);
        let cols = self
            .columns
            .iter()
            .map(|c| {
                let mut m = vec![(s("name"), s(&c.name)), (s("kind"), s(&c.kind))];
                m.extend(c.extra.iter().map(|(k, v)| (s(k), v.clone())));
                if c.nullable {
                    m.push((s("nullable"), Value::Bool(true)));
                    m.push((s("null_storage"), s("mask")));
                    m.push((s("default"), Value::Nil));
                }
                Value::Map(m)
            })
            .collect();
        let schema = Value::Map(vec![
            (s("version"), Value::Int(if mask { 3 } else { 1 })),
            (s("columns"), Value::Array(cols)),
            (s("n_rows"), Value::Int(self.rows.unwrap_or(0) as i64)),
            (s("summary_indexes_built"), Value::Bool(true)),
        ]);
        crate::format::json::write(&schema)
    }

    /// Write the table: a `.b2z` zip for a path ending in `.b2z`, else a `.b2d` directory.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        if self.columns.is_empty() {
            return Err(Error::InvalidArgument(
                "a table needs at least one column".into(),
            ));
        }
        let n = self.rows.unwrap_or(0);
        let mut store = StoreBuilder::new(StoreKind::TreeStore).overwrite(self.overwrite);
        let s = |x: &str| Value::Str(x.to_string());
        // python-blosc2 counts value changes in `value_epoch` (its first `extend` makes it 1)
        // and records in each index the epoch it was built at.
        let epoch = i64::from(n > 0);
        let mut catalog = Vec::new();
        for c in &self.columns {
            let Some(sm) = &c.summary else { continue };
            let key = ctable::summary_key("", &c.name);
            let path = format!("{}.b2nd", &key[1..]);
            let records = format!(
                "[('min', '{d}'), ('max', '{d}'), ('flags', 'u1')]",
                d = sm.dtype
            );
            let frame = ArrayBuilder::with_dtype_str(&[sm.nsegments as u64], &records)?
                .bytes_to_vec(&sm.records)?;
            store.insert(&key, frame)?;
            catalog.push((s(&c.name), summary_descriptor(&c.name, sm, &path, epoch)));
        }
        let manifest = super::store::attrs_frame(&[
            ("kind".into(), s("ctable")),
            ("version".into(), Value::Int(1)),
            ("schema".into(), Value::Str(self.schema())),
            ("value_epoch".into(), Value::Int(epoch)),
            ("index_catalog".into(), Value::Map(catalog)),
        ])?;
        store.insert(&ctable::meta_key(""), manifest)?;
        store.insert(
            &ctable::valid_rows_key(""),
            ArrayBuilder::for_type::<bool>(&[n]).to_vec(&vec![true; n as usize])?,
        )?;
        for c in &self.columns {
            for (part, frame) in &c.arrays {
                store.insert(&ctable::column_key("", &c.name, *part), frame.clone())?;
            }
        }
        store.write(path)
    }
}

/// The catalog entry python-blosc2 writes for a column's SUMMARY index (`ctable_indexing`'s
/// `create_index` through `indexing._build_descriptor`, paths relative to the table root).
fn summary_descriptor(name: &str, sm: &Summary, path: &str, epoch: i64) -> Value {
    let s = |x: &str| Value::Str(x.to_string());
    let one = |v: u64| Value::Tuple(vec![Value::Int(v as i64)]);
    let field = |n: &str, d: &str| Value::Tuple(vec![s(n), s(d)]);
    let [shape, chunks, blocks] = sm.geometry;
    let level = Value::Map(vec![
        (s("segment_len"), Value::Int(blocks as i64)),
        (s("nsegments"), Value::Int(sm.nsegments as i64)),
        (s("path"), s(path)),
        (
            s("dtype"),
            Value::Array(vec![
                field("min", &sm.dtype),
                field("max", &sm.dtype),
                field("flags", "|u1"),
            ]),
        ),
    ]);
    Value::Map(vec![
        (s("name"), s("__self__")),
        (s("token"), s(name)),
        (
            s("target"),
            Value::Map(vec![(s("source"), s("field")), (s("field"), Value::Nil)]),
        ),
        (s("field"), Value::Nil),
        (s("kind"), s("summary")),
        (s("version"), Value::Int(1)),
        (s("optlevel"), Value::Int(5)),
        (s("persistent"), Value::Bool(true)),
        (s("ooc"), Value::Bool(true)),
        (s("stale"), Value::Bool(false)),
        (s("dtype"), s(&sm.dtype)),
        (s("shape"), one(shape)),
        (s("chunks"), one(chunks)),
        (s("blocks"), one(blocks)),
        (s("levels"), Value::Map(vec![(s("block"), level)])),
        (s("bucket"), Value::Nil),
        (s("partial"), Value::Nil),
        (s("full"), Value::Nil),
        (s("opsi"), Value::Nil),
        (s("cparams"), Value::Nil),
        (s("null_aware"), Value::Bool(sm.null_aware)),
        (s("built_value_epoch"), Value::Int(epoch)),
    ])
}
