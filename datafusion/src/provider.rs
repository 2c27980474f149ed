//! [`B2ndTable`]: a b2nd table or array as a DataFusion table.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::stats::Precision;
use datafusion::common::{ColumnStatistics, DataFusionError, Result, Statistics};
use datafusion::datasource::TableType;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;

use crate::dml::{B2ndDmlExec, Change};
use crate::live::Live;
use crate::prune::Cut;
use crate::scan::{scan_exec, split_ranges, B2ndSource, ScanFile};
use crate::source::{Kind, Opened, Shared, Source};
use crate::terms;

/// A python-blosc2 CTable or an N-d array as a DataFusion table, or many files of them read
/// as one (a glob such as `events/*.b2z` or `s3://bucket/events/*.b2z`, or a directory or
/// prefix ending in `/`: their rows one after the other, file by file in the order of their
/// names; the files must share a schema).
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
    /// The files, in row order (one for a table or array at a path or URL).
    files: Vec<TableFile>,
    schema: SchemaRef,
    /// Whether SQL may change the table (`INSERT`, `DELETE`, `TRUNCATE`).
    writes: bool,
    /// The defaults the table's schema declares, as SQL literals (for `INSERT` with a column
    /// list).
    defaults: HashMap<String, Expr>,
}

/// One file of a [`B2ndTable`].
#[derive(Debug)]
struct TableFile {
    source: Source,
    live: Arc<Live>,
    /// Rows per storage chunk in row order (the unit of partitions and batches at a URL).
    unit: u64,
    /// Rows per storage block in row order (the unit of computed zones, and of local
    /// partitions and batches).
    block: u64,
}

impl TableFile {
    fn open(source: Source) -> Result<(TableFile, SchemaRef, Shared)> {
        crate::source::off_runtime(|| -> Result<_> {
            let opened: Shared = Arc::new(source.open()?);
            let schema = opened.schema()?;
            let (unit, block) = (opened.rows_per_chunk(), opened.rows_per_block());
            let file = TableFile {
                live: Arc::new(Live::new(source.clone(), opened.clone())),
                source,
                unit,
                block,
            };
            Ok((file, schema, opened))
        })
    }
}

impl B2ndTable {
    /// The source opened, its schema read.
    pub fn open(source: Source) -> Result<B2ndTable> {
        B2ndTable::open_many(vec![source])
    }

    /// Many files as one table: each opened, their schemas checked to be one (the same
    /// columns in the same order, of the same types; a column nullable in one file is
    /// nullable in the table). The error names the file that differs and how.
    pub fn open_many(sources: Vec<Source>) -> Result<B2ndTable> {
        let mut files = Vec::with_capacity(sources.len());
        let mut schema: Option<SchemaRef> = None;
        let mut first_opened = None;
        for source in sources {
            let (file, s, opened) = TableFile::open(source)?;
            schema = Some(match schema {
                None => s,
                Some(known) => {
                    let first = &files
                        .first()
                        .map(|f: &TableFile| f.source.display())
                        .unwrap_or_default();
                    one_schema(&known, &s, first, &file.source.display())?
                }
            });
            first_opened.get_or_insert(opened);
            files.push(file);
        }
        let (Some(schema), Some(opened)) = (schema, first_opened) else {
            return Err(DataFusionError::Plan("a table of no files".into()));
        };
        let defaults = match &*opened {
            Opened::Table(t, _) if files.len() == 1 => declared_defaults(t, &schema),
            _ => HashMap::new(),
        };
        Ok(B2ndTable {
            files,
            schema,
            writes: false,
            defaults,
        })
    }

