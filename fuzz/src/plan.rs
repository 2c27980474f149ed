//! The `plan_bytes` target: plan bytes as a Ballista scheduler or executor receives them
//! from the network, decoded with b2nd's codecs. Included by the libFuzzer entry
//! `fuzz_targets/plan_bytes.rs` (feature `plan`: it links DataFusion) and by
//! `datafusion/tests/plan_bytes.rs`, which replays the committed seeds
//! (`fuzz/seeds/plan_bytes/`) and [`seeds`] through [`plan_bytes`] on stable Rust.
//!
//! The first byte picks what the rest is:
//! - 0: a scan's extension bytes, decoded by `B2ndCodec::try_decode`;
//! - 1: a table's bytes in a logical plan, by `B2ndLogicalCodec::try_decode_table_provider`
//!   (against the fixture table's schema);
//! - 2: a whole physical plan (datafusion-proto's protobuf) with `B2ndCodec`;
//! - 3: a whole logical plan with `B2ndLogicalCodec`.
//!
//! Decoding hostile bytes gives an error or a plan, never a panic. A decoded scan (0) is
//! executed and a decoded table (1) scanned: errors or answers, and no more rows than the
//! files named hold (checked where the fixture is the only file: [`fixture`]). Whole plans
//! are decoded only (running one runs whatever it asks).
//! Plan bytes name the files a worker opens; inputs naming a URL or a path under `/proc` or
//! `/sys` are skipped (a remote server or the kernel's files are what such a plan asks to
//! read; devices, FIFOs and sockets every open refuses, and the fuzzer reaches them).

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use b2nd_datafusion::{B2ndCodec, B2ndLogicalCodec, B2ndTable};
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::bytes::{
    logical_plan_from_bytes_with_extension_codec, logical_plan_to_bytes_with_extension_codec,
    physical_plan_from_bytes_with_extension_codec, physical_plan_to_bytes_with_extension_codec,
};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{DefaultPhysicalProtoConverter, PhysicalExtensionCodec};

/// Rows of the fixture table.
pub const FIXTURE_ROWS: usize = 3000;

/// The fixture table every seed names: `id` (int64, 0..3000) and `x` (float64) in
/// `b2nd-fuzz-plan/t.b2z` under the system's temporary directory, written once per process
/// (atomically: a concurrent process sees the whole file or none).
pub fn fixture() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir: PathBuf = std::env::temp_dir().join("b2nd-fuzz-plan");
        std::fs::create_dir_all(&dir).expect("the fixture's directory");
        let path = dir.join("t.b2z");
        let ids: Vec<i64> = (0..FIXTURE_ROWS as i64).collect();
        let xs: Vec<f64> = ids.iter().map(|&i| i as f64 * 0.5).collect();
        b2nd::TableBuilder::new()
            .overwrite(true)
            .column("id", &ids)
            .and_then(|b| b.column("x", &xs))
            .and_then(|b| b.write(&path))
            .expect("the fixture table");
        path.to_str().expect("a UTF-8 temporary path").to_string()
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a Tokio runtime")
    })
}

fn context() -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(2))
}

fn fixture_table() -> Arc<dyn TableProvider> {
    Arc::new(B2ndTable::table(fixture()).expect("the fixture opens"))
}

/// Whether the bytes name something other than a local file (skipped: see the module).
fn names_more_than_files(data: &[u8]) -> bool {
    [&b"://"[..], b"proc/", b"sys/"]
        .iter()
        .any(|n| data.windows(n.len()).any(|w| w == *n))
}

/// Rows an executed plan answered: `None` where it failed (an error, as hostile bytes may).
async fn rows_of(plan: Arc<dyn ExecutionPlan>, ctx: &SessionContext) -> Option<usize> {
    let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
        .await
        .ok()?;
    Some(batches.iter().map(|b| b.num_rows()).sum())
}

/// What one input came to (the replay asserts on it; the fuzzer ignores it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Empty, or naming more than files.
    Skipped,
    /// Refused when decoded (an error, as hostile bytes should be).
    Refused,
    /// Decoded; a scan or table then answered these rows (`None`: an error, or a whole
    /// plan, which is not run).
    Decoded(Option<usize>),
}

