//! Local files: [`LocalFile`] reads with `pread` (no shared cursor, so threads read at
//! once) and may map the file for chunks to be decoded in place; [`LocalDir`] opens the
//! files of a sparse frame's directory.

#![forbid(unsafe_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Directory, RangeRead};
use crate::error::{Error, Result};
use crate::ffi::Mapping;

/// A file on the local file system, opened once.
pub(crate) struct LocalFile {
    path: PathBuf,
    file: File,
    /// Whether chunks may be mapped ([`LocalFile::open_mapped`]).
    mappable: bool,
}

/// Files at least this large have their chunks mapped ([`LocalFile::open_mapped`]).
const MAP_MIN: u64 = 1 << 20;
/// Ranges at least this large are mapped: below it a copy costs less than a mapping.
const MAP_RANGE_MIN: usize = 64 << 10;

/// Whether frames may be mapped: the environment variable `B2ND_MMAP=0` turns it off.
fn mapping_allowed() -> bool {
    static ALLOWED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var_os("B2ND_MMAP").is_none_or(|v| v != "0"))
}

impl LocalFile {
    /// Open the file at `path` for reading.
    pub(crate) fn open(path: &Path) -> Result<LocalFile> {
        let file = File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(LocalFile {
            path: path.to_path_buf(),
            file,
            mappable: false,
        })
    }

    /// Open the file at `path` for reading, its chunks to be mapped into memory when it is
    /// large enough and the system allows ([`RangeRead::map_range`]), so that they are
    /// decoded straight from the page cache. A file that shrinks under a mapping reads as
    /// zeros in the lost pages, and the read that touched them fails (see
    /// [`Mapping::intact`]).
    pub(crate) fn open_mapped(path: &Path) -> Result<LocalFile> {
        let mut f = LocalFile::open(path)?;
        f.mappable = mapping_allowed() && f.size()? >= MAP_MIN;
        Ok(f)
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }
}

impl RangeRead for LocalFile {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn size(&self) -> Result<u64> {
        Ok(self.file.metadata().map_err(|e| self.io(e))?.len())
    }

    fn map_range(&self, pos: u64, len: usize) -> Option<Mapping> {
        if !self.mappable || len < MAP_RANGE_MIN {
            return None;
        }
        Mapping::of(&self.file, pos, len)
    }

    fn maps(&self) -> bool {
        self.mappable
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (pos, buf) in reads.iter_mut() {
            pos.checked_add(buf.len() as u64)
                .ok_or_else(|| self.io(std::io::ErrorKind::UnexpectedEof.into()))?;
            read_at(&self.file, buf, *pos)
                .ok_or_else(|| self.io(std::io::ErrorKind::UnexpectedEof.into()))?;
        }
        Ok(())
    }
}

/// A directory on the local file system whose files are opened by name.
pub(crate) struct LocalDir {
    path: PathBuf,
}

impl LocalDir {
    /// The directory at `path`.
    pub(crate) fn new(path: &Path) -> LocalDir {
        LocalDir {
            path: path.to_path_buf(),
        }
    }
}

impl Directory for LocalDir {
    fn file(&self, name: &str) -> Result<Arc<dyn RangeRead>> {
        Ok(Arc::new(LocalFile::open(&self.path.join(name))?))
    }
}

/// Read exactly `buf.len()` bytes of `file` at `pos` (without moving a shared cursor).
pub(crate) fn read_at(file: &std::fs::File, buf: &mut [u8], pos: u64) -> Option<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(buf, pos).ok()
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match file.seek_read(&mut buf[done..], pos + done as u64) {
                Ok(0) | Err(_) => return None,
                Ok(k) => done += k,
            }
        }
        Some(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, pos);
        None
    }
}

/// The directory holding `p` (`.` for a bare file name).
pub(crate) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Make the entries of `dir` durable (a no-op where directories cannot be opened).
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
