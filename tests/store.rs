//! Stores written by python-blosc2 4.14.1 (scripts/gen_store_fixtures.py): every key, kind,
//! array shape, dtype and value equal to what python-blosc2 reads (or, where python-blosc2
//! cannot read its own file, to the data it was given); hostile stores refused.

use std::path::{Path, PathBuf};

use b2nd::{Error, MemberKind, Store, StoreKind};
use serde_json::Value as J;

mod common;
use common::{to_hex as hex, to_json};

/// The committed fixtures, or those `B2ND_STORE_FIXTURES` names (CI regenerates them live).
fn dir() -> PathBuf {
    match std::env::var_os("B2ND_STORE_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stores"),
    }
}

fn expected(name: &str) -> J {
    let text = std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Compare the store `name` with what python-blosc2 said of it; returns how many members
/// python-blosc2 itself could not read.
fn check(name: &str, kind: StoreKind) -> usize {
    let want = expected(name);
    let store = Store::open(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(store.kind(), kind, "{name}");
    assert_eq!(want["kind"], kind.name(), "{name}: the fixture's own kind");
    let keys: Vec<String> = want["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(store.keys(), keys, "{name}: keys");
    let mut python_failed = 0;
    for key in &keys {
        let m = &want["members"][key];
        let got = store.member_kind(key).unwrap();
        assert_eq!(
            got.name(),
            m["kind"].as_str().unwrap(),
            "{name} {key}: kind"
        );
        if m.get("python_error").is_some() {
            python_failed += 1;
        }
        match got {
            MemberKind::NdArray => {
                let a = store.open_array(key).unwrap();
                let shape: Vec<u64> = serde_json::from_value(m["shape"].clone()).unwrap();
                assert_eq!(a.shape(), &shape[..], "{name} {key}: shape");
                assert_eq!(a.dtype_str(), m["dtype"].as_str().unwrap(), "{name} {key}");
                assert_eq!(
                    hex(&a.read_bytes().unwrap()),
                    m["hex"],
                    "{name} {key}: values"
                );
                assert!(a.source().ends_with(&format!(":{key}")), "{}", a.source());
            }
            MemberKind::SChunk => {
                let s = store.open_schunk(key).unwrap();
                chunks_tile_the_stream(&s, &format!("{name} {key}"));
                assert_eq!(
                    hex(&s.read_bytes().unwrap()),
                    m["hex"],
                    "{name} {key}: bytes"
                );
                for (k, v) in m["attrs"].as_object().into_iter().flatten() {
                    let got = s.attr(k).unwrap().unwrap();
                    match v {
                        J::String(x) => assert_eq!(got.as_str(), Some(x.as_str())),
                        J::Number(n) => assert_eq!(got.as_i64(), n.as_i64()),
                        _ => unreachable!(),
                    }
                }
            }
            MemberKind::ObjectArray | MemberKind::BatchArray | MemberKind::ListArray => {
                let s = store.open_schunk(key).unwrap();
                if s.nchunks().is_some() {
                    chunks_tile_the_stream(&s, &format!("{name} {key}"));
                }
                let items = s.read_objects().unwrap();
                let got: Vec<J> = items.iter().map(to_json).collect();
                assert_eq!(&J::Array(got), &m["items"], "{name} {key}: items");
            }
            _ => {}
        }
    }
    let groups: Vec<String> = keys
        .iter()
        .filter(|k| want["members"][k.as_str()]["kind"] == "treestore")
        .cloned()
        .collect();
    assert_eq!(store.groups(), groups, "{name}: groups");
    if let Some(groups) = want.get("group_attrs") {
        for (g, attrs) in groups.as_object().unwrap() {
            let got = store.group_attrs(g).unwrap();
            let attrs = attrs.as_object().unwrap();
            assert_eq!(got.len(), attrs.len(), "{name} group {g}");
            for (k, v) in got {
                let w = &attrs[&k];
                match w {
                    J::String(x) => assert_eq!(v.as_str(), Some(x.as_str())),
                    J::Number(n) => assert_eq!(v.as_i64(), n.as_i64()),
                    _ => panic!("{name} {g} {k}: fixture value {w}"),
                }
            }
        }
    }
    python_failed
}

#[test]
fn dict_stores_read_as_python_reads_them() {
    for name in ["dict_ext.b2z", "dict_ext.b2d"] {
        // `/wide` (400-byte items, embedded) is the member python-blosc2 cannot read back.
        assert_eq!(check(name, StoreKind::DictStore), 1, "{name}");
    }
}

#[test]
fn tree_stores_read_as_python_reads_them() {
    for name in [
        "tree_ext.b2z",
        "tree_emb.b2z",
        "tree_ext.b2d",
        "tree_objects.b2z",
    ] {
        assert_eq!(check(name, StoreKind::TreeStore), 0, "{name}");
    }
}

#[test]
fn embed_stores_read_as_python_reads_them() {
    assert_eq!(check("embed.b2e", StoreKind::EmbedStore), 1);
    // `/b` spans two blocks of the store's stream: python-blosc2's slice of it is wrong.
    assert_eq!(check("embed_slice.b2e", StoreKind::EmbedStore), 1);
}

#[test]
fn members_in_a_zip_open_in_place() {
    let store = Store::open(dir().join("dict_ext.b2z")).unwrap();
    let a = store.open_array("/dir1/big").unwrap();
    // Read at its offset in the zip, not copied out: the frame's storage is the zip file.
    assert_eq!(a.storage(), b2nd::Storage::Contiguous);
    assert_eq!(a.read::<f64>().unwrap()[1999], 1999.0);
    let e = store.open_array("/nope").unwrap_err();
    assert!(matches!(e, Error::KeyNotFound { .. }), "{e}");
    let e = store.open_array("/dir1/sc").unwrap_err();
    assert!(matches!(e, Error::NotNdArray { .. }), "{e}");
}

#[test]
fn hostile_stores_are_refused_by_name() {
    let bad = dir().join("bad");
    let cases = [
        ("compressed.b2z", "compressed"),
        ("escaping.b2z", ".."),
        ("absolute.b2z", "relative"),
        ("duplicate.b2z", "twice"),
        ("both_tiers.b2z", "both embedded and an external member"),
        ("truncated.b2z", "zip"),
        ("outside.b2e", "outside"),
        ("badkey.b2e", "does not start with `/`"),
        ("escapekey.b2e", "`..`"),
    ];
    for (name, what) in cases {
        let e = Store::open(bad.join(name)).expect_err(name);
        let msg = e.to_string();
        assert!(msg.contains(what), "{name}: {msg}");
    }
}

#[test]
fn every_truncation_of_a_store_is_an_error() {
    let raw = std::fs::read(dir().join("dict_ext.b2z")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.b2z");
    for len in (0..raw.len()).step_by(7) {
        std::fs::write(&path, &raw[..len]).unwrap();
        if let Ok(s) = Store::open(&path) {
            panic!("{len} bytes opened: {s:?}");
        }
    }
}

#[test]
fn directory_stores_refuse_links_and_deep_nesting() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("s.b2d");
    let src = dir().join("dict_ext.b2d");
    let copy_tree = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to.join("dir1")).unwrap();
        for rel in ["embed.b2e", "bigsc.b2f", "dir1/big.b2nd"] {
            std::fs::copy(from.join(rel), to.join(rel)).unwrap();
        }
    };
    copy_tree(&src, &copy);
    assert!(Store::open(&copy).is_ok());
    // A link back to the store itself would make the walk loop: refused by name.
    std::os::unix::fs::symlink(&copy, copy.join("dir1/loop")).unwrap();
    let e = Store::open(&copy).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    std::fs::remove_file(copy.join("dir1/loop")).unwrap();
    // Directories nested past any sane depth.
    let mut deep = copy.clone();
    for _ in 0..70 {
        deep = deep.join("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let e = Store::open(&copy).unwrap_err().to_string();
    assert!(e.contains("nested deeper"), "{e}");
}

/// `read_chunk` of every chunk, in order, tiles the stream `read_bytes` returns: each chunk's
/// origin is where the previous one ended, in items of the typesize.
fn chunks_tile_the_stream(s: &b2nd::SChunk, what: &str) {
    let all = s.read_bytes().unwrap();
    let mut at = 0u64;
    let mut joined = Vec::new();
    for n in 0..s.nchunks().unwrap() {
        let c = s
            .read_chunk(n)
            .unwrap_or_else(|e| panic!("{what}: chunk {n}: {e}"));
        assert_eq!(c.index(), n, "{what}");
        assert_eq!(c.origin(), &[at], "{what}: chunk {n}");
        at += c.nitems();
        joined.extend_from_slice(c.data());
    }
    assert_eq!(joined, all, "{what}: chunks joined");
    assert_eq!(at * s.typesize() as u64, all.len() as u64, "{what}: items");
}
