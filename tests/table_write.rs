//! Tables written by TableBuilder: read back by b2nd here, and by python-blosc2 in CI
//! (`B2ND_TABLE_OUT=DIR cargo test --test table_write` then
//! `python scripts/check_tables_written.py DIR`).

mod common;

use b2nd::{Table, TableBuilder};
use common::inplace_model::Rng;

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

/// One random column: values of a numeric or bool type in a small range (so that predicates
/// select some rows), NaN runs in floats, and for nullable columns null runs (whole blocks of
/// nulls too).
fn random_column(rng: &mut Rng, b: TableBuilder, name: &str, n: usize) -> TableBuilder {
    macro_rules! col {
        ($t:ty, $gen:expr) => {{
            let v: Vec<$t> = (0..n).map(|_| $gen(rng.below(50))).collect();
            if rng.below(3) == 0 {
                let valid = runs(rng, n);
                b.nullable_column(name, &v, &valid).unwrap()
            } else {
                b.column(name, &v).unwrap()
            }
        }};
    }
    macro_rules! fcol {
        ($t:ty) => {{
            let mut v: Vec<$t> = (0..n).map(|_| rng.below(50) as $t - 10.0).collect();
            let nan = runs(rng, n);
            for (x, keep) in v.iter_mut().zip(&nan) {
                if !keep && rng.below(2) == 0 {
                    *x = <$t>::NAN;
                }
            }
            if rng.below(3) == 0 {
                let valid = runs(rng, n);
                b.nullable_column(name, &v, &valid).unwrap()
            } else {
                b.column(name, &v).unwrap()
            }
        }};
    }
    match rng.below(11) {
        0 => col!(i8, |x: u64| x as i8 - 10),
        1 => col!(i16, |x: u64| x as i16 * 300 - 3000),
        2 => col!(i32, |x: u64| x as i32 - 20),
        3 => col!(i64, |x: u64| x as i64 * 1_000_000_007 - 7),
        4 => col!(u8, |x: u64| x as u8),
        5 => col!(u16, |x: u64| x as u16 * 1000),
        6 => col!(u32, |x: u64| x as u32),
        7 => col!(u64, |x: u64| x << 40),
        8 => col!(bool, |x: u64| x.is_multiple_of(3)),
        9 => fcol!(f32),
        _ => fcol!(f64),
    }
}

/// A validity (or not-NaN) mask of runs: mostly true, with false runs of random lengths.
fn runs(rng: &mut Rng, n: usize) -> Vec<bool> {
    let mut v = vec![true; n];
    let mut i = 0;
    while i < n {
        i += rng.below(n as u64 / 3 + 1) as usize;
        let len = rng.below(n as u64 / 4 + 2) as usize;
        for x in v.iter_mut().skip(i).take(len) {
            *x = false;
        }
        i += len + 1;
    }
    v
}

/// Random tables (B2ND_TABLE_SEED replays; printed), read back here; with
/// B2ND_RANDOM_TABLES=DIR they are kept for `scripts/diff_tables.py`, which compares
/// python-blosc2's `where()` on them with its own on a copy it writes itself.
#[test]
fn random_tables_read_back() {
    let seed = std::env::var("B2ND_TABLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261125u64);
    let count: usize = std::env::var("B2ND_TABLE_COUNT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    println!("random tables: B2ND_TABLE_SEED={seed} B2ND_TABLE_COUNT={count}");
    let out = std::env::var_os("B2ND_RANDOM_TABLES").map(std::path::PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let dir = out.unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(seed);
    for k in 0..count {
        let n = match rng.below(4) {
            0 => 1 + rng.below(300) as usize,
            _ => 1000 + rng.below(300_000) as usize,
        };
        let ncols = 1 + rng.below(4) as usize;
        let mut b = TableBuilder::new()
            .column("row", &(0..n as i64).collect::<Vec<_>>())
            .unwrap();
        for c in 0..ncols {
            b = random_column(&mut rng, b, &format!("c{c}"), n);
        }
        let path = dir.join(format!("rt{k}.{}", if k % 2 == 0 { "b2d" } else { "b2z" }));
        b.overwrite(true).write(&path).unwrap();
        let t = Table::open(&path).unwrap();
        assert_eq!(t.n_rows(), n as u64);
        assert_eq!(t.read_column::<i64>("row").unwrap()[n - 1], n as i64 - 1);
        let store = b2nd::Store::open(&path).unwrap();
        let seg = store.open_array("/_cols/row").unwrap().blocks()[0] as usize;
        let s = store.open_array("/_indexes/row/summary.block").unwrap();
        assert_eq!(s.shape(), &[n.div_ceil(seg) as u64], "{}", path.display());
    }
}
