//! [`B2ndTable`]: a b2nd table or array as a DataFusion table.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

use crate::prune::{Cut, Zones};
use crate::scan::{split_ranges, B2ndScanExec};
use crate::source::{Kind, Shared, Source};
use crate::terms;

/// A python-blosc2 CTable or an N-d array as a DataFusion table.
///
/// Tables: one column per table column (b2nd's Arrow types), live rows only (deleted rows
/// never appear), nulls as SQL NULL. Arrays: one row per element, `i0`, `i1`, … and `value`.
/// Scans read only the projected columns, in partitions of about equal rows (one per target
/// partition of the session), skip the blocks of rows that filters such as
/// `x > 5 AND id BETWEEN 10 AND 20` on numeric columns cannot match (python-blosc2's own
/// SUMMARY indexes when fresh, else zone maps computed on the first such query and kept),
/// and stop at a pushed-down limit. The planner gets the row count and each numeric
/// column's bounds from the same zones.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionContext;
/// let ctx = SessionContext::new();
/// let t = b2nd_datafusion::B2ndTable::table("../tests/data/tables/basic.b2z")?;
/// ctx.register_table("t", std::sync::Arc::new(t))?;
/// let rows = ctx.sql("SELECT count(*) AS n FROM t").await?.collect().await?;
/// assert_eq!(rows[0].num_rows(), 1);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct B2ndTable {
    source: Source,
    opened: Shared,
    schema: SchemaRef,
    /// Rows per storage chunk in row order (the unit of partitions and batches).
    unit: u64,
    /// Rows per storage block in row order (the unit of computed zones).
    block: u64,
    /// Zone maps of the columns filters were pushed on.
    zones: Zones,
}

impl B2ndTable {
    /// The source opened, its schema read.
    pub fn open(source: Source) -> Result<B2ndTable> {
        let (opened, schema, unit, block) = crate::source::off_runtime(|| -> Result<_> {
            let opened: Shared = Arc::new(source.open()?);
            let schema = opened.schema()?;
            let (unit, block) = (opened.rows_per_chunk(), opened.rows_per_block());
            Ok((opened, schema, unit, block))
        })?;
        Ok(B2ndTable {
            source,
            opened,
            schema,
            unit,
            block,
            zones: Zones::default(),
        })
    }

    /// The CTable at `spec` (`PATH` or `PATH#KEY` inside a store).
    pub fn table(spec: &str) -> Result<B2ndTable> {
        B2ndTable::open(Source::parse(spec, Kind::Table))
    }

    /// The N-d array at `spec` (`PATH` or `PATH#KEY` inside a store).
    pub fn array(spec: &str) -> Result<B2ndTable> {
        B2ndTable::open(Source::parse(spec, Kind::Array))
    }

    /// Whatever is at `spec` (`PATH` or `PATH#KEY`): a CTable, else an N-d array (one row
    /// per element). The error names both readings when neither opens.
    ///
    /// ```
    /// use datafusion::catalog::TableProvider as _;
    /// let t = b2nd_datafusion::B2ndTable::any("../tests/data/f8_2d_ragged.b2nd")?;
    /// assert_eq!(t.schema().field(0).name(), "i0");
    /// # Ok::<(), datafusion::error::DataFusionError>(())
    /// ```
    pub fn any(spec: &str) -> Result<B2ndTable> {
        match B2ndTable::table(spec) {
            Ok(t) => Ok(t),
            Err(as_table) => B2ndTable::array(spec).map_err(|as_array| {
                datafusion::error::DataFusionError::Execution(format!(
                    "{spec} is neither a table nor an array: as a table: {}; as an array: {}",
                    one_line(&as_table),
                    one_line(&as_array)
                ))
            }),
        }
    }

    /// Where the data is.
    pub fn source(&self) -> &Source {
        &self.source
    }
}

/// An error's root message without DataFusion's "External error: " wrapping.
fn one_line(e: &datafusion::error::DataFusionError) -> String {
    match e.find_root() {
        datafusion::error::DataFusionError::External(inner) => inner.to_string(),
        other => other.to_string(),
    }
}

#[async_trait]
impl TableProvider for B2ndTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let unit = self.unit;
        let n = self.opened.n_rows();
        let cut = Cut {
            read_rows: unit,
            zone_rows: self.block,
        };
        // Zones (blocks of rows) no filter can match are left out; the planner gets the
        // columns' bounds.
        let (ranges, pruned_by, columns) = crate::source::off_runtime(|| -> Result<_> {
            let (ranges, notes) = self
                .zones
                .ranges(&self.opened, &self.schema, filters, cut)?;
            let columns = self.zones.statistics(&self.opened, &schema)?;
            Ok((ranges, notes, columns))
        })?;
        // Partitions are cut at blocks, or at chunks for a URL: there a chunk two partitions
        // share is fetched twice, and a request costs more than an unbalanced partition.
        let part_unit = if self.source.is_url() {
            unit
        } else {
            self.block
        };
        let parts = split_ranges(&ranges, part_unit, state.config().target_partitions());
        // Batches of whole chunks, about the session's batch size or more.
        let want = state.config().batch_size() as u64;
        let batch_rows = want.div_ceil(unit).max(1) * unit;
        Ok(Arc::new(
            B2ndScanExec::new(
                self.source.clone(),
                schema,
                parts,
                n,
                batch_rows,
                limit,
                Some(self.opened.clone()),
            )
            .with_planning(columns, pruned_by),
        ))
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        // Filters with `numeric column <op> literal` parts prune zones; DataFusion still
        // applies every filter exactly.
        Ok(filters
            .iter()
            .map(|f| {
                if terms::usable(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        let mut s = Statistics::new_unknown(&self.schema);
        s.num_rows = Precision::Exact(self.opened.n_rows() as usize);
        if let Ok(c) =
            crate::source::off_runtime(|| self.zones.statistics(&self.opened, &self.schema))
        {
            s.column_statistics = c;
        }
        Some(s)
    }
}
