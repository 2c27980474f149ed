//! Benchmark of b2nd on the files `scripts/bench_make_files.py` makes (see BENCHMARKS.md).
//!
//! ```sh
//! cargo run --release --example bench -- OUTDIR --threads 2 [--json OUT.json]
//! ```
//!
//! Options: `--reps N` (whole-array reads, default 5), `--slice-reps N` (200),
//! `--write-reps N` (3), `--npy-reps N` (3), `--only NAME[,NAME..]`, `--no-write`, `--no-npy`,
//! `--read-only` (only the fresh-buffer whole-array read: for profiling with `perf record`),
//! `--b2nd PATH` (the CLI binary; default: `b2nd` next to this example's directory, i.e.
//! `target/release/b2nd`, which `cargo build --release` produces).
//!
//! Per file, best of N repetitions, MiB/s of the logical `nbytes`:
//! - `read`: `Array::open` + a fresh `vec![0u8; nbytes]` + `read_bytes_into` (what a user does;
//!   the buffer is dropped after the clock stops);
//! - `read (reused)`: `read_bytes_into` into a buffer already written once (array open);
//! - `read (THP)`: like `read`, but the fresh buffer is an anonymous mapping advised with
//!   `MADV_HUGEPAGE` (diagnostic: what transparent huge pages would change);
//! - `touch`: a fresh `vec![0u8; nbytes]` filled with a byte (the cost of faulting in new memory);
//! - `bound`: c-blosc2 alone, no b2nd code: `blosc2_schunk_open`, then T threads, each with its
//!   own decompression context, take the next chunk under a mutex (`blosc2_schunk_get_chunk`)
//!   and `blosc2_decompress_ctx` it into its own chunk-size slot of one fresh buffer of
//!   nchunks * chunksize bytes (no scatter into C order). The linked c-blosc2 2.15 cannot undo
//!   BYTEDELTA nor SHUFFLE with a byte-group meta (python-blosc2's default for `<U`): for such
//!   files the bound is computed with the chunk's filter bytes cleared (a copy of the chunk with
//!   header bytes 16..22 and 24..30 zeroed) and labelled `codec-only`: the codec cost without
//!   the filters, which b2nd then undoes in Rust. `bound (THP)`: the same into a
//!   `MADV_HUGEPAGE` buffer; `bound_codec` (JSON only): the codec-only decode for every file;
//! - `bound_block` (JSON only): the tightest: every chunk already in memory with its filter
//!   bytes cleared, decoded (codec only) into its slot of an output already written once, by
//!   T threads with contexts made before the clock starts; the time is c-blosc2's codec work
//!   and nothing else (no file reads, first touch, scatter or filters);
//! - `slice`: `read_slice_bytes_into` of 10 items in the middle of the last dimension (other
//!   indices at their middle), array open, best of `--slice-reps`, microseconds;
//! - `write`: `ArrayBuilder` with the file's dtype, chunks, blocks, codec, clevel and filters
//!   (byte-group SHUFFLE and BYTEDELTA included, encoded in Rust), `threads(T)`, to a file
//!   next to the input, deleted after each repetition;
//! - `to-npy`: wall time of `b2nd to-npy FILE OUT --threads T` run as a child process, with OUT
//!   `/dev/null`, `-` (stdout, itself /dev/null), a file in `/dev/shm` (tmpfs) and a file next
//!   to the input (disk; the tool fsyncs it). `/dev/null` and `-` are used only if a probe on a
//!   tiny array shows the binary writes devices directly (a FIFO stands in for /dev/null) and
//!   streams `-` to stdout: older binaries renamed a temporary file over their output, which
//!   as root would replace /dev/null itself.

use std::ffi::CString;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use b2nd::write::{ArrayBuilder, Codec, Filter, Target};
use b2nd::{Array, Storage};
use blosc2_src as sys;
use serde_json::{json, Map, Value};

const NAMES: [&str; 5] = [
    "f8_2d.b2nd",
    "i4_3d_lz4.b2nd",
    "f4_1d_bytedelta.b2nd",
    "u_strings.b2nd",
    "sparse_f8.b2nd",
];
const MIB: f64 = (1u64 << 20) as f64;
const BYTEDELTA: u8 = 35;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Opts {
    dir: PathBuf,
    threads: usize,
    reps: usize,
    slice_reps: usize,
    write_reps: usize,
    npy_reps: usize,
    only: Option<Vec<String>>,
    write: bool,
    npy: bool,
    read_only: bool,
    json: Option<PathBuf>,
    bin: PathBuf,
}