    /// Whether SQL may change the table (default: no, and `INSERT`, `DELETE` and
    /// `TRUNCATE` are refused). Changes need a table saved on its own (`.b2d` or `.b2z`) on a
    /// local disk; each statement is one atomic change (b2nd's [`b2nd::TableMut`]). `DELETE`
    /// runs only in a [`session_context`](crate::session_context) (see
    /// [`B2ndQueryPlanner`](crate::B2ndQueryPlanner)).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("t.b2d");
    /// # b2nd::TableBuilder::new().column("id", &[1i64, 2]).unwrap().write(&path).unwrap();
    /// let ctx = b2nd_datafusion::session_context(Default::default());
    /// let t = b2nd_datafusion::B2ndTable::table(path.to_str().unwrap())?.with_writes(true);
    /// ctx.register_table("t", std::sync::Arc::new(t))?;
    /// ctx.sql("INSERT INTO t VALUES (3), (4)").await?.collect().await?;
    /// ctx.sql("DELETE FROM t WHERE id < 2").await?.collect().await?;
    /// let n = ctx.sql("SELECT count(*) FROM t").await?.collect().await?;
    /// assert_eq!(b2nd::Table::open(&path).unwrap().read_column::<i64>("id").unwrap(), [2, 3, 4]);
    /// # Ok::<(), datafusion::error::DataFusionError>(())
    /// # }).unwrap();
    /// ```
    pub fn with_writes(mut self, writes: bool) -> B2ndTable {
        self.writes = writes;
        self
    }

    /// [`Self::writable`] for a statement with a WHERE (DELETE, UPDATE): only planned through
    /// [`crate::session_context`], whose planner checks the WHERE reached the table whole.
    fn writable_checked(&self, what: &str) -> Result<PathBuf> {
        let path = self.writable(what)?;
        if !crate::guard::checked() {
            return Err(DataFusionError::Plan(format!(
                "{what} on {}: run it in b2nd_datafusion::session_context (B2ndQueryPlanner): \
                 DataFusion 55 hands a table no predicate for a WHERE it cannot pass whole, \
                 which reads as every row",
                self.display()
            )));
        }
        Ok(path)
    }

    /// The table's path for a change `what`, or why SQL cannot change it.
    fn writable(&self, what: &str) -> Result<PathBuf> {
        let refuse = |why: &str| {
            Err(DataFusionError::Plan(format!(
                "{what} on {}: {why}",
                self.display()
            )))
        };
        let [file] = &self.files[..] else {
            return refuse("a table of many files cannot be changed: change each file");
        };
        if !self.writes {
            return refuse(
                "the table was opened read-only (b2nd sql --write; B2ndTable::with_writes)",
            );
        }
        if file.source.kind != Kind::Table {
            return refuse("an array is not a table: only tables take rows");
        }
        if file.source.is_url() {
            return refuse("a table at a URL cannot be changed");
        }
        if file
            .source
            .key
            .as_deref()
            .is_some_and(|k| !k.is_empty() && k != "/")
        {
            return refuse(
                "only a table saved on its own (a .b2d or .b2z) can be changed, not one inside a store",
            );
        }
        Ok(PathBuf::from(&file.source.location))
    }

    /// The CTable at `spec` (`PATH` or `PATH#KEY` inside a store, a URL), or the CTables a
    /// glob or a directory ending in `/` names, as one table.
    pub fn table(spec: &str) -> Result<B2ndTable> {
        B2ndTable::open_many(crate::files::expand(spec, Kind::Table)?)
    }

    /// The N-d array at `spec` (`PATH` or `PATH#KEY` inside a store, a URL), or the arrays a
    /// glob or a directory ending in `/` names, as one table.
    pub fn array(spec: &str) -> Result<B2ndTable> {
        B2ndTable::open_many(crate::files::expand(spec, Kind::Array)?)
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

    /// Whether SQL may change the table ([`Self::with_writes`]).
    pub fn writes(&self) -> bool {
        self.writes
    }

    /// Where the data is (the first file of many).
    pub fn source(&self) -> &Source {
        &self.files[0].source
    }

    /// Every file, in row order.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        self.files.iter().map(|f| &f.source)
    }

    /// The first file, and how many more, for messages.
    fn display(&self) -> String {
        match &self.files[..] {
            [one] => one.source.display(),
            many => format!(
                "{} and {} more files",
                many[0].source.display(),
                many.len() - 1
            ),
        }
    }
}

