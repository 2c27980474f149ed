//! [`TableMut`]: a CTable python-blosc2 wrote as a directory (`.b2d`), changed in place: rows
//! appended ([`Rows`]), deleted and updated, leaving the table as python-blosc2's own
//! `extend`, `delete`, column assignment and `close` leave it, each change crash-safe;
//! columns renamed and dropped (`columns`) and added (`add`); deleted rows compacted away
//! (`compact`); user attributes (`attrs`). A zipped table (`.b2z`) is unpacked beside
//! itself, changed as a directory and packed anew after each change (`zipped`).
//!
//! A table is many files; each step below is one atomic in-place change of one file (see
//! `docs/in-place-writes.md`), and the `_valid_rows` change is the one readers see:
//! 1. `_meta`: the schema's cached `n_rows` is removed (python-blosc2 trusts it when it opens
//!    a table; without it python counts `_valid_rows`); an append advances `value_epoch` and
//!    marks every index descriptor stale (`CTable._mark_all_indexes_stale`), a delete advances
//!    `visibility_epoch`;
//! 2. append: every stored column's new values go to the rows after the last live row, as
//!    python's `extend` puts them (the arrays grown when there is no room: to the new end,
//!    which is what python's `extend` and `close` leave; a `utf8` column's offsets and
//!    bytes end at the new rows, see `utf8`); mask-stored nulls go to the
//!    column's `.notnull` mask (made at the first null, every earlier row valid), and null
//!    slots hold python's fill (NaN, `int64.min` for timestamps, else zero) or the column's
//!    sentinel;
//! 3. `_valid_rows`: the new rows set live, or the deleted ones cleared;
//! 4. a delete tidies as python's `close` does after one: the `.notnull` rows after the last
//!    live row made valid, the arrays trimmed to the last live row (`utf8` strings past it
//!    cut); an append trims the capacity an emptied table kept past its new rows;
//! 5. `_meta`: the schema's `n_rows` set to the new count of live rows.
//!
//! A crash or failure before step 3 leaves the old table (rows after the last live one are
//! never read) and fails the call; from step 3 on the change stands and the call succeeds:
//! a failure in steps 4–5 (a full disk) leaves the cached count absent, and the next
//! [`TableMut::open`] makes the dead mask rows valid and sets the count. The cached count is
//! absent or true at every moment.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::builder::ArrayBuilder;
use super::derived;
use super::edit::set_attrs_with;
use super::inplace::ArrayMut;
use super::options::Target;
use crate::error::{Error, Result};
use crate::format::ctable::{self, Part};
use crate::model::attrs::Value;
use crate::model::dtype::Dtype;
use crate::model::durability::Durability;
use crate::model::element::Element;
use crate::model::region::Region;
use crate::table::{Column, ColumnKind, Table};
use crate::write::batch::{write_items, At};

mod add;
mod attrs;
mod columns;
mod compact;
mod dictionary;
mod generated;
mod ndarray;
mod utf8;
mod varlen;
mod zipped;

pub use add::NewColumn;

/// Rows to append to a table: values for its stored columns, by name, all of one length.
///
/// A column left out takes the `default` its schema declares (python-blosc2's rule);
/// without one the append is refused. Computed columns are never given (python evaluates
/// them).
///
/// ```
/// use b2nd::{Rows, Table, TableBuilder, TableMut};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("t.b2d");
/// TableBuilder::new()
///     .column("id", &[1i64, 2])?
///     .nullable_column("score", &[0.5f64, 1.5], &[true, true])?
///     .write(&path)?;
/// let mut t = TableMut::open(&path)?;
/// let rows = Rows::new()
///     .column("id", &[3i64, 4])?
///     .column_opt("score", &[None, Some(2.5f64)])?;
/// assert_eq!(t.append(&rows)?, 2);
/// assert_eq!(t.delete(&[0])?, 1);
/// let t = Table::open(&path)?;
/// assert_eq!(t.read_column::<i64>("id")?, [2, 3, 4]);
/// assert_eq!(t.read_column_opt::<f64>("score")?, [Some(1.5), None, Some(2.5)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Rows {
    len: Option<u64>,
    columns: Vec<(String, Cells)>,
}

/// One column's values in a [`Rows`].
#[derive(Debug, Clone)]
enum Cells {
    /// Native-order items of `dtype`, and which are not null (`None`: none is null).
    Fixed {
        dtype: Dtype,
        bytes: Vec<u8>,
        valid: Option<Vec<bool>>,
    },
    /// Text (`None`: a null).
    Strings(Vec<Option<String>>),
    /// Any msgpack values (`Value::Nil`: a null).
    Values(Vec<Value>),
    /// Sub-arrays of `shape` (C order, native-order items of `dtype`), one per row.
    Items {
        dtype: Dtype,
        shape: Vec<u64>,
        bytes: Vec<u8>,
    },
}

impl Cells {
    /// What was given, for messages.
    fn describe(&self) -> String {
        match self {
            Cells::Fixed { dtype, .. } => format!("values of dtype {}", dtype.to_numpy_str()),
            Cells::Strings(_) => "text".into(),
            Cells::Values(_) => "msgpack values".into(),
            Cells::Items { dtype, shape, .. } => {
                format!(
                    "items of dtype {} and shape {shape:?}",
                    dtype.to_numpy_str()
                )
            }
        }
    }
}

impl Rows {
    /// No rows yet.
    pub fn new() -> Rows {
        Rows::default()
    }

    /// Rows given.
    pub fn len(&self) -> u64 {
        self.len.unwrap_or(0)
    }

