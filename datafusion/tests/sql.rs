//! SQL over b2nd tables and arrays, answers checked against b2nd's own reads of the same
//! data; scans ship through the extension codec and give the same answers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use b2nd_datafusion::{B2ndCodec, B2ndTable};
use datafusion::arrow::array::{Array, AsArray};
use datafusion::arrow::datatypes::{Float64Type, Int64Type, UInt64Type};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::TableProvider as _;
use datafusion::common::stats::Precision;
use datafusion::common::ScalarValue;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/tables")
}

fn ctx(partitions: usize) -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions))
}

async fn rows(ctx: &SessionContext, q: &str) -> Vec<RecordBatch> {
    ctx.sql(q).await.unwrap().collect().await.unwrap()
}

async fn physical_plan(
    ctx: &SessionContext,
    q: &str,
) -> Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    ctx.sql(q)
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap()
}

fn i64s(b: &[RecordBatch], col: usize) -> Vec<Option<i64>> {
    b.iter()
        .flat_map(|b| {
            let a = b.column(col).as_primitive::<Int64Type>();
            (0..a.len()).map(move |i| a.is_valid(i).then(|| a.value(i)))
        })
        .collect()
}

fn f64s(b: &[RecordBatch], col: usize) -> Vec<Option<f64>> {
    b.iter()
        .flat_map(|b| {
            let a = b.column(col).as_primitive::<Float64Type>();
            (0..a.len()).map(move |i| a.is_valid(i).then(|| a.value(i)))
        })
        .collect()
}

/// A table b2nd writes: 1 200 000 rows in several chunks, every 5th `x` null (in a mask),
/// `g` a group number.
/// A seeded xorshift generator: `next(m)` is below `m`.
fn xorshift(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |m| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    }
}

fn big_table(dir: &Path) -> (PathBuf, Vec<i64>, Vec<Option<f64>>, Vec<i64>) {
    let n = 1_200_000usize;
    let id: Vec<i64> = (0..n as i64).collect();
    let x: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.5).collect();
    let valid: Vec<bool> = (0..n).map(|i| i % 5 != 0).collect();
    let g: Vec<i64> = (0..n as i64).map(|i| i % 7).collect();
    let p = dir.join("big.b2z");
    b2nd::TableBuilder::new()
        .column("id", &id)
        .unwrap()
        .nullable_column("x", &x, &valid)
        .unwrap()
        .column("g", &g)
        .unwrap()
        .write(&p)
        .unwrap();
    let xs = x
        .iter()
        .zip(&valid)
        .map(|(&v, &ok)| ok.then_some(v))
        .collect();
    (p, id, xs, g)
}

#[tokio::test]
async fn python_blosc2_tables_answer_as_b2nd_reads_them() {
    let t = b2nd::Table::open(fixtures().join("basic.b2z")).unwrap();
    let ids: Vec<i64> = t.read_column("id").unwrap();
    for parts in [1, 3] {
        let ctx = ctx(parts);
        let p = fixtures().join("basic.b2z");
        ctx.register_table(
            "t",
            Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
        )
        .unwrap();
        // Live rows only (the fixture has deleted rows), in order.
        let b = rows(&ctx, "SELECT id FROM t ORDER BY id").await;
        let got: Vec<i64> = i64s(&b, 0).into_iter().map(Option::unwrap).collect();
        assert_eq!(got, ids);
        let b = rows(
            &ctx,
            "SELECT count(*), count(score), count(opt), count(fsent) FROM t",
        )
        .await;
        let counts: Vec<i64> = (0..4).map(|c| i64s(&b, c)[0].unwrap()).collect();
        let nonnull = |name: &str| {
            t.read_validity(name)
                .unwrap()
                .map_or(ids.len(), |v| v.iter().filter(|&&x| x).count()) as i64
        };
        assert_eq!(
            counts,
            [
                ids.len() as i64,
                nonnull("score"),
                nonnull("opt"),
                nonnull("fsent")
            ]
        );
        // Strings, dictionaries and their nulls.
        let want: Vec<Option<String>> = t.read_utf8("txt").unwrap();
        let b = rows(&ctx, "SELECT txt FROM t ORDER BY id").await;
        let got: Vec<Option<String>> = b
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_string::<i32>();
                (0..a.len())
                    .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want);
        let b = rows(&ctx, "SELECT count(*) FROM t WHERE tag IS NOT NULL").await;
        assert!(i64s(&b, 0)[0].unwrap() <= ids.len() as i64);
    }
}

