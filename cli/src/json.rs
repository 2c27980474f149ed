//! JSON renderings of array metadata and attribute values.

use b2nd::{Array, Value};
use serde_json::{json, Map, Value as J};

/// The `info --json` object.
pub fn info(a: &Array, attrs: &[(String, Value)]) -> J {
    let mut am = Map::new();
    for (k, v) in attrs {
        am.insert(k.clone(), value(v));
    }
    json!({
        "source": a.source(),
        "format": a.format().name(),
        "tensor_kind": a.tensor_kind(),
        "metalayer_version": a.metalayer_version(),
        "shape": a.shape(),
        "chunks": a.chunks(),
        "blocks": a.blocks(),
        "dtype": a.dtype_str(),
        "typesize": a.itemsize(),
        "nchunks": a.nchunks(),
        "nitems": a.nitems(),
        "nbytes": a.nbytes(),
        "cbytes": a.cbytes(),
        "codec": a.codec_name(),
        "clevel": a.clevel(),
        "filters": a.filter_names(),
        "filters_meta": a.filter_slots().1,
        "storage": a.storage().name(),
        "attrs": J::Object(am),
    })
}

fn float(f: f64) -> J {
    serde_json::Number::from_f64(f)
        .map(J::Number)
        .unwrap_or_else(|| J::String(f.to_string()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An attribute value as JSON: msgpack types map directly; tuples and sets become arrays,
/// complex numbers `[re, im]`; bytes, NumPy arrays and unknown extensions become tagged objects.
pub fn value(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(f) => float(*f),
        Value::Str(s) => J::String(s.clone()),
        Value::Bytes(b) => json!({ "bytes_hex": hex(b) }),
        Value::Array(a) | Value::Tuple(a) | Value::Set(a) => {
            J::Array(a.iter().map(value).collect())
        }
        Value::Map(m) => {
            let mut o = Map::new();
            for (k, v) in m {
                let key = match k {
                    Value::Str(s) => s.clone(),
                    other => value(other).to_string(),
                };
                o.insert(key, value(v));
            }
            J::Object(o)
        }
        Value::Complex { re, im } => J::Array(vec![float(*re), float(*im)]),
        Value::NdArray { dtype, shape, data } => {
            json!({ "ndarray": { "dtype": dtype, "shape": shape, "data_hex": hex(data) } })
        }
        Value::Ext { code, data } => json!({ "ext": code, "data_hex": hex(data) }),
        other => json!({ "unknown": format!("{other:?}") }),
    }
}