    /// Whether no rows are given.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn add(mut self, name: &str, n: usize, cells: Cells) -> Result<Rows> {
        if self.columns.iter().any(|(c, _)| c == name) {
            return Err(Error::InvalidArgument(format!(
                "column {name:?} given twice"
            )));
        }
        match self.len {
            Some(len) if len != n as u64 => {
                return Err(Error::InvalidArgument(format!(
                    "column {name:?} has {n} rows, the others {len}"
                )))
            }
            _ => self.len = Some(n as u64),
        }
        self.columns.push((name.to_string(), cells));
        Ok(self)
    }

    /// Values of a column of numbers or bools (`i64` for a `timestamp` column).
    pub fn column<T: Element>(self, name: &str, values: &[T]) -> Result<Rows> {
        let cells = Cells::Fixed {
            dtype: T::dtype(),
            bytes: T::as_bytes(values).into_owned(),
            valid: None,
        };
        self.add(name, values.len(), cells)
    }

    /// Values of a nullable column: `None` is a null.
    pub fn column_opt<T: Element + Default>(
        self,
        name: &str,
        values: &[Option<T>],
    ) -> Result<Rows> {
        let plain: Vec<T> = values.iter().map(|v| v.unwrap_or_default()).collect();
        let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
        let cells = Cells::Fixed {
            dtype: T::dtype(),
            bytes: T::as_bytes(&plain).into_owned(),
            valid: valid.contains(&false).then_some(valid),
        };
        self.add(name, values.len(), cells)
    }

    /// Values of a text column: `string` (fixed width: at most its `max_length` characters
    /// each), `utf8` or `dictionary`; `None` is a null.
    pub fn strings(self, name: &str, values: &[Option<&str>]) -> Result<Rows> {
        let cells = Cells::Strings(values.iter().map(|v| v.map(str::to_string)).collect());
        self.add(name, values.len(), cells)
    }

    /// Values of a column that holds one msgpack value per row: `list` (`Value::Array`),
    /// `struct` (`Value::Map` of its fields), `vlstring` (`Value::Str`), `vlbytes`
    /// (`Value::Bytes`) or `object` (any value); `Value::Nil` is a null. They are checked
    /// and coerced as python-blosc2 coerces them (a list's items to its item kind).
    pub fn values(self, name: &str, values: &[Value]) -> Result<Rows> {
        let cells = Cells::Values(values.to_vec());
        self.add(name, values.len(), cells)
    }

    /// Values of an `ndarray` column: one sub-array of `item_shape` per row, all rows'
    /// items one after another in C order (`values.len()` a multiple of the item's size).
    pub fn ndarray<T: Element>(
        self,
        name: &str,
        item_shape: &[usize],
        values: &[T],
    ) -> Result<Rows> {
        let per_row: usize = item_shape.iter().product();
        if per_row == 0 || !values.len().is_multiple_of(per_row) {
            return Err(Error::InvalidArgument(format!(
                "column {name:?}: {} items are not whole sub-arrays of shape {item_shape:?}",
                values.len()
            )));
        }
        let cells = Cells::Items {
            dtype: T::dtype(),
            shape: item_shape.iter().map(|&d| d as u64).collect(),
            bytes: T::as_bytes(values).into_owned(),
        };
        self.add(name, values.len() / per_row, cells)
    }

    /// Values of a `timestamp` column: counts of `unit` (`s`, `ms`, `us`, `ns`) since the
    /// Unix epoch; the unit must be the column's. `None` is a null.
    pub fn timestamps(self, name: &str, unit: &str, values: &[Option<i64>]) -> Result<Rows> {
        let dtype = Dtype::parse(&format!("<M8[{unit}]")).map_err(|e| {
            Error::InvalidArgument(format!("column {name:?}: timestamp unit {unit:?}: {e}"))
        })?;
        let plain: Vec<i64> = values.iter().map(|v| v.unwrap_or(0)).collect();
        let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
        let cells = Cells::Fixed {
            dtype,
            bytes: i64::as_bytes(&plain).into_owned(),
            valid: valid.contains(&false).then_some(valid),
        };
        self.add(name, values.len(), cells)
    }

    /// The rows of an Arrow record batch, one column per field (feature `arrow`): integers,
    /// floats and booleans, strings (`Utf8`, `LargeUtf8`, `Utf8View`, and dictionaries of
    /// them) for `string`, `utf8` and `dictionary` columns, and timestamps; Arrow nulls are nulls. Other Arrow types are refused by name.
    #[cfg(feature = "arrow")]
    pub fn from_record_batch(batch: &arrow_array::RecordBatch) -> Result<Rows> {
        use arrow_array::cast::AsArray;
        use arrow_array::types::*;
        use arrow_schema::{DataType, TimeUnit};

        fn opt<T: arrow_array::ArrowPrimitiveType>(
            a: &dyn arrow_array::Array,
        ) -> Vec<Option<T::Native>> {
            a.as_primitive::<T>().iter().collect()
        }
        let mut rows = Rows::new();
        if batch.num_columns() == 0 {
            return Ok(rows);
        }
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let name = field.name();
            let a = column.as_ref();
            rows = match a.data_type() {
                DataType::Boolean => {
                    let v: Vec<Option<bool>> = a.as_boolean().iter().collect();
                    rows.column_opt(name, &v)?
                }
                DataType::Int8 => rows.column_opt(name, &opt::<Int8Type>(a))?,
                DataType::Int16 => rows.column_opt(name, &opt::<Int16Type>(a))?,
                DataType::Int32 => rows.column_opt(name, &opt::<Int32Type>(a))?,
                DataType::Int64 => rows.column_opt(name, &opt::<Int64Type>(a))?,
                DataType::UInt8 => rows.column_opt(name, &opt::<UInt8Type>(a))?,
                DataType::UInt16 => rows.column_opt(name, &opt::<UInt16Type>(a))?,
                DataType::UInt32 => rows.column_opt(name, &opt::<UInt32Type>(a))?,
                DataType::UInt64 => rows.column_opt(name, &opt::<UInt64Type>(a))?,
                DataType::Float32 => rows.column_opt(name, &opt::<Float32Type>(a))?,
                DataType::Float64 => rows.column_opt(name, &opt::<Float64Type>(a))?,
                DataType::Utf8 => {
                    let v: Vec<Option<&str>> = a.as_string::<i32>().iter().collect();
                    rows.strings(name, &v)?
                }
                DataType::LargeUtf8 => {
                    let v: Vec<Option<&str>> = a.as_string::<i64>().iter().collect();
                    rows.strings(name, &v)?
                }
                DataType::Utf8View => {
                    let v: Vec<Option<&str>> = a.as_string_view().iter().collect();
                    rows.strings(name, &v)?
                }
                DataType::Dictionary(_, values)
                    if matches!(
                        values.as_ref(),
                        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                    ) =>
                {
                    let d = a.as_any_dictionary();
                    let texts: Vec<Option<&str>> = match values.as_ref() {
                        DataType::Utf8 => d.values().as_string::<i32>().iter().collect(),
                        DataType::LargeUtf8 => d.values().as_string::<i64>().iter().collect(),
                        _ => d.values().as_string_view().iter().collect(),
                    };
                    let nulls = a.logical_nulls();
                    // Without values every key is a null (and Arrow's key normalization
                    // would panic).
                    let keys = if texts.is_empty() {
                        vec![0; a.len()]
                    } else {
                        d.normalized_keys()
                    };
                    let v: Vec<Option<&str>> = keys
                        .into_iter()
                        .enumerate()
                        .map(|(i, k)| {
                            let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                            valid.then(|| texts.get(k).copied().flatten()).flatten()
                        })
                        .collect();
                    rows.strings(name, &v)?
                }
                // Untyped NULLs (DataFusion's INSERT of a NULL literal into some columns).
                DataType::Null => {
                    rows.add(name, a.len(), Cells::Values(vec![Value::Nil; a.len()]))?
                }
                DataType::List(_)
                | DataType::LargeList(_)
                | DataType::FixedSizeList(_, _)
                | DataType::Struct(_)
                | DataType::Binary
                | DataType::LargeBinary => {
                    let v = (0..a.len())
                        .map(|i| crate::format::arrow_ipc::value(column, i))
                        .collect::<std::result::Result<Vec<Value>, String>>()
                        .map_err(|why| Error::InvalidArgument(format!("column {name:?}: {why}")))?;
                    rows.values(name, &v)?
                }
                DataType::Timestamp(unit, _) => {
                    let (u, v) = match unit {
                        TimeUnit::Second => ("s", opt::<TimestampSecondType>(a)),
                        TimeUnit::Millisecond => ("ms", opt::<TimestampMillisecondType>(a)),
                        TimeUnit::Microsecond => ("us", opt::<TimestampMicrosecondType>(a)),
                        TimeUnit::Nanosecond => ("ns", opt::<TimestampNanosecondType>(a)),
                    };
                    rows.timestamps(name, u, &v)?
                }
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "column {name:?}: Arrow type {other} is not one a table's rows take \
                         (integers, floats, booleans, strings, timestamps, binary, lists, \
                         structs)"
                    )))
                }
            };
        }
        // A batch of no rows still has a length: zero.
        rows.len.get_or_insert(batch.num_rows() as u64);
        Ok(rows)
    }
}