/// The target's body: see the module.
pub fn plan_bytes(data: &[u8]) -> Outcome {
    let Some((&mode, rest)) = data.split_first() else {
        return Outcome::Skipped;
    };
    if names_more_than_files(rest) {
        return Outcome::Skipped;
    }
    let only_fixture = {
        let f = fixture().as_bytes();
        let names = rest.windows(f.len()).filter(|w| *w == f).count();
        // The fixture named once and no other `.b2z` / `.b2d`: the answer is bounded by it.
        names == 1
            && rest
                .windows(4)
                .filter(|w| *w == b".b2z" || *w == b".b2d")
                .count()
                == 1
    };
    let outcome = runtime().block_on(async {
        let ctx = context();
        let task = ctx.task_ctx();
        match mode % 4 {
            0 => {
                let proto = DefaultPhysicalProtoConverter {};
                match B2ndCodec.try_decode(rest, &[], &task, &proto) {
                    Ok(plan) => Outcome::Decoded(rows_of(plan, &ctx).await),
                    Err(_) => Outcome::Refused,
                }
            }
            1 => {
                let schema = fixture_table().schema();
                let t = TableReference::bare("t");
                let Ok(table) =
                    B2ndLogicalCodec::default().try_decode_table_provider(rest, &t, schema, &task)
                else {
                    return Outcome::Refused;
                };
                let rows = match ctx.register_table("t", table) {
                    Ok(_) => match ctx.sql("SELECT id, x FROM t").await {
                        Ok(df) => df
                            .collect()
                            .await
                            .ok()
                            .map(|b| b.iter().map(|b| b.num_rows()).sum()),
                        Err(_) => None,
                    },
                    Err(_) => None,
                };
                Outcome::Decoded(rows)
            }
            // Whole plans are decoded only: running one runs whatever it asks (a cross join,
            // a series of 2^63 numbers), which is the plan's meaning, not a decoding fault.
            2 => match physical_plan_from_bytes_with_extension_codec(rest, &task, &B2ndCodec) {
                Ok(_) => Outcome::Decoded(None),
                Err(_) => Outcome::Refused,
            },
            _ => {
                let codec = B2ndLogicalCodec::default();
                match logical_plan_from_bytes_with_extension_codec(rest, &task, &codec) {
                    Ok(_) => Outcome::Decoded(None),
                    Err(_) => Outcome::Refused,
                }
            }
        }
    });
    if let (Outcome::Decoded(Some(n)), true) = (outcome, only_fixture) {
        assert!(
            n <= FIXTURE_ROWS,
            "a scan of the fixture alone answered {n} rows of {FIXTURE_ROWS}"
        );
    }
    outcome
}

/// Good encodings of each kind over the fixture (the seeds' source, written to
/// `fuzz/seeds/plan_bytes/` by `datafusion/tests/plan_bytes.rs` when asked): scans of all
/// rows, of a filter, of a limit, the table, and whole plans of a filter, an aggregate and
/// a top-k.
pub fn seeds() -> Vec<Vec<u8>> {
    runtime().block_on(async {
        let ctx = context();
        ctx.register_table("t", fixture_table())
            .expect("registered");
        let mut out = Vec::new();
        let queries = [
            "SELECT id, x FROM t",
            "SELECT x FROM t WHERE id >= 1500",
            "SELECT id FROM t LIMIT 7",
            "SELECT count(*), sum(x) FROM t WHERE id < 100",
            "SELECT id, x FROM t ORDER BY x DESC LIMIT 3",
        ];
        for q in queries {
            let df = ctx.sql(q).await.expect("planned");
            let logical = df.clone().into_optimized_plan().expect("optimized");
            let codec = B2ndLogicalCodec::default();
            let mut b = vec![3];
            b.extend(
                logical_plan_to_bytes_with_extension_codec(&logical, &codec).expect("encoded"),
            );
            out.push(b);
            let plan = df.create_physical_plan().await.expect("physical");
            let mut b = vec![2];
            b.extend(
                physical_plan_to_bytes_with_extension_codec(plan.clone(), &B2ndCodec)
                    .expect("encoded"),
            );
            out.push(b);
            // The scan at the plan's leaf alone.
            let mut scan = plan;
            while let Some(c) = scan.children().first().map(|c| Arc::clone(*c)) {
                scan = c;
            }
            let mut b = vec![0];
            let proto = DefaultPhysicalProtoConverter {};
            if B2ndCodec.try_encode(scan, &mut b, &proto).is_ok() {
                out.push(b);
            }
        }
        let mut b = vec![1];
        B2ndLogicalCodec::default()
            .try_encode_table_provider(&TableReference::bare("t"), fixture_table(), &mut b)
            .expect("encoded");
        out.push(b);
        out
    })
}
