#![allow(dead_code)] // shared by two binaries (bench/peers and examples/bench_peer_op), each uses a part
//! What every implementation's measurement shares: the file's parameters, the slice and
//! box, timing, the checksum, the command line (see `main.rs`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};

pub(crate) type Run = fn(&str, &Path, &Params, usize, usize) -> Res<(f64, Vec<u8>)>;

pub(crate) type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The file's parameters, from the manifest `scripts/bench_make_files.py` writes.
pub(crate) struct Params {
    pub(crate) shape: Vec<u64>,
    pub(crate) chunks: Vec<u64>,
    pub(crate) blocks: Vec<u64>,
    pub(crate) dtype: String,
    pub(crate) itemsize: usize,
    pub(crate) codec: String,
    pub(crate) clevel: u8,
    pub(crate) filters: [u8; 6],
    pub(crate) filters_meta: [u8; 6],
    pub(crate) contiguous: bool,
}

pub(crate) fn params(manifest: &Path, name: &str) -> Res<Params> {
    let m: Value = serde_json::from_slice(&std::fs::read(manifest)?)?;
    let f = &m["files"][name];
    let u64s = |k: &str| -> Vec<u64> {
        f[k].as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default()
    };
    let id = |s: &str| match s {
        "SHUFFLE" => 1,
        "BITSHUFFLE" => 2,
        "DELTA" => 3,
        "TRUNC_PREC" => 4,
        "BYTEDELTA" => 35,
        _ => 0,
    };
    let mut filters = [0u8; 6];
    let mut filters_meta = [0u8; 6];
    for (i, v) in f["filters"]
        .as_array()
        .ok_or("no filters")?
        .iter()
        .enumerate()
    {
        filters[i] = id(v.as_str().unwrap_or(""));
    }
    for (i, v) in f["filters_meta"]
        .as_array()
        .ok_or("no meta")?
        .iter()
        .enumerate()
    {
        filters_meta[i] = v.as_u64().unwrap_or(0) as u8;
    }
    let shape = u64s("shape");
    let nitems: u64 = shape.iter().product();
    Ok(Params {
        chunks: u64s("chunks"),
        blocks: u64s("blocks"),
        dtype: f["dtype"].as_str().ok_or("no dtype")?.to_string(),
        itemsize: (f["nbytes"].as_u64().ok_or("no nbytes")? / nitems.max(1)) as usize,
        codec: f["codec"].as_str().ok_or("no codec")?.to_string(),
        clevel: f["clevel"].as_u64().unwrap_or(5) as u8,
        filters,
        filters_meta,
        contiguous: f["contiguous"].as_bool().unwrap_or(true),
        shape,
    })
}

/// `[start, stop)` per dimension of the 10-item slice.
pub(crate) fn slice_ranges(shape: &[u64]) -> Vec<(u64, u64)> {
    let nd = shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            if i + 1 < nd {
                (s / 2, s / 2 + 1)
            } else {
                let k = (s / 2).saturating_sub(5);
                (k, s.min(k + 10))
            }
        })
        .collect()
}

/// The centred box of a quarter of every dimension.
pub(crate) fn box_ranges(shape: &[u64]) -> Vec<(u64, u64)> {
    shape
        .iter()
        .map(|&s| {
            let n = (s / 4).max(1);
            let lo = (s - n) / 2;
            (lo, lo + n)
        })
        .collect()
}

pub(crate) fn checksum(b: &[u8]) -> u64 {
    let mut s = 0u64;
    let mut it = b.chunks_exact(8);
    for w in &mut it {
        s = s.wrapping_add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut last = [0u8; 8];
    last[..it.remainder().len()].copy_from_slice(it.remainder());
    s.wrapping_add(u64::from_le_bytes(last))
}

/// Best time of `reps` runs of `f` (seconds), and the bytes of the last run.
pub(crate) fn best(reps: usize, f: impl FnMut() -> Res<Vec<u8>>) -> Res<(f64, Vec<u8>)> {
    best_after(reps, || {}, f)
}

/// [`best`], with `before` run ahead of each run and not timed. Writes remove the last run's
/// output there: deleting a file costs no write anything, and deleting one whose blocks are
/// on the disk (a synced write's) takes milliseconds more than one still in the page cache
/// (about 7 ms for 36 MB on this VM's ext4 mounted with `discard`).
pub(crate) fn best_after(
    reps: usize,
    mut before: impl FnMut(),
    mut f: impl FnMut() -> Res<Vec<u8>>,
) -> Res<(f64, Vec<u8>)> {
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for _ in 0..reps.max(1) {
        before();
        let t0 = Instant::now();
        out = f()?;
        best = best.min(t0.elapsed().as_secs_f64());
    }
    Ok((best, out))
}

pub(crate) fn out_path(file: &Path, imp: &str) -> PathBuf {
    file.with_extension(format!("{imp}.peerwrite"))
}

pub(crate) fn rm(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Parse the arguments, run `runs[IMPL]`, print the JSON line.
pub(crate) fn main_with(runs: &[(&str, Run)]) {
    let args: Vec<String> = std::env::args().collect();
    let get = |k: &str| {
        args.iter()
            .position(|a| a == k)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if args.len() < 4 {
        eprintln!("usage: b2nd-bench-peers IMPL OP FILE --manifest M --threads T --reps N");
        std::process::exit(2);
    }
    let (imp, op, file) = (&args[1], &args[2], PathBuf::from(&args[3]));
    let threads: usize = get("--threads").and_then(|s| s.parse().ok()).unwrap_or(1);
    let reps: usize = get("--reps").and_then(|s| s.parse().ok()).unwrap_or(3);
    let manifest = PathBuf::from(get("--manifest").unwrap_or_default());
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let result = params(&manifest, &name).and_then(|p| {
        let nbytes = p.shape.iter().product::<u64>() as usize * p.itemsize;
        let run = runs
            .iter()
            .find(|(n, _)| n == imp)
            .map(|r| r.1)
            .ok_or_else(|| format!("unknown implementation {imp}"))?;
        let r = run(op, &file, &p, threads, reps)?;
        Ok((r, nbytes))
    });
    let v = match result {
        Ok(((s, bytes), nbytes)) => {
            let mut v = json!({"ok": true, "seconds": s, "bytes": bytes.len()});
            if op == "read" || op == "write" {
                v["mibs"] = json!(nbytes as f64 / (1u64 << 20) as f64 / s);
            }
            if op != "write" {
                v["sum"] = json!(checksum(&bytes).to_string());
            }
            v
        }
        Err(e) => json!({"ok": false, "error": e.to_string()}),
    };
    println!("{v}");
}
