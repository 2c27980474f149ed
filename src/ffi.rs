//! The only module that talks to c-blosc2 (through `blosc2-src`) and the only one with `unsafe`.
//!
//! It offers RAII handles with safe methods: [`Schunk`] (an opened frame), [`Dctx`] (a
//! decompression context). Everything above works with plain Rust types. The bindings of
//! `blosc2-src` 0.1.4 do not match the C sources for `blosc2_io_cb` and the `blosc2_stdio_*`
//! functions, so those are never used here.

use std::ffi::{CStr, CString};
use std::os::raw::c_void;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Once;

use blosc2_src as sys;

/// Decode one LZ4 block `src` into `dst` with the external dictionary `dict` (LZ4's
/// `LZ4_decompress_safe_usingDict`): the number of bytes written, or `None` when the input is
/// malformed or a size does not fit LZ4's `int`.
pub(crate) fn lz4_decompress_with_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Option<usize> {
    let n = |len: usize| std::os::raw::c_int::try_from(len).ok();
    let (src_len, dst_len, dict_len) = (n(src.len())?, n(dst.len())?, n(dict.len())?);
    // SAFETY: each pointer comes from a live slice and is passed with that slice's length;
    // LZ4's `_safe_` decoders never read past `src + compressed_size` or `dict + dict_size`,
    // nor write past `dst + dst_capacity`, whatever the input bytes (lz4.h), and keep no
    // pointer after returning.
    let r = unsafe {
        LZ4_decompress_safe_usingDict(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            src_len,
            dst_len,
            dict.as_ptr().cast(),
            dict_len,
        )
    };
    usize::try_from(r).ok()
}

/// c-blosc2's automatic split mode (python-blosc2's default).
pub(crate) const SPLIT_AUTO: i32 = sys::BLOSC_AUTO_SPLIT;
/// Split every block into one stream per item byte.
pub(crate) const SPLIT_ALWAYS: i32 = sys::BLOSC_ALWAYS_SPLIT;
/// Never split blocks.
pub(crate) const SPLIT_NEVER: i32 = sys::BLOSC_NEVER_SPLIT;

/// Length of an extended Blosc2 chunk header.
pub(crate) const EXTENDED_HEADER_LEN: usize = 32;

static INIT: Once = Once::new();

/// c-blosc2's default filesystem I/O description (`BLOSC2_IO_DEFAULTS` is a `static const` in
/// the header, so the library exports no symbol for it).
struct Io(sys::blosc2_io);
// SAFETY: the description is immutable and its pointers refer to static data.
unsafe impl Sync for Io {}
static FILESYSTEM_IO: Io = Io(sys::blosc2_io {
    id: sys::BLOSC2_IO_FILESYSTEM as u8,
    name: c"filesystem".as_ptr(),
    params: std::ptr::null_mut(),
});

// Internal (non-static) c-blosc2 functions, declared in blosc/frame.h, linked from the same
// static library as the public API.
extern "C" {
    fn frame_from_file_offset(
        urlpath: *const std::os::raw::c_char,
        io: *const sys::blosc2_io,
        offset: i64,
    ) -> *mut c_void;
    fn frame_to_schunk(
        frame: *mut c_void,
        copy: bool,
        udio: *const sys::blosc2_io,
    ) -> *mut sys::blosc2_schunk;
    // LZ4 (lz4.h), compiled into the same static library: the function c-blosc2 3.x's
    // `lz4_wrap_decompress` calls for chunks with a dictionary.
    fn LZ4_decompress_safe_usingDict(
        src: *const std::os::raw::c_char,
        dst: *mut std::os::raw::c_char,
        compressed_size: std::os::raw::c_int,
        dst_capacity: std::os::raw::c_int,
        dict_start: *const std::os::raw::c_char,
        dict_size: std::os::raw::c_int,
    ) -> std::os::raw::c_int;
    // blosc/frame.c (not in a header): the offset the chunk index holds for chunk `nchunk`.
    fn get_coffset(
        frame: *mut c_void,
        header_len: i32,
        cbytes: i64,
        nchunk: i64,
        nchunks: i64,
        offset: *mut i64,
    ) -> std::os::raw::c_int;
}

/// Initialise c-blosc2 once per process. Never destroyed: handles may live until exit.
pub(crate) fn init() {
    INIT.call_once(|| {
        // SAFETY: blosc2_init has no preconditions; `Once` guarantees a single call and that
        // it happens-before every other c-blosc2 call made through this module.
        unsafe { sys::blosc2_init() }
    });
}

/// A c-blosc2 return code as text: `error -5 (not enough space to read)`. The one place the
/// codes (`BLOSC2_ERROR_*` in `blosc2.h`) are decoded.
pub(crate) fn describe_code(code: i64) -> String {
    let what = match code {
        -1 => "generic failure",
        -2 => "bad stream",
        -3 => "invalid data",
        -4 => "memory allocation failure",
        -5 => "not enough space to read",
        -6 => "not enough space to write",
        -7 => "codec not supported",
        -8 => "invalid codec parameter",
        -9 => "codec dictionary error",
        -10 => "version not supported",
        -11 => "invalid value in header",
        -12 => "invalid parameter",
        -13 => "file read failure",
        -14 => "file write failure",
        -15 => "file open failure",
        -16 => "not found",
        -17 => "bad run-length encoding",
        -18 => "filter pipeline error",
        -19 => "chunk insert failure",
        -20 => "chunk append failure",
        -21 => "chunk update failure",
        -22 => "sizes over 2 GB not supported",
        -23 => "super-chunk copy failure",
        -24 => "wrong frame type",
        -25 => "file truncate failure",
        -26 => "thread creation failure",
        -27 => "postfilter failure",
        -28 => "special frame failure",
        -29 => "special super-chunk failure",
        -30 => "I/O plugin error",
        -31 => "file remove failure",
        -32 => "null pointer",
        -33 => "invalid index",
        -34 => "metalayer not found",
        -35 => "maximum buffer size exceeded",
        -36 => "tuner failure",
        -37 => "frame lock failure",
        _ => return format!("error {code}"),
    };
    format!("error {code} ({what})")
}

