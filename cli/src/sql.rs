//! `b2nd sql`: a SQL query over tables and arrays with DataFusion (`b2nd-datafusion`), in
//! builds with the `sql` feature; without it, the same options and an error saying how to
//! get it.

#[cfg(feature = "sql")]
use std::io::Write;
#[cfg(feature = "sql")]
use std::sync::Arc;

#[cfg(feature = "sql")]
use b2nd_datafusion::B2ndTable;
#[cfg(feature = "sql")]
use datafusion::arrow::record_batch::RecordBatch;
#[cfg(feature = "sql")]
use datafusion::prelude::SessionConfig;

/// One `NAME=PATH` of `--table` / `--array`.
#[derive(Clone, Debug)]
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
pub(crate) struct Named {
    pub name: String,
    pub spec: String,
}

/// Parse `NAME=PATH` (PATH may be `PATH#KEY`, a member of a store).
pub(crate) fn parse_named(s: &str) -> Result<Named, String> {
    match s.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok(Named {
            name: n.to_string(),
            spec: p.to_string(),
        }),
        _ => Err(format!("{s:?} is not NAME=PATH")),
    }
}

/// How results are printed.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Format {
    /// An aligned text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per row (JSON lines).
    Json,
}

/// How a query runs and prints.
#[derive(Debug)]
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
pub(crate) struct Run {
    /// Output format.
    pub format: Format,
    /// Threads (partitions and workers).
    pub threads: Option<usize>,
    /// Whether the query may change tables.
    pub write: bool,
    /// The Ballista scheduler to run it on (`df://HOST:PORT`).
    pub cluster: Option<String>,
}

/// Refuse: this build has no SQL engine.
#[cfg(not(feature = "sql"))]
pub(crate) fn run(
    _query: &str,
    _tables: &[Named],
    _arrays: &[Named],
    _run: Run,
) -> Result<(), Box<dyn std::error::Error>> {
    Err(
        "this b2nd was built without SQL: build it with `cargo build --release --features sql`"
            .into(),
    )
}

/// Run `query` over the named tables and arrays and print its result.
#[cfg(feature = "sql")]
pub(crate) fn run(
    query: &str,
    tables: &[Named],
    arrays: &[Named],
    run: Run,
) -> Result<(), Box<dyn std::error::Error>> {
    let Run {
        format,
        threads,
        write,
        cluster,
    } = run;
    if cluster.is_some() && write {
        return Err("--write runs here, not on a cluster: drop --cluster to change tables".into());
    }
    let cores = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // Timers and I/O: a cluster's client talks gRPC.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_all()
        .build()?;
    let batches = rt
        .block_on(async {
            let ctx = match &cluster {
                Some(url) => cluster_context(url).await?,
                None => b2nd_datafusion::session_context(
                    SessionConfig::new().with_target_partitions(cores),
                ),
            };
            for t in tables {
                let table = B2ndTable::any(&t.spec)?.with_writes(write);
                ctx.register_table(t.name.as_str(), Arc::new(table))?;
            }
            for a in arrays {
                ctx.register_table(a.name.as_str(), Arc::new(B2ndTable::array(&a.spec)?))?;
            }
            ctx.sql(query).await?.collect().await
        })
        .map_err(one_line)?;
    print(&batches, format)
}

/// A session whose queries run on the Ballista cluster at `url`.
#[cfg(feature = "cluster")]
async fn cluster_context(
    url: &str,
) -> datafusion::error::Result<datafusion::prelude::SessionContext> {
    b2nd_ballista::connect(url).await
}

/// Refuse: this build has no cluster client.
#[cfg(all(feature = "sql", not(feature = "cluster")))]
async fn cluster_context(
    url: &str,
) -> datafusion::error::Result<datafusion::prelude::SessionContext> {
    Err(datafusion::error::DataFusionError::Plan(format!(
        "--cluster {url}: this b2nd was built without the cluster client: build it with \
         `cargo build --release --features cluster`"
    )))
}

#[cfg(feature = "sql")]
/// DataFusion's message on one line, without its "External error: " wrapping of b2nd's.
fn one_line(e: datafusion::error::DataFusionError) -> Box<dyn std::error::Error> {
    let e = e.find_root();
    let msg = match e {
        datafusion::error::DataFusionError::External(inner) => inner.to_string(),
        other => other.to_string(),
    };
    msg.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .into()
}

#[cfg(feature = "sql")]
fn print(batches: &[RecordBatch], format: Format) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match format {
        Format::Table => {
            let t = datafusion::arrow::util::pretty::pretty_format_batches(batches)?;
            writeln!(out, "{t}")?;
        }
        Format::Csv => {
            let mut w = datafusion::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            for b in batches {
                w.write(b)?;
            }
        }
        Format::Json => {
            let mut w = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
            let refs: Vec<&RecordBatch> = batches.iter().collect();
            w.write_batches(&refs)?;
            w.finish()?;
        }
    }
    out.flush()?;
    Ok(())
}
