//! b2nd's side of the peers benchmark: one measurement as JSON on stdout, with the same
//! command line, operations and checksum as `bench/peers` (whose `common.rs` this includes;
//! see that crate and `scripts/bench_peers.sh`).
//!
//! ```sh
//! cargo run --release --example bench_peer_op -- b2nd OP FILE --manifest M --threads T --reps N
//! ```
//!
//! OP `write-nosync` (b2nd only) writes without syncing the new file to the disk.

#[path = "../bench/peers/src/common.rs"]
mod common;

use std::path::Path;

use common::*;

/// The whole array as bytes (the data a write starts from).
fn data_of(file: &Path, threads: usize) -> Res<Vec<u8>> {
    let a = b2nd::Array::open(file)?.with_threads(b2nd::Threads::count(threads)?);
    Ok(a.read_bytes()?)
}

fn run_b2nd(op: &str, file: &Path, p: &Params, t: usize, reps: usize) -> Res<(f64, Vec<u8>)> {
    use b2nd::{SliceItem, Threads};
    let threads = || Threads::count(t);
    let items = |r: &[(u64, u64)]| -> Vec<SliceItem> {
        r.iter()
            .map(|&(a, b)| SliceItem::Range {
                start: Some(a as i64),
                stop: Some(b as i64),
                step: 1,
            })
            .collect()
    };
    match op {
        "read" => best(reps, || {
            Ok(b2nd::Array::open(file)?
                .with_threads(threads()?)
                .read_bytes()?)
        }),
        "slice" | "box" => {
            let a = b2nd::Array::open(file)?.with_threads(threads()?);
            let r = if op == "slice" {
                slice_ranges(&p.shape)
            } else {
                box_ranges(&p.shape)
            };
            let it = items(&r);
            best(if op == "slice" { reps * 40 } else { reps * 10 }, || {
                Ok(a.read_slice_bytes(&it)?)
            })
        }
        // `write-nosync`: the same write left in the page cache (`Durability::Process`), as
        // python-blosc2 leaves its writes.
        "write" | "write-nosync" => {
            let data = data_of(file, t)?;
            let a = b2nd::Array::open(file)?;
            let out = out_path(file, "b2nd");
            let mut fs = Vec::new();
            for (&id, &m) in p.filters.iter().zip(&p.filters_meta) {
                use b2nd::Filter;
                match id {
                    1 if m == 0 => fs.push(Filter::Shuffle),
                    1 => fs.push(Filter::ShuffleBytes(m)),
                    2 => fs.push(Filter::Bitshuffle),
                    3 => fs.push(Filter::Delta),
                    4 => fs.push(Filter::TruncPrec(m)),
                    35 => fs.push(Filter::Bytedelta),
                    _ => {}
                }
            }
            best_after(
                reps,
                || rm(&out),
                || {
                    let target = if p.contiguous {
                        b2nd::Target::File(out.clone())
                    } else {
                        b2nd::Target::Sparse(out.clone())
                    };
                    b2nd::ArrayBuilder::with_dtype_str(&p.shape, &p.dtype)?
                        .chunks(&p.chunks)
                        .blocks(&p.blocks)
                        .codec(a.codec())
                        .clevel(p.clevel)
                        .filters(&fs)
                        .threads(threads()?)
                        .overwrite(true)
                        .durability(if op == "write" {
                            b2nd::Durability::Disk
                        } else {
                            b2nd::Durability::Process
                        })
                        .write_bytes(target, &data)?;
                    Ok(Vec::new())
                },
            )
        }
        _ => Err(format!("unknown op {op}").into()),
    }
}

fn main() {
    main_with(&[("b2nd", run_b2nd)]);
}
