//! [`TableMut::add_column`] and [`NewColumn`]: a stored column added to a table, as
//! python-blosc2's `CTable.add_column` adds one: an array as long as `_valid_rows` (the
//! physical rows; a `utf8` column's offsets and bytes up to the last live row) holding the
//! given values or the declared default at the live rows, a `.notnull` mask when a live
//! row is null, and the column's entry appended to the schema.
//! The files are written in a staged copy of the table and published with the schema by
//! one directory exchange (see `columns`).

#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::{null_fill, scalar_item, ucs4, Cells, TableMut};
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::element::Element;
use crate::write::builder::ArrayBuilder;
use crate::write::options::Target;

/// A column to add with [`TableMut::add_column`]: its kind (numbers, bool, `string` of a
/// `max_length`, `timestamp` of a unit, or `utf8`), whether it takes nulls (kept in a
/// `.notnull` mask, python-blosc2's default storage), its declared default, and optionally
/// one value per live row.
///
/// ```
/// use b2nd::{NewColumn, Table, TableBuilder, TableMut, Value};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.b2d");
/// TableBuilder::new().column("id", &[1i64, 2, 3])?.write(&path)?;
/// let mut t = TableMut::open(&path)?;
/// // Every live row takes the default, as later appends that leave the column out do.
/// t.add_column("level", &NewColumn::of::<i32>().default(Value::Int(5)))?;
/// t.add_column("score", &NewColumn::of::<f64>().values_opt(&[Some(0.5), None, Some(2.0)]))?;
/// let t = Table::open(&path)?;
/// assert_eq!(t.read_column::<i32>("level")?, [5, 5, 5]);
/// assert_eq!(t.read_column_opt::<f64>("score")?, [Some(0.5), None, Some(2.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct NewColumn {
    /// The items' dtype (`int64` for a timestamp; unused for `utf8`).
    dtype: Dtype,
    kind: NewKind,
    nullable: bool,
    /// The declared default (`Value::Nil`: null).
    default: Option<Value>,
    values: Option<Cells>,
}

/// The kind of a [`NewColumn`] beyond its dtype.
#[derive(Debug, Clone, PartialEq)]
enum NewKind {
    /// Fixed-width items of the dtype (numbers, bool, `string`).
    Items,
    /// `int64` counts of a unit (`s`, `ms`, `us`, `ns`) since the Unix epoch.
    Timestamp(String),
    /// Variable-length UTF-8 strings (offsets and bytes arrays).
    Utf8,
}

impl NewColumn {
    /// A column of `T` items (numbers or bool), not nullable, without a default.
    pub fn of<T: Element>() -> NewColumn {
        NewColumn::with_dtype(T::dtype())
    }

    /// A `string` column of at most `max_length` characters per value (numpy `U`).
    pub fn string(max_length: usize) -> NewColumn {
        NewColumn::with_dtype(Dtype::Unicode {
            order: crate::model::dtype::ByteOrder::Little,
            chars: max_length,
        })
    }

    /// A `timestamp` column: `int64` counts of `unit` (`s`, `ms`, `us` or `ns`) since the
    /// Unix epoch, given with [`NewColumn::values`] as `i64`; nulls are stored as
    /// python-blosc2's fill (`int64` minimum) with the mask holding them.
    pub fn timestamp(unit: &str) -> Result<NewColumn> {
        if !["s", "ms", "us", "ns"].contains(&unit) {
            return Err(Error::InvalidArgument(format!(
                "timestamp unit {unit:?} (s, ms, us or ns)"
            )));
        }
        let mut c = NewColumn::with_dtype(i64::dtype());
        c.kind = NewKind::Timestamp(unit.to_string());
        Ok(c)
    }

    /// A `utf8` column: strings of any length (python-blosc2's `utf8()`: offsets and
    /// bytes arrays), given with [`NewColumn::strings`]; nulls kept in a mask.
    pub fn utf8() -> NewColumn {
        let mut c = NewColumn::with_dtype(u8::dtype());
        c.kind = NewKind::Utf8;
        c
    }

    fn with_dtype(dtype: Dtype) -> NewColumn {
        NewColumn {
            dtype,
            kind: NewKind::Items,
            nullable: false,
            default: None,
            values: None,
        }
    }

    /// Let the column hold nulls (kept in a `.notnull` mask).
    pub fn nullable(mut self) -> NewColumn {
        self.nullable = true;
        self
    }

