//! File-system calls std does not offer: the atomic exchange of two paths, and starting a
//! file's writeback early.

use std::io;
use std::path::Path;

/// Atomically exchange the directory entries `a` and `b` (both must exist; either may be a
/// file or a directory): Linux `renameat2(RENAME_EXCHANGE)`. Fails with the OS error where
/// the file system does not support it (`EINVAL`), and with [`io::ErrorKind::Unsupported`]
/// off Linux; callers then fall back to two renames.
pub(crate) fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| {
            std::ffi::CString::new(p.as_os_str().as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path with a NUL byte"))
        };
        let (ca, cb) = (c(a)?, c(b)?);
        // SAFETY: `ca` and `cb` are NUL-terminated strings that live until the call returns;
        // renameat2 only reads them, and AT_FDCWD makes relative paths relative to the
        // working directory as std's rename does. It takes no other pointers.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (a, b);
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// Start writing `len` bytes of `file` from `offset` back to the disk without waiting for
/// them (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that a later `fsync` waits only
/// for what is still in flight. Best effort: it guarantees nothing, and errors are left to
/// the `fsync` that follows (elsewhere it does nothing).
pub(crate) fn start_writeback(file: &std::fs::File, offset: u64, len: u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::fd::AsRawFd;
        let (Ok(off), Ok(n)) = (i64::try_from(offset), i64::try_from(len)) else {
            return;
        };
        // SAFETY: the descriptor is `file`'s, open for the whole call (borrowed); the call
        // takes no pointers, and the kernel checks the range itself (a negative one is
        // refused with EINVAL, one past the end does nothing): no undefined behaviour.
        let _ =
            unsafe { libc::sync_file_range(file.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = (file, offset, len);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn exchanges_a_file_and_a_directory() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        std::fs::write(&a, b"file").unwrap();
        std::fs::create_dir(&b).unwrap();
        std::fs::write(b.join("inner"), b"x").unwrap();
        super::exchange(&a, &b).unwrap();
        assert!(a.join("inner").is_file());
        assert_eq!(std::fs::read(&b).unwrap(), b"file");
        assert!(super::exchange(&a, &d.path().join("missing")).is_err());
    }

    #[test]
    fn writeback_leaves_the_bytes_as_written() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(&[7u8; 100_000]).unwrap();
        super::start_writeback(&f, 0, 100_000);
        super::start_writeback(&f, 50_000, u64::MAX); // beyond the end: ignored
        f.write_all(&[8u8; 10]).unwrap();
        f.sync_all().unwrap();
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), 100_010);
        assert!(got[..100_000].iter().all(|&b| b == 7) && got[100_000..] == [8u8; 10]);
    }
}