#[tokio::test]
async fn queries_over_a_table_of_many_chunks_in_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let (p, id, x, g) = big_table(dir.path());
    let spec = p.to_str().unwrap();
    let id_array = b2nd::Table::open(&p).unwrap().column_array("id").unwrap();
    let (chunk_rows, block_rows) = (id_array.chunks()[0], id_array.blocks()[0]);
    let nchunks = (id.len() as u64).div_ceil(chunk_rows) as usize;
    assert!(nchunks >= 2, "{nchunks} chunks");
    let mut answers = Vec::new();
    for parts in [1, 2, 4] {
        let ctx = ctx(parts);
        ctx.register_table("t", Arc::new(B2ndTable::table(spec).unwrap()))
            .unwrap();
        // Aggregates by group against the same sums done here.
        let b = rows(
            &ctx,
            "SELECT g, count(*), count(x), sum(x), min(id), max(id) FROM t GROUP BY g ORDER BY g",
        )
        .await;
        let groups: Vec<i64> = i64s(&b, 0).into_iter().map(Option::unwrap).collect();
        assert_eq!(groups, (0..7).collect::<Vec<_>>());
        for (k, &grp) in groups.iter().enumerate() {
            let rows: Vec<usize> = (0..id.len()).filter(|&i| g[i] == grp).collect();
            let sum: f64 = rows.iter().filter_map(|&i| x[i]).sum();
            assert_eq!(i64s(&b, 1)[k], Some(rows.len() as i64));
            assert_eq!(
                i64s(&b, 2)[k],
                Some(rows.iter().filter(|&&i| x[i].is_some()).count() as i64)
            );
            assert!((f64s(&b, 3)[k].unwrap() - sum).abs() < 1e-6 * sum.max(1.0));
            assert_eq!(i64s(&b, 4)[k], Some(id[rows[0]]));
            assert_eq!(i64s(&b, 5)[k], Some(id[*rows.last().unwrap()]));
        }
        // A selective filter, and a limit.
        let b = rows(
            &ctx,
            "SELECT id FROM t WHERE id BETWEEN 1123456 AND 1123460 ORDER BY id",
        )
        .await;
        assert_eq!(
            i64s(&b, 0),
            (1123456..=1123460).map(Some).collect::<Vec<_>>()
        );
        let b = rows(&ctx, "SELECT * FROM t LIMIT 7").await;
        assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
        // The plan: only the projected columns, one partition per target partition.
        let b = rows(&ctx, "EXPLAIN SELECT sum(id) FROM t").await;
        let plan = format!(
            "{}",
            datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap()
        );
        assert!(plan.contains("projection=[id], file_type=b2nd"), "{plan}");
        // (Partitions are cut at blocks: a chunk may be shared by two.)
        let nblocks = (id.len() as u64).div_ceil(block_rows) as usize;
        let want = parts.min(nblocks);
        let groups = if want == 1 {
            "1 group".to_string()
        } else {
            format!("{want} groups")
        };
        assert!(
            plan.contains(&format!("file_groups={{{groups}: ")),
            "{plan}"
        );
        answers.push(rows(&ctx, "SELECT sum(id), sum(x) FROM t").await);
        // Pruning: a range of ids lies in one block of rows; only that block is read, found
        // by the SUMMARY index b2nd's TableBuilder writes as python-blosc2 does.
        let b = rows(
            &ctx,
            "EXPLAIN SELECT id FROM t WHERE id BETWEEN 1123456 AND 1123460",
        )
        .await;
        let plan = format!(
            "{}",
            datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap()
        );
        let read = block_rows.min(id.len() as u64 - 1123456 / block_rows * block_rows);
        assert!(
            plan.contains(&format!(
                "rows={read} of {} (pruned by id: python-blosc2 summary)",
                id.len()
            )),
            "{plan}"
        );
        eprintln!(
            "pruned: rows={read} of {}, chunks of {chunk_rows} rows, blocks of {block_rows}",
            id.len()
        );
        // Pruned or not, the same answers: each filter against one the zones cannot use.
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..if parts == 2 { 20 } else { 0 } {
            let (c, v) = match next(3) {
                0 => ("id", format!("{}", next(1_300_000))),
                1 => ("x", format!("{}.{}", next(520), next(10))),
                _ => ("g", format!("{}", next(8))),
            };
            let op = ["=", "<", "<=", ">", ">="][next(5) as usize];
            let extra = if next(2) == 0 {
                format!(" AND id < {}", next(1_300_000))
            } else {
                String::new()
            };
            let pruned = format!("SELECT count(*), sum(id) FROM t WHERE {c} {op} {v}{extra}");
            let plain = format!(
                "SELECT count(*), sum(id) FROM t WHERE {c} + 0 {op} {v}{}",
                extra.replace("id <", "id + 0 <")
            );
            let (a, b) = (rows(&ctx, &pruned).await, rows(&ctx, &plain).await);
            assert_eq!(i64s(&a, 0), i64s(&b, 0), "{pruned}");
            assert_eq!(i64s(&a, 1), i64s(&b, 1), "{pruned}");
        }
    }
    for a in &answers[1..] {
        assert_eq!(i64s(a, 0), i64s(&answers[0], 0));
    }
}

/// python-blosc2's tables with fresh SUMMARY indexes are pruned by them, those whose indexes
/// a write made stale by zones b2nd computes; both give the answers of unprunable filters,
/// and the planner gets the columns' bounds.
#[tokio::test]
async fn python_summaries_prune_and_stale_ones_are_not_trusted() {
    for (name, origin) in [
        ("summaries.b2z", "python-blosc2 summary"),
        ("summaries_stale.b2z", "computed"),
    ] {
        let p = fixtures().join(name);
        let t = B2ndTable::table(p.to_str().unwrap()).unwrap();
        // Bounds for the planner: from python's summary (deleted rows included: inexact).
        let stats = datafusion::catalog::TableProvider::statistics(&t).unwrap();
        let id_stats = &stats.column_statistics[0];
        if origin == "computed" {
            assert_eq!(
                id_stats.min_value,
                Precision::Absent,
                "nothing computed yet"
            );
        } else {
            assert_eq!(
                id_stats.min_value,
                Precision::Inexact(ScalarValue::Int64(Some(1500)))
            );
            assert_eq!(
                id_stats.max_value,
                Precision::Inexact(ScalarValue::Int64(Some(3000)))
            );
            assert_eq!(id_stats.null_count, Precision::Exact(0));
        }
        let ctx = ctx(2);
        ctx.register_table("t", Arc::new(t)).unwrap();
        let b = rows(&ctx, "EXPLAIN SELECT id FROM t WHERE id < 1600").await;
        let plan = format!(
            "{}",
            datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap()
        );
        assert!(
            plan.contains(&format!("(pruned by id: {origin})")),
            "{plan}"
        );
        // Every numeric kind prunes: the literal is compared in the column's own type.
        for (c, v) in [
            ("id", "2900"),
            ("f", "700.5"),
            ("u", "9223372036854778000"),
            ("x", "48.5"),
            ("s", "60"),
            ("f", "2000.5"),
        ] {
            let q = format!("SELECT count(*) FROM t WHERE {c} > {v}");
            let b = rows(&ctx, &format!("EXPLAIN {q}")).await;
            let plan = format!(
                "{}",
                datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap()
            );
            // Pruned by zones, or (python's bounds: every `s` is below 60) no scan at all.
            // (Computed zones are blocks of live rows: none of them holds only NULLs of `x`.)
            let by_bounds = origin != "computed" && c == "s" && !plan.contains("file_type=b2nd");
            let unprunable = origin == "computed" && matches!(c, "x" | "s");
            assert!(
                by_bounds || unprunable || plan.contains(&format!("pruned by {c}: {origin}")),
                "{plan}"
            );
            let plain = format!("SELECT count(*) FROM t WHERE {c} + 0 > {v}");
            let (a, b) = (rows(&ctx, &q).await, rows(&ctx, &plain).await);
            assert_eq!(i64s(&a, 0), i64s(&b, 0), "{name}: {q}");
        }
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..40 {
            let (c, v) = match next(5) {
                0 => ("id", format!("{}", next(3200))),
                1 => ("f", format!("{}.5", next(1600))),
                2 => (
                    "u",
                    format!("{}", 9_223_372_036_854_775_808u64 + next(3200)),
                ),
                3 => ("x", format!("{}.0", next(120) as i64 - 60)),
                _ => ("s", format!("{}", next(60) as i64 - 5)),
            };
            let op = ["=", "<", "<=", ">", ">="][next(5) as usize];
            let pruned = format!("SELECT count(*), sum(id) FROM t WHERE {c} {op} {v}");
            let plain = format!("SELECT count(*), sum(id) FROM t WHERE {c} + 0 {op} {v}");
            let (a, b) = (rows(&ctx, &pruned).await, rows(&ctx, &plain).await);
            assert_eq!(i64s(&a, 0), i64s(&b, 0), "{name}: {pruned}");
            assert_eq!(i64s(&a, 1), i64s(&b, 1), "{name}: {pruned}");
        }
    }
}