    /// Declare the column's default: it fills the live rows when no values are given, and
    /// rows appended later without this column. `Value::Nil` (a null) makes the column
    /// nullable.
    pub fn default(mut self, value: Value) -> NewColumn {
        self.nullable |= value.is_nil();
        self.default = Some(value);
        self
    }

    /// One value per live row, in row order.
    pub fn values<T: Element>(mut self, values: &[T]) -> NewColumn {
        self.values = Some(Cells::Fixed {
            dtype: T::dtype(),
            bytes: T::as_bytes(values).into_owned(),
            valid: None,
        });
        self
    }

    /// One value per live row, `None` a null (the column becomes nullable).
    pub fn values_opt<T: Element + Default>(mut self, values: &[Option<T>]) -> NewColumn {
        let plain: Vec<T> = values.iter().map(|v| v.unwrap_or_default()).collect();
        let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
        self.nullable = true;
        self.values = Some(Cells::Fixed {
            dtype: T::dtype(),
            bytes: T::as_bytes(&plain).into_owned(),
            valid: Some(valid),
        });
        self
    }

    /// One text per live row of a `string` column, `None` a null (the column becomes
    /// nullable when one is).
    pub fn strings(mut self, values: &[Option<&str>]) -> NewColumn {
        self.nullable |= values.iter().any(Option::is_none);
        self.values = Some(Cells::Strings(
            values.iter().map(|v| v.map(str::to_string)).collect(),
        ));
        self
    }

    /// The column's schema entry, as python-blosc2's `schema_to_dict` writes it.
    fn entry(&self, name: &str) -> Result<Value> {
        let s = |x: &str| Value::Str(x.to_string());
        let (kind, extra) = match &self.kind {
            NewKind::Timestamp(unit) => {
                ("timestamp".to_string(), vec![("unit".to_string(), s(unit))])
            }
            NewKind::Utf8 => ("utf8".to_string(), Vec::new()),
            NewKind::Items => crate::write::table::kind_of(&self.dtype)?,
        };
        let mut m = vec![(s("name"), s(name)), (s("kind"), s(&kind))];
        m.extend(extra.into_iter().map(|(k, v)| (s(&k), v)));
        if self.nullable {
            m.push((s("nullable"), Value::Bool(true)));
            m.push((s("null_storage"), s("mask")));
        }
        if let Some(d) = &self.default {
            m.push((s("default"), d.clone()));
        }
        Ok(Value::Map(m))
    }
}

impl TableMut {
    /// Add stored column `name`, as python-blosc2's `CTable.add_column`: the live rows take
    /// `column`'s values (one per live row) or else its declared default (a table with live
    /// rows needs one of the two); deleted rows hold zeros. The column has no index
    /// (python builds none). Refused, with nothing changed: a name taken or not allowed
    /// (empty, starting with `_`), a value count other than the live rows', values of
    /// another dtype, a null in a column that is not nullable, text longer than
    /// `max_length`, a default that is not an item of the dtype.
    pub fn add_column(&mut self, name: &str, column: &NewColumn) -> Result<()> {
        super::columns::check_name(name).map_err(|why| self.refuse(name, why))?;
        let t = &self.table;
        if t.column(name).is_ok() {
            return Err(self.refuse(name, "a column of that name exists".into()));
        }
        let entry = column.entry(name)?;
        if column.kind == NewKind::Utf8 {
            return self.add_utf8(name, column, entry);
        }
        if let Some(d) = column.default.as_ref().filter(|d| !d.is_nil()) {
            if scalar_item(&column.dtype, d).is_none() {
                return Err(self.refuse(
                    name,
                    format!(
                        "the default {d:?} is not a {} item",
                        column.dtype.to_numpy_str()
                    ),
                ));
            }
        }
        let live = t.live_rows();
        let n = live.live() as usize;
        let dtype = &column.dtype;
        let isz = dtype.itemsize();
        let (bytes, valid) = self.live_items(name, column, n)?;
        if let Some(row) = valid.as_ref().and_then(|v| v.iter().position(|&ok| !ok)) {
            if !column.nullable {
                return Err(self.refuse(
                    name,
                    format!("row {row} is null and the column is not nullable"),
                ));
            }
        }
        // The physical array: live rows at their places, nulls as python's fill.
        let capacity = live.physical() as usize;
        let mut all = vec![0u8; capacity * isz];
        let fill = null_fill(dtype, matches!(column.kind, NewKind::Timestamp(_)));
        for (i, p) in live.iter().enumerate() {
            let null = valid.as_ref().is_some_and(|v| !v[i]);
            let item = if null {
                &fill[..]
            } else {
                &bytes[i * isz..(i + 1) * isz]
            };
            all[p * isz..(p + 1) * isz].copy_from_slice(item);
        }
        let mask: Option<Vec<bool>> = valid.filter(|v| v.contains(&false)).map(|v| {
            let mut m = vec![true; capacity];
            for (p, ok) in live.iter().zip(v) {
                m[p] = ok;
            }
            m
        });
        let mut arrays = vec![(
            Part::Values,
            ArrayBuilder::new(&[capacity as u64], dtype.clone()),
            all,
        )];
        if let Some(m) = &mask {
            arrays.push((Part::NotNull, bool_array(capacity), as_bytes(m)));
        }
        self.publish_column(name, entry, n, column.nullable || mask.is_some(), arrays)
    }

