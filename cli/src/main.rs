//! `b2nd`: inspect and convert Blosc2 N-d arrays.

#![forbid(unsafe_code)]

mod cat;
mod edit;
mod json;
mod ls;
mod progress;
mod sql;
mod to_npy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use b2nd::Array;
use clap::{Parser, Subcommand};

/// `writeln!` into a String (cannot fail).
macro_rules! outln {
    ($o:expr, $($t:tt)*) => {
        let _ = writeln!($o, $($t)*);
    };
}

#[derive(Parser)]
#[command(
    name = "b2nd",
    version,
    about = "Inspect and convert Blosc2 N-d arrays (.b2nd, caterva) and python-blosc2 stores (.b2z, .b2d, .b2e)"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// For URLs: the longest one request may take, its body included (default 30).
    #[arg(long, global = true, value_name = "SECONDS", value_parser = seconds)]
    timeout: Option<std::time::Duration>,
    /// For URLs: how many times a transient failure (5xx, a reset) is retried (default 10, with
    /// object_store's backoff, within 3 minutes).
    #[arg(long, global = true, value_name = "N")]
    retries: Option<usize>,
}

/// A positive number of seconds.
fn seconds(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v < 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("{s:?} is not a positive number of seconds"))
}

/// How URLs are read, from the global options (and `--threads`, which also bounds the
/// requests in flight): set once in `main`.
static REMOTE: std::sync::OnceLock<b2nd::RemoteOptions> = std::sync::OnceLock::new();

/// The options for reading URLs.
pub(crate) fn remote_options() -> b2nd::RemoteOptions {
    REMOTE.get().cloned().unwrap_or_default()
}