/// Why a c-blosc2 call failed, decoded once, here: every fallible function of this module
/// returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CError {
    /// c-blosc2 returned this negative code (see [`describe_code`]).
    Code(i64),
    /// A c-blosc2 call returning a pointer returned NULL: what it could not do.
    Null(&'static str),
    /// An argument C cannot take or a result it must not return (a size over `i32`, a path
    /// that is not UTF-8 or holds a NUL, a chunk outside its frame): what was wrong.
    Invalid(&'static str),
}

impl std::fmt::Display for CError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CError::Code(c) => write!(f, "c-blosc2 {}", describe_code(*c)),
            CError::Null(what) => write!(f, "c-blosc2 {what}"),
            CError::Invalid(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for CError {}

/// A c-blosc2 size argument, which must fit `int32_t`.
fn c_size(n: usize) -> Result<i32, CError> {
    i32::try_from(n).map_err(|_| CError::Invalid("a size over 2 GiB for c-blosc2"))
}

/// A name for c-blosc2 (NUL-terminated).
fn c_name(name: &str) -> Result<CString, CError> {
    CString::new(name).map_err(|_| CError::Invalid("a name or path holding a NUL byte"))
}

/// Compression parameters as c-blosc2 reports them for a super-chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchunkParams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nchunks: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub contiguous: bool,
}

/// An opened c-blosc2 super-chunk (a CFrame or SFrame). Not thread-safe: keep it behind a lock.
pub(crate) struct Schunk {
    ptr: NonNull<sys::blosc2_schunk>,
    /// Backing bytes of an in-memory frame (padded allocation, frame length); C only borrows
    /// them (`avoid_cframe_free`).
    buffer: Option<(Vec<u8>, usize)>,
}

// SAFETY: a `blosc2_schunk` has no thread affinity; it is only unsafe to use from two threads
// at once, and `Schunk` exposes no `&self` method that mutates C state concurrently: every
// method that touches mutable C state takes `&mut self`, so Rust's borrow rules (and the
// caller's Mutex) serialise them.
unsafe impl Send for Schunk {}

impl Schunk {
    /// Open a CFrame file or SFrame directory at `path`, with the frame starting at `offset`.
    ///
    /// This does what `blosc2_schunk_open_offset` does, minus its crash: in c-blosc2 2.15 that
    /// function dereferences the result of `frame_to_schunk` without checking it for NULL, so
    /// any frame whose header, metalayers or vlmeta fail to parse crashes the process. Here the
    /// same two internal steps are called and NULL is handled, then the storage is completed
    /// exactly as C does (urlpath copied with malloc, `contiguous` set).
    pub(crate) fn open(path: &Path, offset: u64) -> Result<Schunk, CError> {
        init();
        let s = path
            .to_str()
            .ok_or(CError::Invalid("path is not valid UTF-8"))?;
        let c = c_name(s)?;
        let offset = i64::try_from(offset).map_err(|_| CError::Invalid("offset too large"))?;
        let sparse = path.is_dir();
        let io: *const sys::blosc2_io = &FILESYSTEM_IO.0;
        // SAFETY: `c` is NUL-terminated and outlives the call (C copies it); `io` points to a
        // static, immutable filesystem io description. NULL is handled.
        let frame = unsafe { frame_from_file_offset(c.as_ptr(), io, offset) };
        if frame.is_null() {
            return Err(CError::Null(
                "could not read a frame header and trailer there",
            ));
        }
        // SAFETY: `frame` is a valid frame just returned by C and owned by us until handed to
        // the schunk; on failure C frees it together with the partial schunk.
        let ptr = unsafe { frame_to_schunk(frame, false, io) };
        let ptr = NonNull::new(ptr).ok_or(CError::Null(
            "could not parse the frame (header, metalayers or attributes)",
        ))?;
        let schunk = Schunk { ptr, buffer: None };
        // SAFETY: the schunk is valid; `frame_to_schunk` always sets `storage` on success.
        // The urlpath copy is malloc'ed because C frees it with `free` in blosc2_schunk_free.
        unsafe {
            let storage = (*ptr.as_ptr()).storage;
            if storage.is_null() {
                return Err(CError::Null("returned a super-chunk without storage"));
            }
            let bytes = c.as_bytes_with_nul();
            let url = libc::malloc(bytes.len()) as *mut u8;
            if url.is_null() {
                return Err(CError::Code(-4));
            }
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), url, bytes.len());
            (*storage).urlpath = url as *mut std::os::raw::c_char;
            (*storage).contiguous = !sparse;
        }
        Ok(schunk)
    }

    /// Open an in-memory CFrame. The bytes are kept alive by the returned handle.
    ///
    /// c-blosc2 trusts offsets read from the frame: for an in-memory frame it computes a chunk
    /// address as `frame + header_len + offset` with only `offset <= len` checked, then reads
    /// a chunk header there. The frame is therefore copied into an allocation padded to
    /// `2 * len + 64` zero bytes, so every address C can form (header_len <= len is checked
    /// by the caller) stays inside memory we own; [`Schunk::chunk_into`] then checks that the
    /// returned chunk lies within the real frame bytes before reading it.
    pub(crate) fn from_buffer(bytes: Vec<u8>) -> Result<Schunk, CError> {
        init();
        let frame_len = bytes.len();
        let len = i64::try_from(frame_len).map_err(|_| CError::Invalid("buffer too large"))?;
        let padded_len = frame_len
            .checked_mul(2)
            .and_then(|n| n.checked_add(64))
            .ok_or(CError::Invalid("buffer too large"))?;
        let mut padded = vec![0u8; padded_len];
        padded[..frame_len].copy_from_slice(&bytes);
        drop(bytes);
        // SAFETY: the pointer/len describe the first `len` bytes of `padded`, whose heap
        // allocation is moved (not reallocated) into the returned handle and so outlives the
        // schunk. `copy = false` makes C borrow it; `avoid_cframe_free` below stops C from
        // freeing it. C only reads an opened frame (this crate never writes to it).
        let ptr = unsafe { sys::blosc2_schunk_from_buffer(padded.as_mut_ptr(), len, false) };
        let ptr = NonNull::new(ptr).ok_or(CError::Null("could not parse the frame"))?;
        // SAFETY: `ptr` is a valid schunk just returned by c-blosc2.
        unsafe { sys::blosc2_schunk_avoid_cframe_free(ptr.as_ptr(), true) };
        Ok(Schunk {
            ptr,
            buffer: Some((padded, frame_len)),
        })
    }

    fn raw(&self) -> &sys::blosc2_schunk {
        // SAFETY: `ptr` is a valid, live schunk for the lifetime of `self` (freed only in Drop).
        unsafe { self.ptr.as_ref() }
    }

    /// The super-chunk's parameters.
    pub(crate) fn params(&self) -> SchunkParams {
        let s = self.raw();
        let contiguous = if s.storage.is_null() {
            true
        } else {
            // SAFETY: a non-null `storage` points to the schunk's own storage struct.
            unsafe { (*s.storage).contiguous }
        };
        SchunkParams {
            compcode: s.compcode,
            compcode_meta: s.compcode_meta,
            clevel: s.clevel,
            splitmode: s.splitmode,
            typesize: s.typesize,
            blocksize: s.blocksize,
            chunksize: s.chunksize,
            filters: s.filters,
            filters_meta: s.filters_meta,
            nchunks: s.nchunks,
            nbytes: s.nbytes,
            cbytes: s.cbytes,
            contiguous,
        }
    }

    /// Names and contents of the fixed-size metalayers, in storage order.
    pub(crate) fn metalayers(&self) -> Vec<(String, Vec<u8>)> {
        let s = self.raw();
        let n = usize::from(s.nmetalayers).min(s.metalayers.len());
        let mut out = Vec::with_capacity(n);
        for &m in &s.metalayers[..n] {
            if m.is_null() {
                continue;
            }
            // SAFETY: non-null entries below `nmetalayers` point to metalayers owned by the
            // schunk; `name` is NUL-terminated and `content` holds `content_len` bytes.
            let (name, content) = unsafe {
                let m = &*m;
                let name = if m.name.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(m.name).to_string_lossy().into_owned()
                };
                let len = usize::try_from(m.content_len).unwrap_or(0);
                let content = if m.content.is_null() || len == 0 {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(m.content, len).to_vec()
                };
                (name, content)
            };
            out.push((name, content));
        }
        out
    }

    /// Names of the variable-length metalayers (user attributes).
    pub(crate) fn vlmeta_names(&self) -> Vec<String> {
        let s = self.raw();
        let n = usize::try_from(s.nvlmetalayers)
            .unwrap_or(0)
            .min(s.vlmetalayers.len());
        let mut out = Vec::with_capacity(n);
        for &m in &s.vlmetalayers[..n] {
            if m.is_null() {
                continue;
            }
            // SAFETY: non-null entries below `nvlmetalayers` point to vlmetalayers owned by the
            // schunk, with NUL-terminated names.
            let name = unsafe {
                let m = &*m;
                if m.name.is_null() {
                    continue;
                }
                CStr::from_ptr(m.name).to_string_lossy().into_owned()
            };
            out.push(name);
        }
        out
    }

    /// The stored (compressed, a Blosc2 chunk) content of vlmeta entry `name`, if present.
    ///
    /// `blosc2_vlmeta_get` is not used: it decompresses without validating the chunk header,
    /// and c-blosc2 2.15 corrupts its heap on some corrupted headers. The caller validates and
    /// decompresses these bytes like any chunk.
    pub(crate) fn vlmeta_raw(&self, name: &str) -> Option<Vec<u8>> {
        let s = self.raw();
        let n = usize::try_from(s.nvlmetalayers)
            .unwrap_or(0)
            .min(s.vlmetalayers.len());
        for &m in &s.vlmetalayers[..n] {
            if m.is_null() {
                continue;
            }
            // SAFETY: non-null entries below `nvlmetalayers` point to vlmetalayers owned by
            // the schunk, with NUL-terminated names and `content_len` bytes of content.
            unsafe {
                let m = &*m;
                if m.name.is_null() || CStr::from_ptr(m.name).to_bytes() != name.as_bytes() {
                    continue;
                }
                let len = usize::try_from(m.content_len).unwrap_or(0);
                if m.content.is_null() || len == 0 {
                    return Some(Vec::new());
                }
                return Some(std::slice::from_raw_parts(m.content, len).to_vec());
            }
        }
        None
    }

    /// Fetch the compressed chunk `n` into `out` (replacing its contents): a buffer c-blosc2
    /// allocated is taken over as is (no copy); bytes inside an in-memory frame are copied.
    pub(crate) fn chunk_into(&mut self, n: i64, out: &mut ChunkBytes) -> Result<(), CError> {
        out.release();
        let mut chunk: *mut u8 = std::ptr::null_mut();
        let mut needs_free = false;
        // SAFETY: schunk is valid and exclusively borrowed (C mutates internal caches). On
        // success C returns the chunk length and a pointer to that many bytes, owned by us
        // when `needs_free`.
        let rc = unsafe {
            sys::blosc2_schunk_get_chunk(self.ptr.as_ptr(), n, &mut chunk, &mut needs_free)
        };
        if rc < 0 || chunk.is_null() {
            if needs_free && !chunk.is_null() {
                // SAFETY: C allocated it with malloc and handed ownership to us.
                unsafe { libc::free(chunk as *mut c_void) };
            }
            return Err(CError::Code(i64::from(rc.min(-1))));
        }
        let len = usize::try_from(rc).unwrap_or(0);
        if !needs_free {
            // C returned a pointer into the in-memory frame, with a length read from the
            // (untrusted) chunk header: it must lie within the frame's real bytes.
            let inside = match &self.buffer {
                Some((buf, frame_len)) => {
                    let base = buf.as_ptr() as usize;
                    let start = chunk as usize;
                    start >= base
                        && start
                            .checked_add(len)
                            .is_some_and(|end| end <= base + frame_len)
                }
                None => false,
            };
            if !inside {
                return Err(CError::Invalid("a chunk reaching outside the frame"));
            }
        }
        if needs_free {
            // C allocated and filled `len` bytes at `chunk` (it returns the read length only
            // after a complete read) and handed ownership over: keep it, freed by `out`.
            out.c = NonNull::new(chunk).map(|p| (p, len));
            return Ok(());
        }
        out.copy.clear();
        // SAFETY: the range was just checked to lie inside the frame buffer this handle
        // owns, which nothing mutates while `self` is borrowed.
        out.copy
            .extend_from_slice(unsafe { std::slice::from_raw_parts(chunk, len) });
        Ok(())
    }
}

