//! [`Schunk`]: a c-blosc2 super-chunk (an opened CFrame file, SFrame directory or in-memory
//! frame, or a new one being written).

use std::ffi::CStr;
use std::os::raw::c_void;
use std::path::Path;
use std::ptr::NonNull;

use blosc2_src as sys;

use super::error::{c_name, c_size};
use super::{init, CError, ChunkBytes, CompressParams};

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
        // the schunk. On failure C frees it with the partial schunk (frame.c, frame_to_schunk),
        // except when it cannot create the schunk's contexts (frame.c:1804-1814), where both
        // leak (no UB): Rust refuses, before this call, the header values that make context
        // creation fail (filter ids c-blosc2 does not define; found by fuzzing as a leak).
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

    /// The bytes of an in-memory frame (`None` for frames on disk).
    pub(crate) fn frame_bytes(&self) -> Option<&[u8]> {
        self.buffer.as_ref().map(|(buf, len)| &buf[..*len])
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

impl Drop for Schunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` is a valid schunk owned by this handle and freed exactly once. For
        // in-memory frames C does not free the buffer (avoid_cframe_free), which we drop after.
        unsafe {
            sys::blosc2_schunk_free(self.ptr.as_ptr());
        }
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
            .ok_or_else(|| CError::Null("could not create the frame").with_os_error())
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
            Err(CError::Code(i64::from(rc)).with_os_error())
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
            Err(CError::Code(rc).with_os_error())
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
            Err(CError::Code(i64::from(rc)).with_os_error())
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
            Err(CError::Code(i64::from(rc)).with_os_error())
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
