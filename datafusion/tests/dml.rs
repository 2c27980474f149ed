//! SQL that changes tables: `INSERT INTO ... VALUES / SELECT`, `DELETE FROM ... [WHERE]`,
//! `UPDATE ... SET ... [WHERE]` and `TRUNCATE` through DataFusion's DML hooks on a python-blosc2 table
//! (`tests/data/tables/mutable.b2d`) and on one b2nd writes; each statement's count, the
//! rows b2nd reads afterwards (in the same session too), statements that must change exactly
//! the matching rows or nothing (subqueries, always-false predicates, NULLs, EXPLAIN), and
//! refusals that change no byte.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use b2nd::Table;
use b2nd_datafusion::B2ndTable;
use b2nd_testkit::{copy_tree, snapshot};
use datafusion::arrow::array::AsArray;
use datafusion::arrow::datatypes::UInt64Type;
use datafusion::prelude::SessionContext;

/// What `sql` answers, as a text table.
async fn table_text(ctx: &SessionContext, sql: &str) -> String {
    let b = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    datafusion::arrow::util::pretty::pretty_format_batches(&b)
        .unwrap()
        .to_string()
}

fn fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let to = tmp.path().join(name);
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/data/tables")
            .join(name),
        &to,
    );
    (tmp, to)
}

fn ctx_with(path: &Path, writes: bool) -> SessionContext {
    let ctx = b2nd_datafusion::session_context(Default::default());
    let t = B2ndTable::table(path.to_str().unwrap())
        .unwrap()
        .with_writes(writes);
    ctx.register_table("t", Arc::new(t)).unwrap();
    ctx
}

/// The statement's `count`.
async fn run(ctx: &SessionContext, q: &str) -> u64 {
    let b = ctx.sql(q).await.unwrap().collect().await.unwrap();
    assert_eq!(b.len(), 1, "{q}");
    b[0].column(0).as_primitive::<UInt64Type>().value(0)
}

async fn fails(ctx: &SessionContext, q: &str) -> String {
    match ctx.sql(q).await {
        Err(e) => e.to_string(),
        Ok(df) => df.collect().await.unwrap_err().to_string(),
    }
}