impl Schunk {
    /// The entry of the frame's chunk index for chunk `n`, as c-blosc2 reads it before
    /// fetching a chunk: the chunk's offset after the frame header (contiguous frames), its
    /// file number (sparse frames), or a negative special-chunk code. `header_len` and
    /// `cbytes` are the frame header's fields (checked against the file by the caller).
    pub(crate) fn chunk_offset(
        &mut self,
        n: i64,
        header_len: i32,
        cbytes: i64,
    ) -> Result<i64, CError> {
        let raw = self.raw();
        let (frame, nchunks) = (raw.frame as *mut c_void, raw.nchunks);
        if frame.is_null() || n < 0 || n >= nchunks {
            return Err(CError::Invalid("a chunk number outside the frame"));
        }
        let mut offset = 0i64;
        // SAFETY: schunk and its frame are valid and exclusively borrowed (C caches the
        // decoded index in the frame); this is the call `blosc2_schunk_get_chunk` makes for
        // every chunk, with the same header fields, and `offset` is a valid out pointer.
        let rc = unsafe { get_coffset(frame, header_len, cbytes, n, nchunks, &mut offset) };
        if rc < 0 {
            return Err(CError::Code(i64::from(rc)));
        }
        Ok(offset)
    }
}

/// Compressed chunk bytes: a buffer c-blosc2 allocated and handed over, or a copy.
#[derive(Default)]
pub(crate) struct ChunkBytes {
    c: Option<(NonNull<u8>, usize)>,
    copy: Vec<u8>,
}

