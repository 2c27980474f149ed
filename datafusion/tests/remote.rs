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
