//! SQL `INSERT`, `DELETE` and `TRUNCATE` on a b2nd table: [`B2ndDmlExec`], the plan
//! DataFusion's DML hooks of [`crate::B2ndTable`] return. Executing it makes the change with
//! b2nd's `TableMut` (one atomic change of the table per statement, left as python-blosc2
//! leaves its own), reopens the provider's table, and yields one row: `count`, the rows
//! inserted or deleted. Nothing changes before the plan runs (an `EXPLAIN` changes nothing).
//!
//! `INSERT` collects its input first (so `INSERT INTO t SELECT ... FROM t` reads the table
//! as it was); `DELETE` evaluates its predicate on the table as the writer's lock holds it, and
//! deletes the rows where it is true (a NULL keeps the row).

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use b2nd::{Rows, TableMut};
use datafusion::arrow::array::{Array as _, BooleanArray, UInt64Array};
use datafusion::arrow::compute::{and_kleene, concat_batches};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext;
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{create_physical_expr, EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};

use crate::live::Live;

/// Rows per batch when a `DELETE` evaluates its predicate.
const DELETE_BATCH_ROWS: u64 = 1 << 16;

/// What a [`B2ndDmlExec`] changes.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Append the input's rows.
    Insert(Arc<dyn ExecutionPlan>),
    /// Delete the rows where every predicate is true (none: every row), predicates over
    /// the columns of `schema` (a projection of the table's).
    Delete {
        schema: SchemaRef,
        predicates: Vec<Arc<dyn PhysicalExpr>>,
    },
}

/// The plan of one `INSERT`, `DELETE` or `TRUNCATE` on a table: changes it when executed,
/// yields `count`.
pub struct B2ndDmlExec {
    live: Arc<Live>,
    path: PathBuf,
    change: Change,
    props: Arc<PlanProperties>,
}

impl fmt::Debug for B2ndDmlExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("B2ndDmlExec")
            .field("path", &self.path)
            .field("change", &self.change)
            .finish()
    }
}

/// The one-column schema DML plans yield.
fn count_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new(
        "count",
        DataType::UInt64,
        false,
    )]))
}

fn ext(e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Execution(e.to_string())
}

impl B2ndDmlExec {
    pub(crate) fn new(live: Arc<Live>, path: PathBuf, change: Change) -> B2ndDmlExec {
        let props = PlanProperties::new(
            EquivalenceProperties::new(count_schema()),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        B2ndDmlExec {
            live,
            path,
            change,
            props: Arc::new(props),
        }
    }

    /// A `DELETE`'s plan: `filters` (DataFusion's, over the table's `schema`) compiled over
    /// the columns they name.
    pub(crate) fn delete(
        live: Arc<Live>,
        path: PathBuf,
        schema: &SchemaRef,
        filters: &[Expr],
        props: &datafusion::execution::context::ExecutionProps,
    ) -> Result<B2ndDmlExec> {
        let mut names: Vec<String> = Vec::new();
        for f in filters {
            for c in f.column_refs() {
                if !names.contains(&c.name) {
                    names.push(c.name.clone());
                }
            }
        }
        let indices = names
            .iter()
            .map(|n| schema.index_of(n))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let projected: SchemaRef = Arc::new(schema.project(&indices)?);
        let df_schema = DFSchema::try_from(projected.clone())?;
        let predicates = filters
            .iter()
            .map(|f| {
                create_physical_expr(f, &df_schema, props, &PhysicalPlanningContext::default())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(B2ndDmlExec::new(
            live,
            path,
            Change::Delete {
                schema: projected,
                predicates,
            },
        ))
    }
}

impl DisplayAs for B2ndDmlExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.change {
            Change::Insert(_) => write!(f, "B2ndDmlExec: insert into {}", self.path.display()),
            Change::Delete { predicates, .. } if predicates.is_empty() => {
                write!(
                    f,
                    "B2ndDmlExec: delete every row of {}",
                    self.path.display()
                )
            }
            Change::Delete { predicates, .. } => {
                let p: Vec<String> = predicates.iter().map(|p| p.to_string()).collect();
                write!(
                    f,
                    "B2ndDmlExec: delete from {} where {}",
                    self.path.display(),
                    p.join(" AND ")
                )
            }
        }
    }
}

impl ExecutionPlan for B2ndDmlExec {
    fn name(&self) -> &str {
        "B2ndDmlExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        match &self.change {
            Change::Insert(input) => vec![input],
            Change::Delete { .. } => vec![],
        }
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        if let Change::Delete { predicates, .. } = &self.change {
            for p in predicates {
                if f(p)? == TreeNodeRecursion::Stop {
                    return Ok(TreeNodeRecursion::Stop);
                }
            }
        }
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (&self.change, children.len()) {
            (Change::Insert(_), 1) => Ok(Arc::new(B2ndDmlExec::new(
                self.live.clone(),
                self.path.clone(),
                Change::Insert(children.remove(0)),
            ))),
            (Change::Delete { .. }, 0) => Ok(self),
            _ => Err(DataFusionError::Internal(format!(
                "B2ndDmlExec: {} children",
                children.len()
            ))),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(ext(format!("B2ndDmlExec: partition {partition} of 1")));
        }
        let (live, path, change) = (self.live.clone(), self.path.clone(), self.change.clone());
        let run = async move {
            let count = match change {
                Change::Insert(input) => {
                    let schema = input.schema();
                    let batches = datafusion::physical_plan::collect(input, context).await?;
                    let batch = concat_batches(&schema, &batches)?;
                    let rows = rows_of(&live, &batch)?;
                    blocking(move || TableMut::open(&path)?.append(&rows)).await?
                }
                Change::Delete { schema, predicates } => {
                    blocking(move || delete_where(&path, &schema, &predicates)).await?
                }
            };
            live.reload()?;
            let counts: Arc<dyn datafusion::arrow::array::Array> =
                Arc::new(UInt64Array::from(vec![count]));
            Ok(RecordBatch::try_new(count_schema(), vec![counts])?)
        };
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            count_schema(),
            futures::stream::once(run),
        )))
    }
}

