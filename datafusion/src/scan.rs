//! The physical scan of b2nd tables and arrays, or of many files read as one: a DataFusion
//! `DataSourceExec` over a [`FileScanConfig`] whose file source is [`B2ndSource`]. Each
//! partition is a file group whose entries are [`Piece`]s (a file's row range, cut at
//! storage-block or chunk boundaries), so that every core reads blocks of its own, a worker
//! elsewhere runs any partition from the description alone ([`crate::B2ndCodec`] ships it), and
//! a distributed engine that hands each task some of a stage's file groups (Apache DataFusion
//! Ballista) gives each task its pieces.

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::object_store::ObjectStoreUrl;
use datafusion::datasource::physical_plan::{
    FileGroup, FileOpenFuture, FileOpener, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::object_store::ObjectStore;
use datafusion::physical_expr::{LexOrdering, PhysicalExpr};
use datafusion::physical_expr_common::physical_expr::{
    snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::filter_pushdown::{FilterPushdownPropagation, PushedDown};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::{DisplayFormatType, ExecutionPlan};
use futures::StreamExt;

use crate::prune::Zones;
use crate::source::{Opened, Shared, Source};
use crate::strings::{filtered_batch, StringFilter};
use crate::terms::physical_terms;

/// Rows `rows` of file `file` of a scan: partitions are lists of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The file's position in the scan's files.
    pub file: usize,
    /// Its rows read.
    pub rows: Range<u64>,
}

/// One file of a scan: where it is, its rows, how its batches are cut, and (when planned
/// here) its zone maps.
pub(crate) struct ScanFile {
    pub(crate) source: Source,
    /// Rows of the file in all.
    pub(crate) rows: u64,
    /// Rows per batch (a multiple of the rows of a storage block or chunk).
    pub(crate) batch_rows: u64,
    /// The file, opened on first use and shared by the partitions.
    opened: Mutex<Option<Shared>>,
    /// The file's zone maps, when the scan was planned here (not decoded).
    zones: Option<Arc<Zones>>,
}

impl ScanFile {
    /// File `source` of `rows` rows, read in batches of `batch_rows`; `opened` is the file
    /// already opened, if it is, and `zones` its zone maps.
    pub(crate) fn new(
        source: Source,
        rows: u64,
        batch_rows: u64,
        opened: Option<Shared>,
        zones: Option<Arc<Zones>>,
    ) -> ScanFile {
        ScanFile {
            source,
            rows,
            batch_rows: batch_rows.max(1),
            opened: Mutex::new(opened),
            zones,
        }
    }

    fn opened(&self) -> Result<Shared> {
        let mut o = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = &*o {
            return Ok(s.clone());
        }
        let s: Shared = Arc::new(self.source.open()?);
        *o = Some(s.clone());
        Ok(s)
    }
}

/// Which file of a scan a [`PartitionedFile`] is a piece of (its rows are its `range`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileIndex(pub(crate) usize);

/// A piece as DataFusion's file scan holds it: named by its file, its rows as the range,
/// the file's position as an extension.
pub(crate) fn piece_file(files: &[ScanFile], p: &Piece) -> PartitionedFile {
    let name = files
        .get(p.file)
        .map_or_else(|| p.file.to_string(), |f| f.source.display());
    PartitionedFile::new(name, p.rows.end - p.rows.start)
        .with_range(p.rows.start as i64, p.rows.end as i64)
        .with_extension(FileIndex(p.file))
}

/// The piece a [`PartitionedFile`] of a b2nd scan stands for.
pub(crate) fn file_piece(f: &PartitionedFile) -> Result<Piece> {
    let bad = || {
        DataFusionError::Execution(format!(
            "b2nd scan: {} is not a piece of a b2nd scan",
            f.object_meta.location
        ))
    };
    let FileIndex(file) = *f.extension::<FileIndex>().ok_or_else(bad)?;
    let r = f.range.as_ref().ok_or_else(bad)?;
    let (start, end) = (
        u64::try_from(r.start).map_err(|_| bad())?,
        u64::try_from(r.end).map_err(|_| bad())?,
    );
    Ok(Piece {
        file,
        rows: start..end,
    })
}

/// The scan of `schema`'s columns (a projection of the files' schema) of `files` over
/// `partitions`, at most `limit` rows per partition, with what the planner knows of it.
pub(crate) fn scan_exec(
    source: B2ndSource,
    partitions: &[Vec<Piece>],
    limit: Option<usize>,
    statistics: Option<Statistics>,
) -> Arc<DataSourceExec> {
    let groups: Vec<FileGroup> = partitions
        .iter()
        .map(|p| {
            FileGroup::new(
                p.iter()
                    .map(|piece| piece_file(&source.files, piece))
                    .collect(),
            )
        })
        .collect();
    let mut b = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), Arc::new(source))
        .with_file_groups(groups)
        .with_limit(limit);
    if let Some(s) = statistics {
        b = b.with_statistics(s);
    }
    DataSourceExec::from_data_source(b.build())
}

