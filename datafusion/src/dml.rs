//! SQL `INSERT`, `DELETE`, `UPDATE` and `TRUNCATE` on a b2nd table: [`B2ndDmlExec`], the plan
//! DataFusion's DML hooks of [`crate::B2ndTable`] return. Executing it makes the change with
//! b2nd's `TableMut` (one atomic change of the table per statement, left as python-blosc2
//! leaves its own), reopens the provider's table, and yields one row: `count`, the rows
//! inserted or deleted. Nothing changes before the plan runs (an `EXPLAIN` changes nothing).
//!
//! `INSERT` collects its input first (so `INSERT INTO t SELECT ... FROM t` reads the table
//! as it was); `DELETE` and `UPDATE` evaluate their predicate (and `UPDATE` its new values)
//! on the table as the writer's lock holds it, and change the rows where it is true (a NULL
//! keeps the row as it is).

use std::fmt;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;

use b2nd::{Rows, TableMut};
use datafusion::arrow::array::{Array as _, BooleanArray, UInt64Array};
use datafusion::arrow::compute::{and_kleene, cast, concat, concat_batches, filter_record_batch};
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

/// Rows per batch when a `DELETE` or an `UPDATE` evaluates its predicate.
const DML_BATCH_ROWS: u64 = 1 << 16;

/// What a [`B2ndDmlExec`] changes.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// Append the input's rows.
    Insert(Arc<dyn ExecutionPlan>),
    /// Delete the rows selected.
    Delete(Selection),
    /// Set the columns named to the values of their expressions (over the columns of the
    /// selection's schema) on the rows selected; each with the column's Arrow type.
    Update {
        selection: Selection,
        assignments: Vec<(String, Arc<dyn PhysicalExpr>, DataType)>,
    },
}

/// The rows where every predicate is true (none: every row), predicates over the columns of
/// `schema` (a projection of the table's).
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    schema: SchemaRef,
    predicates: Vec<Arc<dyn PhysicalExpr>>,
}

