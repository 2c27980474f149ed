//! [`B2ndCodec`]: the datafusion-proto extension codec of b2nd's scans ([`B2ndSource`]), so that a
//! distributed DataFusion can ship b2nd scans to workers: a scan is its files (kind, path or
//! URL, key; rows; batch size), its columns, its partitions' pieces (a file's row range),
//! limit and the string filters it applies (datafusion-proto expressions); the worker opens
//! the files itself.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{
    AggregateUDF, Extension, HigherOrderUDF, LogicalPlan, ScalarUDF, WindowUDF,
};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::{DefaultLogicalExtensionCodec, LogicalExtensionCodec};
use datafusion_proto::physical_plan::{
    PhysicalExtensionCodec, PhysicalPlanDecodeContext, PhysicalProtoConverterExtension,
};
use datafusion_proto::protobuf::PhysicalExprNode;
use prost::Message;

use crate::provider::B2ndTable;
use crate::scan::{scan_exec, B2ndSource, Piece, ScanFile};
use crate::source::Source;

const MAGIC: &[u8] = b"b2nd-scan-4";

/// Serializes and deserializes b2nd's scans in physical plans (DataFusion's `DataSourceExec`
/// over a [`B2ndSource`]: its files, columns, partitions' pieces, limit and string filters).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{
///     physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
/// };
/// let ctx = SessionContext::new();
/// let t = b2nd_datafusion::B2ndTable::table("../tests/data/tables/basic.b2z")?;
/// ctx.register_table("t", std::sync::Arc::new(t))?;
/// let plan = ctx.sql("SELECT * FROM t").await?.create_physical_plan().await?;
/// let codec = b2nd_datafusion::B2ndCodec;
/// let bytes = physical_plan_to_bytes_with_extension_codec(plan, &codec)?;
/// let back = physical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
/// let rows = datafusion::physical_plan::collect(back, ctx.task_ctx()).await?;
/// assert!(rows.iter().map(|b| b.num_rows()).sum::<usize>() > 0);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct B2ndCodec;

fn put(out: &mut Vec<u8>, field: &[u8]) {
    out.extend_from_slice(&(field.len() as u64).to_le_bytes());
    out.extend_from_slice(field);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bad() -> DataFusionError {
        DataFusionError::Execution("b2nd scan: truncated or malformed encoding".into())
    }

    fn field(&mut self) -> Result<&'a [u8]> {
        let (len, rest) = self.0.split_at_checked(8).ok_or_else(Self::bad)?;
        let len = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        let len = usize::try_from(len).map_err(|_| Self::bad())?;
        let (f, rest) = rest.split_at_checked(len).ok_or_else(Self::bad)?;
        self.0 = rest;
        Ok(f)
    }

    fn text(&mut self) -> Result<&'a str> {
        std::str::from_utf8(self.field()?).map_err(|_| Self::bad())
    }

    fn number(&mut self) -> Result<u64> {
        let f = self.field()?;
        Ok(u64::from_le_bytes(f.try_into().map_err(|_| Self::bad())?))
    }
}