async fn ids_sql(ctx: &SessionContext) -> Vec<i64> {
    let b = ctx
        .sql("SELECT id FROM t ORDER BY id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    b.iter()
        .flat_map(|b| {
            b.column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

fn ids(path: &Path) -> Vec<i64> {
    Table::open(path).unwrap().read_column("id").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_and_deletes_change_the_table() {
    let (_tmp, path) = fixture("mutable.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(ids(&path), [0, 2, 3, 4, 5, 6, 7]);

    // Every column given, NULLs of both storages, a timestamp literal.
    let n = run(
        &ctx,
        "INSERT INTO t VALUES \
         (100, TIMESTAMP '2026-01-02T03:04:05.006', NULL, 'ab', 1, NULL, 0.5, true, 9), \
         (101, TIMESTAMP '1970-01-01T00:00:00.001', 2.5, 'üb', NULL, 7, NULL, false, 255)",
    )
    .await;
    assert_eq!(n, 2);
    let t = Table::open(&path).unwrap();
    assert_eq!(t.read_column::<i64>("id").unwrap()[7..], [100, 101]);
    assert_eq!(
        t.read_column::<i64>("when").unwrap()[7..],
        [1_767_323_045_006, 1]
    );
    assert_eq!(
        t.read_column_opt::<f64>("score").unwrap()[7..],
        [None, Some(2.5)]
    );
    assert_eq!(
        t.read_column_opt::<i16>("sent").unwrap()[7..],
        [None, Some(7)]
    );
    assert_eq!(
        t.read_column_opt::<f32>("fsent").unwrap()[7..],
        [Some(0.5), None]
    );
    assert_eq!(
        t.read_strings("name").unwrap()[7..],
        [Some("ab".into()), Some("üb".into())]
    );
    // The session sees the change.
    assert_eq!(ids_sql(&ctx).await, [0, 2, 3, 4, 5, 6, 7, 100, 101]);

    // A column list: the others take the defaults the table declares (name "", flag false,
    // small 7) or NULL.
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, \"when\") VALUES (102, TIMESTAMP '2000-01-01')"
        )
        .await,
        1
    );
    let t = Table::open(&path).unwrap();
    assert_eq!(t.read_strings("name").unwrap()[9], Some(String::new()));
    assert_eq!(t.read_column::<u8>("small").unwrap()[9], 7);
    assert!(!t.read_column::<bool>("flag").unwrap()[9]);
    assert_eq!(t.read_column_opt::<i32>("opt").unwrap()[9], None);

    // INSERT ... SELECT from the same table reads it as it was.
    assert_eq!(
        run(&ctx, "INSERT INTO t SELECT id + 1000, \"when\", score, name, opt, sent, fsent, flag, small FROM t WHERE id < 4").await,
        3
    );
    assert_eq!(ids(&path)[10..], [1000, 1002, 1003]);

    // DELETE: exactly the rows where the predicate is true; a NULL keeps the row.
    let before = ids(&path);
    assert_eq!(run(&ctx, "DELETE FROM t WHERE score > 5").await, 4);
    let t = Table::open(&path).unwrap();
    let scores = t.read_column_opt::<f64>("score").unwrap();
    assert!(
        scores.iter().all(|s| s.is_none_or(|s| s <= 5.0)),
        "{scores:?}"
    );
    assert!(scores.contains(&None), "rows with a NULL score stay");
    assert_eq!(t.n_rows() as usize, before.len() - 4);
    assert_eq!(ids_sql(&ctx).await.len(), before.len() - 4);

    // An always-false predicate deletes nothing, and changes no byte.
    let snap = snapshot(&path);
    assert_eq!(run(&ctx, "DELETE FROM t WHERE 1 = 0").await, 0);
    assert_eq!(run(&ctx, "DELETE FROM t WHERE id > 5000").await, 0);

    // EXPLAIN plans the change without making it.
    ctx.sql("EXPLAIN DELETE FROM t")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    ctx.sql("EXPLAIN INSERT INTO t (id, \"when\") VALUES (1, TIMESTAMP '2000-01-01')")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(snapshot(&path) == snap, "a change without one");

    // A WHERE with a subquery reaches DataFusion 55's DELETE hook as a join whose predicates
    // it drops or takes from the wrong scan: refused before any change.
    let snap = snapshot(&path);
    for q in [
        "DELETE FROM t WHERE id IN (SELECT id FROM t WHERE id >= 1000)",
        "DELETE FROM t WHERE name IN (SELECT name FROM t WHERE id = 3)",
        "DELETE FROM t WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.id = t.id + 1)",
        "DELETE FROM t WHERE id = (SELECT max(id) FROM t)",
    ] {
        let e = fails(&ctx, q).await;
        assert!(
            e.contains("b2nd refuses it (nothing was changed)"),
            "{q}: {e}"
        );
    }
    assert!(
        snapshot(&path) == snap,
        "a refused DELETE changed the table"
    );
    // Outside b2nd's session DataFusion's planner cannot be trusted with DELETE.
    let plain = SessionContext::new();
    let t = B2ndTable::table(path.to_str().unwrap())
        .unwrap()
        .with_writes(true);
    plain.register_table("t", Arc::new(t)).unwrap();
    let e = fails(&plain, "DELETE FROM t WHERE 1 = 0").await;
    assert!(
        e.contains("run it in b2nd_datafusion::session_context"),
        "{e}"
    );
    assert!(snapshot(&path) == snap);

    // TRUNCATE deletes every row.
    let left = ids(&path).len() as u64;
    assert_eq!(run(&ctx, "TRUNCATE TABLE t").await, left);
    assert!(ids(&path).is_empty());
    assert!(ids_sql(&ctx).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_statements_change_no_byte() {
    let (_tmp, path) = fixture("mutable.b2d");
    let snap = snapshot(&path);
    // Read-only unless asked.
    let ro = ctx_with(&path, false);
    for q in [
        "INSERT INTO t (id, \"when\") VALUES (1, TIMESTAMP '2000-01-01')",
        "DELETE FROM t WHERE id = 2",
        "UPDATE t SET id = 3 WHERE id = 2",
        "TRUNCATE TABLE t",
    ] {
        let e = fails(&ro, q).await;
        assert!(e.contains("the table was opened read-only"), "{q}: {e}");
    }
    let ctx = ctx_with(&path, true);
    for (q, want) in [
        // NULL into a column that is not nullable.
        (
            "INSERT INTO t (\"when\") VALUES (TIMESTAMP '2000-01-01')",
            "not nullable",
        ),
        // Longer than the column's max_length.
        (
            "INSERT INTO t (id, \"when\", name) VALUES (1, TIMESTAMP '2000-01-01', 'abcdefg')",
            "max_length 6",
        ),
        ("INSERT INTO t (id, nope) VALUES (1, 2)", "nope"),
        ("UPDATE t SET id = NULL", "not nullable"),
        ("UPDATE t SET name = 'abcdefg' WHERE id = 2", "max_length 6"),
        ("UPDATE t SET nope = 1", "nope"),
    ] {
        let e = fails(&ctx, q).await;
        assert!(e.contains(want), "{q}: {want:?} not in {e}");
    }
    assert!(
        snapshot(&path) == snap,
        "a refused statement changed the table"
    );
    // A table in a zip changes too: the zip is packed anew.
    let tmp = tempfile::tempdir().unwrap();
    let zip = tmp.path().join("basic.b2z");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/tables/basic.b2z"),
        &zip,
    )
    .unwrap();
    let before = b2nd::Table::open(&zip).unwrap().n_rows();
    let z = b2nd_datafusion::session_context(Default::default());
    let t = B2ndTable::table(zip.to_str().unwrap())
        .unwrap()
        .with_writes(true);
    z.register_table("t", Arc::new(t)).unwrap();
    assert_eq!(run(&z, "DELETE FROM t WHERE id = 0").await, 1);
    assert_eq!(b2nd::Table::open(&zip).unwrap().n_rows(), before - 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_b2nd_writes_takes_sql_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.b2d");
    b2nd::TableBuilder::new()
        .column("id", &[1i64, 2, 3])
        .unwrap()
        .nullable_column("x", &[0.5f64, 0.0, 1.5], &[true, false, true])
        .unwrap()
        .write(&path)
        .unwrap();
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(&ctx, "INSERT INTO t VALUES (4, NULL), (5, 2.5)").await,
        2
    );
    assert_eq!(run(&ctx, "DELETE FROM t WHERE x IS NULL").await, 2);
    let t = Table::open(&path).unwrap();
    assert_eq!(t.read_column::<i64>("id").unwrap(), [1, 3, 5]);
    assert_eq!(
        t.read_column_opt::<f64>("x").unwrap(),
        [Some(0.5), Some(1.5), Some(2.5)]
    );
}

/// The fixture's rows as b2nd reads them: id, score, opt, name, small.
type Snapshot = (
    Vec<i64>,
    Vec<Option<f64>>,
    Vec<Option<i32>>,
    Vec<Option<String>>,
    Vec<u8>,
);

fn columns(path: &Path) -> Snapshot {
    let t = Table::open(path).unwrap();
    (
        t.read_column("id").unwrap(),
        t.read_column_opt("score").unwrap(),
        t.read_column_opt("opt").unwrap(),
        t.read_strings("name").unwrap(),
        t.read_column("small").unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_change_exactly_the_matching_rows() {
    let (_tmp, path) = fixture("mutable.b2d");
    let ctx = ctx_with(&path, true);
    let (id, mut score, mut opt, mut name, mut small) = columns(&path);
    assert_eq!(id, [0, 2, 3, 4, 5, 6, 7]);

    // New values from the old ones and NULLs, on the rows the WHERE selects.
    let n = run(
        &ctx,
        "UPDATE t SET score = score * 2, opt = NULL, name = 'upd' WHERE id >= 4",
    )
    .await;
    assert_eq!(n, 4);
    for i in 3..7 {
        score[i] = score[i].map(|s| s * 2.0);
        opt[i] = None;
        name[i] = Some("upd".into());
    }
    assert_eq!(
        columns(&path),
        (
            id.clone(),
            score.clone(),
            opt.clone(),
            name.clone(),
            small.clone()
        )
    );
    // The session reads the change.
    let b = ctx
        .sql("SELECT count(*) FROM t WHERE name = 'upd' AND opt IS NULL")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        b[0].column(0)
            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
            .value(0),
        4
    );

    // A predicate that is NULL for a row leaves the row as it is.
    assert!(score.contains(&None));
    let hits = score.iter().filter(|s| s.is_some_and(|s| s > 1.0)).count() as u64;
    assert_eq!(
        run(&ctx, "UPDATE t SET small = small + 1 WHERE score > 1.0").await,
        hits
    );
    for (s, v) in score.iter().zip(&mut small) {
        if s.is_some_and(|s| s > 1.0) {
            *v += 1;
        }
    }
    assert_eq!(columns(&path).4, small);
    // Without a WHERE: every row.
    assert_eq!(run(&ctx, "UPDATE t SET opt = 5").await, 7);
    assert_eq!(columns(&path).2, vec![Some(5); 7]);

    // Nothing matches: nothing changes, not a byte.
    let snap = snapshot(&path);
    assert_eq!(run(&ctx, "UPDATE t SET opt = 1 WHERE 1 = 0").await, 0);
    assert_eq!(run(&ctx, "UPDATE t SET opt = 1 WHERE id > 5000").await, 0);
    assert!(snapshot(&path) == snap, "an UPDATE of no row changed bytes");

    // Subqueries in the WHERE or in a value, and UPDATE ... FROM: refused before any change.
    for q in [
        "UPDATE t SET opt = 1 WHERE id IN (SELECT id FROM t WHERE id >= 4)",
        "UPDATE t SET opt = 1 WHERE EXISTS (SELECT 1 FROM t AS u WHERE u.id = t.id + 1)",
        "UPDATE t SET id = (SELECT max(id) FROM t)",
        "UPDATE t SET opt = 1 FROM t AS u WHERE u.id = t.id + 1",
    ] {
        let e = fails(&ctx, q).await;
        assert!(
            e.contains("b2nd refuses it (nothing was changed)") || e.contains("not supported"),
            "{q}: {e}"
        );
    }
    assert!(
        snapshot(&path) == snap,
        "a refused UPDATE changed the table"
    );
    // Outside b2nd's session DataFusion's planner cannot be trusted with UPDATE.
    let plain = SessionContext::new();
    let t = B2ndTable::table(path.to_str().unwrap())
        .unwrap()
        .with_writes(true);
    plain.register_table("t", Arc::new(t)).unwrap();
    let e = fails(&plain, "UPDATE t SET opt = 1 WHERE 1 = 0").await;
    assert!(
        e.contains("run it in b2nd_datafusion::session_context"),
        "{e}"
    );
    assert!(snapshot(&path) == snap);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_go_to_utf8_columns() {
    // utf8.b2d (python-written): utf8 columns with nulls in a mask (`txt`), by sentinel
    // (`tag`) and none (`note`, default ""); its deleted last row's strings still stored.
    let (_tmp, path) = fixture("utf8.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, txt, tag) VALUES (7, 'sept', NULL), (8, NULL, 'h')"
        )
        .await,
        2
    );
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t SELECT id + 10, txt, tag, note FROM t WHERE id < 3"
        )
        .await,
        2
    );
    let e = fails(&ctx, "INSERT INTO t (id, note) VALUES (9, NULL)").await;
    assert!(e.contains("not nullable"), "{e}");
    let got = table_text(&ctx, "SELECT id, txt, tag, note FROM t ORDER BY id").await;
    let want = "\
+----+------+-----+------+
| id | txt  | tag | note |
+----+------+-----+------+
| 0  | a    | x   | n0   |
| 2  | ccc  |     | n2   |
| 3  | dé   | x   | n3   |
| 4  |      | z   | n4   |
| 7  | sept |     |      |
| 8  |      | h   |      |
| 10 | a    | x   | n0   |
| 12 | ccc  |     | n2   |
+----+------+-----+------+";
    assert_eq!(got, want);
    let t = Table::open(&path).unwrap();
    assert_eq!(
        t.read_strings("tag").unwrap(),
        [
            Some("x"),
            None,
            Some("x"),
            Some("z"),
            None,
            Some("h"),
            Some("x"),
            None
        ]
        .map(|v| v.map(str::to_string))
    );
    assert_eq!(t.read_strings("txt").unwrap()[5], None);

    // UPDATE of utf8 columns: longer, NULL, and through the sentinel.
    assert_eq!(
        run(
            &ctx,
            "UPDATE t SET txt = txt || '!!', tag = NULL WHERE id IN (0, 10)"
        )
        .await,
        2
    );
    assert_eq!(run(&ctx, "UPDATE t SET txt = NULL WHERE id = 3").await, 1);
    let t = Table::open(&path).unwrap();
    assert_eq!(
        t.read_strings("txt").unwrap(),
        [
            Some("a!!"),
            Some("ccc"),
            None,
            None,
            Some("sept"),
            None,
            Some("a!!"),
            Some("ccc")
        ]
        .map(|v| v.map(str::to_string))
    );
    assert_eq!(t.read_strings("tag").unwrap()[0], None);
    assert_eq!(t.read_strings("tag").unwrap()[6], None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_and_updates_go_to_dictionary_columns() {
    // dictionary.b2d (python-written): `cat` (nullable; red, blue, green) and `tag`
    // (default "a"); deleted rows among them. New values join the dictionary.
    let (_tmp, path) = fixture("dictionary.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, cat) VALUES (7, 'violet'), (8, NULL), (9, 'red')"
        )
        .await,
        3
    );
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t SELECT id + 10, cat, 'new' FROM t WHERE id < 3"
        )
        .await,
        2
    );
    let e = fails(&ctx, "INSERT INTO t (id, tag) VALUES (1, NULL)").await;
    assert!(e.contains("not nullable"), "{e}");
    assert_eq!(
        run(
            &ctx,
            "UPDATE t SET cat = 'pink' WHERE cat = 'red' AND id BETWEEN 5 AND 9"
        )
        .await,
        1
    );
    let got = table_text(&ctx, "SELECT id, cat, tag FROM t ORDER BY id").await;
    let want = "\
+----+--------+-----+
| id | cat    | tag |
+----+--------+-----+
| 0  | red    | a   |
| 2  | blue   | a   |
| 3  | red    | c   |
| 4  | green  | b   |
| 7  | violet | a   |
| 8  |        | a   |
| 9  | pink   | a   |
| 10 | red    | new |
| 12 | blue   | new |
+----+--------+-----+";
    assert_eq!(got, want);
    let t = Table::open(&path).unwrap();
    assert_eq!(
        t.read_values("cat").unwrap()[5],
        b2nd::Value::Nil,
        "a NULL is the null code"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_and_updates_go_to_list_struct_and_bytes_columns() {
    // varlen.b2d (python-written): list<int32>, vlstring, vlbytes and struct columns, one
    // msgpack item per row; python keeps the deleted last row's items past the live rows.
    use b2nd::Value;
    let (_tmp, path) = fixture("varlen.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, items, vs, vb, st) VALUES \
             (10, NULL, 'ñ', X'0102', named_struct('x', 10, 'y', 'ten'))"
        )
        .await,
        1
    );
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, items, vs, vb, st) SELECT id + 100, items, vs, vb, st FROM t \
             WHERE id < 3"
        )
        .await,
        2
    );
    assert_eq!(
        run(&ctx, "UPDATE t SET items = NULL, vs = 'up' WHERE id = 3").await,
        1
    );
    let e = fails(
        &ctx,
        "INSERT INTO t (id, st) VALUES (12, named_struct('x', 1, 'y', 'toolong'))",
    )
    .await;
    assert!(e.contains("exceeds max_length=4"), "{e}");
    let t = Table::open(&path).unwrap();
    let ints = |v: &[i64]| Value::Array(v.iter().map(|&x| Value::Int(x)).collect());
    assert_eq!(
        t.read_values("items").unwrap(),
        [
            ints(&[1, 2]),
            ints(&[]),
            Value::Nil,
            ints(&[4, 5, 6]),
            Value::Nil,
            ints(&[1, 2]),
            ints(&[])
        ]
    );
    assert_eq!(t.read_values("vs").unwrap()[2], Value::Str("up".into()));
    assert_eq!(t.read_values("vb").unwrap()[4], Value::Bytes(vec![1, 2]));
    assert_eq!(
        t.read_values("st").unwrap()[4],
        Value::Map(vec![
            (Value::Str("x".into()), Value::Int(10)),
            (Value::Str("y".into()), Value::Str("ten".into()))
        ])
    );
    assert_eq!(
        t.read_values("st").unwrap()[5],
        t.read_values("st").unwrap()[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_fill_generated_columns() {
    // generated.b2d (python-written): `twice` = id * 2 + small, generated; its schema
    // default (0) is not its value.
    let (_tmp, path) = fixture("generated.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, small, x) VALUES (10, 1, 0.25), (11, 255, 4)"
        )
        .await,
        2
    );
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, small, x, twice) VALUES (12, 2, 1, -1)"
        )
        .await,
        1
    );
    // A dependency left out takes its declared default in SQL (DataFusion fills it before
    // the row reaches b2nd), and the generated value follows the row's values.
    assert_eq!(run(&ctx, "INSERT INTO t (id, x) VALUES (13, 1)").await, 1);
    let t = Table::open(&path).unwrap();
    assert_eq!(
        t.read_column::<i64>("twice").unwrap(),
        [0, 10, 15, 20, 21, 277, -1, 33]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inserts_and_updates_go_to_ndarray_and_arrow_list_columns() {
    use b2nd::Value;
    // basic.b2d: `vec`, an ndarray column of two uint8 per row, read as a fixed-size list.
    let (_tmp, path) = fixture("basic.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(run(&ctx, "UPDATE t SET vec = [7, 8] WHERE id = 0").await, 1);
    let n = Table::open(&path).unwrap().n_rows();
    assert_eq!(
        run(&ctx, "INSERT INTO t SELECT * FROM t WHERE id = 0").await,
        1
    );
    let e = fails(&ctx, "UPDATE t SET vec = [7, 300] WHERE id = 0").await;
    assert!(e.contains("not a |u1 item") || e.contains("300"), "{e}");
    let t = Table::open(&path).unwrap();
    assert_eq!(t.n_rows(), n + 1);
    let (_, shape, vec) = t.read_column_bytes("vec").unwrap();
    assert_eq!(shape, [n + 1, 2]);
    assert_eq!(vec[..2], [7, 8]);
    assert_eq!(vec[vec.len() - 2..], [7, 8]);
    // arrow_lists.b2d: list columns python serialized as Arrow.
    let (_tmp2, path) = fixture("arrow_lists.b2d");
    let ctx = ctx_with(&path, true);
    assert_eq!(
        run(
            &ctx,
            "INSERT INTO t (id, li, ls, lf, lst) VALUES \
             (6, [9, -1], ['x'], [2.5, NULL], [named_struct('x', 5, 'y', 's')])"
        )
        .await,
        1
    );
    assert_eq!(run(&ctx, "UPDATE t SET li = [42] WHERE id = 1").await, 1);
    let t = Table::open(&path).unwrap();
    let li = t.read_values("li").unwrap();
    assert_eq!(li[0], Value::Array(vec![Value::Int(42)]));
    assert_eq!(li[4], Value::Array(vec![Value::Int(9), Value::Int(-1)]));
    assert_eq!(
        t.read_values("lf").unwrap()[4],
        Value::Array(vec![Value::Float(2.5), Value::Nil])
    );
    assert_eq!(
        table_text(&ctx, "SELECT id, li FROM t WHERE id > 3 ORDER BY id").await,
        "+----+---------+\n| id | li      |\n+----+---------+\n| 4  | [3, ]   |\n| 5  | [7]     |\n| 6  | [9, -1] |\n+----+---------+"
    );
}