impl Selection {
    /// `filters` (DataFusion's, over the table's `schema`) and `values` compiled over the
    /// columns any of them names.
    fn compile(
        schema: &SchemaRef,
        filters: &[Expr],
        values: &[Expr],
        props: &datafusion::execution::context::ExecutionProps,
    ) -> Result<(Selection, Vec<Arc<dyn PhysicalExpr>>)> {
        let mut names: Vec<String> = Vec::new();
        for f in filters.iter().chain(values) {
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
        let compile = |e: &Expr| {
            create_physical_expr(e, &df_schema, props, &PhysicalPlanningContext::default())
        };
        let predicates = filters.iter().map(compile).collect::<Result<Vec<_>>>()?;
        let values = values.iter().map(compile).collect::<Result<Vec<_>>>()?;
        Ok((
            Selection {
                schema: projected,
                predicates,
            },
            values,
        ))
    }

    /// Call `each` with every batch of the table's live rows (the selection's columns, from
    /// row `start`) and which of them are selected, until the rows end.
    fn for_each(
        &self,
        t: &b2nd::Table,
        mut each: impl FnMut(u64, &RecordBatch, &BooleanArray) -> b2nd::Result<()>,
    ) -> b2nd::Result<()> {
        let bad = |e: DataFusionError| b2nd::Error::InvalidArgument(e.to_string());
        let n = t.n_rows();
        let whole = crate::rows::WholeColumns::default();
        let mut at = 0;
        while at < n {
            let span: Range<u64> = at..(at + DML_BATCH_ROWS).min(n);
            let batch =
                crate::rows::table_batch(t, &whole, &self.schema, span.clone()).map_err(bad)?;
            let selected = matches(&batch, &self.predicates).map_err(bad)?;
            each(span.start, &batch, &selected)?;
            at = span.end;
        }
        Ok(())
    }
}

/// The plan of one `INSERT`, `DELETE`, `UPDATE` or `TRUNCATE` on a table: changes it when executed,
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
        let (selection, _) = Selection::compile(schema, filters, &[], props)?;
        Ok(B2ndDmlExec::new(live, path, Change::Delete(selection)))
    }

    /// An `UPDATE`'s plan: `assignments` (column, new value) and `filters`, DataFusion's,
    /// over the table's `schema`.
    pub(crate) fn update(
        live: Arc<Live>,
        path: PathBuf,
        schema: &SchemaRef,
        assignments: &[(String, Expr)],
        filters: &[Expr],
        props: &datafusion::execution::context::ExecutionProps,
    ) -> Result<B2ndDmlExec> {
        let values: Vec<Expr> = assignments.iter().map(|(_, e)| e.clone()).collect();
        let (selection, compiled) = Selection::compile(schema, filters, &values, props)?;
        let assignments = assignments
            .iter()
            .zip(compiled)
            .map(|((name, _), e)| {
                let field = schema.field_with_name(name)?;
                Ok((name.clone(), e, field.data_type().clone()))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(B2ndDmlExec::new(
            live,
            path,
            Change::Update {
                selection,
                assignments,
            },
        ))
    }
}

impl DisplayAs for B2ndDmlExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.change {
            Change::Insert(_) => write!(f, "B2ndDmlExec: insert into {}", self.path.display()),
            Change::Delete(sel) if sel.predicates.is_empty() => {
                write!(
                    f,
                    "B2ndDmlExec: delete every row of {}",
                    self.path.display()
                )
            }
            Change::Delete(sel) => {
                write!(
                    f,
                    "B2ndDmlExec: delete from {} where {}",
                    self.path.display(),
                    sel.describe()
                )
            }
            Change::Update {
                selection,
                assignments,
            } => {
                let set: Vec<String> = assignments
                    .iter()
                    .map(|(n, e, _)| format!("{n} = {e}"))
                    .collect();
                write!(
                    f,
                    "B2ndDmlExec: update {} set {}",
                    self.path.display(),
                    set.join(", ")
                )?;
                if !selection.predicates.is_empty() {
                    write!(f, " where {}", selection.describe())?;
                }
                Ok(())
            }
        }
    }
}

