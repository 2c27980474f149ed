//! One measurement of one implementation, as JSON on stdout (the peers benchmark of
//! BENCHMARKS.md; `scripts/bench_peers.sh` runs it once per implementation, operation, file
//! and thread count, under `/usr/bin/time` for the peak RSS).
//!
//! ```sh
//! b2nd-bench-peers IMPL OP FILE --manifest DIR/manifest.json --threads T --reps N
//! ```
//! IMPL: `blosc2` (the `blosc2` crate 0.2.3: c-blosc2 2.21.3 built by CMake),
//! `pure` (`blosc2-pure-rs` 0.2.4). OP:
//! - `read`: open + whole array into a fresh buffer (best of N);
//! - `slice`: 10 items from the middle of the last dimension (other indices at their
//!   middle), array open (best of N * 40);
//! - `box`: the centred box of a quarter of every dimension, array open (best of N * 10);
//! - `write`: a new file with the input's chunks, blocks, codec, level and filters from
//!   data in memory (best of N), deleted after each repetition.
//! A read prints `sum`, the wrapping sum of the result's little-endian u64 words, which the
//! script compares with python-blosc2's: a peer that returns other bytes is reported.
//! b2nd is measured the same way by its example `bench_peer_op` (it links c-blosc2 2.15 under
//! the same symbol names, so it cannot share this binary). Threads: blosc2-pure-rs takes them
//! from the API; c-blosc2 (the `blosc2` crate)
//! from `BLOSC_NTHREADS`, which the script sets.

mod common;

use std::path::Path;

use common::*;

/// The whole array as bytes, by the `blosc2` crate (the data a write starts from).
fn blosc2_data(file: &Path) -> Res<Vec<u8>> {
    let a = blosc2::nd::Ndarray::open(file).map_err(|e| format!("blosc2 crate: {e:?}"))?;
    Ok(a.to_items_bytes()
        .map_err(|e| format!("blosc2 crate: {e:?}"))?)
}

fn run_blosc2(op: &str, file: &Path, p: &Params, t: usize, reps: usize) -> Res<(f64, Vec<u8>)> {
    use blosc2::nd::Ndarray;
    let ranges = |r: &[(u64, u64)]| -> Vec<std::ops::Range<usize>> {
        r.iter().map(|&(a, b)| a as usize..b as usize).collect()
    };
    let err = |e: blosc2::Error| format!("blosc2 crate: {e:?}");
    match op {
        "read" => best(reps, || {
            let a = Ndarray::open(file).map_err(err)?;
            Ok(a.to_items_bytes().map_err(err)?)
        }),
        "slice" | "box" => {
            let a = Ndarray::open(file).map_err(err)?;
            let r = ranges(&if op == "slice" {
                slice_ranges(&p.shape)
            } else {
                box_ranges(&p.shape)
            });
            best(if op == "slice" { reps * 40 } else { reps * 10 }, || {
                Ok(a.slice_buf(&r).map_err(err)?)
            })
        }
        "write" => {
            use blosc2::{CParams, CompressAlgo, Filter};
            let mut fs = Vec::new();
            for (&id, &m) in p.filters.iter().zip(&p.filters_meta) {
                match id {
                    0 => {}
                    1 if m == 0 || usize::from(m) == p.itemsize => fs.push(Filter::ByteShuffle),
                    2 => fs.push(Filter::BitShuffle),
                    3 => fs.push(Filter::Delta),
                    4 => fs.push(Filter::TruncPrecision { prec_bits: m as i8 }),
                    _ => {
                        return Err(format!(
                            "blosc2 crate: its Filter has no filter id {id} with meta {m}"
                        )
                        .into())
                    }
                }
            }
            let codec = match p.codec.as_str() {
                "ZSTD" => CompressAlgo::Zstd,
                "LZ4" => CompressAlgo::Lz4,
                "LZ4HC" => CompressAlgo::Lz4hc,
                "BLOSCLZ" => CompressAlgo::Blosclz,
                c => return Err(format!("blosc2 crate: codec {c}").into()),
            };
            let dtype = blosc2::nd::Dtype::from_numpy_str(&p.dtype)
                .map_err(|e| format!("blosc2 crate: dtype {}: {e:?}", p.dtype))?;
            let data = blosc2_data(file)?;
            let out = out_path(file, "blosc2");
            let shape: Vec<usize> = p.shape.iter().map(|&s| s as usize).collect();
            let chunks: Vec<usize> = p.chunks.iter().map(|&s| s as usize).collect();
            let blocks: Vec<usize> = p.blocks.iter().map(|&s| s as usize).collect();
            let mut cp = CParams::default();
            cp.compressor(codec)
                .clevel(u32::from(p.clevel))
                .nthreads(t)
                .filters(&fs)
                .map_err(err)?;
            let mut np = blosc2::nd::NdarrayParams::default();
            np.chunkshape(Some(&chunks))
                .blockshape(Some(&blocks))
                .cparams(cp);
            best_after(reps, || rm(&out), || {
                let storage = blosc2::chunk::SChunkStorageParams {
                    contiguous: p.contiguous,
                    urlpath: Some(&out),
                };
                Ndarray::from_items_bytes_at(&data, dtype.clone(), &shape, storage, &np)
                    .map_err(err)?;
                Ok(Vec::new())
            })
        }
        _ => Err(format!("unknown op {op}").into()),
    }
}

