//! Rows of the columns python-blosc2 keeps one msgpack item per row in a BatchArray
//! (`_cols/<name>.b2b`): `list` (a `ListArray`), `vlstring`, `vlbytes`, `object` and
//! `struct` (a `_ScalarVarLenArray`). Values are checked and coerced as python-blosc2's
//! `coerce_list_cell` / `_coerce_scalar_item` / `_ScalarVarLenArray._coerce` do them (item
//! kinds, ranges, bounds, lengths, nulls), then written through `write::batch`:
//! - an append writes its rows as one new batch at the table's next row; items a deleted
//!   last row left past it are cut first (python-blosc2 4.14.1 keeps them and its own
//!   `extend` then appends after them, one row off per dead item: docs/meaning-audit.md);
//! - an update rewrites the items from the first changed row on;
//! - a delete that trims the table cuts the items past its last live row, so python's next
//!   `extend` is right too.
//!
//! Arrow-serialized `list` columns (`serializer="arrow"`) are written with feature `arrow`
//! (blocks of the column's `arrow_schema`) and refused by name without it.

#![forbid(unsafe_code)]

use super::{Cells, Encoded, Items, TableMut};
use crate::error::Result;
use crate::format::ctable::Part;
use crate::model::attrs::Value;
use crate::table::{Column, ColumnKind};
use crate::write::batch::{write_items, At};

/// What b2nd writes, said when a column's serializer is not one of them.
#[cfg(feature = "arrow")]
pub(super) const WRITTEN: &str = "b2nd writes msgpack and arrow ones";
#[cfg(not(feature = "arrow"))]
pub(super) const WRITTEN: &str = "b2nd writes msgpack ones (arrow ones with feature `arrow`)";

/// Whether b2nd writes the items of a column of serializer `s`.
pub(super) fn writes_serializer(s: &str) -> bool {
    s == "msgpack" || (cfg!(feature = "arrow") && s == "arrow")
}

impl TableMut {
    /// Column `c`'s `n` rows (given, or its default) checked and coerced as python-blosc2
    /// coerces them.
    pub(super) fn encode_varlen(
        &self,
        c: &Column,
        given: Option<&Cells>,
        n: usize,
    ) -> Result<Encoded> {
        let kind = c.kind();
        if let Some(ser) = c
            .spec()
            .get("serializer")
            .and_then(Value::as_str)
            .filter(|s| !writes_serializer(s))
        {
            return Err(self.refuse(
                c.name(),
                format!("a {kind} column serialized as {ser:?}, {WRITTEN}"),
            ));
        }
        let values: Vec<Value> = match given {
            Some(Cells::Values(v)) => v.clone(),
            Some(Cells::Strings(v)) => v
                .iter()
                .map(|s| s.clone().map_or(Value::Nil, Value::Str))
                .collect(),
            Some(other) => {
                return Err(self.refuse(
                    c.name(),
                    format!("{} given for a {kind} column", other.describe()),
                ))
            }
            None => match c.default_value() {
                None => {
                    return Err(self.refuse(
                        c.name(),
                        "no values given, and the column declares no default".into(),
                    ))
                }
                Some(v) => vec![v; n],
            },
        };
        let spec = c.spec();
        let out = values
            .into_iter()
            .enumerate()
            .map(|(row, v)| {
                if v.is_nil() {
                    return if c.nullable() {
                        Ok(Value::Nil)
                    } else {
                        Err(format!("row {row} is null and the column is not nullable"))
                    };
                }
                let cell = match kind {
                    ColumnKind::List => list_cell(spec, v),
                    ColumnKind::Struct => struct_item(spec, v),
                    ColumnKind::VlString => match v {
                        Value::Str(_) => Ok(v),
                        other => Err(format!("{other:?} is not text")),
                    },
                    ColumnKind::VlBytes => match v {
                        Value::Bytes(_) => Ok(v),
                        other => Err(format!("{other:?} is not bytes")),
                    },
                    _ => Ok(v),
                };
                cell.map_err(|why| format!("row {row}: {why}"))
            })
            .collect::<std::result::Result<Vec<Value>, String>>()
            .map_err(|why| self.refuse(c.name(), why))?;
        Ok(Encoded {
            name: c.name().to_string(),
            items: Items::Cells(out),
            mask: None,
        })
    }

