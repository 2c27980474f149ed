//! Buffers whose sizes come from files: allocated fallibly, so that a size a file declares
//! (and the caller asked to read) that memory cannot hold is an [`Error::OutOfMemory`], not
//! Rust's abort. See `docs/limits.md` for what bounds each size.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};

/// `n` zeroed bytes for `what` (fresh pages from the allocator, as `vec![0; n]`).
pub(crate) fn zeroed(n: usize, what: &str) -> Result<Vec<u8>> {
    crate::ffi::try_zeroed(n).ok_or_else(|| Error::OutOfMemory {
        bytes: n as u64,
        what: what.to_string(),
    })
}

/// `n` zero bytes on pages of their own, untouched until written ([`crate::ffi::FreshPages`]),
/// or an error naming `what` when they cannot be mapped.
#[cfg_attr(not(feature = "arrow"), allow(dead_code))] // used by the Arrow conversion alone
pub(crate) fn fresh_pages(n: usize, what: &str) -> Result<crate::ffi::FreshPages> {
    crate::ffi::FreshPages::new(n).ok_or_else(|| Error::OutOfMemory {
        bytes: n as u64,
        what: what.to_string(),
    })
}

/// `buf` made exactly `n` bytes long: a buffer that must grow is replaced by a spare one
/// ([`give_back`]) or allocated afresh (zeroed by the allocator: see
/// [`crate::ffi::try_zeroed`]), else resized in place. Its bytes are whatever they were: callers write before
/// they read.
pub(crate) fn fit(buf: &mut Vec<u8>, n: usize, what: &str) -> Result<()> {
    if buf.capacity() < n {
        *buf = Vec::new();
        *buf = match take_spare(n) {
            Some(b) => b,
            None => zeroed(n, what)?,
        };
    }
    buf.resize(n, 0);
    Ok(())
}

/// Large buffers the workers of dropped arrays gave back, for the next arrays' reads in this
/// process (a table opened again for a server's next query): the allocator would hand the
/// same memory back but clear all of it first (glibc's `calloc` of reused memory), where a
/// read of a few blocks touches a few pages of it.
static SPARE: std::sync::Mutex<Spare> = std::sync::Mutex::new(Spare(Vec::new()));
/// Buffers under this size go back to the allocator.
const SPARE_MIN: usize = 1 << 20;
/// The most bytes (capacity) the spare buffers hold together.
const SPARE_TOTAL: usize = 128 << 20;

/// Spare buffers of [`SPARE_MIN`] bytes or more, [`SPARE_TOTAL`] in all at most.
struct Spare(Vec<Vec<u8>>);

impl Spare {
    /// Keep `buf` when it is large and the buffers kept leave room.
    fn give(&mut self, buf: Vec<u8>) {
        let cap = buf.capacity();
        if cap >= SPARE_MIN && self.0.iter().map(Vec::capacity).sum::<usize>() + cap <= SPARE_TOTAL
        {
            self.0.push(buf);
        }
    }

    /// The smallest kept buffer that holds `n` bytes without being over 4 times that.
    fn take(&mut self, n: usize) -> Option<Vec<u8>> {
        if n < SPARE_MIN {
            return None;
        }
        let (i, _) = self
            .0
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= n && b.capacity() / 4 <= n)
            .min_by_key(|(_, b)| b.capacity())?;
        Some(self.0.swap_remove(i))
    }
}

fn spare() -> std::sync::MutexGuard<'static, Spare> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keep `buf` for a later [`fit`] when it is large and the spare buffers leave room.
pub(crate) fn give_back(buf: Vec<u8>) {
    if buf.capacity() >= SPARE_MIN {
        spare().give(buf);
    }
}

/// A spare buffer for [`fit`] of `n` bytes, if one fits.
fn take_spare(n: usize) -> Option<Vec<u8>> {
    if n < SPARE_MIN {
        return None;
    }
    spare().take(n)
}

/// `n` copies of `v` for `what`.
pub(crate) fn filled<T: Clone>(n: usize, v: T, what: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| Error::OutOfMemory {
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        what: what.to_string(),
    })?;
    out.resize(n, v);
    Ok(out)
}

#[cfg(test)]
mod tests {
    // Miri reports a huge allocation as resource exhaustion instead of returning null.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn impossible_sizes_are_errors() {
        let e = super::zeroed(usize::MAX / 2, "a test").unwrap_err();
        assert!(e.to_string().contains("cannot allocate"), "{e}");
        assert!(super::filled(usize::MAX / 16, 0u64, "a test").is_err());
    }

    #[test]
    fn buffers_are_zeroed_and_fitted() {
        let mut b = vec![1u8; 4];
        super::fit(&mut b, 2, "x").unwrap();
        assert_eq!(b, [1, 1]);
        super::fit(&mut b, 1000, "x").unwrap();
        assert_eq!(b.len(), 1000);
        assert_eq!(super::zeroed(3, "x").unwrap(), [0, 0, 0]);
    }

    #[test]
    fn large_buffers_given_back_are_taken_by_fit() {
        let n = super::SPARE_MIN + 12345;
        let b = vec![7u8; n];
        let at = b.as_ptr() as usize;
        super::give_back(b);
        // Another test may take it first: then fit allocates, as it does with none spare.
        let mut c = Vec::new();
        super::fit(&mut c, n - 10, "x").unwrap();
        assert_eq!(c.len(), n - 10);
        if c.as_ptr() as usize == at {
            assert!(c.iter().all(|&v| v == 7), "a spare buffer is not cleared");
        }
        // Small buffers, and spares too large for the size asked, are not used.
        assert!(super::take_spare(100).is_none());
        super::give_back(vec![1u8; 8 * super::SPARE_MIN]);
        let taken = super::take_spare(super::SPARE_MIN);
        assert!(taken.is_none_or(|s| s.capacity() <= 4 * super::SPARE_MIN));
    }

    #[test]
    fn spare_buffers_best_fit_within_their_total() {
        use super::{Spare, SPARE_MIN, SPARE_TOTAL};
        let mut s = Spare(Vec::new());
        s.give(vec![0; SPARE_MIN - 1]);
        assert!(s.0.is_empty(), "a small buffer is not kept");
        s.give(vec![1; 3 * SPARE_MIN]);
        s.give(vec![2; 2 * SPARE_MIN]);
        s.give(vec![3; SPARE_TOTAL]);
        assert_eq!(s.0.len(), 2, "the total is kept to SPARE_TOTAL");
        // The smallest that holds the size; none over 4 times it; none too small.
        assert_eq!(s.take(2 * SPARE_MIN - 5).unwrap()[0], 2);
        assert!(s.take(SPARE_MIN / 2).is_none());
        assert!(s.take(4 * SPARE_MIN).is_none());
        assert_eq!(s.take(SPARE_MIN).unwrap()[0], 1);
        assert!(s.0.is_empty());
    }
}