/// b2nd's file source for DataFusion's file scans: the files a scan reads (each opened on
/// first use) and the columns it produces; batches of whole blocks or chunks; dynamic
/// filters (a top-k's threshold) skip the batches the files' zones show no row of can pass;
/// filters over one string column are evaluated in the scan, on a batch's few distinct
/// strings where it has few.
#[derive(Clone)]
pub struct B2ndSource {
    pub(crate) files: Arc<[ScanFile]>,
    schema: TableSchema,
    metrics: ExecutionPlanMetricsSet,
    /// Dynamic filters its parents pushed: before each batch, the batch is skipped when the
    /// zones show no row of it can pass their current state.
    dynamic: Vec<Arc<dyn PhysicalExpr>>,
    /// Filters over one string column its parents pushed: only the rows that pass them
    /// leave the scan.
    strings: Vec<StringFilter>,
    /// The columns whose zones pruned rows, and where those zones came from; rows read of
    /// rows in all (shown in plans).
    pruned_by: Vec<String>,
    rows: (u64, u64),
}

impl fmt::Debug for B2ndSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources: Vec<&Source> = self.files.iter().map(|f| &f.source).collect();
        f.debug_struct("B2ndSource")
            .field("sources", &sources)
            .finish()
    }
}

impl B2ndSource {
    /// The source of `schema`'s columns of `files`.
    pub(crate) fn new(files: Arc<[ScanFile]>, schema: SchemaRef) -> B2ndSource {
        B2ndSource {
            files,
            schema: TableSchema::from(schema),
            metrics: ExecutionPlanMetricsSet::new(),
            dynamic: Vec::new(),
            strings: Vec::new(),
            pruned_by: Vec::new(),
            rows: (0, 0),
        }
    }

    /// The source with what planning learnt (shown in plans): the columns whose zones pruned
    /// rows, and the rows read of the rows in all.
    pub(crate) fn with_planning(mut self, pruned_by: Vec<String>, rows: (u64, u64)) -> B2ndSource {
        self.pruned_by = pruned_by;
        self.rows = rows;
        self
    }

    /// The columns produced.
    pub(crate) fn schema(&self) -> &SchemaRef {
        self.schema.file_schema()
    }

    /// The filters over one string column the scan applies itself.
    pub(crate) fn string_filters(&self) -> impl Iterator<Item = &Arc<dyn PhysicalExpr>> {
        self.strings.iter().map(|f| &f.expr)
    }

    /// The source applying the filters `exprs` (over its columns) itself, each a filter
    /// over one string column; an error names one that is not.
    pub(crate) fn with_string_filters(
        mut self,
        exprs: Vec<Arc<dyn PhysicalExpr>>,
    ) -> Result<B2ndSource> {
        for e in exprs {
            let f = StringFilter::of(&e, self.schema()).ok_or_else(|| {
                DataFusionError::Execution(format!(
                    "b2nd scan: {e} is not a filter over one string column"
                ))
            })?;
            self.strings.push(f);
        }
        Ok(self)
    }