fn usage() -> ! {
    eprintln!(
        "usage: bench OUTDIR [--threads N] [--reps N] [--slice-reps N] [--write-reps N] \
         [--npy-reps N] [--only NAMES] [--no-write] [--no-npy] [--read-only] [--json OUT] \
         [--b2nd BIN]"
    );
    std::process::exit(2)
}

fn parse_args() -> Opts {
    let mut args = std::env::args().skip(1);
    let default_bin = std::env::current_exe()
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("b2nd")))
        .unwrap_or_else(|| PathBuf::from("b2nd"));
    let mut o = Opts {
        dir: PathBuf::new(),
        threads: 2,
        reps: 5,
        slice_reps: 200,
        write_reps: 3,
        npy_reps: 3,
        only: None,
        write: true,
        npy: true,
        read_only: false,
        json: None,
        bin: default_bin,
    };
    let mut dir = None;
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        let num = |s: String| s.parse::<usize>().unwrap_or_else(|_| usage()).max(1);
        match a.as_str() {
            "--threads" => o.threads = num(val()),
            "--reps" => o.reps = num(val()),
            "--slice-reps" => o.slice_reps = num(val()),
            "--write-reps" => o.write_reps = num(val()),
            "--npy-reps" => o.npy_reps = num(val()),
            "--only" => o.only = Some(val().split(',').map(String::from).collect()),
            "--no-write" => o.write = false,
            "--no-npy" => o.npy = false,
            "--read-only" => o.read_only = true,
            "--json" => o.json = Some(PathBuf::from(val())),
            "--b2nd" => o.bin = PathBuf::from(val()),
            "-h" | "--help" => usage(),
            s if s.starts_with("--") => usage(),
            s => dir = Some(PathBuf::from(s)),
        }
    }
    let dir = dir.unwrap_or_else(|| usage());
    // Absolute, because `to-npy` children run in other directories.
    o.dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    o
}

/// Best (minimum) of `reps` timings of `f`, which returns its own elapsed seconds.
fn best(reps: usize, mut f: impl FnMut() -> Res<f64>) -> Res<f64> {
    let mut b = f64::INFINITY;
    for _ in 0..reps {
        b = b.min(f()?);
    }
    Ok(b)
}

fn mibs(nbytes: u64, secs: f64) -> f64 {
    nbytes as f64 / MIB / secs
}

