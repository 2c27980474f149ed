//! `TableMut`: rows appended to and deleted from a CTable python-blosc2 4.14.1 wrote
//! (`tests/data/tables/mutable.b2d`, scripts/gen_table_fixtures.py), read back against a model
//! of the rows, and the table's files left as python-blosc2 leaves its own `extend`, `delete`
//! and `close`: arrays grown to the last row, masks, the schema's row count, the epochs, every
//! index stale after an append. Refused changes change no byte. With `B2ND_TABLE_MUT_OUT`,
//! the changed tables and the operations are left there for `scripts/check_table_mut.py`,
//! which replays the operations with python-blosc2 and compares what both tables read.

use std::path::{Path, PathBuf};

use b2nd::{Rows, Table, TableMut, Value};
use serde_json::json;

mod common;
use common::{copy_tree, snapshot};

/// The committed fixtures, or those `B2ND_TABLE_FIXTURES` names (CI regenerates them live).
fn dir() -> PathBuf {
    match std::env::var_os("B2ND_TABLE_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables"),
    }
}

/// The rows of the fixture's table, column by column (`None`: a null), as b2nd reads them
/// (`tests/table.rs` checks those reads against python-blosc2's).
#[derive(Debug, Clone, PartialEq)]
struct Model {
    id: Vec<Option<i64>>,
    when: Vec<Option<i64>>,
    score: Vec<Option<f64>>,
    name: Vec<Option<String>>,
    opt: Vec<Option<i32>>,
    sent: Vec<Option<i16>>,
    fsent: Vec<Option<f32>>,
    flag: Vec<Option<bool>>,
    small: Vec<Option<u8>>,
}

impl Model {
    fn read(t: &Table) -> Model {
        Model {
            id: t.read_column_opt("id").unwrap(),
            when: t.read_column_opt("when").unwrap(),
            score: t.read_column_opt("score").unwrap(),
            name: t.read_strings("name").unwrap(),
            opt: t.read_column_opt("opt").unwrap(),
            sent: t.read_column_opt("sent").unwrap(),
            fsent: t.read_column_opt("fsent").unwrap(),
            flag: t.read_column_opt("flag").unwrap(),
            small: t.read_column_opt("small").unwrap(),
        }
    }

    fn delete(&mut self, rows: &[usize]) {
        fn drop<T>(v: &mut Vec<T>, rows: &[usize]) {
            let mut i = 0;
            v.retain(|_| {
                i += 1;
                !rows.contains(&(i - 1))
            });
        }
        drop(&mut self.id, rows);
        drop(&mut self.when, rows);
        drop(&mut self.score, rows);
        drop(&mut self.name, rows);
        drop(&mut self.opt, rows);
        drop(&mut self.sent, rows);
        drop(&mut self.fsent, rows);
        drop(&mut self.flag, rows);
        drop(&mut self.small, rows);
    }
}

/// The schema's cached row count, the two epochs, and whether every index is stale.
fn manifest(path: &Path) -> (Option<i64>, i64, i64, bool) {
    let store = b2nd::Store::open(path).unwrap();
    let meta = store.open_schunk("/_meta").unwrap();
    let Some(Value::Str(schema)) = meta.attr("schema").unwrap() else {
        panic!("no schema")
    };
    let schema: serde_json::Value = serde_json::from_str(&schema.replace("NaN", "null")).unwrap();
    let epoch = |k: &str| meta.attr(k).unwrap().and_then(|v| v.as_i64()).unwrap_or(0);
    let catalog = meta.attr("index_catalog").unwrap().unwrap();
    let all_stale = catalog
        .as_map()
        .unwrap()
        .iter()
        .all(|(_, d)| d.get("stale").is_some_and(Value::truthy));
    (
        schema["n_rows"].as_i64(),
        epoch("value_epoch"),
        epoch("visibility_epoch"),
        all_stale,
    )
}

/// Every stored column's array (and mask) length.
fn lengths(path: &Path) -> Vec<(String, u64)> {
    let store = b2nd::Store::open(path).unwrap();
    let mut out: Vec<(String, u64)> = store
        .keys()
        .into_iter()
        .filter(|k| k.starts_with("/_cols/") || k == "/_valid_rows")
        .map(|k| {
            let n = store.open_array(&k).unwrap().shape()[0];
            (k, n)
        })
        .collect();
    out.sort();
    out
}

fn out_dir() -> Option<PathBuf> {
    std::env::var_os("B2ND_TABLE_MUT_OUT").map(PathBuf::from)
}

#[test]
fn appends_deletes_and_updates_leave_the_table_python_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let before = manifest(&path);
    assert!(!before.3, "the fixture's indexes are fresh");
    let mut model = Model::read(&Table::open(&path).unwrap());
    assert_eq!(model.id.len(), 7);
    let mut ops = Vec::new();
    let mut t = TableMut::open(&path).unwrap();

    // 1. Two rows after the last live one (the arrays end there: one append each), nulls of
    //    both storages, defaults for the columns left out.
    let rows = Rows::new()
        .column("id", &[100i64, 101])
        .unwrap()
        .column("when", &[5i64, 6])
        .unwrap()
        .column_opt("score", &[None, Some(2.5f64)])
        .unwrap()
        .strings("name", &[Some("ab"), Some("ünï")])
        .unwrap()
        .column_opt("opt", &[Some(1i32), None])
        .unwrap()
        .column_opt("sent", &[None, Some(7i16)])
        .unwrap()
        .column_opt("fsent", &[Some(0.5f32), None])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    ops.push(json!({"op": "append", "columns": {
        "id": [100, 101], "when": [5, 6], "score": [null, 2.5], "name": ["ab", "ünï"],
        "opt": [1, null], "sent": [null, 7], "fsent": [0.5, null]}}));
    model.id.extend([Some(100), Some(101)]);
    model.when.extend([Some(5), Some(6)]);
    model.score.extend([None, Some(2.5)]);
    model.name.extend([Some("ab".into()), Some("ünï".into())]);
    model.opt.extend([Some(1), None]);
    model.sent.extend([None, Some(7)]);
    model.fsent.extend([Some(0.5), None]);
    model.flag.extend([Some(false), Some(false)]);
    model.small.extend([Some(7), Some(7)]);
    assert_eq!(Model::read(t.table()), model);
    assert_eq!(
        manifest(&path),
        (Some(9), before.1 + 1, before.2, true),
        "n_rows, value_epoch + 1, every index stale"
    );
    assert!(
        lengths(&path).iter().all(|(_, n)| *n == 10),
        "{:?}",
        lengths(&path)
    );

    // 2. Delete the first row, one in the middle, and the last one: the arrays end at the
    //    last live row, as python's delete and close leave them.
    assert_eq!(t.delete(&[8, 0, 5, 8]).unwrap(), 3);
    ops.push(json!({"op": "delete", "rows": [0, 5, 8]}));
    model.delete(&[0, 5, 8]);
    assert_eq!(Model::read(t.table()), model);
    assert_eq!(manifest(&path), (Some(6), before.1 + 1, before.2 + 1, true));
    assert_eq!(t.table().physical_rows(), 9);
    assert!(
        lengths(&path).iter().all(|(_, n)| *n == 9),
        "{:?}",
        lengths(&path)
    );

    // 3. Three rows after the last live one.
    let rows = Rows::new()
        .column("id", &[200i64, 201, 202])
        .unwrap()
        .column("when", &[-1i64, 0, 1])
        .unwrap()
        .column("score", &[1.0f64, 2.0, 3.0])
        .unwrap()
        .strings("name", &[Some("xyzxyz"), Some(""), Some("q")])
        .unwrap()
        .column("opt", &[7i32, 8, 9])
        .unwrap()
        .column("sent", &[-2i16, 0, 2])
        .unwrap()
        .column("fsent", &[f32::INFINITY, 0.0, -0.0])
        .unwrap()
        .column("flag", &[true, false, true])
        .unwrap()
        .column("small", &[0u8, 255, 1])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 3);
    ops.push(json!({"op": "append", "columns": {
        "id": [200, 201, 202], "when": [-1, 0, 1], "score": [1.0, 2.0, 3.0],
        "name": ["xyzxyz", "", "q"], "opt": [7, 8, 9], "sent": [-2, 0, 2],
        "fsent": ["inf", 0.0, "-0.0"], "flag": [true, false, true], "small": [0, 255, 1]}}));
    model.id.extend([Some(200), Some(201), Some(202)]);
    model.when.extend([Some(-1), Some(0), Some(1)]);
    model.score.extend([Some(1.0), Some(2.0), Some(3.0)]);
    model
        .name
        .extend(["xyzxyz", "", "q"].map(|s| Some(s.to_string())));
    model.opt.extend([Some(7), Some(8), Some(9)]);
    model.sent.extend([Some(-2), Some(0), Some(2)]);
    model
        .fsent
        .extend([Some(f32::INFINITY), Some(0.0), Some(-0.0)]);
    model.flag.extend([Some(true), Some(false), Some(true)]);
    model.small.extend([Some(0), Some(255), Some(1)]);
    assert_eq!(Model::read(t.table()), model);
    assert_eq!(manifest(&path), (Some(9), before.1 + 2, before.2 + 1, true));
    assert!(
        lengths(&path).iter().all(|(_, n)| *n == 12),
        "{:?}",
        lengths(&path)
    );

    // 4. Values of three live rows changed, in no order: nulls into both storages over
    //    values, values over nulls, text (not nullable); the rest is kept. python advances
    //    `value_epoch` once per column assigned.
    let staged_before = std::fs::read_dir(&path).unwrap().count();
    let values = Rows::new()
        .column_opt("score", &[None, Some(9.5f64), Some(-1.0)])
        .unwrap()
        .column_opt("opt", &[Some(5i32), None, Some(6)])
        .unwrap()
        .column_opt("sent", &[None, Some(3i16), None])
        .unwrap()
        .strings("name", &[Some("upd"), Some(""), Some("ü")])
        .unwrap();
    assert_eq!(t.update(&[4, 1, 7], &values).unwrap(), 3);
    ops.push(json!({"op": "update", "rows": [4, 1, 7], "columns": {
        "score": [null, 9.5, -1.0], "opt": [5, null, 6], "sent": [null, 3, null],
        "name": ["upd", "", "ü"]}}));
    for (row, score, opt, sent, name) in [
        (4, None, Some(5), None, Some("upd")),
        (1, Some(9.5), None, Some(3), Some("")),
        (7, Some(-1.0), Some(6), None, Some("ü")),
    ] {
        model.score[row] = score;
        model.opt[row] = opt;
        model.sent[row] = sent;
        model.name[row] = name.map(String::from);
    }
    assert_eq!(Model::read(t.table()), model);
    assert_eq!(manifest(&path), (Some(9), before.1 + 6, before.2 + 1, true));
    assert!(lengths(&path).iter().all(|(_, n)| *n == 12));
    assert_eq!(
        std::fs::read_dir(&path).unwrap().count(),
        staged_before,
        "no staging directory left"
    );
    // A position twice, out of range, or a value count that differs: refused.
    for (rows, n) in [(&[1u64, 1][..], 2), (&[9][..], 1), (&[0, 1][..], 1)] {
        let v = Rows::new().column("id", &vec![0i64; n]).unwrap();
        assert!(t.update(rows, &v).is_err(), "{rows:?}");
    }
    assert_eq!(Model::read(t.table()), model);

    // The rows python reads as live: the ones the model has.
    let reopened = Table::open(&path).unwrap();
    assert_eq!(reopened.n_rows(), 9);
    assert_eq!(Model::read(&reopened), model);
    drop(t);

    leave_for_python(&path, "mutable.b2d", "mutable.b2d", &json!(ops));
}

