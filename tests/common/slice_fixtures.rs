//! The slice fixtures (`tests/data/slices`, or `B2ND_SLICE_FIXTURES=DIR`), shared by the
//! library's and the CLI's tests.

use std::path::PathBuf;

use serde_json::Value as J;

pub fn fixture_dir() -> PathBuf {
    match std::env::var_os("B2ND_SLICE_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => super::data_dir().join("slices"),
    }
}

pub struct Fixture {
    pub name: String,
    pub path: PathBuf,
    pub raw: Vec<u8>,
    pub shape: Vec<u64>,
    pub cases: Vec<J>,
}

pub fn fixtures() -> Vec<Fixture> {
    let dir = fixture_dir();
    let text = std::fs::read_to_string(dir.join("cases.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let doc: J = serde_json::from_str(&text).unwrap();
    let out: Vec<Fixture> = doc["arrays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| Fixture {
            name: a["name"].as_str().unwrap().to_string(),
            path: dir.join(a["path"].as_str().unwrap()),
            raw: std::fs::read(dir.join(a["raw"].as_str().unwrap())).unwrap(),
            shape: u64s(&a["shape"]),
            cases: a["cases"].as_array().unwrap().clone(),
        })
        .collect();
    assert!(
        out.len() >= 10,
        "too few slice fixtures in {}",
        dir.display()
    );
    out
}

pub fn u64s(v: &J) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}