/// Run a blocking change on Tokio's blocking threads; b2nd's errors become execution errors.
async fn blocking(f: impl FnOnce() -> b2nd::Result<u64> + Send + 'static) -> Result<u64> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))?
        .map_err(ext)
}

/// The rows of an `INSERT`'s input for `TableMut`: computed columns (which DataFusion fills
/// with NULL) left out, and refused when given a value.
fn rows_of(live: &Live, batch: &RecordBatch) -> Result<Rows> {
    let computed = live.computed_columns();
    let mut keep = Vec::new();
    for (i, f) in batch.schema().fields().iter().enumerate() {
        if computed.contains(f.name()) {
            let c = batch.column(i);
            if c.null_count() != c.len() {
                return Err(ext(format!(
                    "column {:?} is computed: python-blosc2 evaluates it, INSERT gives it no \
                     value",
                    f.name()
                )));
            }
        } else {
            keep.push(i);
        }
    }
    Rows::from_record_batch(&batch.project(&keep)?).map_err(ext)
}

/// Delete the live rows of the table at `path` where every predicate is true, evaluated on
/// the table as the writer's lock holds it; the rows deleted.
fn delete_where(
    path: &std::path::Path,
    schema: &SchemaRef,
    predicates: &[Arc<dyn PhysicalExpr>],
) -> b2nd::Result<u64> {
    let mut t = TableMut::open(path)?;
    let n = t.table().n_rows();
    let rows: Vec<u64> = if predicates.is_empty() {
        (0..n).collect()
    } else {
        let whole = crate::rows::WholeColumns::default();
        let mut rows = Vec::new();
        let mut at = 0;
        while at < n {
            let span: Range<u64> = at..(at + DELETE_BATCH_ROWS).min(n);
            let batch = crate::rows::table_batch(t.table(), &whole, schema, span.clone())
                .map_err(|e| b2nd::Error::InvalidArgument(e.to_string()))?;
            let keep = matches(&batch, predicates)
                .map_err(|e| b2nd::Error::InvalidArgument(e.to_string()))?;
            rows.extend(
                keep.iter()
                    .enumerate()
                    .filter(|(_, v)| *v == Some(true))
                    .map(|(i, _)| span.start + i as u64),
            );
            at = span.end;
        }
        rows
    };
    t.delete(&rows)
}

/// Every predicate on `batch`, combined with SQL's AND (NULL where unknown).
fn matches(batch: &RecordBatch, predicates: &[Arc<dyn PhysicalExpr>]) -> Result<BooleanArray> {
    let mut all: Option<BooleanArray> = None;
    for p in predicates {
        let v = p.evaluate(batch)?.into_array(batch.num_rows())?;
        let v = v
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| ext(format!("DELETE predicate {p} is not a boolean")))?
            .clone();
        all = Some(match all {
            None => v,
            Some(a) => and_kleene(&a, &v)?,
        });
    }
    Ok(all.unwrap_or_else(|| BooleanArray::from(vec![true; batch.num_rows()])))
}
