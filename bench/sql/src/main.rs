//! One SQL query timed over a b2nd table or a Parquet file, local or by URL, in this process:
//! each run opens the source in a fresh session (nothing cached between runs), runs the query
//! to the end and keeps the best wall time. Prints one JSON line: the times, the answer's row
//! count and first row (to check that every source gives the same answer) and the plan's
//! scan line.
//!
//! usage: b2nd-bench-sql (b2nd|parquet) SOURCES QUERY [RUNS] [PARTITIONS]
//!        b2nd-bench-sql decode TABLE_PATH COLUMNS [RUNS] [THREADS]
//!
//! SOURCES: `PATH_OR_URL` (the table `t`) or `NAME=PATH_OR_URL,NAME=...` (several tables).
//! Prints the best and the median time. `decode` times b2nd reading the comma-separated
//! COLUMNS of a local table whole as raw bytes (open included, no SQL), in ranges of
//! [`DECODE_BLOCKS`] blocks into one reused buffer per column: what a query that reads those
//! columns pays for the file's codec alone.

use std::sync::Arc;

use std::time::Instant;

use datafusion::arrow::util::display::array_value_to_string;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: b2nd-bench-sql (b2nd|parquet) SOURCES QUERY [RUNS] [PARTITIONS]");
        std::process::exit(2);
    }
    let (kind, sources, query) = (&args[1], &args[2], &args[3]);
    if kind == "decode" {
        return decode(sources, query, &args[4..]);
    }
    let sources: Vec<(String, String)> = sources
        .split(',')
        .map(|s| match s.split_once('=') {
            Some((name, loc)) if !name.contains('/') && !name.contains(':') => {
                (name.to_string(), loc.to_string())
            }
            _ => ("t".to_string(), s.to_string()),
        })
        .collect();
    let runs: usize = args.get(4).map_or(Ok(3), |s| s.parse())?;
    let parts: usize = args.get(5).map_or(Ok(2), |s| s.parse())?;
    let mut best = f64::INFINITY;
    let mut times = Vec::new();
    let mut first_row = Vec::new();
    let mut n_rows = 0;
    let mut scan = String::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let ctx =
            SessionContext::new_with_config(SessionConfig::new().with_target_partitions(parts));
        for (name, loc) in &sources {
            match kind.as_str() {
                "b2nd" => {
                    let loc = loc.clone();
                    let t = tokio::task::spawn_blocking(move || {
                        b2nd_datafusion::B2ndTable::table(&loc)
                    })
                    .await??;
                    ctx.register_table(name.as_str(), Arc::new(t))?;
                }
                "parquet" => {
                    if let Some(rest) = loc.strip_prefix("http://") {
                        let host = rest.split('/').next().unwrap_or_default();
                        let base = url::Url::parse(&format!("http://{host}"))?;
                        let store = object_store::http::HttpBuilder::new()
                            .with_url(base.as_str())
                            .with_client_options(
                                object_store::ClientOptions::new().with_allow_http(true),
                            )
                            .build()?;
                        ctx.register_object_store(&base, Arc::new(store));
                    }
                    ctx.register_parquet(name.as_str(), loc, ParquetReadOptions::default())
                        .await?;
                }
                other => return Err(format!("unknown source kind {other}").into()),
            }
        }
        let df = ctx.sql(query).await?;
        let plan = df.clone().create_physical_plan().await?;
        let batches = datafusion::physical_plan::collect(plan.clone(), ctx.task_ctx()).await?;
        let dt = t0.elapsed().as_secs_f64();
        times.push(dt);
        best = best.min(dt);
        n_rows = batches.iter().map(|b| b.num_rows()).sum::<usize>();
        first_row = match batches.iter().find(|b| b.num_rows() > 0) {
            Some(b) => (0..b.num_columns())
                .map(|c| array_value_to_string(b.column(c), 0).unwrap_or_default())
                .collect(),
            None => Vec::new(),
        };
        let shown = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(false)
            .to_string();
        scan = shown
            .lines()
            .find(|l| l.contains("B2ndScanExec") || l.contains("DataSourceExec"))
            .unwrap_or_default()
            .trim()
            .chars()
            .take(300)
            .collect();
    }
    let median = median(&times);
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    println!(
        "{{\"best\": {best:.6}, \"median\": {median:.6}, \"times\": [{}], \"rows\": {n_rows}, \"row\": [{}], \"scan\": {}}}",
        times
            .iter()
            .map(|t| format!("{t:.6}"))
            .collect::<Vec<_>>()
            .join(", "),
        first_row
            .iter()
            .map(|s| q(s))
            .collect::<Vec<_>>()
            .join(", "),
        q(&scan)
    );
    Ok(())
}

/// The median of `times`.
fn median(times: &[f64]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Whole blocks per read of `decode` (buffers stay small, no block is decoded twice).
const DECODE_BLOCKS: u64 = 4;

/// `decode`: the table at `path` opened and its `columns` read whole, `RUNS` times on
/// `THREADS` threads; prints the best and median times and the bytes read.
fn decode(path: &str, columns: &str, rest: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let runs: usize = rest.first().map_or(Ok(3), |s| s.parse())?;
    let threads: usize = rest.get(1).map_or(Ok(2), |s| s.parse())?;
    let pool = b2nd::Threads::count(threads)?;
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..runs {
        let t0 = Instant::now();
        let t = b2nd::Table::open(path)?.with_threads(pool.clone());
        bytes = 0;
        let n = t.n_rows();
        for c in columns.split(',') {
            let step = t.column_array(c)?.blocks()[0] * DECODE_BLOCKS;
            let mut buf = Vec::new();
            for a in (0..n).step_by(step as usize) {
                t.read_rows_bytes_into(c, a..(a + step).min(n), &mut buf)?;
                bytes += buf.len();
            }
        }
        times.push(t0.elapsed().as_secs_f64());
    }
    let best = times.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "{{\"best\": {best:.6}, \"median\": {:.6}, \"bytes\": {bytes}}}",
        median(&times)
    );
    Ok(())
}