fn anon_huge_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/smaps_rollup").ok()?;
    let line = s.lines().find(|l| l.starts_with("AnonHugePages:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// An anonymous private mapping advised for transparent huge pages (zero-filled by the kernel).
struct HugeBuf {
    ptr: *mut u8,
    len: usize,
}

impl HugeBuf {
    fn new(len: usize) -> Res<HugeBuf> {
        let len = len.max(1);
        // SAFETY: an anonymous private mapping with no address hint; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err("mmap failed".into());
        }
        // SAFETY: [p, p + len) is the mapping just created; madvise only changes paging policy.
        // A failure (THP unavailable) is harmless and ignored.
        unsafe { libc::madvise(p, len, libc::MADV_HUGEPAGE) };
        Ok(HugeBuf {
            ptr: p as *mut u8,
            len,
        })
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, zero-initialised by the
        // kernel, owned exclusively by `self` (borrowed mutably here) until Drop unmaps it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for HugeBuf {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`, once; no slice outlives `self`.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// A super-chunk pointer that may move between threads (only used under a mutex).
struct SchunkPtr(*mut sys::blosc2_schunk);
// SAFETY: a blosc2_schunk has no thread affinity; every use of the pointer happens while the
// Mutex that owns this value is held, so C never sees two concurrent calls on it.
unsafe impl Send for SchunkPtr {}

/// Whether the linked c-blosc2 2.15 undoes this filter pipeline itself.
fn c_undoes(filters: &[u8; 6], metas: &[u8; 6]) -> bool {
    filters
        .iter()
        .zip(metas)
        .all(|(&f, &m)| matches!(f, 0 | 2 | 3 | 4) || (f == 1 && m == 0))
}

/// c-blosc2 opens the file by itself: (super-chunk, nchunks, chunksize). The caller frees
/// the super-chunk.
fn open_schunk(path: &Path) -> Res<(*mut sys::blosc2_schunk, usize, usize)> {
    let c = CString::new(path.to_str().ok_or("non-UTF-8 path")?)?;
    // SAFETY: blosc2_init may be called more than once (it is idempotent after the first call).
    unsafe { sys::blosc2_init() };
    // SAFETY: `c` is a NUL-terminated path that outlives the call; NULL is checked. The files
    // are well-formed python-blosc2 output (c-blosc2 2.15 crashes on some corrupt frames).
    let sc = unsafe { sys::blosc2_schunk_open(c.as_ptr()) };
    if sc.is_null() {
        return Err(format!("{}: blosc2_schunk_open failed", path.display()).into());
    }
    // SAFETY: `sc` is a valid super-chunk just opened.
    let (nchunks, chunksize) = unsafe { ((*sc).nchunks, (*sc).chunksize) };
    match (usize::try_from(nchunks), usize::try_from(chunksize)) {
        (Ok(n), Ok(c)) => Ok((sc, n, c)),
        _ => {
            // SAFETY: freed once, not used afterwards.
            unsafe { sys::blosc2_schunk_free(sc) };
            Err(format!("{}: {nchunks} chunks of {chunksize} bytes", path.display()).into())
        }
    }
}

/// The decode bound: see the module docs. `huge`: the output buffer is a `MADV_HUGEPAGE`
/// mapping instead of a `Vec`. Returns (seconds, decoded bytes).
fn decode_bound(path: &Path, threads: usize, clear_filters: bool, huge: bool) -> Res<(f64, u64)> {
    let t0 = Instant::now();
    let (sc, nchunks, chunksize) = open_schunk(path)?;
    let total = nchunks * chunksize;
    let (mut plain, mut mapped);
    let out: &mut [u8] = if huge {
        mapped = match HugeBuf::new(total) {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the schunk opened above is freed once, and not used afterwards.
                unsafe { sys::blosc2_schunk_free(sc) };
                return Err(e);
            }
        };
        &mut mapped.as_mut_slice()[..total]
    } else {
        plain = vec![0u8; total];
        &mut plain
    };
    let result: Res<()> = {
        let queue = Mutex::new((SchunkPtr(sc), out.chunks_mut(chunksize.max(1)).enumerate()));
        let worker = || -> Result<(), String> {
            let dparams = sys::blosc2_dparams {
                nthreads: 1,
                ..Default::default()
            };
            // SAFETY: dparams is fully initialised; NULL is checked.
            let ctx = unsafe { sys::blosc2_create_dctx(dparams) };
            if ctx.is_null() {
                return Err("blosc2_create_dctx failed".into());
            }
            let mut copy: Vec<u8> = Vec::new();
            let mut res = Ok(());
            loop {
                let mut chunk: *mut u8 = std::ptr::null_mut();
                let mut needs_free = false;
                let (i, slot, rc) = {
                    let mut q = queue.lock().unwrap();
                    let Some((i, slot)) = q.1.next() else { break };
                    // SAFETY: the schunk is valid until freed after the scope; the mutex
                    // serialises calls on it. C returns a chunk pointer of `rc` bytes, owned by
                    // us (malloc) when `needs_free`, else pointing into the schunk's own data.
                    let rc = unsafe {
                        sys::blosc2_schunk_get_chunk(q.0 .0, i as i64, &mut chunk, &mut needs_free)
                    };
                    (i, slot, rc)
                };
                if rc < 0 || chunk.is_null() {
                    res = Err(format!("chunk {i}: blosc2_schunk_get_chunk returned {rc}"));
                    break;
                }
                let len = rc as usize;
                let src: *const u8 = if clear_filters {
                    copy.clear();
                    // SAFETY: C returned `len` valid bytes at `chunk` (see above).
                    copy.extend_from_slice(unsafe { std::slice::from_raw_parts(chunk, len) });
                    if copy.len() >= 32 && copy[2] & 0x05 == 0x05 {
                        copy[16..22].fill(0);
                        copy[24..30].fill(0);
                    }
                    copy.as_ptr()
                } else {
                    chunk
                };
                // SAFETY: ctx valid and used by this thread only; src holds `len` bytes; slot is
                // this thread's exclusive &mut [u8] and C writes at most slot.len() bytes.
                let n = unsafe {
                    sys::blosc2_decompress_ctx(
                        ctx,
                        src as *const libc::c_void,
                        len as i32,
                        slot.as_mut_ptr() as *mut libc::c_void,
                        slot.len() as i32,
                    )
                };
                if needs_free {
                    // SAFETY: C allocated the chunk with malloc and handed it to us; freed once.
                    unsafe { libc::free(chunk as *mut libc::c_void) };
                }
                if n != slot.len() as i32 {
                    res = Err(format!(
                        "chunk {i}: decompressed {n} of {} bytes",
                        slot.len()
                    ));
                    break;
                }
            }
            // SAFETY: the context was created above and is freed once.
            unsafe { sys::blosc2_free_ctx(ctx) };
            res
        };
        std::thread::scope(|s| {
            let hs: Vec<_> = (0..threads.max(1)).map(|_| s.spawn(worker)).collect();
            hs.into_iter().try_for_each(|h| h.join().unwrap())
        })
        .map_err(Into::into)
    };
    // SAFETY: every worker has finished (scope joined); the schunk is freed exactly once.
    unsafe { sys::blosc2_schunk_free(sc) };
    let secs = t0.elapsed().as_secs_f64();
    result?;
    Ok((secs, total as u64)) // the buffer is freed after the clock stopped
}

/// The tighter bound (`bound_block`, see the module docs): every chunk, filter bytes cleared,
/// already in memory; an output of nchunks * chunksize bytes already written once; T threads
/// with a context each (made before the clock starts) take chunks in turn and decode the codec
/// only into the chunk's slot. What is timed is c-blosc2's codec work alone: no file reads, no
/// first touch, no scatter into C order, no filters. Returns (seconds, decoded bytes).
fn block_bound(path: &Path, threads: usize) -> Res<(f64, u64)> {
    let (sc, nchunks, chunksize) = open_schunk(path)?;
    let mut chunks = Vec::with_capacity(nchunks);
    let mut failed = None;
    for i in 0..nchunks {
        let mut chunk: *mut u8 = std::ptr::null_mut();
        let mut needs_free = false;
        // SAFETY: valid schunk, used by this thread only; C returns `rc` bytes at `chunk`,
        // malloc'ed for us when `needs_free`.
        let rc = unsafe { sys::blosc2_schunk_get_chunk(sc, i as i64, &mut chunk, &mut needs_free) };
        if rc < 0 || chunk.is_null() {
            failed = Some(format!("chunk {i}: blosc2_schunk_get_chunk returned {rc}"));
            break;
        }
        // SAFETY: C returned `rc` valid bytes at `chunk` (see above).
        let mut copy = unsafe { std::slice::from_raw_parts(chunk, rc as usize) }.to_vec();
        if needs_free {
            // SAFETY: C allocated the chunk with malloc and handed it to us; freed once.
            unsafe { libc::free(chunk as *mut libc::c_void) };
        }
        if copy.len() >= 32 && copy[2] & 0x05 == 0x05 {
            copy[16..22].fill(0);
            copy[24..30].fill(0);
        }
        chunks.push(copy);
    }
    // SAFETY: the schunk is freed exactly once and not used afterwards.
    unsafe { sys::blosc2_schunk_free(sc) };
    if let Some(e) = failed {
        return Err(e.into());
    }
    let total = nchunks * chunksize;
    let mut out = vec![1u8; total];
    let threads = threads.max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<Mutex<&mut [u8]>> = out.chunks_mut(chunksize.max(1)).map(Mutex::new).collect();
    let start = std::sync::Barrier::new(threads + 1);
    let secs = std::thread::scope(|s| -> Res<f64> {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| -> Result<(), String> {
                    let dparams = sys::blosc2_dparams {
                        nthreads: 1,
                        ..Default::default()
                    };
                    // SAFETY: dparams is fully initialised; NULL is checked after the barrier.
                    let ctx = unsafe { sys::blosc2_create_dctx(dparams) };
                    start.wait();
                    if ctx.is_null() {
                        return Err("blosc2_create_dctx failed".into());
                    }
                    let mut res = Ok(());
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(src) = chunks.get(i) else { break };
                        let mut slot = slots[i].lock().unwrap();
                        // SAFETY: ctx is this thread's; src holds src.len() bytes; the slot is
                        // locked by this thread and C writes at most slot.len() bytes into it.
                        let n = unsafe {
                            sys::blosc2_decompress_ctx(
                                ctx,
                                src.as_ptr() as *const libc::c_void,
                                src.len() as i32,
                                slot.as_mut_ptr() as *mut libc::c_void,
                                slot.len() as i32,
                            )
                        };
                        if n != slot.len() as i32 {
                            res = Err(format!("chunk {i}: decompressed {n} of {}", slot.len()));
                            break;
                        }
                    }
                    // SAFETY: created above by this thread, freed once.
                    unsafe { sys::blosc2_free_ctx(ctx) };
                    res
                })
            })
            .collect();
        // The clock starts before the release: with T workers on T cores this thread may not
        // run again until they are done (an earlier version timed from after the barrier and
        // measured microseconds).
        let t0 = Instant::now();
        start.wait();
        for h in hs {
            h.join().unwrap()?;
        }
        Ok(t0.elapsed().as_secs_f64())
    })?;
    Ok((secs, total as u64))
}

