//! Helpers shared by the integration tests.
#![allow(dead_code)]

/// The servers the remote tests start (the `b2nd-testkit` crate).
#[allow(unused_imports)]
pub use b2nd_testkit as http;
#[allow(dead_code)]
pub mod inplace_model;
#[allow(dead_code)]
pub mod proxy;
#[allow(dead_code)]
pub mod same;
#[allow(dead_code)]
pub mod slice_fixtures;
#[allow(dead_code)]
pub mod tmpfs;

use std::path::{Path, PathBuf};

use serde_json::Value as J;

/// The committed fixture directory.
pub fn data_dir() -> PathBuf {
    // The library's tests run from the workspace root, the CLI's from `cli/`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let here = root.join("tests/data");
    if here.is_dir() {
        here
    } else {
        root.join("../tests/data")
    }
}

/// All manifest entries of the committed fixtures (blosc2 and caterva).
pub fn fixtures() -> Vec<J> {
    let mut out = Vec::new();
    for name in ["manifest.json", "manifest-caterva.json"] {
        if let Ok(s) = std::fs::read_to_string(data_dir().join(name)) {
            let m: J = serde_json::from_str(&s).unwrap();
            out.extend(m["fixtures"].as_array().unwrap().iter().cloned());
        }
    }
    out
}

/// The entry called `name`.
pub fn fixture(name: &str) -> J {
    fixtures()
        .into_iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("no fixture {name}"))
}

/// Path of fixture `name`.
pub fn path(name: &str) -> PathBuf {
    data_dir().join(fixture(name)["path"].as_str().unwrap())
}

/// Expected raw bytes of fixture `name`.
pub fn expected(name: &str) -> Vec<u8> {
    std::fs::read(data_dir().join(fixture(name)["expected"].as_str().unwrap())).unwrap()
}

/// Readable, supported, contiguous fixtures at offset 0.
pub fn good_contiguous() -> Vec<J> {
    fixtures()
        .into_iter()
        .filter(|f| {
            f["ok"] == true
                && f.get("supported").and_then(|s| s.as_bool()).unwrap_or(true)
                && f["storage"] == "contiguous"
                && f["offset"].as_u64().unwrap_or(0) == 0
        })
        .collect()
}

/// Open the fixture called `name` (honouring its offset).
pub fn open_named(name: &str) -> b2nd::Array {
    let f = fixture(name);
    let p = data_dir().join(f["path"].as_str().unwrap());
    match f["offset"].as_u64().unwrap_or(0) {
        0 => b2nd::Array::open(&p),
        off => b2nd::Array::open_at(&p, off),
    }
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A small deterministic PRNG (xorshift64) for fuzz-style tests.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Bytes as lowercase hex (how the fixture manifests record values).
pub fn to_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A msgpack value as the JSON python's `json.dump` writes for it.
pub fn to_json(v: &b2nd::Value) -> J {
    use b2nd::Value as V;
    match v {
        V::Nil => J::Null,
        V::Bool(b) => J::Bool(*b),
        V::Int(i) => J::from(*i),
        V::UInt(u) => J::from(*u),
        V::Float(f) => J::from(*f),
        V::Str(s) => J::String(s.clone()),
        V::Array(a) | V::Tuple(a) => J::Array(a.iter().map(to_json).collect()),
        V::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| (k.as_str().expect("string keys").to_string(), to_json(v)))
                .collect(),
        ),
        other => panic!("no JSON for {other:?}"),
    }
}

/// `n` incompressible bytes (a xorshift stream from a fixed seed).
pub fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[allow(unused_imports)]
pub use b2nd_testkit::{copy_tree, snapshot};
