//! The given values as each stored column's items: python's fill for nulls and missing
//! columns, sentinels, masks, strings as UCS-4 or utf8.

#![forbid(unsafe_code)]

use super::*;

/// Items of `dtype` at null slots of a mask-stored column: python-blosc2's fill
/// (`schema.fill_value_for`: NaN for floats, `int64.min` for timestamps, else zero).
pub(super) fn null_fill(dtype: &Dtype, timestamp: bool) -> Vec<u8> {
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
pub(super) fn scalar_item(dtype: &Dtype, value: &Value) -> Option<Vec<u8>> {
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
pub(super) fn ucs4(s: &str, chars: usize) -> std::result::Result<Vec<u8>, usize> {
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
pub(super) struct Encoded {
    pub(super) name: String,
    pub(super) items: Items,
    pub(super) mask: Option<Vec<bool>>,
}

/// The stored form of a column's rows.
pub(super) enum Items {
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
    /// Column `name`, which values are given for: a computed one is refused (python-blosc2
    /// evaluates it).
    pub(super) fn stored_column(&self, name: &str) -> Result<&Column> {
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
    pub(super) fn encode(&self, rows: &Rows) -> Result<Vec<Encoded>> {
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
    pub(super) fn encode_one(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
    ) -> Result<Encoded> {
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
    pub(super) fn given_strings(
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
    pub(super) fn encode_cells(
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
    pub(super) fn default_cells(
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
}