#[derive(Subcommand)]
enum Cmd {
    /// Write a NumPy .npy file as a Blosc2 N-d array python-blosc2 opens.
    FromNpy {
        /// The .npy file to read.
        input: PathBuf,
        /// The array to write (a .b2nd file, or a directory with --sparse).
        out: PathBuf,
        /// Chunk shape, comma separated (default: a heuristic, see the library docs).
        #[arg(long)]
        chunks: Option<String>,
        /// Block shape, comma separated.
        #[arg(long)]
        blocks: Option<String>,
        /// Codec: blosclz, lz4, lz4hc, zlib, zstd, or lossy zfp_acc:EXPONENT, zfp_prec:BITS, zfp_rate:PERCENT (<f4/<f8, no filters).
        #[arg(long, default_value = "zstd")]
        codec: String,
        /// Compression level 0-9.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u8).range(0..=9))]
        clevel: u8,
        /// Filters in pipeline order, comma separated (shuffle, shuffle:BYTES, bitshuffle,
        /// bytedelta, delta, trunc_prec:BITS, ndcell:SIDE, ndmean:SIDE), or `none`. Default: shuffle (shuffle:4 for `U` strings,
        /// as python-blosc2).
        #[arg(long)]
        filters: Option<String>,
        /// Write a sparse frame (a directory).
        #[arg(long)]
        sparse: bool,
        /// Metalayer flavour: b2nd or caterva.
        #[arg(long, default_value = "b2nd")]
        meta: String,
        /// Replace OUT if it exists.
        #[arg(long)]
        force: bool,
        /// Threads for compression (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Append a .npy file's array to an array along an axis, in place (one atomic change):
    /// its shape must be the array's except along the axis.
    Append {
        /// The array (a .b2nd file or a sparse-frame directory), changed in place.
        array: PathBuf,
        /// The .npy file holding the data to append (same dtype).
        input: PathBuf,
        /// The axis to grow.
        #[arg(long, default_value_t = 0)]
        axis: usize,
        /// Threads for compression (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Write a .npy file's array into a slice of an array, in place (one atomic change), as
    /// python-blosc2's `a[SPEC] = data`: python-blosc2's indexes on it are marked stale and its
    /// query cache dropped, as its own writes do.
    Write {
        /// The array (a .b2nd file or a sparse-frame directory), changed in place.
        array: PathBuf,
        /// The .npy file holding the data (the array's dtype; the slice's shape, without the
        /// dimensions an integer index drops).
        input: PathBuf,
        /// Where to write, NumPy basic indexing per dimension, comma separated: an index
        /// (negative from the end; drops the dimension) or start:stop with step 1 (bounds clamp
        /// as in NumPy), e.g. `10:20,-1`. Missing trailing dimensions are taken whole.
        #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
        slice: String,
        /// Threads for compression (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Change an array's shape in place (one atomic change): grown positions read as zeros,
    /// as after python-blosc2's `resize`.
    Resize {
        /// The array (a .b2nd file or a sparse-frame directory), changed in place.
        array: PathBuf,
        /// The new shape, comma separated (e.g. `100,20`; 0 allowed).
        shape: String,
    },
    /// Close the gaps deleted rows left in a table, in place (one atomic change), as
    /// python-blosc2's `compact()` and `close()`: the live rows moved to the front of every
    /// column, its indexes marked stale. Prints the number of deleted rows dropped.
    Compact {
        /// The table (a .b2d directory or a .b2z file), changed in place.
        table: PathBuf,
    },
    /// Summarise an array: format, shape, chunks, blocks, dtype, compression, attributes.
    /// On a store (without --key), say what it is.
    Info {
        /// A CFrame file, a sparse-frame directory, or a store (.b2z, .b2d, .b2e).
        path: PathBuf,
        /// Byte offset of the frame inside the file.
        #[arg(long, default_value_t = 0)]
        offset: u64,
        /// The store member to describe, by the key python-blosc2 uses (`/dir1/node`).
        #[arg(long, conflicts_with = "offset")]
        key: Option<String>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// List what a store (.b2z, .b2d, .b2e) holds: each key with its kind, and shape and
    /// dtype for arrays.
    Ls {
        /// The store.
        path: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Write a store member that is not an N-d array to standard output: an SChunk's bytes,
    /// or the items of an ObjectArray, BatchArray or ListArray as one JSON array.
    Cat {
        /// The store (.b2z, .b2d, .b2e).
        path: PathBuf,
        /// The member's key (`/dir1/node`).
        #[arg(long)]
        key: String,
    },
    /// Run a SQL query (DataFusion) over python-blosc2 tables and N-d arrays and print the
    /// result. Tables are CTables (live rows; nulls as NULL); arrays have one row per element
    /// with columns i0, i1, ... and value.
    Sql {
        /// The query, e.g. `SELECT tag, avg(score) FROM t GROUP BY tag` (it may start with
        /// a `--` comment); or none, with --file.
        #[arg(allow_hyphen_values = true, required_unless_present = "file")]
        query: Option<String>,
        /// Read the query from this file (`-`: standard input) instead.
        #[arg(
            short = 'f',
            long = "file",
            value_name = "FILE",
            conflicts_with = "query"
        )]
        file: Option<PathBuf>,
        /// Write the result to this file instead of printing it, in the format its extension
        /// names: `.parquet`, `.arrow` / `.ipc` (Arrow IPC file), `.csv`, `.json` / `.jsonl`
        /// (JSON lines). Streamed as the batches come; the file appears whole or not at all.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// A table: NAME=PATH, PATH a .b2z / .b2d table, an N-d array (one row per element,
        /// as --array), PATH#KEY inside a store, a URL, or many files as one table: a glob
        /// (`data/*.b2z`, `s3://bucket/events/*.b2z`) or a directory ending in `/` (repeat).
        #[arg(long = "table", value_name = "NAME=PATH", value_parser = sql::parse_named)]
        tables: Vec<sql::Named>,
        /// An N-d array as a table: NAME=PATH (a .b2nd file, sparse directory, PATH#KEY, a URL,
        /// or a glob or directory ending in `/` of arrays read as one table).
        #[arg(long = "array", value_name = "NAME=PATH", value_parser = sql::parse_named)]
        arrays: Vec<sql::Named>,
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: sql::Format,
        /// Threads (partitions and workers; default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Let the query change tables: INSERT INTO, DELETE FROM, UPDATE and TRUNCATE on
        /// tables saved on their own (.b2d, .b2z), each statement one atomic change left as
        /// python-blosc2 leaves its own (without it, such statements are refused and nothing
        /// changes).
        #[arg(long)]
        write: bool,
        /// Run the query on the Ballista cluster of this scheduler (`df://HOST:PORT`; builds
        /// with the `cluster` feature): its executors read the files by the same paths or
        /// URLs.
        #[arg(long, value_name = "URL")]
        cluster: Option<String>,
    },
    /// Write the array, or a slice of it, as a NumPy .npy file (streamed: never held whole).
    ToNpy {
        /// A CFrame file, a sparse-frame directory, or a store with --key.
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
        /// The store member to convert, by the key python-blosc2 uses (`/dir1/node`); with
        /// --column, the key of the table inside a TreeStore.
        #[arg(long, conflicts_with = "offset")]
        key: Option<String>,
        /// A CTable's fixed-width column: its live rows, as python-blosc2's
        /// `t[NAME].to_numpy()` (PATH is the table's .b2z / .b2d, or a TreeStore with --key).
        #[arg(long, conflicts_with = "offset")]
        column: Option<String>,
        /// Threads for decoding (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Replace OUT if it is an existing regular file.
        #[arg(long)]
        force: bool,
    },
}

/// Where an array comes from: a file or directory, a frame at an offset of a file, or a
/// store member.
pub(crate) struct Source<'a> {
    pub path: &'a Path,
    pub offset: u64,
    pub key: Option<&'a str>,
}

impl Source<'_> {
    /// The source as a URL: read by ranges.
    pub(crate) fn url(&self) -> Option<&str> {
        url_of(self.path)
    }

    pub(crate) fn open(&self) -> b2nd::Result<Array> {
        match self.key {
            Some(key) => open_store(self.path)?.open_array(key),
            None if self.url().is_some() && self.offset == 0 => {
                Array::open_url_with(self.url().expect("checked"), &remote_options())
            }
            None if self.url().is_some() => Err(b2nd::Error::InvalidArgument(
                "--offset is not taken with a URL".into(),
            )),
            None if self.offset == 0 => Array::open(self.path),
            None => Array::open_at(self.path, self.offset),
        }
    }
}

/// `path` as a URL (`http://`, `https://`, `s3://`, `gs://`, `az://`, `file://`), if it is
/// one.
pub(crate) fn url_of(path: &Path) -> Option<&str> {
    let s = path.to_str()?;
    [
        "http://", "https://", "s3://", "gs://", "az://", "azure://", "file://",
    ]
    .iter()
    .any(|p| s.starts_with(p))
    .then_some(s)
}

/// Whether `path` names a store: a local one as [`b2nd::Store::probe`] finds it, a URL by
/// its suffix (`.b2z`, `.b2e`, `.b2d`).
pub(crate) fn is_store(path: &Path) -> bool {
    match url_of(path) {
        Some(u) => {
            let u = u.trim_end_matches('/');
            u.ends_with(".b2z") || u.ends_with(".b2e") || u.ends_with(".b2d")
        }
        None => b2nd::Store::probe(path),
    }
}

/// Open the store at `path`, a local path or a URL.
pub(crate) fn open_store(path: &Path) -> b2nd::Result<b2nd::Store> {
    match url_of(path) {
        Some(url) => b2nd::Store::open_url_with(url, &remote_options()),
        None => b2nd::Store::open(path),
    }
}

/// What `info --key` says of a store member that is not an N-d array.
fn member_info(
    store: &b2nd::Store,
    key: &str,
    kind: &b2nd::MemberKind,
    as_json: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    use std::fmt::Write as _;
    let source = format!("{}:{key}", store.path().display());
    let framed = !matches!(
        kind,
        b2nd::MemberKind::C2Array | b2nd::MemberKind::Group | b2nd::MemberKind::CTable
    );
    let s = if framed {
        Some(store.open_schunk(key)?)
    } else {
        None
    };
    let attrs = match &s {
        Some(s) => s.attrs()?,
        None if *kind == b2nd::MemberKind::Group => store.group_attrs(key)?,
        None => Vec::new(),
    };
    if as_json {
        let mut obj = serde_json::json!({"source": source, "kind": kind.name()});
        if let Some(s) = &s {
            obj["metalayers"] = serde_json::json!(s.metalayer_names());
            obj["frame_version"] = serde_json::json!(s.frame_version());
            obj["typesize"] = serde_json::json!(s.typesize());
            obj["chunksize"] = serde_json::json!(s.chunksize());
            obj["nchunks"] = serde_json::json!(s.nchunks());
            obj["nbytes"] = serde_json::json!(s.nbytes());
            obj["cbytes"] = serde_json::json!(s.cbytes());
        }
        let mut am = serde_json::Map::new();
        for (k, v) in &attrs {
            am.insert(k.clone(), json::value(v));
        }
        obj["attrs"] = serde_json::Value::Object(am);
        return emit(&format!("{}\n", serde_json::to_string(&obj)?));
    }
    let mut o = String::new();
    outln!(o, "{source}");
    outln!(o, "  kind       {kind}");
    if let Some(s) = &s {
        let layers = s.metalayer_names();
        outln!(
            o,
            "  metalayers {}",
            if layers.is_empty() {
                "none".to_string()
            } else {
                layers.join(", ")
            }
        );
        let chunks = match (s.nchunks(), s.chunksize()) {
            (Some(n), Some(size)) => format!("in {} of {size} bytes", count(n, "chunk")),
            (Some(n), None) => format!("in {} of variable size", count(n, "chunk")),
            _ => "in variable-size chunks".into(),
        };
        outln!(
            o,
            "  size       {} bytes {chunks}, {} compressed (frame format {})",
            s.nbytes(),
            s.cbytes(),
            s.frame_version()
        );
    }
    if !attrs.is_empty() {
        outln!(o, "  attrs");
        for (k, v) in &attrs {
            outln!(o, "    {k} = {}", json::value(v));
        }
    }
    emit(&o)
}

/// What `info` says of a store (without `--key`).
fn store_info(path: &Path, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    let store = open_store(path)?;
    if store.is_table() {
        let t = store.open_table("/")?;
        let computed = t
            .columns()
            .iter()
            .filter(|c| c.computed().is_some())
            .count();
        if as_json {
            let obj = serde_json::json!({
                "source": path.display().to_string(),
                "kind": "ctable",
                "n_rows": t.n_rows(),
                "n_columns": t.columns().len(),
                "n_computed_columns": computed,
                "hint": format!("b2nd ls {}", path.display()),
            });
            return emit(&format!("{}\n", serde_json::to_string(&obj)?));
        }
        return emit(&format!(
            "{}: a python-blosc2 ctable of {} and {}{}; list its columns with `b2nd ls {}`, \
             write one with `b2nd to-npy {} OUT --column NAME`\n",
            path.display(),
            count(t.n_rows(), "row"),
            count(t.columns().len() as u64, "column"),
            if computed > 0 {
                format!(" ({computed} computed)")
            } else {
                String::new()
            },
            path.display(),
            path.display()
        ));
    }
    let n = store.keys().len();
    if as_json {
        let obj = serde_json::json!({
            "source": path.display().to_string(),
            "kind": store.kind().name(),
            "format": store.format(),
            "n_keys": n,
            "hint": format!("b2nd ls {}", path.display()),
        });
        return emit(&format!("{}\n", serde_json::to_string(&obj)?));
    }
    emit(&format!(
        "{}: a python-blosc2 {} ({}) holding {}; list them with `b2nd ls {}`, describe one with \
         `b2nd info {} --key KEY`\n",
        path.display(),
        store.kind(),
        store.format(),
        count(n as u64, "key"),
        path.display(),
        path.display()
    ))
}

/// Write `s` to standard output.
pub(crate) fn emit(s: &str) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())?;
    out.flush()?;
    Ok(())
}

