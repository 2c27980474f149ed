//! [`B2ndScanExec`]: the physical scan of a b2nd table or array, or of many files read as
//! one. Its partitions are plain row ranges of its files ([`Piece`]s), cut at storage-block
//! or chunk boundaries, so that every core reads blocks of its own and a worker elsewhere can
//! run any partition from the description alone ([`crate::B2ndCodec`] ships it).

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::config::ConfigOptions;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{ColumnStatistics, DataFusionError, Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_expr_common::physical_expr::{
    snapshot_generation, snapshot_physical_expr,
};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterPushdownPhase, FilterPushdownPropagation, PushedDown,
};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use futures::StreamExt;

use crate::prune::Zones;
use crate::source::{Opened, Shared, Source};
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

/// The scan of some columns of one or many files ([`Source`]s), partitioned by row ranges.
pub struct B2ndScanExec {
    pub(crate) files: Arc<[ScanFile]>,
    /// The columns produced (a projection of the files' schema).
    pub(crate) schema: SchemaRef,
    /// The pieces of each partition.
    pub(crate) partitions: Vec<Vec<Piece>>,
    /// At most this many rows per partition (the planner's limit, pushed down).
    pub(crate) limit: Option<usize>,
    props: Arc<PlanProperties>,
    /// What the planner knows of each column (bounds, NULLs), unknown when not given.
    columns: Vec<ColumnStatistics>,
    /// The columns whose zones pruned rows, and where those zones came from.
    pruned_by: Vec<String>,
    /// Dynamic filters its parents pushed (a top-k's threshold): before each batch, the
    /// batch is skipped when the zones show no row of it can pass their current state.
    dynamic: Vec<Arc<dyn PhysicalExpr>>,
    metrics: ExecutionPlanMetricsSet,
}

impl fmt::Debug for B2ndScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources: Vec<&Source> = self.files.iter().map(|f| &f.source).collect();
        f.debug_struct("B2ndScanExec")
            .field("sources", &sources)
            .field("partitions", &self.partitions)
            .field("limit", &self.limit)
            .finish()
    }
}

impl B2ndScanExec {
    /// The scan of `schema`'s columns of `files` over `partitions`, at most `limit` rows per
    /// partition.
    pub(crate) fn new(
        files: Arc<[ScanFile]>,
        schema: SchemaRef,
        partitions: Vec<Vec<Piece>>,
        limit: Option<usize>,
    ) -> B2ndScanExec {
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        B2ndScanExec {
            files,
            schema,
            partitions,
            limit,
            props: Arc::new(props),
            columns: Vec::new(),
            pruned_by: Vec::new(),
            dynamic: Vec::new(),
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The scan with what planning learnt: each column's statistics (in `schema`'s order)
    /// and the columns whose zones pruned rows (shown in plans).
    pub(crate) fn with_planning(
        mut self,
        columns: Vec<ColumnStatistics>,
        pruned_by: Vec<String>,
    ) -> B2ndScanExec {
        if columns.len() == self.schema.fields().len() {
            self.columns = columns;
        }
        self.pruned_by = pruned_by;
        self
    }

    /// The files this scan reads, in the order [`Piece::file`] counts them.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.files.iter().map(|f| &f.source)
    }

    /// The pieces of each partition.
    pub fn partitions(&self) -> &[Vec<Piece>] {
        &self.partitions
    }

    /// How many rows the scan reads (after pruning), of how many.
    pub fn rows(&self) -> (u64, u64) {
        let read = self
            .partitions
            .iter()
            .flatten()
            .map(|p| p.rows.end - p.rows.start)
            .sum();
        (read, self.files.iter().map(|f| f.rows).sum())
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

impl DisplayAs for B2ndScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let cols: Vec<&str> = self
            .schema
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        match &*self.files {
            [one] => write!(f, "B2ndScanExec: source={}", one.source.display())?,
            many => write!(
                f,
                "B2ndScanExec: files={} ({}, ...)",
                many.len(),
                many.first().map_or(String::new(), |f| f.source.display())
            )?,
        }
        write!(
            f,
            ", columns=[{}], partitions={}",
            cols.join(", "),
            self.partitions.len()
        )?;
        let (read, total) = self.rows();
        if read < total {
            write!(f, ", rows={read} of {total} (pruned")?;
            if !self.pruned_by.is_empty() {
                write!(f, " by {}", self.pruned_by.join(", "))?;
            }
            write!(f, ")")?;
        }
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        if !self.dynamic.is_empty() {
            write!(f, ", dynamic filters={}", self.dynamic.len())?;
        }
        Ok(())
    }
}