#[test]
fn refused_changes_change_no_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let before = snapshot(&path);
    let full = |r: Rows| r.column("when", &[1i64]).unwrap();
    let cases: Vec<(Rows, &str)> = vec![
        (
            full(Rows::new().column("id", &[1i32]).unwrap()),
            "dtype <i4",
        ),
        (
            full(Rows::new().column_opt("id", &[None::<i64>]).unwrap()),
            "not nullable",
        ),
        (
            full(
                Rows::new()
                    .column("id", &[1i64])
                    .unwrap()
                    .strings("name", &[Some("abcdefg")])
                    .unwrap(),
            ),
            "7 characters, more than the column's max_length 6",
        ),
        (
            full(
                Rows::new()
                    .column("id", &[1i64])
                    .unwrap()
                    .column("nope", &[1i64])
                    .unwrap(),
            ),
            "no column \"nope\"",
        ),
        (full(Rows::new()), "declares no default"),
        (
            full(
                Rows::new()
                    .column("id", &[1i64])
                    .unwrap()
                    .strings("small", &[Some("x")])
                    .unwrap(),
            ),
            "text given for a uint8 column",
        ),
    ];
    for (rows, want) in cases {
        let e = t.append(&rows).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(snapshot(&path) == before, "{want}: a file changed");
    }
    let e = t.delete(&[0, 7]).unwrap_err().to_string();
    assert!(
        e.contains("row 7 is out of range: the table has 7 live rows"),
        "{e}"
    );
    assert!(snapshot(&path) == before);
    assert_eq!(t.append(&Rows::new()).unwrap(), 0);
    assert_eq!(t.delete(&[]).unwrap(), 0);
    assert!(snapshot(&path) == before);
    // Rows of different lengths never make a `Rows`.
    let e = Rows::new()
        .column("id", &[1i64, 2])
        .unwrap()
        .column("when", &[1i64])
        .unwrap_err();
    assert!(e.to_string().contains("has 1 rows, the others 2"), "{e}");
    // One writer at a time.
    let e = TableMut::open(&path).unwrap_err();
    assert!(matches!(e, b2nd::Error::Locked { .. }), "{e}");
    drop(t);
    TableMut::open(&path).unwrap();
}