    /// The BatchArray file of variable-length column `name`.
    pub(super) fn cells_file(&self, name: &str) -> Result<std::path::PathBuf> {
        super::member_file(&self.table, &self.table.key(name, Part::Values))
    }

    /// Cut the items past row `end` off every variable-length column holding more (after a
    /// delete that trims the table).
    pub(super) fn cut_cells(&self, end: u64) -> Result<()> {
        let t = &self.table;
        for c in t.columns().iter().filter(|c| c.computed().is_none()) {
            if !is_batch_kind(c.kind()) {
                continue;
            }
            let stored = self.stored_cells(c.name())?;
            if stored > end {
                write_items(
                    &self.cells_file(c.name())?,
                    At::Item(end),
                    &[],
                    self.durability,
                )?;
            }
        }
        Ok(())
    }

    /// The items column `name`'s BatchArray holds: its recorded batch lengths added up, or
    /// its items counted.
    pub(super) fn stored_cells(&self, name: &str) -> Result<u64> {
        let t = &self.table;
        let s = t.store().open_schunk(&t.key(name, Part::Values))?;
        if let Some(Value::Map(fields)) = s.attr("_batch_array_metadata")? {
            let lengths = fields
                .iter()
                .find(|(k, _)| k.as_str() == Some("batch_lengths"))
                .and_then(|(_, v)| match v {
                    Value::Array(v) => v.iter().map(Value::as_u64).sum::<Option<u64>>(),
                    _ => None,
                });
            if let Some(n) = lengths {
                return Ok(n);
            }
        }
        Ok(s.read_objects()?.len() as u64)
    }
}

/// Whether columns of `kind` keep one msgpack item per row in a BatchArray.
pub(super) fn is_batch_kind(kind: &ColumnKind) -> bool {
    matches!(
        kind,
        ColumnKind::List
            | ColumnKind::VlString
            | ColumnKind::VlBytes
            | ColumnKind::Object
            | ColumnKind::Struct
    )
}

/// A list cell as python-blosc2's `coerce_list_cell` makes it: each item coerced to the
/// spec's `item`.
fn list_cell(spec: &Value, v: Value) -> std::result::Result<Value, String> {
    let item = spec
        .get("item")
        .ok_or("the list column's schema names no item kind")?;
    match v {
        Value::Array(items) | Value::Tuple(items) => items
            .into_iter()
            .map(|x| scalar_item(item, x))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Err(format!("{other:?} is not a list")),
    }
}

/// A struct as python-blosc2's `_coerce_struct_item` makes it: each field of the spec
/// coerced, in the spec's order; a field missing is an error, extra ones are dropped.
fn struct_item(spec: &Value, v: Value) -> std::result::Result<Value, String> {
    let Value::Map(given) = v else {
        return Err(format!("{v:?} is not a struct (a map of its fields)"));
    };
    let fields: Vec<(String, &Value)> = match spec.get("fields") {
        Some(Value::Array(fs)) => fs
            .iter()
            .map(|f| {
                f.get("name")
                    .and_then(Value::as_str)
                    .map(|n| (n.to_string(), f))
                    .ok_or("a struct field without a name".to_string())
            })
            .collect::<std::result::Result<_, _>>()?,
        Some(Value::Map(fs)) => fs
            .iter()
            .filter_map(|(k, f)| k.as_str().map(|n| (n.to_string(), f)))
            .collect(),
        _ => return Err("the struct's schema lists no fields".into()),
    };
    let mut out = Vec::with_capacity(fields.len());
    for (name, f) in fields {
        let x = given
            .iter()
            .find(|(k, _)| k.as_str() == Some(name.as_str()))
            .map(|(_, x)| x.clone())
            .ok_or_else(|| format!("the struct item is missing field {name:?}"))?;
        out.push((Value::Str(name), scalar_item(f, x)?));
    }
    Ok(Value::Map(out))
}

