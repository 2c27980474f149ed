//! File-system calls std does not offer: the atomic exchange of two paths.

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
}