/// The schema of a table of two files of schemas `a` (of files up to `first`) and `b` (of
/// file `other`): the same columns in the same order, of the same types; nullable where
/// either is.
fn one_schema(a: &SchemaRef, b: &SchemaRef, first: &str, other: &str) -> Result<SchemaRef> {
    let differ = |how: String| {
        Err(DataFusionError::Plan(format!(
            "{other} does not share the schema of {first}: {how}"
        )))
    };
    let names = |s: &SchemaRef| {
        s.fields()
            .iter()
            .map(|f| f.name().clone())
            .collect::<Vec<_>>()
    };
    if names(a) != names(b) {
        return differ(format!(
            "its columns are [{}], not [{}]",
            names(b).join(", "),
            names(a).join(", ")
        ));
    }
    let mut fields = Vec::with_capacity(a.fields().len());
    for (x, y) in a.fields().iter().zip(b.fields()) {
        if x.data_type() != y.data_type() {
            return differ(format!(
                "column {} is {} there, {} here",
                x.name(),
                y.data_type(),
                x.data_type()
            ));
        }
        fields.push(
            x.as_ref()
                .clone()
                .with_nullable(x.is_nullable() || y.is_nullable()),
        );
    }
    Ok(Arc::new(
        datafusion::arrow::datatypes::Schema::new_with_metadata(fields, a.metadata().clone()),
    ))
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
        let want = state.config().batch_size() as u64;
        let mut scan_files = Vec::with_capacity(self.files.len());
        let mut kept = Vec::with_capacity(self.files.len());
        let mut pruned_by: Vec<String> = Vec::new();
        let mut columns: Option<Vec<ColumnStatistics>> = None;
        for f in &self.files {
            let (opened, zones) = f.live.current();
            let cut = Cut {
                read_rows: f.unit,
                zone_rows: f.block,
            };
            // Zones (blocks of rows) no filter can match are left out; the planner gets the
            // columns' bounds.
            let (ranges, notes, cols) = crate::source::off_runtime(|| -> Result<_> {
                let (ranges, notes) = zones.ranges(&opened, &self.schema, filters, cut)?;
                let cols = zones.statistics(&opened, &schema)?;
                Ok((ranges, notes, cols))
            })?;
            for n in notes {
                if !pruned_by.contains(&n) {
                    pruned_by.push(n);
                }
            }
            columns = Some(match columns {
                None => cols,
                Some(c) => merge_columns(c, cols),
            });
            // Partitions are cut at blocks. At a URL, a table's partition announces its rows,
            // so that the chunks two partitions share are fetched once (in the background,
            // each batch decoding its blocks as they arrive), when the scan reads a good
            // share of the table (an eighth, as `Table::fetch_rows_ahead` asks); an array's
            // partitions, and those of a scan that reads less, are cut at chunks (one
            // request a column for each range the zones leave).
            let read: u64 = ranges.iter().map(|r| r.end - r.start).sum();
            let by_chunk = f.source.is_url()
                && (!matches!(*opened, Opened::Table(..))
                    || read.saturating_mul(8) < opened.n_rows());
            let part_unit = if by_chunk { f.unit } else { f.block };
            // Batches of whole blocks (of whole chunks when cut at chunks), about the
            // session's batch size or more: a read decodes only the blocks it needs, and
            // batches of a whole chunk (python-blosc2 makes one chunk of millions of rows)
            // are too large for DataFusion's operators and the caches.
            let batch_rows = want.div_ceil(part_unit).max(1) * part_unit;
            kept.push((ranges, part_unit));
            let n = opened.n_rows();
            scan_files.push(ScanFile::new(
                f.source.clone(),
                n,
                batch_rows,
                Some(opened),
                Some(zones),
            ));
        }
        let parts = split_ranges(&kept, state.config().target_partitions());
        let files: Arc<[ScanFile]> = scan_files.into();
        let read: u64 = parts
            .iter()
            .flatten()
            .map(|p| p.rows.end - p.rows.start)
            .sum();
        let total: u64 = files.iter().map(|f| f.rows).sum();
        // The scan gives exactly the rows it reads; the planner gets each column's bounds.
        let mut stats = Statistics::new_unknown(&schema);
        stats.num_rows = Precision::Exact(read as usize);
        if let Some(c) = columns.filter(|c| c.len() == schema.fields().len()) {
            stats.column_statistics = c;
        }
        let source = B2ndSource::new(files, schema).with_planning(pruned_by, (read, total));
        Ok(scan_exec(source, &parts, limit, Some(stats)))
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
        let mut rows = 0usize;
        let mut columns: Option<Vec<ColumnStatistics>> = None;
        for f in &self.files {
            let (opened, zones) = f.live.current();
            rows = rows.saturating_add(opened.n_rows() as usize);
            let c = crate::source::off_runtime(|| zones.statistics(&opened, &self.schema)).ok()?;
            columns = Some(match columns {
                None => c,
                Some(known) => merge_columns(known, c),
            });
        }
        s.num_rows = Precision::Exact(rows);
        if let Some(c) = columns {
            s.column_statistics = c;
        }
        Some(s)
    }

    fn get_column_default(&self, column: &str) -> Option<&Expr> {
        self.defaults.get(column)
    }

    async fn insert_into(
        &self,
        _state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let path = self.writable("INSERT")?;
        if insert_op != InsertOp::Append {
            return Err(DataFusionError::NotImplemented(format!(
                "{insert_op} on {}: rows are appended (INSERT INTO)",
                self.display()
            )));
        }
        Ok(Arc::new(B2ndDmlExec::new(
            self.files[0].live.clone(),
            path,
            Change::Insert(input),
        )))
    }

    async fn delete_from(
        &self,
        state: &dyn Session,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let path = self.writable_checked("DELETE")?;
        Ok(Arc::new(B2ndDmlExec::delete(
            self.files[0].live.clone(),
            path,
            &self.schema,
            &filters,
            state.execution_props(),
        )?))
    }

    async fn update(
        &self,
        state: &dyn Session,
        assignments: Vec<(String, Expr)>,
        filters: Vec<Expr>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let path = self.writable_checked("UPDATE")?;
        Ok(Arc::new(B2ndDmlExec::update(
            self.files[0].live.clone(),
            path,
            &self.schema,
            &assignments,
            &filters,
            state.execution_props(),
        )?))
    }

    async fn truncate(&self, state: &dyn Session) -> Result<Arc<dyn ExecutionPlan>> {
        let path = self.writable("TRUNCATE")?;
        Ok(Arc::new(B2ndDmlExec::delete(
            self.files[0].live.clone(),
            path,
            &self.schema,
            &[],
            state.execution_props(),
        )?))
    }
}

