//! b2nd on [Apache DataFusion Ballista](https://datafusion.apache.org/ballista/) 55: the
//! codecs every process of a cluster shares, and a client session.
//!
//! A Ballista client plans SQL over [`B2ndTable`]s, ships the logical plan to the scheduler
//! ([`logical_codec`]: tables as their files), which plans the scans and ships each stage's
//! tasks to the executors ([`physical_codec`]: Ballista's own nodes, then b2nd's scans as
//! their files and row ranges); each executor opens the files it reads. The binaries
//! `b2nd-scheduler` and `b2nd-executor` are Ballista's scheduler and executor with these
//! codecs; [`connect`] opens a client session against the scheduler.
//!
//! Every process must reach the files by the same paths or URLs (absolute paths on a shared
//! disk, or object storage).

#![forbid(unsafe_code)]

use std::sync::Arc;

use ballista::prelude::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::error::Result;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{ComposedPhysicalExtensionCodec, PhysicalExtensionCodec};

pub use b2nd_datafusion::B2ndTable;

/// The logical codec of every process: b2nd's tables, then Ballista's own.
pub fn logical_codec() -> Arc<dyn LogicalExtensionCodec> {
    Arc::new(b2nd_datafusion::B2ndLogicalCodec::new(Arc::new(
        BallistaLogicalExtensionCodec::default(),
    )))
}

/// The physical codec of every process: Ballista's own nodes first, then b2nd's scans, in
/// this order on every side (the position is part of the bytes).
pub fn physical_codec() -> Arc<dyn PhysicalExtensionCodec> {
    Arc::new(ComposedPhysicalExtensionCodec::new(vec![
        Arc::new(BallistaPhysicalExtensionCodec::default()),
        Arc::new(b2nd_datafusion::B2ndCodec),
    ]))
}

/// Logs to standard output at `RUST_LOG`'s levels (INFO without it), as the binaries do.
pub fn init_logging() {
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
}

/// A Ballista session configuration with b2nd's codecs.
pub fn session_config() -> SessionConfig {
    SessionConfig::new_with_ballista()
        .with_ballista_logical_extension_codec(logical_codec())
        .with_ballista_physical_extension_codec(physical_codec())
}

/// A client session whose queries run on the cluster of the scheduler at `url`
/// (`df://HOST:PORT`); register [`B2ndTable`]s in it and run SQL as in any session.
pub async fn connect(url: &str) -> Result<SessionContext> {
    connect_with(url, session_config()).await
}

/// [`connect`] with a configuration of the caller's (made from [`session_config`], so that
/// it has b2nd's codecs: target partitions, batch size, ...).
pub async fn connect_with(url: &str, config: SessionConfig) -> Result<SessionContext> {
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .build();
    SessionContext::remote_with_state(url, state).await
}