impl PhysicalExtensionCodec for B2ndCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !inputs.is_empty() {
            return Err(DataFusionError::Execution(
                "b2nd scan: a scan has no inputs".into(),
            ));
        }
        let mut r = Reader(buf);
        if r.field()? != MAGIC {
            return Err(DataFusionError::Execution(
                "b2nd scan: not a b2nd scan encoding".into(),
            ));
        }
        let nfiles = r.number()?;
        let mut files = Vec::new();
        for _ in 0..nfiles.min(1 << 20) {
            let source = Source::decode(r.text()?, r.text()?, r.text()?)?;
            files.push((source, r.number()?, r.number()?));
        }
        let ncols = r.number()?;
        let mut names = Vec::new();
        for _ in 0..ncols.min(1 << 20) {
            names.push(r.text()?.to_string());
        }
        let nparts = r.number()?;
        let mut parts = Vec::new();
        for _ in 0..nparts.min(1 << 20) {
            let npieces = r.number()?;
            let mut p = Vec::new();
            for _ in 0..npieces.min(1 << 24) {
                let file = usize::try_from(r.number()?).map_err(|_| Reader::bad())?;
                let (a, b) = (r.number()?, r.number()?);
                p.push(Piece { file, rows: a..b });
            }
            parts.push(p);
        }
        let limit = match r.number()? {
            u64::MAX => None,
            l => Some(usize::try_from(l).map_err(|_| Reader::bad())?),
        };
        let nfilters = r.number()?;
        let mut filters = Vec::new();
        for _ in 0..nfilters.min(1 << 16) {
            filters.push(r.field()?);
        }
        if !r.0.is_empty() || files.is_empty() || filters.len() as u64 != nfilters {
            return Err(Reader::bad());
        }
        // Pieces of files the scan does not have, or of rows a file does not have (or
        // backwards), are refused here: a scan of them would be an error at best, and a range
        // of 2^64 rows a batch list without end.
        if let Some(p) = parts.iter().flatten().find(|p| {
            files
                .get(p.file)
                .is_none_or(|f| p.rows.start > p.rows.end || p.rows.end > f.1)
        }) {
            return Err(DataFusionError::Execution(format!(
                "b2nd scan: rows {}..{} of file {} are not rows of the scan's {} file(s)",
                p.rows.start,
                p.rows.end,
                p.file,
                files.len()
            )));
        }
        // The worker opens the first file and projects its schema by the column names; each
        // file is opened by its first batch, and checked to hold the rows the plan names.
        let (source, rows, batch_rows) = files[0].clone();
        let (opened, full) = crate::source::off_runtime(|| -> Result<_> {
            let opened = Arc::new(source.open()?);
            let full = opened.schema()?;
            Ok((opened, full))
        })?;
        let n = opened.n_rows();
        if let Some(p) = parts
            .iter()
            .flatten()
            .find(|p| p.file == 0 && p.rows.end > n)
        {
            return Err(DataFusionError::Execution(format!(
                "b2nd scan: rows {}..{} are not rows of {} ({n} rows)",
                p.rows.start,
                p.rows.end,
                source.display()
            )));
        }
        let idx: Vec<usize> = names
            .iter()
            .map(|n| full.index_of(n))
            .collect::<std::result::Result<_, _>>()?;
        let schema = Arc::new(full.project(&idx)?);
        let mut scan_files = vec![ScanFile::new(source, rows, batch_rows, Some(opened), None)];
        scan_files.extend(
            files
                .into_iter()
                .skip(1)
                .map(|(s, rows, batch)| ScanFile::new(s, rows, batch, None, None)),
        );
        // The string filters, over the scan's columns, each checked to be one.
        let decode = PhysicalPlanDecodeContext::new(ctx, self);
        let exprs = filters
            .into_iter()
            .map(|bytes| {
                let node = PhysicalExprNode::decode(bytes).map_err(|e| {
                    DataFusionError::Execution(format!("b2nd scan: a filter's encoding: {e}"))
                })?;
                proto.proto_to_physical_expr(&node, &schema, &decode)
            })
            .collect::<Result<Vec<_>>>()?;
        let source = B2ndSource::new(scan_files.into(), schema).with_string_filters(exprs)?;
        Ok(scan_exec(source, &parts, limit, None))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some((scan, partitions)) = B2ndSource::of_plan(node.as_ref()) else {
            return Err(DataFusionError::Execution(format!(
                "b2nd codec: cannot encode {}",
                node.name()
            )));
        };
        let limit = node
            .downcast_ref::<datafusion::datasource::source::DataSourceExec>()
            .and_then(|d| {
                d.data_source()
                    .downcast_ref::<datafusion::datasource::physical_plan::FileScanConfig>()
            })
            .and_then(|c| c.limit);
        put(buf, MAGIC);
        put(buf, &(scan.files.len() as u64).to_le_bytes());
        for f in scan.files.iter() {
            let mut src = Vec::new();
            f.source.encode(&mut src);
            for field in &src {
                put(buf, field.as_bytes());
            }
            put(buf, &f.rows.to_le_bytes());
            put(buf, &f.batch_rows.to_le_bytes());
        }
        put(buf, &(scan.schema().fields().len() as u64).to_le_bytes());
        for f in scan.schema().fields() {
            put(buf, f.name().as_bytes());
        }
        put(buf, &(partitions.len() as u64).to_le_bytes());
        for p in &partitions {
            put(buf, &(p.len() as u64).to_le_bytes());
            for piece in p {
                put(buf, &(piece.file as u64).to_le_bytes());
                put(buf, &piece.rows.start.to_le_bytes());
                put(buf, &piece.rows.end.to_le_bytes());
            }
        }
        put(buf, &limit.map_or(u64::MAX, |l| l as u64).to_le_bytes());
        let filters: Vec<_> = scan.string_filters().collect();
        put(buf, &(filters.len() as u64).to_le_bytes());
        for f in filters {
            put(buf, &proto.physical_expr_to_proto(f, self)?.encode_to_vec());
        }
        Ok(())
    }
}

