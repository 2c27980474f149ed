//! [`ChunkBytes`], a chunk buffer that c-blosc2 may hand over, page advice for large
//! buffers, [`try_zeroed`], a zeroed allocation that fails instead of aborting, and
//! [`FreshPages`], zero pages of a mapping of their own.

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
            // A zeroed allocation ([`try_zeroed`]'s caveat: up to 32 MiB it may be memory
            // used before, cleared): kept and reused, so that is paid once a worker.
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

/// Ask the CPU to bring the cache line holding `bytes[at]` in ahead of its use (x86_64
/// `prefetcht0`); nothing when `at` is past the end, or elsewhere. Purely a hint: it reads
/// nothing the program sees and changes no memory.
#[inline(always)]
pub(crate) fn prefetch(bytes: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(b) = bytes.get(at) {
        // SAFETY: the address is that of a byte of `bytes`, borrowed for the call; a
        // prefetch never faults and has no architectural effect beyond the caches.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (b as *const u8).cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, at);
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
/// (`calloc`-like: fresh pages, never written until used, above the allocator's mapping
/// threshold; below it, memory used before and cleared here. glibc raises that threshold
/// up to 32 MiB as large buffers are freed).
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

/// `len` zero bytes on pages of an anonymous mapping of their own (on unix; elsewhere a
/// zeroed allocation): no page is touched, or made resident, until written, whatever the
/// allocator's mapping threshold. For a destination c-blosc2 must be handed at a chunk's size
/// and never writes (the projected reads): a [`try_zeroed`] buffer of up to 32 MiB can be
/// memory used before, cleared byte by byte when allocated.
pub(crate) struct FreshPages {
    #[cfg(unix)]
    map: Option<(NonNull<u8>, usize)>,
    #[cfg(not(unix))]
    map: Vec<u8>,
}

// SAFETY: the mapping is exclusively owned by this value (nothing else refers to it), so it
// may move between threads and be shared read-only.
#[cfg(unix)]
unsafe impl Send for FreshPages {}
// SAFETY: as above: `&FreshPages` gives only shared reads of the bytes.
#[cfg(unix)]
unsafe impl Sync for FreshPages {}

impl Default for FreshPages {
    /// No bytes (nothing mapped).
    fn default() -> FreshPages {
        FreshPages {
            #[cfg(unix)]
            map: None,
            #[cfg(not(unix))]
            map: Vec::new(),
        }
    }
}

impl FreshPages {
    /// `len` zero bytes, or `None` when the system cannot map them.
    pub(crate) fn new(len: usize) -> Option<FreshPages> {
        if len == 0 {
            return Some(FreshPages::default());
        }
        #[cfg(unix)]
        {
            // SAFETY: a new private anonymous mapping (no address asked for, no file): it
            // overlaps no memory of the process; its `len` bytes read as zeros and are
            // readable and writable until the munmap in `drop`.
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
                return None;
            }
            Some(FreshPages {
                map: Some((NonNull::new(p as *mut u8)?, len)),
            })
        }
        #[cfg(not(unix))]
        {
            Some(FreshPages {
                map: try_zeroed(len)?,
            })
        }
    }
}

impl std::ops::Deref for FreshPages {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        #[cfg(unix)]
        match self.map {
            // SAFETY: `p` is the start of `len` mapped, initialised (zero-filled) bytes owned
            // by this value until `drop` unmaps them.
            Some((p, len)) => unsafe { std::slice::from_raw_parts(p.as_ptr(), len) },
            None => &[],
        }
        #[cfg(not(unix))]
        &self.map
    }
}

impl std::ops::DerefMut for FreshPages {
    fn deref_mut(&mut self) -> &mut [u8] {
        #[cfg(unix)]
        match self.map {
            // SAFETY: as in `deref`; the bytes are borrowed mutably through `self`, so no
            // other reference to them exists meanwhile.
            Some((p, len)) => unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), len) },
            None => &mut [],
        }
        #[cfg(not(unix))]
        &mut self.map
    }
}

#[cfg(unix)]
impl Drop for FreshPages {
    fn drop(&mut self) {
        if let Some((p, len)) = self.map.take() {
            // SAFETY: `p`, `len` are exactly the mapping `new` made, unmapped once here; no
            // reference to its bytes outlives `self`.
            unsafe { libc::munmap(p.as_ptr() as *mut c_void, len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_pages_are_zeros_that_can_be_written() {
        for len in [0usize, 1, 4095, 4096, 3 << 20] {
            let mut p = FreshPages::new(len).expect("mapped");
            assert_eq!(p.len(), len);
            assert!(p.iter().all(|&b| b == 0));
            if len > 0 {
                p[len - 1] = 7;
                assert_eq!(p[len - 1], 7);
            }
        }
    }
}