#[tokio::test]
async fn arrays_are_tables_of_elements() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.b2nd");
    let shape = [30u64, 20, 10];
    let data: Vec<f64> = (0..6000).map(|i| (i as f64).sqrt()).collect();
    b2nd::ArrayBuilder::for_type::<f64>(&shape)
        .chunks(&[7, 20, 10])
        .blocks(&[2, 10, 10])
        .write(b2nd::Target::File(p.clone()), &data)
        .unwrap();
    for parts in [1, 3] {
        let ctx = ctx(parts);
        ctx.register_table(
            "a",
            Arc::new(B2ndTable::array(p.to_str().unwrap()).unwrap()),
        )
        .unwrap();
        let b = rows(&ctx, "SELECT count(*), sum(value) FROM a").await;
        assert_eq!(i64s(&b, 0)[0], Some(6000));
        let want: f64 = data.iter().sum();
        assert!((f64s(&b, 1)[0].unwrap() - want).abs() < 1e-6 * want);
        // Indices: element [i0, i1, i2] is data[i0 * 200 + i1 * 10 + i2].
        let b = rows(
            &ctx,
            "SELECT i0, i1, i2, value FROM a WHERE i1 = 3 AND i2 = 4 ORDER BY i0",
        )
        .await;
        let mut k = 0;
        for batch in &b {
            let i0 = batch.column(0).as_primitive::<UInt64Type>();
            let v = batch.column(3).as_primitive::<Float64Type>();
            for r in 0..batch.num_rows() {
                let i = i0.value(r);
                assert_eq!(i, k);
                assert_eq!(v.value(r), data[(i * 200 + 3 * 10 + 4) as usize]);
                k += 1;
            }
        }
        assert_eq!(k, 30);
        // Only indices: no data read, still right.
        let b = rows(&ctx, "SELECT max(i0), max(i1), max(i2) FROM a").await;
        for (c, want) in [29u64, 19, 9].into_iter().enumerate() {
            assert_eq!(b[0].column(c).as_primitive::<UInt64Type>().value(0), want);
        }
    }
    // Refused by name: an array of strings has no SQL form here.
    let s = dir.path().join("s.b2nd");
    let dt = b2nd::Dtype::parse("<U3").unwrap();
    b2nd::ArrayBuilder::new(&[2], dt)
        .write_bytes(b2nd::Target::File(s.clone()), &[0u8; 24])
        .unwrap();
    let e = B2ndTable::array(s.to_str().unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("<U3"), "{e}");
}

