//! In-place change benchmarks, the b2nd side; `scripts/bench_inplace.py` runs
//! python-blosc2 on the same files and threads and prints the ratios.
//!
//! ```text
//! bench_inplace append FILE ROWS ROW_ITEMS THREADS [process]  # append ROWS rows of ROW_ITEMS f8, one at a time
//!                                                            # (`process`: Durability::Process, no syncs)
//! bench_inplace overwrite FILE R0 R1 C0 C1 THREADS   # write the box [R0:R1, C0:C1] of a 2-D f8 array
//! bench_inplace compact FILE
//! ```
//! Prints one JSON object: seconds, and the file's size after.

use std::time::Instant;

use b2nd::{ArrayMut, Threads};

fn size(p: &str) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n = |i: usize| -> u64 { args[i].parse().expect("a number") };
    match args.get(1).map(String::as_str) {
        Some("append") => {
            let (path, rows, items, threads) = (&args[2], n(3), n(4) as usize, n(5) as usize);
            let durability = match args.get(6).map(String::as_str) {
                Some("process") => b2nd::Durability::Process,
                _ => b2nd::Durability::Disk,
            };
            let mut a = ArrayMut::open(path)?
                .with_threads(Threads::count(threads)?)
                .with_durability(durability);
            // The same values python appends (made before timing, as python's are):
            // r + i / items + a little noise.
            let data: Vec<Vec<f64>> = (0..rows)
                .map(|r| {
                    (0..items as u64)
                        .map(|i| {
                            let noise = ((i * 2_654_435_761 + r * 40_503) % 1000) as f64 / 1e6;
                            r as f64 + i as f64 / items as f64 + noise
                        })
                        .collect()
                })
                .collect();
            let t = Instant::now();
            for row in &data {
                a.append(0, row)?;
            }
            let secs = t.elapsed().as_secs_f64();
            println!("{{\"seconds\": {secs}, \"bytes\": {}}}", size(path));
        }
        Some("overwrite") => {
            let path = &args[2];
            let (r0, r1, c0, c1, threads) = (n(3), n(4), n(5), n(6), n(7) as usize);
            let mut a = ArrayMut::open(path)?.with_threads(Threads::count(threads)?);
            let (h, w) = (r1 - r0, c1 - c0);
            let vals: Vec<f64> = (0..h * w).map(|i| -((i % 1000) as f64)).collect();
            let t = Instant::now();
            a.write_region(&b2nd::Region::new([r0, c0], [h, w]), &vals)?;
            let secs = t.elapsed().as_secs_f64();
            println!("{{\"seconds\": {secs}, \"bytes\": {}}}", size(path));
        }
        Some("compact") => {
            let path = &args[2];
            let mut a = ArrayMut::open(path)?;
            let t = Instant::now();
            a.compact()?;
            let secs = t.elapsed().as_secs_f64();
            println!("{{\"seconds\": {secs}, \"bytes\": {}}}", size(path));
        }
        _ => return Err("usage: bench_inplace append|overwrite|compact ...".into()),
    }
    Ok(())
}
