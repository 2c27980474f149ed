//! python-blosc2's state derived from the data (index catalogs, the query cache, the lock
//! generation counter) kept true by b2nd's changes, and `Array::refresh`. The indexed
//! arrays are python-blosc2's own (`scripts/gen_derived_fixtures.py`, tests/data/derived),
//! each with the catalog python-blosc2 leaves after one of its own writes: b2nd's must be
//! the same bytes.

mod common;

use std::path::{Path, PathBuf};

use b2nd::{Array, ArrayBuilder, ArrayMut, Target, Value};

const INDEXES: &str = "blosc2_indexes";
const QUERY_CACHE: &str = "_blosc2_query_cache";

fn fixtures() -> (PathBuf, serde_json::Value) {
    let dir = std::env::var("B2ND_DERIVED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| common::data_dir().join("derived"));
    let manifest =
        serde_json::from_str(&std::fs::read_to_string(dir.join("derived.json")).unwrap()).unwrap();
    (dir, manifest)
}

/// Copy the fixture `name` and every file of the same stem (sidecars) into `to`.
fn copy_with_sidecars(dir: &Path, name: &str, to: &Path) -> PathBuf {
    let stem = name.split('.').next().unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let f = e.file_name().into_string().unwrap();
        if f.starts_with(&format!("{stem}.")) {
            std::fs::copy(e.path(), to.join(&f)).unwrap();
        }
    }
    to.join(name)
}

fn stale_flags(a: &Array) -> Vec<bool> {
    let cat = a.attr(INDEXES).unwrap().expect("a catalog");
    cat.get("indexes")
        .and_then(|i| i.as_map())
        .unwrap()
        .iter()
        .map(|(_, d)| d.get("stale").and_then(|s| s.as_bool()).unwrap())
        .collect()
}

#[test]
fn index_catalogs_become_stale_byte_for_byte_as_python_makes_them() {
    let (dir, manifest) = fixtures();
    let mut kinds = Vec::new();
    for f in manifest.as_array().unwrap() {
        let Some(kind) = f["kind"].as_str() else {
            continue;
        };
        let name = f["path"].as_str().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let path = copy_with_sidecars(&dir, name, tmp.path());
        let before = Array::open(&path).unwrap();
        assert_eq!(
            stale_flags(&before),
            [false],
            "{name}: fresh as python built it"
        );
        let data: Vec<i64> = before.read().unwrap();
        let fresh = before.attr_bytes(INDEXES).unwrap().unwrap();
        drop(before);

        // An attribute edit is not a change of the data: the index stays fresh.
        let mut m = ArrayMut::open(&path).unwrap();
        m.set_attr("note", &Value::Str("x".into())).unwrap();
        assert_eq!(
            m.array().attr_bytes(INDEXES).unwrap().unwrap(),
            fresh,
            "{name}"
        );

        // python's `c[5] = c[5]`, done by b2nd.
        m.write_region(&b2nd::Region::new([5], [1]), &data[5..6])
            .unwrap();
        drop(m);
        let after = Array::open(&path).unwrap();
        let python = std::fs::read(dir.join(f["stale"].as_str().unwrap())).unwrap();
        assert_eq!(
            after.attr_bytes(INDEXES).unwrap().unwrap(),
            python,
            "{name}: b2nd's stale catalog differs from python-blosc2's"
        );
        assert_eq!(after.read::<i64>().unwrap(), data);
        for s in f["sidecars"].as_array().unwrap() {
            let s = s.as_str().unwrap();
            assert_eq!(
                std::fs::read(tmp.path().join(s)).unwrap(),
                std::fs::read(dir.join(s)).unwrap(),
                "{name}: sidecar {s} is python's to rebuild"
            );
        }
        kinds.push(kind.to_string());
    }
    kinds.sort();
    assert_eq!(kinds, ["bucket", "full", "opsi", "partial", "summary"]);
}

/// A catalog of two descriptors (one fresh, one without the flag) and a query cache, as
/// attributes of a new array.
fn with_derived_state(b: ArrayBuilder) -> ArrayBuilder {
    let s = |x: &str| Value::Str(x.into());
    let desc = |stale: Option<bool>| {
        let mut f = vec![
            (s("kind"), s("full")),
            (s("shape"), Value::Tuple(vec![Value::Int(40)])),
        ];
        if let Some(b) = stale {
            f.push((s("stale"), Value::Bool(b)));
        }
        Value::Map(f)
    };
    let catalog = Value::Map(vec![
        (s("version"), Value::Int(1)),
        (
            s("indexes"),
            Value::Map(vec![
                (s("__self__"), desc(Some(false))),
                (s("b"), desc(None)),
            ]),
        ),
    ]);
    let cache = Value::Map(vec![
        (s("version"), Value::Int(1)),
        (s("entries"), Value::Map(vec![])),
    ]);
    b.attr(INDEXES, catalog)
        .attr(QUERY_CACHE, cache)
        .attr("unit", s("m"))
}

