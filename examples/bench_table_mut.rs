//! Table change benchmarks, the b2nd side; `scripts/bench_table_mut.py` runs python-blosc2
//! on copies of the same table and prints the ratios.
//!
//! ```text
//! bench_table_mut append TABLE.b2d ROWS BATCH [process]  # append ROWS rows, BATCH per append
//! bench_table_mut delete TABLE.b2d K [process]           # delete K live rows (every n/K-th)
//! bench_table_mut update TABLE.b2d K [process]           # set `score` of K live rows
//! ```
//! (`process`: `Durability::Process`, no syncs, as python-blosc2.)
//! Rows are those `scripts/bench_table_mut.py` makes (`row_values`): id = START + i, score =
//! i / 2 (null every 7th), flag = i even, made before timing. Prints one JSON object:
//! seconds, rows changed.

use std::time::Instant;

use b2nd::{Durability, Rows, TableMut};

/// Rows `start..start + n` of the benchmark's columns.
fn rows(start: u64, n: u64) -> Result<Rows, b2nd::Error> {
    let id: Vec<i64> = (start..start + n).map(|i| i as i64).collect();
    let score: Vec<Option<f64>> = (start..start + n)
        .map(|i| (i % 7 != 0).then_some(i as f64 / 2.0))
        .collect();
    let flag: Vec<bool> = (start..start + n).map(|i| i % 2 == 0).collect();
    Rows::new()
        .column("id", &id)?
        .column_opt("score", &score)?
        .column("flag", &flag)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n = |i: usize| -> u64 { args[i].parse().expect("a number") };
    let path = &args[2];
    let durability = if args.last().is_some_and(|a| a == "process") {
        Durability::Process
    } else {
        Durability::Disk
    };
    let open = || TableMut::open(path).map(|t| t.with_durability(durability));
    let (seconds, changed) = match args[1].as_str() {
        "append" => {
            let (total, batch) = (n(3), n(4).max(1));
            let mut t = open()?;
            let start = t.table().n_rows();
            let batches: Vec<Rows> = (0..total.div_ceil(batch))
                .map(|b| rows(start + b * batch, batch.min(total - b * batch)))
                .collect::<Result<_, _>>()?;
            let t0 = Instant::now();
            let mut changed = 0;
            for b in &batches {
                changed += t.append(b)?;
            }
            (t0.elapsed().as_secs_f64(), changed)
        }
        "delete" => {
            let k = n(3);
            let mut t = open()?;
            let live = t.table().n_rows();
            let step = (live / k.max(1)).max(1);
            let picked: Vec<u64> = (0..live).step_by(step as usize).take(k as usize).collect();
            let t0 = Instant::now();
            let changed = t.delete(&picked)?;
            (t0.elapsed().as_secs_f64(), changed)
        }
        "update" => {
            let k = n(3);
            let mut t = open()?;
            let live = t.table().n_rows();
            let step = (live / k.max(1)).max(1);
            let picked: Vec<u64> = (0..live).step_by(step as usize).take(k as usize).collect();
            let values: Vec<Option<f64>> = picked.iter().map(|&r| Some(r as f64 + 0.25)).collect();
            let values = Rows::new().column_opt("score", &values)?;
            let t0 = Instant::now();
            let changed = t.update(&picked, &values)?;
            (t0.elapsed().as_secs_f64(), changed)
        }
        other => return Err(format!("unknown case {other}").into()),
    };
    println!("{{\"seconds\": {seconds}, \"rows\": {changed}}}");
    Ok(())
}