/// A CTable opened for changes: a `.b2d` directory python-blosc2 (or
/// [`TableBuilder`](crate::TableBuilder)) wrote.
///
/// Each method is one change of the table, published atomically for readers of the table
/// (b2nd and python-blosc2) and left as python-blosc2 leaves its own changes; see
/// the module documentation for the steps. One writer at a time: the table's `_valid_rows`
/// stays locked (`flock`) for the life of the `TableMut`. Tables in `.b2z` zips, tables
/// inside larger stores, and members embedded in `embed.b2e` are refused by name.
/// Appends and updates take columns of fixed-width kinds (numbers, bools, `timestamp`,
/// `string`), sub-arrays for `ndarray` columns, `utf8` and `dictionary` strings, and
/// msgpack values for `list`, `vlstring`, `vlbytes`, `object` and `struct` columns; other
/// kinds (`complex64`, `complex128`) are refused by name.
#[derive(Debug)]
pub struct TableMut {
    path: PathBuf,
    table: Table,
    /// The `_valid_rows` array: changed by every change, and the table's writer lock.
    valid: ArrayMut,
    durability: Durability,
    /// For a `.b2z` table: the zip, which `path` is unpacked from and packed into after
    /// every change.
    zipped: Option<zipped::Zipped>,
}

/// Items of `dtype` at null slots of a mask-stored column: python-blosc2's fill
/// (`schema.fill_value_for`: NaN for floats, `int64.min` for timestamps, else zero).
fn null_fill(dtype: &Dtype, timestamp: bool) -> Vec<u8> {
    let size = dtype.itemsize();
    match dtype {
        Dtype::Float { size: 8, .. } => f64::NAN.to_le_bytes().to_vec(),
        Dtype::Float { size: 4, .. } => f32::NAN.to_le_bytes().to_vec(),
        Dtype::Float { size: 2, .. } => 0x7e00u16.to_le_bytes().to_vec(),
        Dtype::Int { size: 8, .. } if timestamp => i64::MIN.to_le_bytes().to_vec(),
        _ => vec![0; size],
    }
}

/// `value` as one item of `dtype` (little-endian numbers, bools, UCS-4 text), if it is one.
fn scalar_item(dtype: &Dtype, value: &Value) -> Option<Vec<u8>> {
    Some(match dtype {
        Dtype::Bool => vec![u8::from(value.truthy())],
        Dtype::Int { size, .. } => {
            let v = value.as_i64()?;
            let b = v.to_le_bytes();
            let back = match size {
                1 => i64::from(v as i8),
                2 => i64::from(v as i16),
                4 => i64::from(v as i32),
                _ => v,
            };
            (back == v).then_some(())?;
            b[..*size].to_vec()
        }
        Dtype::UInt { size, .. } => {
            let v = value.as_u64()?;
            (*size == 8 || v >> (8 * size) == 0).then_some(())?;
            v.to_le_bytes()[..*size].to_vec()
        }
        Dtype::Float { size: 8, .. } => value.as_f64()?.to_le_bytes().to_vec(),
        Dtype::Float { size: 4, .. } => (value.as_f64()? as f32).to_le_bytes().to_vec(),
        Dtype::Unicode { chars, .. } => ucs4(value.as_str()?, *chars).ok()?,
        _ => return None,
    })
}

/// `s` as `chars` UCS-4 code points, NUL-padded; an error names its length when longer.
fn ucs4(s: &str, chars: usize) -> std::result::Result<Vec<u8>, usize> {
    let n = s.chars().count();
    if n > chars {
        return Err(n);
    }
    let mut out = Vec::with_capacity(chars * 4);
    for c in s.chars() {
        out.extend_from_slice(&u32::from(c).to_le_bytes());
    }
    out.resize(chars * 4, 0);
    Ok(out)
}

/// One column's rows ready to write: the column's items, and their validity when the
/// column keeps nulls in a mask and some are null.
struct Encoded {
    name: String,
    items: Items,
    mask: Option<Vec<bool>>,
}

/// The stored form of a column's rows.
enum Items {
    /// Fixed-width items of the column's array, native order.
    Fixed(Vec<u8>),
    /// A `utf8` column's rows: their UTF-8 bytes one after another, and each row's length
    /// in bytes (its offsets array gets their running sums).
    Utf8 { data: Vec<u8>, lengths: Vec<u64> },
    /// A `dictionary` column's rows: their `int32` codes (native order), and the values
    /// the dictionary gains, in code order (`dictionary`).
    Dictionary { codes: Vec<u8>, added: Vec<String> },
    /// The rows of a column of one msgpack item per row (`varlen`).
    Cells(Vec<Value>),
}

impl TableMut {
    /// A refusal naming column `column`.
    fn refuse(&self, column: &str, reason: String) -> Error {
        Error::Refused {
            path: self.path.display().to_string(),
            reason: format!("column {column:?}: {reason}"),
        }
    }

    /// The physical rows of live rows `sorted` (ascending, distinct), or a refusal naming the
    /// last when one is out of range.
    fn physical_rows(&self, sorted: &[u64]) -> Result<Vec<usize>> {
        let live = self.table.live_rows();
        live.physical_of_sorted(sorted)
            .ok_or_else(|| Error::Refused {
                path: self.path.display().to_string(),
                reason: format!(
                    "row {} is out of range: the table has {} live rows",
                    sorted.last().copied().unwrap_or(0),
                    live.live()
                ),
            })
    }

    /// Open the table saved on its own at `path` for changes: a directory (`.b2d`), changed
    /// in place, or a zip (`.b2z`), unpacked beside itself and packed into a new zip renamed
    /// over it after every change, as python-blosc2 rewrites one.
    pub fn open(path: impl AsRef<Path>) -> Result<TableMut> {
        let path = path.as_ref().to_path_buf();
        let is_zip = path.is_file() && path.extension().is_some_and(|e| e == "b2z");
        if !path.is_dir() && !is_zip {
            return Err(Error::Refused {
                path: path.display().to_string(),
                reason: "a table saved on its own is a directory (.b2d) or a zip (.b2z)".into(),
            });
        }
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let zipped = if is_zip {
            // Under the zip's lock, what a killed change left beside it goes first.
            let lock = crate::format::lock::writer_lock(&path, &path)?;
            sweep_staging(&parent, &columns::staging_prefix(&path));
            Some(zipped::Zipped::unpack(
                &path,
                &columns::staging_prefix(&path),
                lock,
            )?)
        } else {
            None
        };
        let (path, parent) = match &zipped {
            Some(z) => (z.dir(), z.dir().parent().unwrap_or(&parent).to_path_buf()),
            None => (path, parent),
        };
        let table = Table::open(&path)?;
        let valid_file = member_file(&table, &ctable::valid_rows_key(""))?;
        let valid = ArrayMut::open_table_member(valid_file)?;
        // With the table's lock held, no other change is under way: staging directories
        // (`.b2nd-*.tmp`) a killed change left are removed (python-blosc2 warns about them).
        for dir in [path.clone(), path.join(ctable::COLS)] {
            sweep_staging(&dir, ".b2nd-");
        }
        sweep_staging(&parent, &columns::staging_prefix(&path));
        let mut t = TableMut {
            path,
            table,
            valid,
            durability: Durability::Disk,
            zipped,
        };
        // Without the cached count, a change stopped after publishing its rows (a full disk,
        // a crash): its tidying is done now.
        if !t.has_cached_count()? {
            let live = t.table.live_rows();
            let (end, n) = (live.end(), live.live());
            clear_dead_masks(end, &t.mask_files()?, Durability::Disk)?;
            edit_meta(
                &t.table,
                &t.meta_file()?,
                Some(n),
                "",
                false,
                Durability::Disk,
            )?;
            t.table = Table::open(&t.path)?;
        }
        Ok(t)
    }

