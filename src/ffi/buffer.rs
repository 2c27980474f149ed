//! [`ChunkBytes`], a chunk buffer that c-blosc2 may hand over, page advice for large
//! buffers, and [`try_zeroed`], a zeroed allocation that fails instead of aborting.

use std::os::raw::c_void;
use std::ptr::NonNull;

/// Compressed chunk bytes: a buffer c-blosc2 allocated and handed over, or a copy.
#[derive(Default)]
pub(crate) struct ChunkBytes {
    /// A buffer C allocated and handed over: pointer and length.
    pub(super) c: Option<(NonNull<u8>, usize)>,
    /// The bytes, when copied: the first `len` of `copy` (kept longer, so that a smaller
    /// read then a larger one never clears memory again).
    pub(super) copy: Vec<u8>,
    len: usize,
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
            self.copy = Vec::new();
            self.copy = vec![0; len];
        } else if self.copy.len() < len {
            self.copy.resize(len, 0);
        }
        self.len = len;
        &mut self.copy[..len]
    }

    /// The bytes the copy buffer holds allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.copy.capacity()
    }

    /// Free the C buffer, if any.
    pub(super) fn release(&mut self) {
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
            None => &self.copy[..self.len],
        }
    }
}

impl std::ops::DerefMut for ChunkBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match self.c {
            // SAFETY: `p` points to `len` initialised bytes exclusively owned by this value
            // (malloc'ed by C and handed over), borrowed mutably through `self`.
            Some((p, len)) => unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), len) },
            None => &mut self.copy[..self.len],
        }
    }
}

impl Drop for ChunkBytes {
    fn drop(&mut self) {
        self.release();
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

/// `n` zeroed bytes, or `None` when the allocator cannot provide them (where `vec![0; n]`
/// would abort the process). Like `vec![0; n]`, the memory comes zeroed from the allocator
/// (`calloc`-like: large buffers are fresh pages, never written until used).
pub(crate) fn try_zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: `layout` has a non-zero size (n > 0) and alignment 1, as alloc_zeroed needs.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` was allocated by the global allocator with the layout of `[u8; n]` (the
    // layout `Vec<u8>` with capacity `n` uses), and its `n` bytes are initialised (zeroed);
    // ownership moves into the Vec, which frees it with the same layout.
    Some(unsafe { Vec::from_raw_parts(p, n, n) })
}
