//! Rows of `ndarray` columns (a sub-array of one shape per row, python-blosc2's
//! `b2.ndarray(item_shape, dtype)`): the column's array has the rows along its first
//! dimension and the item shape after it; rows are written whole, as python's `extend`
//! writes its `(nrows, *item_shape)` batch. A column left out takes its declared default
//! (a nested list of the item shape), or its `null_value` filling the item when it declares
//! none, as python's `_coerce_ndarray_batch`; without either it is refused. Rows given as
//! nested lists (`Rows::values`; SQL's fixed-size lists) are checked for the item shape.

#![forbid(unsafe_code)]

use super::{scalar_item, Cells, Encoded, Items, TableMut};
use crate::error::Result;
use crate::model::attrs::Value;
use crate::table::Column;

impl TableMut {
    /// `ndarray` column `c`'s `n` rows: the sub-arrays given, or its default's.
    pub(super) fn encode_ndarray(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
    ) -> Result<Encoded> {
        let a = self.table.column_array(c.name())?;
        let dtype = a.dtype().clone();
        let item_shape: Vec<u64> = a.shape().iter().skip(1).copied().collect();
        let per_row = item_shape.iter().product::<u64>() as usize;
        let refuse = |why: String| self.refuse(c.name(), why);
        let bytes = match given {
            Some(Cells::Items {
                dtype: g,
                shape,
                bytes,
            }) => {
                if g.to_numpy_str() != dtype.to_numpy_str() || *shape != item_shape {
                    return Err(refuse(format!(
                        "items of dtype {} and shape {shape:?} given for an ndarray column of \
                         {} items of shape {item_shape:?}",
                        g.to_numpy_str(),
                        dtype.to_numpy_str()
                    )));
                }
                bytes.clone()
            }
            // Nested lists (SQL's fixed-size lists), as python's `_coerce_ndarray_value`
            // takes them: each of the item shape, a null filled with the `null_value`.
            Some(Cells::Values(rows)) => {
                let mut out = Vec::with_capacity(rows.len() * per_row * dtype.itemsize());
                for (row, v) in rows.iter().enumerate() {
                    let items = if v.is_nil() {
                        match c.spec().get("null_value") {
                            Some(nv) if !nv.is_nil() => vec![nv.clone(); per_row],
                            _ => {
                                return Err(refuse(format!(
                                    "row {row} is null and the column declares no null_value"
                                )))
                            }
                        }
                    } else {
                        if shape_of(v).as_deref() != Some(&item_shape[..]) {
                            return Err(refuse(format!(
                                "row {row} is not a nested list of shape {item_shape:?}: {v:?}"
                            )));
                        }
                        flat(v)
                    };
                    out.extend(
                        item_bytes(&dtype, &items, |x| format!("row {row}: {x:?}"))
                            .map_err(refuse)?,
                    );
                }
                out
            }
            Some(other) => {
                return Err(refuse(format!(
                    "{} given for an ndarray column of {} items of shape {item_shape:?} \
                     (it takes sub-arrays, Rows::ndarray, or nested lists)",
                    other.describe(),
                    dtype.to_numpy_str()
                )))
            }
            None => {
                let fill: Vec<Value> =
                    match c.default_value() {
                        Some(v) if !v.is_nil() => flat(&v),
                        _ => match c.spec().get("null_value") {
                            Some(v) if !v.is_nil() => vec![v.clone(); per_row],
                            _ => return Err(refuse(
                                "no values given, and the column declares no default (python's \
                                 extend refuses it too)"
                                    .into(),
                            )),
                        },
                    };
                if fill.len() != per_row {
                    return Err(refuse(format!(
                        "its default holds {} items, not the {per_row} of shape {item_shape:?}",
                        fill.len()
                    )));
                }
                item_bytes(&dtype, &fill, |v| format!("its default item {v:?}"))
                    .map_err(refuse)?
                    .repeat(n)
            }
        };
        Ok(Encoded {
            name: c.name().to_string(),
            items: Items::Fixed(bytes),
            mask: None,
        })
    }
}

/// `items` as bytes of `dtype`; one that is not an item of it is refused, named by `what`.
fn item_bytes(
    dtype: &crate::model::dtype::Dtype,
    items: &[Value],
    what: impl Fn(&Value) -> String,
) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(items.len() * dtype.itemsize());
    for v in items {
        out.extend(
            scalar_item(dtype, v)
                .ok_or_else(|| format!("{} is not a {} item", what(v), dtype.to_numpy_str()))?,
        );
    }
    Ok(out)
}

/// The shape of a regular nested list (`[]` for a scalar); `None` when ragged.
fn shape_of(v: &Value) -> Option<Vec<u64>> {
    match v {
        Value::Array(items) | Value::Tuple(items) => {
            let inner = match items.first() {
                Some(first) => shape_of(first)?,
                None => Vec::new(),
            };
            if items
                .iter()
                .skip(1)
                .any(|x| shape_of(x).as_ref() != Some(&inner))
            {
                return None;
            }
            let mut shape = vec![items.len() as u64];
            shape.extend(inner);
            Some(shape)
        }
        _ => Some(Vec::new()),
    }
}

/// The numbers of a nested list, in C order.
fn flat(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(items) | Value::Tuple(items) => items.iter().flat_map(flat).collect(),
        other => vec![other.clone()],
    }
}
