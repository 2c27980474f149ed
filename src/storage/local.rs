//! Local files: [`LocalFile`] reads with `pread` (no shared cursor, so threads read at
//! once), [`LocalDir`] opens the files of a sparse frame's directory.

#![forbid(unsafe_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Directory, RangeRead};
use crate::error::{Error, Result};

/// A file on the local file system, opened once.
pub(crate) struct LocalFile {
    path: PathBuf,
    file: File,
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
        })
    }

    /// The metadata of the file this opened (whatever its path names now).
    pub(crate) fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// Up to `buf.len()` bytes at `pos` into `buf`, fewer at the file's end: how many.
    pub(crate) fn read_upto_at(&self, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
        read_upto(&self.file, buf, pos)
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
    (read_upto(file, buf, pos).ok()? == buf.len()).then_some(())
}

/// Up to `buf.len()` bytes of `file` at `pos` (without moving a shared cursor), fewer at the
/// file's end: how many.
fn read_upto(file: &std::fs::File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match read_some_at(file, &mut buf[done..], pos + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// One positioned read of `file` at `pos` (without moving a shared cursor): how many bytes,
/// 0 at the end.
fn read_some_at(file: &std::fs::File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.read_at(buf, pos)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        file.seek_read(buf, pos)
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = (file, buf, pos);
        Err(std::io::ErrorKind::Unsupported.into())
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