fn info(src: &Source, as_json: bool) -> Result<(), Box<dyn std::error::Error>> {
    use std::fmt::Write as _;
    if src.key.is_none() && src.offset == 0 && is_store(src.path) {
        return store_info(src.path, as_json);
    }
    if let Some(key) = src.key {
        let store = open_store(src.path)?;
        let kind = store.member_kind(key)?;
        if kind != b2nd::MemberKind::NdArray {
            return member_info(&store, key, &kind, as_json);
        }
    }
    let a = src.open()?;
    let attrs = a.attrs()?;
    if as_json {
        let obj = json::info(&a, &attrs);
        let mut line = serde_json::to_string(&obj)?;
        line.push('\n');
        return emit(&line);
    }
    let mut o = String::new();
    let shape = |v: &[u64]| {
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(" x ")
    };
    outln!(o, "{}", a.source());
    if let Some(kind) = a.tensor_kind() {
        outln!(
            o,
            "  format     python-blosc2 save_tensor frame of a {kind} tensor (shape and dtype \
             in vlmeta __pack_tensor__; read only)"
        );
    } else {
        outln!(
            o,
            "  format     {} (metalayer version {})",
            a.format(),
            a.metalayer_version()
        );
    }
    outln!(
        o,
        "  shape      ({})  {}",
        shape(a.shape()),
        count(a.nitems(), "item")
    );
    outln!(
        o,
        "  chunks     ({})  {}",
        shape(a.chunks()),
        count(a.nchunks(), "chunk")
    );
    outln!(o, "  blocks     ({})", shape(a.blocks()));
    outln!(
        o,
        "  dtype      {}  ({} bytes/item)",
        a.dtype_str(),
        a.itemsize()
    );
    let ratio = if a.cbytes() > 0 {
        a.nbytes() as f64 / a.cbytes() as f64
    } else {
        0.0
    };
    outln!(
        o,
        "  size       {} bytes, {} compressed (ratio {:.2})",
        a.nbytes(),
        a.cbytes(),
        ratio
    );
    let filters = a.filter_names();
    outln!(
        o,
        "  codec      {} clevel {}, filters [{}]",
        a.codec_name(),
        a.clevel(),
        filters.join(", ")
    );
    outln!(o, "  storage    {}", a.storage().name());
    if !attrs.is_empty() {
        outln!(o, "  attrs");
        for (k, v) in &attrs {
            outln!(o, "    {k} = {}", json::value(v));
        }
    }
    emit(&o)
}