    /// The files this scan reads, in the order [`Piece::file`] counts them.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.files.iter().map(|f| &f.source)
    }

    /// The b2nd source of a plan node, if it is a b2nd scan, and its partitions' pieces.
    pub fn of_plan(plan: &dyn ExecutionPlan) -> Option<(&B2ndSource, Vec<Vec<Piece>>)> {
        let config = plan
            .downcast_ref::<DataSourceExec>()?
            .data_source()
            .downcast_ref::<FileScanConfig>()?;
        let source = config.file_source().downcast_ref::<B2ndSource>()?;
        let parts = config
            .file_groups
            .iter()
            .map(|g| {
                g.files()
                    .iter()
                    .filter_map(|f| file_piece(f).ok())
                    .collect()
            })
            .collect();
        Some((source, parts))
    }

    /// Whether batch `rows` may hold a row that passes the dynamic filters' current state.
    fn may_pass(
        opened: &Opened,
        zones: &Zones,
        schema: &SchemaRef,
        dynamic: &[Arc<dyn PhysicalExpr>],
        rows: &Range<u64>,
    ) -> Result<bool> {
        let mut terms = Vec::new();
        let never_null = |c: &str| {
            schema
                .field_with_name(c)
                .is_ok_and(|f| opened.never_null(f))
        };
        for f in dynamic {
            physical_terms(
                &snapshot_physical_expr(Arc::clone(f))?,
                &never_null,
                &mut terms,
            );
        }
        zones.may_match(opened, schema, &terms, rows)
    }
}

impl FileSource for B2ndSource {
    fn create_file_opener(
        &self,
        _object_store: Arc<dyn ObjectStore>,
        _base_config: &FileScanConfig,
        partition: usize,
    ) -> Result<Arc<dyn FileOpener>> {
        Ok(Arc::new(B2ndOpener {
            files: self.files.clone(),
            schema: self.schema().clone(),
            dynamic: self.dynamic.clone(),
            strings: self.strings.clone().into(),
            skipped: MetricBuilder::new(&self.metrics).counter("batches_skipped", partition),
        }))
    }

    fn table_schema(&self) -> &TableSchema {
        &self.schema
    }

    /// The filters over one string column it applies (so that DataFusion knows the row
    /// counts it was given are no longer exact).
    fn filter(&self) -> Option<Arc<dyn PhysicalExpr>> {
        datafusion::physical_expr::conjunction_opt(self.strings.iter().map(|f| f.expr.clone()))
    }

