//! SQL over tables and arrays behind HTTP (a file server on 127.0.0.1 started here in
//! process, and nginx as a second one): the same answers as from their files.
#![cfg(feature = "remote")]

#[path = "../../tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use b2nd_datafusion::B2ndTable;
use common::http::{FileServer, HttpServer, Nginx};
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;

async fn answer(spec_t: &str, spec_a: &str, q: &str) -> String {
    let ctx = SessionContext::new();
    ctx.register_table("t", Arc::new(B2ndTable::table(spec_t).unwrap()))
        .unwrap();
    ctx.register_table("a", Arc::new(B2ndTable::array(spec_a).unwrap()))
        .unwrap();
    let b = ctx.sql(q).await.unwrap().collect().await.unwrap();
    pretty_format_batches(&b).unwrap().to_string()
}

#[tokio::test]
async fn tables_and_arrays_over_http_answer_as_their_files() {
    over_http(&FileServer::start(&common::data_dir())).await;
}

#[tokio::test]
#[ignore = "needs nginx"]
async fn tables_and_arrays_from_nginx_answer_as_their_files() {
    over_http(&Nginx::start(&common::data_dir())).await;
}

async fn over_http(server: &dyn HttpServer) {
    let root = common::data_dir();
    let (t, a) = ("tables/basic.b2z", "codec_zstd_c1.b2nd");
    let local = (root.join(t), root.join(a));
    let local = (local.0.to_str().unwrap(), local.1.to_str().unwrap());
    let a_meta = b2nd::Array::open(local.1).unwrap();
    // A numeric array for the array half (the fixture named above must be one).
    assert!(a_meta.dtype().itemsize() > 0 && a_meta.nitems() == 200);
    for q in [
        "SELECT id, score, txt, tag FROM t WHERE id > 1 ORDER BY id",
        "SELECT tag, count(*), sum(id) FROM t GROUP BY tag ORDER BY tag",
        "SELECT count(*), sum(value), max(i0) FROM a WHERE value > 3",
    ] {
        let want = answer(local.0, local.1, q).await;
        let got = answer(&server.url(t), &server.url(a), q).await;
        assert_eq!(got, want, "{q}");
        assert!(want.lines().count() > 4, "{want}");
    }
}

/// Many files as one table in S3 (the in-process S3 server): a glob `s3://bucket/events/*.b2z`
/// and the prefix `s3://bucket/events/` (its `.b2z` and `.b2d` tables, listed through the
/// store) answer as the same files on disk.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_files_in_s3_answer_as_on_disk() {
    use common::http::{S3Server, S3};
    let s3 = S3::start();
    // The only test of this binary that sets the environment.
    s3.use_from_env();
    s3.bucket("data");
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    std::fs::create_dir(&events).unwrap();
    let mut start = 0i64;
    for (i, n) in [3000i64, 500, 7000].iter().enumerate() {
        let id: Vec<i64> = (start..start + n).collect();
        let x: Vec<f64> = id.iter().map(|&v| (v % 97) as f64 / 2.0).collect();
        let name = if i == 1 {
            "part-1.b2d".to_string()
        } else {
            format!("part-{i}.b2z")
        };
        b2nd::TableBuilder::new()
            .column("id", &id)
            .unwrap()
            .column("x", &x)
            .unwrap()
            .write(events.join(&name))
            .unwrap();
        start += n;
    }
    // Upload every file under `events/` (a .b2d is a directory of objects).
    for (path, body) in b2nd_testkit::snapshot(dir.path()) {
        let rel = path.strip_prefix(dir.path()).unwrap_or(&path);
        s3.put("data", rel.to_str().unwrap(), &body);
    }
    let q = "SELECT count(*), sum(id), min(x), max(x) FROM t";
    let answer = |spec: String| async move {
        let ctx = SessionContext::new();
        ctx.register_table("t", Arc::new(B2ndTable::table(&spec).unwrap()))
            .unwrap();
        let b = ctx.sql(q).await.unwrap().collect().await.unwrap();
        pretty_format_batches(&b).unwrap().to_string()
    };
    let local = events.display();
    for (remote, on_disk, rows) in [
        (
            "s3://data/events/*.b2z".to_string(),
            format!("{local}/*.b2z"),
            "| 10000 ",
        ),
        (
            "s3://data/events/".to_string(),
            format!("{local}/"),
            "| 10500 ",
        ),
    ] {
        let want = answer(on_disk).await;
        assert!(want.contains(rows), "{want}");
        assert_eq!(answer(remote.clone()).await, want, "{remote}");
    }
}
