//! b2nd and b2nd-datafusion used from a new project, as a user's program would: an array
//! read (typed, as an ndarray, by a slice), an array written and read back, a CTable as an
//! Arrow record batch, SQL with LIMIT over a 2-d array and over a table, and a URL read
//! inside `#[tokio::main]` (sync and async calls alike).
//!
//! `cargo run -- DATA_DIR [BASE_URL]`: `DATA_DIR` is b2nd's `tests/data`; `BASE_URL` an HTTP
//! server of that directory (`.ci/run` starts nginx for it). Every step checks its answer
//! and the program exits non-zero on the first that differs.

use std::path::PathBuf;
use std::sync::Arc;

use b2nd::{Array, ArrayBuilder, SliceItem, Table, Target};
use b2nd_datafusion::B2ndTable;
use datafusion::prelude::SessionContext;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Fails with `what` unless `ok`.
fn check(ok: bool, what: &str) -> Result<()> {
    if ok {
        println!("ok: {what}");
        Ok(())
    } else {
        Err(format!("differs: {what}").into())
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let data = PathBuf::from(
        args.next()
            .ok_or("usage: b2nd-example-project DATA_DIR [BASE_URL]")?,
    );
    let base_url = args.next();

    // Reads: a 2-d float64 array python-blosc2 wrote (7 columns, ragged chunks).
    let path = data.join("f8_2d_ragged.b2nd");
    let a = Array::open(&path)?;
    let values: Vec<f64> = a.read()?;
    let nd: ndarray::Array2<f64> = a.read_ndarray_dim()?;
    check(
        nd.shape().iter().map(|&n| n as u64).collect::<Vec<_>>() == a.shape()
            && nd
                .iter()
                .map(|v| v.to_bits())
                .eq(values.iter().map(|v| v.to_bits())),
        "typed and ndarray reads agree",
    )?;
    let rows: Vec<f64> = a.read_slice(&[SliceItem::from(2usize..5), SliceItem::from(..)])?;
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    check(
        bits(&rows) == bits(&values[2 * 7..5 * 7]),
        "a slice of rows",
    )?;

    // Writes: the ndarray written as a new array, read back.
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("copy.b2nd");
    ArrayBuilder::from_ndarray(&nd)
        .chunks(&[8, 7])
        .write_ndarray(Target::File(out.clone()), &nd)?;
    let back: ndarray::Array2<f64> = Array::open(&out)?.read_ndarray_dim()?;
    check(
        back.shape() == nd.shape()
            && bits(back.as_slice().unwrap()) == bits(nd.as_slice().unwrap()),
        "an array written and read back",
    )?;

    // A CTable as Arrow.
    let table_path = data.join("tables/basic.b2z");
    let t = Table::open(&table_path)?;
    let batch = t.to_record_batch()?;
    check(
        batch.num_rows() as u64 == t.n_rows() && batch.num_columns() >= 4,
        "a CTable as an Arrow record batch",
    )?;

    // SQL with LIMIT over the 2-d array (one row per element) and over the table.
    let ctx = SessionContext::new();
    ctx.register_table(
        "a",
        Arc::new(B2ndTable::array(path.to_str().ok_or("path")?)?),
    )?;
    ctx.register_table(
        "t",
        Arc::new(B2ndTable::table(table_path.to_str().ok_or("path")?)?),
    )?;
    for (q, n) in [
        ("SELECT * FROM a LIMIT 3", 3),
        ("SELECT * FROM a LIMIT 10 OFFSET 5", 10),
        ("SELECT id FROM t ORDER BY id LIMIT 2", 2),
    ] {
        let got: usize = ctx
            .sql(q)
            .await?
            .collect()
            .await?
            .iter()
            .map(|b| b.num_rows())
            .sum();
        check(got == n, &format!("{q}: {got} rows"))?;
    }

    // A URL inside #[tokio::main]: the sync API and the async one.
    if let Some(base) = base_url {
        let url = format!("{}/f8_2d_ragged.b2nd", base.trim_end_matches('/'));
        let remote = Array::open_url(&url)?;
        check(
            bits(&remote.read::<f64>()?) == bits(&values),
            "a sync URL read inside the runtime",
        )?;
        let remote = Arc::new(Array::open_url_async(&url, b2nd::RemoteOptions::new()).await?);
        let part = remote
            .read_slice_async::<f64>(vec![SliceItem::from(2usize..5), SliceItem::from(..)])
            .await?;
        check(bits(&part) == bits(&rows), "an async URL slice read")?;
    } else {
        println!("no BASE_URL given: the URL reads were not run");
    }
    Ok(())
}
