//! [`Mapping`]: a range of a local file mapped into memory (private, copy-on-write), so
//! that a chunk decodes straight from the page cache, with no copy into a buffer first;
//! with `SIGBUS` handled.
//!
//! The mapping is private: the decoder may change bytes of it (c-blosc2's filter bytes are
//! cleared for a call when Rust undoes the filters); the kernel then copies the page for
//! this mapping alone, and the file never changes. Each mapping belongs to one chunk buffer,
//! so no two threads ever change the same mapped bytes.
//!
//! A mapped file that shrinks (another process truncates it) makes every access to its lost
//! pages raise `SIGBUS`, which kills the process by default, and the access may come from
//! c-blosc2's code in the middle of a decode. So the first mapping installs a process-wide
//! `SIGBUS` handler: when the faulting address lies inside a live mapping, the handler puts
//! a page of zeros in its place (`MAP_FIXED` anonymous memory) and marks the mapping as
//! faulted; the access is retried and reads zeros, and the read that used the mapping checks
//! [`Mapping::intact`] afterwards and reports an error instead of what it decoded. Any other
//! `SIGBUS` goes to the handler that was there before (Rust's own, then the default action).
//!
//! Live mappings are kept in a fixed table of [`SLOTS`] atomics the handler can scan
//! without locks or allocation; when the table is full a range is simply not mapped (it is
//! read with `pread`).

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

/// How many mappings may be live at once (one per chunk being decoded).
const SLOTS: usize = 256;

const FREE: u8 = 0;
const CLAIMED: u8 = 1;
const LIVE: u8 = 2;

/// One entry of the table of live mappings.
struct Slot {
    state: AtomicU8,
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // each array element is its own Slot
const EMPTY: Slot = Slot {
    state: AtomicU8::new(FREE),
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// `len` bytes of a file from some position, mapped privately. Unmapped on drop.
pub(crate) struct Mapping {
    /// Start of the mapping (page-aligned) and its length.
    base: std::ptr::NonNull<u8>,
    mapped: usize,
    /// Where the requested bytes start inside it, and how many there are.
    skip: usize,
    len: usize,
    slot: usize,
    /// Whether the pages may be written (made so on the first [`Mapping::bytes_mut`]).
    writable: bool,
}

// SAFETY: the mapping is memory owned by this value alone until drop (no other value refers
// to it), so it may move to another thread like a `Vec<u8>`.
unsafe impl Send for Mapping {}
// SAFETY: `&Mapping` only reads; writes need `&mut Mapping`.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Map the `len` bytes of `file` at `pos`, or `None` when mapping is not available
    /// (not Linux, `len` 0, the table full, `mmap` failing).
    pub(crate) fn of(file: &File, pos: u64, len: usize) -> Option<Mapping> {
        #[cfg(target_os = "linux")]
        {
            linux::map(file, pos, len)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (file, pos, len);
            None
        }
    }

    /// The mapped bytes. After a truncation of the file, the lost pages read as zeros:
    /// check [`Mapping::intact`] after using them.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `base + skip` starts `len` bytes inside a live mapping of `mapped` bytes
        // (`skip + len <= mapped`) owned by this value until drop; the borrow of `self`
        // keeps it mapped. Its pages always hold readable memory: the file's bytes (or this
        // mapping's private copies of them) or, once the file shrank under them, zeros the
        // SIGBUS handler mapped in their place. b2nd never writes file bytes a reader of a
        // frame can reach (changes go after them and publish by one header write or a
        // rename, `docs/in-place-writes.md`); another program changing them changes what
        // is read, as under `pread`, and readers check the frame unchanged after decoding.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.skip), self.len) }
    }

