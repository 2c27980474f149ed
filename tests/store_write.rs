//! Stores written by StoreBuilder: read back by b2nd here, and by python-blosc2 in CI
//! (`B2ND_STORE_OUT=DIR cargo test --test store_write` then
//! `python scripts/check_stores_written.py DIR`).

use b2nd::{ArrayBuilder, Error, MemberKind, Store, StoreBuilder, StoreKind, Value};
use serde_json::json;

struct Case {
    name: String,
    kind: StoreKind,
    threshold: Option<u64>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for kind in [StoreKind::DictStore, StoreKind::TreeStore] {
        for (t, tname) in [(Some(0), "ext"), (Some(1000), "mixed"), (None, "emb")] {
            for fmt in ["b2z", "b2d"] {
                out.push(Case {
                    name: format!("{}_{tname}.{fmt}", kind.name()),
                    kind,
                    threshold: t,
                });
            }
        }
    }
    out
}

fn build(c: &Case) -> StoreBuilder {
    let mut s = StoreBuilder::new(c.kind).threshold(c.threshold);
    s.insert(
        "/small",
        ArrayBuilder::for_type::<i32>(&[3])
            .to_vec(&[1, -2, 3])
            .unwrap(),
    )
    .unwrap();
    let big: Vec<f64> = (0..600).map(|i| i as f64 * 0.5).collect();
    s.insert(
        "/dir1/big",
        ArrayBuilder::for_type::<f64>(&[20, 30])
            .to_vec(&big)
            .unwrap(),
    )
    .unwrap();
    let words: Vec<i64> = (0..5).collect();
    s.insert(
        "/dir1/sub/ints",
        ArrayBuilder::for_type::<i64>(&[5]).to_vec(&words).unwrap(),
    )
    .unwrap();
    if c.kind == StoreKind::TreeStore {
        s.set_group_attrs("/", vec![("title".into(), Value::Str("root".into()))])
            .unwrap();
        s.set_group_attrs(
            "/dir1",
            vec![
                ("n".into(), Value::Int(7)),
                ("unit".into(), Value::Str("m".into())),
            ],
        )
        .unwrap();
    }
    s
}

#[test]
fn written_stores_read_back() {
    let out = std::env::var_os("B2ND_STORE_OUT").map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = out.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    let mut manifest = Vec::new();
    for c in cases() {
        let path = dir.join(&c.name);
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        build(&c).write(&path).unwrap();
        let s = Store::open(&path).unwrap_or_else(|e| panic!("{}: {e}", c.name));
        assert_eq!(s.kind(), c.kind, "{}", c.name);
        let mut keys = vec!["/dir1/big", "/dir1/sub/ints", "/small"];
        if c.kind == StoreKind::TreeStore {
            keys = vec![
                "/dir1",
                "/dir1/big",
                "/dir1/sub",
                "/dir1/sub/ints",
                "/small",
            ];
        }
        assert_eq!(s.keys(), keys, "{}", c.name);
        assert_eq!(s.member_kind("/small").unwrap(), MemberKind::NdArray);
        assert_eq!(
            s.open_array("/small").unwrap().read::<i32>().unwrap(),
            [1, -2, 3]
        );
        let big = s.open_array("/dir1/big").unwrap().read::<f64>().unwrap();
        assert_eq!(big[599], 299.5, "{}", c.name);
        if c.kind == StoreKind::TreeStore {
            let a = s.group_attrs("/dir1").unwrap();
            assert_eq!(a.len(), 2);
            assert_eq!(s.group_attrs("/").unwrap()[0].1.as_str(), Some("root"));
        }
        manifest.push(json!({
            "name": c.name,
            "kind": c.kind.name(),
            "keys": keys,
            "values": {
                "/small": [1, -2, 3],
                "/dir1/sub/ints": [0, 1, 2, 3, 4],
                "/dir1/big": {"shape": [20, 30], "last": 299.5},
            },
            "group_attrs": if c.kind == StoreKind::TreeStore {
                json!({"/": {"title": "root"}, "/dir1": {"n": 7, "unit": "m"}})
            } else {
                json!({})
            },
        }));
    }
    if out.is_some() {
        std::fs::write(
            dir.join("manifest.json"),
            serde_json::to_string_pretty(&manifest).unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn store_writes_refuse_bad_input_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = StoreBuilder::new(StoreKind::DictStore);
    let frame = ArrayBuilder::for_type::<u8>(&[1]).to_vec(&[1u8]).unwrap();
    for bad in ["", "x", "/a/../b", "/a//b", "/__vlmeta__", "/"] {
        assert!(s.insert(bad, frame.clone()).is_err(), "{bad:?}");
    }
    s.insert("/a", frame.clone()).unwrap();
    assert!(s.insert("/a", frame.clone()).is_err());
    assert!(s.insert("/b", vec![1, 2, 3]).is_err()); // not a frame
    assert!(s.set_group_attrs("/", vec![]).is_err()); // DictStores have no groups
    let path = tmp.path().join("s.b2z");
    s.write(&path).unwrap();
    let e = s.write(&path).unwrap_err();
    assert!(matches!(e, Error::TargetExists { .. }), "{e}");
    // A target directory that cannot be written: an error, nothing left behind.
    let e = StoreBuilder::new(StoreKind::DictStore).write(tmp.path().join("no/such/dir/s.b2z"));
    assert!(e.is_err());
    let names: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["s.b2z"], "only the finished store remains");
    let e = StoreBuilder::new(StoreKind::EmbedStore).write(tmp.path().join("e.b2e"));
    assert!(e.is_err());
}
