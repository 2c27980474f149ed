//! The blocks of a BatchArray written with `serializer="arrow"` (feature `arrow`): each block
//! is an Arrow IPC stream of one record batch whose first column holds the block's items
//! (python-blosc2 4.3 and later); older blocks are a bare record-batch message whose schema
//! is the `arrow_schema` of the `batcharray` metalayer. Items come out as [`Value`]s, as
//! python-blosc2's `.as_py()` gives them: lists as lists, structs as dicts, nulls as `Nil`.
//! Arrow extension types are refused, as python-blosc2 refuses them in its safe mode, and so
//! are types with no [`Value`] (timestamps, decimals, ...), by name. [`encode_block`] writes
//! items back as python-blosc2 4.14.1 writes a block: an IPC stream of one batch of the
//! metalayer's schema.

#![forbid(unsafe_code)]

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, BooleanArray, GenericListArray,
    LargeBinaryArray, LargeStringArray, OffsetSizeTrait, PrimitiveArray, RecordBatch, StringArray,
    StringViewArray, StructArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_ipc::reader::StreamDecoder;
use arrow_ipc::writer::StreamWriter;
use arrow_schema::{DataType, FieldRef, Schema};

use crate::model::attrs::Value;

/// The items of one block; `schema`: the metalayer's `arrow_schema` (an IPC schema message),
/// for blocks of the older bare form; `items_per_block`: the metalayer's, when given.
pub(crate) fn block_items(
    block: &[u8],
    schema: Option<&[u8]>,
    items_per_block: Option<u64>,
) -> Result<Vec<Value>, String> {
    let col = block_array(block, schema, items_per_block)?;
    (0..col.len()).map(|i| value(&col, i)).collect()
}

/// The items of one block as the Arrow array stored (see [`block_items`]).
///
/// A block declaring more items than the metalayer's `items_per_block` (python-blosc2 splits
/// every batch into blocks of that many) and than 8 per byte of the block is refused: only
/// items of no bytes (Arrow's null type, structs without fields) can be that many, and
/// those would be made one by one from a few bytes declaring any number.
pub(crate) fn block_array(
    block: &[u8],
    schema: Option<&[u8]>,
    items_per_block: Option<u64>,
) -> Result<ArrayRef, String> {
    let col = stored_array(block, schema)?;
    let bytes = block.len() + schema.map_or(0, <[u8]>::len);
    let most = (8 * bytes as u64 + 1024).max(items_per_block.unwrap_or(0));
    if col.len() as u64 > most {
        return Err(format!(
            "an Arrow block declaring {} items in {bytes} bytes (items_per_block {})",
            col.len(),
            items_per_block.map_or("not given".to_string(), |n| n.to_string())
        ));
    }
    Ok(col)
}

/// [`block_array`] before its check of the number of items.
fn stored_array(block: &[u8], schema: Option<&[u8]>) -> Result<ArrayRef, String> {
    let batch = match one_batch(block) {
        Ok(b) => b,
        Err(as_stream) => match schema {
            // A schema message followed by a record-batch message is an IPC stream.
            Some(s) => one_batch(&[s, block].concat()).map_err(|e| {
                format!(
                    "an Arrow block neither an IPC stream ({as_stream}) nor a record batch ({e})"
                )
            })?,
            None => {
                return Err(format!(
                    "an Arrow block that is not an IPC stream: {as_stream}"
                ))
            }
        },
    };
    if let Some(f) = batch
        .schema()
        .fields()
        .iter()
        .find(|f| f.metadata().contains_key("ARROW:extension:name"))
    {
        return Err(format!(
            "an Arrow extension type ({}) in column {:?}: python-blosc2 refuses it too",
            f.metadata()["ARROW:extension:name"],
            f.name()
        ));
    }
    batch
        .columns()
        .first()
        .cloned()
        .ok_or_else(|| "an Arrow block with no column".to_string())
}