    /// The mapped bytes, to change: changes stay in this mapping (private pages).
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        #[cfg(target_os = "linux")]
        if !self.writable {
            linux::make_writable(self.base.as_ptr(), self.mapped);
            self.writable = true;
        }
        // SAFETY: as in `bytes`; the mapping is now writable (PROT_WRITE on a MAP_PRIVATE
        // mapping: a write copies the page for this mapping only) and `&mut self` makes the
        // borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(self.skip), self.len) }
    }

    /// Whether no access to the mapping has faulted (the file shrank or could not be read):
    /// the bytes read from it so far were the file's.
    pub(crate) fn intact(&self) -> bool {
        !TABLE[self.slot].faulted.load(Ordering::Acquire)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        let slot = &TABLE[self.slot];
        // Out of the table first: no access to it can happen any more (this is its only
        // owner), so the handler never sees an address range being unmapped.
        slot.state.store(CLAIMED, Ordering::Release);
        #[cfg(target_os = "linux")]
        linux::unmap(self.base.as_ptr(), self.mapped);
        slot.faulted.store(false, Ordering::Relaxed);
        slot.state.store(FREE, Ordering::Release);
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::os::raw::{c_int, c_void};
    use std::os::unix::io::AsRawFd;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Once, OnceLock};

    use super::{Mapping, CLAIMED, FREE, LIVE, TABLE};

    static INSTALL: Once = Once::new();
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    /// The `SIGBUS` action before ours, for faults outside our mappings.
    static PREVIOUS: OnceLock<Previous> = OnceLock::new();

    struct Previous(libc::sigaction);
    // SAFETY: a plain C struct (a handler address, a signal mask, flags), written once
    // before the handler that reads it is installed, never changed after.
    unsafe impl Sync for Previous {}
    // SAFETY: as above.
    unsafe impl Send for Previous {}

    pub(super) fn map(file: &std::fs::File, pos: u64, len: usize) -> Option<Mapping> {
        if len == 0 || !install() {
            return None;
        }
        let page = PAGE.load(Ordering::Relaxed) as u64;
        let skip = (pos % page) as usize;
        let mapped = skip.checked_add(len)?;
        let offset = libc::off_t::try_from(pos - skip as u64).ok()?;
        let slot = TABLE.iter().position(|s| {
            s.state
                .compare_exchange(FREE, CLAIMED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        // SAFETY: a fresh private mapping of an open file descriptor at a page-aligned
        // offset, at an address the kernel chooses (nothing of ours is replaced); the
        // result is checked. Private: writes never reach the file.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_POPULATE,
                file.as_raw_fd(),
                offset,
            )
        };
        let s = &TABLE[slot];
        let Some(base) = std::ptr::NonNull::new(p as *mut u8).filter(|_| p != libc::MAP_FAILED)
        else {
            s.state.store(FREE, Ordering::Release);
            return None;
        };
        s.faulted.store(false, Ordering::Relaxed);
        s.start.store(base.as_ptr() as usize, Ordering::Relaxed);
        s.len.store(mapped, Ordering::Relaxed);
        s.state.store(LIVE, Ordering::Release);
        Some(Mapping {
            base,
            mapped,
            skip,
            len,
            slot,
            writable: false,
        })
    }

    /// Make the mapping writable (its pages private copies once written). A mapping that
    /// cannot be made writable is a bug of ours (private mappings of a readable file can
    /// always be): panics rather than writing to a read-only page.
    pub(super) fn make_writable(base: *mut u8, len: usize) {
        // SAFETY: `base`/`len` are a whole mapping made by `map` and owned by the caller;
        // only its protection changes.
        let r =
            unsafe { libc::mprotect(base as *mut c_void, len, libc::PROT_READ | libc::PROT_WRITE) };
        assert_eq!(r, 0, "mprotect of a private mapping failed");
    }

    pub(super) fn unmap(ptr: *mut u8, len: usize) {
        // SAFETY: `ptr`/`len` are a mapping made by `map` and owned by the `Mapping` being
        // dropped (no reference into it outlives it); it is unmapped exactly once.
        unsafe { libc::munmap(ptr as *mut c_void, len) };
    }

    /// Install the handler once; whether it is installed.
    fn install() -> bool {
        INSTALL.call_once(|| {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            // SAFETY: `old` is a valid out-parameter; a null new action only queries.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) } != 0 {
                return;
            }
            let _ = PREVIOUS.set(Previous(old));
            // SAFETY: a zeroed sigaction is a valid starting value; the mask is emptied by
            // sigemptyset, and `on_sigbus` has the three-argument signature SA_SIGINFO needs.
            unsafe {
                let mut new: libc::sigaction = std::mem::zeroed();
                new.sa_sigaction = on_sigbus as *const () as usize;
                new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut new.sa_mask);
                libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut());
            }
        });
        PREVIOUS.get().is_some()
    }

    /// The `SIGBUS` handler: only atomics, `mmap` and `sigaction` (system calls), no locks,
    /// no allocation.
    extern "C" fn on_sigbus(sig: c_int, info: *mut libc::siginfo_t, ctx: *mut c_void) {
        // SAFETY: the kernel passes a valid siginfo for a SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let page = PAGE.load(Ordering::Relaxed);
        for s in TABLE.iter() {
            if s.state.load(Ordering::Acquire) != LIVE {
                continue;
            }
            let start = s.start.load(Ordering::Relaxed);
            let len = s.len.load(Ordering::Relaxed);
            if addr < start || addr - start >= len {
                continue;
            }
            let at = addr & !(page - 1);
            // SAFETY: `at` is the page holding the faulting address, inside a live mapping
            // of ours (the table says so and its owner is still using it); replacing that
            // one page by anonymous zeros keeps the range mapped and readable, and changes
            // nothing else.
            let p = unsafe {
                libc::mmap(
                    at as *mut c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                s.faulted.store(true, Ordering::Release);
                return;
            }
            break;
        }
        // Not ours (or the page could not be replaced): the action that was there before.
        let previous = PREVIOUS.get().map(|p| p.0);
        match previous {
            Some(old) if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN => {
                if old.sa_flags & libc::SA_SIGINFO != 0 {
                    // SAFETY: the previous action was installed with SA_SIGINFO, so its
                    // address is a three-argument handler; called as the kernel would.
                    let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                        unsafe { std::mem::transmute(old.sa_sigaction) };
                    f(sig, info, ctx);
                } else {
                    // SAFETY: without SA_SIGINFO the address is a one-argument handler.
                    let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(old.sa_sigaction) };
                    f(sig);
                }
            }
            _ => {
                // The default action: restore it and return; the access faults again and
                // the process ends as it would have without this handler.
                // SAFETY: a zeroed sigaction with SIG_DFL (0) is the default action.
                unsafe {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_file_reads_zeros_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let f = File::open(&p).unwrap();
        let mut m = Mapping::of(&f, 100, 60_000).unwrap();
        assert!(m.bytes().iter().all(|&b| b == 7));
        assert!(m.intact());
        // Changes stay in the mapping.
        m.bytes_mut()[0] = 1;
        assert_eq!(m.bytes()[0], 1);
        assert_eq!(std::fs::read(&p).unwrap()[100], 7);
        // Another writer cuts the file to 10 000 bytes: the pages past it are gone.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(10_000)
            .unwrap();
        let sum: u64 = m.bytes().iter().map(|&b| u64::from(b)).sum();
        assert!(!m.intact());
        // File bytes 100..10_000 are still there (the first page, copied by the write
        // above, keeps its 7s to its end; the third page is zero-filled past the end of
        // the file); the rest reads as zeros.
        assert!((7 * 9_899 + 1..=7 * 12_188 + 1).contains(&sum), "{sum}");
        drop(m);
        // The slot is free again and a new mapping starts intact.
        let m = Mapping::of(&f, 9_000, 1_000).unwrap();
        assert!(m.intact() && m.bytes()[999] == 7);
    }
}