/// One item as python-blosc2's `_coerce_scalar_item` makes it for item spec `spec`: nulls,
/// nested lists and structs, text, bytes, numbers of the item's dtype (in range; floats of
/// `float32` rounded to it), and the spec's bounds and lengths.
fn scalar_item(spec: &Value, v: Value) -> std::result::Result<Value, String> {
    let kind = spec.get("kind").and_then(Value::as_str).unwrap_or("");
    if v.is_nil() {
        return if spec.get("nullable").is_some_and(Value::truthy) {
            Ok(Value::Nil)
        } else {
            Err(format!("null {kind} list items are not allowed"))
        };
    }
    let out = match kind {
        "struct" => return struct_item(spec, v),
        "list" => return list_cell(spec, v),
        "string" | "vlstring" | "utf8" | "dictionary" => match v {
            Value::Str(_) => v,
            other => return Err(format!("{other:?} is not text")),
        },
        "bytes" | "vlbytes" => match v {
            Value::Bytes(_) => v,
            Value::Str(s) => Value::Bytes(s.into_bytes()),
            other => return Err(format!("{other:?} is not bytes")),
        },
        "bool" => match v {
            Value::Bool(_) => v,
            other => return Err(format!("{other:?} is not a bool")),
        },
        "float32" | "float64" => {
            let x = v.as_f64().ok_or_else(|| format!("{v:?} is not a number"))?;
            Value::Float(if kind == "float32" {
                x as f32 as f64
            } else {
                x
            })
        }
        "timestamp" | "int64" | "int32" | "int16" | "int8" | "uint64" | "uint32" | "uint16"
        | "uint8" => {
            let (lo, hi): (i128, i128) = match kind {
                "int8" => (i8::MIN.into(), i8::MAX.into()),
                "int16" => (i16::MIN.into(), i16::MAX.into()),
                "int32" => (i32::MIN.into(), i32::MAX.into()),
                "uint8" => (0, u8::MAX.into()),
                "uint16" => (0, u16::MAX.into()),
                "uint32" => (0, u32::MAX.into()),
                "uint64" => (0, u64::MAX.into()),
                _ => (i64::MIN.into(), i64::MAX.into()),
            };
            let x: i128 = match v {
                Value::Int(i) => i.into(),
                Value::UInt(u) => u.into(),
                Value::Bool(b) => b.into(),
                other => return Err(format!("{other:?} is not an integer")),
            };
            if x < lo || x > hi {
                return Err(format!("{x} is out of the range of {kind}"));
            }
            match i64::try_from(x) {
                Ok(i) => Value::Int(i),
                Err(_) => Value::UInt(x as u64),
            }
        }
        other => return Err(format!("list items of kind {other:?} are not written")),
    };
    bounds(spec, &out)?;
    Ok(out)
}

/// The spec's `ge`, `gt`, `le`, `lt`, `max_length` and `min_length` checked.
fn bounds(spec: &Value, v: &Value) -> std::result::Result<(), String> {
    if let Some(x) = v.as_f64() {
        for (k, ok) in [
            ("ge", &(|b: f64| x >= b) as &dyn Fn(f64) -> bool),
            ("gt", &|b| x > b),
            ("le", &|b| x <= b),
            ("lt", &|b| x < b),
        ] {
            if let Some(b) = spec.get(k).and_then(Value::as_f64) {
                if !ok(b) {
                    return Err(format!("list item {v:?} violates {k}={b}"));
                }
            }
        }
    }
    let len = match v {
        Value::Str(s) => Some(s.chars().count()),
        Value::Bytes(b) => Some(b.len()),
        _ => None,
    };
    if let Some(len) = len {
        if let Some(m) = spec.get("max_length").and_then(Value::as_u64) {
            if len as u64 > m {
                return Err(format!("list item {v:?} exceeds max_length={m}"));
            }
        }
        if let Some(m) = spec.get("min_length").and_then(Value::as_u64) {
            if (len as u64) < m {
                return Err(format!("list item {v:?} is shorter than min_length={m}"));
            }
        }
    }
    Ok(())
}
