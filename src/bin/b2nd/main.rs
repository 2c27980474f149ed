//! `b2nd`: inspect and convert Blosc2 N-d arrays.

mod json;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use b2nd::Array;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "b2nd",
    version,
    about = "Inspect and convert Blosc2 N-d arrays (.b2nd, caterva)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Summarise an array: format, shape, chunks, blocks, dtype, compression, attributes.
    Info {
        /// A CFrame file or a sparse-frame directory.
        path: PathBuf,
        /// Byte offset of the frame inside the file.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write the whole array as a NumPy .npy file.
    ToNpy {
        /// A CFrame file or a sparse-frame directory.
        path: PathBuf,
        /// The .npy file to write (replaced atomically; nothing is left on error).
        out: PathBuf,
        /// Byte offset of the frame inside the file.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Threads for decoding (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
}

fn open(path: &Path, offset: u64) -> b2nd::Result<Array> {
    if offset == 0 {
        Array::open(path)
    } else {
        Array::open_at(path, offset)
    }
}

fn info(path: &Path, offset: u64, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let a = open(path, offset)?;
    let attrs = a.attrs()?;
    if as_json {
        let obj = json::info(&a, &attrs);
        println!("{}", serde_json::to_string(&obj)?);
        return Ok(());
    }
    let shape = |v: &[u64]| {
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(" x ")
    };
    println!("{}", a.source());
    println!(
        "  format     {} (metalayer version {})",
        a.format(),
        a.metalayer_version()
    );
    println!("  shape      ({})  {} items", shape(a.shape()), a.nitems());
    println!(
        "  chunks     ({})  {} chunks",
        shape(a.chunks()),
        a.nchunks()
    );
    println!("  blocks     ({})", shape(a.blocks()));
    println!(
        "  dtype      {}  ({} bytes/item)",
        a.dtype_str(),
        a.itemsize()
    );
    let ratio = if a.cbytes() > 0 {
        a.nbytes() as f64 / a.cbytes() as f64
    } else {
        0.0
    };
    println!(
        "  size       {} bytes, {} compressed (ratio {:.2})",
        a.nbytes(),
        a.cbytes(),
        ratio
    );
    let filters = a.filters();
    println!(
        "  codec      {} clevel {}, filters [{}]",
        a.codec(),
        a.clevel(),
        filters.join(", ")
    );
    println!("  storage    {}", a.storage().name());
    if !attrs.is_empty() {
        println!("  attrs");
        for (k, v) in &attrs {
            println!("    {k} = {}", json::value(v));
        }
    }
    Ok(())
}

/// Rows (along dimension 0) per streamed slab: whole chunk rows, about 64 MiB at most.
fn slab_rows(a: &Array) -> u64 {
    let row_bytes: u64 = a.shape()[1..].iter().product::<u64>() * a.itemsize() as u64;
    let c = a.chunks()[0].max(1);
    let per = (64 << 20) / (row_bytes * c).max(1);
    c * per.max(1)
}

fn to_npy(
    path: &Path,
    out: &Path,
    offset: u64,
    threads: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut a = open(path, offset)?;
    if let Some(t) = threads {
        a = a.with_threads(t);
    }
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".b2nd-")
        .suffix(".npy.tmp")
        .tempfile_in(&dir)
        .map_err(|e| format!("{}: cannot create a temporary file: {e}", dir.display()))?;
    {
        let mut w = BufWriter::with_capacity(1 << 20, tmp.as_file());
        w.write_all(&b2nd::npy::header(a.dtype(), a.shape()))?;
        if a.ndim() == 0 || a.nitems() == 0 {
            w.write_all(&a.read_bytes()?)?;
        } else {
            // Stream slabs of whole chunk rows along the first dimension.
            let n0 = a.shape()[0];
            let step = slab_rows(&a);
            let mut start = vec![0u64; a.ndim()];
            let mut shape = a.shape().to_vec();
            let mut buf = Vec::new();
            let mut r = 0;
            while r < n0 {
                let rows = step.min(n0 - r);
                start[0] = r;
                shape[0] = rows;
                let bytes = shape.iter().product::<u64>() as usize * a.itemsize();
                buf.resize(bytes, 0);
                a.read_box_bytes_into(&start, &shape, &mut buf)?;
                w.write_all(&buf)?;
                r += rows;
            }
        }
        w.flush()?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(out)
        .map_err(|e| format!("{}: {}", out.display(), e.error))?;
    Ok(())
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        let m = c.to_string();
        if !s.contains(&m) {
            s.push_str(": ");
            s.push_str(&m);
        }
        cur = c.source();
    }
    s
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let r = match cli.cmd {
        Cmd::Info { path, offset, json } => info(&path, offset, json),
        Cmd::ToNpy {
            path,
            out,
            offset,
            threads,
        } => to_npy(&path, &out, offset, threads),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("b2nd: error: {}", chain(e.as_ref()));
            ExitCode::from(1)
        }
    }
}
