//! CTables written by python-blosc2 4.14.1 (scripts/gen_table_fixtures.py): row counts, the
//! schema's columns, every readable column's live rows equal to `t[name].to_numpy()`, nulls
//! equal to `is_null()`, utf8 values equal; the column kinds this version does not decode
//! refused by name.

use std::path::{Path, PathBuf};

use b2nd::Table;
use serde_json::Value as J;

mod common;
use common::{to_hex as hex, to_json};

/// The committed fixtures, or those `B2ND_TABLE_FIXTURES` names (CI regenerates them live).
fn dir() -> PathBuf {
    match std::env::var_os("B2ND_TABLE_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tables"),
    }
}

#[test]
fn tables_read_as_python_reads_them() {
    for name in ["basic.b2z", "basic.b2d", "nested.b2z"] {
        let basic = name.starts_with("basic");
        let want: J = serde_json::from_str(
            &std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let t = Table::open(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(t.n_rows(), want["n_rows"].as_u64().unwrap(), "{name}");
        assert!(
            !basic || t.physical_rows() > t.n_rows(),
            "{name}: the fixture deletes rows"
        );
        let cols: Vec<(String, String)> = t
            .columns()
            .iter()
            .map(|c| (c.name().to_string(), c.kind().to_string()))
            .collect();
        let want_cols: Vec<(String, String)> = want["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["kind"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(cols, want_cols, "{name}");
        let mut checked = 0;
        for c in t.columns() {
            let w = &want["values"][c.name()];
            let ctx = format!("{name} {}", c.name());
            if c.kind() == "utf8" {
                let got = t.read_utf8(c.name()).unwrap();
                let strings: Vec<Option<String>> =
                    serde_json::from_value(w["strings"].clone()).unwrap();
                assert_eq!(got, strings, "{ctx}");
                checked += 1;
            } else if c.is_fixed_width() {
                let (dtype, shape, bytes) = t.read_column_bytes(c.name()).unwrap();
                assert_eq!(dtype.to_numpy_str(), w["dtype"].as_str().unwrap(), "{ctx}");
                assert_eq!(serde_json::json!(shape), w["shape"], "{ctx}");
                assert_eq!(hex(&bytes), w["hex"].as_str().unwrap(), "{ctx}");
                checked += 1;
            } else {
                let e = t.read_column_bytes(c.name()).unwrap_err().to_string();
                // Variable-length kinds: read with read_values only; their nulls (a nil
                // item, a dictionary code of -1) read as python's `is_null()`.
                assert!(e.contains("read_values"), "{ctx}: {e}");
            }
            if w["nulls"].is_null() {
                continue; // python's `is_null()` fails on an `object` column
            }
            let nulls: Vec<bool> = serde_json::from_value(w["nulls"].clone()).unwrap();
            let valid = t.read_validity(c.name()).unwrap();
            let got: Vec<bool> = match valid {
                Some(v) => v.iter().map(|x| !x).collect(),
                None => vec![false; t.n_rows() as usize],
            };
            assert_eq!(got, nulls, "{ctx}: nulls");
        }
        assert_eq!(
            checked,
            if basic { 10 } else { 4 },
            "{name}: fixed-width and utf8 columns"
        );
        // Every column's rows as values: python-blosc2's `t[name][:]`, nulls as Nil.
        for c in t.columns() {
            let w = &want["values"][c.name()];
            let Some(rows) = w.get("rows") else { continue };
            let nulls: Vec<bool> = serde_json::from_value(w["nulls"].clone()).unwrap_or_default();
            let got = t.read_values(c.name()).unwrap();
            let rows = rows.as_array().unwrap();
            assert_eq!(got.len(), rows.len(), "{name} {}", c.name());
            for (i, (g, r)) in got.iter().zip(rows).enumerate() {
                let ctx = format!("{name} {} row {i}", c.name());
                if nulls.get(i) == Some(&true) {
                    assert!(g.is_nil(), "{ctx}: {g:?}");
                } else {
                    assert_eq!(to_json(g), *r, "{ctx}");
                }
            }
        }
        if !basic {
            // Nested fields live at `_cols/trip/lat`; escaped names at `_cols/50%25%2Fx`.
            assert_eq!(
                t.read_column::<f64>("trip.lon").unwrap(),
                [1.5, 0.0, 3.5, 5.5]
            );
            assert_eq!(
                t.read_column::<f32>("50%\\/x").unwrap(),
                [1.0, 2.0, 3.0, 4.0]
            );
            continue;
        }
        let ids: Vec<i64> = t.read_column("id").unwrap();
        assert_eq!(ids, [0, 2, 3, 4, 6, 7], "{name}");
        // Slices of live rows (python's t["id"][1:4]).
        assert_eq!(t.read_rows::<i64>("id", 1..4).unwrap(), [2, 3, 4]);
        assert_eq!(t.read_rows::<i64>("id", 5..6).unwrap(), [7]);
        assert!(t.read_rows::<i64>("id", 3..3).unwrap().is_empty());
        assert!(t.read_rows::<i64>("id", 2..9).is_err());
        let (_, shape, bytes) = t.read_rows_bytes("vec", 1..3).unwrap();
        assert_eq!((shape, bytes), (vec![2, 2], vec![2, 253, 3, 252]));
    }
}

#[test]
fn a_table_inside_a_tree_store() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stores/tree_objects.b2z");
    let t = b2nd::Store::open(&path)
        .unwrap()
        .open_table("/tables/t1")
        .unwrap();
    assert_eq!(t.n_rows(), 2);
    assert_eq!(t.read_column::<i64>("x").unwrap(), [1, 3]);
    assert_eq!(t.read_column::<f64>("y").unwrap(), [2.5, 4.5]);
    let e = t.read_column::<f64>("x").unwrap_err();
    assert!(matches!(e, b2nd::Error::TypeMismatch { .. }), "{e}");
    assert!(t.read_column::<i64>("nope").is_err());
    // The store's root is not a table.
    let e = Table::open(&path).unwrap_err().to_string();
    assert!(e.contains("not a table"), "{e}");
}

#[test]
fn hostile_tables_are_refused_by_name() {
    use b2nd::{ArrayBuilder, TableBuilder};
    let tmp = tempfile::tempdir().unwrap();
    let make = |name: &str| {
        let p = tmp.path().join(name);
        TableBuilder::new()
            .column("id", &[1i64, 2, 3])
            .unwrap()
            .column("flag", &[true, false, true])
            .unwrap()
            .utf8_column("text", &[Some("a"), Some("bc"), None])
            .unwrap()
            .write(&p)
            .unwrap();
        p
    };
    // A column the schema names but no array holds.
    let p = make("missing.b2d");
    std::fs::remove_file(p.join("_cols/flag.b2nd")).unwrap();
    let e = Table::open(&p).unwrap_err().to_string();
    assert!(e.contains("_cols/flag"), "{e}");
    // A column shorter than the table.
    let p = make("short.b2d");
    let frame = ArrayBuilder::for_type::<i64>(&[2])
        .to_vec(&[1i64, 2])
        .unwrap();
    std::fs::write(p.join("_cols/id.b2nd"), frame).unwrap();
    let e = Table::open(&p).unwrap_err().to_string();
    assert!(e.contains("\"id\"") && e.contains("fewer rows"), "{e}");
    // utf8 offsets pointing past the bytes.
    let p = make("offsets.b2d");
    let frame = ArrayBuilder::for_type::<i64>(&[4])
        .to_vec(&[0i64, 1, 99, 99])
        .unwrap();
    std::fs::write(p.join("_cols/text.b2nd"), frame).unwrap();
    let e = Table::open(&p)
        .unwrap()
        .read_utf8("text")
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"text\"") && e.contains("outside"), "{e}");
    // A validity array of the wrong type.
    let p = make("valid.b2d");
    let frame = ArrayBuilder::for_type::<u8>(&[3])
        .to_vec(&[1u8, 1, 1])
        .unwrap();
    std::fs::write(p.join("_valid_rows.b2nd"), frame).unwrap();
    let e = Table::open(&p).unwrap_err().to_string();
    assert!(e.contains("_valid_rows"), "{e}");
    // A scalar column stored with two values per row (only `ndarray` columns have a sub-array
    // per row): python-blosc2's table with `opt` (mask nulls) and `sent` (sentinel nulls)
    // swapped for 2-D arrays by the fixture script.
    let e = Table::open(dir().join("crafted_scalar_2d.b2z"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"opt\"") && e.contains("1 dimension"), "{e}");
    let p = make("twod.b2d");
    let frame = ArrayBuilder::for_type::<i64>(&[3, 2])
        .to_vec(&[1i64, 2, 3, 4, 5, 6])
        .unwrap();
    std::fs::write(p.join("_cols/id.b2nd"), frame).unwrap();
    let e = Table::open(&p).unwrap_err().to_string();
    assert!(e.contains("\"id\"") && e.contains("1 dimension"), "{e}");
    // Not a table at all, and a schema that is not JSON.
    let e =
        Table::open(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/stores/dict_ext.b2z"))
            .unwrap_err()
            .to_string();
    assert!(e.contains("not a table"), "{e}");
}

#[cfg(feature = "arrow")]
#[test]
fn tables_as_arrow_record_batches() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Int32Type, Int64Type};
    use arrow_array::Array;
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(dir().join("basic.b2z.json")).unwrap())
            .unwrap();
    let t = Table::open(dir().join("basic.b2z")).unwrap();
    let names: Vec<&str> = t.columns().iter().map(|c| c.name()).collect();
    let batch = t.to_record_batch().unwrap();
    // `vec`, an ndarray column of (2,) u1 items: a FixedSizeList(2) of UInt8.
    let vec = batch.column_by_name("vec").unwrap().as_fixed_size_list();
    let row = vec.value(1);
    let items = row.as_primitive::<arrow_array::types::UInt8Type>();
    assert_eq!(items.values().to_vec(), [2, 253]);
    assert_eq!(batch.num_rows() as u64, t.n_rows());
    for (i, name) in names.iter().enumerate() {
        let col = batch.column(i);
        let got: Vec<bool> = (0..col.len()).map(|r| col.is_null(r)).collect();
        if let Some(nulls) = want["values"][*name].get("nulls") {
            let nulls: Vec<bool> = serde_json::from_value(nulls.clone()).unwrap();
            assert_eq!(got, nulls, "{name}: nulls");
        }
        let Some(rows) = want["values"][*name].get("rows") else {
            continue;
        };
        let rows = rows.as_array().unwrap();
        for (r, w) in rows.iter().enumerate() {
            if col.is_null(r) {
                continue;
            }
            let got: J = match col.data_type() {
                arrow_schema::DataType::Int64 => col.as_primitive::<Int64Type>().value(r).into(),
                arrow_schema::DataType::Utf8 => col.as_string::<i32>().value(r).into(),
                arrow_schema::DataType::Utf8View => col.as_string_view().value(r).into(),
                arrow_schema::DataType::Boolean => col.as_boolean().value(r).into(),
                arrow_schema::DataType::Dictionary(..) => {
                    let d = col.as_dictionary::<Int32Type>();
                    let k = d.keys().value(r) as usize;
                    d.values().as_string::<i32>().value(k).into()
                }
                arrow_schema::DataType::List(_) => {
                    let l = col.as_list::<i32>().value(r);
                    let v: Vec<i64> = l.as_primitive::<Int64Type>().values().to_vec();
                    serde_json::json!(v)
                }
                _ => continue, // floats and narrow ints: checked through read_values above
            };
            assert_eq!(&got, w, "{name} row {r}");
        }
    }
}