    /// The dynamic filters it holds and the string filters it applies.
    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        for e in self.dynamic.iter().chain(self.string_filters()) {
            if f(e)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    /// Batches are whole blocks or chunks of the files, about the session's batch size or
    /// more, chosen when planned.
    fn with_batch_size(&self, _batch_size: usize) -> Arc<dyn FileSource> {
        Arc::new(self.clone())
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "b2nd"
    }

    fn fmt_extra(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let (read, total) = self.rows;
        if read < total {
            write!(f, ", rows={read} of {total} (pruned")?;
            if !self.pruned_by.is_empty() {
                write!(f, " by {}", self.pruned_by.join(", "))?;
            }
            write!(f, ")")?;
        }
        if !self.dynamic.is_empty() {
            write!(f, ", dynamic filters={}", self.dynamic.len())?;
        }
        if !self.strings.is_empty() {
            let e: Vec<String> = self.string_filters().map(|e| e.to_string()).collect();
            write!(f, ", string filters=[{}]", e.join(", "))?;
        }
        Ok(())
    }

    /// Pieces are cut at storage blocks when planned; DataFusion's byte-range splitting
    /// does not apply.
    fn supports_repartitioning(&self) -> bool {
        false
    }

    fn repartitioned(
        &self,
        _target_partitions: usize,
        _repartition_file_min_size: usize,
        _output_ordering: Option<LexOrdering>,
        _config: &FileScanConfig,
    ) -> Result<Option<FileScanConfig>> {
        Ok(None)
    }

    /// Filters over one string column are applied here (reported pushed down: DataFusion
    /// drops them); dynamic filters (a top-k's) are kept, for skipping batches by the
    /// zones, and DataFusion still applies them and every other filter.
    fn try_pushdown_filters(
        &self,
        filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn FileSource>>> {
        let zoned = self.files.iter().any(|f| f.zones.is_some());
        let mut source = self.clone();
        let mut changed = false;
        let mut pushed = Vec::with_capacity(filters.len());
        for f in filters {
            if snapshot_generation(&f) != 0 {
                if zoned {
                    source.dynamic.push(f);
                    changed = true;
                }
                pushed.push(PushedDown::No);
            } else if let Some(s) = StringFilter::of(&f, self.schema()) {
                source.strings.push(s);
                changed = true;
                pushed.push(PushedDown::Yes);
            } else {
                pushed.push(PushedDown::No);
            }
        }
        let p = FilterPushdownPropagation::with_parent_pushdown_result(pushed);
        Ok(if changed {
            p.with_updated_node(Arc::new(source) as Arc<dyn FileSource>)
        } else {
            p
        })
    }
}

/// Opens the pieces of a partition, its file opened by its first batch: a local file's
/// batches read by the thread polling the stream, a URL's on one of Tokio's blocking threads
/// (remote reads block on a runtime of their own) reading ahead.
struct B2ndOpener {
    files: Arc<[ScanFile]>,
    schema: SchemaRef,
    dynamic: Vec<Arc<dyn PhysicalExpr>>,
    strings: Arc<[StringFilter]>,
    skipped: datafusion::physical_plan::metrics::Count,
}

impl FileOpener for B2ndOpener {
    fn open(&self, file: PartitionedFile) -> Result<FileOpenFuture> {
        let piece = file_piece(&file)?;
        let files = self.files.clone();
        let Some(f) = files.get(piece.file) else {
            return Err(DataFusionError::Execution(format!(
                "b2nd scan: file {} of {}",
                piece.file,
                files.len()
            )));
        };
        if piece.rows.start > piece.rows.end || piece.rows.end > f.rows {
            return Err(DataFusionError::Execution(format!(
                "b2nd scan: rows {}..{} are not rows of {} ({} rows)",
                piece.rows.start,
                piece.rows.end,
                f.source.display(),
                f.rows
            )));
        }
        let (step, local) = (f.batch_rows, !f.source.is_url());
        let (schema, dynamic, skipped) = (
            self.schema.clone(),
            self.dynamic.clone(),
            self.skipped.clone(),
        );
        let strings = self.strings.clone();
        // Batches of whole blocks or chunks (cut at multiples of the file's batch rows).
        let r = piece.rows;
        let piece_rows = r.clone();
        let mut at = r.start;
        let batches = std::iter::from_fn(move || {
            if at >= r.end {
                return None;
            }
            let stop = (at / step + 1).saturating_mul(step).min(r.end);
            let span = at..stop;
            at = stop;
            Some(span)
        });
        let file = piece.file;
        let read = move |r: Range<u64>| -> Result<Option<RecordBatch>> {
            let f = &files[file];
            let opened = f.opened()?;
            // A decoded plan's rows are checked against the file itself.
            if r.end > opened.n_rows() {
                return Err(DataFusionError::Execution(format!(
                    "b2nd scan: rows {}..{} are not rows of {} ({} rows)",
                    r.start,
                    r.end,
                    f.source.display(),
                    opened.n_rows()
                )));
            }
            if let Some(z) = f.zones.as_ref().filter(|_| !dynamic.is_empty()) {
                if !B2ndSource::may_pass(&opened, z, &schema, &dynamic, &r)? {
                    skipped.add(1);
                    return Ok(None);
                }
            }
            if strings.is_empty() {
                return opened.batch(&schema, r).map(Some);
            }
            let b = filtered_batch(&opened, &schema, r, &strings)?;
            if b.is_none() {
                skipped.add(1);
            }
            Ok(b)
        };
        if local {
            // A local file: each batch read when the consumer asks for it, on the thread
            // that polls (as DataFusion's Parquet reader decodes its pages). The partitions
            // are the scan's parallelism, and a hand-over to a reading thread per batch
            // cost more than the read's wait on the page cache.
            // Batches the zones or string filters skip are passed over; the first error
            // ends the stream.
            let (mut batches, mut failed) = (batches, false);
            let rows = std::iter::from_fn(move || loop {
                if failed {
                    return None;
                }
                match read(batches.next()?).transpose() {
                    None => continue,
                    Some(b) => {
                        failed = b.is_err();
                        return Some(b);
                    }
                }
            });
            // Each batch after a yield to the runtime: a task that never waits would keep
            // the thread it started on, and other partitions queued behind it there would
            // wait rather than move to an idle thread.
            let stream = futures::stream::unfold(rows, |mut rows| async move {
                tokio::task::yield_now().await;
                rows.next().map(|b| (b, rows))
            });
            return Ok(Box::pin(async move { Ok(stream.boxed()) }));
        }
        let (announce, names): (_, Vec<String>) = (
            (self.files.clone(), piece.file, piece_rows),
            self.schema
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect(),
        );
        Ok(Box::pin(async move {
            // A URL: one blocking thread reads the piece's batches in order and hands them
            // over [`HANDED_TOGETHER`] at a time, at most two hand-overs ahead of the
            // consumer's (one waiting in the channel, one being read; no fresh blocking task
            // per batch, and each wake-up of the consumer brings several batches); it stops
            // at the first error or when the stream is dropped (its send fails). A table's piece first announces its rows of the
            // columns read: their chunks are fetched in the background, and each batch takes
            // its blocks as soon as their bytes arrived. A piece too small a share of its
            // chunks to fetch them whole (rows left by the zones) is read in one batch: one
            // request a column rather than one a batch.
            let (tx, rx) = tokio::sync::mpsc::channel(1);
            let reader = tokio::task::spawn_blocking(move || {
                let (files, file, rows) = announce;
                let ahead = files[file].opened().is_ok_and(|o| match &*o {
                    Opened::Table(t, _) => {
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        t.fetch_rows_ahead(&names, rows.clone())
                    }
                    Opened::Array(_) => true, // cut at chunks: a batch a chunk
                });
                let batches: Box<dyn Iterator<Item = Range<u64>> + Send> = match ahead {
                    true => Box::new(batches),
                    false => Box::new(std::iter::once(rows)),
                };
                let mut group = Vec::with_capacity(HANDED_TOGETHER);
                for r in batches {
                    let b = read(r);
                    let failed = b.is_err();
                    group.push(b);
                    if group.len() == HANDED_TOGETHER || failed {
                        let sent = tx.blocking_send(std::mem::take(&mut group));
                        if sent.is_err() || failed {
                            return;
                        }
                    }
                }
                if !group.is_empty() {
                    let _ = tx.blocking_send(group);
                }
            });
            // After the last batch, the reader's end: a panic in it is an error, not a
            // stream cut short.
            let stream = futures::stream::unfold((rx, Some(reader)), |(mut rx, reader)| async {
                match rx.recv().await {
                    Some(group) => Some((group, (rx, reader))),
                    None => match reader?.await {
                        Ok(()) => None,
                        Err(e) => Some((
                            vec![Err(DataFusionError::External(Box::new(e)))],
                            (rx, None),
                        )),
                    },
                }
            })
            .flat_map(futures::stream::iter)
            .filter_map(|b| async move { b.transpose() });
            Ok(stream.boxed())
        }))
    }
}

/// How many batches of a scan at a URL its reading thread hands over at once.
const HANDED_TOGETHER: usize = 4;

/// `n` rows cut into at most `parts` ranges, each a whole number of `unit`s (but the last).
#[cfg(test)]
pub(crate) fn split_rows(n: u64, unit: u64, parts: usize) -> Vec<Range<u64>> {
    let all = 0..n;
    split_ranges(&[(vec![all], unit)], parts)
        .into_iter()
        .map(|p| {
            p.first()
                .map_or(0..0, |f| f.rows.start..p.last().expect("one").rows.end)
        })
        .collect()
}

/// The rows of each file's ranges (starting at multiples of its `unit`) shared among at most
/// `parts` partitions of about equal rows, file after file, cut at multiples of the file's
/// unit: a partition may span files.
pub(crate) fn split_ranges(files: &[(Vec<Range<u64>>, u64)], parts: usize) -> Vec<Vec<Piece>> {
    let total: u64 = files
        .iter()
        .flat_map(|(r, _)| r)
        .map(|r| r.end - r.start)
        .sum();
    let unit = files.iter().map(|(_, u)| *u).max().unwrap_or(1).max(1);
    let units = total.div_ceil(unit);
    let parts = (parts.max(1) as u64).min(units.max(1));
    let per = units.div_ceil(parts).max(1) * unit;
    let mut out: Vec<Vec<Piece>> = vec![Vec::new()];
    let mut room = per;
    for (file, (ranges, unit)) in files.iter().enumerate() {
        let unit = (*unit).max(1);
        for r in ranges {
            let mut at = r.start;
            while at < r.end {
                if room == 0 {
                    out.push(Vec::new());
                    room = per;
                }
                // Cut at a multiple of the file's unit (a partition may take a little more
                // than its share).
                let end = (at + room).div_ceil(unit).saturating_mul(unit).min(r.end);
                out.last_mut().expect("one").push(Piece {
                    file,
                    rows: at..end,
                });
                room = room.saturating_sub(end - at);
                at = end;
            }
        }
    }
    if out.last().is_some_and(Vec::is_empty) && out.len() > 1 {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{split_ranges, split_rows};

    #[test]
    fn rows_split_at_chunk_boundaries() {
        assert_eq!(split_rows(10, 3, 2), vec![0..6, 6..10]);
        assert_eq!(split_rows(10, 3, 8), vec![0..3, 3..6, 6..9, 9..10]);
        assert_eq!(split_rows(0, 3, 4), vec![0..0]);
        assert_eq!(split_rows(5, 100, 4), vec![0..5]);
        for (n, u, p) in [(1000, 7, 3), (999, 1, 16), (64, 64, 2)] {
            let parts = split_rows(n, u, p);
            assert!(parts.len() <= p);
            assert_eq!(parts.first().unwrap().start, 0);
            assert_eq!(parts.last().unwrap().end, n);
            for w in parts.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].end % u, 0);
            }
        }
        // Pruned ranges: the same rows, shared out, cut at multiples of the unit.
        let kept = [0..10, 30..50, 90..95];
        for parts in 1..6 {
            let p = split_ranges(&[(kept.to_vec(), 10)], parts);
            assert!(p.len() <= parts && !p.is_empty());
            let flat: Vec<u64> = p.iter().flatten().flat_map(|p| p.rows.clone()).collect();
            let want: Vec<u64> = kept.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(flat, want, "{parts}");
            assert!(p.iter().flatten().all(|p| p.rows.start % 10 == 0));
        }
    }

