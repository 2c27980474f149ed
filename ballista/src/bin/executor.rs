//! `b2nd-executor`: Ballista's executor with b2nd's codecs.

#![forbid(unsafe_code)]

use std::sync::Arc;

use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use clap::Parser;

/// Ballista's executor, with b2nd's table and scan codecs registered. With `RUST_LOG=info`
/// it logs every task it runs.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// The scheduler's address.
    #[arg(long, default_value = "127.0.0.1:50050")]
    scheduler: String,
    /// Host to listen on (and to advertise to the scheduler).
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Port of the Arrow Flight service (shuffle reads).
    #[arg(long, default_value_t = 50051)]
    port: u16,
    /// Port of the gRPC service.
    #[arg(long, default_value_t = 50052)]
    grpc_port: u16,
    /// Directory for shuffle files.
    #[arg(long)]
    work_dir: Option<String>,
    /// Tasks run at once.
    #[arg(long, default_value_t = 2)]
    concurrent_tasks: usize,
    /// Seconds between heartbeats to the scheduler (shorter than its executor timeout;
    /// Ballista's default is 60).
    #[arg(long, default_value_t = 5)]
    heartbeat_seconds: u64,
}

#[tokio::main]
async fn main() -> ballista_core::error::Result<()> {
    let args = Args::parse();
    b2nd_ballista::init_logging();
    let (host, port) = args.scheduler.rsplit_once(':').ok_or_else(|| {
        ballista_core::error::BallistaError::Configuration(format!(
            "--scheduler {}: not HOST:PORT",
            args.scheduler
        ))
    })?;
    let scheduler_port = port.parse().map_err(|e| {
        ballista_core::error::BallistaError::Configuration(format!(
            "--scheduler {}: {e}",
            args.scheduler
        ))
    })?;
    let config = ExecutorProcessConfig {
        bind_host: args.bind.clone(),
        external_host: Some(args.bind),
        port: args.port,
        grpc_port: args.grpc_port,
        scheduler_host: host.to_string(),
        scheduler_port,
        work_dir: args.work_dir,
        vcores: args.concurrent_tasks.max(1),
        executor_heartbeat_interval_seconds: args.heartbeat_seconds.max(1),
        override_logical_codec: Some(b2nd_ballista::logical_codec()),
        override_physical_codec: Some(b2nd_ballista::physical_codec()),
        override_config_producer: Some(Arc::new(b2nd_ballista::session_config)),
        ..ExecutorProcessConfig::default()
    };
    start_executor_process(Arc::new(config)).await
}