fn payload(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap().to_str().unwrap();
    let root = name.split('.').next().unwrap();
    path.with_file_name(format!("{root}.__query_cache__.b2frame"))
}

type Change = fn(&mut ArrayMut);

#[test]
fn every_change_of_the_data_on_every_target_drops_the_query_cache_and_marks_indexes_stale() {
    let changes: [(&str, Change); 4] = [
        ("write_region", |m| {
            m.write_region(&b2nd::Region::new([3], [2]), &[9i32, 9])
                .unwrap()
        }),
        ("resize", |m| m.resize(&[50]).unwrap()),
        ("append", |m| m.append(0, &[1i32; 8]).unwrap()),
        ("write_slice_bytes", |m| {
            let s: b2nd::Slice = "-1".parse().unwrap();
            m.write_slice_bytes(&s, &7i32.to_le_bytes()).unwrap()
        }),
    ];
    let mut checked = 0;
    for (what, change) in changes {
        for target in ["file", "sparse", "store"] {
            let tmp = tempfile::tempdir().unwrap();
            let b = with_derived_state(
                ArrayBuilder::for_type::<i32>(&[40])
                    .chunks(&[16])
                    .blocks(&[4]),
            );
            let data: Vec<i32> = (0..40).collect();
            let mut m = match target {
                "file" => {
                    let p = tmp.path().join("a.b2nd");
                    b.write(Target::File(p.clone()), &data).unwrap();
                    ArrayMut::open(&p).unwrap()
                }
                "sparse" => {
                    let p = tmp.path().join("a.b2nd");
                    b.write(Target::Sparse(p.clone()), &data).unwrap();
                    ArrayMut::open(&p).unwrap()
                }
                _ => {
                    let store = tmp.path().join("s.b2d");
                    std::fs::create_dir(&store).unwrap();
                    std::fs::create_dir(store.join("grp")).unwrap();
                    b.write(Target::File(store.join("grp/a.b2nd")), &data)
                        .unwrap();
                    ArrayMut::open_in_store(&store, "/grp/a").unwrap()
                }
            };
            let path = m.path().to_path_buf();
            // An older python-blosc2's payload: a file for files, a directory otherwise.
            let cache = payload(&path);
            if target == "sparse" {
                std::fs::create_dir(&cache).unwrap();
                std::fs::write(cache.join("chunks.b2frame"), b"x").unwrap();
            } else {
                std::fs::write(&cache, b"x").unwrap();
            }
            change(&mut m);
            drop(m);
            let a = Array::open(&path).unwrap();
            assert_eq!(stale_flags(&a), [true, true], "{what} on {target}");
            assert_eq!(a.attr(QUERY_CACHE).unwrap(), None, "{what} on {target}");
            assert!(!cache.exists(), "{what} on {target}: payload left");
            assert_eq!(a.attr("unit").unwrap(), Some(Value::Str("m".into())));
            checked += 1;
        }
    }
    assert_eq!(checked, 12);
}

#[test]
fn changes_that_leave_the_data_keep_derived_state() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("a.b2nd");
    with_derived_state(
        ArrayBuilder::for_type::<i32>(&[40])
            .chunks(&[16])
            .blocks(&[4]),
    )
    .write(Target::File(p.clone()), &[1i32; 40])
    .unwrap();
    let before = Array::open(&p).unwrap().attrs().unwrap();
    let mut m = ArrayMut::open(&p).unwrap();
    m.set_attr("x", &Value::Int(1)).unwrap();
    m.delete_attr("x").unwrap();
    m.compact().unwrap();
    drop(m);
    assert_eq!(Array::open(&p).unwrap().attrs().unwrap(), before);
}

fn generation(lock: &Path) -> u64 {
    let b = std::fs::read(lock).unwrap();
    assert_eq!(b.len(), 16);
    u64::from_le_bytes(b[8..16].try_into().unwrap())
}

