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
    /// The file the result goes to, in the format its extension names (else standard
    /// output, in `format`).
    pub output: Option<std::path::PathBuf>,
    /// Threads (partitions and workers).
    pub threads: Option<usize>,
    /// Whether the query may change tables.
    pub write: bool,
    /// The Ballista scheduler to run it on (`df://HOST:PORT`).
    pub cluster: Option<String>,
}

/// The query: `query`, or the text of `file` (`-`: standard input).
pub(crate) fn query_text(
    query: Option<String>,
    file: Option<&std::path::Path>,
) -> Result<String, Box<dyn std::error::Error>> {
    use std::io::Read;
    match (query, file) {
        (Some(q), _) => Ok(q),
        (None, Some(f)) if f.as_os_str() == "-" => {
            let mut q = String::new();
            std::io::stdin()
                .read_to_string(&mut q)
                .map_err(|e| format!("the query from standard input: {e}"))?;
            Ok(q)
        }
        (None, Some(f)) => std::fs::read_to_string(f)
            .map_err(|e| format!("the query file {}: {e}", f.display()).into()),
        (None, None) => Err("no query: give one, or --file FILE".into()),
    }
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
        output,
        threads,
        write,
        cluster,
    } = run;
    // The output's kind before the query runs: an unknown extension changes nothing.
    let target = output.as_deref().map(Target::of).transpose()?;
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
    rt.block_on(async {
        let ctx = match &cluster {
            Some(url) => cluster_context(url).await.map_err(one_line)?,
            None => {
                b2nd_datafusion::session_context(SessionConfig::new().with_target_partitions(cores))
            }
        };
        for t in tables {
            let table = B2ndTable::any(&t.spec)
                .map_err(one_line)?
                .with_writes(write);
            ctx.register_table(t.name.as_str(), Arc::new(table))
                .map_err(one_line)?;
        }
        for a in arrays {
            let array = B2ndTable::array(&a.spec).map_err(one_line)?;
            ctx.register_table(a.name.as_str(), Arc::new(array))
                .map_err(one_line)?;
        }
        let stream = ctx
            .sql(query)
            .await
            .map_err(one_line)?
            .execute_stream()
            .await
            .map_err(one_line)?;
        match (target, output) {
            (Some(target), Some(path)) => write_file(stream, target, &path).await,
            _ => print(stream, format).await,
        }
    })
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

/// The file formats of `--output`.
#[cfg(feature = "sql")]
#[derive(Clone, Copy, Debug)]
enum Target {
    Parquet,
    Ipc,
    Csv,
    Json,
}

#[cfg(feature = "sql")]
impl Target {
    /// The format `path`'s extension names.
    fn of(path: &std::path::Path) -> Result<Target, Box<dyn std::error::Error>> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        Ok(match ext.as_deref() {
            Some("parquet") => Target::Parquet,
            Some("arrow" | "ipc" | "feather") => Target::Ipc,
            Some("csv") => Target::Csv,
            Some("json" | "jsonl" | "ndjson") => Target::Json,
            _ => {
                return Err(format!(
                    "--output {}: name a .parquet, .arrow, .ipc, .csv, .json or .jsonl file",
                    path.display()
                )
                .into())
            }
        })
    }
}

/// One writer of record batches, whatever the format.
#[cfg(feature = "sql")]
enum Sink<W: Write + Send> {
    Parquet(datafusion::parquet::arrow::ArrowWriter<W>),
    Ipc(datafusion::arrow::ipc::writer::FileWriter<W>),
    Csv(datafusion::arrow::csv::Writer<W>),
    Json(datafusion::arrow::json::LineDelimitedWriter<W>),
}

#[cfg(feature = "sql")]
impl<W: Write + Send> Sink<W> {
    fn new(
        target: Target,
        schema: &datafusion::arrow::datatypes::SchemaRef,
        w: W,
    ) -> Result<Sink<W>, Box<dyn std::error::Error>> {
        Ok(match target {
            Target::Parquet => Sink::Parquet(datafusion::parquet::arrow::ArrowWriter::try_new(
                w,
                schema.clone(),
                None,
            )?),
            Target::Ipc => Sink::Ipc(datafusion::arrow::ipc::writer::FileWriter::try_new(
                w, schema,
            )?),
            Target::Csv => Sink::Csv(
                datafusion::arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(w),
            ),
            Target::Json => Sink::Json(datafusion::arrow::json::LineDelimitedWriter::new(w)),
        })
    }

    fn write(&mut self, b: &RecordBatch) -> Result<(), Box<dyn std::error::Error>> {
        match self {
            Sink::Parquet(w) => w.write(b)?,
            Sink::Ipc(w) => w.write(b)?,
            Sink::Csv(w) => w.write(b)?,
            Sink::Json(w) => w.write(b)?,
        }
        Ok(())
    }

    /// Ends the format (footers) and hands back the writer.
    fn finish(self) -> Result<W, Box<dyn std::error::Error>> {
        Ok(match self {
            Sink::Parquet(w) => w.into_inner()?,
            Sink::Ipc(mut w) => {
                w.finish()?;
                w.into_inner()?
            }
            Sink::Csv(w) => w.into_inner(),
            Sink::Json(mut w) => {
                w.finish()?;
                w.into_inner()
            }
        })
    }
}

/// Every batch of `stream` into a new file at `path`, written beside it and renamed over it
/// once whole and synced: an error leaves no file there.
#[cfg(feature = "sql")]
async fn write_file(
    mut stream: datafusion::execution::SendableRecordBatchStream,
    target: Target,
    path: &std::path::Path,
) -> Result<(), Box<dyn std::error::Error>> {
    use futures::StreamExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".b2nd-sql-")
        .tempfile_in(dir)
        .map_err(|e| format!("--output {}: {e}", path.display()))?;
    let file = tmp.as_file().try_clone()?;
    let mut sink = Sink::new(target, &stream.schema(), std::io::BufWriter::new(file))?;
    while let Some(b) = stream.next().await {
        sink.write(&b.map_err(one_line)?)?;
    }
    sink.finish()?.into_inner().map_err(|e| e.into_error())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path)
        .map_err(|e| format!("--output {}: {}", path.display(), e.error))?;
    Ok(())
}

/// Every batch of `stream` to standard output: CSV and JSON lines as they come, the text
/// table once all are in (its columns are as wide as their widest value).
#[cfg(feature = "sql")]
async fn print(
    mut stream: datafusion::execution::SendableRecordBatchStream,
    format: Format,
) -> Result<(), Box<dyn std::error::Error>> {
    use futures::StreamExt;
    let mut out = std::io::BufWriter::new(std::io::stdout());
    let target = match format {
        Format::Table => {
            let mut batches = Vec::new();
            while let Some(b) = stream.next().await {
                batches.push(b.map_err(one_line)?);
            }
            let t = datafusion::arrow::util::pretty::pretty_format_batches(&batches)?;
            writeln!(out, "{t}")?;
            out.flush()?;
            return Ok(());
        }
        Format::Csv => Target::Csv,
        Format::Json => Target::Json,
    };
    let mut sink = Sink::new(target, &stream.schema(), &mut out)?;
    while let Some(b) = stream.next().await {
        sink.write(&b.map_err(one_line)?)?;
    }
    sink.finish()?;
    out.flush()?;
    Ok(())
}
