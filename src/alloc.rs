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

/// `buf` made exactly `n` bytes long: a buffer that must grow is allocated afresh (zeroed
/// by the allocator, its pages untouched until used), else resized in place.
pub(crate) fn fit(buf: &mut Vec<u8>, n: usize, what: &str) -> Result<()> {
    if buf.capacity() < n {
        *buf = Vec::new();
        *buf = zeroed(n, what)?;
    } else {
        buf.resize(n, 0);
    }
    Ok(())
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
}