/// Any range of live rows of any column, as Arrow, is the same rows of the whole column:
/// nulls (mask and sentinel), deleted rows and every kind the fixtures hold.
#[cfg(feature = "arrow")]
#[test]
fn row_ranges_as_arrow_are_slices_of_the_whole_column() {
    for file in ["basic.b2z", "basic.b2d", "nested.b2z"] {
        let t = Table::open(dir().join(file)).unwrap();
        let n = t.n_rows();
        for c in t.columns() {
            let Ok(whole) = t.column_to_arrow(c.name()) else {
                continue; // a kind with no Arrow form: refused the same way below
            };
            let mut checked = 0;
            for a in 0..=n {
                for b in a..=n {
                    let part = t.rows_to_arrow(c.name(), a..b).unwrap();
                    let want = whole.slice(a as usize, (b - a) as usize);
                    assert_eq!(
                        part.to_data(),
                        want.to_data(),
                        "{file} {} {a}..{b}",
                        c.name()
                    );
                    checked += 1;
                }
            }
            assert!(checked > 0);
            assert!(t.rows_to_arrow(c.name(), 0..n + 1).is_err());
        }
    }
}

/// python-blosc2's SUMMARY indexes read as python holds them (records, flags, geometry); a
/// stale one is not used; every live value lies within its segment's bounds.
#[test]
fn python_summary_indexes_read_as_python_holds_them() {
    use b2nd::Bound;
    for (name, stale) in [("summaries.b2z", false), ("summaries_stale.b2z", true)] {
        let want: J = serde_json::from_str(
            &std::fs::read_to_string(dir().join(format!("{name}.summary.json"))).unwrap(),
        )
        .unwrap();
        let t = Table::open(dir().join(name)).unwrap();
        assert_eq!(t.physical_rows(), want["physical_rows"].as_u64().unwrap());
        for (col, w) in want["columns"].as_object().unwrap() {
            let got = t.block_summary(col).unwrap();
            if stale {
                assert!(w["stale"].as_bool().unwrap());
                assert_eq!(got, None, "{name} {col}: a stale index is not used");
                continue;
            }
            let s = got.unwrap_or_else(|| panic!("{name} {col}: no summary"));
            assert_eq!(s.segment_rows, w["segment_len"].as_u64().unwrap());
            let flags: Vec<u8> = serde_json::from_value(w["flags"].clone()).unwrap();
            assert_eq!(
                s.segments.iter().map(|g| g.flags).collect::<Vec<_>>(),
                flags
            );
            for (k, g) in s.segments.iter().enumerate() {
                for (b, v) in [(g.min, &w["min"][k]), (g.max, &w["max"][k])] {
                    match b {
                        Bound::Int(i) => assert_eq!(i.to_string(), v.to_string(), "{col} {k}"),
                        Bound::Float(f) => assert_eq!(f, v.as_f64().unwrap(), "{col} {k}"),
                    }
                }
            }
            // Soundness: live values (not null, not NaN) of each segment within its bounds.
            let ranges: Vec<(u64, u64)> = (0..s.segments.len() as u64)
                .map(|k| {
                    let p = k * s.segment_rows;
                    (
                        t.live_rows_before(p),
                        t.live_rows_before(p + s.segment_rows),
                    )
                })
                .collect();
            assert_eq!(ranges.last().unwrap().1, t.n_rows());
            let vals: Vec<f64> = match col.as_str() {
                "u" => t
                    .read_column::<u64>(col)
                    .unwrap()
                    .iter()
                    .map(|&v| v as f64)
                    .collect(),
                "s" => t
                    .read_column::<i16>(col)
                    .unwrap()
                    .iter()
                    .map(|&v| v.into())
                    .collect(),
                "f" => t
                    .read_column::<f32>(col)
                    .unwrap()
                    .iter()
                    .map(|&v| v.into())
                    .collect(),
                "id" => t
                    .read_column::<i64>(col)
                    .unwrap()
                    .iter()
                    .map(|&v| v as f64)
                    .collect(),
                _ => t.read_column::<f64>(col).unwrap(),
            };
            let valid = t.read_validity(col).unwrap();
            let f = |b: Bound| match b {
                Bound::Int(i) => i as f64,
                Bound::Float(f) => f,
            };
            for (k, &(a, b)) in ranges.iter().enumerate() {
                let g = s.segments[k];
                for i in a as usize..b as usize {
                    let null =
                        valid.as_ref().is_some_and(|v| !v[i]) || (col == "s" && vals[i] == -1.0);
                    if null || vals[i].is_nan() {
                        continue;
                    }
                    assert!(!g.all_null(), "{col}: a value in all-null segment {k}");
                    assert!(
                        f(g.min) <= vals[i] && vals[i] <= f(g.max),
                        "{col} row {i} segment {k}"
                    );
                }
            }
        }
    }
    let t = Table::open(dir().join("basic.b2z")).unwrap();
    assert_eq!(
        t.block_summary("name").unwrap(),
        None,
        "no summary of strings"
    );
    assert!(t.block_summary("nope").is_err());
}

