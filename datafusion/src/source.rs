//! [`Source`]: where a table's or an array's bytes are, as a plain description a scan can
//! carry to another process (a path or URL and, inside a store, a key), and [`Opened`], the
//! source opened for reading rows.

use std::ops::Range;
use std::sync::Arc;

use b2nd::{Array, Store, Table};
use datafusion::arrow::datatypes::{Field, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};

use crate::rows;

/// What kind of data a source holds, as SQL sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A python-blosc2 CTable: one SQL column per table column, live rows only.
    Table,
    /// An N-d array: one row per element, index columns `i0`, `i1`, … and a `value`
    /// column (or one column per field of a structured dtype).
    Array,
}

/// Where a table or an array lives: `location` is a local path (a `.b2z`/`.b2d` table or
/// store, a `.b2nd` file, a sparse directory) or, with b2nd's `remote` feature, a URL; `key`
/// names a member inside a store (`PATH#KEY` on the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The path or URL.
    pub location: String,
    /// The key inside a store, if any (`/` or empty: the store itself).
    pub key: Option<String>,
    /// Table or array.
    pub kind: Kind,
}

impl Source {
    /// A source from `PATH` or `PATH#KEY` (a table or array inside a store).
    pub fn parse(spec: &str, kind: Kind) -> Source {
        match spec.rsplit_once('#') {
            Some((loc, key)) if !key.is_empty() && !loc.is_empty() => Source {
                location: loc.to_string(),
                key: Some(key.to_string()),
                kind,
            },
            _ => Source {
                location: spec.to_string(),
                key: None,
                kind,
            },
        }
    }

    /// Whether the location is a URL (read by ranges from an object store or server).
    pub fn is_url(&self) -> bool {
        self.location.contains("://")
    }

    /// Open it for reading.
    pub(crate) fn open(&self) -> Result<Opened> {
        off_runtime(|| self.try_open())
            .map_err(|e| DataFusionError::External(format!("{}: {e}", self.display()).into()))
    }

    fn try_open(&self) -> b2nd::Result<Opened> {
        let key = self.key.as_deref().filter(|k| !k.is_empty() && *k != "/");
        if self.is_url() {
            return self.open_url(key);
        }
        // A local scan's partitions are its parallelism (one thread each, cut at blocks): a
        // read decodes its blocks on its own thread rather than waking others to help.
        let one = || b2nd::Threads::Single;
        Ok(match (self.kind, key) {
            (Kind::Table, None) => Opened::Table(
                Table::open(&self.location)?.with_threads(one()),
                Default::default(),
            ),
            (Kind::Table, Some(k)) => Opened::Table(
                Store::open(&self.location)?
                    .open_table(k)?
                    .with_threads(one()),
                Default::default(),
            ),
            (Kind::Array, None) => Opened::Array(Array::open(&self.location)?.with_threads(one())),
            (Kind::Array, Some(k)) => Opened::Array(
                Store::open(&self.location)?
                    .open_array(k)?
                    .with_threads(one()),
            ),
        })
    }

    /// A URL (`http(s)://`, `s3://`, `gs://`, `az://`, `file://`): read by ranges.
    #[cfg(feature = "remote")]
    fn open_url(&self, key: Option<&str>) -> b2nd::Result<Opened> {
        let url = &self.location;
        Ok(match (self.kind, key) {
            (Kind::Table, None) => Opened::Table(Table::open_url(url)?, Default::default()),
            (Kind::Table, Some(k)) => {
                Opened::Table(Store::open_url(url)?.open_table(k)?, Default::default())
            }
            (Kind::Array, None) => Opened::Array(Array::open_url(url)?),
            (Kind::Array, Some(k)) => Opened::Array(Store::open_url(url)?.open_array(k)?),
        })
    }

    #[cfg(not(feature = "remote"))]
    fn open_url(&self, _key: Option<&str>) -> b2nd::Result<Opened> {
        Err(b2nd::Error::InvalidArgument(format!(
            "{}: URLs need b2nd-datafusion's `remote` feature",
            self.location
        )))
    }