#[test]
fn arrays_are_refused_and_every_default_kind_takes_rows() {
    let array = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/attrs_all.b2nd");
    let e = TableMut::open(array).unwrap_err().to_string();
    assert!(e.contains("a directory (.b2d) or a zip (.b2z)"), "{e}");
    // basic.b2d: every kind python-blosc2 writes by default, an ndarray column (`vec`,
    // two uint8 per row, no default) among them.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("basic.b2d");
    copy_tree(&dir().join("basic.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let ids: Vec<i64> = t.table().read_column("id").unwrap();
    let e = t
        .append(&Rows::new().column("id", &[1i64]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("\"vec\": no values given, and the column declares no default"),
        "{e}"
    );
    let e = t
        .append(
            &Rows::new()
                .column("id", &[1i64])
                .unwrap()
                .ndarray("vec", &[3], &[1u8, 2, 3])
                .unwrap(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("items of dtype |u1 and shape [3] given for an ndarray column of |u1 items of shape [2]"), "{e}");
    assert_eq!(t.delete(&[1]).unwrap(), 1);
    let rows = Rows::new()
        .column("id", &[100i64, 101])
        .unwrap()
        .ndarray("vec", &[2], &[7u8, 8, 9, 10])
        .unwrap()
        .values(
            "items",
            &[Value::Array(vec![Value::Int(5)]), Value::Array(vec![])],
        )
        .unwrap()
        .strings("tag", &[Some("new"), None])
        .unwrap()
        .timestamps("when", "s", &[Some(1_800_000_000), Some(1_800_000_001)])
        .unwrap()
        // Given (nulls) for python's replay: its extend cannot fill a sentinel column whose
        // default is None (meaning-audit.md).
        .column_opt("sent", &[None::<i16>, None])
        .unwrap()
        .column_opt("fsent", &[None::<f32>, Some(0.5)])
        .unwrap()
        .strings("txt", &[Some("t1"), None])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    let mut want = ids.clone();
    want.remove(1);
    want.extend([100, 101]);
    assert_eq!(t.table().read_column::<i64>("id").unwrap(), want);
    let (_, shape, vec) = t.table().read_column_bytes("vec").unwrap();
    assert_eq!(shape, [want.len() as u64, 2]);
    assert_eq!(vec[vec.len() - 4..], [7, 8, 9, 10]);
    assert_eq!(
        t.table().read_utf8("txt").unwrap().len(),
        want.len(),
        "every column has every row"
    );
    // An update of sub-arrays.
    let values = Rows::new().ndarray("vec", &[2], &[42u8, 43]).unwrap();
    assert_eq!(t.update(&[0], &values).unwrap(), 1);
    assert_eq!(t.table().read_column_bytes("vec").unwrap().2[..2], [42, 43]);
    // Nested lists (SQL's fixed-size lists) of the item shape; ragged or of another shape,
    // refused.
    let nested = |v: Vec<Value>| Rows::new().values("vec", &[Value::Array(v)]).unwrap();
    let ints = |v: &[i64]| Value::Array(v.iter().map(|&x| Value::Int(x)).collect());
    assert_eq!(
        t.update(&[1], &nested(vec![Value::Int(44), Value::Int(45)]))
            .unwrap(),
        1
    );
    assert_eq!(
        t.table().read_column_bytes("vec").unwrap().2[2..4],
        [44, 45]
    );
    for (v, want) in [
        (
            vec![ints(&[1]), Value::Int(2)],
            "is not a nested list of shape [2]",
        ),
        (vec![Value::Int(1)], "is not a nested list of shape [2]"),
        (
            vec![Value::Int(1), Value::Int(256)],
            "row 0: Int(256) is not a |u1 item",
        ),
    ] {
        let e = t.update(&[1], &nested(v)).unwrap_err().to_string();
        assert!(e.contains(want), "{e}");
    }
    drop(t);
    leave_for_python(
        &path,
        "basic_append.b2d",
        "basic.b2d",
        &json!([
            {"op": "delete", "rows": [1]},
            {"op": "append", "columns": {"id": [100, 101], "vec": [[7, 8], [9, 10]],
                                         "items": [[5], []], "tag": ["new", null],
                                         "when": [1800000000, 1800000001],
                                         "sent": [null, null], "fsent": [null, 0.5],
                                         "txt": ["t1", null]}},
            {"op": "update", "rows": [0], "columns": {"vec": [[42, 43]]}},
            {"op": "update", "rows": [1], "columns": {"vec": [[44, 45]]}},
        ]),
    );
}

#[test]
fn tables_b2nd_writes_take_rows_too() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.b2d");
    b2nd::TableBuilder::new()
        .column("a", &[1i32, 2, 3])
        .unwrap()
        .nullable_column("b", &[0.5f64, 0.0, 1.5], &[true, false, true])
        .unwrap()
        .write(&path)
        .unwrap();
    // What a change killed while it wrote aside leaves: removed when the table is opened.
    let staged = path.join(".b2nd-killed.tmp");
    std::fs::create_dir_all(staged.join("array")).unwrap();
    let mut t = TableMut::open(&path).unwrap();
    assert!(!staged.exists());
    for round in 0..3 {
        t.append(
            &Rows::new()
                .column("a", &[10 + round])
                .unwrap()
                .column_opt("b", &[(round != 1).then_some(round as f64)])
                .unwrap(),
        )
        .unwrap();
    }
    t.delete(&[0]).unwrap();
    let r = Table::open(&path).unwrap();
    assert_eq!(r.read_column::<i32>("a").unwrap(), [2, 3, 10, 11, 12]);
    assert_eq!(
        r.read_column_opt::<f64>("b").unwrap(),
        [None, Some(1.5), Some(0.0), None, Some(2.0)]
    );
    // With every row deleted the arrays keep their length (python's trim leaves an empty
    // table's capacity): appends write into it, then past it (a resize and a region
    // write), and rows written where deleted nulls were are not null.
    assert_eq!(t.delete(&[0, 1, 2, 3, 4]).unwrap(), 5);
    assert_eq!((t.table().n_rows(), t.table().physical_rows()), (0, 6));
    t.append(
        &Rows::new()
            .column("a", &[7])
            .unwrap()
            .column("b", &[1.0])
            .unwrap(),
    )
    .unwrap();
    let big: Vec<i32> = (0..8).collect();
    t.append(
        &Rows::new()
            .column("a", &big)
            .unwrap()
            .column("b", &[2.0; 8])
            .unwrap(),
    )
    .unwrap();
    let r = Table::open(&path).unwrap();
    assert_eq!(r.physical_rows(), 9);
    assert_eq!(
        r.read_column::<i32>("a").unwrap(),
        [7, 0, 1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(r.read_validity("b").unwrap(), Some(vec![true; 9]));
}

/// A change whose tidying did not finish (a full disk after `_valid_rows` was published)
/// leaves the schema without its cached count; the next `TableMut::open` sets it.
#[test]
fn open_finishes_a_change_that_stopped_after_publishing() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    TableMut::open(&path).unwrap().delete(&[1]).unwrap();
    let (count, value, visibility, stale) = manifest(&path);
    let store = b2nd::Store::open(&path).unwrap();
    let schema = match store.open_schunk("/_meta").unwrap().attr("schema").unwrap() {
        Some(Value::Str(s)) => s,
        other => panic!("schema: {other:?}"),
    };
    // The schema's text without its `"n_rows": N` member (the text keeps python's NaN).
    let at = schema.find("\"n_rows\"").expect("a cached count");
    let digits = schema[at + 8..].find([',', '}']).unwrap();
    let (mut from, mut to) = (at, at + 8 + digits);
    if schema[..from].trim_end().ends_with(',') {
        from = schema[..from].trim_end().len() - 1;
    } else if schema[to..].starts_with(',') {
        to += 1;
    }
    let without = format!("{}{}", &schema[..from], &schema[to..]);
    b2nd::write::set_attrs(path.join("_meta.b2f"), &[("schema", Value::Str(without))]).unwrap();
    assert_eq!(manifest(&path).0, None);
    let rows = Model::read(&Table::open(&path).unwrap());

    let t = TableMut::open(&path).unwrap();
    assert_eq!(manifest(&path), (count, value, visibility, stale));
    assert_eq!(count, Some(t.table().n_rows() as i64));
    assert_eq!(Model::read(t.table()), rows);
}

/// Leave `path` and its operations (replayed on a copy of fixture `fixture`) for
/// scripts/check_table_mut.py under the name `name`.
fn leave_for_python(path: &Path, name: &str, fixture: &str, ops: &serde_json::Value) {
    if let Some(out) = out_dir() {
        let dst = out.join(name);
        let _ = std::fs::remove_dir_all(&dst);
        copy_tree(path, &dst);
        std::fs::write(
            out.join(format!("{name}.ops.json")),
            serde_json::to_string_pretty(&json!({"fixture": fixture, "ops": ops})).unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn columns_are_renamed_and_dropped_as_python_does() {
    let tmp = tempfile::tempdir().unwrap();
    // Fixed-width columns with masks, sentinels and summaries.
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let score: Vec<Option<f64>> = t.table().read_column_opt("score").unwrap();
    let small: Vec<Option<u8>> = t.table().read_column_opt("small").unwrap();
    let ids: Vec<i64> = t.table().read_column("id").unwrap();
    let names: Vec<String> = t
        .table()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    t.rename_column("score", "points").unwrap();
    t.rename_column("small", "nest.small").unwrap();
    t.drop_column("opt").unwrap();
    t.drop_column("flag").unwrap();
    let ops = json!([
        {"op": "rename", "old": "score", "new": "points"},
        {"op": "rename", "old": "small", "new": "nest.small"},
        {"op": "drop", "name": "opt"},
        {"op": "drop", "name": "flag"},
    ]);
    let now = Table::open(&path).unwrap();
    let want: Vec<String> = names
        .iter()
        .filter(|n| *n != "opt" && *n != "flag")
        .map(|n| match n.as_str() {
            "score" => "points".to_string(),
            "small" => "nest.small".to_string(),
            n => n.to_string(),
        })
        .collect();
    let got: Vec<String> = now.columns().iter().map(|c| c.name().to_string()).collect();
    assert_eq!(got, want, "the schema keeps its order");
    assert_eq!(now.read_column_opt::<f64>("points").unwrap(), score);
    assert_eq!(now.read_column_opt::<u8>("nest.small").unwrap(), small);
    assert_eq!(now.read_column::<i64>("id").unwrap(), ids);
    assert!(path.join("_cols/nest/small.b2nd").is_file());
    assert!(
        path.join("_cols/points.notnull.b2nd").is_file(),
        "the mask moves"
    );
    assert!(path.join("_indexes/points/summary.block.b2nd").is_file());
    for gone in [
        "_cols/score.b2nd",
        "_cols/score.notnull.b2nd",
        "_cols/opt.b2nd",
        "_cols/opt.notnull.b2nd",
        "_cols/flag.b2nd",
        "_indexes/opt",
        "_indexes/score",
    ] {
        assert!(!path.join(gone).exists(), "{gone} left");
    }
    let catalog = b2nd::Store::open(&path)
        .unwrap()
        .open_schunk("/_meta")
        .unwrap()
        .attr("index_catalog")
        .unwrap()
        .unwrap();
    let points = catalog
        .get("points")
        .expect("the summary under its new name");
    assert_eq!(points.get("token").and_then(Value::as_str), Some("points"));
    assert!(catalog.get("score").is_none() && catalog.get("opt").is_none());
    // No staging directory beside the table or inside it.
    let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert_eq!(beside.len(), 1, "{beside:?}");
    // Fresh summaries moved with their columns: python's rebuild_index checks them.
    leave_for_python(&path, "mutable_columns.b2d", "mutable.b2d", &ops);
    // The table still takes rows under the new names.
    let rows = Rows::new()
        .column("id", &[100i64])
        .unwrap()
        .column("when", &[5i64])
        .unwrap()
        .column_opt("points", &[Some(1.25f64)])
        .unwrap()
        .column("nest.small", &[3u8])
        .unwrap()
        .column_opt("sent", &[None::<i16>])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 1);
    assert_eq!(
        t.table().read_column_opt::<f64>("points").unwrap().last(),
        Some(&Some(1.25))
    );
    drop(t);
    let mut ops = ops.as_array().unwrap().clone();
    ops.push(json!({"op": "append", "columns": {
        "id": [100], "when": [5], "points": [1.25], "nest.small": [3], "sent": [null]}}));
    leave_for_python(
        &path,
        "mutable_columns_append.b2d",
        "mutable.b2d",
        &json!(ops),
    );

    // Variable-length kinds: utf8, dictionary, list, ndarray.
    let path = tmp.path().join("basic.b2d");
    copy_tree(&dir().join("basic.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let txt = t.table().read_values("txt").unwrap();
    let tag = t.table().read_values("tag").unwrap();
    let items = t.table().read_values("items").unwrap();
    t.rename_column("txt", "text").unwrap();
    t.rename_column("tag", "label.tag").unwrap();
    t.rename_column("items", "things").unwrap();
    t.drop_column("vec").unwrap();
    t.drop_column("name").unwrap();
    let now = t.table();
    assert_eq!(now.read_values("text").unwrap(), txt);
    assert_eq!(now.read_values("label.tag").unwrap(), tag);
    assert_eq!(now.read_values("things").unwrap(), items);
    assert!(now.column("vec").is_err() && now.column("name").is_err());
    drop(t);
    leave_for_python(
        &path,
        "basic_columns.b2d",
        "basic.b2d",
        &json!([
            {"op": "rename", "old": "txt", "new": "text"},
            {"op": "rename", "old": "tag", "new": "label.tag",
             "python_breaks": "python-blosc2 4.14.1 leaves tag_dict behind"},
            {"op": "rename", "old": "items", "new": "things",
             "python_breaks": "python-blosc2 4.14.1 writes things.b2f and reads things.b2b"},
            {"op": "drop", "name": "vec"},
            {"op": "drop", "name": "name"},
        ]),
    );
}

#[test]
fn column_changes_python_refuses_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    // A computed column over `id` and `small`, as python-blosc2's add_computed_column
    // stores it.
    let store = b2nd::Store::open(&path).unwrap();
    let meta = store.open_schunk("/_meta").unwrap();
    let Some(Value::Str(schema)) = meta.attr("schema").unwrap() else {
        panic!("no schema")
    };
    let computed = r#""computed_columns": [{"name": "twice", "kind": "expression", "expression": "(o0 * 2 + o1)", "col_deps": ["id", "small"], "dtype": "int64"}]"#;
    let schema = schema.replacen('{', &format!("{{{computed}, "), 1);
    b2nd::write::set_attrs(path.join("_meta.b2f"), &[("schema", Value::Str(schema))]).unwrap();
    let mut t = TableMut::open(&path).unwrap();
    let twice: Vec<i64> = t.table().read_column("twice").unwrap();
    let before = snapshot(&path);
    for (e, want) in [
        (
            t.rename_column("id", "key"),
            "used by computed or materialized column(s) [\"twice\"]",
        ),
        (
            t.drop_column("small"),
            "used by computed or materialized column(s) [\"twice\"]",
        ),
        (
            t.rename_column("score", "id"),
            "a column of that name exists",
        ),
        (
            t.rename_column("score", "twice"),
            "a column of that name exists",
        ),
        (t.rename_column("score", "_x"), "cannot start with '_'"),
        (t.rename_column("score", ""), "cannot be empty"),
        (t.rename_column("nope", "x"), "no column \"nope\""),
        (t.drop_column("nope"), "no column \"nope\""),
    ] {
        let e = e.unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(snapshot(&path) == before, "{want}: a file changed");
    }
    // A computed column is renamed and dropped by its definition alone.
    t.rename_column("twice", "double").unwrap();
    assert_eq!(t.table().read_column::<i64>("double").unwrap(), twice);
    t.drop_column("double").unwrap();
    assert!(t.table().column("double").is_err());
    // Now `id` is free to go; the last stored column is not.
    let stored: Vec<String> = t
        .table()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    for c in &stored[1..] {
        t.drop_column(c).unwrap();
    }
    let e = t.drop_column(&stored[0]).unwrap_err().to_string();
    assert!(
        e.contains("the last stored column cannot be dropped"),
        "{e}"
    );
    assert_eq!(t.table().columns().len(), 1);
}

#[test]
fn delete_where_deletes_the_rows_a_predicate_picks() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let mut model = Model::read(t.table());
    let nulls: Vec<usize> = (0..model.score.len())
        .filter(|&i| model.score[i].is_none())
        .collect();
    assert!(!nulls.is_empty(), "the fixture has null scores");
    assert_eq!(
        t.delete_where("score", |v| *v == Value::Nil).unwrap(),
        nulls.len() as u64
    );
    model.delete(&nulls);
    assert_eq!(Model::read(t.table()), model);
    let odd: Vec<usize> = (0..model.id.len())
        .filter(|&i| model.id[i].is_some_and(|v| v % 2 == 1))
        .collect();
    let n = t
        .delete_where("id", |v| v.as_i64().is_some_and(|v| v % 2 == 1))
        .unwrap();
    assert_eq!(n, odd.len() as u64);
    model.delete(&odd);
    assert_eq!(Model::read(t.table()), model);
    assert!(t.delete_where("nope", |_| true).is_err());
}

#[test]
fn changes_without_syncs_leave_the_same_table() {
    // Durability::Process changes what reaches the disk before a change returns, not what
    // the change writes: the table's files read the same as after the default.
    let tmp = tempfile::tempdir().unwrap();
    let mut reads = Vec::new();
    for durability in [b2nd::Durability::Disk, b2nd::Durability::Process] {
        let path = tmp.path().join(format!("{durability:?}.b2d"));
        copy_tree(&dir().join("mutable.b2d"), &path);
        let mut t = TableMut::open(&path).unwrap().with_durability(durability);
        let rows = Rows::new()
            .column("id", &[50i64, 51])
            .unwrap()
            .column("when", &[1i64, 2])
            .unwrap()
            .column_opt("sent", &[None::<i16>, Some(4)])
            .unwrap();
        assert_eq!(t.append(&rows).unwrap(), 2);
        assert_eq!(t.delete(&[0, 3]).unwrap(), 2);
        let values = Rows::new().column_opt("score", &[Some(0.5f64)]).unwrap();
        assert_eq!(t.update(&[1], &values).unwrap(), 1);
        t.rename_column("small", "tiny").unwrap();
        drop(t);
        let t = Table::open(&path).unwrap();
        reads.push((
            t.read_column_opt::<i64>("id").unwrap(),
            t.read_column_opt::<f64>("score").unwrap(),
            t.read_column_opt::<i16>("sent").unwrap(),
            t.read_column_opt::<u8>("tiny").unwrap(),
            manifest(&path),
            lengths(&path),
        ));
    }
    assert_eq!(reads[0], reads[1]);
}

#[test]
fn crafted_column_names_change_nothing_outside_the_table() {
    // python-blosc2 keeps a column's index under `_indexes/<name>`: a schema naming a column
    // with an absolute path must not make a drop remove that path, nor a rename move there.
    let victim = tempfile::Builder::new()
        .prefix("b2nd-victim-")
        .tempdir()
        .unwrap();
    let name = victim.path().to_str().unwrap().to_string();
    assert!(!name.contains('.'), "{name}: a dot would nest the column");
    std::fs::write(victim.path().join("keep"), b"keep").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    // Column `small` renamed to `name` in the schema, its file and its catalog entry.
    let store = b2nd::Store::open(&path).unwrap();
    let meta = store.open_schunk("/_meta").unwrap();
    let Some(Value::Str(schema)) = meta.attr("schema").unwrap() else {
        panic!("no schema")
    };
    let Some(Value::Map(mut catalog)) = meta.attr("index_catalog").unwrap() else {
        panic!("no index catalog")
    };
    drop((meta, store));
    // python writes NaN into the schema's JSON, which serde_json refuses: edit the text.
    assert_eq!(schema.matches(r#""name": "small""#).count(), 1, "{schema}");
    let schema = schema.replace(r#""name": "small""#, &format!(r#""name": {}"#, json!(name)));
    let entry = catalog
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("small"))
        .expect("small is indexed");
    entry.0 = Value::Str(name.clone());
    b2nd::write::set_attrs(
        path.join("_meta.b2f"),
        &[
            ("schema", Value::Str(schema)),
            ("index_catalog", Value::Map(catalog)),
        ],
    )
    .unwrap();
    std::fs::rename(
        path.join("_cols/small.b2nd"),
        path.join(format!("_cols/{}.b2nd", name.replace('/', "%2F"))),
    )
    .unwrap();
    let mut t = TableMut::open(&path).unwrap();
    let small: Vec<Option<u8>> = Table::open(&path).unwrap().read_column_opt(&name).unwrap();
    assert!(!small.is_empty());
    // An indexed column is not renamed to or from a name its index directory cannot take.
    let before = snapshot(&path);
    for e in [
        t.rename_column("id", "a/../../x"),
        t.rename_column(&name, "tiny"),
    ] {
        let e = e.unwrap_err().to_string();
        assert!(e.contains("would not be a path inside the table"), "{e}");
        assert!(snapshot(&path) == before, "a refused rename changed a file");
    }
    t.drop_column(&name).unwrap();
    assert!(t.table().column(&name).is_err());
    assert_eq!(std::fs::read(victim.path().join("keep")).unwrap(), b"keep");
    assert!(!path
        .join(format!("_cols/{}.b2nd", name.replace('/', "%2F")))
        .exists());
}

#[test]
fn compact_refuses_a_column_without_rows() {
    // A crafted table whose `score` null mask is a 0-d array (a 0-d column is refused when
    // the table opens): compact must refuse it by name, change nothing, and not panic on
    // the missing first dimension.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mask = path.join("_cols/score.notnull.b2nd");
    std::fs::remove_file(&mask).unwrap();
    b2nd::ArrayBuilder::for_type::<bool>(&[])
        .write(b2nd::Target::File(mask.clone()), &[true])
        .unwrap();
    let mut t = TableMut::open(&path).unwrap();
    t.delete(&[0]).unwrap();
    let before = snapshot(&path);
    let e = t.compact().unwrap_err().to_string();
    assert!(e.contains("0-d") && e.contains("score.notnull.b2nd"), "{e}");
    assert!(
        snapshot(&path) == before,
        "a refused compact changed a file"
    );
}

#[test]
fn compact_leaves_the_table_python_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let before = manifest(&path);
    let mut t = TableMut::open(&path).unwrap();
    let mut model = Model::read(t.table());
    // Holes at the front, inside and (after the append) a null-holding row moved.
    assert_eq!(t.delete(&[0, 3]).unwrap(), 2);
    model.delete(&[0, 3]);
    let rows = Rows::new()
        .column("id", &[300i64, 301])
        .unwrap()
        .column("when", &[1i64, 2])
        .unwrap()
        .column_opt("score", &[None, Some(0.25f64)])
        .unwrap()
        .strings("name", &[Some("c1"), Some("c2")])
        .unwrap()
        .column_opt("opt", &[None, Some(3i32)])
        .unwrap()
        // python-blosc2 4.14.1's extend fails on a sentinel column left out (it fills None).
        .column_opt("sent", &[None::<i16>, None])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    model.id.extend([Some(300), Some(301)]);
    model.when.extend([Some(1), Some(2)]);
    model.score.extend([None, Some(0.25)]);
    model.name.extend([Some("c1".into()), Some("c2".into())]);
    model.opt.extend([None, Some(3)]);
    model.sent.extend([None, None]);
    model.fsent.extend([None, None]);
    model.flag.extend([Some(false), Some(false)]);
    model.small.extend([Some(7), Some(7)]);
    assert_eq!(t.delete(&[2]).unwrap(), 1);
    model.delete(&[2]);
    let physical = t.table().physical_rows();
    let n = model.id.len() as u64;
    assert!(physical > n, "the table has holes: {physical} rows for {n}");
    assert_eq!(t.compact().unwrap(), physical - n);
    assert_eq!(Model::read(t.table()), model);
    assert_eq!(t.table().physical_rows(), n);
    assert!(
        lengths(&path).iter().all(|(_, l)| *l == n),
        "{:?}",
        lengths(&path)
    );
    // python's compact: value_epoch advanced (once for the append, once for it), the
    // deletes' visibility_epoch kept, every index stale.
    assert_eq!(
        manifest(&path),
        (Some(n as i64), before.1 + 2, before.2 + 2, true)
    );
    // The writer's lock moved with `_valid_rows`: another writer is still kept out.
    assert!(matches!(
        TableMut::open(&path),
        Err(b2nd::Error::Locked { .. })
    ));
    // No gap left: nothing to do, nothing changed; the writer goes on.
    let unchanged = snapshot(&path);
    assert_eq!(t.compact().unwrap(), 0);
    assert!(snapshot(&path) == unchanged);
    assert_eq!(t.delete(&[0]).unwrap(), 1);
    model.delete(&[0]);
    assert_eq!(Model::read(&Table::open(&path).unwrap()), model);
    drop(t);
    assert_eq!(Model::read(TableMut::open(&path).unwrap().table()), model);
    leave_for_python(
        &path,
        "mutable_compact.b2d",
        "mutable.b2d",
        &json!([
            {"op": "delete", "rows": [0, 3]},
            {"op": "append", "columns": {"id": [300, 301], "when": [1, 2],
                "score": [null, 0.25], "name": ["c1", "c2"], "opt": [null, 3], "sent": [null, null]}},
            {"op": "delete", "rows": [2]},
            {"op": "compact"},
            {"op": "compact", "gapless": true},
            {"op": "delete", "rows": [0]},
        ]),
    );

    // A table of every kind python writes by default (utf8, dictionary, list, ndarray among
    // them): every column keeps its live rows.
    let path = tmp.path().join("basic.b2d");
    copy_tree(&dir().join("basic.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    t.delete(&[0]).unwrap();
    let names: Vec<String> = t
        .table()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    let values = |t: &Table| -> Vec<Vec<Value>> {
        names
            .iter()
            .filter(|c| c.as_str() != "vec")
            .map(|c| t.read_values(c).unwrap())
            .collect()
    };
    let before = (
        values(t.table()),
        t.table().read_column_bytes("vec").unwrap().2,
    );
    assert_eq!(t.compact().unwrap(), 3);
    let after = (
        values(t.table()),
        t.table().read_column_bytes("vec").unwrap().2,
    );
    assert_eq!(after, before);
    drop(t);
    leave_for_python(
        &path,
        "basic_compact.b2d",
        "basic.b2d",
        &json!([{"op": "delete", "rows": [0]}, {"op": "compact"}]),
    );
}

#[test]
fn columns_are_added_as_python_adds_them() {
    use b2nd::NewColumn;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let model = Model::read(t.table());
    let n = model.id.len();
    let physical = t.table().physical_rows();
    assert!(physical > n as u64, "the fixture has a deleted row");
    let epochs = manifest(&path);

    // Refused, nothing changed: a taken name, a value count, a dtype, a null where none may
    // be, text too long, no values and no default, a default of another type.
    let before = snapshot(&path);
    for (name, c, want) in [
        (
            "id",
            NewColumn::of::<i64>().default(Value::Int(0)),
            "a column of that name exists",
        ),
        (
            "x",
            NewColumn::of::<i32>().values(&[1i32, 2]),
            "2 values given for 7 live rows",
        ),
        (
            "x",
            NewColumn::of::<i32>().values(&vec![1i64; n]),
            "values of dtype <i8 given for a column of dtype <i4",
        ),
        (
            "x",
            NewColumn::string(2).strings(&vec![Some("abc"); n]),
            "3 characters, more than max_length 2",
        ),
        (
            "x",
            NewColumn::of::<u8>(),
            "give values or declare a default",
        ),
        (
            "x",
            NewColumn::of::<u8>().default(Value::Str("no".into())),
            "is not a |u1 item",
        ),
        (
            "_x",
            NewColumn::of::<u8>().default(Value::Int(1)),
            "cannot start with '_'",
        ),
    ] {
        let e = t.add_column(name, &c).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(snapshot(&path) == before, "{want}: a file changed");
    }

    t.add_column("level", &NewColumn::of::<i32>().default(Value::Int(5)))
        .unwrap();
    let sc = [
        Some(0.5f64),
        None,
        Some(1.0),
        Some(2.0),
        Some(3.0),
        Some(4.0),
        Some(5.0),
    ];
    t.add_column("sc", &NewColumn::of::<f64>().values_opt(&sc))
        .unwrap();
    t.add_column(
        "lab",
        &NewColumn::string(4).default(Value::Str("ab".into())),
    )
    .unwrap();
    t.add_column("nul", &NewColumn::of::<i16>().default(Value::Nil))
        .unwrap();
    let now = t.table();
    assert_eq!(now.read_column::<i32>("level").unwrap(), vec![5; n]);
    assert_eq!(now.read_column_opt::<f64>("sc").unwrap(), sc);
    assert_eq!(
        now.read_strings("lab").unwrap(),
        vec![Some("ab".to_string()); n]
    );
    assert_eq!(now.read_column_opt::<i16>("nul").unwrap(), vec![None; n]);
    assert_eq!(Model::read(now), model, "the other columns are kept");
    // As long as the other arrays; the epochs and indexes kept (no value of theirs changed).
    assert!(lengths(&path).iter().all(|(_, l)| *l == physical));
    assert_eq!(manifest(&path), epochs);

    // Appends fill the added columns' defaults; the new columns take updates and compact.
    let rows = Rows::new()
        .column("id", &[400i64, 401])
        .unwrap()
        .column("when", &[1i64, 2])
        .unwrap()
        .column_opt("sent", &[None::<i16>, None])
        .unwrap()
        .column_opt("sc", &[Some(9.0f64), None])
        .unwrap();
    t.append(&rows).unwrap();
    t.update(
        &[0, 8],
        &Rows::new()
            .column_opt("nul", &[Some(3i16), Some(4)])
            .unwrap(),
    )
    .unwrap();
    t.delete(&[1]).unwrap();
    t.compact().unwrap();
    let now = t.table();
    assert_eq!(now.read_column::<i32>("level").unwrap(), vec![5; n + 1]);
    let mut want_sc = sc.to_vec();
    want_sc.extend([Some(9.0), None]);
    want_sc.remove(1);
    assert_eq!(now.read_column_opt::<f64>("sc").unwrap(), want_sc);
    let mut want_nul = vec![None; n + 1];
    want_nul[0] = Some(3);
    want_nul[n] = Some(4);
    assert_eq!(now.read_column_opt::<i16>("nul").unwrap(), want_nul);
    drop(t);
    leave_for_python(
        &path,
        "mutable_added.b2d",
        "mutable.b2d",
        &json!([
            {"op": "add_column", "name": "level", "kind": "int32", "default": 5},
            {"op": "add_column", "name": "sc", "kind": "float64", "nullable": true,
             "values": [0.5, null, 1.0, 2.0, 3.0, 4.0, 5.0]},
            {"op": "add_column", "name": "lab", "kind": "string", "max_length": 4,
             "default": "ab"},
            {"op": "add_column", "name": "nul", "kind": "int16", "nullable": true,
             "default": null},
            {"op": "append", "columns": {"id": [400, 401], "when": [1, 2],
                "sent": [null, null], "sc": [9.0, null]}},
            {"op": "update", "rows": [0, 8], "columns": {"nul": [3, 4]}},
            {"op": "delete", "rows": [1]},
            {"op": "compact"},
        ]),
    );
}

#[test]
fn attributes_are_set_and_deleted_as_python_does() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    assert_eq!(t.table().attrs().unwrap(), []);
    let model = Model::read(t.table());
    let before = snapshot(&path);
    // Refused, nothing changed: a name too long, an absent name.
    assert!(t
        .set_attrs(&[("a".repeat(32).as_str(), Value::Int(1))])
        .is_err());
    assert!(t.delete_attrs(&["nope"]).is_err());
    assert!(snapshot(&path) == before);
    // The first attributes make `_vlmeta`; later ones change it in place.
    let tags = Value::Array(vec![Value::Str("alpha".into()), Value::Str("beta".into())]);
    t.set_attrs(&[
        ("author", Value::Str("Alice".into())),
        ("tags", tags.clone()),
        ("count", Value::Int(42)),
    ])
    .unwrap();
    t.set_attrs(&[("count", Value::Int(43)), ("ratio", Value::Float(0.5))])
        .unwrap();
    t.delete_attrs(&["author"]).unwrap();
    assert!(
        t.delete_attrs(&["tags", "author"]).is_err(),
        "one absent: none deleted"
    );
    let want = vec![
        ("tags".to_string(), tags),
        ("count".to_string(), Value::Int(43)),
        ("ratio".to_string(), Value::Float(0.5)),
    ];
    assert_eq!(t.table().attrs().unwrap(), want);
    drop(t);
    let t = Table::open(&path).unwrap();
    assert_eq!(t.attrs().unwrap(), want);
    assert_eq!(t.attr("count").unwrap(), Some(Value::Int(43)));
    assert_eq!(Model::read(&t), model);
    leave_for_python(
        &path,
        "mutable_attrs.b2d",
        "mutable.b2d",
        &json!([
            {"op": "attrs", "set": {"author": "Alice", "tags": ["alpha", "beta"], "count": 42}},
            {"op": "attrs", "set": {"count": 43, "ratio": 0.5}},
            {"op": "attrs", "delete": ["author"]},
        ]),
    );
}

#[test]
fn zipped_tables_change_as_python_rewrites_them() {
    use b2nd::NewColumn;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.b2z");
    let ids: Vec<i64> = (0..50).collect();
    let score: Vec<f64> = ids.iter().map(|&i| i as f64 / 4.0).collect();
    let valid: Vec<bool> = ids.iter().map(|&i| i % 6 != 0).collect();
    b2nd::TableBuilder::new()
        .column("id", &ids)
        .unwrap()
        .nullable_column("score", &score, &valid)
        .unwrap()
        .write(&path)
        .unwrap();
    if let Some(out) = out_dir() {
        std::fs::copy(&path, out.join("zip_before.b2z")).unwrap();
    }
    let names = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let mut t = TableMut::open(&path).unwrap();
    assert_eq!(t.path(), path);
    // One writer: a second is kept out while the first is open.
    assert!(matches!(
        TableMut::open(&path),
        Err(b2nd::Error::Locked { .. })
    ));
    let mut want_id = ids.clone();
    let mut want_score: Vec<Option<f64>> = score
        .iter()
        .zip(&valid)
        .map(|(&v, &ok)| ok.then_some(v))
        .collect();
    let check = |id: &[i64], score: &[Option<f64>]| {
        // Every change is in the zip when it returns: a reader of the zip sees it.
        let r = Table::open(&path).unwrap();
        assert_eq!(r.read_column::<i64>("id").unwrap(), id);
        assert_eq!(r.read_column_opt::<f64>("score").unwrap(), score);
    };
    let rows = Rows::new()
        .column("id", &[100i64, 101])
        .unwrap()
        .column_opt("score", &[None, Some(9.5f64)])
        .unwrap();
    t.append(&rows).unwrap();
    want_id.extend([100, 101]);
    want_score.extend([None, Some(9.5)]);
    check(&want_id, &want_score);
    t.delete(&[0, 10, 51]).unwrap();
    for i in [51, 10, 0] {
        want_id.remove(i);
        want_score.remove(i);
    }
    check(&want_id, &want_score);
    t.update(
        &[1],
        &Rows::new().column_opt("score", &[Some(-1.0f64)]).unwrap(),
    )
    .unwrap();
    want_score[1] = Some(-1.0);
    check(&want_id, &want_score);
    t.compact().unwrap();
    check(&want_id, &want_score);
    t.add_column("level", &NewColumn::of::<i32>().default(Value::Int(3)))
        .unwrap();
    t.set_attrs(&[("note", Value::Str("zipped".into()))])
        .unwrap();
    t.rename_column("level", "lvl").unwrap();
    check(&want_id, &want_score);
    let r = Table::open(&path).unwrap();
    assert_eq!(r.read_column::<i32>("lvl").unwrap(), vec![3; want_id.len()]);
    assert_eq!(r.attr("note").unwrap(), Some(Value::Str("zipped".into())));
    // A refused change leaves the zip as it was.
    let before = std::fs::read(&path).unwrap();
    assert!(t.rename_column("lvl", "id").is_err());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    drop(t);
    assert_eq!(names(), ["t.b2z"], "only the zip is left");
    // A staging directory and a zip a killed change left are removed by the next open.
    std::fs::create_dir(tmp.path().join(".t.b2z.b2nd-dead.tmp")).unwrap();
    std::fs::write(tmp.path().join(".t.b2z.b2nd-zip.tmp"), b"partial").unwrap();
    drop(TableMut::open(&path).unwrap());
    assert_eq!(names(), ["t.b2z"]);
    if let Some(out) = out_dir() {
        std::fs::copy(&path, out.join("zipped.b2z")).unwrap();
        std::fs::write(
            out.join("zipped.b2z.ops.json"),
            serde_json::to_string_pretty(&json!({"fixture": "zip_before.b2z", "ops": [
                {"op": "append", "columns": {"id": [100, 101], "score": [null, 9.5]}},
                {"op": "delete", "rows": [0, 10, 51]},
                {"op": "update", "rows": [1], "columns": {"score": [-1.0]}},
                {"op": "compact"},
                {"op": "add_column", "name": "level", "kind": "int32", "default": 3},
                {"op": "attrs", "set": {"note": "zipped"}},
                {"op": "rename", "old": "level", "new": "lvl"},
            ]}))
            .unwrap(),
        )
        .unwrap();
    }
}

#[test]
fn utf8_columns_take_rows_at_the_tables_next_row() {
    // utf8.b2d: python deleted rows 1 and 5 (the last): its utf8 arrays still hold row 5's
    // strings past `_valid_rows`, where python's own extend would append (one row off).
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    copy_tree(&dir().join("utf8.b2d"), &path);
    let texts = |t: &Table| -> Vec<Vec<Option<String>>> {
        ["txt", "tag", "note"]
            .iter()
            .map(|c| t.read_strings(c).unwrap())
            .collect()
    };
    let s = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|x| x.map(str::to_string)).collect()
    };
    let mut t = TableMut::open(&path).unwrap();
    assert_eq!(t.table().read_column::<i64>("id").unwrap(), [0, 2, 3, 4]);
    let mut want = vec![
        s(&[Some("a"), Some("ccc"), Some("dé"), None]),
        s(&[Some("x"), None, Some("x"), Some("z")]),
        s(&[Some("n0"), Some("n2"), Some("n3"), Some("n4")]),
    ];
    assert_eq!(texts(t.table()), want);

    // `note` left out takes its default "", a null `tag` its sentinel.
    let rows = Rows::new()
        .column("id", &[10i64, 11, 12])
        .unwrap()
        .strings("txt", &[Some("x"), None, Some("héllo wörld")])
        .unwrap()
        .strings("tag", &[None, Some("t"), Some("")])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 3);
    want[0].extend(s(&[Some("x"), None, Some("héllo wörld")]));
    want[1].extend(s(&[None, Some("t"), Some("")]));
    want[2].extend(s(&[Some(""), Some(""), Some("")]));
    let check = |t: &Table, ids: &[i64], want: &[Vec<Option<String>>]| {
        assert_eq!(t.read_column::<i64>("id").unwrap(), ids);
        assert_eq!(texts(t), want);
    };
    check(t.table(), &[0, 2, 3, 4, 10, 11, 12], &want);
    check(
        &Table::open(&path).unwrap(),
        &[0, 2, 3, 4, 10, 11, 12],
        &want,
    );
    // The arrays end at the new rows: 8 physical rows; txt's bytes "a" "ccc" "dé" then
    // "x" "" "héllo wörld" (the deleted last row's "ffffff" cut off).
    let a = |f: &str| b2nd::Array::open(path.join("_cols").join(f)).unwrap();
    for c in ["txt", "tag", "note"] {
        assert_eq!(a(&format!("{c}.b2nd")).shape(), [9], "{c}");
    }
    assert_eq!(
        a("txt.b2nd").read::<i64>().unwrap(),
        [0, 1, 1, 4, 7, 7, 8, 8, 21]
    );
    assert_eq!(
        a("txt.utf8.b2nd").read::<u8>().unwrap(),
        "acccdéxhéllo wörld".as_bytes()
    );
    assert_eq!(
        a("txt.notnull.b2nd").read::<bool>().unwrap(),
        [true, false, true, true, false, true, false, true]
    );

    // b2nd's own delete of the last row cuts its strings off (python's next extend appends
    // after a utf8 column's last string), then another append at its place.
    assert_eq!(t.delete(&[6]).unwrap(), 1);
    assert_eq!(
        a("txt.b2nd").read::<i64>().unwrap(),
        [0, 1, 1, 4, 7, 7, 8, 8]
    );
    assert_eq!(
        a("txt.utf8.b2nd").read::<u8>().unwrap(),
        "acccdéx".as_bytes()
    );
    let rows = Rows::new()
        .column("id", &[13i64])
        .unwrap()
        .strings("txt", &[Some("last")])
        .unwrap()
        .strings("tag", &[Some("q")])
        .unwrap()
        .strings("note", &[Some("ñ")])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 1);
    for (w, v) in want.iter_mut().zip(["last", "q", "ñ"]) {
        w.pop();
        w.push(Some(v.to_string()));
    }
    check(
        &Table::open(&path).unwrap(),
        &[0, 2, 3, 4, 10, 11, 13],
        &want,
    );
    drop(t);
    leave_for_python(
        &path,
        "utf8_append.b2d",
        "utf8.b2d",
        &json!([
            {"op": "append", "columns": {"id": [10, 11, 12], "txt": ["x", null, "héllo wörld"],
                                         "tag": [null, "t", ""]}},
            {"op": "delete", "rows": [6]},
            {"op": "append", "columns": {"id": [13], "txt": ["last"], "tag": ["q"], "note": ["ñ"]}},
        ]),
    );
}

#[test]
fn utf8_values_that_do_not_fit_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    copy_tree(&dir().join("utf8.b2d"), &path);
    let before = snapshot(&path);
    let mut t = TableMut::open(&path).unwrap();
    let refused = |t: &mut TableMut, rows: Rows, says: &str| {
        let e = t.append(&rows).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    };
    let id = || Rows::new().column("id", &[1i64]).unwrap();
    refused(
        &mut t,
        id().strings("note", &[None]).unwrap(),
        "row 0 is null and the column is not nullable",
    );
    refused(
        &mut t,
        id().column("txt", &[1i32]).unwrap(),
        "values of dtype <i4 given for a utf8 column",
    );
    let e = t
        .update(&[0], &Rows::new().strings("note", &[None]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("row 0 is null and the column is not nullable"),
        "{e}"
    );
    drop(t);
    assert!(snapshot(&path) == before, "a refused change changed a file");
}

#[test]
fn utf8_columns_take_rows_after_every_row_is_deleted() {
    // Deleting every row keeps the table's capacity (python's close trims nothing then) and
    // cuts the utf8 strings to none; an append then trims the capacity, as python's close
    // does, and a table stopped before that trim (capacity past the utf8 strings) reads the
    // same.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    copy_tree(&dir().join("utf8.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    assert_eq!(t.delete(&[0, 1, 2, 3]).unwrap(), 4);
    let a = |f: &str| b2nd::Array::open(path.join("_cols").join(f)).unwrap();
    assert_eq!(a("txt.b2nd").read::<i64>().unwrap(), [0]);
    let rows = Rows::new()
        .column("id", &[20i64, 21])
        .unwrap()
        .strings("txt", &[None, Some("b")])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    drop(t);
    let valid = path.join("_valid_rows.b2nd");
    assert_eq!(b2nd::Array::open(&valid).unwrap().shape(), [2]);
    let s = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|x| x.map(str::to_string)).collect()
    };
    let check = || {
        let t = Table::open(&path).unwrap();
        assert_eq!(t.read_column::<i64>("id").unwrap(), [20, 21]);
        assert_eq!(t.read_strings("txt").unwrap(), s(&[None, Some("b")]));
        assert_eq!(t.read_strings("tag").unwrap(), s(&[None, None]));
        assert_eq!(t.read_strings("note").unwrap(), s(&[Some(""), Some("")]));
    };
    check();
    let copy = tmp.path().join("trimmed.b2d");
    copy_tree(&path, &copy);
    // The capacity back, as the arrays stood before the trim (written anew: members of a
    // table change only through TableMut).
    let rewrite = |f: &str, write: &dyn Fn(b2nd::Target)| {
        std::fs::remove_file(path.join(f)).unwrap();
        write(b2nd::Target::File(path.join(f)));
    };
    rewrite("_valid_rows.b2nd", &|to| {
        b2nd::ArrayBuilder::for_type::<bool>(&[5])
            .write(to, &[true, true, false, false, false])
            .unwrap()
    });
    rewrite("_cols/id.b2nd", &|to| {
        b2nd::ArrayBuilder::for_type::<i64>(&[5])
            .write(to, &[20i64, 21, 0, 0, 0])
            .unwrap()
    });
    rewrite("_cols/txt.notnull.b2nd", &|to| {
        b2nd::ArrayBuilder::for_type::<bool>(&[5])
            .write(to, &[false, true, true, true, true])
            .unwrap()
    });
    assert_eq!(b2nd::Array::open(&valid).unwrap().shape(), [5]);
    check();
    std::fs::remove_dir_all(&path).unwrap();
    std::fs::rename(&copy, &path).unwrap();
    leave_for_python(
        &path,
        "utf8_emptied.b2d",
        "utf8.b2d",
        &json!([
            {"op": "delete", "rows": [0, 1, 2, 3]},
            {"op": "append", "columns": {"id": [20, 21], "txt": [null, "b"]}},
        ]),
    );
}

#[test]
fn utf8_values_are_updated_as_python_assigns_them() {
    // Longer, shorter, null and emptied strings in live rows among deleted ones (utf8.b2d:
    // rows 1 and 5 deleted, the last one's strings still stored past the table's end).
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    copy_tree(&dir().join("utf8.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let values = Rows::new()
        .strings("txt", &[None, Some("a much longer string"), Some("")])
        .unwrap()
        .strings("tag", &[Some("ü"), None, Some("w")])
        .unwrap();
    assert_eq!(t.update(&[3, 1, 0], &values).unwrap(), 3);
    drop(t);
    let t = Table::open(&path).unwrap();
    let s = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|x| x.map(str::to_string)).collect()
    };
    assert_eq!(t.read_column::<i64>("id").unwrap(), [0, 2, 3, 4]);
    assert_eq!(
        t.read_strings("txt").unwrap(),
        s(&[Some(""), Some("a much longer string"), Some("dé"), None])
    );
    assert_eq!(
        t.read_strings("tag").unwrap(),
        s(&[Some("w"), None, Some("x"), Some("ü")])
    );
    assert_eq!(
        t.read_strings("note").unwrap(),
        s(&[Some("n0"), Some("n2"), Some("n3"), Some("n4")])
    );
    // Every row kept, the deleted ones' strings too: "" "" "a much longer string" "dé" ""
    // then the deleted last row's "ffffff".
    let a = |f: &str| b2nd::Array::open(path.join("_cols").join(f)).unwrap();
    assert_eq!(
        a("txt.b2nd").read::<i64>().unwrap(),
        [0, 0, 0, 20, 23, 23, 29]
    );
    assert_eq!(
        a("txt.utf8.b2nd").read::<u8>().unwrap(),
        "a much longer stringdéffffff".as_bytes()
    );
    leave_for_python(
        &path,
        "utf8_update.b2d",
        "utf8.b2d",
        &json!([{"op": "update", "rows": [3, 1, 0],
                 "columns": {"txt": [null, "a much longer string", ""],
                             "tag": ["ü", null, "w"]}}]),
    );
}

#[test]
fn utf8_columns_are_compacted_as_python_compacts_them() {
    // utf8.b2d: rows 1 and 5 deleted; compact keeps the live rows' strings only, in order,
    // and gathers the mask with them.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    copy_tree(&dir().join("utf8.b2d"), &path);
    let before: Vec<Vec<Option<String>>> = {
        let t = Table::open(&path).unwrap();
        ["txt", "tag", "note"]
            .iter()
            .map(|c| t.read_strings(c).unwrap())
            .collect()
    };
    let mut t = TableMut::open(&path).unwrap();
    // One gap among the 5 rows `_valid_rows` keeps (python's close trimmed the last).
    assert_eq!(t.compact().unwrap(), 1);
    drop(t);
    let t = Table::open(&path).unwrap();
    assert_eq!(t.read_column::<i64>("id").unwrap(), [0, 2, 3, 4]);
    for (c, want) in ["txt", "tag", "note"].iter().zip(&before) {
        assert_eq!(&t.read_strings(c).unwrap(), want, "{c}");
    }
    let a = |f: &str| b2nd::Array::open(path.join("_cols").join(f)).unwrap();
    assert_eq!(a("txt.b2nd").read::<i64>().unwrap(), [0, 1, 4, 7, 7]);
    assert_eq!(
        a("txt.utf8.b2nd").read::<u8>().unwrap(),
        "acccdé".as_bytes()
    );
    assert_eq!(
        a("txt.notnull.b2nd").read::<bool>().unwrap(),
        [true, true, true, false]
    );
    assert_eq!(a("note.utf8.b2nd").read::<u8>().unwrap(), b"n0n2n3n4");
    leave_for_python(
        &path,
        "utf8_compact.b2d",
        "utf8.b2d",
        &json!([{"op": "compact"}]),
    );
}

#[test]
fn timestamp_columns_are_added_as_python_adds_them() {
    use b2nd::NewColumn;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let e = NewColumn::timestamp("m").unwrap_err().to_string();
    assert!(e.contains("timestamp unit \"m\""), "{e}");
    let seen = [
        Some(1_700_000_000_000i64),
        None,
        Some(5),
        Some(6),
        Some(7),
        Some(8),
        Some(-9),
    ];
    t.add_column(
        "seen",
        &NewColumn::timestamp("ms").unwrap().values_opt(&seen),
    )
    .unwrap();
    t.add_column(
        "born",
        &NewColumn::timestamp("s").unwrap().default(Value::Int(0)),
    )
    .unwrap();
    // Appends take the new columns as timestamps of their units, or their defaults.
    let rows = Rows::new()
        .column("id", &[500i64])
        .unwrap()
        .column("when", &[3i64])
        .unwrap()
        .timestamps("seen", "ms", &[None])
        .unwrap()
        .column_opt("sent", &[None::<i16>])
        .unwrap();
    t.append(&rows).unwrap();
    drop(t);
    let t = Table::open(&path).unwrap();
    let c = t.column("seen").unwrap();
    assert_eq!(*c.kind(), b2nd::ColumnKind::Timestamp);
    let mut want = seen.to_vec();
    want.push(None);
    assert_eq!(t.read_column_opt::<i64>("seen").unwrap(), want);
    assert_eq!(t.read_column::<i64>("born").unwrap(), vec![0; 8]);
    // As python-blosc2 stores them: the deleted row 1 zero, nulls its fill (int64 minimum).
    assert_eq!(
        b2nd::Array::open(path.join("_cols/seen.b2nd"))
            .unwrap()
            .read::<i64>()
            .unwrap(),
        [1_700_000_000_000, 0, i64::MIN, 5, 6, 7, 8, -9, i64::MIN]
    );
    leave_for_python(
        &path,
        "mutable_timestamps.b2d",
        "mutable.b2d",
        &json!([
            {"op": "add_column", "name": "seen", "kind": "timestamp", "unit": "ms",
             "nullable": true, "values": [1_700_000_000_000i64, null, 5, 6, 7, 8, -9]},
            {"op": "add_column", "name": "born", "kind": "timestamp", "unit": "s", "default": 0},
            {"op": "append", "columns": {"id": [500], "when": [3], "seen": [null], "sent": [null]}},
        ]),
    );
}

#[test]
fn utf8_columns_are_added_as_python_adds_them() {
    use b2nd::NewColumn;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("mutable.b2d");
    copy_tree(&dir().join("mutable.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let s = |v: &[Option<&str>]| -> Vec<Option<String>> {
        v.iter().map(|x| x.map(str::to_string)).collect()
    };
    let u = [
        Some("a"),
        None,
        Some("ccc"),
        Some(""),
        Some("dé"),
        Some("f"),
        Some("g"),
    ];
    let before = snapshot(&path);
    for (c, want) in [
        (
            NewColumn::utf8().strings(&u[..2]),
            "2 values given for 7 live rows",
        ),
        (
            NewColumn::utf8().values(&[1i32; 7]),
            "values of dtype <i4 given for a utf8 column",
        ),
        (
            NewColumn::utf8().default(Value::Int(1)),
            "the default Int(1) is not a string",
        ),
        (NewColumn::utf8(), "give values or declare a default"),
    ] {
        let e = t.add_column("x", &c).unwrap_err().to_string();
        assert!(e.contains(want), "{want:?} not in {e:?}");
        assert!(snapshot(&path) == before, "{want}: a file changed");
    }
    t.add_column("u", &NewColumn::utf8().strings(&u)).unwrap();
    t.add_column("w", &NewColumn::utf8().default(Value::Str("zz".into())))
        .unwrap();
    // Appends and updates take the new columns.
    let rows = Rows::new()
        .column("id", &[600i64])
        .unwrap()
        .column("when", &[4i64])
        .unwrap()
        .column_opt("sent", &[None::<i16>])
        .unwrap()
        .strings("u", &[Some("new")])
        .unwrap();
    t.append(&rows).unwrap();
    t.update(&[1], &Rows::new().strings("w", &[Some("yy")]).unwrap())
        .unwrap();
    drop(t);
    let t = Table::open(&path).unwrap();
    let mut want_u = s(&u);
    want_u.push(Some("new".into()));
    assert_eq!(t.read_strings("u").unwrap(), want_u);
    let mut want_w = vec![Some("zz".to_string()); 8];
    want_w[1] = Some("yy".into());
    assert_eq!(t.read_strings("w").unwrap(), want_w);
    // python's layout: the deleted row 1 holds the default (or ""), the null "" with the
    // mask; offsets and bytes chunked as python's UTF8Array.
    let a = |f: &str| b2nd::Array::open(path.join("_cols").join(f)).unwrap();
    assert_eq!(
        a("u.b2nd").read::<i64>().unwrap(),
        [0, 1, 1, 1, 4, 4, 7, 8, 9, 12]
    );
    assert_eq!(a("u.b2nd").chunks(), [131_072]);
    assert_eq!(a("u.utf8.b2nd").chunks(), [2_097_152]);
    assert_eq!(
        a("w.utf8.b2nd").read::<u8>().unwrap(),
        b"zzzzyyzzzzzzzzzzzz"
    );
    leave_for_python(
        &path,
        "mutable_utf8_added.b2d",
        "mutable.b2d",
        &json!([
            {"op": "add_column", "name": "u", "kind": "utf8", "nullable": true,
             "values": ["a", null, "ccc", "", "dé", "f", "g"]},
            {"op": "add_column", "name": "w", "kind": "utf8", "default": "zz"},
            {"op": "append", "columns": {"id": [600], "when": [4], "sent": [null], "u": ["new"]}},
            {"op": "update", "rows": [1], "columns": {"w": ["yy"]}},
        ]),
    );
}

#[test]
fn generated_columns_are_filled_on_append_as_python_fills_them() {
    // generated.b2d: `twice` = id * 2 + small (int64), `half` = sqrt(abs(x)) / 2 + small
    // (float32), python-blosc2's add_generated_column; row 1 deleted.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("generated.b2d");
    copy_tree(&dir().join("generated.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let before = snapshot(&path);
    // A dependency left out: python-blosc2 refuses, so does b2nd (the declared default of
    // `small` is not used to compute it).
    let e = t
        .append(&Rows::new().column("id", &[7i64]).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("dependencies [\"small\"] are not given"), "{e}");
    assert!(snapshot(&path) == before, "a refused append changed a file");

    let rows = Rows::new()
        .column("id", &[10i64, 11, -3])
        .unwrap()
        .column("small", &[1u8, 255, 0])
        .unwrap()
        .column("x", &[0.25f32, -4.0, 9.0])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 3);
    // Values given for a generated column are stored as given, as python stores them.
    let given = Rows::new()
        .column("id", &[12i64])
        .unwrap()
        .column("small", &[2u8])
        .unwrap()
        .column("x", &[1.0f32])
        .unwrap()
        .column("twice", &[-1i64])
        .unwrap();
    t.append(&given).unwrap();
    drop(t);
    let t = Table::open(&path).unwrap();
    assert_eq!(
        t.read_column::<i64>("twice").unwrap(),
        [0, 10, 15, 20, 21, 277, -6, -1]
    );
    let half: Vec<f32> = t.read_column("half").unwrap();
    assert_eq!(&half[4..7], [1.25, 256.0, 1.5]);
    leave_for_python(
        &path,
        "generated_append.b2d",
        "generated.b2d",
        &json!([
            {"op": "append", "columns": {"id": [10, 11, -3], "small": [1, 255, 0],
                                         "x": [0.25, -4.0, 9.0]}},
            {"op": "append", "columns": {"id": [12], "small": [2], "x": [1.0], "twice": [-1]}},
        ]),
    );
}

/// The values of dictionary column `name` of the table at `path`, in code order.
fn dictionary_values(path: &Path, name: &str) -> Vec<Value> {
    b2nd::SChunk::open(path.join(format!("_cols/{name}_dict.b2b")))
        .unwrap()
        .read_objects()
        .unwrap()
}

/// The codes of dictionary column `name` of the table at `path`, every physical row.
fn dictionary_codes(path: &Path, name: &str) -> Vec<i32> {
    b2nd::Array::open(path.join(format!("_cols/{name}.b2nd")))
        .unwrap()
        .read()
        .unwrap()
}

fn strs(v: &[Option<&str>]) -> Vec<Value> {
    v.iter()
        .map(|s| s.map_or(Value::Nil, |s| Value::Str(s.into())))
        .collect()
}

#[test]
fn dictionary_columns_take_rows_as_python_encodes_them() {
    // dictionary.b2d: `cat` (nullable: red, blue, green) and `tag` (default "a"), python
    // deleted rows 1 and 5 (the last). New values get the next codes, in first-seen order,
    // appended to the values store as one batch; known ones and nulls (-1) take no value.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("dictionary.b2d");
    copy_tree(&dir().join("dictionary.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let rows = Rows::new()
        .column("id", &[10i64, 11, 12, 13])
        .unwrap()
        .strings("cat", &[Some("blue"), Some("violet"), None, Some("violet")])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 4);
    assert_eq!(
        dictionary_codes(&path, "cat"),
        [0, -1, 1, 0, 2, 1, 3, -1, 3]
    );
    assert_eq!(
        dictionary_values(&path, "cat"),
        strs(&[Some("red"), Some("blue"), Some("green"), Some("violet")])
    );
    // `tag` took its default, a value it holds: no new value.
    assert_eq!(dictionary_values(&path, "tag").len(), 3);
    let read = |t: &Table, c: &str| t.read_values(c).unwrap();
    let now = Table::open(&path).unwrap();
    assert_eq!(
        read(&now, "cat"),
        strs(&[
            Some("red"),
            Some("blue"),
            Some("red"),
            Some("green"),
            Some("blue"),
            Some("violet"),
            None,
            Some("violet")
        ])
    );
    assert_eq!(
        read(&now, "tag"),
        strs(&[
            Some("a"),
            Some("a"),
            Some("c"),
            Some("b"),
            Some("a"),
            Some("a"),
            Some("a"),
            Some("a")
        ])
    );
    // An update with values old and new: the new ones appended, as python's assignment and
    // close append them.
    let values = Rows::new()
        .strings("cat", &[Some("green"), Some("black")])
        .unwrap()
        .strings("tag", &[Some("zz"), Some("b")])
        .unwrap();
    assert_eq!(t.update(&[7, 0], &values).unwrap(), 2);
    let now = Table::open(&path).unwrap();
    assert_eq!(read(&now, "cat")[0], Value::Str("black".into()));
    assert_eq!(read(&now, "cat")[7], Value::Str("green".into()));
    assert_eq!(read(&now, "tag")[7], Value::Str("zz".into()));
    assert_eq!(dictionary_values(&path, "cat").len(), 5);
    assert_eq!(
        dictionary_values(&path, "tag"),
        strs(&[Some("a"), Some("b"), Some("c"), Some("zz")])
    );
    assert_eq!(t.delete(&[2]).unwrap(), 1);
    // Many new values in one batch: blocks of the store's items_per_block (3), each
    // compressed with the store's codec (ZSTD), which python decodes.
    let many: Vec<String> = (0..300)
        .map(|i| format!("value-{i:05}-").repeat(4))
        .collect();
    let many_refs: Vec<Option<&str>> = many.iter().map(|s| Some(s.as_str())).collect();
    let ids: Vec<i64> = (100..400).collect();
    let rows = Rows::new()
        .column("id", &ids)
        .unwrap()
        .strings("cat", &many_refs)
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 300);
    let store = b2nd::SChunk::open(path.join("_cols/cat_dict.b2b")).unwrap();
    assert_eq!(store.nchunks(), Some(4));
    let raw: u64 = 300 * 3 + many.iter().map(|s| s.len() as u64).sum::<u64>();
    assert!(store.cbytes() < raw / 2, "{} of {raw}", store.cbytes());
    assert_eq!(
        Table::open(&path).unwrap().read_values("cat").unwrap()[7..],
        strs(&many_refs)[..]
    );
    drop(t);
    // The store now holds batches of different sizes (its header's chunk size 0): an
    // attribute edit of it keeps every batch.
    let copy = tmp.path().join("copy.b2b");
    std::fs::copy(path.join("_cols/cat_dict.b2b"), &copy).unwrap();
    let before = b2nd::SChunk::open(&copy).unwrap().read_objects().unwrap();
    assert_eq!(before.len(), 305);
    b2nd::write::set_attrs(&copy, &[("note", Value::Str("x".into()))]).unwrap();
    assert_eq!(
        b2nd::SChunk::open(&copy).unwrap().read_objects().unwrap(),
        before
    );
    leave_for_python(
        &path,
        "dictionary_append.b2d",
        "dictionary.b2d",
        &json!([
            {"op": "append", "columns": {"id": [10, 11, 12, 13],
                                         "cat": ["blue", "violet", null, "violet"]}},
            {"op": "update", "rows": [7, 0], "columns": {"cat": ["green", "black"],
                                                          "tag": ["zz", "b"]}},
            {"op": "delete", "rows": [2]},
            {"op": "append", "columns": {"id": ids, "cat": many}},
        ]),
    );
}

#[test]
fn dictionary_columns_of_a_table_without_rows_take_their_first_values() {
    // dictionary_empty.b2d: no row was ever written, so the values stores hold no batch and
    // no items_per_block; the first batch sets it as python's first batch does.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("dictionary_empty.b2d");
    copy_tree(&dir().join("dictionary_empty.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let rows = Rows::new()
        .column("id", &[1i64, 2, 3])
        .unwrap()
        .strings("cat", &[Some("x"), Some("ÿ"), Some("x")])
        .unwrap()
        .strings("tag", &[Some("q"), Some("q"), Some("r")])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 3);
    let s = b2nd::SChunk::open(path.join("_cols/cat_dict.b2b")).unwrap();
    let Some(Value::Map(layout)) = s.metalayer_value("batcharray").unwrap() else {
        panic!("no layout")
    };
    assert!(layout.contains(&(Value::Str("items_per_block".into()), Value::Int(2))));
    assert_eq!(
        s.attr("_batch_array_metadata").unwrap(),
        Some(Value::Map(vec![(
            Value::Str("batch_lengths".into()),
            Value::Array(vec![Value::Int(2)])
        )]))
    );
    assert_eq!(
        dictionary_values(&path, "cat"),
        strs(&[Some("x"), Some("ÿ")])
    );
    let more = Rows::new()
        .column("id", &[4i64])
        .unwrap()
        .strings("cat", &[Some("new")])
        .unwrap();
    assert_eq!(t.append(&more).unwrap(), 1);
    assert_eq!(
        dictionary_values(&path, "cat"),
        strs(&[Some("x"), Some("ÿ"), Some("new")])
    );
    assert_eq!(
        Table::open(&path).unwrap().read_values("tag").unwrap(),
        strs(&[Some("q"), Some("q"), Some("r"), Some("a")])
    );
    drop(t);
    leave_for_python(
        &path,
        "dictionary_first.b2d",
        "dictionary_empty.b2d",
        &json!([
            {"op": "append", "columns": {"id": [1, 2, 3], "cat": ["x", "ÿ", "x"],
                                         "tag": ["q", "q", "r"]}},
            {"op": "append", "columns": {"id": [4], "cat": ["new"]}},
        ]),
    );
}

#[test]
fn dictionary_values_that_do_not_fit_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("dictionary.b2d");
    copy_tree(&dir().join("dictionary.b2d"), &path);
    let before = snapshot(&path);
    let mut t = TableMut::open(&path).unwrap();
    let refused = |t: &mut TableMut, rows: Rows| t.append(&rows).unwrap_err().to_string();
    let e = refused(
        &mut t,
        Rows::new()
            .column("id", &[1i64])
            .unwrap()
            .strings("tag", &[None])
            .unwrap(),
    );
    assert!(
        e.contains("\"tag\": row 0 is null and the column is not nullable"),
        "{e}"
    );
    let e = refused(
        &mut t,
        Rows::new()
            .column("id", &[1i64])
            .unwrap()
            .column("cat", &[3i32])
            .unwrap(),
    );
    assert!(
        e.contains("values of dtype <i4 given for a dictionary column"),
        "{e}"
    );
    drop(t);
    assert_eq!(snapshot(&path), before);
}

fn list(v: &[i64]) -> Value {
    Value::Array(v.iter().map(|&x| Value::Int(x)).collect())
}

fn point(x: i64, y: &str) -> Value {
    Value::Map(vec![
        (Value::Str("x".into()), Value::Int(x)),
        (Value::Str("y".into()), Value::Str(y.into())),
    ])
}

#[test]
fn columns_of_one_item_per_row_take_rows_at_the_tables_next_row() {
    // varlen.b2d: list, vlstring, vlbytes and struct columns; python deleted rows 1 and 5
    // (the last), whose items it keeps past the live rows. b2nd cuts them and appends at the
    // table's next row; updates rewrite the items from the first row changed.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("varlen.b2d");
    copy_tree(&dir().join("varlen.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let rows = Rows::new()
        .column("id", &[10i64, 11])
        .unwrap()
        .values("items", &[list(&[8, -9]), Value::Nil])
        .unwrap()
        .strings("vs", &[Some("ñ"), None])
        .unwrap()
        .values("vb", &[Value::Bytes(vec![1, 2]), Value::Bytes(vec![])])
        .unwrap()
        .values("st", &[point(10, "ten"), Value::Nil])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    let read = |c: &str| Table::open(&path).unwrap().read_values(c).unwrap();
    assert_eq!(
        read("items"),
        [
            list(&[1, 2]),
            list(&[]),
            list(&[3]),
            list(&[4, 5, 6]),
            list(&[8, -9]),
            Value::Nil
        ]
    );
    assert_eq!(read("st")[4], point(10, "ten"));
    assert_eq!(read("vb")[4], Value::Bytes(vec![1, 2]));
    let stored = b2nd::SChunk::open(path.join("_cols/items.b2b"))
        .unwrap()
        .read_objects()
        .unwrap();
    assert_eq!(stored.len(), 7, "the dead item cut, two appended");
    // Left out: the declared default (a null list, b"" for vlbytes).
    let rows = Rows::new().column("id", &[12i64]).unwrap();
    assert_eq!(t.append(&rows).unwrap(), 1);
    assert_eq!(read("vb")[6], Value::Bytes(vec![]));
    assert_eq!(read("items")[6], Value::Nil);
    // Updates.
    let values = Rows::new()
        .values("items", &[list(&[42]), list(&[])])
        .unwrap()
        .values("st", &[point(-1, "z"), point(2, "yy")])
        .unwrap();
    assert_eq!(t.update(&[5, 1], &values).unwrap(), 2);
    assert_eq!(read("items")[1], list(&[]));
    assert_eq!(read("items")[5], list(&[42]));
    assert_eq!(read("st")[1], point(2, "yy"));
    // A delete of the last rows cuts their items.
    assert_eq!(t.delete(&[5, 6]).unwrap(), 2);
    let stored = b2nd::SChunk::open(path.join("_cols/items.b2b"))
        .unwrap()
        .read_objects()
        .unwrap();
    assert_eq!(stored.len(), 6, "physical rows 6 and 7 deleted and cut");
    drop(t);
    leave_for_python(
        &path,
        "varlen_append.b2d",
        "varlen.b2d",
        &json!([
            {"op": "append", "columns": {"id": [10, 11], "items": [[8, -9], null],
                                         "vs": ["ñ", null],
                                         "vb": [{"__bytes__": [1, 2]}, {"__bytes__": []}],
                                         "st": [{"x": 10, "y": "ten"}, null]}},
            {"op": "append", "columns": {"id": [12]}},
            {"op": "update", "rows": [5, 1], "columns": {"items": [[42], []],
                                                          "st": [{"x": -1, "y": "z"}, {"x": 2, "y": "yy"}]}},
            {"op": "delete", "rows": [5, 6]},
        ]),
    );
}

#[test]
fn items_that_do_not_fit_their_column_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("varlen.b2d");
    copy_tree(&dir().join("varlen.b2d"), &path);
    let before = snapshot(&path);
    let mut t = TableMut::open(&path).unwrap();
    let refused = |t: &mut TableMut, c: &str, v: Value| {
        let rows = Rows::new()
            .column("id", &[1i64])
            .unwrap()
            .values(c, &[v])
            .unwrap();
        t.append(&rows).unwrap_err().to_string()
    };
    for (c, v, want) in [
        (
            "items",
            list(&[1 << 40]),
            "1099511627776 is out of the range of int32",
        ),
        ("items", Value::Str("ab".into()), "is not a list"),
        (
            "vb",
            Value::Nil,
            "row 0 is null and the column is not nullable",
        ),
        ("vb", Value::Str("ab".into()), "is not bytes"),
        ("st", point(1, "toolong"), "exceeds max_length=4"),
        (
            "st",
            Value::Map(vec![(Value::Str("x".into()), Value::Int(1))]),
            "missing field \"y\"",
        ),
    ] {
        let e = refused(&mut t, c, v);
        assert!(e.contains(want), "{c}: {e}");
    }
    drop(t);
    assert_eq!(snapshot(&path), before);
}

/// Arrow batches DataFusion hands over: an untyped NULL column, a dictionary array without
/// values (every key a null).
#[cfg(feature = "arrow")]
#[test]
fn arrow_nulls_and_empty_dictionaries_are_nulls() {
    use arrow_array::{
        Array, ArrayRef, DictionaryArray, Int32Array, Int64Array, NullArray, RecordBatch,
        StringArray,
    };
    use std::sync::Arc;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("dictionary.b2d");
    copy_tree(&dir().join("dictionary.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    let empty: DictionaryArray<arrow_array::types::Int32Type> = DictionaryArray::new(
        Int32Array::from(vec![None, None]),
        Arc::new(StringArray::from(Vec::<&str>::new())),
    );
    assert_eq!(empty.null_count(), 2);
    let batch = |tag: ArrayRef| {
        RecordBatch::try_from_iter([
            ("id", Arc::new(Int64Array::from(vec![7, 8])) as ArrayRef),
            ("cat", Arc::new(empty.clone()) as ArrayRef),
            ("tag", tag),
        ])
        .unwrap()
    };
    let nulls = Rows::from_record_batch(&batch(Arc::new(NullArray::new(2)))).unwrap();
    let e = t.append(&nulls).unwrap_err().to_string();
    assert!(
        e.contains("\"tag\": row 0 is null and the column is not nullable"),
        "{e}"
    );
    let tags = Arc::new(StringArray::from(vec!["a", "new"]));
    assert_eq!(
        t.append(&Rows::from_record_batch(&batch(tags)).unwrap())
            .unwrap(),
        2
    );
    let now = Table::open(&path).unwrap();
    assert_eq!(
        now.read_values("cat").unwrap()[4..],
        [Value::Nil, Value::Nil]
    );
    assert_eq!(
        now.read_values("tag").unwrap()[4..],
        strs(&[Some("a"), Some("new")])
    );
}

#[test]
fn columns_of_one_item_per_row_are_compacted_to_their_live_items() {
    // varlen.b2d: rows 1 and 5 deleted (5, the last, keeps its items past the live rows);
    // another deleted here. python-blosc2 4.14.1's own compact leaves these columns as they
    // were (meaning-audit.md): python's replay compacts them as b2nd does.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("varlen.b2d");
    copy_tree(&dir().join("varlen.b2d"), &path);
    let mut t = TableMut::open(&path).unwrap();
    assert_eq!(t.delete(&[1]).unwrap(), 1);
    let read = |c: &str| Table::open(&path).unwrap().read_values(c).unwrap();
    let before: Vec<Vec<Value>> = ["items", "vs", "vb", "st"]
        .iter()
        .map(|c| read(c))
        .collect();
    assert_eq!(t.compact().unwrap(), 2);
    let after: Vec<Vec<Value>> = ["items", "vs", "vb", "st"]
        .iter()
        .map(|c| read(c))
        .collect();
    assert_eq!(after, before);
    assert_eq!(read("items"), [list(&[1, 2]), list(&[3]), list(&[4, 5, 6])]);
    let stored = b2nd::SChunk::open(path.join("_cols/items.b2b"))
        .unwrap()
        .read_objects()
        .unwrap();
    assert_eq!(stored.len(), 3, "the live items only");
    drop(t);
    leave_for_python(
        &path,
        "varlen_compact.b2d",
        "varlen.b2d",
        &json!([{"op": "delete", "rows": [1]}, {"op": "compact"}]),
    );
}

#[cfg(feature = "arrow")]
fn floats(v: &[Option<f64>]) -> Value {
    Value::Array(
        v.iter()
            .map(|x| x.map_or(Value::Nil, Value::Float))
            .collect(),
    )
}

/// arrow_lists.b2d: list columns python-blosc2 serialized as Arrow IPC streams (`li`
/// list<int32>, `ls` list<string>, `lf` list<double>, `lst` list<struct<x, y>>); row 2 deleted.
#[cfg(feature = "arrow")]
#[test]
fn arrow_serialized_list_columns_take_rows_updates_and_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("arrow_lists.b2d");
    copy_tree(&dir().join("arrow_lists.b2d"), &path);
    let before = snapshot(&path);
    let mut t = TableMut::open(&path).unwrap();
    // An item the column's Arrow type cannot hold changes nothing.
    let rows = Rows::new()
        .column("id", &[9i64])
        .unwrap()
        .values("li", &[list(&[1 << 40])])
        .unwrap();
    let e = t.append(&rows).unwrap_err().to_string();
    assert!(e.contains("out of the range of int32"), "{e}");
    assert_eq!(snapshot(&path), before);
    let rows = Rows::new()
        .column("id", &[6i64, 7])
        .unwrap()
        .values("li", &[list(&[9, -1]), Value::Nil])
        .unwrap()
        .values(
            "ls",
            &[
                Value::Array(vec![Value::Str("x".into())]),
                Value::Array(vec![]),
            ],
        )
        .unwrap()
        .values("lf", &[floats(&[Some(2.5), None]), Value::Nil])
        .unwrap()
        .values("lst", &[Value::Array(vec![point(5, "s")]), Value::Nil])
        .unwrap();
    assert_eq!(t.append(&rows).unwrap(), 2);
    let read = |c: &str| Table::open(&path).unwrap().read_values(c).unwrap();
    let li = |v: &[Option<i64>]| {
        Value::Array(v.iter().map(|x| x.map_or(Value::Nil, Value::Int)).collect())
    };
    assert_eq!(
        read("li"),
        [
            li(&[Some(1), Some(2)]),
            Value::Nil,
            li(&[Some(3), None]),
            li(&[Some(7)]),
            li(&[Some(9), Some(-1)]),
            Value::Nil
        ]
    );
    assert_eq!(read("lf")[4], floats(&[Some(2.5), None]));
    assert_eq!(read("lst")[4], Value::Array(vec![point(5, "s")]));
    // The new blocks are IPC streams of the column's own schema: Arrow reads them as it
    // reads python's (a block of another schema is an error python-blosc2 raises too).
    let values = Rows::new()
        .values("li", &[li(&[Some(42)])])
        .unwrap()
        .values("lst", &[Value::Array(vec![point(-1, "z"), point(2, "yy")])])
        .unwrap();
    assert_eq!(t.update(&[0], &values).unwrap(), 1);
    assert_eq!(read("li")[0], li(&[Some(42)]));
    assert_eq!(read("li")[4], li(&[Some(9), Some(-1)]));
    assert_eq!(t.delete(&[5]).unwrap(), 1);
    assert_eq!(read("li").len(), 5);
    drop(t);
    leave_for_python(
        &path,
        "arrow_lists_append.b2d",
        "arrow_lists.b2d",
        &json!([
            {"op": "append", "columns": {"id": [6, 7], "li": [[9, -1], null], "ls": [["x"], []],
                                         "lf": [[2.5, null], null],
                                         "lst": [[{"x": 5, "y": "s"}], null]}},
            {"op": "update", "rows": [0], "columns": {"li": [[42]],
                                                       "lst": [[{"x": -1, "y": "z"}, {"x": 2, "y": "yy"}]]}},
            {"op": "delete", "rows": [5]},
        ]),
    );
    // Compacted: the live items rewritten as Arrow blocks.
    let path2 = tmp.path().join("compact.b2d");
    copy_tree(&dir().join("arrow_lists.b2d"), &path2);
    let mut t = TableMut::open(&path2).unwrap();
    assert_eq!(t.delete(&[0]).unwrap(), 1);
    let read = |c: &str| Table::open(&path2).unwrap().read_values(c).unwrap();
    let cols = ["li", "ls", "lf", "lst"];
    let before: Vec<Vec<Value>> = cols.iter().map(|c| read(c)).collect();
    assert_eq!(t.compact().unwrap(), 2);
    let after: Vec<Vec<Value>> = cols.iter().map(|c| read(c)).collect();
    assert_eq!(after, before);
    assert_eq!(
        read("li"),
        [Value::Nil, li(&[Some(3), None]), li(&[Some(7)])]
    );
    drop(t);
    leave_for_python(
        &path2,
        "arrow_lists_compact.b2d",
        "arrow_lists.b2d",
        &json!([{"op": "delete", "rows": [0]}, {"op": "compact"}]),
    );
}