/// Computed columns: listed after the stored ones as python-blosc2 lists them, each read by
/// evaluating its expression equal to python's `t[name][:]` byte for byte (float16, int
/// wrap-around, floor division, `where`, `contains`, mask-null operands, deleted rows); the
/// DSL kernel column listed and every read of it refused by name.
#[test]
fn computed_columns_read_as_python_evaluates_them() {
    let name = "computed.b2z";
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap())
            .unwrap();
    let t = Table::open(dir().join(name)).unwrap();
    assert_eq!(t.n_rows(), want["n_rows"].as_u64().unwrap());
    let names: Vec<&str> = t.columns().iter().map(|c| c.name()).collect();
    let want_names: Vec<&str> = want["col_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names, want_names);
    let mut evaluated = 0;
    for (col, w) in want["computed"].as_object().unwrap() {
        let c = t.column(col).unwrap();
        let cc = c.computed().unwrap_or_else(|| panic!("{col} is computed"));
        assert_eq!(cc.readable(), w["readable"].as_str().unwrap(), "{col}");
        if w["kind"] == "dsl" {
            assert!(cc.evaluable().is_err());
            for e in [
                t.read_column_bytes(col).unwrap_err(),
                t.read_values(col).unwrap_err(),
            ] {
                let e = e.to_string();
                assert!(e.contains(col) && e.contains("DSL kernel"), "{col}: {e}");
            }
            continue;
        }
        let (dtype, shape, bytes) = t.read_column_bytes(col).unwrap();
        assert_eq!(dtype.to_numpy_str(), w["dtype"].as_str().unwrap(), "{col}");
        assert_eq!(shape, [t.n_rows()], "{col}");
        assert_eq!(hex(&bytes), w["hex"].as_str().unwrap(), "{col}");
        // Part of the rows: the same values as the whole column's.
        let isz = dtype.itemsize();
        let (_, _, part) = t.read_rows_bytes(col, 3..11).unwrap();
        assert_eq!(part, bytes[3 * isz..11 * isz], "{col} rows 3..11");
        assert_eq!(t.column_dtype(col).unwrap().0, dtype, "{col}");
        assert_eq!(t.read_validity(col).unwrap(), None, "{col}");
        evaluated += 1;
    }
    assert_eq!(evaluated, 12);
    let total: Vec<f64> = t.read_column("total").unwrap();
    assert_eq!(total.len() as u64, t.n_rows());
    assert_eq!(t.column("total").unwrap().kind(), "float64");
    // A computed column has no array of its own, and says so.
    let e = t.column_array("total").unwrap_err().to_string();
    assert!(
        e.contains("computed column") && e.contains("(a * 2 + b)"),
        "{e}"
    );
}