    /// Whether the schema holds the cached count of live rows.
    fn has_cached_count(&self) -> Result<bool> {
        let schema =
            crate::format::json::parse(self.table.schema_json()).map_err(|e| Error::Store {
                path: self.path.display().to_string(),
                reason: format!("table manifest: schema: {e}"),
            })?;
        Ok(matches!(&schema, Value::Map(fields)
            if fields.iter().any(|(k, _)| k.as_str() == Some("n_rows"))))
    }

    /// The table as it is now (after the last change).
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// The path being changed (the `.b2z` of a zipped table).
    pub fn path(&self) -> &Path {
        match &self.zipped {
            Some(z) => z.zip(),
            None => &self.path,
        }
    }

    /// After a change: a zipped table's new zip published (on a failure, the old zip stays
    /// and the unpacked table goes back to it).
    fn published(&mut self) -> Result<()> {
        let Some(z) = &mut self.zipped else {
            return Ok(());
        };
        if let Err(e) = z.publish(self.durability) {
            z.reset()?;
            self.valid = ArrayMut::open_table_member(member_file(
                &self.table,
                &ctable::valid_rows_key(""),
            )?)?
            .with_durability(self.durability);
            self.table = Table::open(&self.path)?;
            return Err(e);
        }
        Ok(())
    }

    /// Choose what reaches the disk before each change returns (the default,
    /// [`Durability::Disk`], syncs every file a change writes; [`Durability::Process`]
    /// leaves that to the operating system, as python-blosc2 does). A killed process
    /// leaves the whole old or the whole new table either way.
    pub fn with_durability(mut self, durability: Durability) -> TableMut {
        self.valid = self.valid.with_durability(durability);
        self.durability = durability;
        self
    }

    /// Member array `file` of the table, opened for a change.
    fn member(&self, file: impl AsRef<Path>) -> Result<ArrayMut> {
        Ok(ArrayMut::open_table_member(file)?.with_durability(self.durability))
    }

    /// Append `rows` after the last live row; returns the rows appended. Every stored
    /// column is given or declares a default; values must have the column's dtype (a
    /// `timestamp` column takes `i64` counts of its unit, `string` and `utf8` columns
    /// text), nulls go only to nullable columns, and text fits a `string` column's
    /// `max_length`. A generated column left out is computed from the values given for its
    /// dependencies, as python-blosc2's `extend` fills it (`generated`). Nothing changes
    /// when any of that fails.
    pub fn append(&mut self, rows: &Rows) -> Result<u64> {
        let n = rows.len();
        if n == 0 {
            return Ok(0);
        }
        let filled = self.autofill_generated(rows)?;
        let encoded = self.encode(filled.as_ref().unwrap_or(rows))?;
        let live = self.table.live_rows();
        let start = live.end();
        for e in encoded
            .iter()
            .filter(|e| matches!(e.items, Items::Utf8 { .. }))
        {
            self.check_utf8(&e.name, start)?;
        }
        let end = start + n;
        let capacity = live.physical().max(end);
        let new_live = live.live() + n;

        // Every file found before the first change.
        let dictionaries = encoded
            .iter()
            .map(|e| match &e.items {
                Items::Dictionary { added, .. } if !added.is_empty() => {
                    self.dictionary_file(&e.name).map(Some)
                }
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        let files = encoded
            .iter()
            .map(|e| {
                let mask = self.table.key(&e.name, Part::NotNull);
                if self.table.store().contains(&mask) {
                    member_file(&self.table, &mask)?;
                }
                member_file(&self.table, &self.table.key(&e.name, Part::Values))
            })
            .collect::<Result<Vec<_>>>()?;
        let meta = self.meta_file()?;

        edit_meta(
            &self.table,
            &meta,
            None,
            "value_epoch",
            true,
            self.durability,
        )?;
        for ((e, file), dict) in encoded.iter().zip(files).zip(dictionaries) {
            match &e.items {
                Items::Fixed(bytes) => write_rows(&mut self.member(file)?, start, bytes, capacity)?,
                Items::Utf8 { data, lengths } => self.write_utf8(&e.name, start, data, lengths)?,
                Items::Dictionary { codes, added } => {
                    if let Some(dict) = dict {
                        dictionary::add_values(&dict, added, self.durability)?;
                    }
                    write_rows(&mut self.member(file)?, start, codes, capacity)?
                }
                Items::Cells(cells) => write_items(&file, At::Item(start), cells, self.durability)?,
            }
        }
        for e in &encoded {
            self.write_mask(e, start, end, capacity)?;
        }
        write_rows(&mut self.valid, start, &vec![1u8; n as usize], capacity)?;
        // The rows are appended. The capacity an emptied table kept past them is trimmed, as
        // python's close does (a failure leaves rows no reader reads); a failure to cache
        // the count is finished by the next `open`.
        if capacity > end {
            if let Ok(masks) = self.mask_files() {
                let _ = self.trim(end, &masks);
            }
        }
        let _ = edit_meta(
            &self.table,
            &meta,
            Some(new_live),
            "",
            false,
            self.durability,
        );
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(n)
    }

    /// Delete live rows `rows` (positions among live rows, as python-blosc2's
    /// `CTable.delete` takes them; repeats count once); returns the rows deleted. Their
    /// values stay in the columns until python-blosc2 compacts the table, as python leaves
    /// them. Nothing changes when a position is out of range.
    pub fn delete(&mut self, rows: &[u64]) -> Result<u64> {
        let mut rows = rows.to_vec();
        rows.sort_unstable();
        rows.dedup();
        let live = self.table.live_rows();
        let physical = self.physical_rows(&rows)?;
        let (Some(&first), Some(&last)) = (physical.first(), physical.last()) else {
            return Ok(0);
        };
        let mut flags = live.flags()[first..=last].to_vec();
        for &p in &physical {
            flags[p - first] = 0;
        }
        let new_live = live.live() - rows.len() as u64;
        let capacity = live.physical();
        // The last live row afterwards: python's close trims the arrays to it.
        let end = {
            let mut after = live.flags().to_vec();
            for &p in &physical {
                after[p] = 0;
            }
            after
                .iter()
                .rposition(|&v| v != 0)
                .map_or(0, |i| i as u64 + 1)
        };
        let masks = self.mask_files()?;

        let meta = self.meta_file()?;
        edit_meta(
            &self.table,
            &meta,
            None,
            "visibility_epoch",
            false,
            self.durability,
        )?;
        self.valid
            .write_region_bytes(&Region::new([first as u64], [flags.len() as u64]), &flags)?;
        // The rows are deleted: what follows tidies, and a failure of it (a full disk) does
        // not undo or fail the delete; without the cached count, the next `open` finishes it.
        let _ = self.tidy_after_delete(end, capacity, &masks, &meta, new_live);
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(rows.len() as u64)
    }

    /// Set the values of live rows `rows` (positions among live rows, as python-blosc2's
    /// `Column.__setitem__` takes them; no position twice): `values` holds, for each column
    /// it names, one value per position, in the order of `rows`. Columns left out keep their
    /// values; nulls go only to nullable columns. Returns the rows changed.
    ///
    /// As python-blosc2's assignment of each column: every index descriptor stale and
    /// `value_epoch` advanced once per column, the materialized columns that depend on a changed column marked stale, a
    /// `.notnull` mask written (made at the first null); a `utf8` column's bytes and
    /// offsets rewritten from the first row changed on. The changed column files are
    /// written as copies beside the table and the whole `_cols` directory is swapped in at
    /// once: readers see every changed column old or every one new. Nothing changes when a
    /// check fails.
    ///
    /// ```
    /// use b2nd::{Rows, Table, TableBuilder, TableMut};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("t.b2d");
    /// TableBuilder::new()
    ///     .column("id", &[1i64, 2, 3])?
    ///     .nullable_column("score", &[0.5f64, 1.5, 2.5], &[true, true, true])?
    ///     .write(&path)?;
    /// let mut t = TableMut::open(&path)?;
    /// let values = Rows::new().column_opt("score", &[None, Some(9.0f64)])?;
    /// assert_eq!(t.update(&[2, 0], &values)?, 2);
    /// let t = Table::open(&path)?;
    /// assert_eq!(t.read_column_opt::<f64>("score")?, [Some(9.0), Some(1.5), None]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn update(&mut self, rows: &[u64], values: &Rows) -> Result<u64> {
        if values.columns.is_empty() || rows.is_empty() {
            return Ok(0);
        }
        if values.len() != rows.len() as u64 {
            return Err(Error::InvalidArgument(format!(
                "{} rows given for {} positions",
                values.len(),
                rows.len()
            )));
        }
        // Positions sorted, each with the index of its values.
        let mut order: Vec<(u64, usize)> = rows.iter().copied().zip(0..).collect();
        order.sort_unstable();
        if let Some(w) = order.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::InvalidArgument(format!(
                "row {} given twice",
                w[0].0
            )));
        }
        let sorted: Vec<u64> = order.iter().map(|&(r, _)| r).collect();
        let live = self.table.live_rows();
        let physical = self.physical_rows(&sorted)?;
        let n = rows.len();
        let t = &self.table;
        let mut changes = Vec::new();
        for (name, cells) in &values.columns {
            let c = self.stored_column(name)?;
            let e = self.encode_one(c, Some(cells), n)?;
            if let Items::Utf8 { .. } = e.items {
                self.check_utf8(name, live.end())?;
            }
            changes.push((c.clone(), e));
        }
        let meta = self.meta_file()?;
        let changed: Vec<&str> = changes.iter().map(|(c, _)| c.name()).collect();
        let cols_dir = self.path.join(ctable::COLS);
        let mut files = Vec::new();
        for (c, e) in &changes {
            files.push(member_file(t, &t.key(c.name(), Part::Values))?);
            match &e.items {
                Items::Utf8 { .. } => {
                    files.push(member_file(t, &t.key(c.name(), Part::Utf8Bytes))?)
                }
                Items::Dictionary { added, .. } if !added.is_empty() => {
                    files.push(self.dictionary_file(c.name())?)
                }
                _ => {}
            }
            let mask = t.key(c.name(), Part::NotNull);
            if t.store().contains(&mask) {
                files.push(member_file(t, &mask)?);
            }
        }
        if let Some(f) = files
            .iter()
            .find(|f| f.parent() != Some(cols_dir.as_path()))
        {
            return Err(Error::Refused {
                path: self.path.display().to_string(),
                reason: format!(
                    "{} is not a file of the table's _cols directory",
                    f.display()
                ),
            });
        }