fn one_batch(bytes: &[u8]) -> Result<RecordBatch, String> {
    // The push decoder takes the bytes there are: the stream reader allocates the lengths a
    // message declares before reading them (2 GiB, zeroed, for one changed byte).
    unpanicked(|| {
        let mut d = StreamDecoder::new();
        let mut buf = Buffer::from(bytes);
        match d.decode(&mut buf).map_err(|e| e.to_string())? {
            Some(batch) => Ok(batch),
            None => Err("no whole record batch".to_string()),
        }
    })
}

/// `f`'s result, or an error where it panicked: arrow-ipc's schema decoding panics on some
/// flatbuffers that verify but are not valid schemas (`fields().unwrap()`, "Unexpected
/// bitwidth"), and its bytes come from a file.
fn unpanicked<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(format!("Arrow IPC bytes its reader cannot decode ({why})"))
    })
}

/// Item `i` of `a` as python's `.as_py()` gives it (also what Arrow rows given to a table
/// become).
pub(crate) fn value(a: &ArrayRef, i: usize) -> Result<Value, String> {
    if a.is_null(i) {
        return Ok(Value::Nil);
    }
    macro_rules! int {
        ($t:ty) => {
            Value::Int(i64::from(a.as_primitive::<$t>().value(i)))
        };
    }
    Ok(match a.data_type() {
        DataType::Null => Value::Nil,
        DataType::Boolean => Value::Bool(a.as_boolean().value(i)),
        DataType::Int8 => int!(Int8Type),
        DataType::Int16 => int!(Int16Type),
        DataType::Int32 => int!(Int32Type),
        DataType::Int64 => int!(Int64Type),
        DataType::UInt8 => int!(UInt8Type),
        DataType::UInt16 => int!(UInt16Type),
        DataType::UInt32 => int!(UInt32Type),
        DataType::UInt64 => {
            let v = a.as_primitive::<UInt64Type>().value(i);
            i64::try_from(v).map_or(Value::UInt(v), Value::Int)
        }
        DataType::Float16 => Value::Float(f64::from(a.as_primitive::<Float16Type>().value(i))),
        DataType::Float32 => Value::Float(f64::from(a.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => Value::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => Value::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::LargeUtf8 => Value::Str(a.as_string::<i64>().value(i).to_string()),
        DataType::Utf8View => Value::Str(a.as_string_view().value(i).to_string()),
        DataType::Binary => Value::Bytes(a.as_binary::<i32>().value(i).to_vec()),
        DataType::LargeBinary => Value::Bytes(a.as_binary::<i64>().value(i).to_vec()),
        DataType::BinaryView => Value::Bytes(a.as_binary_view().value(i).to_vec()),
        DataType::FixedSizeBinary(_) => Value::Bytes(a.as_fixed_size_binary().value(i).to_vec()),
        DataType::List(_) => items(&a.as_list::<i32>().value(i))?,
        DataType::LargeList(_) => items(&a.as_list::<i64>().value(i))?,
        DataType::FixedSizeList(_, _) => items(&a.as_fixed_size_list().value(i))?,
        DataType::Struct(fields) => {
            let s = a.as_struct();
            Value::Map(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(f, c)| Ok((Value::Str(f.name().clone()), value(c, i)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
        DataType::Dictionary(_, _) => {
            let d = a.as_any_dictionary();
            if d.values().is_empty() {
                // Arrow's key normalization panics without values (a valid array has none
                // but null keys, answered above).
                return Err("a dictionary key into no values".into());
            }
            let key = d.normalized_keys()[i];
            value(d.values(), key)?
        }
        other => return Err(format!("an Arrow {other} item, which b2nd does not read")),
    })
}

fn items(a: &ArrayRef) -> Result<Value, String> {
    Ok(Value::Array(
        (0..a.len())
            .map(|i| value(a, i))
            .collect::<Result<_, _>>()?,
    ))
}

/// The schema of a BatchArray's blocks: its metalayer's `arrow_schema`, an IPC schema
/// message of one field.
pub(crate) fn block_schema(schema: &[u8]) -> Result<Schema, String> {
    let s = unpanicked(|| {
        arrow_ipc::convert::try_schema_from_ipc_buffer(schema).map_err(|e| e.to_string())
    })
    .map_err(|e| format!("its arrow_schema: {e}"))?;
    if s.fields().len() != 1 {
        return Err(format!(
            "its arrow_schema has {} fields, not one",
            s.fields().len()
        ));
    }
    Ok(s)
}

/// One block of `items` as python-blosc2 4.14.1 writes it (`_serialize_arrow_block`): an
/// Arrow IPC stream of one record batch of `schema` (see [`block_schema`]) whose column holds
/// the items. An item the column's type cannot hold is refused.
pub(crate) fn encode_block(items: &[Value], schema: &Schema) -> Result<Vec<u8>, String> {
    let field = &schema.fields()[0];
    let refs: Vec<&Value> = items.iter().collect();
    let column = array(field.data_type(), &refs)?;
    let batch =
        RecordBatch::try_new(Arc::new(schema.clone()), vec![column]).map_err(|e| e.to_string())?;
    let mut w = StreamWriter::try_new(Vec::new(), schema).map_err(|e| e.to_string())?;
    w.write(&batch).map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;
    w.into_inner().map_err(|e| e.to_string())
}

/// The nulls of `vals` (none when no value is a null).
fn nulls(vals: &[&Value]) -> Option<NullBuffer> {
    vals.iter()
        .any(|v| v.is_nil())
        .then(|| NullBuffer::from(vals.iter().map(|v| !v.is_nil()).collect::<Vec<bool>>()))
}

/// An Arrow array of type `dt` holding `vals` (nulls where they are `Nil`).
fn array(dt: &DataType, vals: &[&Value]) -> Result<ArrayRef, String> {
    /// Each value converted by `conv` (`None` for a null); one `conv` refuses is an error.
    fn each<'a, T>(
        vals: &[&'a Value],
        dt: &DataType,
        conv: impl Fn(&'a Value) -> Option<T>,
    ) -> Result<Vec<Option<T>>, String> {
        vals.iter()
            .map(|&v| match v {
                Value::Nil => Ok(None),
                v => conv(v)
                    .map(Some)
                    .ok_or_else(|| format!("{v:?} does not fit an Arrow {dt}")),
            })
            .collect()
    }
    fn prim<T: ArrowPrimitiveType>(
        vals: &[&Value],
        dt: &DataType,
        conv: impl Fn(&Value) -> Option<T::Native>,
    ) -> Result<ArrayRef, String> {
        Ok(Arc::new(
            each(vals, dt, conv)?
                .into_iter()
                .collect::<PrimitiveArray<T>>()
                .with_data_type(dt.clone()),
        ))
    }
    fn int<N: TryFrom<i64> + TryFrom<u64>>(v: &Value) -> Option<N> {
        match v {
            Value::Int(i) => N::try_from(*i).ok(),
            Value::UInt(u) => N::try_from(*u).ok(),
            _ => None,
        }
    }
    fn float(v: &Value) -> Option<f64> {
        match v {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            Value::UInt(u) => Some(*u as f64),
            _ => None,
        }
    }
    fn strs<'a>(vals: &[&'a Value], dt: &DataType) -> Result<Vec<Option<&'a str>>, String> {
        each(vals, dt, |v| match v {
            Value::Str(s) => Some(s.as_str()),
            _ => None,
        })
    }
    fn bytes<'a>(vals: &[&'a Value], dt: &DataType) -> Result<Vec<Option<&'a [u8]>>, String> {
        each(vals, dt, |v| match v {
            Value::Bytes(b) => Some(b.as_slice()),
            _ => None,
        })
    }
    Ok(match dt {
        DataType::Boolean => Arc::new(BooleanArray::from(each(vals, dt, |v| match v {
            Value::Bool(b) => Some(*b),
            _ => None,
        })?)),
        DataType::Int8 => prim::<Int8Type>(vals, dt, int)?,
        DataType::Int16 => prim::<Int16Type>(vals, dt, int)?,
        DataType::Int32 => prim::<Int32Type>(vals, dt, int)?,
        DataType::Int64 => prim::<Int64Type>(vals, dt, int)?,
        DataType::UInt8 => prim::<UInt8Type>(vals, dt, int)?,
        DataType::UInt16 => prim::<UInt16Type>(vals, dt, int)?,
        DataType::UInt32 => prim::<UInt32Type>(vals, dt, int)?,
        DataType::UInt64 => prim::<UInt64Type>(vals, dt, int)?,
        DataType::Float16 => prim::<Float16Type>(vals, dt, |v| float(v).map(half::f16::from_f64))?,
        DataType::Float32 => prim::<Float32Type>(vals, dt, |v| float(v).map(|f| f as f32))?,
        DataType::Float64 => prim::<Float64Type>(vals, dt, float)?,
        DataType::Utf8 => Arc::new(StringArray::from(strs(vals, dt)?)),
        DataType::LargeUtf8 => Arc::new(LargeStringArray::from(strs(vals, dt)?)),
        DataType::Utf8View => Arc::new(StringViewArray::from(strs(vals, dt)?)),
        DataType::Binary => Arc::new(BinaryArray::from_opt_vec(bytes(vals, dt)?)),
        DataType::LargeBinary => Arc::new(LargeBinaryArray::from_opt_vec(bytes(vals, dt)?)),
        DataType::List(f) => list::<i32>(f, vals, dt)?,
        DataType::LargeList(f) => list::<i64>(f, vals, dt)?,
        DataType::Struct(fields) => {
            let columns = fields
                .iter()
                .map(|f| {
                    let items: Vec<&Value> = vals
                        .iter()
                        .map(|v| match v {
                            Value::Map(m) => Ok(m
                                .iter()
                                .find(|(k, _)| k.as_str() == Some(f.name()))
                                .map_or(&Value::Nil, |(_, x)| x)),
                            Value::Nil => Ok(&Value::Nil),
                            v => Err(format!("{v:?} does not fit an Arrow {dt}")),
                        })
                        .collect::<Result<_, String>>()?;
                    array(f.data_type(), &items).map_err(|e| format!("field {:?}: {e}", f.name()))
                })
                .collect::<Result<Vec<ArrayRef>, String>>()?;
            Arc::new(
                StructArray::try_new(fields.clone(), columns, nulls(vals))
                    .map_err(|e| e.to_string())?,
            )
        }
        other => return Err(format!("Arrow {other} items, which b2nd does not write")),
    })
}

/// A list array of `field` items holding `vals` (lists or nulls).
fn list<O: OffsetSizeTrait>(
    field: &FieldRef,
    vals: &[&Value],
    dt: &DataType,
) -> Result<ArrayRef, String> {
    let mut offsets = vec![O::usize_as(0)];
    let mut children: Vec<&Value> = Vec::new();
    for v in vals {
        match v {
            Value::Nil => {}
            Value::Array(items) | Value::Tuple(items) => children.extend(items.iter()),
            v => return Err(format!("{v:?} does not fit an Arrow {dt}")),
        }
        let end = O::from_usize(children.len())
            .ok_or_else(|| format!("{} items overflow an Arrow {dt}", children.len()))?;
        offsets.push(end);
    }
    let child = array(field.data_type(), &children)?;
    Ok(Arc::new(
        GenericListArray::<O>::try_new(
            field.clone(),
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            child,
            nulls(vals),
        )
        .map_err(|e| e.to_string())?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_dictionary_without_values_holds_nulls() {
        // Arrow's key normalization panics on a dictionary without values; every key of a
        // valid one is a null.
        let d: arrow_array::DictionaryArray<Int32Type> = arrow_array::DictionaryArray::new(
            arrow_array::Int32Array::from(vec![None, None]),
            Arc::new(arrow_array::StringArray::from(Vec::<&str>::new())),
        );
        let a: ArrayRef = Arc::new(d);
        assert_eq!(value(&a, 0), Ok(Value::Nil));
        assert_eq!(value(&a, 1), Ok(Value::Nil));
    }

    #[test]
    fn blocks_written_read_back() {
        use arrow_schema::{Field, Fields};
        let point = DataType::Struct(Fields::from(vec![
            Field::new("x", DataType::Int64, true),
            Field::new("y", DataType::Utf8, true),
        ]));
        let ty = DataType::List(Arc::new(Field::new("item", point, true)));
        let schema = Schema::new(vec![Field::new("values", ty, true)]);
        let p = |x: Value, y: &str| {
            Value::Map(vec![
                (Value::Str("x".into()), x),
                (Value::Str("y".into()), Value::Str(y.into())),
            ])
        };
        let items = vec![
            Value::Array(vec![p(Value::Int(1), "a"), p(Value::Nil, "é")]),
            Value::Nil,
            Value::Array(vec![]),
        ];
        let block = encode_block(&items, &schema).unwrap();
        assert_eq!(block_items(&block, None, None).unwrap(), items);
        let wrong = [Value::Array(vec![Value::Int(3)])];
        let e = encode_block(&wrong, &schema).unwrap_err();
        assert!(e.contains("does not fit an Arrow Struct"), "{e}");
        let big = [Value::Array(vec![p(Value::UInt(u64::MAX), "z")])];
        let e = encode_block(&big, &schema).unwrap_err();
        assert!(e.contains("field \"x\""), "{e}");
    }

    #[test]
    fn corrupt_schema_bytes_are_errors_not_panics() {
        // arrow-ipc's schema decoding panics on some one-byte changes of a valid schema
        // message; as a metalayer's arrow_schema or a block's stream, each is an error here.
        use arrow_schema::Field;
        let schema = Schema::new(vec![Field::new("v", DataType::Int32, true)]);
        let block = encode_block(&[Value::Int(1), Value::Nil], &schema).unwrap();
        let len = u32::from_le_bytes(block[4..8].try_into().unwrap()) as usize;
        let (message, batch) = block.split_at(8 + len);
        block_schema(message).unwrap();
        let mut errors = 0;
        for i in 0..message.len() {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut m = message.to_vec();
                m[i] = v;
                let calls = std::panic::catch_unwind(|| {
                    [
                        block_schema(&m).err(),
                        block_array(&[&m[..], batch].concat(), None, None).err(),
                        block_array(batch, Some(&m), None).err(),
                    ]
                });
                let got = calls.unwrap_or_else(|_| panic!("byte {i} set to {v:#x} panicked"));
                errors += got.iter().flatten().count();
            }
        }
        assert!(errors > 0);
    }

    #[test]
    fn blocks_declaring_more_items_than_they_can_hold_are_refused() {
        // Null items take no bytes: a few hundred bytes may declare 2^40 of them, which
        // would be made one by one. python-blosc2's items_per_block bounds a block.
        use arrow_schema::Field;
        let schema = Arc::new(Schema::new(vec![Field::new("v", DataType::Null, true)]));
        let block = |n: usize| {
            let col: ArrayRef = Arc::new(arrow_array::NullArray::new(n));
            let batch = RecordBatch::try_new(schema.clone(), vec![col]).unwrap();
            let mut out = Vec::new();
            let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).unwrap();
            w.write(&batch).unwrap();
            w.finish().unwrap();
            drop(w);
            out
        };
        let huge = block(1 << 40);
        let e = block_items(&huge, None, None).unwrap_err();
        assert!(e.contains("declaring 1099511627776 items"), "{e}");
        assert!(block_items(&huge, None, Some(5000)).is_err());
        let some = block(5000);
        assert!(block_items(&some, None, None).is_err());
        assert_eq!(
            block_items(&some, None, Some(5000)).unwrap(),
            vec![Value::Nil; 5000]
        );
        assert_eq!(block_items(&block(100), None, None).unwrap().len(), 100);
    }
}