/// The writer's version of the file's filter pipeline, and what had to change.
fn writer_filters(a: &Array) -> (Option<Vec<Filter>>, String) {
    let (ids, metas) = a.filter_slots();
    let default_meta = match a.dtype() {
        b2nd::Dtype::Unicode { .. } => 4,
        _ => 0,
    };
    if ids == [0, 0, 0, 0, 0, 1] && metas == [0, 0, 0, 0, 0, default_meta] {
        return (None, "same (python default)".into());
    }
    let mut fs = Vec::new();
    let mut notes = Vec::new();
    for (&id, &m) in ids.iter().zip(&metas) {
        match id {
            0 => {}
            1 if m == 0 => fs.push(Filter::Shuffle),
            1 => fs.push(Filter::ShuffleBytes(m)),
            2 => fs.push(Filter::Bitshuffle),
            3 => fs.push(Filter::Delta),
            4 => fs.push(Filter::TruncPrec(m)),
            BYTEDELTA => fs.push(Filter::Bytedelta),
            other => notes.push(format!("filter {other} dropped")),
        }
    }
    let note = if notes.is_empty() {
        "same".into()
    } else {
        notes.join("; ")
    };
    (Some(fs), note)
}

fn rm(p: &Path) {
    if p.is_dir() {
        let _ = std::fs::remove_dir_all(p);
    } else {
        let _ = std::fs::remove_file(p);
    }
}

