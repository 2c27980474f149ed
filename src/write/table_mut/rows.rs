//! [`Rows`]: the values given for a change, column by column.

#![forbid(unsafe_code)]

use super::*;

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
    pub(super) len: Option<u64>,
    pub(super) columns: Vec<(String, Cells)>,
}

/// One column's values in a [`Rows`].
#[derive(Debug, Clone)]
pub(super) enum Cells {
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
    pub(super) fn describe(&self) -> String {
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

    pub(super) fn add(mut self, name: &str, n: usize, cells: Cells) -> Result<Rows> {
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