        // python-blosc2 assigns one column at a time, each advancing `value_epoch`.
        let by = changed.len() as i64;
        edit_meta_columns(
            t,
            &meta,
            Some(live.live()),
            ("value_epoch", by),
            true,
            &changed,
            self.durability,
        )?;
        // The new `_cols`, staged inside the table: unchanged members linked, changed ones
        // copied and written.
        let staging = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&self.path)
            .map_err(|source| Error::Io {
                path: self.path.clone(),
                source,
            })?;
        let new_cols = staging.path().join(ctable::COLS);
        link_tree(&cols_dir, &new_cols, &files)?;
        let in_stage = |f: &Path| new_cols.join(f.file_name().unwrap_or_default());
        for (c, e) in &changes {
            let file = in_stage(&member_file(t, &t.key(c.name(), Part::Values))?);
            match &e.items {
                Items::Fixed(bytes) => scatter(&mut self.member(&file)?, &physical, &order, bytes)?,
                Items::Dictionary { codes, added } => {
                    if !added.is_empty() {
                        let dict = in_stage(&self.dictionary_file(c.name())?);
                        dictionary::add_values(&dict, added, self.durability)?;
                    }
                    scatter(&mut self.member(&file)?, &physical, &order, codes)?
                }
                Items::Cells(cells) => {
                    // The items from the first row changed on, rewritten with the new ones.
                    let first = physical.first().copied().unwrap_or(0);
                    let mut tail = crate::schunk::SChunk::open(&file)?.read_objects()?;
                    if tail.len() < physical.last().map_or(0, |&p| p + 1) {
                        return Err(self.refuse(
                            c.name(),
                            format!("it holds {} items, fewer than the rows", tail.len()),
                        ));
                    }
                    tail.drain(..first);
                    for (&p, &(_, i)) in physical.iter().zip(&order) {
                        tail[p - first] = cells[i].clone();
                    }
                    write_items(&file, At::Item(first as u64), &tail, self.durability)?
                }
                Items::Utf8 { data, lengths } => {
                    let strings = in_stage(&member_file(t, &t.key(c.name(), Part::Utf8Bytes))?);
                    utf8::rewrite(
                        &mut self.member(&file)?,
                        &mut self.member(&strings)?,
                        &physical,
                        &order,
                        data,
                        lengths,
                    )?
                }
            }
            let mask = &e.mask;
            if c.mask_nulls() {
                let flags: Vec<u8> = match mask {
                    Some(v) => v.iter().map(|&ok| u8::from(ok)).collect(),
                    None => vec![1; n],
                };
                let key = t.key(c.name(), Part::NotNull);
                if t.store().contains(&key) {
                    let file = in_stage(&member_file(t, &key)?);
                    scatter(&mut self.member(&file)?, &physical, &order, &flags)?;
                } else if mask.is_some() {
                    let len = t
                        .column_array(c.name())?
                        .shape()
                        .first()
                        .copied()
                        .unwrap_or(0);
                    if physical.last().is_some_and(|&p| p as u64 >= len) {
                        return Err(self.refuse(
                            c.name(),
                            format!("its array has {len} rows, fewer than _valid_rows"),
                        ));
                    }
                    let mut all = vec![1u8; len as usize];
                    for (&p, &(_, i)) in physical.iter().zip(&order) {
                        all[p] = flags[i];
                    }
                    let all: Vec<bool> = all.into_iter().map(|f| f == 1).collect();
                    let rel =
                        crate::store::keys::member_file(&key).map_err(|reason| Error::Store {
                            path: self.path.display().to_string(),
                            reason,
                        })?;
                    let name = Path::new(&rel).file_name().unwrap_or_default();
                    ArrayBuilder::for_type::<bool>(&[len])
                        .write(Target::File(new_cols.join(name)), &all)?;
                }
            }
        }
        if self.durability == Durability::Disk {
            super::staging::sync_tree(&new_cols).map_err(|source| Error::Io {
                path: new_cols.clone(),
                source,
            })?;
        }
        super::staging::replace(&new_cols, &cols_dir).map_err(|source| Error::Io {
            path: cols_dir.clone(),
            source,
        })?;
        drop(staging);
        self.table = Table::open(&self.path)?;
        self.published()?;
        Ok(n as u64)
    }

    /// After a delete: the mask rows after the last live row (`end`) made valid (python's
    /// extend writes its next rows there and writes a mask only for batches holding a null,
    /// so a row it writes where a deleted null was would read as null); python-blosc2's
    /// close() after a delete (`trim_capacity`: the arrays end at the last live row, unless
    /// no row is left); the strings of `utf8` columns past `end` cut off (python's next
    /// extend would append after them: `utf8`); the cached count set.
    fn tidy_after_delete(
        &mut self,
        end: u64,
        capacity: u64,
        masks: &[PathBuf],
        meta: &Path,
        live: u64,
    ) -> Result<()> {
        if end < capacity {
            clear_dead_masks(end, masks, self.durability)?;
            if end > 0 {
                self.trim(end, masks)?;
            }
        }
        self.cut_utf8(end)?;
        self.cut_cells(end)?;
        edit_meta(&self.table, meta, Some(live), "", false, self.durability)
    }

    /// The `.notnull` mask files of the table's columns.
    fn mask_files(&self) -> Result<Vec<PathBuf>> {
        let t = &self.table;
        t.columns()
            .iter()
            .filter(|c| c.computed().is_none())
            .map(|c| t.key(c.name(), Part::NotNull))
            .filter(|k| t.store().contains(k))
            .map(|k| member_file(t, &k))
            .collect()
    }

    /// Shrink the table's arrays to `end` rows, as python-blosc2's `trim_capacity`:
    /// `_valid_rows`, every fixed-width column and dictionary codes (variable-length columns
    /// are left as python leaves them), the masks.
    fn trim(&mut self, end: u64, masks: &[PathBuf]) -> Result<()> {
        self.valid.resize(&[end])?;
        let t = &self.table;
        let columns: Vec<String> = t
            .columns()
            .iter()
            .filter(|c| {
                c.computed().is_none()
                    && (c.is_fixed_width() || *c.kind() == ColumnKind::Dictionary)
            })
            .map(|c| t.key(c.name(), Part::Values))
            .collect();
        for key in columns {
            let mut a = self.member(member_file(t, &key)?)?;
            let mut shape = a.array().shape().to_vec();
            if shape.first().is_some_and(|&n| n > end) {
                shape[0] = end;
                a.resize(&shape)?;
            }
        }
        for m in masks {
            let mut a = self.member(m)?;
            if a.array().shape().first().is_some_and(|&n| n > end) {
                a.resize(&[end])?;
            }
        }
        Ok(())
    }

    /// Column `name`, which values are given for: a computed one is refused (python-blosc2
    /// evaluates it).
    fn stored_column(&self, name: &str) -> Result<&Column> {
        let c = self.table.column(name)?;
        match c.computed() {
            Some(cc) => Err(self.refuse(
                name,
                format!(
                    "a computed column ({}) takes no values: python-blosc2 evaluates it",
                    cc.readable()
                ),
            )),
            None => Ok(c),
        }
    }

    /// Check `rows` against the schema and encode every stored column's rows (given, or
    /// the column's default).
    fn encode(&self, rows: &Rows) -> Result<Vec<Encoded>> {
        let t = &self.table;
        let n = rows.len() as usize;
        for (name, _) in &rows.columns {
            self.stored_column(name)?;
        }
        t.columns()
            .iter()
            .filter(|c| c.computed().is_none())
            .map(|c| {
                let given = rows.columns.iter().find(|(name, _)| name == c.name());
                self.encode_one(c, given.map(|(_, cells)| cells), n)
            })
            .collect()
    }

    /// Column `c`'s `n` rows encoded: the values given, or its default; nulls put where the
    /// column keeps them (its mask, or its sentinel in the items).
    fn encode_one(&self, c: &Column, given: Option<&Cells>, n: usize) -> Result<Encoded> {
        let t = &self.table;
        // Nulls given untyped (every value nil) for a column of another kind: its nulls.
        let nulls;
        let given = match given {
            Some(Cells::Values(v))
                if !varlen::is_batch_kind(c.kind()) && v.iter().all(Value::is_nil) =>
            {
                nulls = match c.kind() {
                    ColumnKind::Utf8 | ColumnKind::Dictionary | ColumnKind::String => {
                        Cells::Strings(vec![None; n])
                    }
                    _ => {
                        let dtype = t.column_array(c.name())?.dtype().clone();
                        Cells::Fixed {
                            bytes: vec![0; n * dtype.itemsize()],
                            dtype,
                            valid: Some(vec![false; n]),
                        }
                    }
                };
                Some(&nulls)
            }
            other => other,
        };
        match c.kind() {
            ColumnKind::Utf8 => return self.encode_utf8(c, given, n),
            ColumnKind::Dictionary => return self.encode_dictionary(c, given, n),
            ColumnKind::NdArray => return self.encode_ndarray(c, given, n),
            k if varlen::is_batch_kind(k) => return self.encode_varlen(c, given, n),
            _ => {}
        }
        {
            if !c.is_fixed_width() {
                return Err(self.refuse(
                    c.name(),
                    format!(
                        "writing rows of a table with a {} column is not supported",
                        c.kind()
                    ),
                ));
            }
            // The stored items' dtype (a `timestamp` column holds int64 counts).
            let dtype = t.column_array(c.name())?.dtype().clone();
            let (bytes, valid) = match given {
                Some(cells) => self.encode_cells(c, &dtype, cells, n)?,
                None => self.default_cells(c, &dtype, n)?,
            };
            if let Some(v) = &valid {
                if !c.nullable() {
                    let row = v.iter().position(|&x| !x).unwrap_or(0);
                    return Err(self.refuse(
                        c.name(),
                        format!("row {row} is null and the column is not nullable"),
                    ));
                }
            }
            let mut bytes = bytes;
            let isz = dtype.itemsize();
            if let Some(v) = &valid {
                let slot = match (c.mask_nulls(), c.null_value()) {
                    (true, _) => null_fill(&dtype, *c.kind() == ColumnKind::Timestamp),
                    (false, Some(sentinel)) => scalar_item(&dtype, sentinel).ok_or_else(|| {
                        self.refuse(
                            c.name(),
                            format!(
                                "its null_value {sentinel:?} is not a {} item",
                                dtype.to_numpy_str()
                            ),
                        )
                    })?,
                    (false, None) => {
                        return Err(self.refuse(
                            c.name(),
                            "nullable without a mask or a null_value: nowhere to put a null".into(),
                        ))
                    }
                };
                for (i, _) in v.iter().enumerate().filter(|(_, &ok)| !ok) {
                    bytes[i * isz..(i + 1) * isz].copy_from_slice(&slot);
                }
            }
            Ok(Encoded {
                name: c.name().to_string(),
                items: Items::Fixed(bytes),
                mask: if c.mask_nulls() { valid } else { None },
            })
        }
    }

    /// The text given for string column `c` (of `kind`, for messages), or its default for
    /// `n` rows; `None` stands for a null.
    fn given_strings(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
        kind: &str,
    ) -> Result<Vec<Option<String>>> {
        Ok(match given {
            Some(Cells::Strings(v)) => v.clone(),
            Some(other) => {
                return Err(self.refuse(
                    c.name(),
                    format!(
                        "{} given for {kind} column (it takes text)",
                        other.describe()
                    ),
                ))
            }
            None => match c.default_value() {
                None => {
                    return Err(self.refuse(
                        c.name(),
                        "no values given, and the column declares no default".into(),
                    ))
                }
                Some(Value::Nil) => vec![None; n],
                Some(Value::Str(s)) => vec![Some(s.clone()); n],
                Some(v) => {
                    return Err(self.refuse(c.name(), format!("its default {v:?} is not a string")))
                }
            },
        })
    }

    /// Given values of column `c` (array dtype `dtype`) as its items and validity.
    fn encode_cells(
        &self,
        c: &Column,
        dtype: &Dtype,
        cells: &Cells,
        n: usize,
    ) -> Result<(Vec<u8>, Option<Vec<bool>>)> {
        match cells {
            Cells::Fixed {
                dtype: given,
                bytes,
                valid,
            } => {
                // A timestamp column stores int64 counts of its unit: it takes those, or
                // datetimes of the same unit.
                let unit = c.spec().get("unit").and_then(Value::as_str);
                let as_datetime = matches!(given, Dtype::Datetime { .. })
                    && *c.kind() == ColumnKind::Timestamp
                    && unit.is_some_and(|u| given.to_numpy_str() == format!("<M8[{u}]"));
                if !as_datetime && given.to_numpy_str() != dtype.to_numpy_str() {
                    return Err(self.refuse(
                        c.name(),
                        format!(
                            "values of dtype {} given for a {} column of dtype {}",
                            given.to_numpy_str(),
                            c.kind(),
                            dtype.to_numpy_str()
                        ),
                    ));
                }
                Ok((bytes.clone(), valid.clone()))
            }
            Cells::Values(_) | Cells::Items { .. } => Err(self.refuse(
                c.name(),
                format!("{} given for a {} column", cells.describe(), c.kind()),
            )),
            Cells::Strings(values) => {
                let Dtype::Unicode { chars, .. } = dtype else {
                    return Err(
                        self.refuse(c.name(), format!("text given for a {} column", c.kind()))
                    );
                };
                let mut bytes = Vec::with_capacity(n * chars * 4);
                for (i, v) in values.iter().enumerate() {
                    let item = ucs4(v.as_deref().unwrap_or(""), *chars).map_err(|len| {
                        self.refuse(
                            c.name(),
                            format!(
                                "row {i}: {len} characters, more than the column's max_length {chars}"
                            ),
                        )
                    })?;
                    bytes.extend_from_slice(&item);
                }
                let valid: Vec<bool> = values.iter().map(Option::is_some).collect();
                Ok((bytes, valid.contains(&false).then_some(valid)))
            }
        }
    }

    /// Column `c`'s declared default for `n` rows (a `null` default: nulls).
    fn default_cells(
        &self,
        c: &Column,
        dtype: &Dtype,
        n: usize,
    ) -> Result<(Vec<u8>, Option<Vec<bool>>)> {
        match c.default_value() {
            None => Err(self.refuse(
                c.name(),
                "no values given, and the column declares no default".into(),
            )),
            Some(Value::Nil) => Ok((vec![0; n * dtype.itemsize()], Some(vec![false; n]))),
            Some(v) => {
                let item = scalar_item(dtype, &v).ok_or_else(|| {
                    self.refuse(
                        c.name(),
                        format!("its default {v:?} is not a {} item", dtype.to_numpy_str()),
                    )
                })?;
                Ok((item.repeat(n), None))
            }
        }
    }

    /// Write the mask rows of an appended column: its batch validity where it has one,
    /// every other row of the mask's new room valid (python's `_grow` keeps spare rows
    /// valid: its `extend` writes a mask only for batches holding a null).
    fn write_mask(&self, e: &Encoded, start: u64, end: u64, capacity: u64) -> Result<()> {
        let key = self.table.key(&e.name, Part::NotNull);
        let n = (end - start) as usize;
        match self.table.store().member_path(&key) {
            Some(file) => {
                let mut mask = self.member(file)?;
                let len = mask.array().shape().first().copied().unwrap_or(0);
                let from = len.min(start);
                let to = len.max(capacity);
                let mut flags = vec![1u8; (to - from) as usize];
                if let Some(v) = &e.mask {
                    let at = (start - from) as usize;
                    for (f, &ok) in flags[at..at + n].iter_mut().zip(v) {
                        *f = u8::from(ok);
                    }
                }
                if to > len {
                    mask.resize(&[to])?;
                }
                mask.write_region_bytes(&Region::new([from], [to - from]), &flags)
            }
            None if self.table.store().contains(&key) => Err(embedded(&self.table, &key)),
            None => {
                let Some(v) = &e.mask else { return Ok(()) };
                let mut flags = vec![true; capacity as usize];
                flags[start as usize..end as usize].copy_from_slice(v);
                let rel = crate::store::keys::member_file(&key).map_err(|reason| Error::Store {
                    path: self.path.display().to_string(),
                    reason,
                })?;
                ArrayBuilder::for_type::<bool>(&[capacity])
                    .write(Target::File(self.path.join(rel)), &flags)
            }
        }
    }

    /// The file of the table's `_meta` manifest.
    fn meta_file(&self) -> Result<PathBuf> {
        member_file(&self.table, &ctable::meta_key(self.table.root()))
    }
}

