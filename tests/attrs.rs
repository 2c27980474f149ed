//! vlmeta attributes read back exactly as python-blosc2 stored and decodes them.

mod common;

use b2nd::{Array, Value};
use common::*;
use serde_json::{json, Value as J};

fn hex(h: &str) -> Vec<u8> {
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
        .collect()
}

/// Our value as the JSON the generator writes (sets sorted, tuples as lists, bytes as hex).
fn to_json(v: &Value) -> J {
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(f) => json!(f),
        Value::Str(s) => json!(s),
        Value::Bytes(b) => json!(b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
        Value::Array(a) | Value::Tuple(a) => J::Array(a.iter().map(to_json).collect()),
        Value::Set(a) => {
            let mut v: Vec<J> = a.iter().map(to_json).collect();
            v.sort_by_key(|x| x.to_string());
            J::Array(v)
        }
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().unwrap().to_string(), to_json(v)))
                .collect(),
        ),
        Value::Complex { re, im } => json!([re, im]),
        Value::NdArray { dtype, shape, data } => {
            assert_eq!(dtype, "<i2", "only <i2 arrays in the fixture");
            let items: Vec<i16> = data
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            let nested: Vec<J> = items.chunks(shape[1]).map(|r| json!(r)).collect();
            json!({"dtype": dtype, "shape": shape, "data": nested})
        }
        Value::Ext { .. } => J::Null,
        other => panic!("no JSON for {other:?}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::UInt(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::Bytes(_) => "bin",
        Value::Array(_) => "array",
        Value::Map(_) => "map",
        Value::Tuple(_) => "tuple",
        Value::Complex { .. } => "complex",
        Value::Set(_) => "set",
        Value::NdArray { .. } => "ndarray",
        Value::Ext { .. } => "ext",
        _ => "unknown",
    }
}

#[test]
fn every_attribute_matches_python() {
    let mut checked = 0;
    for f in fixtures() {
        let Some(file) = f.get("attrs_file").and_then(|a| a.as_str()) else {
            continue;
        };
        let want: J =
            serde_json::from_str(&std::fs::read_to_string(data_dir().join(file)).unwrap()).unwrap();
        let path = data_dir().join(f["path"].as_str().unwrap());
        let a = match f["offset"].as_u64().unwrap_or(0) {
            0 => Array::open(&path),
            off => Array::open_at(&path, off),
        }
        .unwrap();
        let names = a.attr_names();
        assert_eq!(names.len(), want.as_object().unwrap().len());
        for (name, w) in want.as_object().unwrap() {
            let raw = a.attr_bytes(name).unwrap().expect("present");
            assert_eq!(
                raw,
                hex(w["msgpack"].as_str().unwrap()),
                "{name}: stored bytes"
            );
            let v = a.attr(name).unwrap().unwrap();
            assert_eq!(kind(&v), w["kind"], "{name}: kind");
            assert_eq!(to_json(&v), w["value"], "{name}: value");
            // Encoding gives python's bytes back.
            assert_eq!(v.encode(), raw, "{name}: re-encoded bytes");
            checked += 1;
        }
        assert!(a.attr("no such attribute").unwrap().is_none());
    }
    assert!(checked >= 10, "only {checked} attributes checked");
}
