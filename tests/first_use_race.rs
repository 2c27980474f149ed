//! Threads that make their process's first c-blosc2 files at the same moment. c-blosc2 2.15
//! registers its file IO callbacks lazily and without a lock; a thread could find the entry
//! being registered still zeroed and call a null function (SIGSEGV, seen once in the in-place
//! crash test). b2nd registers them when it initialises c-blosc2. Each round is a fresh
//! process (this binary re-executed), since only a process's first use can race; without the
//! fix a round crashed within a few hundred (`B2ND_FIRST_USE_ROUNDS`, default 600).

use b2nd::{Array, ArrayBuilder, Target};
use std::process::Command;
use std::sync::{Arc, Barrier};

const THREADS: usize = 8;

/// Child mode: `THREADS` threads released together each write and read back a file.
fn child(dir: &str) {
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            let path = std::path::Path::new(dir).join(format!("t{t}.b2nd"));
            std::thread::spawn(move || {
                let data: Vec<i32> = (0..1000).map(|i| i * t as i32).collect();
                barrier.wait();
                ArrayBuilder::for_type::<i32>(&[1000])
                    .write(Target::File(path.clone()), &data)
                    .unwrap();
                assert_eq!(Array::open(&path).unwrap().read::<i32>().unwrap(), data);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn first_files_of_a_process_made_by_many_threads_at_once() {
    if let Ok(dir) = std::env::var("B2ND_FIRST_USE_CHILD") {
        child(&dir);
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let rounds: usize = std::env::var("B2ND_FIRST_USE_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    for round in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(&exe)
            .args([
                "first_files_of_a_process_made_by_many_threads_at_once",
                "--exact",
                "--nocapture",
            ])
            .env("B2ND_FIRST_USE_CHILD", dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "round {round}: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        for t in 0..THREADS {
            assert!(
                dir.path().join(format!("t{t}.b2nd")).exists(),
                "round {round}"
            );
        }
    }
}