#[tokio::test]
async fn scans_shipped_through_the_codec_give_the_same_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (p, id, x, g) = big_table(dir.path());
    let ctx = ctx(3);
    ctx.register_table(
        "t",
        Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
    )
    .unwrap();
    // A fresh session: nothing registered, the scan opens the source from its description.
    let worker = SessionContext::new();
    let shipped = |q: &'static str| {
        let ctx = &ctx;
        let worker = &worker;
        async move {
            let plan = physical_plan(ctx, q).await;
            let shown = displayable(plan.as_ref()).indent(true).to_string();
            assert!(shown.contains("file_type=b2nd"), "{q}: no scan in\n{shown}");
            let bytes = physical_plan_to_bytes_with_extension_codec(plan, &B2ndCodec).unwrap();
            let back = physical_plan_from_bytes_with_extension_codec(
                &bytes,
                &worker.task_ctx(),
                &B2ndCodec,
            )
            .unwrap();
            let got = datafusion::physical_plan::collect(back, worker.task_ctx())
                .await
                .unwrap();
            (got, bytes)
        }
    };
    // Every row of every partition: sums over all rows, not only those a filter keeps (a scan
    // that lost one row per range would still pass a filtered query that happens to drop it).
    let (got, _) = shipped("SELECT sum(id), sum(x), sum(g) FROM t").await;
    let want_x: f64 = x.iter().flatten().sum();
    assert_eq!(i64s(&got, 0), vec![Some(id.iter().sum())]);
    assert_eq!(f64s(&got, 1), vec![Some(want_x)]);
    assert_eq!(i64s(&got, 2), vec![Some(g.iter().sum())]);
    // Grouped and filtered, against the generator's own values.
    let (got, bytes) =
        shipped("SELECT g, count(*), sum(x) FROM t WHERE id % 3 = 1 GROUP BY g ORDER BY g").await;
    let mut want: Vec<(i64, i64, f64)> = (0..7).map(|k| (k, 0, 0.0)).collect();
    for i in (0..id.len()).filter(|&i| id[i] % 3 == 1) {
        let w = &mut want[g[i] as usize];
        w.1 += 1;
        w.2 += x[i].unwrap_or(0.0);
    }
    let groups: Vec<Option<i64>> = want.iter().map(|w| Some(w.0)).collect();
    let counts: Vec<Option<i64>> = want.iter().map(|w| Some(w.1)).collect();
    assert_eq!(i64s(&got, 0), groups);
    assert_eq!(i64s(&got, 1), counts);
    let sums = f64s(&got, 2);
    for (s, w) in sums.iter().zip(&want) {
        assert!(
            (s.unwrap() - w.2).abs() <= 1e-9 * w.2.abs(),
            "{s:?} vs {}",
            w.2
        );
    }
    // Garbage is an error, not a panic.
    for cut in [0, 5, 20, bytes.len() / 2] {
        let _ = physical_plan_from_bytes_with_extension_codec(
            &bytes[..cut],
            &worker.task_ctx(),
            &B2ndCodec,
        );
    }
}

#[tokio::test]
async fn bad_queries_are_errors() {
    let ctx = ctx(2);
    let p = fixtures().join("basic.b2z");
    ctx.register_table(
        "t",
        Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
    )
    .unwrap();
    for q in [
        "SELECT nope FROM t",
        "SELECT * FROM missing",
        "SELEC id FROM t",
    ] {
        assert!(ctx.sql(q).await.is_err(), "{q}");
    }
    assert!(B2ndTable::table("/no/such/table.b2z").is_err());
    assert!(B2ndTable::table(fixtures().join("basic.b2z.json").to_str().unwrap()).is_err());
}

/// Computed columns are columns in SQL: their values are python-blosc2's (the fixture's
/// `t[name][:]` bytes), filters on them select the same rows as b2nd's evaluation, and a
/// column b2nd cannot evaluate (a DSL kernel) stays in the schema and fails a query that
/// reads it, by name.
#[tokio::test]
async fn computed_columns_are_columns() {
    let path = fixtures().join("computed.b2z");
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("computed.b2z.json")).unwrap(),
    )
    .unwrap();
    let ctx = ctx(3);
    let t = B2ndTable::table(path.to_str().unwrap()).unwrap();
    assert!(t.schema().field_with_name("dsl").is_ok());
    ctx.register_table("t", Arc::new(t)).unwrap();
    let b = rows(&ctx, "SELECT ratio, wide FROM t").await;
    let mut ratio = Vec::new();
    let mut wide = Vec::new();
    for batch in &b {
        let r = batch.column(0).as_primitive::<Float64Type>();
        let w = batch
            .column(1)
            .as_primitive::<datafusion::arrow::datatypes::Int32Type>();
        ratio.extend(r.values().iter().flat_map(|v| v.to_le_bytes()));
        wide.extend(w.values().iter().flat_map(|v| v.to_le_bytes()));
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    assert_eq!(
        hex(&ratio),
        want["computed"]["ratio"]["hex"].as_str().unwrap()
    );
    assert_eq!(
        hex(&wide),
        want["computed"]["wide"]["hex"].as_str().unwrap()
    );
    let tab = b2nd::Table::open(&path).unwrap();
    let has1: Vec<bool> = tab.read_column("has1").unwrap();
    let b = rows(&ctx, "SELECT count(*) FROM t WHERE has1 AND wide > 0").await;
    let wide_v: Vec<i32> = tab.read_column("wide").unwrap();
    let n = has1
        .iter()
        .zip(&wide_v)
        .filter(|(h, w)| **h && **w > 0)
        .count();
    assert_eq!(i64s(&b, 0), [Some(n as i64)]);
    assert!(n > 0);
    let e = ctx
        .sql("SELECT dsl FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("dsl") && e.contains("DSL kernel"), "{e}");
}

/// A filter on a computed column prunes through python-blosc2's summaries of the columns it
/// is computed from (bounds of the expression per block), a computed column b2nd cannot
/// bound (`sin`) is scanned whole, and every answer is python's.
#[tokio::test]
async fn computed_columns_prune_through_their_dependencies_summaries() {
    let p = fixtures().join("computed_summaries.b2z");
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("computed_summaries.b2z.json")).unwrap(),
    )
    .unwrap();
    let n = want["n_rows"].as_u64().unwrap();
    let t = B2ndTable::table(p.to_str().unwrap()).unwrap();
    let ctx = ctx(2);
    ctx.register_table("t", Arc::new(t)).unwrap();
    for f in want["filters"].as_array().unwrap() {
        let (col, op, lit) = (
            f["column"].as_str().unwrap(),
            f["op"].as_str().unwrap(),
            f["literal"].as_f64().unwrap(),
        );
        let q = format!("SELECT count(*) FROM t WHERE {col} {op} {lit:?}");
        assert_eq!(i64s(&rows(&ctx, &q).await, 0), [f["count"].as_i64()], "{q}");
        let b = rows(&ctx, &format!("EXPLAIN {q}")).await;
        let plan = format!(
            "{}",
            datafusion::arrow::util::pretty::pretty_format_batches(&b).unwrap()
        );
        if col == "wave" {
            assert!(!plan.contains("bounded through"), "{plan}");
        } else {
            let note = format!(
                "(pruned by {col}: bounded through python-blosc2 summaries of its dependencies)"
            );
            assert!(plan.contains(&note), "{plan}");
            let read: u64 = plan
                .split("rows=")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .and_then(|s| s.parse().ok())
                .unwrap_or_else(|| panic!("{plan}"));
            assert!(read < n / 2, "{q}: read {read} of {n} rows\n{plan}");
        }
    }
}

