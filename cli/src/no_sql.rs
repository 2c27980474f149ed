//! `b2nd sql` in a build without the `sql` feature: the same options, and an error saying how
//! to get it.

/// One `NAME=PATH` of `--table` / `--array`.
#[derive(Clone, Debug)]
pub(crate) struct Named;

/// Parse `NAME=PATH`.
pub(crate) fn parse_named(s: &str) -> Result<Named, String> {
    match s.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok(Named),
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

/// Refuse: this build has no SQL engine.
pub(crate) fn run(
    _query: &str,
    _tables: &[Named],
    _arrays: &[Named],
    _format: Format,
    _threads: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    Err(
        "this b2nd was built without SQL: build it with `cargo build --release --features sql`"
            .into(),
    )
}
