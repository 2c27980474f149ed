//! [`Schunk`]: a new, empty c-blosc2 super-chunk with its metalayers: the header layout of
//! the frames b2nd writes. Nothing else goes through it: chunks, index, trailer and the final
//! header are written in Rust (`format::frame_writer::NewFrame`), and frames are read and
//! changed in Rust (`format::frame`, `format::frame_writer`).

use std::os::raw::c_void;
use std::path::Path;
use std::ptr::NonNull;

use blosc2_src as sys;

use super::error::{c_name, c_size};
use super::{init, CError, CompressParams};

/// An opened c-blosc2 super-chunk (a CFrame or SFrame). Not thread-safe: keep it behind a lock.
pub(crate) struct Schunk {
    ptr: NonNull<sys::blosc2_schunk>,
}

// SAFETY: a `blosc2_schunk` has no thread affinity; it is only unsafe to use from two threads
// at once, and `Schunk` exposes no `&self` method that mutates C state concurrently: every
// method that touches mutable C state takes `&mut self`, so Rust's borrow rules (and the
// caller's Mutex) serialise them.
unsafe impl Send for Schunk {}

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
