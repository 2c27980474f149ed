//! Opening many arrays starts no threads of their own: reads share rayon's global pool
//! unless the caller hands them a pool.

mod common;

use b2nd::{Array, Threads};
use common::*;

/// The process's thread count (Linux).
fn threads_now() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn two_hundred_open_arrays_share_one_pool() {
    let path = data_dir().join("slices/d3_be_i2.b2nd"); // several chunks: reads go parallel
    let want = Array::open(&path).unwrap().read_bytes().unwrap();
    let global = rayon::current_num_threads();
    let Some(before) = threads_now() else {
        return; // not Linux: nothing to count
    };
    let arrays: Vec<Array> = (0..200).map(|_| Array::open(&path).unwrap()).collect();
    for a in &arrays {
        assert_eq!(a.read_bytes().unwrap(), want);
        assert_eq!(a.threads(), global);
    }
    let after = threads_now().unwrap();
    assert!(
        after <= before + global + 2,
        "{before} threads before, {after} with 200 arrays open (global pool: {global})"
    );
    // A caller's pool is used as given, and can be shared.
    let pool = std::sync::Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap(),
    );
    let shared: Vec<Array> = (0..50)
        .map(|_| {
            Array::open(&path)
                .unwrap()
                .with_threads(Threads::Pool(pool.clone()))
        })
        .collect();
    for a in &shared {
        assert_eq!(a.threads(), 3);
        assert_eq!(a.read_bytes().unwrap(), want);
    }
    assert!(threads_now().unwrap() <= after + 3 + 2);
    assert_eq!(
        Array::open(&path)
            .unwrap()
            .with_threads(Threads::Single)
            .threads(),
        1
    );
}
