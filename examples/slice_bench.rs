//! Time a whole-array read against small slices of the same array (in process, warm cache).
//!
//! ```sh
//! cargo run --release --example slice_bench -- FILE [SPEC ...]
//! ```
//!
//! The whole read streams the array in 64 MiB parts (as `b2nd to-npy` does) without writing
//! them anywhere; each slice is timed as open + read (a fresh `Array` each time, as a
//! command-line call would) and as read only, best and median of several runs.
//! `scripts/bench_slices.sh` creates the 1.6 GB test array and runs this.

use std::time::{Duration, Instant};

use b2nd::{Array, Slice};

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    (secs(v[0]), secs(v[v.len() / 2]))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        return Err("usage: slice_bench FILE [SPEC ...]".into());
    };
    let specs: Vec<&str> = if args.len() > 1 {
        args[1..].iter().map(|s| s.as_str()).collect()
    } else {
        vec!["123456789:123456799", "::20000000"]
    };
    let reps = 21;

    let a = Array::open(file)?;
    println!(
        "array: shape {:?}, chunks {:?}, blocks {:?}, {} chunks x {} blocks, dtype {}, {} bytes, threads {}",
        a.shape(),
        a.chunks(),
        a.blocks(),
        a.nchunks(),
        a.geometry().block_grid().iter().product::<u64>(),
        a.dtype_str(),
        a.nbytes(),
        a.threads()
    );
    drop(a);

    // Whole array, streamed.
    let mut full = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let a = Array::open(file)?;
        let mut slabs = a.slice_slabs(&Slice::all(), 64 << 20)?;
        let mut buf = Vec::new();
        let mut n = 0usize;
        while slabs.read_next(&mut buf)? {
            n += buf.len();
        }
        assert_eq!(n as u64, a.nbytes());
        full.push(t.elapsed());
    }
    let (full_best, full_med) = stats(full);
    println!("full read (open + stream every byte): best {full_best:.3} s, median {full_med:.3} s");

    for spec in specs {
        let slice: Slice = spec.parse()?;
        let mut with_open = Vec::new();
        let mut read_only = Vec::new();
        let mut shape = Vec::new();
        for _ in 0..reps {
            let t = Instant::now();
            let a = Array::open(file)?;
            let bytes = a.read_slice_bytes(&slice)?;
            let s = a.slice_shape(&slice)?;
            with_open.push(t.elapsed());
            let t = Instant::now();
            let again = a.read_slice_bytes(&slice)?;
            read_only.push(t.elapsed());
            assert_eq!(bytes, again);
            shape = s;
        }
        let (ob, om) = stats(with_open);
        let (rb, rm) = stats(read_only);
        println!(
            "slice {spec:>22} -> shape {shape:?}: open+read best {:.2} ms, median {:.2} ms \
             ({:.0}x faster than the full read); read only best {:.2} ms, median {:.2} ms",
            ob * 1e3,
            om * 1e3,
            full_med / om,
            rb * 1e3,
            rm * 1e3,
        );
    }
    Ok(())
}