    /// Many files: every row of every file once, in file order, each piece cut at its file's
    /// unit, partitions spanning files and of about equal rows.
    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn rows_of_many_files_split_across_them() {
        let files = vec![
            (vec![0..100], 10),
            (vec![0..35], 5),
            (vec![20..60], 20),
            (vec![], 7),
        ];
        for parts in 1..8 {
            let p = split_ranges(&files, parts);
            assert!(p.len() <= parts && !p.is_empty(), "{parts}: {p:?}");
            let flat: Vec<(usize, u64)> = p
                .iter()
                .flatten()
                .flat_map(|p| p.rows.clone().map(move |r| (p.file, r)))
                .collect();
            let want: Vec<(usize, u64)> = files
                .iter()
                .enumerate()
                .flat_map(|(f, (r, _))| r.iter().flat_map(move |r| r.clone().map(move |r| (f, r))))
                .collect();
            assert_eq!(flat, want, "{parts}");
            assert!(p
                .iter()
                .flatten()
                .all(|p| p.rows.start % files[p.file].1 == 0));
            if parts == 3 {
                // 175 rows, 60 a partition: the second takes the end of file 0 and the
                // start of file 1.
                let files: Vec<usize> = p[1].iter().map(|p| p.file).collect();
                assert_eq!(files, [0, 1], "{p:?}");
            }
        }
    }
}