/// List columns python-blosc2 serialized with Arrow (IPC-stream blocks, and the older bare
/// record-batch blocks with the schema in the metalayer) read as python reads them: every
/// row of every list column equal to `t[name][:]`; without the `arrow` feature, refused by
/// name with the feature to turn on.
#[test]
fn arrow_serialized_list_columns() {
    for name in ["arrow_lists.b2z", "arrow_lists_bare.b2z"] {
        let want: J = serde_json::from_str(
            &std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let t = Table::open(dir().join(name)).unwrap();
        assert_eq!(t.n_rows(), want["n_rows"].as_u64().unwrap());
        for (col, rows) in want["rows"].as_object().unwrap() {
            let got = t.read_values(col);
            #[cfg(feature = "arrow")]
            {
                let got: Vec<J> = got.unwrap().iter().map(to_json).collect();
                assert_eq!(&J::Array(got), rows, "{name} {col}");
            }
            #[cfg(not(feature = "arrow"))]
            {
                let _ = rows;
                let e = got.unwrap_err().to_string();
                assert!(
                    e.contains("arrow") && e.contains("feature"),
                    "{name} {col}: {e}"
                );
            }
        }
        // As Arrow: the list (and list of struct) types python-blosc2 stored, live rows
        // only, each row's nullness and length python's.
        #[cfg(feature = "arrow")]
        {
            use arrow_array::Array as _;
            let cols = ["li", "ls", "lf", "lst"];
            let batch = t.to_record_batch_of(&cols).unwrap();
            assert_eq!(batch.num_rows(), 4);
            use arrow_schema::DataType as D;
            let items = [D::Int32, D::Utf8, D::Float64];
            for (k, col) in cols.iter().enumerate() {
                let a = batch.column(k);
                let want_type = want["arrow_types"][col].as_str().unwrap();
                let D::List(item) = a.data_type() else {
                    panic!(
                        "{name} {col}: {:?}, python stored {want_type}",
                        a.data_type()
                    );
                };
                match items.get(k) {
                    Some(t) => assert_eq!(item.data_type(), t, "{name} {col}: {want_type}"),
                    None => assert!(
                        matches!(item.data_type(), D::Struct(f) if f.len() == 2),
                        "{name} {col}: {item:?}, python stored {want_type}"
                    ),
                }
                let list = a.as_any().downcast_ref::<arrow_array::ListArray>().unwrap();
                for (i, r) in want["rows"][col].as_array().unwrap().iter().enumerate() {
                    assert_eq!(list.is_null(i), r.is_null(), "{name} {col} row {i}");
                    if let Some(items) = r.as_array() {
                        assert_eq!(list.value(i).len(), items.len(), "{name} {col} row {i}");
                    }
                }
            }
            let li = batch
                .column(0)
                .as_any()
                .downcast_ref::<arrow_array::ListArray>()
                .unwrap();
            let items = li.value(2);
            let items = items
                .as_any()
                .downcast_ref::<arrow_array::Int32Array>()
                .expect("int32 items, as stored");
            assert_eq!((items.value(0), items.is_null(1)), (3, true));
        }
    }
}

/// Column kinds no other fixture holds (`kinds.b2z`): vlstring, vlbytes, object rows,
/// a struct stored whole, complex64 and complex128 read as python reads them.
#[test]
fn every_other_column_kind_reads_as_python_reads_it() {
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(dir().join("kinds.b2z.json")).unwrap())
            .unwrap();
    let t = Table::open(dir().join("kinds.b2z")).unwrap();
    assert_eq!(t.n_rows(), want["n_rows"].as_u64().unwrap());
    let kinds: Vec<(&str, &str)> = t
        .columns()
        .iter()
        .map(|c| (c.name(), c.kind().as_str()))
        .collect();
    let want_kinds: Vec<(&str, &str)> = want["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, want_kinds);
    let mut checked = 0;
    for c in t.columns() {
        let w = &want["values"][c.name()];
        if let Some(rows) = w.get("rows") {
            let got: Vec<J> = t
                .read_values(c.name())
                .unwrap()
                .iter()
                .map(to_json)
                .collect();
            assert_eq!(&J::Array(got), rows, "{}", c.name());
            checked += 1;
        }
        if let Some(rows) = w.get("rows_hex") {
            let got: Vec<J> = t
                .read_values(c.name())
                .unwrap()
                .iter()
                .map(|v| match v {
                    b2nd::Value::Bytes(b) => J::String(hex(b)),
                    other => panic!("{}: {other:?}", c.name()),
                })
                .collect();
            assert_eq!(&J::Array(got), rows, "{}", c.name());
            checked += 1;
        }
        if let (Some(h), true) = (w.get("hex"), c.is_fixed_width()) {
            let (dtype, _, bytes) = t.read_column_bytes(c.name()).unwrap();
            assert_eq!(
                dtype.to_numpy_str(),
                w["dtype"].as_str().unwrap(),
                "{}",
                c.name()
            );
            assert_eq!(hex(&bytes), h.as_str().unwrap(), "{}", c.name());
            checked += 1;
        }
        // Nulls as python's `is_null()` gives them (a nil item; none for `object`, whose
        // `is_null()` python-blosc2 4.14.1 cannot answer).
        if let Some(nulls) = w.get("nulls").filter(|n| !n.is_null()) {
            let nulls: Vec<bool> = serde_json::from_value(nulls.clone()).unwrap();
            let got: Vec<bool> = match t.read_validity(c.name()).unwrap() {
                Some(v) => v.iter().map(|x| !x).collect(),
                None => vec![false; t.n_rows() as usize],
            };
            assert_eq!(got, nulls, "{}: nulls", c.name());
            checked += 1;
        }
    }
    // id (rows and bytes), vs, vb (rows), ob, st, c8, c16; nulls of all but ob.
    assert_eq!(checked, 14);
    // The struct stored whole as Arrow: its schema's field types, python's nulls.
    #[cfg(feature = "arrow")]
    {
        use arrow_array::Array as _;
        let b = t.to_record_batch_of(&["st"]).unwrap();
        let st = b
            .column(0)
            .as_any()
            .downcast_ref::<arrow_array::StructArray>()
            .unwrap();
        assert_eq!(st.null_count(), 1);
        assert!(st.is_null(2));
        let x = st.column_by_name("x").unwrap();
        let x = x
            .as_any()
            .downcast_ref::<arrow_array::Int64Array>()
            .unwrap();
        assert_eq!((x.value(1), x.value(4)), (10, 50));
        let y = st.column_by_name("y").unwrap();
        let y = y
            .as_any()
            .downcast_ref::<arrow_array::StringArray>()
            .unwrap();
        assert_eq!(y.value(3), "y3");
    }
}

/// Null-aware typed reads and one string read for every text kind, as python gives them.
#[test]
fn null_aware_and_string_reads() {
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(dir().join("basic.b2z.json")).unwrap())
            .unwrap();
    let t = Table::open(dir().join("basic.b2z")).unwrap();
    let opt: Vec<Option<i64>> = t
        .read_column_opt::<i32>("opt")
        .unwrap()
        .into_iter()
        .map(|v| v.map(i64::from))
        .collect();
    let want_opt: Vec<Option<i64>> =
        serde_json::from_value(want["values"]["opt"]["rows"].clone()).unwrap();
    assert_eq!(opt, want_opt);
    for col in ["name", "tag", "txt"] {
        let w = &want["values"][col];
        let rows = w.get("rows").or_else(|| w.get("strings")).unwrap();
        let want_s: Vec<Option<String>> = serde_json::from_value(rows.clone()).unwrap();
        assert_eq!(t.read_strings(col).unwrap(), want_s, "{col}");
    }
    let e = t.read_strings("opt").unwrap_err().to_string();
    assert!(e.contains("not a text column"), "{e}");
}