/// What the planner may know of columns over two files' rows, from what it knows of each
/// file's: NULL counts added, the smaller lower bound and the larger upper one (unknown
/// where either file's is).
fn merge_columns(a: Vec<ColumnStatistics>, b: Vec<ColumnStatistics>) -> Vec<ColumnStatistics> {
    if a.len() != b.len() {
        return a.iter().map(|_| ColumnStatistics::new_unknown()).collect();
    }
    a.into_iter()
        .zip(b)
        .map(|(x, y)| {
            let mut c = ColumnStatistics::new_unknown();
            c.null_count = x.null_count.add(&y.null_count);
            c.min_value = x.min_value.min(&y.min_value);
            c.max_value = x.max_value.max(&y.max_value);
            c
        })
        .collect()
}

/// The defaults `t`'s schema declares, as literals of the SQL columns' types (`null`
/// defaults are SQL's own).
fn declared_defaults(t: &b2nd::Table, schema: &SchemaRef) -> HashMap<String, Expr> {
    use datafusion::common::ScalarValue;
    let mut out = HashMap::new();
    // A generated column's default is not its value: `TableMut` computes it.
    let generated = t.generated_columns();
    for c in t.columns() {
        if generated.iter().any(|g| g == c.name()) {
            continue;
        }
        let (Some(v), Ok(field)) = (c.default_value(), schema.field_with_name(c.name())) else {
            continue;
        };
        let scalar = match v {
            b2nd::Value::Bool(b) => ScalarValue::Boolean(Some(b)),
            b2nd::Value::Int(i) => ScalarValue::Int64(Some(i)),
            b2nd::Value::UInt(u) => ScalarValue::UInt64(Some(u)),
            b2nd::Value::Float(f) => ScalarValue::Float64(Some(f)),
            b2nd::Value::Str(s) => ScalarValue::Utf8(Some(s)),
            b2nd::Value::Bytes(b) => ScalarValue::Binary(Some(b)),
            _ => continue,
        };
        if let Ok(s) = scalar.cast_to(field.data_type()) {
            out.insert(c.name().to_string(), Expr::Literal(s, None));
        }
    }
    out
}
