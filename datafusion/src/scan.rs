//! [`B2ndScanExec`]: the physical scan of a b2nd table or array. Its partitions are plain row
//! ranges of a [`Source`], cut at storage-chunk boundaries, so that every core reads chunks of
//! its own and a worker elsewhere can run any partition from the description alone
//! ([`crate::B2ndCodec`] ships it).

use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::stats::Precision;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DataFusionError, Result, Statistics};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};

use crate::source::{Shared, Source};

/// The scan of some columns of a [`Source`], partitioned by row ranges.
pub struct B2ndScanExec {
    pub(crate) source: Source,
    /// The columns produced (a projection of the source's schema).
    pub(crate) schema: SchemaRef,
    /// One row range per partition.
    pub(crate) partitions: Vec<Range<u64>>,
    /// Rows per batch (a multiple of the rows of a storage chunk).
    pub(crate) batch_rows: u64,
    /// At most this many rows per partition (the planner's limit, pushed down).
    pub(crate) limit: Option<usize>,
    /// The source, opened on first use and shared by the partitions.
    opened: Mutex<Option<Shared>>,
    props: Arc<PlanProperties>,
}

impl fmt::Debug for B2ndScanExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("B2ndScanExec")
            .field("source", &self.source)
            .field("partitions", &self.partitions)
            .field("batch_rows", &self.batch_rows)
            .field("limit", &self.limit)
            .finish()
    }
}

impl B2ndScanExec {
    /// The scan of `schema`'s columns of `source` over `partitions` (row ranges), in batches
    /// of `batch_rows`, at most `limit` rows per partition; `opened` is the source already
    /// opened, if it is.
    pub(crate) fn new(
        source: Source,
        schema: SchemaRef,
        partitions: Vec<Range<u64>>,
        batch_rows: u64,
        limit: Option<usize>,
        opened: Option<Shared>,
    ) -> B2ndScanExec {
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(partitions.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        B2ndScanExec {
            source,
            schema,
            partitions,
            batch_rows: batch_rows.max(1),
            limit,
            opened: Mutex::new(opened),
            props: Arc::new(props),
        }
    }

    /// The source this scan reads.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The row range of each partition.
    pub fn partitions(&self) -> &[Range<u64>] {
        &self.partitions
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

/// `n` rows cut into at most `parts` ranges, each a whole number of `unit`s (but the last).
pub(crate) fn split_rows(n: u64, unit: u64, parts: usize) -> Vec<Range<u64>> {
    let unit = unit.max(1);
    let units = n.div_ceil(unit);
    let parts = (parts.max(1) as u64).min(units.max(1));
    let per = units.div_ceil(parts).max(1);
    let mut out = Vec::new();
    let mut at = 0;
    while at < n {
        let end = (at + per * unit).min(n);
        out.push(at..end);
        at = end;
    }
    if out.is_empty() {
        out.push(0..0);
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
        write!(
            f,
            "B2ndScanExec: source={}, columns=[{}], partitions={}",
            self.source.display(),
            cols.join(", "),
            self.partitions.len()
        )?;
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
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
        let range = self.partitions.get(partition).cloned().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "B2ndScanExec: partition {partition} of {}",
                self.partitions.len()
            ))
        })?;
        let opened = self.opened()?;
        let schema = self.schema.clone();
        let end = match self.limit {
            Some(l) => range.end.min(range.start.saturating_add(l as u64)),
            None => range.end,
        };
        let step = self.batch_rows;
        let mut at = range.start;
        let batches = std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            // Whole batches of chunks; the last one up to the end.
            let stop = (at / step + 1).saturating_mul(step).min(end);
            let r = at..stop;
            at = stop;
            Some(opened.batch(&schema, r))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        )))
    }

    fn partition_statistics(&self, partition: Option<usize>) -> Result<Arc<Statistics>> {
        let rows: u64 = match partition {
            Some(p) => self.partitions.get(p).map_or(0, |r| r.end - r.start),
            None => self.partitions.iter().map(|r| r.end - r.start).sum(),
        };
        let rows = match self.limit {
            Some(l) => rows.min(l as u64 * self.partitions.len().max(1) as u64),
            None => rows,
        };
        let mut s = Statistics::new_unknown(&self.schema);
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
    use super::split_rows;

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
    }
}