/// String columns as Arrow: batches of a few distinct strings (taken from their views) and
/// of many (converted row by row) read the same strings, over any row range.
#[cfg(feature = "arrow")]
#[test]
fn string_batches_of_few_and_many_distinct_values_read_alike() {
    use arrow_array::cast::AsArray;
    let tmp = tempfile::tempdir().unwrap();
    let n = 2000usize;
    // Items of 4, 12 and 24 bytes (compared 8 bytes at a time, and the rest).
    for (width, distinct) in [1, 3, 6]
        .into_iter()
        .flat_map(|w| [1usize, 5, 32, 33, 1000].map(|d| (w, d)))
    {
        let want: Vec<String> = (0..n)
            .map(|i| match i % distinct {
                k if k % 3 == 0 => format!("é{k}"),
                k => format!("{k}v"),
            })
            .map(|s| s.chars().take(width).collect())
            .collect();
        let mut bytes = Vec::new();
        for s in &want {
            let mut units: Vec<u32> = s.chars().map(u32::from).collect();
            units.resize(width, 0);
            bytes.extend(units.iter().flat_map(|u| u.to_le_bytes()));
        }
        let path = tmp.path().join(format!("s{width}_{distinct}.b2d"));
        let dtype = b2nd::Dtype::parse(&format!("<U{width}")).unwrap();
        b2nd::TableBuilder::new()
            .column_bytes("s", dtype, &bytes)
            .unwrap()
            .write(&path)
            .unwrap();
        let t = Table::open(&path).unwrap();
        for (a, b) in [(0, n), (0, 1), (7, 40), (1000, n), (n, n)] {
            let got = t.rows_to_arrow("s", a as u64..b as u64).unwrap();
            let got: Vec<&str> = got.as_string_view().iter().map(Option::unwrap).collect();
            assert_eq!(
                got,
                want[a..b],
                "U{width}, {distinct} distinct, rows {a}..{b}"
            );
        }
    }
}