/// Wall time of one `b2nd to-npy` run. A regular file left at `cwd/out` is removed afterwards
/// (never a device or FIFO).
fn run_to_npy(o: &Opts, path: &Path, out: &str, cwd: &Path) -> Res<f64> {
    let t0 = Instant::now();
    let st = Command::new(&o.bin)
        .arg("to-npy")
        .arg(path)
        .arg(out)
        .arg("--threads")
        .arg(o.threads.to_string())
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()?;
    let secs = t0.elapsed().as_secs_f64();
    let written = cwd.join(out);
    if out != "-" && std::fs::symlink_metadata(&written).is_ok_and(|m| m.is_file()) {
        rm(&written);
    }
    if !st.status.success() {
        return Err(format!(
            "to-npy {} {out}: {}",
            path.display(),
            String::from_utf8_lossy(&st.stderr).trim()
        )
        .into());
    }
    Ok(secs)
}

/// What the `b2nd` binary can safely be pointed at, found on a tiny throwaway array.
#[derive(Default, Clone, Copy)]
struct NpyCaps {
    /// `to-npy FILE /dev/null` writes into the device (a binary that renames a temporary
    /// file over its output would replace /dev/null when run as root).
    devices: bool,
    /// `to-npy FILE -` streams to stdout.
    stdout: bool,
}

