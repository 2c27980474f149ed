//! Crash-safe targets: a temporary path beside the destination, renamed into place on success.

#![forbid(unsafe_code)]

use super::*;

/// A temporary target in a private directory next to the destination, renamed into place on
/// success and removed (by drop) on failure.
pub(super) enum Staging {
    Disk {
        tmp: tempfile::TempDir,
        inner: PathBuf,
        dest: PathBuf,
        overwrite: bool,
        sparse: bool,
    },
    Memory,
}

pub(super) fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl Staging {
    pub(super) fn new(target: &Target, overwrite: bool) -> Result<Staging> {
        let (dest, sparse) = match target {
            Target::File(d) => (d, false),
            Target::Sparse(d) => (d, true),
            Target::Memory => return Ok(Staging::Memory),
        };
        if !overwrite && std::fs::symlink_metadata(dest).is_ok() {
            return Err(Error::TargetExists {
                path: dest.to_path_buf(),
            });
        }
        let dir = parent_dir(dest);
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&dir)
            .map_err(|source| Error::Io {
                path: dir.clone(),
                source,
            })?;
        let inner = tmp.path().join("array");
        Ok(Staging::Disk {
            tmp,
            inner,
            dest: dest.clone(),
            overwrite,
            sparse,
        })
    }

    pub(super) fn c_path(&self) -> Option<&Path> {
        match self {
            Staging::Disk { inner, .. } => Some(inner),
            Staging::Memory => None,
        }
    }

    pub(super) fn name(&self) -> String {
        match self {
            Staging::Disk { dest, .. } => dest.display().to_string(),
            Staging::Memory => "<memory>".into(),
        }
    }

    pub(super) fn error(&self, reason: String) -> Error {
        Error::Frame {
            source_name: self.name(),
            reason,
        }
    }

    /// Move the finished temporary into place (the private directory is removed on drop).
    pub(super) fn commit(self) -> Result<()> {
        let Staging::Disk {
            tmp,
            inner,
            dest,
            overwrite,
            sparse,
        } = self
        else {
            return Ok(());
        };
        let io = |source| Error::Io {
            path: dest.clone(),
            source,
        };
        let exists = std::fs::symlink_metadata(&dest).is_ok();
        if exists && !overwrite {
            return Err(Error::TargetExists {
                path: dest.to_path_buf(),
            });
        }
        if !sparse && !dest.is_dir() {
            if overwrite {
                std::fs::rename(&inner, &dest).map_err(io)?; // atomic replace
            } else {
                // Atomic no-clobber: a hard link fails if the name was taken meanwhile.
                std::fs::hard_link(&inner, &dest).map_err(io)?;
            }
        } else {
            if exists {
                if dest.is_dir() {
                    std::fs::remove_dir_all(&dest).map_err(io)?;
                } else {
                    std::fs::remove_file(&dest).map_err(io)?;
                }
            }
            std::fs::rename(&inner, &dest).map_err(io)?;
        }
        drop(tmp);
        Ok(())
    }
}