/// A string column whose rows are Latin-1 in some blocks and not in others (characters past
/// U+00FF), with deleted rows among them: every range of live rows reads as the strings
/// written, as views and as a dictionary of its few strings, whichever way its blocks read.
#[cfg(feature = "arrow")]
#[test]
fn string_rows_beyond_latin1_and_around_deleted_rows_read_as_written() {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    let tmp = tempfile::tempdir().unwrap();
    let n = 60000usize;
    let names = ["alpha", "b\u{e9}ta", "", "g\0m", "delta"];
    let mut want: Vec<String> = (0..n).map(|i| names[i * 7 % 5].to_string()).collect();
    for (i, s) in [(1500, "\u{20ac}5"), (59990, "\u{4e2d}")] {
        want[i] = s.to_string();
    }
    let mut bytes = Vec::new();
    for s in &want {
        let mut units: Vec<u32> = s.chars().map(u32::from).collect();
        units.resize(5, 0);
        bytes.extend(units.iter().flat_map(|u| u.to_le_bytes()));
    }
    // NumPy drops trailing NULs only: "g\0m" keeps its inner one.
    let path = tmp.path().join("latin.b2d");
    b2nd::TableBuilder::new()
        .column_bytes("s", b2nd::Dtype::parse("<U5").unwrap(), &bytes)
        .unwrap()
        .write(&path)
        .unwrap();
    // Blocks of fewer rows than the ranges below: some read only Latin-1 blocks, others the
    // blocks of rows 1500 and 59990.
    let col = b2nd::Array::open(path.join("_cols").join("s.b2nd")).unwrap();
    let b = col.blocks()[0];
    assert!(
        1500 / b < 8000 / b && 40000 / b < 59990 / b,
        "blocks of {b} rows"
    );
    let deleted = [10u64, 11, 1499, 30000];
    let mut m = b2nd::TableMut::open(&path).unwrap();
    // Positions among live rows, so each later one is shifted by those before it.
    let live_positions: Vec<u64> = deleted
        .iter()
        .enumerate()
        .map(|(k, &r)| r - k as u64)
        .collect();
    for p in live_positions {
        assert_eq!(m.delete(&[p]).unwrap(), 1);
    }
    drop(m);
    let want: Vec<&str> = want
        .iter()
        .enumerate()
        .filter(|(i, _)| !deleted.contains(&(*i as u64)))
        .map(|(_, s)| s.as_str())
        .collect();
    let t = Table::open(&path).unwrap();
    let live = want.len();
    assert_eq!(t.n_rows() as usize, live);
    let mut checked = 0;
    for (a, b) in [
        (0, live),
        (0, 9),
        (5, 20),
        (1400, 1600),
        (1498, 1499),
        (8000, 8100),
        (20000, 40000),
        (59900, live),
        (live - 1, live),
    ] {
        let views = t.rows_to_arrow("s", a as u64..b as u64).unwrap();
        let got: Vec<&str> = views.as_string_view().iter().map(Option::unwrap).collect();
        assert_eq!(got, want[a..b], "rows {a}..{b} as views");
        match t.string_rows("s", a as u64..b as u64).unwrap() {
            Some(b2nd::StringRows::Dictionary(d)) => {
                let taken = arrow_select::take::take(d.values(), d.keys(), None).unwrap();
                assert_eq!(
                    taken.to_data(),
                    views.to_data(),
                    "rows {a}..{b} as a dictionary"
                );
            }
            Some(b2nd::StringRows::Views(v)) => assert_eq!(v.to_data(), views.to_data()),
            None => panic!("a string column"),
        }
        checked += 1;
    }
    assert_eq!(checked, 9);
}