    /// Add `utf8` column `name` (schema entry `entry`), as python-blosc2's `add_column`:
    /// offsets and bytes spanning the rows up to the last live one, the live rows holding
    /// the values given or the default, the others the default (or `""`), nulls `""` with
    /// a `.notnull` mask as long as `_valid_rows`.
    fn add_utf8(&mut self, name: &str, column: &NewColumn, entry: Value) -> Result<()> {
        let live = self.table.live_rows();
        let n = live.live() as usize;
        let filler = match &column.default {
            Some(Value::Str(s)) => s.clone(),
            None | Some(Value::Nil) => String::new(),
            Some(v) => return Err(self.refuse(name, format!("the default {v:?} is not a string"))),
        };
        let values: Vec<Option<String>> = match &column.values {
            Some(Cells::Strings(v)) if v.len() == n => v.clone(),
            Some(Cells::Strings(v)) => {
                return Err(self.refuse(name, format!("{} values given for {n} live rows", v.len())))
            }
            Some(other) => {
                return Err(self.refuse(
                    name,
                    format!(
                        "{} given for a utf8 column (it takes text)",
                        other.describe()
                    ),
                ))
            }
            None => match &column.default {
                None if n > 0 => {
                    return Err(self.refuse(
                        name,
                        "the table has live rows: give values or declare a default".into(),
                    ))
                }
                Some(Value::Nil) => vec![None; n],
                _ => vec![Some(filler.clone()); n],
            },
        };
        if let Some(row) = values.iter().position(Option::is_none) {
            if !column.nullable {
                return Err(self.refuse(
                    name,
                    format!("row {row} is null and the column is not nullable"),
                ));
            }
        }
        let mut strings = vec![filler.as_str(); live.end() as usize];
        let mut mask: Option<Vec<bool>> = None;
        for (p, v) in live.iter().zip(&values) {
            match v {
                Some(s) => strings[p] = s,
                None => {
                    strings[p] = "";
                    mask.get_or_insert_with(|| vec![true; live.physical() as usize])[p] = false;
                }
            }
        }
        let mut data = Vec::new();
        let mut offsets = vec![0i64];
        for s in &strings {
            data.extend_from_slice(s.as_bytes());
            offsets.push(data.len() as i64);
        }
        if data.is_empty() {
            data.push(0);
        }
        let mut arrays = vec![
            (
                Part::Values,
                ArrayBuilder::for_type::<i64>(&[offsets.len() as u64])
                    .chunks(&[131_072])
                    .blocks(&[16_384]),
                i64::as_bytes(&offsets).into_owned(),
            ),
            (
                Part::Utf8Bytes,
                ArrayBuilder::for_type::<u8>(&[data.len() as u64])
                    .chunks(&[2_097_152])
                    .blocks(&[131_072]),
                data,
            ),
        ];
        if let Some(m) = &mask {
            arrays.push((Part::NotNull, bool_array(m.len()), as_bytes(m)));
        }
        self.publish_column(name, entry, n, column.nullable, arrays)
    }

