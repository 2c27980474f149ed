//! `b2nd to-npy`: stream an array, or a slice of it, into a `.npy` file or standard output.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use b2nd::Slice;

/// Largest part of the output held in memory at once (plus one decoded chunk per thread).
const SLAB_BYTES: usize = 64 << 20;

/// Where the `.npy` goes.
enum Target {
    /// Standard output (`-`).
    Stdout,
    /// An existing non-regular file, such as `/dev/null` or a FIFO: written in place (renaming
    /// a temporary file over it would replace the device or pipe).
    Special(PathBuf),
    /// A regular file: written to a temporary file beside it, renamed over it at the end.
    File(PathBuf),
}

impl Target {
    fn of(out: &Path) -> Target {
        if out.as_os_str() == "-" {
            return Target::Stdout;
        }
        match std::fs::metadata(out) {
            Ok(m) if !m.is_file() && !m.is_dir() => Target::Special(out.to_path_buf()),
            _ => Target::File(out.to_path_buf()),
        }
    }
}

/// Convert the array of `src` to `.npy` at `out`, only `slice` if given; with `column`,
/// that column's live rows of the table at `src` (its root, or its `--key`).
pub(crate) fn run(
    src: &crate::Source,
    out: &Path,
    slice: Option<&str>,
    column: Option<&str>,
    threads: Option<usize>,
    force: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    // Everything that can be checked is checked before any output exists.
    let target = Target::of(out);
    if let Target::File(p) = &target {
        if !force && std::fs::symlink_metadata(p).is_ok() {
            return Err(format!("{} exists (use --force to replace it)", p.display()).into());
        }
    }
    if let Some(name) = column {
        if slice.is_some() {
            return Err("--slice applies to arrays, not to --column".into());
        }
        let table = crate::open_store(src.path)?.open_table(src.key.unwrap_or("/"))?;
        let (dtype, shape, bytes) = table.read_column_bytes(name)?;
        let header = b2nd::npy::header(&dtype, &shape);
        let total = bytes.len() as u64;
        let mut next = |_: &mut Vec<u8>| Ok(false);
        return write(target, &header, total, bytes, &mut next);
    }
    let slice: Slice = slice.unwrap_or("").parse()?;
    let mut a = src.open()?;
    if let Some(t) = threads {
        a = a.with_threads(b2nd::Threads::count(t)?);
    }
    let mut slabs = a.slice_slabs(&slice, SLAB_BYTES)?;
    let header = b2nd::npy::header(a.dtype(), slabs.shape());
    // The first part is read before the output is opened: a file that fails to decode at
    // once leaves nothing behind, not even on standard output.
    let total = slabs.shape().iter().product::<u64>() * a.itemsize() as u64;
    let mut first = Vec::new();
    if !slabs.read_next(&mut first)? {
        first.clear();
    }
    let mut next = |buf: &mut Vec<u8>| -> Result<bool, Box<dyn std::error::Error>> {
        Ok(slabs.read_next(buf)?)
    };
    write(target, &header, total, first, &mut next)
}

/// The next part of the data into the buffer; `false` when there is no more.
type Next<'a> = dyn FnMut(&mut Vec<u8>) -> Result<bool, Box<dyn std::error::Error>> + 'a;

/// Write `header`, then `first` and every part `next` gives (`total` bytes in all, for the
/// progress bar), to `target`.
fn write(
    target: Target,
    header: &[u8],
    total: u64,
    first: Vec<u8>,
    next: &mut Next<'_>,
) -> Result<(), Box<dyn std::error::Error>> {
    let bar = crate::progress::Bar::new(total, "to-npy");
    let mut buf = first;
    let mut write_all = |w: &mut dyn Write, name: &str| -> Result<(), Box<dyn std::error::Error>> {
        // Keep the io::Error (a closed pipe is told apart by main); name the output.
        let io = |e: std::io::Error| -> Box<dyn std::error::Error> {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                Box::new(e)
            } else {
                format!("{name}: {e}").into()
            }
        };
        w.write_all(header).map_err(io)?;
        let mut more = !buf.is_empty();
        while more {
            w.write_all(&buf).map_err(io)?;
            bar.add(buf.len() as u64);
            more = next(&mut buf)?;
        }
        w.flush().map_err(io)?;
        bar.finish();
        Ok(())
    };
    match target {
        Target::Stdout => {
            let stdout = std::io::stdout();
            let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
            write_all(&mut w, "<stdout>")
        }
        Target::Special(p) => {
            let f = OpenOptions::new()
                .write(true)
                .open(&p)
                .map_err(|e| format!("{}: {e}", p.display()))?;
            write_all(
                &mut BufWriter::with_capacity(1 << 20, f),
                &p.display().to_string(),
            )
        }
        Target::File(p) => {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // Created as any new file is (0666 less the umask), as from-npy's output is.
            use std::os::unix::fs::PermissionsExt;
            let tmp = tempfile::Builder::new()
                .permissions(std::fs::Permissions::from_mode(0o666))
                .prefix(".b2nd-")
                .suffix(".npy.tmp")
                .tempfile_in(&dir)
                .map_err(|e| format!("{}: cannot create a temporary file: {e}", dir.display()))?;
            {
                let f: &File = tmp.as_file();
                write_all(
                    &mut BufWriter::with_capacity(1 << 20, f),
                    &p.display().to_string(),
                )?;
            }
            tmp.as_file().sync_all()?;
            tmp.persist(&p)
                .map_err(|e| format!("{}: {}", p.display(), e.error))?;
            Ok(())
        }
    }
}
