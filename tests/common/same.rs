//! One store or table opened two ways (a file and a URL) reads the same: keys, member kinds,
//! every array's and super-chunk's bytes and attributes, every table column.

use b2nd::{MemberKind, Store, Table};

/// Compare every member of `a` and `b` (named `what`); returns how many members were read.
pub fn stores(a: &Store, b: &Store, what: &str) -> usize {
    assert_eq!(a.kind(), b.kind(), "{what}");
    assert_eq!(a.keys(), b.keys(), "{what}: keys");
    let mut n = 0;
    for key in a.keys() {
        let kind = a.member_kind(&key);
        assert_eq!(
            format!("{kind:?}"),
            format!("{:?}", b.member_kind(&key)),
            "{what}:{key}: kind"
        );
        match kind {
            Ok(MemberKind::NdArray) => {
                let (x, y) = (a.open_array(&key).unwrap(), b.open_array(&key).unwrap());
                assert_eq!(x.shape(), y.shape(), "{what}:{key}");
                assert_eq!(
                    x.attrs().unwrap(),
                    y.attrs().unwrap(),
                    "{what}:{key}: attrs"
                );
                same_result(x.read_bytes(), y.read_bytes(), &format!("{what}:{key}"));
                n += 1;
            }
            Ok(MemberKind::CTable) => {
                tables(
                    &a.open_table(&key).unwrap(),
                    &b.open_table(&key).unwrap(),
                    &format!("{what}:{key}"),
                );
                n += 1;
            }
            Ok(MemberKind::Group) | Ok(MemberKind::C2Array) | Err(_) => {}
            Ok(_) => {
                let (x, y) = (a.open_schunk(&key).unwrap(), b.open_schunk(&key).unwrap());
                assert_eq!(
                    x.attrs().unwrap(),
                    y.attrs().unwrap(),
                    "{what}:{key}: attrs"
                );
                same_result(x.read_bytes(), y.read_bytes(), &format!("{what}:{key}"));
                n += 1;
            }
        }
    }
    n
}

/// Compare two tables column by column (live rows, validity).
pub fn tables(a: &Table, b: &Table, what: &str) {
    assert_eq!(a.n_rows(), b.n_rows(), "{what}: rows");
    assert_eq!(a.schema_json(), b.schema_json(), "{what}: schema");
    for c in a.columns() {
        let name = c.name();
        let w = format!("{what}: column {name}");
        same_result(a.read_column_bytes(name), b.read_column_bytes(name), &w);
        same_result(a.read_validity(name), b.read_validity(name), &w);
        let debug = |v: Vec<b2nd::Value>| format!("{v:?}"); // NaN equals NaN here
        same_result(
            a.read_values(name).map(debug),
            b.read_values(name).map(debug),
            &w,
        );
    }
}

/// Both reads succeed with equal values, or both fail.
fn same_result<T: PartialEq + std::fmt::Debug>(x: b2nd::Result<T>, y: b2nd::Result<T>, what: &str) {
    match (x, y) {
        (Ok(x), Ok(y)) => assert!(x == y, "{what}: values differ"),
        (Err(_), Err(_)) => {}
        (x, y) => panic!("{what}: {:?} vs {:?}", x.map(|_| ()), y.map(|_| ())),
    }
}

/// The committed one-object stores and tables (`.b2z`, `.b2e` under tests/data/stores and
/// tests/data/tables), as paths relative to the data directory.
pub fn one_object_stores() -> Vec<String> {
    committed(&[".b2z", ".b2e"])
}

/// The committed `.b2d` stores and tables (directories under tests/data/stores and
/// tests/data/tables), as paths relative to the data directory.
pub fn directory_stores() -> Vec<String> {
    committed(&[".b2d"])
}

/// The entries of tests/data/stores and tests/data/tables named with one of `suffixes`.
fn committed(suffixes: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["stores", "tables"] {
        for e in std::fs::read_dir(super::data_dir().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if suffixes.iter().any(|s| name.ends_with(s)) {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// Every file under `dir`, as `/`-separated paths relative to it.
pub fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((d, prefix)) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let rel = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            if e.file_type().unwrap().is_dir() {
                stack.push((e.path(), rel));
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}
