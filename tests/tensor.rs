//! python-blosc2 `save_tensor` / `pack_tensor` frames (`tests/data/tensors.json`, written by
//! `scripts/gen_fixtures.py`) read as the N-d arrays python-blosc2's `load_tensor` gives.
//! `B2ND_FIXTURES=DIR` points the checks at a freshly generated directory (`.ci/run`).

use std::path::{Path, PathBuf};

use b2nd::{Array, Dtype, Format, SliceItem};
use serde_json::Value;

fn data() -> PathBuf {
    match std::env::var_os("B2ND_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    }
}

fn fixtures() -> Vec<Value> {
    let text = std::fs::read_to_string(data().join("tensors.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["fixtures"].as_array().unwrap().clone()
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn save_tensor_frames_read_as_python_loads_them() {
    let all = fixtures();
    assert!(all.len() >= 9, "{} fixtures", all.len());
    let mut read = 0;
    for f in &all {
        let name = f["name"].as_str().unwrap();
        let path = data().join(f["path"].as_str().unwrap());
        let want = std::fs::read(data().join(f["expected"].as_str().unwrap())).unwrap();
        if f["chunks"].is_null() {
            // Flat chunks that are no N-d chunks: refused by name, the bytes still readable.
            let e = Array::open(&path).unwrap_err().to_string();
            assert!(
                e.contains("save_tensor") && e.contains("SChunk::read_bytes"),
                "{name}: {e}"
            );
            assert_eq!(
                b2nd::SChunk::open(&path).unwrap().read_bytes().unwrap(),
                want
            );
            continue;
        }
        let a = Array::open(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(a.format(), Format::Tensor, "{name}");
        assert_eq!(a.tensor_kind().as_deref(), f["kind"].as_str(), "{name}");
        assert_eq!(a.shape(), u64s(&f["shape"]), "{name}");
        assert_eq!(a.chunks(), u64s(&f["chunks"]), "{name}");
        assert_eq!(a.nchunks(), f["nchunks"].as_u64().unwrap(), "{name}");
        assert_eq!(
            a.itemsize() as u64,
            f["itemsize"].as_u64().unwrap(),
            "{name}"
        );
        let fields: Vec<(String, u64)> = match a.dtype() {
            Dtype::Struct(s) => s
                .fields
                .iter()
                .map(|x| (x.name.clone(), x.offset as u64))
                .collect(),
            _ => vec![],
        };
        let want_fields: Vec<(String, u64)> = f["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().into(), p[1].as_u64().unwrap()))
            .collect();
        assert_eq!(fields, want_fields, "{name}: {}", a.dtype_str());
        assert_eq!(a.read_bytes().unwrap(), want, "{name}");
        // A slice of the last dimension reads through the same chunks.
        if a.ndim() >= 2 && a.nitems() > 0 {
            let last = *a.shape().last().unwrap() as i64;
            let mut items = vec![SliceItem::Index(-1); a.ndim() - 1];
            items.push(SliceItem::Range {
                start: Some(1),
                stop: Some(last),
                step: 2,
            });
            let got = a.read_slice_bytes(&items).unwrap();
            let row = last as usize * a.itemsize();
            let tail = &want[want.len() - row..];
            let want_slice: Vec<u8> = tail
                .chunks(a.itemsize())
                .skip(1)
                .step_by(2)
                .flatten()
                .copied()
                .collect();
            assert_eq!(got, want_slice, "{name}");
        }
        read += 1;
    }
    assert_eq!(read, all.len() - 1);
}

/// b2nd does not change save_tensor frames (python-blosc2 keeps their shape in vlmeta), and
/// a copy of one is an ordinary b2nd array with the same items.
#[test]
fn save_tensor_frames_are_read_only_and_copy_to_b2nd() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.b2frame");
    std::fs::copy(data().join("tensor_rows_in_chunks.b2frame"), &path).unwrap();
    let e = b2nd::ArrayMut::open(&path).unwrap_err().to_string();
    assert!(e.contains("save_tensor") && e.contains("read only"), "{e}");
    let a = Array::open(&path).unwrap();
    let out = dir.path().join("copy.b2nd");
    let bytes = a.read_bytes().unwrap();
    b2nd::ArrayBuilder::like(&a)
        .write_bytes(b2nd::Target::File(out.clone()), &bytes)
        .unwrap();
    let c = Array::open(&out).unwrap();
    assert_eq!(c.format(), Format::B2nd);
    assert_eq!((c.shape(), c.read_bytes().unwrap()), (a.shape(), bytes));
}
