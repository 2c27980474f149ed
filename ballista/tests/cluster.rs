//! A real cluster on 127.0.0.1: `b2nd-scheduler` and two `b2nd-executor` processes; SQL over
//! a table of many files runs through them (plans shipped by b2nd's codecs) and answers as
//! the same SQL in one process; both executors run tasks of the scans.

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use b2nd_ballista::B2ndTable;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::{SessionConfig, SessionContext};

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn spawn(bin: &str, args: &[&str], log: &Path) -> Proc {
    let out = std::fs::File::create(log).unwrap();
    Proc(
        Command::new(bin)
            .args(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}")),
    )
}

fn wait_for_port(port: u16, what: &str) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what} did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Batches as sorted text lines (row order is not part of a query's answer here).
fn lines(b: &[RecordBatch]) -> Vec<String> {
    let text = pretty_format_batches(b).unwrap().to_string();
    let mut l: Vec<String> = text.lines().map(str::to_string).collect();
    l.sort();
    l
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_over_many_files_on_a_scheduler_and_two_executors() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("events");
    std::fs::create_dir(&data).unwrap();
    let mut start = 0i64;
    for (i, n) in [60_000i64, 25_000, 90_000, 40_000].iter().enumerate() {
        let id: Vec<i64> = (start..start + n).collect();
        let x: Vec<f64> = id
            .iter()
            .map(|&v| ((v * 7919) % 10_007) as f64 / 8.0)
            .collect();
        let q: Vec<i32> = id.iter().map(|&v| (v % 97) as i32).collect();
        b2nd::TableBuilder::new()
            .column("id", &id)
            .unwrap()
            .column("x", &x)
            .unwrap()
            .column("q", &q)
            .unwrap()
            .write(data.join(format!("part-{i}.b2z")))
            .unwrap();
        start += n;
    }
    let glob = format!("{}/part-*.b2z", data.display());

    let sp = free_port();
    let logs = dir.path();
    let _scheduler = spawn(
        env!("CARGO_BIN_EXE_b2nd-scheduler"),
        &["--bind", &format!("127.0.0.1:{sp}")],
        &logs.join("scheduler.log"),
    );
    wait_for_port(sp, "the scheduler");
    let mut executors = Vec::new();
    for e in 0..2 {
        let (port, grpc) = (free_port(), free_port());
        let work = logs.join(format!("work-{e}"));
        std::fs::create_dir(&work).unwrap();
        executors.push(spawn(
            env!("CARGO_BIN_EXE_b2nd-executor"),
            &[
                "--scheduler",
                &format!("127.0.0.1:{sp}"),
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--grpc-port",
                &grpc.to_string(),
                "--work-dir",
                work.to_str().unwrap(),
                "--concurrent-tasks",
                "2",
            ],
            &logs.join(format!("executor-{e}.log")),
        ));
        wait_for_port(port, "an executor");
    }

    let config = b2nd_ballista::session_config().with_target_partitions(4);
    let cluster = b2nd_ballista::connect_with(&format!("df://127.0.0.1:{sp}"), config)
        .await
        .unwrap();
    let local = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    for ctx in [&cluster, &local] {
        ctx.register_table("t", Arc::new(B2ndTable::table(&glob).unwrap()))
            .unwrap();
    }
    let queries = [
        "SELECT count(*), sum(id), min(x), max(x) FROM t",
        "SELECT q, count(*), sum(x) FROM t GROUP BY q",
        "SELECT id, x FROM t ORDER BY x DESC, id LIMIT 7",
        "SELECT count(*) FROM t WHERE id BETWEEN 59990 AND 60010",
        "SELECT a.q, count(*) FROM t a JOIN t b ON a.id = b.id + 1 WHERE a.q < 3 GROUP BY a.q",
    ];
    for q in queries {
        let want = local.sql(q).await.unwrap().collect().await.unwrap();
        let got = cluster
            .sql(q)
            .await
            .unwrap()
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{q}: {e}"));
        assert_eq!(lines(&got), lines(&want), "{q}");
    }
    // Each executor ran tasks of the scans: every query's first stage (0) reads `t`, and
    // Ballista logs every task it runs at INFO (`[TID job/stage.attempt/partition.attempt]`).
    for e in 0..2 {
        let log = std::fs::read_to_string(logs.join(format!("executor-{e}.log"))).unwrap();
        let scans = log
            .lines()
            .filter(|l| l.contains("Execute task") && l.contains("/0.0/"))
            .count();
        assert!(scans > 0, "executor {e} ran no task of a scan:\n{log}");
    }
    drop(executors);
}