fn run_pure(op: &str, file: &Path, p: &Params, t: usize, reps: usize) -> Res<(f64, Vec<u8>)> {
    use blosc2_pure_rs::b2nd;
    let open = || -> Res<b2nd::B2ndArray> {
        let mut a = b2nd::b2nd_open(file).map_err(|e| format!("blosc2-pure-rs: {e}"))?;
        a.schunk.dparams.nthreads = t as i16;
        Ok(a)
    };
    let err = |e: &str| format!("blosc2-pure-rs: {e}");
    match op {
        "read" => best(reps, || {
            Ok(b2nd::b2nd_to_cbuffer_vec(&open()?).map_err(err)?)
        }),
        "slice" | "box" => {
            let a = open()?;
            let r = if op == "slice" {
                slice_ranges(&p.shape)
            } else {
                box_ranges(&p.shape)
            };
            let start: Vec<i64> = r.iter().map(|x| x.0 as i64).collect();
            let stop: Vec<i64> = r.iter().map(|x| x.1 as i64).collect();
            let bshape: Vec<i64> = r.iter().map(|x| (x.1 - x.0) as i64).collect();
            best(if op == "slice" { reps * 40 } else { reps * 10 }, || {
                Ok(b2nd::b2nd_get_slice_cbuffer_vec(&a, &start, &stop, &bshape).map_err(err)?)
            })
        }
        "write" => {
            use blosc2_pure_rs::compress::{CParams, DParams};
            // The data as blosc2-pure-rs itself reads it (it reads every file of the suite).
            let data = b2nd::b2nd_to_cbuffer_vec(&open()?).map_err(err)?;
            let out = out_path(file, "pure");
            let meta = b2nd::B2ndMeta {
                shape: p.shape.iter().map(|&s| s as i64).collect(),
                chunkshape: p.chunks.iter().map(|&s| s as i32).collect(),
                blockshape: p.blocks.iter().map(|&s| s as i32).collect(),
                dtype: p.dtype.clone(),
                dtype_format: 0,
            };
            let codec = match p.codec.as_str() {
                "BLOSCLZ" => 0,
                "LZ4" => 1,
                "LZ4HC" => 2,
                "ZLIB" => 4,
                "ZSTD" => 5,
                c => return Err(format!("blosc2-pure-rs: codec {c}").into()),
            };
            best_after(reps, || rm(&out), || {
                let cp = CParams {
                    compcode: codec,
                    clevel: p.clevel,
                    typesize: p.itemsize.min(255) as i32,
                    filters: p.filters,
                    filters_meta: p.filters_meta,
                    nthreads: t as i16,
                    ..CParams::default()
                };
                let dp = DParams {
                    nthreads: t as i16,
                    ..DParams::default()
                };
                let a = b2nd::b2nd_from_cbuffer(meta.clone(), &data, cp, dp).map_err(err)?;
                if p.contiguous {
                    a.save(&out)?;
                } else {
                    a.save_sframe(&out)?;
                }
                Ok(Vec::new())
            })
        }
        _ => Err(format!("unknown op {op}").into()),
    }
}

fn main() {
    main_with(&[("blosc2", run_blosc2), ("pure", run_pure)]);
}