/// Columns with no Arrow form (object rows, complex numbers) do not
/// stop SQL over the others: they stay in the schema and only a query reading one fails,
/// naming it.
#[tokio::test]
async fn columns_without_an_arrow_form_fail_only_when_read() {
    let p = fixtures().join("kinds.b2z");
    let t = B2ndTable::table(p.to_str().unwrap()).unwrap();
    let names: Vec<String> = t
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    assert_eq!(names, ["id", "vs", "vb", "ob", "st", "c8", "c16"]);
    let ctx = ctx(2);
    ctx.register_table("t", Arc::new(t)).unwrap();
    let b = rows(&ctx, "SELECT count(*), count(vs) FROM t WHERE id <> 3").await;
    // Live ids 0, 1, 2, 5 (4 deleted); vs is null on id 1.
    assert_eq!((i64s(&b, 0), i64s(&b, 1)), (vec![Some(4)], vec![Some(3)]));
    // A struct stored whole is an Arrow struct of its schema's field types.
    let b = rows(
        &ctx,
        "SELECT sum(get_field(st, 'x')), count(st), max(t.st.y) FROM t",
    )
    .await;
    assert_eq!((i64s(&b, 0), i64s(&b, 1)), (vec![Some(90)], vec![Some(4)]));
    assert_eq!(b[0].column(2).as_string::<i32>().value(0), "y5");
    for col in ["ob", "c8"] {
        let e = ctx
            .sql(&format!("SELECT {col} FROM t"))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("column \"{col}\"")) || e.contains(col),
            "{col}: {e}"
        );
        assert!(e.contains("no Arrow form"), "{col}: {e}");
    }
}

/// LIMIT and OFFSET on an N-d array cut wherever they fall (mid-row too): the rows are the
/// first elements in C order, no error.
#[tokio::test]
async fn limits_on_arrays_cut_anywhere() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/f8_2d_ragged.b2nd");
    let a = b2nd::Array::open(&p).unwrap();
    let all: Vec<f64> = a.read().unwrap();
    for parts in [1, 2] {
        let ctx = ctx(parts);
        ctx.register_table(
            "a",
            Arc::new(B2ndTable::array(p.to_str().unwrap()).unwrap()),
        )
        .unwrap();
        for (limit, offset) in [(1, 0), (5, 0), (8, 3), (13, 50), (3, all.len() - 2)] {
            // (An ORDER BY inside a subquery binds nothing outside it: sort where the limit is.)
            let q = format!("SELECT value FROM a ORDER BY i0, i1 LIMIT {limit} OFFSET {offset}");
            let got = f64s(&rows(&ctx, &q).await, 0);
            let want: Vec<Option<f64>> = all
                .iter()
                .skip(offset)
                .take(limit)
                .map(|&v| Some(v))
                .collect();
            assert_eq!(got, want, "{q}");
            // Without ORDER BY: the limit reaches the scan, which cuts mid-row.
            let q = format!("SELECT value FROM a LIMIT {limit}");
            let n: usize = rows(&ctx, &q).await.iter().map(|b| b.num_rows()).sum();
            assert_eq!(n, limit.min(all.len()), "{q}");
        }
    }
}

/// The batches a scan skipped by the dynamic filters pushed into it, or because no row of
/// them passes its string filters.
fn batches_skipped(plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>) -> usize {
    let own = b2nd_datafusion::B2ndSource::of_plan(plan.as_ref())
        .and_then(|_| plan.metrics())
        .and_then(|m| m.sum_by_name("batches_skipped"))
        .map_or(0, |v| v.as_usize());
    own + plan
        .children()
        .into_iter()
        .map(batches_skipped)
        .sum::<usize>()
}

/// A top-k's dynamic filter, pushed into the scan, skips the batches whose zones show no row
/// can enter the top k any more; answers equal those without the pushdown.
#[tokio::test]
async fn top_k_skips_batches_its_threshold_excludes() {
    let dir = tempfile::tempdir().unwrap();
    let n = 300_000i64;
    let up: Vec<i64> = (0..n).collect();
    let down: Vec<i64> = (0..n).map(|i| n - i).collect();
    let xn: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let valid: Vec<bool> = (0..n).map(|i| i % 3 != 0).collect();
    let p = dir.path().join("t.b2z");
    b2nd::TableBuilder::new()
        .column("up", &up)
        .unwrap()
        .column("down", &down)
        .unwrap()
        .nullable_column("xn", &xn, &valid)
        .unwrap()
        .write(&p)
        .unwrap();
    // Batches are whole blocks, about the session's batch size (4096 rows) or more.
    let block = b2nd::Table::open(&p)
        .unwrap()
        .column_array("up")
        .unwrap()
        .blocks()[0];
    let batches = (n as u64).div_ceil(4096u64.div_ceil(block) * block) as usize;
    assert!(batches >= 8, "{batches} batches");
    for (q, skips, want) in [
        (
            "SELECT up FROM t ORDER BY up LIMIT 4",
            true,
            vec![0, 1, 2, 3],
        ),
        (
            "SELECT down FROM t ORDER BY down DESC LIMIT 3",
            true,
            vec![n, n - 1, n - 2],
        ),
        // A nullable column, NULLs last: NULLs never enter the top k.
        ("SELECT up FROM t ORDER BY xn LIMIT 3", true, vec![1, 2, 4]),
        // Two keys: `xn < a OR (xn = a AND up < b)`, which zones do not use.
        (
            "SELECT up FROM t ORDER BY xn, up LIMIT 3",
            false,
            vec![1, 2, 4],
        ),
    ] {
        let mut answers = Vec::new();
        for pushdown in [true, false] {
            let config = SessionConfig::new()
                .with_target_partitions(1)
                .with_batch_size(4096)
                .set_bool(
                    "datafusion.optimizer.enable_topk_dynamic_filter_pushdown",
                    pushdown,
                );
            let ctx = SessionContext::new_with_config(config);
            ctx.register_table(
                "t",
                Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
            )
            .unwrap();
            // Zones computed by a filtered scan first (as python's summaries would be there).
            rows(
                &ctx,
                "SELECT count(*) FROM t WHERE up >= 0 AND down > 0 AND xn > -1",
            )
            .await;
            let plan = physical_plan(&ctx, q).await;
            let b = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx())
                .await
                .unwrap();
            let skipped = batches_skipped(&plan);
            let shown = format!("{}", displayable(plan.as_ref()).indent(false));
            assert_eq!(
                shown.contains("dynamic filters=1"),
                pushdown,
                "{q}: {shown}"
            );
            if pushdown && skips {
                // All but the first few batches skipped.
                assert!(
                    skipped + 3 >= batches,
                    "{q}: {skipped} of {batches} batches skipped"
                );
            } else {
                assert_eq!(skipped, 0, "{q}");
            }
            answers.push(i64s(&b, 0));
        }
        assert_eq!(
            answers[0],
            want.into_iter().map(Some).collect::<Vec<_>>(),
            "{q}"
        );
        assert_eq!(answers[0], answers[1], "{q}");
    }
}