/// Probe the binary in a scratch directory: a FIFO stands in for /dev/null (it must still be
/// a FIFO afterwards), and `-` must not leave a file named `-` behind.
fn probe_npy(o: &Opts) -> Res<NpyCaps> {
    use std::os::unix::fs::FileTypeExt;
    let dir = o.dir.join("_bench_npy_probe");
    rm(&dir);
    std::fs::create_dir_all(&dir)?;
    let tiny = dir.join("tiny.b2nd");
    ArrayBuilder::for_type::<i32>(&[16]).write(Target::File(tiny.clone()), &[7i32; 16])?;
    let fifo = dir.join("fifo");
    let c = CString::new(fifo.to_str().ok_or("non-UTF-8 path")?)?;
    // SAFETY: `c` is a NUL-terminated path; the return code is checked.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        rm(&dir);
        return Err("mkfifo failed".into());
    }
    // A non-blocking reader keeps the FIFO open so the child's open for writing succeeds;
    // the .npy of 16 items fits in the pipe buffer, so the child never blocks.
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)?;
    let devices = run_to_npy(o, &tiny, "fifo", &dir).is_ok()
        && std::fs::symlink_metadata(&fifo).is_ok_and(|m| m.file_type().is_fifo());
    drop(reader);
    let stdout = run_to_npy(o, &tiny, "-", &dir).is_ok() && !dir.join("-").exists();
    rm(&dir);
    Ok(NpyCaps { devices, stdout })
}

