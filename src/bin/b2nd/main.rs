//! `b2nd`: inspect and convert Blosc2 N-d arrays.

mod json;
mod to_npy;

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
    /// Write the array, or a slice of it, as a NumPy .npy file (streamed: never held whole).
    ToNpy {
        /// A CFrame file or a sparse-frame directory.
        path: PathBuf,
        /// The .npy file to write (replaced atomically; nothing is left on error), or `-` for
        /// standard output.
        out: PathBuf,
        /// Only this part, NumPy basic indexing per dimension, comma separated: an index
        /// (negative from the end; drops the dimension) or start:stop:step (parts optional,
        /// step >= 1), e.g. `10:20,::3,-1`. Missing trailing dimensions are taken whole.
        #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
        slice: Option<String>,
        /// Byte offset of the frame inside the file.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// Threads for decoding (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
}

pub(crate) fn open(path: &Path, offset: u64) -> b2nd::Result<Array> {
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
            slice,
            offset,
            threads,
        } => to_npy::run(&path, &out, slice.as_deref(), offset, threads),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("b2nd: error: {}", chain(e.as_ref()));
            ExitCode::from(1)
        }
    }
}