/// Scan encodings are bytes from the network: every byte changed, every truncation and rows
/// the source does not have decode to an error or a scan, never a panic.
#[tokio::test]
async fn hostile_scan_encodings_are_errors() {
    use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.b2z");
    b2nd::TableBuilder::new()
        .column("id", &(0..1000i64).collect::<Vec<_>>())
        .unwrap()
        .write(&p)
        .unwrap();
    let ctx = ctx(2);
    ctx.register_table(
        "t",
        Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
    )
    .unwrap();
    let plan = physical_plan(&ctx, "SELECT id FROM t").await;
    let mut scan = plan.clone();
    while !scan.children().is_empty() {
        scan = scan.children()[0].clone();
    }
    let proto = DefaultPhysicalProtoConverter {};
    let mut good = Vec::new();
    B2ndCodec.try_encode(scan, &mut good, &proto).unwrap();
    let task = ctx.task_ctx();
    let decode = |b: &[u8]| B2ndCodec.try_decode(b, &[], &task, &proto);
    assert!(decode(&good).is_ok());
    let mut decoded = 0;
    for i in 0..good.len() {
        for v in [0u8, 0xff, good[i].wrapping_add(1)] {
            let mut b = good.clone();
            b[i] = v;
            decoded += usize::from(decode(&b).is_ok());
        }
        assert!(decode(&good[..i]).is_err(), "truncated to {i} bytes");
    }
    assert!(decoded > 0);
    // The last piece's end (the field before the limit and the filter count) set to
    // 2^64 - 1.
    let end = good.len() - 3 * 16 + 8;
    let mut b = good.clone();
    b[end..end + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = decode(&b).unwrap_err().to_string();
    assert!(e.contains("are not rows of"), "{e}");

    // A table in a logical plan (B2ndLogicalCodec): every byte changed, every truncation,
    // errors or tables, never a panic.
    use datafusion::common::TableReference;
    use datafusion_proto::logical_plan::LogicalExtensionCodec;
    let codec = b2nd_datafusion::B2ndLogicalCodec::default();
    let table: Arc<dyn datafusion::catalog::TableProvider> =
        Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap());
    let schema = table.schema();
    let mut good = Vec::new();
    codec
        .try_encode_table_provider(&TableReference::bare("t"), table, &mut good)
        .unwrap();
    let decode = |b: &[u8]| {
        codec.try_decode_table_provider(b, &TableReference::bare("t"), schema.clone(), &task)
    };
    assert!(decode(&good).is_ok());
    for i in 0..good.len() {
        for v in [0u8, 0xff, good[i].wrapping_add(1)] {
            let mut b = good.clone();
            b[i] = v;
            let _ = decode(&b);
        }
        assert!(decode(&good[..i]).is_err(), "truncated to {i} bytes");
    }
}

/// The partitions' pieces of each b2nd scan in a plan.
fn scans(
    plan: &Arc<dyn datafusion::physical_plan::ExecutionPlan>,
) -> Vec<Vec<Vec<b2nd_datafusion::Piece>>> {
    let mut out: Vec<_> = b2nd_datafusion::B2ndSource::of_plan(plan.as_ref())
        .map(|(_, parts)| parts)
        .into_iter()
        .collect();
    for c in plan.children() {
        out.extend(scans(c));
    }
    out
}