fn dims(what: &str, s: &str) -> Result<Vec<u64>, String> {
    s.split(',')
        .map(|p| {
            let p = p.trim();
            match p.parse::<i64>() {
                Ok(v) if v > 0 => Ok(v as u64),
                Ok(v) => Err(format!("--{what}: sizes must be positive, got {v}")),
                Err(_) => Err(format!("--{what}: {p:?} is not an integer")),
            }
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn from_npy(
    input: &Path,
    out: &Path,
    chunks: Option<&str>,
    blocks: Option<&str>,
    codec: &str,
    clevel: u8,
    filters: Option<&str>,
    sparse: bool,
    meta: &str,
    force: bool,
    threads: Option<usize>,
) -> Result<(), Box<dyn std::error::Error>> {
    use b2nd::write::{ArrayBuilder, Codec, Filter, Target};
    use std::io::Read;
    // Options first: nothing is read or written when they are wrong.
    let codec: Codec = codec.parse()?;
    let filters: Option<Vec<Filter>> = match filters {
        None => None,
        Some("none") | Some("") => Some(vec![]),
        Some(f) => Some(
            f.split(',')
                .map(|x| x.trim().parse())
                .collect::<Result<_, _>>()?,
        ),
    };
    let format = match meta {
        "b2nd" => b2nd::Format::B2nd,
        "caterva" => b2nd::Format::Caterva,
        other => return Err(format!("--meta {other:?}: b2nd or caterva").into()),
    };
    if !force && std::fs::symlink_metadata(out).is_ok() {
        return Err(format!("{} exists (use --force to replace it)", out.display()).into());
    }
    let chunks = chunks.map(|c| dims("chunks", c)).transpose()?;
    let blocks = blocks.map(|b| dims("blocks", b)).transpose()?;
    let io = |e: std::io::Error| format!("{}: {e}", input.display());
    let (mut f, h, nbytes) = open_npy(input)?;
    let mut b = ArrayBuilder::new(&h.shape, h.dtype.clone())
        .codec(codec)
        .clevel(clevel)
        .format(format)
        .overwrite(force);
    if let Some(c) = &chunks {
        b = b.chunks(c);
    }
    if let Some(bl) = &blocks {
        b = b.blocks(bl);
    }
    if let Some(fl) = &filters {
        b = b.filters(fl);
    }
    if let Some(t) = threads {
        b = b.threads(b2nd::Threads::count(t)?);
    }
    let target = if sparse {
        Target::Sparse(out.to_path_buf())
    } else {
        Target::File(out.to_path_buf())
    };
    let mut w = b.create(target)?;
    if h.fortran_order && h.shape.len() > 1 {
        let mut data = Vec::with_capacity(nbytes as usize);
        f.read_to_end(&mut data).map_err(io)?;
        w.push(&h.to_c_order(&data))?;
    } else {
        let bar = progress::Bar::new(nbytes, "from-npy");
        let mut buf = vec![0u8; (16 << 20).min(nbytes as usize)];
        let mut left = nbytes;
        while left > 0 {
            let n = (buf.len() as u64).min(left) as usize;
            f.read_exact(&mut buf[..n]).map_err(io)?;
            w.push(&buf[..n])?;
            left -= n as u64;
            bar.add(n as u64);
        }
        bar.finish();
    }
    w.finish()?;
    Ok(())
}

/// Open a `.npy` file: its header parsed and checked against the file's size, the file
/// positioned at the data, and the data's size in bytes.
pub(crate) fn open_npy(
    input: &Path,
) -> Result<(std::fs::File, b2nd::npy::Header, u64), Box<dyn std::error::Error>> {
    use std::io::Read;
    let io = |e: std::io::Error| format!("{}: {e}", input.display());
    let mut f = std::fs::File::open(input).map_err(io)?;
    let mut head = vec![0u8; 12];
    let not_npy = || {
        format!(
            "{}: not a .npy file (no \\x93NUMPY header)",
            input.display()
        )
    };
    f.read_exact(&mut head).map_err(|_| not_npy())?;
    if &head[..6] != b"\x93NUMPY" {
        return Err(not_npy().into());
    }
    let hlen = match head[6] {
        1 => 10 + u16::from_le_bytes([head[8], head[9]]) as usize,
        _ => 12 + u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize,
    };
    if hlen > 1 << 24 {
        return Err(format!("{}: .npy header of {hlen} bytes", input.display()).into());
    }
    head.resize(hlen, 0);
    f.read_exact(&mut head[12..])
        .map_err(|_| format!("{}: .npy header cut short", input.display()))?;
    let h = b2nd::npy::parse_header(&head).map_err(|e| format!("{}: {e}", input.display()))?;
    let nbytes = h
        .shape
        .iter()
        .try_fold(h.dtype.itemsize() as u64, |a, &d| a.checked_mul(d))
        .ok_or("array too large")?;
    let have = f.metadata().map_err(io)?.len().saturating_sub(hlen as u64);
    if have != nbytes {
        return Err(format!(
            "{}: holds {have} data bytes, its header implies {nbytes}",
            input.display()
        )
        .into());
    }
    Ok((f, h, nbytes))
}

/// Whether the error (or one of its sources) is a closed standard output pipe.
fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        cur = c.source();
    }
    false
}

/// `n` and the noun, plural unless `n` is 1.
pub(crate) fn count(n: u64, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
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
    let mut remote = b2nd::RemoteOptions::new();
    if let Some(t) = cli.timeout {
        remote = remote.timeout(t);
    }
    if let Some(n) = cli.retries {
        remote = remote.retries(n);
    }
    if let Cmd::ToNpy {
        threads: Some(t), ..
    } = &cli.cmd
    {
        remote = remote.max_in_flight(*t);
    }
    let _ = REMOTE.set(remote);
    let r = match cli.cmd {
        Cmd::FromNpy {
            input,
            out,
            chunks,
            blocks,
            codec,
            clevel,
            filters,
            sparse,
            meta,
            force,
            threads,
        } => from_npy(
            &input,
            &out,
            chunks.as_deref(),
            blocks.as_deref(),
            &codec,
            clevel,
            filters.as_deref(),
            sparse,
            &meta,
            force,
            threads,
        ),
        Cmd::Info {
            path,
            offset,
            key,
            json,
        } => info(
            &Source {
                path: &path,
                offset,
                key: key.as_deref(),
            },
            json,
        ),
        Cmd::Ls { path, json } => ls::run(&path, json),
        Cmd::Cat { path, key } => cat::run(&path, &key),
        Cmd::Append {
            array,
            input,
            axis,
            threads,
        } => edit::append(&array, &input, axis, threads),
        Cmd::Resize { array, shape } => edit::resize(&array, &shape),
        Cmd::Compact { table } => edit::compact(&table),
        Cmd::Sql {
            query,
            file,
            output,
            tables,
            arrays,
            format,
            threads,
            write,
            cluster,
        } => sql::query_text(query, file.as_deref()).and_then(|query| {
            sql::run(
                &query,
                &tables,
                &arrays,
                sql::Run {
                    format,
                    output,
                    threads,
                    write,
                    cluster,
                },
            )
        }),
        Cmd::Write {
            array,
            input,
            slice,
            threads,
        } => edit::write(&array, &input, &slice, threads),
        Cmd::ToNpy {
            path,
            out,
            slice,
            offset,
            key,
            column,
            threads,
            force,
        } => to_npy::run(
            &Source {
                path: &path,
                offset,
                key: key.as_deref(),
            },
            &out,
            slice.as_deref(),
            column.as_deref(),
            threads,
            force,
        ),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that closed the pipe (`b2nd ... | head`) wanted no more: not an error.
        Err(e) if is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("b2nd: error: {}", chain(e.as_ref()));
            ExitCode::from(1)
        }
    }
}
