//! Crash-safe targets: a temporary path beside the destination, renamed into place on success.

#![forbid(unsafe_code)]

use super::options::Target;
use crate::error::Error;
use crate::error::Result;
use crate::model::durability::Durability;
use crate::storage::{parent_dir, sync_dir};
use std::path::Path;
use std::path::PathBuf;

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

    /// Move the finished temporary into place (the private directory is removed on drop),
    /// synced to the disk first and the directory after with [`Durability::Disk`].
    pub(super) fn commit(self, durability: Durability) -> Result<()> {
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
        let syncs = durability.syncs();
        if syncs {
            sync_tree(&inner).map_err(io)?;
        }
        // Replacing an array its python-blosc2 users lock is a change they must see: the
        // lock is taken exclusively (advancing its generation counter) around the swap.
        let dest_is_dir = exists && dest.is_dir();
        let sidecar = if exists {
            crate::format::lock::FrameLock::open(&dest, dest_is_dir, false)?
        } else {
            None
        };
        let _held = sidecar
            .as_ref()
            .map(crate::format::lock::FrameLock::exclusive)
            .transpose()?;
        if !exists && !sparse {
            // Atomic no-clobber: a hard link fails if the name was taken meanwhile.
            std::fs::hard_link(&inner, &dest).map_err(io)?;
            if syncs {
                sync_dir(&parent_dir(&dest));
            }
        } else {
            replace_with(&inner, &dest, syncs).map_err(io)?;
        }
        drop(tmp);
        Ok(())
    }
}

/// Make a staged file, or every file and directory of a staged tree, durable before it is
/// published (a rename is only as durable as what it names).
pub(super) fn sync_tree(p: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(p)?;
    if meta.is_dir() {
        for e in std::fs::read_dir(p)? {
            sync_tree(&e?.path())?;
        }
    } else if !meta.is_file() {
        return Ok(());
    }
    std::fs::File::open(p)?.sync_all()
}

/// Put `new` (a file or directory) at `dest`, atomically: at every moment `dest` names the
/// old or the new contents, never nothing and never a mix. A file over a file is one
/// rename; otherwise the two entries are exchanged (`renameat2(RENAME_EXCHANGE)`) and the
/// old contents, now at `new`, removed. Where the exchange is not supported, the old
/// contents are moved aside first and moved back if the second rename fails (a crash
/// between the two renames then leaves them beside `dest`, under a `.b2nd-old-` name).
pub(super) fn replace(new: &Path, dest: &Path) -> std::io::Result<()> {
    replace_with(new, dest, true)
}

/// [`replace`], syncing the directory after (when `sync`) or not.
fn replace_with(new: &Path, dest: &Path, sync: bool) -> std::io::Result<()> {
    let dir = parent_dir(dest);
    let old = std::fs::symlink_metadata(dest).ok();
    let new_is_dir = std::fs::symlink_metadata(new)?.is_dir();
    match old {
        None => std::fs::rename(new, dest)?,
        Some(m) if !m.is_dir() && !new_is_dir => std::fs::rename(new, dest)?,
        Some(m) => match crate::ffi::fs::exchange(new, dest) {
            Ok(()) => {
                if sync {
                    sync_dir(&dir);
                }
                // `new` now names the old contents.
                let _ = if m.is_dir() {
                    std::fs::remove_dir_all(new)
                } else {
                    std::fs::remove_file(new)
                };
            }
            Err(_) => {
                let aside = tempfile::Builder::new()
                    .prefix(".b2nd-old-")
                    .tempdir_in(&dir)?;
                let old_path = aside.path().join("old");
                std::fs::rename(dest, &old_path)?;
                if let Err(e) = std::fs::rename(new, dest) {
                    let _ = std::fs::rename(&old_path, dest);
                    return Err(e);
                }
                drop(aside);
            }
        },
    }
    if sync {
        sync_dir(&dir);
    }
    Ok(())
}