/// A range of live rows of a `utf8` column as Arrow is those rows' strings and nulls, read
/// from their blocks of offsets and bytes alone: python-blosc2's fixture (nulls in a mask in
/// `txt`, by the sentinel `"NA"` in `tag`, none in `note`; its deleted last row's strings
/// stored past the end) grown by many blocks of rows, some deleted in the middle.
#[cfg(feature = "arrow")]
#[test]
fn utf8_row_ranges_read_only_their_strings_around_deleted_rows() {
    use arrow_array::cast::AsArray;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("utf8.b2d");
    common::copy_tree(&dir().join("utf8.b2d"), &path);
    let cols = ["txt", "tag", "note"];
    let before = Table::open(&path).unwrap();
    let mut want: Vec<Vec<Option<String>>> =
        cols.iter().map(|c| before.read_utf8(c).unwrap()).collect();
    assert!(
        want[0].contains(&None) && want[1].contains(&None),
        "{want:?}"
    );
    let n = 120_000usize;
    let text: Vec<Option<String>> = (0..n)
        .map(|i| {
            let s: String = (0..(i * 7919 % 23))
                .map(|k| ['a', '\u{e9}', 'z', '\u{4e2d}'][(i + k) % 4])
                .collect();
            (i % 11 != 4).then_some(s)
        })
        .collect();
    let refs: Vec<Option<&str>> = text.iter().map(Option::as_deref).collect();
    let ids: Vec<i64> = (0..n as i64).collect();
    let rows = b2nd::Rows::new()
        .column("id", &ids)
        .unwrap()
        .strings("txt", &refs)
        .unwrap()
        .strings("tag", &refs)
        .unwrap()
        .strings(
            "note",
            &refs.iter().map(|s| s.or(Some(""))).collect::<Vec<_>>(),
        )
        .unwrap();
    let mut m = b2nd::TableMut::open(&path).unwrap();
    m.append(&rows).unwrap();
    for w in &mut want[..2] {
        w.extend(text.iter().cloned());
    }
    want[2].extend(text.iter().map(|s| s.clone().or(Some(String::new()))));
    // Deleted in the middle, each a position among the rows live then.
    for p in [3u64, 40_000, 40_000, 40_001, 99_234] {
        assert_eq!(m.delete(&[p]).unwrap(), 1);
        for w in &mut want {
            w.remove(p as usize);
        }
    }
    drop(m);
    let t = Table::open(&path).unwrap();
    let live = want[0].len();
    assert_eq!(t.n_rows() as usize, live);
    let offsets = b2nd::Array::open(path.join("_cols").join("txt.b2nd")).unwrap();
    assert!(
        offsets.blocks()[0] < 30_000,
        "blocks of {:?}",
        offsets.blocks()
    );
    for (c, want) in cols.iter().zip(&want) {
        for (a, b) in [
            (0, live),
            (0, 5),
            (2, 9),
            (39_990, 40_010),
            (16_000, 16_500),
            (60_000, 60_000),
            (90_000, live),
            (live - 1, live),
        ] {
            let got = t.rows_to_arrow(c, a as u64..b as u64).unwrap();
            let got: Vec<Option<String>> = got
                .as_string::<i32>()
                .iter()
                .map(|s| s.map(str::to_string))
                .collect();
            assert_eq!(got, want[a..b], "{c} rows {a}..{b}");
        }
    }
}