// SAFETY: the C buffer is exclusively owned by this value (malloc'ed by C and handed over);
// nothing else refers to it, so it may move between threads.
unsafe impl Send for ChunkBytes {}

impl ChunkBytes {
    /// Replace the contents by `len` bytes for the caller to fill: their initial values are
    /// unspecified (zeros or earlier contents); no memory is cleared when the buffer is
    /// already big enough.
    pub(crate) fn buffer(&mut self, len: usize) -> &mut [u8] {
        self.release();
        if self.copy.capacity() < len {
            // A fresh zeroed allocation: its pages are only touched where they get written.
            self.copy = vec![0; len];
        } else {
            self.copy.resize(len, 0);
        }
        &mut self.copy
    }

    /// Free the C buffer, if any.
    fn release(&mut self) {
        if let Some((p, _)) = self.c.take() {
            // SAFETY: `p` was malloc'ed by C and handed to us; it is freed exactly once here.
            unsafe { libc::free(p.as_ptr() as *mut c_void) };
        }
    }
}

impl std::ops::Deref for ChunkBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self.c {
            // SAFETY: `p` points to `len` initialised bytes owned by this value until release.
            Some((p, len)) => unsafe { std::slice::from_raw_parts(p.as_ptr(), len) },
            None => &self.copy,
        }
    }
}