const TABLE_MAGIC: &[u8] = b"b2nd-table-1";

/// Serializes and deserializes [`B2ndTable`] providers in logical plans (so that SQL planned
/// by one process, a Ballista client, is planned physically by another, its scheduler): a
/// table is its files (kind, path or URL, key each), opened again where decoded. Everything
/// else goes to the codec it wraps (DataFusion's default, or Ballista's).
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use datafusion::prelude::SessionContext;
/// use datafusion_proto::bytes::{
///     logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
/// };
/// let ctx = SessionContext::new();
/// let t = b2nd_datafusion::B2ndTable::table("../tests/data/tables/basic.b2z")?;
/// ctx.register_table("t", std::sync::Arc::new(t))?;
/// let plan = ctx.sql("SELECT count(*) FROM t").await?.into_optimized_plan()?;
/// let codec = b2nd_datafusion::B2ndLogicalCodec::default();
/// let bytes = logical_plan_to_bytes_with_extension_codec(&plan, &codec)?;
/// let back = logical_plan_from_bytes_with_extension_codec(&bytes, &ctx.task_ctx(), &codec)?;
/// let rows = ctx.execute_logical_plan(back).await?.collect().await?;
/// assert_eq!(rows[0].num_rows(), 1);
/// # Ok::<(), datafusion::error::DataFusionError>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct B2ndLogicalCodec {
    inner: Arc<dyn LogicalExtensionCodec>,
}

impl Default for B2ndLogicalCodec {
    fn default() -> Self {
        B2ndLogicalCodec::new(Arc::new(DefaultLogicalExtensionCodec {}))
    }
}

impl B2ndLogicalCodec {
    /// b2nd's tables, and everything else through `inner`.
    pub fn new(inner: Arc<dyn LogicalExtensionCodec>) -> B2ndLogicalCodec {
        B2ndLogicalCodec { inner }
    }
}

impl LogicalExtensionCodec for B2ndLogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.inner.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        let mut r = Reader(buf);
        if r.field().ok() != Some(TABLE_MAGIC) {
            return self
                .inner
                .try_decode_table_provider(buf, table_ref, schema, ctx);
        }
        let nfiles = r.number()?;
        let mut sources = Vec::new();
        for _ in 0..nfiles.min(1 << 20) {
            sources.push(Source::decode(r.text()?, r.text()?, r.text()?)?);
        }
        if !r.0.is_empty() || sources.is_empty() {
            return Err(Reader::bad());
        }
        let table = crate::source::off_runtime(|| B2ndTable::open_many(sources))?;
        // The plan was made for the schema the files had then.
        if table.schema().fields() != schema.fields() {
            return Err(DataFusionError::Plan(format!(
                "table {table_ref}: the files' schema changed since the plan was made \
                 (now {}, then {})",
                table.schema(),
                schema
            )));
        }
        Ok(Arc::new(table))
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        let Some(table) = node.downcast_ref::<B2ndTable>() else {
            return self.inner.try_encode_table_provider(table_ref, node, buf);
        };
        if table.writes() {
            return Err(DataFusionError::Plan(format!(
                "table {table_ref}: a table open for changes is not sent to other processes"
            )));
        }
        put(buf, TABLE_MAGIC);
        let sources: Vec<&Source> = table.sources().collect();
        put(buf, &(sources.len() as u64).to_le_bytes());
        for s in sources {
            let mut fields = Vec::new();
            s.encode(&mut fields);
            for f in &fields {
                put(buf, f.as_bytes());
            }
        }
        Ok(())
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.inner.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.inner.try_encode_file_format(buf, node)
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        self.inner.try_decode_udf(name, buf)
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udf(node, buf)
    }

    fn try_decode_higher_order_function(
        &self,
        name: &str,
        buf: &[u8],
    ) -> Result<Arc<HigherOrderUDF>> {
        self.inner.try_decode_higher_order_function(name, buf)
    }

    fn try_encode_higher_order_function(
        &self,
        node: &HigherOrderUDF,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        self.inner.try_encode_higher_order_function(node, buf)
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.inner.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udaf(node, buf)
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.inner.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        self.inner.try_encode_udwf(node, buf)
    }
}