/// Many files as one table (a glob, a directory ending in `/`): every file's rows once,
/// partitions spanning files, statistics over all of them, the same answers after the plan
/// ships through the codecs (logical and physical); files of another schema are refused,
/// naming the file and the difference.
#[tokio::test]
async fn many_files_read_as_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [70_000i64, 5_000, 40_000];
    let mut start = 0i64;
    for (i, n) in sizes.iter().enumerate() {
        let id: Vec<i64> = (start..start + n).collect();
        let x: Vec<f64> = id.iter().map(|&v| (v % 1000) as f64 / 4.0).collect();
        b2nd::TableBuilder::new()
            .column("id", &id)
            .unwrap()
            .column("x", &x)
            .unwrap()
            .write(dir.path().join(format!("part-{i}.b2z")))
            .unwrap();
        start += n;
    }
    let total: i64 = sizes.iter().sum();
    let want_sum: i64 = (0..total).sum();
    let want_x: f64 = (0..total).map(|v| (v % 1000) as f64 / 4.0).sum();
    let root = dir.path().to_str().unwrap();
    for spec in [format!("{root}/part-*.b2z"), format!("{root}/")] {
        let c = ctx(2);
        let t = B2ndTable::table(&spec).unwrap();
        assert_eq!(t.sources().count(), 3);
        let s = t.statistics().unwrap();
        assert_eq!(s.num_rows, Precision::Exact(total as usize));
        c.register_table("t", Arc::new(t)).unwrap();
        let q =
            "SELECT sum(id) AS s, count(*) AS n, min(id) AS lo, max(id) AS hi, sum(x) AS x FROM t";
        let check = |b: &[RecordBatch]| {
            let col = |i: usize| b[0].column(i).as_primitive::<Int64Type>().value(0);
            assert_eq!(
                (col(0), col(1), col(2), col(3)),
                (want_sum, total, 0, total - 1),
                "{spec}"
            );
            let x = b[0].column(4).as_primitive::<Float64Type>().value(0);
            assert!((x - want_x).abs() < 1e-6 * want_x, "{x} {want_x}");
        };
        check(&rows(&c, q).await);
        // A selective filter across files: ids 74 990..75 010 span files 1 and 2.
        let b = rows(
            &c,
            "SELECT count(*) FROM t WHERE id >= 74990 AND id < 75010",
        )
        .await;
        assert_eq!(b[0].column(0).as_primitive::<Int64Type>().value(0), 20);
        // Two partitions over three files: one of them reads pieces of two files.
        let plan = physical_plan(&c, "SELECT id FROM t").await;
        let parts = &scans(&plan)[0];
        assert_eq!(parts.len(), 2);
        assert!(
            parts.iter().any(|p| p
                .iter()
                .map(|p| p.file)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
                > 1),
            "{parts:?}"
        );
        // The physical plan through B2ndCodec.
        let plan = physical_plan(&c, q).await;
        let bytes = physical_plan_to_bytes_with_extension_codec(plan, &B2ndCodec).unwrap();
        let back = physical_plan_from_bytes_with_extension_codec(&bytes, &c.task_ctx(), &B2ndCodec)
            .unwrap();
        check(
            &datafusion::physical_plan::collect(back, c.task_ctx())
                .await
                .unwrap(),
        );
        // The logical plan through B2ndLogicalCodec, planned again where decoded.
        let logical = c.sql(q).await.unwrap().into_optimized_plan().unwrap();
        let codec = b2nd_datafusion::B2ndLogicalCodec::default();
        let bytes =
            datafusion_proto::bytes::logical_plan_to_bytes_with_extension_codec(&logical, &codec)
                .unwrap();
        let other = ctx(2);
        let back = datafusion_proto::bytes::logical_plan_from_bytes_with_extension_codec(
            &bytes,
            &other.task_ctx(),
            &codec,
        )
        .unwrap();
        check(
            &other
                .execute_logical_plan(back)
                .await
                .unwrap()
                .collect()
                .await
                .unwrap(),
        );
    }
    // A table of many files is read, not changed.
    let c = ctx(2);
    let t = B2ndTable::table(&format!("{root}/part-*.b2z"))
        .unwrap()
        .with_writes(true);
    c.register_table("t", Arc::new(t)).unwrap();
    let e = c
        .sql("INSERT INTO t VALUES (1, 2.0)")
        .await
        .unwrap()
        .collect()
        .await;
    assert!(e.unwrap_err().to_string().contains("many files"));
    // A file of another schema: refused, naming both files and the difference (`odd.b2z`
    // sorts first).
    b2nd::TableBuilder::new()
        .column("id", &[1i32, 2])
        .unwrap()
        .column("x", &[0.5f64, 1.5])
        .unwrap()
        .write(dir.path().join("odd.b2z"))
        .unwrap();
    let e = B2ndTable::table(&format!("{root}/*.b2z"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("odd.b2z") && e.contains("column id is Int64 there, Int32 here"),
        "{e}"
    );
    let e = B2ndTable::table(&format!("{root}/none-*.b2z"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("no file matches"), "{e}");
}

/// A `.b2d` table of `n` rows: `id`, `cat` (five strings and every 11th row null) and
/// `word` (a string of its own per row: no batch of it has few distinct strings).
fn string_table(dir: &Path, n: usize) -> (PathBuf, Vec<Option<&'static str>>, Vec<String>) {
    const CATS: [&str; 5] = ["alpha", "beta", "gamma", "delta", "épsilon"];
    let p = dir.join("s.b2d");
    b2nd::TableBuilder::new()
        .column("id", &(0..n as i64).collect::<Vec<_>>())
        .unwrap()
        .write(&p)
        .unwrap();
    let cat: Vec<Option<&str>> = (0..n)
        .map(|i| (i % 11 != 0).then_some(CATS[(i * 7 / 3) % 5]))
        .collect();
    let word: Vec<String> = (0..n).map(|i| format!("w{i}")).collect();
    let words: Vec<Option<&str>> = word.iter().map(|w| Some(w.as_str())).collect();
    let mut t = b2nd::TableMut::open(&p).unwrap();
    t.add_column("cat", &b2nd::NewColumn::string(8).strings(&cat))
        .unwrap();
    t.add_column("word", &b2nd::NewColumn::string(12).strings(&words))
        .unwrap();
    (p, cat, word)
}

#[tokio::test]
async fn filters_over_one_string_column_are_applied_in_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let n = 200_000;
    let (p, cat, word) = string_table(dir.path(), n);
    let ctx = ctx(2);
    ctx.register_table(
        "t",
        Arc::new(B2ndTable::table(p.to_str().unwrap()).unwrap()),
    )
    .unwrap();
    type Pred = Box<dyn Fn(Option<&str>, &str, i64) -> bool>;
    let cases: Vec<(&str, Pred)> = vec![
        ("cat = 'beta'", Box::new(|c, _, _| c == Some("beta"))),
        (
            "cat LIKE '%lt%'",
            Box::new(|c, _, _| c.is_some_and(|c| c.contains("lt"))),
        ),
        (
            "cat IN ('alpha', 'épsilon')",
            Box::new(|c, _, _| matches!(c, Some("alpha" | "épsilon"))),
        ),
        (
            "NOT (cat = 'beta')",
            Box::new(|c, _, _| c.is_some_and(|c| c != "beta")),
        ),
        (
            "cat <> 'beta' OR cat IS NULL",
            Box::new(|c, _, _| c != Some("beta")),
        ),
        ("cat IS NULL", Box::new(|c, _, _| c.is_none())),
        (
            "upper(cat) = 'DELTA'",
            Box::new(|c, _, _| c == Some("delta")),
        ),
        ("cat = 'none'", Box::new(|_, _, _| false)),
        ("word = 'w12345'", Box::new(|_, w, _| w == "w12345")),
        (
            "word LIKE 'w1%7'",
            Box::new(|_, w, _| w.starts_with("w1") && w.ends_with('7')),
        ),
        (
            "cat = 'gamma' AND word LIKE '%3'",
            Box::new(|c, w, _| c == Some("gamma") && w.ends_with('3')),
        ),
        (
            "cat = 'beta' AND id % 3 = 0",
            Box::new(|c, _, i| c == Some("beta") && i % 3 == 0),
        ),
        (
            "cat = 'beta' OR id < 10",
            Box::new(|c, _, i| c == Some("beta") || i < 10),
        ),
    ];
    for (pred, want) in &cases {
        let q = format!("SELECT count(*), sum(id), min(word), max(cat) FROM t WHERE {pred}");
        let got = rows(&ctx, &q).await;
        let keep: Vec<usize> = (0..n)
            .filter(|&i| want(cat[i], &word[i], i as i64))
            .collect();
        assert_eq!(i64s(&got, 0), vec![Some(keep.len() as i64)], "{pred}");
        let sum = (!keep.is_empty()).then(|| keep.iter().map(|&i| i as i64).sum::<i64>());
        assert_eq!(i64s(&got, 1), vec![sum], "{pred}");
        let text = |c: usize| {
            let a = got[0].column(c).as_string_view();
            a.is_valid(0).then(|| a.value(0).to_string())
        };
        let min_word = keep.iter().map(|&i| word[i].clone()).min();
        let max_cat = keep
            .iter()
            .filter_map(|&i| cat[i])
            .max()
            .map(str::to_string);
        assert_eq!(text(2), min_word, "{pred}");
        assert_eq!(text(3), max_cat, "{pred}");
    }
    // The rows themselves, strings included, not only aggregates.
    let got = rows(
        &ctx,
        "SELECT id, cat FROM t WHERE cat LIKE 'b%' ORDER BY id",
    )
    .await;
    let ids: Vec<Option<i64>> = (0..n)
        .filter(|&i| cat[i] == Some("beta"))
        .map(|i| Some(i as i64))
        .collect();
    assert_eq!(i64s(&got, 0), ids);
    assert!(got.iter().all(|b| b
        .column(1)
        .as_string_view()
        .iter()
        .all(|c| c == Some("beta"))));
    // Applied in the scan, DataFusion's filter gone; a filter over two columns is not.
    let shown = |q: &'static str| {
        let ctx = &ctx;
        async move {
            let plan = physical_plan(ctx, q).await;
            let s = displayable(plan.as_ref()).indent(true).to_string();
            s
        }
    };
    let s = shown("SELECT count(*) FROM t WHERE cat = 'beta'").await;
    assert!(
        s.contains("string filters=[cat@0 = beta]") && !s.contains("FilterExec"),
        "{s}"
    );
    let s = shown("SELECT count(*) FROM t WHERE cat = 'beta' OR id < 10").await;
    assert!(
        !s.contains("string filters") && s.contains("FilterExec"),
        "{s}"
    );
    // A batch no row of which passes is skipped: every batch for a string no row holds, all
    // but one for a string one row holds.
    let mut skipped = Vec::new();
    for q in [
        "SELECT count(*) FROM t WHERE cat = 'none'",
        "SELECT count(*) FROM t WHERE word = 'w7'",
    ] {
        let plan = physical_plan(&ctx, q).await;
        datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx())
            .await
            .unwrap();
        skipped.push(batches_skipped(&plan));
    }
    assert!(
        skipped[1] > 0 && skipped[0] == skipped[1] + 1,
        "{skipped:?}"
    );
    // The count is not answered from the table's row count.
    let s = shown("SELECT count(*) FROM t WHERE cat LIKE '%a'").await;
    assert!(s.contains("AggregateExec"), "{s}");

    // Shipped through the codec to a session that has nothing registered: the same rows.
    let q = "SELECT count(*), sum(id) FROM t WHERE cat LIKE '%ta' AND word LIKE '%9'";
    let plan = physical_plan(&ctx, q).await;
    let bytes = physical_plan_to_bytes_with_extension_codec(plan, &B2ndCodec).unwrap();
    let worker = SessionContext::new();
    let back =
        physical_plan_from_bytes_with_extension_codec(&bytes, &worker.task_ctx(), &B2ndCodec)
            .unwrap();
    let shipped = displayable(back.as_ref()).indent(true).to_string();
    assert!(shipped.contains("string filters=["), "{shipped}");
    let got = datafusion::physical_plan::collect(back, worker.task_ctx())
        .await
        .unwrap();
    let keep: Vec<i64> = (0..n)
        .filter(|&i| cat[i].is_some_and(|c| c.ends_with("ta")) && word[i].ends_with('9'))
        .map(|i| i as i64)
        .collect();
    assert_eq!(i64s(&got, 0), vec![Some(keep.len() as i64)]);
    assert_eq!(i64s(&got, 1), vec![Some(keep.iter().sum())]);
}
