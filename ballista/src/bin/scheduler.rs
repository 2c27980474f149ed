//! `b2nd-scheduler`: Ballista's scheduler with b2nd's codecs.

#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use clap::Parser;

/// Ballista's scheduler, with b2nd's table and scan codecs registered.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on for clients and executors.
    #[arg(long, default_value = "127.0.0.1:50050")]
    bind: SocketAddr,
    /// An executor silent this long is lost: its tasks run elsewhere (Ballista's default is
    /// 180 s, during which a query waits for a dead executor).
    #[arg(long, default_value_t = 30)]
    executor_timeout_seconds: u64,
}

#[tokio::main]
async fn main() -> ballista_core::error::Result<()> {
    let args = Args::parse();
    b2nd_ballista::init_logging();
    let mut config = SchedulerConfig {
        bind_host: args.bind.ip().to_string(),
        external_host: args.bind.ip().to_string(),
        bind_port: args.bind.port(),
        executor_timeout_seconds: args.executor_timeout_seconds,
        no_executors_grace_period_seconds: args.executor_timeout_seconds,
        expire_dead_executor_interval_seconds: 5,
        ..SchedulerConfig::default()
    };
    config.override_logical_codec = Some(b2nd_ballista::logical_codec());
    config.override_physical_codec = Some(b2nd_ballista::physical_codec());
    config.override_config_producer = Some(Arc::new(b2nd_ballista::session_config));
    let cluster = BallistaCluster::new_from_config(&config).await?;
    start_server(cluster, args.bind, Arc::new(config)).await
}