impl ExecutionPlan for B2ndScanExec {
    fn name(&self) -> &str {
        "B2ndScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "B2ndScanExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let pieces = self.partitions.get(partition).cloned().ok_or_else(|| {
            DataFusionError::Execution(format!(
                "B2ndScanExec: partition {partition} of {}",
                self.partitions.len()
            ))
        })?;
        let files = self.files.clone();
        // Pieces name files of the scan and rows they have (decoding checked both).
        if let Some(p) = pieces.iter().find(|p| {
            files
                .get(p.file)
                .is_none_or(|f| p.rows.end > f.rows || p.rows.start > p.rows.end)
        }) {
            return Err(DataFusionError::Execution(format!(
                "B2ndScanExec: partition {partition} reads rows {}..{} of file {} of {}",
                p.rows.start,
                p.rows.end,
                p.file,
                files.len()
            )));
        }
        let schema = self.schema.clone();
        let skipped = MetricBuilder::new(&self.metrics).counter("batches_skipped", partition);
        let dynamic = self.dynamic.clone();
        let mut left = self.limit.map_or(u64::MAX, |l| l as u64);
        // Batches of whole blocks or chunks (cut at multiples of the file's batch rows),
        // piece after piece.
        let steps: Vec<u64> = files.iter().map(|f| f.batch_rows).collect();
        let batches = pieces.into_iter().flat_map(move |p| {
            let step = steps[p.file];
            let (file, r) = (p.file, p.rows);
            let mut at = r.start;
            std::iter::from_fn(move || {
                if at >= r.end {
                    return None;
                }
                let stop = (at / step + 1).saturating_mul(step).min(r.end);
                let span = at..stop;
                at = stop;
                Some((file, span))
            })
        });
        let batches = batches.map_while(move |(file, r)| {
            if left == 0 {
                return None;
            }
            let take = (r.end - r.start).min(left);
            left -= take;
            Some((file, r.start..r.start + take))
        });
        // Each batch is read on Tokio's blocking threads: b2nd's reads block (remote ones
        // on a runtime of their own); a file is opened by its first batch.
        let stream = futures::stream::iter(batches)
            .then(move |(file, r)| {
                let (files, schema) = (files.clone(), schema.clone());
                let (dynamic, skipped) = (dynamic.clone(), skipped.clone());
                async move {
                    tokio::task::spawn_blocking(move || {
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
                            if !Self::may_pass(&opened, z, &schema, &dynamic, &r)? {
                                skipped.add(1);
                                return Ok(None);
                            }
                        }
                        opened.batch(&schema, r).map(Some)
                    })
                    .await
                    .map_err(|e| DataFusionError::External(Box::new(e)))?
                }
            })
            .filter_map(|b| async move { b.transpose() });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    /// Dynamic filters (a top-k's) are kept, for skipping batches by the zones; DataFusion
    /// still applies every filter (none is reported pushed down).
    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        _config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let filters = child_pushdown_result.parent_filters;
        let no = vec![PushedDown::No; filters.len()];
        let dynamic: Vec<_> = filters
            .into_iter()
            .map(|f| f.filter)
            .filter(|f| snapshot_generation(f) != 0)
            .collect();
        let zoned = self.files.iter().any(|f| f.zones.is_some());
        if !matches!(phase, FilterPushdownPhase::Post) || !zoned || dynamic.is_empty() {
            return Ok(FilterPushdownPropagation::with_parent_pushdown_result(no));
        }
        let mut scan = B2ndScanExec::new(
            self.files.clone(),
            self.schema.clone(),
            self.partitions.clone(),
            self.limit,
        )
        .with_planning(self.columns.clone(), self.pruned_by.clone());
        scan.dynamic = self.dynamic.iter().cloned().chain(dynamic).collect();
        Ok(FilterPushdownPropagation::with_parent_pushdown_result(no)
            .with_updated_node(Arc::new(scan) as Arc<dyn ExecutionPlan>))
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let len = |p: &Vec<Piece>| p.iter().map(|p| p.rows.end - p.rows.start).sum::<u64>();
        let rows: u64 = match partition {
            Some(p) => self.partitions.get(p).map_or(0, len),
            None => self.partitions.iter().map(len).sum(),
        };
        let rows = match self.limit {
            Some(l) => rows.min(l as u64 * self.partitions.len().max(1) as u64),
            None => rows,
        };
        let mut s = Statistics::new_unknown(&self.schema);
        if !self.columns.is_empty() {
            s.column_statistics = self.columns.clone();
        }
        s.num_rows = if self.limit.is_some() {
            Precision::Inexact(rows as usize)
        } else {
            Precision::Exact(rows as usize)
        };
        Ok(Arc::new(s))
    }
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
