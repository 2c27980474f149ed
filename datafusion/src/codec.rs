//! [`B2ndCodec`]: the datafusion-proto extension codec of [`B2ndScanExec`], so that a
//! distributed DataFusion can ship b2nd scans to workers: a scan is its source (kind, path
//! or URL, key), its columns, its partitions' row ranges, batch size and limit; the worker
//! opens the source itself.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use crate::scan::B2ndScanExec;
use crate::source::Source;

const MAGIC: &[u8] = b"b2nd-scan-2";

/// Serializes and deserializes [`B2ndScanExec`] nodes of physical plans.
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
        _ctx: &TaskContext,
        _proto: &dyn PhysicalProtoConverterExtension,
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
        let source = Source::decode(r.text()?, r.text()?, r.text()?)?;
        let ncols = r.number()?;
        let mut names = Vec::new();
        for _ in 0..ncols.min(1 << 20) {
            names.push(r.text()?.to_string());
        }
        let total_rows = r.number()?;
        let nparts = r.number()?;
        let mut parts = Vec::new();
        for _ in 0..nparts.min(1 << 20) {
            let nranges = r.number()?;
            let mut p = Vec::new();
            for _ in 0..nranges.min(1 << 24) {
                let (a, b) = (r.number()?, r.number()?);
                p.push(a..b);
            }
            parts.push(p);
        }
        let batch_rows = r.number()?;
        let limit = match r.number()? {
            u64::MAX => None,
            l => Some(usize::try_from(l).map_err(|_| Reader::bad())?),
        };
        if !r.0.is_empty() {
            return Err(Reader::bad());
        }
        // The worker opens the source and projects its schema by the column names.
        let (opened, full) = crate::source::off_runtime(|| -> Result<_> {
            let opened = Arc::new(source.open()?);
            let full = opened.schema()?;
            Ok((opened, full))
        })?;
        // Rows beyond the source (or backwards) are refused here: a scan of them would be
        // an error at best, and a range of 2^64 rows a batch list without end.
        let n = opened.n_rows();
        if let Some(r) = parts
            .iter()
            .flatten()
            .find(|r| r.start > r.end || r.end > n)
        {
            return Err(DataFusionError::Execution(format!(
                "b2nd scan: rows {}..{} are not rows of {} ({n} rows)",
                r.start,
                r.end,
                source.display()
            )));
        }
        let idx: Vec<usize> = names
            .iter()
            .map(|n| full.index_of(n))
            .collect::<std::result::Result<_, _>>()?;
        let schema = Arc::new(full.project(&idx)?);
        Ok(Arc::new(B2ndScanExec::new(
            source,
            schema,
            parts,
            total_rows,
            batch_rows,
            limit,
            Some(opened),
        )))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(scan) = node.downcast_ref::<B2ndScanExec>() else {
            return Err(DataFusionError::Execution(format!(
                "b2nd codec: cannot encode {}",
                node.name()
            )));
        };
        put(buf, MAGIC);
        let mut src = Vec::new();
        scan.source.encode(&mut src);
        for f in &src {
            put(buf, f.as_bytes());
        }
        put(buf, &(scan.schema.fields().len() as u64).to_le_bytes());
        for f in scan.schema.fields() {
            put(buf, f.name().as_bytes());
        }
        put(buf, &scan.total_rows.to_le_bytes());
        put(buf, &(scan.partitions.len() as u64).to_le_bytes());
        for p in &scan.partitions {
            put(buf, &(p.len() as u64).to_le_bytes());
            for r in p {
                put(buf, &r.start.to_le_bytes());
                put(buf, &r.end.to_le_bytes());
            }
        }
        put(buf, &scan.batch_rows.to_le_bytes());
        put(
            buf,
            &scan.limit.map_or(u64::MAX, |l| l as u64).to_le_bytes(),
        );
        Ok(())
    }
}