/// A bool column as Arrow: each row's value, a null where the row is null, across the 64-row
/// words the values are packed in.
#[cfg(feature = "arrow")]
#[test]
fn bool_columns_as_arrow_keep_values_and_nulls() {
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    let n = 200usize;
    let flags: Vec<bool> = (0..n).map(|i| i % 3 == 0 || i % 7 == 1).collect();
    let valid: Vec<bool> = (0..n).map(|i| i % 5 != 2).collect();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bools.b2z");
    b2nd::TableBuilder::new()
        .column("f", &flags)
        .unwrap()
        .nullable_column("g", &flags, &valid)
        .unwrap()
        .write(&path)
        .unwrap();
    let t = Table::open(&path).unwrap();
    for (name, nulls) in [("f", false), ("g", true)] {
        for rows in [0..n as u64, 3..131, 64..128, 199..200] {
            let a = t.rows_to_arrow(name, rows.clone()).unwrap();
            let a = a.as_boolean();
            assert_eq!(a.len() as u64, rows.end - rows.start, "{name} {rows:?}");
            for (j, r) in rows.clone().enumerate() {
                let r = r as usize;
                let null = nulls && !valid[r];
                assert_eq!(a.is_null(j), null, "{name} row {r}: null");
                if !null {
                    assert_eq!(a.value(j), flags[r], "{name} row {r}");
                }
            }
        }
    }
}
