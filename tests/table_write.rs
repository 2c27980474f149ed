//! Tables written by TableBuilder: read back by b2nd here, and by python-blosc2 in CI
//! (`B2ND_TABLE_OUT=DIR cargo test --test table_write` then
//! `python scripts/check_tables_written.py DIR`).

use b2nd::{Table, TableBuilder};

fn build(n: usize) -> TableBuilder {
    let ids: Vec<i64> = (0..n as i64).collect();
    let scores: Vec<f32> = (0..n).map(|i| i as f32 / 4.0).collect();
    let valid: Vec<bool> = (0..n).map(|i| i % 7 != 3).collect();
    let small: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
    let flags: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
    let names: Vec<String> = (0..n).map(|i| format!("row {i} é")).collect();
    let text: Vec<Option<&str>> = names
        .iter()
        .enumerate()
        .map(|(i, s)| (i % 5 != 0).then_some(s.as_str()))
        .collect();
    let fixed: Vec<u8> = names
        .iter()
        .flat_map(|s| {
            let mut item: Vec<u32> = s.chars().map(|c| c as u32).collect();
            item.resize(12, 0);
            item.into_iter().flat_map(u32::to_le_bytes)
        })
        .collect();
    TableBuilder::new()
        .column("id", &ids)
        .unwrap()
        .nullable_column("score", &scores, &valid)
        .unwrap()
        .column("small", &small)
        .unwrap()
        .column("flag", &flags)
        .unwrap()
        .column_bytes("name", b2nd::Dtype::parse("<U12").unwrap(), &fixed)
        .unwrap()
        .utf8_column("text", &text)
        .unwrap()
        .timestamp_column(
            "when",
            "ms",
            &(0..n as i64)
                .map(|i| 1_700_000_000_000 + i)
                .collect::<Vec<_>>(),
        )
        .unwrap()
        .ndarray_column(
            "xy",
            &[2],
            &(0..2 * n).map(|i| i as f32).collect::<Vec<_>>(),
        )
        .unwrap()
}

#[test]
fn written_tables_read_back() {
    let out = std::env::var_os("B2ND_TABLE_OUT").map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = out.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    // `big.b2d`: enough rows for several blocks per column, so python's where() can prune
    // with the summary indexes.
    for (name, n) in [("t.b2z", 1000), ("t.b2d", 1000), ("big.b2d", 400_000)] {
        let path = dir.join(name);
        build(n).overwrite(true).write(&path).unwrap();
        let t = Table::open(&path).unwrap();
        assert_eq!(t.n_rows(), n as u64);
        assert_eq!(t.read_column::<i64>("id").unwrap()[n - 1], n as i64 - 1);
        let v = t.read_validity("score").unwrap().unwrap();
        assert_eq!(v.iter().filter(|&&x| !x).count(), (n + 3) / 7);
        summaries_as_python_builds_them(&path, n);
        if n != 1000 {
            continue;
        }
        let text = t.read_utf8("text").unwrap();
        assert_eq!(text[0], None);
        assert_eq!(text[1].as_deref(), Some("row 1 é"));
        let names = t.read_values("name").unwrap();
        assert_eq!(names[7].as_str(), Some("row 7 é"));
        assert_eq!(t.read_validity("id").unwrap(), None);
        let (dtype, _, when) = t.read_column_bytes("when").unwrap();
        assert_eq!(dtype.to_numpy_str(), "<M8[ms]");
        assert_eq!(when[..8], 1_700_000_000_000i64.to_le_bytes());
        let (_, shape, _) = t.read_column_bytes("xy").unwrap();
        assert_eq!(shape, [1000, 2]);
    }
}

#[test]
fn table_writes_refuse_bad_columns() {
    assert!(TableBuilder::new()
        .column("a", &[1i32, 2])
        .unwrap()
        .column("b", &[1i32])
        .is_err());
    assert!(TableBuilder::new()
        .column("a", &[1i32])
        .unwrap()
        .column("a", &[2i32])
        .is_err());
    assert!(TableBuilder::new().column("a.b", &[1i32]).is_err());
    assert!(TableBuilder::new()
        .nullable_column("a", &[1i32, 2], &[true])
        .is_err());
    let tmp = tempfile::tempdir().unwrap();
    assert!(TableBuilder::new()
        .write(tmp.path().join("empty.b2z"))
        .is_err());
    assert!(
        std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
        "nothing left behind"
    );
}

/// The SUMMARY indexes python-blosc2 builds by default: numeric and bool columns only, one
/// record (min, max, flags) per block of rows, nulls left out of a nullable column's extrema.
fn summaries_as_python_builds_them(table: &std::path::Path, n: usize) {
    let store = b2nd::Store::open(table).unwrap();
    let mut indexed: Vec<String> = store
        .keys()
        .into_iter()
        .filter_map(|k| k.strip_prefix("/_indexes/").map(str::to_string))
        .filter(|k| k.contains('/')) // groups are keys of a TreeStore too
        .collect();
    indexed.sort();
    assert_eq!(
        indexed,
        [
            "flag/summary.block",
            "id/summary.block",
            "score/summary.block",
            "small/summary.block"
        ],
        "{}",
        table.display()
    );
    let ids = store.open_array("/_cols/id").unwrap();
    let seg = ids.blocks()[0] as usize;
    let s = store.open_array("/_indexes/id/summary.block").unwrap();
    assert_eq!(s.shape(), &[n.div_ceil(seg) as u64]);
    let raw = s.read_bytes().unwrap();
    for (k, r) in raw.chunks_exact(17).enumerate() {
        let lo = i64::from_le_bytes(r[..8].try_into().unwrap());
        let hi = i64::from_le_bytes(r[8..16].try_into().unwrap());
        assert_eq!(
            (lo, hi, r[16]),
            ((k * seg) as i64, (n.min((k + 1) * seg) - 1) as i64, 0)
        );
    }
    // score = i / 4 with nulls where i % 7 == 3: a segment's extrema skip them.
    let seg = store.open_array("/_cols/score").unwrap().blocks()[0] as usize;
    let raw = store
        .open_array("/_indexes/score/summary.block")
        .unwrap()
        .read_bytes()
        .unwrap();
    for (k, r) in raw.chunks_exact(9).enumerate() {
        let rows: Vec<usize> = (k * seg..n.min((k + 1) * seg))
            .filter(|i| i % 7 != 3)
            .collect();
        let lo = f32::from_le_bytes(r[..4].try_into().unwrap());
        let hi = f32::from_le_bytes(r[4..8].try_into().unwrap());
        let want = (rows[0] as f32 / 4.0, *rows.last().unwrap() as f32 / 4.0);
        assert_eq!((lo, hi, r[8]), (want.0, want.1, 0));
    }
}