/// One change of `_meta`'s attributes (at `file`): the schema's `n_rows` set (`Some`) or removed
/// (`None`), the epoch counter `epoch` advanced (when not empty), and with `stale`
/// every index descriptor marked stale.
fn edit_meta(
    t: &Table,
    file: &Path,
    n_rows: Option<u64>,
    epoch: &str,
    stale: bool,
    durability: Durability,
) -> Result<()> {
    edit_meta_columns(t, file, n_rows, (epoch, 1), stale, &[], durability)
}

/// [`edit_meta`] with the epoch counter advanced by `epoch.1`, and every materialized column
/// that depends (through others) on a column of `changed` marked stale (python-blosc2's
/// `_mark_generated_columns_stale`).
fn edit_meta_columns(
    t: &Table,
    file: &Path,
    n_rows: Option<u64>,
    (epoch, by): (&str, i64),
    stale: bool,
    changed: &[&str],
    durability: Durability,
) -> Result<()> {
    let meta = t.store().open_schunk(&ctable::meta_key(t.root()))?;
    let bad = |reason: String| Error::Store {
        path: t.store().path().display().to_string(),
        reason: format!("table manifest: {reason}"),
    };
    let mut schema =
        crate::format::json::parse(t.schema_json()).map_err(|e| bad(format!("schema: {e}")))?;
    let Value::Map(fields) = &mut schema else {
        return Err(bad("the schema is not a JSON object".into()));
    };
    fields.retain(|(k, _)| k.as_str() != Some("n_rows"));
    if let Some((_, Value::Array(generated))) = fields
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("materialized_columns"))
    {
        mark_generated_stale(generated, changed);
    }
    if let Some(n) = n_rows {
        fields.push((Value::Str("n_rows".into()), Value::Int(n as i64)));
    }
    let mut attrs = vec![(
        "schema".to_string(),
        Value::Str(crate::format::json::write(&schema)),
    )];
    if !epoch.is_empty() {
        let now = meta.attr(epoch)?.and_then(|v| v.as_i64()).unwrap_or(0);
        attrs.push((epoch.to_string(), Value::Int(now + by)));
    }
    if stale {
        if let Some(catalog) = meta.attr("index_catalog")? {
            if let Some(marked) = derived::table_catalog_stale(&catalog) {
                attrs.push(("index_catalog".to_string(), marked));
            }
        }
    }
    let attrs: Vec<(&str, Value)> = attrs.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    set_attrs_with(file, &attrs, durability)
}

