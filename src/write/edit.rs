//! Attribute edits on existing files, made in a copy that replaces the original.

#![forbid(unsafe_code)]

use super::staging::parent_dir;
use crate::error::Error;
use crate::error::Result;
use crate::ffi::Schunk;
use crate::format::frame::Frame;
use crate::model::attrs::Value;
use std::path::Path;

/// Set user attributes (vlmeta) on an existing array file or sparse directory, crash-safely:
/// the frame is edited in a temporary copy (chunk files of sparse frames are hard-linked,
/// not copied) that then replaces the original.
pub fn set_attrs(path: impl AsRef<Path>, attrs: &[(&str, Value)]) -> Result<()> {
    edit_frame(path.as_ref(), |s, name| {
        for (k, v) in attrs {
            s.vlmeta_set(k, &v.encode()).map_err(|e| Error::Attr {
                source_name: name.into(),
                name: (*k).into(),
                reason: format!("could not store it ({e})"),
            })?;
        }
        Ok(())
    })
}

/// Delete user attributes from an existing array file or sparse directory (crash-safely, as
/// [`set_attrs`]). Deleting an absent name is an error.
pub fn delete_attrs(path: impl AsRef<Path>, names: &[&str]) -> Result<()> {
    edit_frame(path.as_ref(), |s, src| {
        for k in names {
            if !s.vlmeta_names().iter().any(|n| n == k) {
                return Err(Error::Attr {
                    source_name: src.into(),
                    name: (*k).into(),
                    reason: "no such attribute".into(),
                });
            }
            s.vlmeta_delete(k).map_err(|e| Error::Attr {
                source_name: src.into(),
                name: (*k).into(),
                reason: format!("could not delete it ({e})"),
            })?;
        }
        Ok(())
    })
}

pub(super) fn edit_frame(
    path: &Path,
    edit: impl FnOnce(&mut Schunk, &str) -> Result<()>,
) -> Result<()> {
    let io = |p: &Path, source| Error::Io {
        path: p.to_path_buf(),
        source,
    };
    // python-blosc2's lock, when its users lock this frame: held exclusively (advancing its
    // generation counter, as every c-blosc2 writer does) from reading to the replacement.
    let sidecar = crate::format::lock::FrameLock::open(path, path.is_dir(), true)?;
    let _held = sidecar
        .as_ref()
        .map(crate::format::lock::FrameLock::exclusive)
        .transpose()?;
    // Validate as a frame first (header checks, parse), without the shared lock held above.
    drop(Frame::open_for_writer(path)?);
    let dir = parent_dir(path);
    let name = path.display().to_string();
    if path.is_dir() {
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&dir)
            .map_err(|e| io(&dir, e))?;
        for e in std::fs::read_dir(path).map_err(|e| io(path, e))? {
            let e = e.map_err(|e| io(path, e))?;
            let to = tmp.path().join(e.file_name());
            if e.file_name() == "chunks.b2frame" {
                std::fs::copy(e.path(), &to).map_err(|er| io(&e.path(), er))?;
            } else if std::fs::hard_link(e.path(), &to).is_err() {
                std::fs::copy(e.path(), &to).map_err(|er| io(&e.path(), er))?;
            }
        }
        {
            let mut s = Schunk::open(tmp.path(), 0).map_err(|reason| Error::Frame {
                source_name: name.clone(),
                reason: reason.to_string(),
            })?;
            edit(&mut s, &name)?;
        }
        // The edited copy replaces the original atomically.
        super::staging::replace(tmp.path(), path).map_err(|e| io(path, e))?;
        Ok(())
    } else {
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| io(&dir, e))?
            .into_temp_path();
        std::fs::copy(path, &tmp).map_err(|e| io(path, e))?;
        {
            let mut s = Schunk::open(&tmp, 0).map_err(|reason| Error::Frame {
                source_name: name.clone(),
                reason: reason.to_string(),
            })?;
            edit(&mut s, &name)?;
        }
        super::staging::sync_tree(&tmp).map_err(|e| io(&tmp, e))?;
        tmp.persist(path).map_err(|e| io(path, e.error))?;
        super::staging::sync_dir(&dir);
        Ok(())
    }
}
