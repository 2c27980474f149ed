//! [`Schunk`]: a c-blosc2 super-chunk being written (a new frame, or an attribute edit of a
//! frame file). Reads never use it: frames are parsed in Rust (`format::frame`).

use std::ffi::CStr;
use std::os::raw::c_void;
use std::path::Path;
use std::ptr::NonNull;

use blosc2_src as sys;

use super::error::{c_name, c_size};
use super::{init, CError, CompressParams};

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
}

/// An opened c-blosc2 super-chunk (a CFrame or SFrame). Not thread-safe: keep it behind a lock.
pub(crate) struct Schunk {
    ptr: NonNull<sys::blosc2_schunk>,
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
        let schunk = Schunk { ptr };
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

    fn raw(&self) -> &sys::blosc2_schunk {
        // SAFETY: `ptr` is a valid, live schunk for the lifetime of `self` (freed only in Drop).
        unsafe { self.ptr.as_ref() }
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
}

impl Drop for Schunk {
    fn drop(&mut self) {
        // SAFETY: `ptr` is a valid schunk owned by this handle and freed exactly once.
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
            .map(|ptr| Schunk { ptr })
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