fn bench_file(o: &Opts, name: &str, caps: NpyCaps) -> Res<Map<String, Value>> {
    let path = o.dir.join(name);
    let t = o.threads;
    let a = Array::open(&path)?.with_threads(b2nd::Threads::count(t)?);
    let n = a.nbytes();
    let nu = usize::try_from(n)?;
    let mut r = Map::new();
    r.insert("nbytes".into(), json!(n));
    r.insert("shape".into(), json!(a.shape()));
    r.insert("chunks".into(), json!(a.chunks()));
    r.insert("blocks".into(), json!(a.blocks()));
    r.insert("dtype".into(), json!(a.dtype_str()));
    r.insert("codec".into(), json!(a.codec_name()));
    r.insert("filters".into(), json!(a.filter_slots()));
    r.insert("storage".into(), json!(a.storage().name()));
    r.insert("nchunks".into(), json!(a.nchunks()));

    // Warm-up (page cache, thread pool), and a huge-page census with the fresh buffer alive.
    {
        let mut buf = vec![0u8; nu];
        a.read_bytes_into(&mut buf)?;
        r.insert("huge_kib_after_read".into(), json!(anon_huge_kib()));
    }

    let open_s = best(o.reps, || {
        let t0 = Instant::now();
        let b = Array::open(&path)?;
        let s = t0.elapsed().as_secs_f64();
        drop(b);
        Ok(s)
    })?;
    r.insert("open_s".into(), json!(open_s));

    let read_s = best(o.reps, || {
        let t0 = Instant::now();
        let b = Array::open(&path)?.with_threads(b2nd::Threads::count(t)?);
        let mut buf = vec![0u8; nu];
        b.read_bytes_into(&mut buf)?;
        let s = t0.elapsed().as_secs_f64();
        drop(buf);
        Ok(s)
    })?;
    r.insert("read_s".into(), json!(read_s));
    r.insert("read_mibs".into(), json!(mibs(n, read_s)));
    if o.read_only {
        return Ok(r);
    }

    let mut reused = vec![0u8; nu];
    a.read_bytes_into(&mut reused)?;
    let reused_s = best(o.reps, || {
        let t0 = Instant::now();
        a.read_bytes_into(&mut reused)?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    r.insert("read_reused_s".into(), json!(reused_s));
    r.insert("read_reused_mibs".into(), json!(mibs(n, reused_s)));

    let mut huge_kib = None;
    let thp_s = best(o.reps, || {
        let t0 = Instant::now();
        let b = Array::open(&path)?.with_threads(b2nd::Threads::count(t)?);
        let mut buf = HugeBuf::new(nu)?;
        b.read_bytes_into(&mut buf.as_mut_slice()[..nu])?;
        let s = t0.elapsed().as_secs_f64();
        huge_kib = anon_huge_kib();
        drop(buf);
        Ok(s)
    })?;
    r.insert("read_thp_s".into(), json!(thp_s));
    r.insert("read_thp_mibs".into(), json!(mibs(n, thp_s)));
    r.insert("huge_kib_after_read_thp".into(), json!(huge_kib));

    let touch_s = best(o.reps, || {
        let t0 = Instant::now();
        let mut buf = vec![0u8; nu];
        buf.fill(1);
        std::hint::black_box(&mut buf);
        let s = t0.elapsed().as_secs_f64();
        drop(buf);
        Ok(s)
    })?;
    r.insert("touch_mibs".into(), json!(mibs(n, touch_s)));

    // Decode bound.
    let (ids, metas) = a.filter_slots();
    let codec_only = !c_undoes(&ids, &metas);
    let mut decoded = 0;
    let bound_s = best(o.reps, || {
        let (s, d) = decode_bound(&path, t, codec_only, false)?;
        decoded = d;
        Ok(s)
    })?;
    let bound_thp_s = best(o.reps, || Ok(decode_bound(&path, t, codec_only, true)?.0))?;
    r.insert("bound_thp_s".into(), json!(bound_thp_s));
    r.insert("bound_thp_mibs".into(), json!(mibs(n, bound_thp_s)));
    r.insert(
        "bound_kind".into(),
        json!(if codec_only { "codec-only" } else { "full" }),
    );
    r.insert("bound_s".into(), json!(bound_s));
    r.insert("bound_mibs".into(), json!(mibs(n, bound_s)));
    // The codec alone (filter bytes cleared), for every file: the bound is this plus
    // the fastest unshuffle (BENCHMARKS.md adds it from the kernels' measured throughput).
    let codec_s = if codec_only {
        bound_s
    } else {
        best(o.reps, || Ok(decode_bound(&path, t, true, false)?.0))?
    };
    r.insert("bound_codec_s".into(), json!(codec_s));
    r.insert("bound_codec_mibs".into(), json!(mibs(n, codec_s)));
    r.insert("bound_decoded_bytes".into(), json!(decoded));
    let block_s = best(o.reps, || Ok(block_bound(&path, t)?.0))?;
    r.insert("bound_block_s".into(), json!(block_s));
    r.insert("bound_block_mibs".into(), json!(mibs(n, block_s)));

    // Small slice: 10 items in the middle of the last dimension.
    let nd = a.ndim();
    let mut start: Vec<u64> = a.shape().iter().map(|&s| s / 2).collect();
    let mut shape = vec![1u64; nd];
    let last = a.shape()[nd - 1];
    start[nd - 1] = (last / 2).saturating_sub(5);
    shape[nd - 1] = 10.min(last - start[nd - 1]);
    let mut small = vec![0u8; shape.iter().product::<u64>() as usize * a.itemsize()];
    // As python's `arr[i, j, k:k+10]`: integers for the leading dimensions, a range last
    // (only the blocks the selection touches are decoded).
    let items: Vec<b2nd::SliceItem> = (0..nd)
        .map(|i| {
            if i + 1 < nd {
                b2nd::SliceItem::Index(start[i] as i64)
            } else {
                b2nd::SliceItem::Range {
                    start: Some(start[i] as i64),
                    stop: Some((start[i] + shape[i]) as i64),
                    step: 1,
                }
            }
        })
        .collect();
    a.read_slice_bytes_into(&items, &mut small)?;
    let slice_s = best(o.slice_reps, || {
        let t0 = Instant::now();
        a.read_slice_bytes_into(&items, &mut small)?;
        Ok(t0.elapsed().as_secs_f64())
    })?;
    r.insert("slice_start".into(), json!(start));
    r.insert("slice_us".into(), json!(slice_s * 1e6));

    // Whole-array write with the file's parameters.
    if o.write {
        let (filters, note) = writer_filters(&a);
        let codec: Codec = a.codec();
        let out = o.dir.join(format!("{name}.rswrite"));
        rm(&out);
        let target = || match a.storage() {
            Storage::Sparse => Target::Sparse(out.clone()),
            _ => Target::File(out.clone()),
        };
        let mut cbytes = 0;
        let write_s = best(o.write_reps, || {
            let mut bld = ArrayBuilder::with_dtype_str(a.shape(), &a.dtype_str())?
                .chunks(a.chunks())
                .blocks(a.blocks())
                .codec(codec)
                .clevel(a.clevel())
                .threads(b2nd::Threads::count(t)?)
                .overwrite(true);
            if let Some(f) = &filters {
                bld = bld.filters(f);
            }
            let t0 = Instant::now();
            bld.write_bytes(target(), &reused)?;
            let s = t0.elapsed().as_secs_f64();
            cbytes = Array::open(&out)?.cbytes();
            rm(&out);
            Ok(s)
        })?;
        r.insert("write_s".into(), json!(write_s));
        r.insert("write_mibs".into(), json!(mibs(n, write_s)));
        r.insert("write_cbytes".into(), json!(cbytes));
        r.insert("write_filters_note".into(), json!(note));
    }
    drop(reused);

    // b2nd to-npy, end to end.
    if o.npy {
        if caps.devices {
            let s = best(o.npy_reps, || run_to_npy(o, &path, "/dev/null", &o.dir))?;
            r.insert("npy_devnull_s".into(), json!(s));
            r.insert("npy_devnull_mibs".into(), json!(mibs(n, s)));
        }
        if caps.stdout {
            let s = best(o.npy_reps, || run_to_npy(o, &path, "-", &o.dir))?;
            r.insert("npy_stdout_s".into(), json!(s));
            r.insert("npy_stdout_mibs".into(), json!(mibs(n, s)));
        }
        let shm = Path::new("/dev/shm");
        if shm.is_dir() {
            let s = best(o.npy_reps, || run_to_npy(o, &path, "_b2nd_bench.npy", shm))?;
            r.insert("npy_shm_s".into(), json!(s));
            r.insert("npy_shm_mibs".into(), json!(mibs(n, s)));
        }
        let disk_out = format!("{name}.bench.npy");
        let s = best(o.npy_reps, || run_to_npy(o, &path, &disk_out, &o.dir))?;
        r.insert("npy_disk_s".into(), json!(s));
        r.insert("npy_disk_mibs".into(), json!(mibs(n, s)));
    }
    Ok(r)
}

fn f(v: &Map<String, Value>, k: &str) -> String {
    match v.get(k).and_then(Value::as_f64) {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "n/a".into(),
    }
}

fn main() -> Res<()> {
    let o = parse_args();
    let names: Vec<String> = match &o.only {
        Some(v) => v.clone(),
        None => NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let mut caps = NpyCaps::default();
    if o.npy && !o.read_only {
        if !o.bin.exists() {
            return Err(format!(
                "{}: no b2nd binary (cargo build --release, or --b2nd PATH, or --no-npy)",
                o.bin.display()
            )
            .into());
        }
        caps = probe_npy(&o)?;
        if !caps.devices {
            eprintln!("note: this b2nd renames a temporary over its output: /dev/null not used");
        }
    }
    let mut files = Map::new();
    for name in &names {
        if !o.dir.join(name).exists() {
            eprintln!("{name}: missing, skipped");
            continue;
        }
        let r = bench_file(&o, name, caps)?;
        eprintln!(
            "{name}: read {} MiB/s (reused {}, THP {}), bound {} MiB/s ({}), slice {} us",
            f(&r, "read_mibs"),
            f(&r, "read_reused_mibs"),
            f(&r, "read_thp_mibs"),
            f(&r, "bound_mibs"),
            r.get("bound_kind").and_then(Value::as_str).unwrap_or("-"),
            f(&r, "slice_us"),
        );
        files.insert(name.clone(), Value::Object(r));
    }

    let cols = [
        ("read", "read_mibs"),
        ("reused", "read_reused_mibs"),
        ("THP", "read_thp_mibs"),
        ("touch", "touch_mibs"),
        ("bound", "bound_mibs"),
        ("bnd_THP", "bound_thp_mibs"),
        ("slice_us", "slice_us"),
        ("write", "write_mibs"),
        ("npy_null", "npy_devnull_mibs"),
        ("npy_shm", "npy_shm_mibs"),
        ("npy_disk", "npy_disk_mibs"),
    ];
    print!("{:<22} {:>6}", "file", "MiB");
    for (h, _) in cols {
        print!(" {h:>9}");
    }
    println!();
    for name in &names {
        let Some(r) = files.get(name).and_then(Value::as_object) else {
            continue;
        };
        print!(
            "{name:<22} {:>6.0}",
            r["nbytes"].as_f64().unwrap_or(0.0) / MIB
        );
        for (_, k) in cols {
            let star = k.starts_with("bound")
                && r.get("bound_kind").and_then(Value::as_str) == Some("codec-only");
            print!(" {:>9}", f(r, k) + if star { "*" } else { "" });
        }
        println!();
    }
    println!("(MiB/s of logical bytes, best of N; * = codec-only bound, filters cleared)");
    let res = json!({
        "tool": "b2nd",
        "threads": o.threads,
        "reps": o.reps,
        "npy_devnull_supported": caps.devices,
        "npy_stdout_supported": caps.stdout,
        "files": files,
    });
    let text = serde_json::to_string_pretty(&res)?;
    if let Some(p) = &o.json {
        std::fs::write(p, text.clone() + "\n")?;
    }
    println!("{text}");
    Ok(())
}