impl std::ops::DerefMut for ChunkBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self.c {
            // SAFETY: `p` points to `len` initialised bytes exclusively owned by this value
            // (malloc'ed by C and handed over), borrowed mutably through `self`.
            Some((p, len)) => unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), len) },
            None => &mut self.copy,
        }
    }
}

impl Drop for ChunkBytes {
    fn drop(&mut self) {
        self.release();
    }
}

impl Drop for Schunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` is a valid schunk owned by this handle and freed exactly once. For
        // in-memory frames C does not free the buffer (avoid_cframe_free), which we drop after.
        unsafe {
            sys::blosc2_schunk_free(self.ptr.as_ptr());
        }
    }
}

/// Work c-blosc2 hands back to Rust for every block it decodes with a [`HookedDctx`].
///
/// Called from c-blosc2's block threads, possibly several at once, hence `Sync`.
pub(crate) trait BlockHook: Sync {
    /// Finish one block: `input` holds the block as the codec produced it (the hook may use it
    /// as working memory), `output` is where the block's final bytes go (same length; the last
    /// block of a chunk may be shorter than the others). `false` fails the decompression.
    fn finish_block(&self, input: &mut [u8], output: &mut [u8]) -> bool;
}

/// The raw context pointer shared by [`Dctx`] and [`HookedDctx`]; `None` when c-blosc2 could
/// not allocate it, and then every call fails with [`NO_CONTEXT`] instead of a panic.
struct RawDctx(Option<NonNull<sys::blosc2_context>>);

/// The code a call on a context c-blosc2 could not allocate returns
/// (`BLOSC2_ERROR_MEMORY_ALLOC`).
const NO_CONTEXT: CError = CError::Null("could not allocate a decompression context");

impl RawDctx {
    fn new(dparams: sys::blosc2_dparams) -> RawDctx {
        init();
        // SAFETY: dparams is a fully initialised value (its postparams, if any, point to a
        // live struct that C copies); a NULL return is checked.
        let ptr = unsafe { sys::blosc2_create_dctx(dparams) };
        RawDctx(NonNull::new(ptr))
    }

    /// The context, or the allocation failure as a c-blosc2 code.
    fn ptr(&self) -> Result<*mut sys::blosc2_context, CError> {
        self.0.map(|p| p.as_ptr()).ok_or(NO_CONTEXT)
    }

    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        let ctx = self.ptr()?;
        let srcsize = c_size(src.len())?;
        let dstsize = c_size(dst.len())?;
        // SAFETY: context valid and exclusively borrowed; src/dst are valid, non-overlapping
        // (distinct Rust borrows) for the given lengths; C writes at most `dstsize` bytes.
        let rc = unsafe {
            sys::blosc2_decompress_ctx(
                ctx,
                src.as_ptr() as *const c_void,
                srcsize,
                dst.as_mut_ptr() as *mut c_void,
                dstsize,
            )
        };
        usize::try_from(rc).map_err(|_| CError::Code(i64::from(rc)))
    }

    fn decompress_masked(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        maskout: &[bool],
    ) -> Result<usize, CError> {
        let ctx = self.ptr()?;
        let nblocks = c_size(maskout.len())?;
        // The size checks `decompress` makes come first: once the mask is set, the C call
        // that consumes it must happen.
        c_size(src.len())?;
        c_size(dst.len())?;
        // c-blosc2 copies the mask (`malloc` + `memcpy`), so a shared slice is enough; it
        // only reads it, even though the binding asks for `*mut`.
        let mask = maskout.as_ptr() as *mut bool;
        // SAFETY: context valid and exclusively borrowed; `mask` points to `nblocks` readable
        // `bool`s (Rust's `bool` is C's `_Bool`: one byte, 0 or 1) which C copies before
        // returning and never writes.
        let rc = unsafe { sys::blosc2_set_maskout(ctx, mask, nblocks) };
        if rc < 0 {
            return Err(CError::Code(i64::from(rc)));
        }
        // blosc2_decompress_ctx consumes the mask whatever the outcome (C frees it and resets
        // it to NULL after the call).
        self.decompress(src, dst)
    }
}

impl Drop for RawDctx {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            // SAFETY: valid context owned by this handle, freed exactly once.
            unsafe { sys::blosc2_free_ctx(p.as_ptr()) }
        }
    }
}

/// A c-blosc2 decompression context (one per thread).
pub(crate) struct Dctx(RawDctx);

// SAFETY: a context has no thread affinity; `decompress` takes `&mut self`, so it is never
// used by two threads at once.
unsafe impl Send for Dctx {}

impl Dctx {
    /// A context decoding each chunk with `nthreads` block-level threads.
    pub(crate) fn new(nthreads: usize) -> Dctx {
        Dctx(RawDctx::new(sys::blosc2_dparams {
            nthreads: c_nthreads(nthreads),
            ..Default::default()
        }))
    }

    /// Decompress the chunk `src` into `dst`; returns the number of bytes written.
    ///
    /// The caller must have validated `src`'s header (lengths, codec) first: c-blosc2 is
    /// memory safe on its output (it never writes more than `dst.len()`) and checks `srcsize`.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        self.0.decompress(src, dst)
    }

    /// Like [`Dctx::decompress`], but blocks whose `maskout` entry is `true` are skipped:
    /// c-blosc2 neither decodes nor writes them, so their bytes in `dst` are left as they were
    /// (c-blosc2 still counts them in the returned length). `maskout` must hold exactly one
    /// entry per Blosc block of `src` (`ceil(nbytes / blocksize)` from its validated header),
    /// else c-blosc2 refuses the chunk. The mask applies to this one call only.
    ///
    /// Skipping block 0 of a chunk with a DELTA filter is the caller's mistake to avoid:
    /// other blocks are decoded against block 0 (and c-blosc2's threads wait for it).
    pub(crate) fn decompress_masked(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        maskout: &[bool],
    ) -> Result<usize, CError> {
        self.0.decompress_masked(src, dst, maskout)
    }
}

fn c_nthreads(nthreads: usize) -> i16 {
    i16::try_from(nthreads.clamp(1, 256)).unwrap_or(1)
}

/// A decompression context whose blocks are finished by a Rust [`BlockHook`] (c-blosc2's
/// postfilter): C decodes each block's codec into its own per-thread buffer and the hook
/// writes the block's final bytes into the output, while the block is still in cache.
///
/// Only for chunks whose header carries no filters C would run (the caller clears them) and
/// that are neither memcpyed nor special: for those C hands the hook the stored bytes.
pub(crate) struct HookedDctx<H: BlockHook> {
    /// Declared before `hook`: the context (which points to the hook) is freed first.
    raw: RawDctx,
    /// The hook, allocated with `Box::into_raw`; C holds this pointer as `user_data`.
    hook: NonNull<H>,
}

// SAFETY: the context has no thread affinity and is only used through `&mut self`; the hook
// is owned (like a `Box<H>`) and `H: Send` lets it move along.
unsafe impl<H: BlockHook + Send> Send for HookedDctx<H> {}

impl<H: BlockHook> HookedDctx<H> {
    /// A context with `nthreads` block-level threads calling `hook` for every block.
    pub(crate) fn new(nthreads: usize, hook: H) -> HookedDctx<H> {
        let hook = NonNull::from(Box::leak(Box::new(hook)));
        let mut params = sys::blosc2_postfilter_params {
            user_data: hook.as_ptr() as *mut c_void,
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            size: 0,
            typesize: 0,
            offset: 0,
            nchunk: 0,
            nblock: 0,
            tid: 0,
            ttmp: std::ptr::null_mut(),
            ttmp_nbytes: 0,
            ctx: std::ptr::null_mut(),
        };
        let raw = RawDctx::new(sys::blosc2_dparams {
            nthreads: c_nthreads(nthreads),
            schunk: std::ptr::null_mut(),
            postfilter: Some(hook_trampoline::<H>),
            // C copies the struct while creating the context.
            postparams: &mut params,
        });
        HookedDctx { raw, hook }
    }

    /// The hook, to update between decompressions.
    pub(crate) fn hook_mut(&mut self) -> &mut H {
        // SAFETY: `hook` is a live allocation owned by `self`; C only reads it during the
        // decompress calls below, which borrow `self` mutably, so this borrow is unique.
        unsafe { self.hook.as_mut() }
    }

    /// [`Dctx::decompress`], each block finished by the hook.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        self.raw.decompress(src, dst)
    }

    /// [`Dctx::decompress_masked`], each decoded block finished by the hook (skipped blocks
    /// are neither decoded nor handed to it).
    pub(crate) fn decompress_masked(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        maskout: &[bool],
    ) -> Result<usize, CError> {
        self.raw.decompress_masked(src, dst, maskout)
    }
}

impl<H: BlockHook> Drop for HookedDctx<H> {
    fn drop(&mut self) {
        // `raw` (the context) is dropped after this body; C never calls the hook outside a
        // decompress call, so freeing the hook first is fine.
        // SAFETY: `hook` came from `Box::leak` in `new` and is freed exactly once, here.
        drop(unsafe { Box::from_raw(self.hook.as_ptr()) });
    }
}

/// The postfilter c-blosc2 calls for each decoded block of a [`HookedDctx`].
///
/// # Safety
/// Called by c-blosc2 only, with the parameters `pipeline_backward` / `blosc_d` build.
unsafe extern "C" fn hook_trampoline<H: BlockHook>(
    p: *mut sys::blosc2_postfilter_params,
) -> std::os::raw::c_int {
    if p.is_null() {
        return -1;
    }
    // SAFETY: C passes a pointer to a parameter struct on its stack, valid for this call.
    let p = unsafe { &*p };
    let Ok(len) = usize::try_from(p.size) else {
        return -1;
    };
    if p.user_data.is_null() || p.input.is_null() || p.output.is_null() {
        return -1;
    }
    // SAFETY: `user_data` is the hook pointer `HookedDctx::new` stored; the hook outlives the
    // context and is only read (shared) while C decompresses.
    let hook = unsafe { &*(p.user_data as *const H) };
    // SAFETY: for chunks without filters (the only ones given to a HookedDctx; memcpyed and
    // special chunks never are) `input` is this thread's private block buffer `tmp`, a
    // writable malloc'ed buffer of at least `blocksize` bytes holding the decoded block, that C
    // does not read again for this block; `output` is `dest + nblock * blocksize`, the
    // block's `size` bytes inside the caller's destination, which C itself would have written
    // and which no other thread touches (blocks are disjoint).
    let (input, output) = unsafe {
        (
            std::slice::from_raw_parts_mut(p.input as *mut u8, len),
            std::slice::from_raw_parts_mut(p.output, len),
        )
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hook.finish_block(input, output)
    })) {
        Ok(true) => 0,
        _ => -1,
    }
}

/// Compression parameters for new chunks and frames (a plain-Rust mirror of the parts of
/// `blosc2_cparams` this crate sets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompressParams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub splitmode: i32,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nthreads: i16,
}

impl CompressParams {
    fn to_c(&self) -> sys::blosc2_cparams {
        sys::blosc2_cparams {
            compcode: self.compcode,
            compcode_meta: self.compcode_meta,
            clevel: self.clevel,
            typesize: self.typesize,
            blocksize: self.blocksize,
            splitmode: self.splitmode,
            filters: self.filters,
            filters_meta: self.filters_meta,
            nthreads: self.nthreads.max(1),
            ..Default::default()
        }
    }
}

/// A c-blosc2 compression context (one per thread).
pub(crate) struct Cctx {
    ptr: NonNull<sys::blosc2_context>,
    params: CompressParams,
}

// SAFETY: a context has no thread affinity; `compress` takes `&mut self`.
unsafe impl Send for Cctx {}

impl Cctx {
    /// A context compressing with `params`.
    pub(crate) fn new(params: &CompressParams) -> Result<Cctx, CError> {
        init();
        // SAFETY: the cparams value is fully initialised (pointers NULL); NULL is checked.
        let ptr = unsafe { sys::blosc2_create_cctx(params.to_c()) };
        NonNull::new(ptr)
            .map(|ptr| Cctx {
                ptr,
                params: params.clone(),
            })
            .ok_or(CError::Null("rejected the compression parameters"))
    }

    /// Compress `src` into a new chunk in `dst` (replacing its contents).
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), CError> {
        let cap = src.len() + sys::BLOSC2_MAX_OVERHEAD as usize;
        let srcsize = c_size(src.len())?;
        let dstsize = c_size(cap)?;
        dst.clear();
        dst.resize(cap, 0);
        // SAFETY: context valid and exclusively borrowed; `src` readable for srcsize bytes,
        // `dst` writable for dstsize bytes, distinct allocations; C writes at most dstsize.
        let rc = unsafe {
            sys::blosc2_compress_ctx(
                self.ptr.as_ptr(),
                src.as_ptr() as *const c_void,
                srcsize,
                dst.as_mut_ptr() as *mut c_void,
                dstsize,
            )
        };
        if rc <= 0 {
            return Err(CError::Code(i64::from(rc.min(-1))));
        }
        dst.truncate(rc as usize);
        Ok(())
    }

    /// A zero-special chunk of `nbytes` decoded bytes (takes no data bytes in a frame).
    pub(crate) fn zeros_chunk(&self, nbytes: usize, dst: &mut Vec<u8>) -> Result<(), CError> {
        let n = c_size(nbytes)?;
        dst.clear();
        dst.resize(EXTENDED_HEADER_LEN, 0);
        // SAFETY: `dst` holds EXTENDED_HEADER_LEN writable bytes, the size C needs.
        let rc = unsafe {
            sys::blosc2_chunk_zeros(
                self.params.to_c(),
                n,
                dst.as_mut_ptr() as *mut c_void,
                EXTENDED_HEADER_LEN as i32,
            )
        };
        if rc < 0 {
            return Err(CError::Code(i64::from(rc)));
        }
        dst.truncate(rc as usize);
        Ok(())
    }
}

impl Drop for Cctx {
    fn drop(&mut self) {
        // SAFETY: valid context owned by this handle, freed exactly once.
        unsafe { sys::blosc2_free_ctx(self.ptr.as_ptr()) }
    }
}

impl Schunk {
    /// Create a new, empty frame: a CFrame file (`contiguous`), an SFrame directory, or (no
    /// path) an in-memory CFrame. An existing path is overwritten by C: callers pass a fresh
    /// temporary path.
    pub(crate) fn create(
        path: Option<&Path>,
        contiguous: bool,
        params: &CompressParams,
    ) -> Result<Schunk, CError> {
        init();
        let url = match path {
            Some(p) => Some(c_name(
                p.to_str()
                    .ok_or(CError::Invalid("path is not valid UTF-8"))?,
            )?),
            None => None,
        };
        let mut cparams = params.to_c();
        let mut dparams = sys::blosc2_dparams::default();
        let mut storage = sys::blosc2_storage {
            contiguous,
            urlpath: url
                .as_ref()
                .map_or(std::ptr::null_mut(), |u| u.as_ptr() as *mut _),
            cparams: &mut cparams,
            dparams: &mut dparams,
            io: std::ptr::null_mut(),
        };
        // SAFETY: `storage` and everything it points to (urlpath, cparams, dparams) are live
        // for the call; C copies what it keeps. NULL io selects the default filesystem io.
        let ptr = unsafe { sys::blosc2_schunk_new(&mut storage) };
        NonNull::new(ptr)
            .map(|ptr| Schunk { ptr, buffer: None })
            .ok_or(CError::Null("could not create the frame"))
    }

    /// Add a fixed metalayer (only before any chunk is appended).
    pub(crate) fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<(), CError> {
        let c = c_name(name)?;
        let len = c_size(content.len())?;
        let mut copy = content.to_vec();
        // SAFETY: schunk valid and exclusively borrowed; name NUL-terminated; C copies the
        // `len` content bytes (the pointer is non-const in the signature only).
        let rc =
            unsafe { sys::blosc2_meta_add(self.ptr.as_ptr(), c.as_ptr(), copy.as_mut_ptr(), len) };
        if rc < 0 {
            Err(CError::Code(i64::from(rc)))
        } else {
            Ok(())
        }
    }

    /// Append a compressed chunk (copied by C).
    pub(crate) fn append_chunk(&mut self, chunk: &[u8]) -> Result<(), CError> {
        // SAFETY: schunk valid and exclusively borrowed; `chunk` is a complete chunk whose
        // header (cbytes) matches its length, produced by c-blosc2 itself; `copy = true`
        // makes C copy it, so the buffer is only read during the call.
        let rc = unsafe {
            sys::blosc2_schunk_append_chunk(self.ptr.as_ptr(), chunk.as_ptr() as *mut u8, true)
        };
        if rc < 0 {
            Err(CError::Code(rc))
        } else {
            Ok(())
        }
    }

    /// Set (add or replace) vlmeta entry `name` to `content` (msgpack bytes).
    pub(crate) fn vlmeta_set(&mut self, name: &str, content: &[u8]) -> Result<(), CError> {
        let c = c_name(name)?;
        let len = c_size(content.len())?;
        let mut copy = content.to_vec();
        let exists = self.vlmeta_names().iter().any(|n| n == name);
        // SAFETY: schunk valid and exclusively borrowed; name NUL-terminated; C compresses
        // and copies the `len` content bytes; NULL cparams selects C's defaults.
        let rc = unsafe {
            if exists {
                sys::blosc2_vlmeta_update(
                    self.ptr.as_ptr(),
                    c.as_ptr(),
                    copy.as_mut_ptr(),
                    len,
                    std::ptr::null_mut(),
                )
            } else {
                sys::blosc2_vlmeta_add(
                    self.ptr.as_ptr(),
                    c.as_ptr(),
                    copy.as_mut_ptr(),
                    len,
                    std::ptr::null_mut(),
                )
            }
        };
        if rc < 0 {
            Err(CError::Code(i64::from(rc)))
        } else {
            Ok(())
        }
    }

    /// Delete vlmeta entry `name`.
    pub(crate) fn vlmeta_delete(&mut self, name: &str) -> Result<(), CError> {
        let c = c_name(name)?;
        // SAFETY: schunk valid and exclusively borrowed; name NUL-terminated.
        let rc = unsafe { sys::blosc2_vlmeta_delete(self.ptr.as_ptr(), c.as_ptr()) };
        if rc < 0 {
            Err(CError::Code(i64::from(rc)))
        } else {
            Ok(())
        }
    }

    /// The whole frame as CFrame bytes (for in-memory frames).
    pub(crate) fn serialize_cframe(&mut self) -> Result<Vec<u8>, CError> {
        let mut dest: *mut u8 = std::ptr::null_mut();
        let mut needs_free = false;
        // SAFETY: schunk valid and exclusively borrowed; on success C returns the frame
        // length and a pointer to that many bytes (owned by us when `needs_free`).
        let len =
            unsafe { sys::blosc2_schunk_to_buffer(self.ptr.as_ptr(), &mut dest, &mut needs_free) };
        if len < 0 || dest.is_null() {
            return Err(CError::Code(len.min(-1)));
        }
        // SAFETY: `dest` points to `len` bytes as returned by C, valid until freed.
        let out = unsafe { std::slice::from_raw_parts(dest, len as usize).to_vec() };
        if needs_free {
            // SAFETY: C allocated `dest` with malloc and handed ownership to us.
            unsafe { libc::free(dest as *mut c_void) };
        }
        Ok(out)
    }
}

/// Ask the kernel to back `buf` with transparent huge pages (Linux `MADV_HUGEPAGE`; a no-op
/// elsewhere). Faulting a large fresh buffer in 4 KiB pages costs more than decompressing
/// into it; this kernel gives huge pages only on request. Purely advisory: contents and
/// validity of `buf` are unaffected, and failure is ignored.
pub(crate) fn advise_huge_pages(buf: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = buf.as_ptr() as usize;
        let aligned = (start + PAGE - 1) & !(PAGE - 1);
        let end = start + buf.len();
        if end > aligned + PAGE {
            let len = (end - aligned) & !(PAGE - 1);
            // SAFETY: [aligned, aligned + len) lies inside `buf`, memory this process owns
            // and that stays allocated for the call; MADV_HUGEPAGE changes no contents and no
            // mapping permissions, only how future page faults are served.
            unsafe {
                libc::madvise(aligned as *mut c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

#[cfg(test)]
mod code_tests {
    use super::describe_code;

    #[test]
    fn codes_are_named() {
        assert_eq!(describe_code(-5), "error -5 (not enough space to read)");
        assert_eq!(describe_code(-37), "error -37 (frame lock failure)");
        assert_eq!(describe_code(-99), "error -99");
    }
}