    /// Publish column `name`: schema entry `entry` appended (the cached row count `n`,
    /// schema version 3 when `nullable`), and its arrays (file suffix, builder, C-order
    /// bytes) written in a staged copy of the table exchanged whole.
    fn publish_column(
        &mut self,
        name: &str,
        entry: Value,
        n: usize,
        nullable: bool,
        arrays: Vec<(Part, ArrayBuilder, Vec<u8>)>,
    ) -> Result<()> {
        let t = &self.table;
        let mut schema = super::columns::schema_of(t)?;
        if let Value::Map(fields) = &mut schema {
            if let Some((_, Value::Array(cols))) = fields
                .iter_mut()
                .find(|(k, _)| k.as_str() == Some("columns"))
            {
                cols.push(entry);
            }
            // python-blosc2 writes null_storage from schema version 3 on.
            if nullable {
                for (k, v) in fields.iter_mut() {
                    if k.as_str() == Some("version") && v.as_i64().is_some_and(|x| x < 3) {
                        *v = Value::Int(3);
                    }
                }
            }
            fields.retain(|(k, _)| k.as_str() != Some("n_rows"));
            fields.push((Value::Str("n_rows".into()), Value::Int(n as i64)));
        }
        let meta = self.relative(&self.meta_file()?)?;
        let durability = self.durability;
        self.restage(|stage| {
            let at = |part: Part| -> Result<PathBuf> {
                let p = stage.join(format!("{}.b2nd", &ctable::column_key("", name, part)[1..]));
                if let Some(dir) = p.parent() {
                    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                        path: dir.to_path_buf(),
                        source,
                    })?;
                }
                Ok(p)
            };
            for (part, builder, bytes) in arrays {
                builder.write_bytes(Target::File(at(part)?), &bytes)?;
            }
            super::columns::write_manifest(&stage.join(&meta), &schema, None, durability)
        })
    }

    /// The items of the new column's live rows and their validity (`None`: none is null).
    fn live_items(
        &self,
        name: &str,
        column: &NewColumn,
        n: usize,
    ) -> Result<(Vec<u8>, Option<Vec<bool>>)> {
        let dtype = &column.dtype;
        let isz = dtype.itemsize();
        match &column.values {
            Some(Cells::Fixed {
                dtype: given,
                bytes,
                valid,
            }) => {
                if given.to_numpy_str() != dtype.to_numpy_str() {
                    return Err(self.refuse(
                        name,
                        format!(
                            "values of dtype {} given for a column of dtype {}",
                            given.to_numpy_str(),
                            dtype.to_numpy_str()
                        ),
                    ));
                }
                if bytes.len() != n * isz {
                    return Err(self.refuse(
                        name,
                        format!(
                            "{} values given for {n} live rows",
                            bytes.len() / isz.max(1)
                        ),
                    ));
                }
                Ok((bytes.clone(), valid.clone()))
            }
            Some(Cells::Strings(values)) => {
                let Dtype::Unicode { chars, .. } = dtype else {
                    return Err(self.refuse(
                        name,
                        format!("text given for a column of dtype {}", dtype.to_numpy_str()),
                    ));
                };
                if values.len() != n {
                    return Err(self.refuse(
                        name,
                        format!("{} values given for {n} live rows", values.len()),
                    ));
                }
                let mut bytes = Vec::with_capacity(n * isz);
                for (i, v) in values.iter().enumerate() {
                    bytes.extend(ucs4(v.as_deref().unwrap_or(""), *chars).map_err(|len| {
                        self.refuse(
                            name,
                            format!("row {i}: {len} characters, more than max_length {chars}"),
                        )
                    })?);
                }
                let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
                Ok((bytes, Some(valid)))
            }
            Some(other @ (Cells::Values(_) | Cells::Items { .. })) => Err(self.refuse(
                name,
                format!(
                    "{} given for a column of dtype {}",
                    other.describe(),
                    dtype.to_numpy_str()
                ),
            )),
            None => match &column.default {
                None if n > 0 => Err(self.refuse(
                    name,
                    "the table has live rows: give values or declare a default".into(),
                )),
                None => Ok((Vec::new(), None)),
                Some(Value::Nil) => Ok((vec![0; n * isz], Some(vec![false; n]))),
                Some(v) => {
                    let item = scalar_item(dtype, v).ok_or_else(|| {
                        self.refuse(
                            name,
                            format!("the default {v:?} is not a {} item", dtype.to_numpy_str()),
                        )
                    })?;
                    Ok((item.repeat(n), None))
                }
            },
        }
    }
}

/// An array of `len` bools (a `.notnull` mask).
fn bool_array(len: usize) -> ArrayBuilder {
    ArrayBuilder::for_type::<bool>(&[len as u64])
}

/// Bools as the bytes of a bool array.
fn as_bytes(flags: &[bool]) -> Vec<u8> {
    flags.iter().map(|&f| u8::from(f)).collect()
}