    /// `location` or `location#key`, for messages.
    pub fn display(&self) -> String {
        match &self.key {
            Some(k) => format!("{}#{k}", self.location),
            None => self.location.clone(),
        }
    }

    /// The description as bytes (for [`crate::B2ndCodec`]).
    pub(crate) fn encode(&self, out: &mut Vec<String>) {
        out.push(match self.kind {
            Kind::Table => "table".into(),
            Kind::Array => "array".into(),
        });
        out.push(self.location.clone());
        out.push(self.key.clone().unwrap_or_default());
    }

    /// The description [`Source::encode`] wrote, from its three fields.
    pub(crate) fn decode(kind: &str, location: &str, key: &str) -> Result<Source> {
        let kind = match kind {
            "table" => Kind::Table,
            "array" => Kind::Array,
            other => {
                return Err(DataFusionError::Execution(format!(
                    "b2nd scan: unknown source kind {other:?}"
                )))
            }
        };
        Ok(Source {
            location: location.to_string(),
            key: (!key.is_empty()).then(|| key.to_string()),
            kind,
        })
    }
}

/// A source opened for reading rows.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A CTable, and its columns converted whole.
    Table(Table, rows::WholeColumns),
    /// An N-d array.
    Array(Array),
}

impl Opened {
    /// How many rows SQL sees.
    pub(crate) fn n_rows(&self) -> u64 {
        match self {
            Opened::Table(t, _) => t.n_rows(),
            Opened::Array(a) => a.nitems(),
        }
    }

    /// The rows one storage chunk holds along the row order (partitions and batches are cut
    /// at multiples of it, so that no chunk is read by two of them).
    pub(crate) fn rows_per_chunk(&self) -> u64 {
        match self {
            Opened::Table(t, _) => t.row_grid().map_or(1 << 16, |(chunk, _)| chunk),
            Opened::Array(a) => {
                let inner: u64 = a.shape()[1..].iter().product::<u64>().max(1);
                a.chunks().first().copied().unwrap_or(1).max(1) * inner
            }
        }
    }

    /// The rows one storage block holds along the row order (computed zones are cut at
    /// multiples of it: python-blosc2's summaries are per block of a table column too);
    /// arrays: [`Opened::rows_per_chunk`].
    pub(crate) fn rows_per_block(&self) -> u64 {
        match self {
            Opened::Table(t, _) => t
                .row_grid()
                .map_or_else(|| self.rows_per_chunk(), |(_, block)| block),
            Opened::Array(_) => self.rows_per_chunk(),
        }
    }

    /// Whether column `field` (of [`Opened::schema`]) never holds a NULL: a table column
    /// not nullable, an array's index and value columns.
    pub(crate) fn never_null(&self, field: &Field) -> bool {
        !field.is_nullable()
            || match self {
                Opened::Table(t, _) => t.column(field.name()).is_ok_and(|c| !c.nullable()),
                Opened::Array(_) => true,
            }
    }

    /// The full SQL schema.
    pub(crate) fn schema(&self) -> Result<SchemaRef> {
        match self {
            Opened::Table(t, w) => rows::table_schema(t, w),
            Opened::Array(a) => rows::array_schema(a),
        }
    }

    /// Rows `rows` of the columns of `schema` (a projection of [`Opened::schema`]).
    pub(crate) fn batch(&self, schema: &SchemaRef, rows: Range<u64>) -> Result<RecordBatch> {
        match self {
            Opened::Table(t, w) => rows::table_batch(t, w, schema, rows),
            Opened::Array(a) => rows::array_batch(a, schema, rows),
        }
    }
}

/// Run `f`, which may block (b2nd's remote reads run a runtime of their own), off any Tokio
/// runtime this thread is part of: on a thread of its own when there is one (a runtime's
/// thread cannot block on another runtime), else here.
pub(crate) fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(t) => t,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// An opened source shared by the partitions of a scan.
pub(crate) type Shared = Arc<Opened>;