/// Mark stale the materialized columns of `generated` (the schema's `materialized_columns`
/// entries) that depend, directly or through each other, on a column of `changed`.
fn mark_generated_stale(generated: &mut [Value], changed: &[&str]) {
    let deps = |v: &Value| -> Vec<String> {
        v.get("col_deps")
            .and_then(Value::as_slice)
            .map(|l| {
                l.iter()
                    .filter_map(|d| d.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(String::from);
    let mut affected: Vec<String> = Vec::new();
    let mut queue: Vec<String> = changed.iter().map(|s| s.to_string()).collect();
    while let Some(current) = queue.pop() {
        for g in generated.iter() {
            if let Some(n) = name(g) {
                if !affected.contains(&n) && deps(g).contains(&current) {
                    affected.push(n.clone());
                    queue.push(n);
                }
            }
        }
    }
    for g in generated.iter_mut() {
        if name(g).is_some_and(|n| affected.contains(&n)) {
            if let Value::Map(fields) = g {
                match fields.iter_mut().find(|(k, _)| k.as_str() == Some("stale")) {
                    Some((_, v)) => *v = Value::Bool(true),
                    None => fields.push((Value::Str("stale".into()), Value::Bool(true))),
                }
            }
        }
    }
}

/// Write `items` (one item per entry of `order`, indexed by its second field) at the
/// physical rows `physical` (sorted, paired with `order`) of a 1-d array: one region write
/// over the span they cover, the rows between kept.
fn scatter(
    a: &mut ArrayMut,
    physical: &[usize],
    order: &[(u64, usize)],
    items: &[u8],
) -> Result<()> {
    let (Some(&first), Some(&last)) = (physical.first(), physical.last()) else {
        return Ok(());
    };
    let isz = row_bytes(a);
    let region = rows_region(a, first as u64, (last - first + 1) as u64);
    let mut span = vec![0u8; (last - first + 1) * isz];
    a.array().read_region_into(&region, &mut span)?;
    for (&p, &(_, i)) in physical.iter().zip(order) {
        let at = (p - first) * isz;
        span[at..at + isz].copy_from_slice(&items[i * isz..(i + 1) * isz]);
    }
    a.write_region_bytes(&region, &span)
}

/// A copy of directory `from` at `to`: the files of `copy` (paths inside `from`) copied,
/// every other file hard-linked, subdirectories recreated the same way.
fn link_tree(from: &Path, to: &Path, copy: &[PathBuf]) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Io { path, source }
    };
    std::fs::create_dir(to).map_err(io(to))?;
    for e in std::fs::read_dir(from).map_err(io(from))? {
        let e = e.map_err(io(from))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().map_err(io(&src))?;
        if kind.is_dir() {
            link_tree(&src, &dst, copy)?;
        } else if copy.contains(&src) {
            std::fs::copy(&src, &dst).map_err(io(&src))?;
        } else {
            std::fs::hard_link(&src, &dst).map_err(io(&src))?;
        }
    }
    Ok(())
}

/// Make the rows `end..` of each mask valid (rows no live row uses).
fn clear_dead_masks(end: u64, masks: &[PathBuf], durability: Durability) -> Result<()> {
    for m in masks {
        let mut a = ArrayMut::open_table_member(m)?.with_durability(durability);
        let len = a.array().shape().first().copied().unwrap_or(0);
        if len > end {
            let valid = vec![1u8; (len - end) as usize];
            a.write_region_bytes(&Region::new([end], [len - end]), &valid)?;
        }
    }
    Ok(())
}

/// Write `bytes` (whole items) at rows `start..` of a 1-d array, growing it to `capacity`
/// rows first when it is shorter: one change when the rows go right after its end (an
/// append), else a resize and a region write.
fn write_rows(a: &mut ArrayMut, start: u64, bytes: &[u8], capacity: u64) -> Result<()> {
    let len = a.array().shape().first().copied().unwrap_or(0);
    let n = (bytes.len() / row_bytes(a)) as u64;
    if len == start && start + n == capacity {
        return a.append_bytes(0, bytes);
    }
    if capacity > len {
        let mut shape = a.array().shape().to_vec();
        shape[0] = capacity;
        a.resize(&shape)?;
    }
    a.write_region_bytes(&rows_region(a, start, n), bytes)
}

/// The bytes of one row of a column's array: an item, or a sub-array (`ndarray` columns).
fn row_bytes(a: &ArrayMut) -> usize {
    let shape = a.array().shape();
    let items: u64 = shape.iter().skip(1).product();
    (a.array().dtype().itemsize() * items as usize).max(1)
}

/// Rows `start..start + n` of a column's array, whole rows.
fn rows_region(a: &ArrayMut, start: u64, n: u64) -> Region {
    let shape = a.array().shape();
    let mut at = vec![0; shape.len().max(1)];
    let mut len = shape.to_vec();
    at[0] = start;
    if len.is_empty() {
        len.push(n);
    } else {
        len[0] = n;
    }
    Region::new(at, len)
}

/// Remove the staging directories and files (`PREFIX*.tmp`) in `dir`, as far as possible.
fn sweep_staging(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(prefix) && name.ends_with(".tmp") {
            let _ = match e.file_type() {
                Ok(k) if k.is_dir() => std::fs::remove_dir_all(e.path()),
                _ => std::fs::remove_file(e.path()),
            };
        }
    }
}

/// The file of member `key` of `table`'s directory store; embedded members are refused.
fn member_file(table: &Table, key: &str) -> Result<PathBuf> {
    table
        .store()
        .member_path(key)
        .ok_or_else(|| embedded(table, key))
}

fn embedded(table: &Table, key: &str) -> Error {
    Error::Store {
        path: table.store().path().display().to_string(),
        reason: format!(
            "member {key} is not a file of the directory (embedded in embed.b2e, or absent): \
             it cannot be changed in place"
        ),
    }
}
