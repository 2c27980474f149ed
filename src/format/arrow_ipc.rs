//! The blocks of a BatchArray written with `serializer="arrow"` (feature `arrow`): each block
//! is an Arrow IPC stream of one record batch whose first column holds the block's items
//! (python-blosc2 4.3 and later); older blocks are a bare record-batch message whose schema
//! is the `arrow_schema` of the `batcharray` metalayer. Items come out as [`Value`]s, as
//! python-blosc2's `.as_py()` gives them: lists as lists, structs as dicts, nulls as `Nil`.
//! Arrow extension types are refused, as python-blosc2 refuses them in its safe mode, and so
//! are types with no [`Value`] (timestamps, decimals, ...), by name.

#![forbid(unsafe_code)]

use std::io::Cursor;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ipc::reader::StreamReader;
use arrow_schema::DataType;

use crate::model::attrs::Value;

/// The items of one block; `schema`: the metalayer's `arrow_schema` (an IPC schema message),
/// for blocks of the older bare form.
pub(crate) fn block_items(block: &[u8], schema: Option<&[u8]>) -> Result<Vec<Value>, String> {
    let col = block_array(block, schema)?;
    (0..col.len()).map(|i| value(&col, i)).collect()
}

/// The items of one block as the Arrow array stored (see [`block_items`]).
pub(crate) fn block_array(block: &[u8], schema: Option<&[u8]>) -> Result<ArrayRef, String> {
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
    let mut r = StreamReader::try_new(Cursor::new(bytes), None).map_err(|e| e.to_string())?;
    r.next()
        .ok_or_else(|| "no record batch".to_string())?
        .map_err(|e| e.to_string())
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
}