#[test]
fn every_published_change_advances_python_blosc2s_lock_counter_once() {
    let (dir, manifest) = fixtures();
    let f = manifest
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "locked.b2nd")
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = copy_with_sidecars(&dir, "locked.b2nd", tmp.path());
    let lock = tmp.path().join("locked.b2nd.b2lock");
    let g0 = generation(&lock);
    assert_eq!(g0, f["lock_generation"].as_u64().unwrap());

    let mut reader = Array::open(&path).unwrap();
    assert_eq!(reader.read::<i32>().unwrap()[..3], [-1, -1, -1]);
    assert!(!reader.refresh().unwrap());
    let mut m = ArrayMut::open(&path).unwrap();
    m.write_region(&b2nd::Region::new([10], [1]), &[5i32])
        .unwrap();
    assert_eq!(generation(&lock), g0 + 1);
    m.set_attr("a", &Value::Int(1)).unwrap();
    assert_eq!(generation(&lock), g0 + 2);
    m.compact().unwrap();
    assert_eq!(generation(&lock), g0 + 3);
    drop(m);
    // The attribute edits without an ArrayMut take the lock too.
    b2nd::write::set_attrs(&path, &[("b", Value::Int(2))]).unwrap();
    assert_eq!(generation(&lock), g0 + 4);
    b2nd::write::delete_attrs(&path, &["b"]).unwrap();
    assert_eq!(generation(&lock), g0 + 5);
    // The reader notices through the counter and follows.
    assert!(reader.refresh().unwrap());
    assert_eq!(reader.read::<i32>().unwrap()[10], 5);
    assert!(!reader.refresh().unwrap());

    // Replacing the file (a write with overwrite) is a published change too.
    ArrayBuilder::for_type::<i32>(&[3])
        .overwrite(true)
        .write(Target::File(path.clone()), &[1i32, 2, 3])
        .unwrap();
    assert_eq!(generation(&lock), g0 + 6);
    let e = reader.refresh().unwrap_err().to_string();
    assert!(e.contains("changed its layout"), "{e}");

    // A sparse frame's sidecar lives inside its directory.
    let sp = tmp.path().join("s.b2nd");
    ArrayBuilder::for_type::<i32>(&[10])
        .write(Target::Sparse(sp.clone()), &[0i32; 10])
        .unwrap();
    std::fs::write(sp.join(".b2lock"), []).unwrap();
    ArrayMut::open(&sp).unwrap().resize(&[12]).unwrap();
    assert_eq!(generation(&sp.join(".b2lock")), 1);
    assert_eq!(Array::open(&sp).unwrap().shape(), &[12]);
}

#[test]
fn refresh_follows_changes_and_refuses_a_new_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("a.b2nd");
    ArrayBuilder::for_type::<u16>(&[6, 4])
        .chunks(&[4, 4])
        .blocks(&[2, 2])
        .write(Target::File(p.clone()), &[1u16; 24])
        .unwrap();
    let mut r = Array::open(&p).unwrap();
    assert!(!r.refresh().unwrap(), "nothing changed");
    ArrayMut::open(&p).unwrap().append(0, &[2u16; 8]).unwrap();
    assert!(r.refresh().unwrap());
    assert_eq!(r.shape(), &[8, 4]);
    assert_eq!(&r.read::<u16>().unwrap()[24..], &[2; 8]);
    assert!(!r.refresh().unwrap());

    // Replaced by an array of other chunks: refused, the reader keeps what it had.
    let q = tmp.path().join("b.b2nd");
    ArrayBuilder::for_type::<u16>(&[8, 4])
        .chunks(&[2, 4])
        .blocks(&[2, 2])
        .write(Target::File(q.clone()), &[3u16; 32])
        .unwrap();
    std::fs::rename(&q, &p).unwrap();
    let e = r.refresh().unwrap_err().to_string();
    assert!(e.contains("changed its layout"), "{e}");
    assert_eq!(r.shape(), &[8, 4]);
    assert_eq!(r.chunks(), &[4, 4]);
}

#[test]
fn a_tables_members_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("basic.b2d");
    let src = common::data_dir().join("tables/basic.b2d");
    let mut n = 0;
    for e in walk(&src) {
        let to = t.join(e.strip_prefix(&src).unwrap());
        if e.is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&e, &to).unwrap();
        }
    }
    for e in walk(&t) {
        if e.extension().and_then(|x| x.to_str()) != Some("b2nd") {
            continue;
        }
        let before = std::fs::read(&e).unwrap();
        let err = ArrayMut::open(&e).unwrap_err().to_string();
        assert!(err.contains("CTable") && err.contains("basic.b2d"), "{err}");
        assert_eq!(std::fs::read(&e).unwrap(), before);
        n += 1;
    }
    let err = ArrayMut::open_in_store(&t, "/_cols/id")
        .unwrap_err()
        .to_string();
    assert!(err.contains("CTable"), "{err}");
    assert!(n >= 10, "{n} column files");
}

fn walk(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        out.push(p.clone());
        if p.is_dir() {
            out.extend(walk(&p));
        }
    }
    out
}