impl Selection {
    /// The predicates, joined with AND.
    fn describe(&self) -> String {
        let p: Vec<String> = self.predicates.iter().map(|p| p.to_string()).collect();
        p.join(" AND ")
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
            Change::Delete(_) | Change::Update { .. } => vec![],
        }
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        let exprs: Vec<&Arc<dyn PhysicalExpr>> = match &self.change {
            Change::Insert(_) => vec![],
            Change::Delete(sel) => sel.predicates.iter().collect(),
            Change::Update {
                selection,
                assignments,
            } => selection
                .predicates
                .iter()
                .chain(assignments.iter().map(|(_, e, _)| e))
                .collect(),
        };
        for p in exprs {
            if f(p)? == TreeNodeRecursion::Stop {
                return Ok(TreeNodeRecursion::Stop);
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
            (Change::Delete(_) | Change::Update { .. }, 0) => Ok(self),
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
                Change::Delete(selection) => {
                    blocking(move || delete_where(&path, &selection)).await?
                }
                Change::Update {
                    selection,
                    assignments,
                } => blocking(move || update_where(&path, &selection, &assignments)).await?,
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
/// with NULL) left out, and refused when given a value; generated columns left out when
/// every row is NULL (an INSERT that does not name them: `TableMut` computes them).
fn rows_of(live: &Live, batch: &RecordBatch) -> Result<Rows> {
    let computed = live.computed_columns();
    let generated = live.generated_columns();
    let mut keep = Vec::new();
    for (i, f) in batch.schema().fields().iter().enumerate() {
        let c = batch.column(i);
        if generated.contains(f.name()) && c.null_count() == c.len() {
            continue;
        }
        if computed.contains(f.name()) {
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

/// Delete the live rows of the table at `path` the selection holds, evaluated on the table
/// as the writer's lock holds it; the rows deleted.
fn delete_where(path: &std::path::Path, selection: &Selection) -> b2nd::Result<u64> {
    let mut t = TableMut::open(path)?;
    let rows: Vec<u64> = if selection.predicates.is_empty() {
        (0..t.table().n_rows()).collect()
    } else {
        let mut rows = Vec::new();
        selection.for_each(t.table(), |start, _, selected| {
            rows.extend(selected_rows(start, selected));
            Ok(())
        })?;
        rows
    };
    t.delete(&rows)
}

/// The rows of a batch from row `start` that `selected` holds true.
fn selected_rows(start: u64, selected: &BooleanArray) -> impl Iterator<Item = u64> + '_ {
    selected
        .iter()
        .enumerate()
        .filter(|(_, v)| *v == Some(true))
        .map(move |(i, _)| start + i as u64)
}

/// Set the assigned columns of the live rows of the table at `path` the selection holds,
/// evaluated on the table as the writer's lock holds it (one `TableMut::update`); the rows
/// changed.
fn update_where(
    path: &std::path::Path,
    selection: &Selection,
    assignments: &[(String, Arc<dyn PhysicalExpr>, DataType)],
) -> b2nd::Result<u64> {
    let bad = |e: DataFusionError| b2nd::Error::InvalidArgument(e.to_string());
    let mut t = TableMut::open(path)?;
    let mut rows = Vec::new();
    let mut parts: Vec<Vec<datafusion::arrow::array::ArrayRef>> =
        vec![Vec::new(); assignments.len()];
    selection.for_each(t.table(), |start, batch, selected| {
        let before = rows.len();
        rows.extend(selected_rows(start, selected));
        if rows.len() == before {
            return Ok(());
        }
        let chosen = filter_record_batch(batch, &normalize(selected)).map_err(|e| bad(e.into()))?;
        for ((name, e, ty), part) in assignments.iter().zip(&mut parts) {
            let v = e
                .evaluate(&chosen)
                .and_then(|v| v.into_array(chosen.num_rows()))
                .map_err(bad)?;
            let v = cast(&v, ty).map_err(|err| {
                b2nd::Error::InvalidArgument(format!(
                    "UPDATE of column {name:?}: a {} value for a {ty} column: {err}",
                    v.data_type()
                ))
            })?;
            part.push(v);
        }
        Ok(())
    })?;
    if rows.is_empty() {
        return Ok(0);
    }
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for ((name, _, ty), part) in assignments.iter().zip(parts) {
        let refs: Vec<&dyn datafusion::arrow::array::Array> =
            part.iter().map(|a| a.as_ref()).collect();
        let whole = concat(&refs).map_err(|e| bad(e.into()))?;
        fields.push(Field::new(name, ty.clone(), whole.null_count() > 0));
        columns.push(whole);
    }
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| bad(e.into()))?;
    t.update(&rows, &Rows::from_record_batch(&batch)?)
}

/// `selected` with NULL as false (SQL: a NULL predicate selects nothing).
fn normalize(selected: &BooleanArray) -> BooleanArray {
    selected.iter().map(|v| Some(v == Some(true))).collect()
}

/// Every predicate on `batch`, combined with SQL's AND (NULL where unknown).
fn matches(batch: &RecordBatch, predicates: &[Arc<dyn PhysicalExpr>]) -> Result<BooleanArray> {
    let mut all: Option<BooleanArray> = None;
    for p in predicates {
        let v = p.evaluate(batch)?.into_array(batch.num_rows())?;
        let v = v
            .as_any()
            .downcast_ref::<BooleanArray>()
            .ok_or_else(|| ext(format!("the predicate {p} is not a boolean")))?
            .clone();
        all = Some(match all {
            None => v,
            Some(a) => and_kleene(&a, &v)?,
        });
    }
    Ok(all.unwrap_or_else(|| BooleanArray::from(vec![true; batch.num_rows()])))
}
