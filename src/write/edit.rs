//! Attribute edits: the one way a frame's attributes (vlmeta) change, for [`ArrayMut`]
//! (`set_attrs`, `delete_attr`) and for any array file, sparse directory or super-chunk
//! frame ([`set_attrs`], [`delete_attrs`]): an in-place change of the trailer, published
//! as every in-place change is (journaled header write, or a new `chunks.b2frame`), under
//! the writer's lock and python-blosc2's lock sidecar when it is used.
//!
//! [`ArrayMut`]: super::ArrayMut

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::format::frame::{not_regular, read_on_disk, Frame};
use crate::format::frame_writer::{attr_chunk, ChunkRef, Contents, FrameEdit};
use crate::format::journal;
use crate::format::lock::{writer_lock, FrameLock};
use crate::model::attrs::Value;
use crate::model::durability::Durability;
use std::path::Path;

/// Set user attributes (vlmeta) on an existing array file, sparse directory or super-chunk
/// frame, as one atomic in-place change (see `docs/in-place-writes.md`).
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.b2nd");
/// use b2nd::Value;
/// b2nd::ArrayBuilder::for_type::<u8>(&[4]).write(b2nd::Target::File(path.clone()), &[1u8, 2, 3, 4])?;
/// b2nd::write::set_attrs(&path, &[("unit", Value::Str("m".into()))])?;
/// b2nd::write::delete_attrs(&path, &["unit"])?;
/// assert!(b2nd::Array::open(&path)?.attrs()?.is_empty());
/// # Ok::<(), b2nd::Error>(())
/// ```
pub fn set_attrs(path: impl AsRef<Path>, attrs: &[(&str, Value)]) -> Result<()> {
    set_attrs_with(path.as_ref(), attrs, Durability::Disk)
}

/// [`set_attrs`] with what reaches the disk before it returns chosen.
pub(crate) fn set_attrs_with(
    path: &Path,
    attrs: &[(&str, Value)],
    durability: Durability,
) -> Result<()> {
    edit_vlmeta(path, durability, |vlmeta, source| {
        set_in(vlmeta, attrs, source)
    })
}

/// Delete user attributes (as [`set_attrs`], one change). Deleting an absent name is an
/// error, and nothing is changed then.
pub fn delete_attrs(path: impl AsRef<Path>, names: &[&str]) -> Result<()> {
    delete_attrs_with(path.as_ref(), names, Durability::Disk)
}

/// [`delete_attrs`] with what reaches the disk before it returns chosen.
pub(crate) fn delete_attrs_with(path: &Path, names: &[&str], durability: Durability) -> Result<()> {
    edit_vlmeta(path, durability, |vlmeta, source| {
        names
            .iter()
            .try_for_each(|name| delete_in(vlmeta, name, source))
    })
}

/// Set `attrs` in `vlmeta` (name, stored value), as c-blosc2 stores them: msgpack in a
/// Blosc2 chunk, names of 1 to 31 bytes.
pub(super) fn set_in(
    vlmeta: &mut Vec<(String, Vec<u8>)>,
    attrs: &[(&str, Value)],
    source: &str,
) -> Result<()> {
    for (name, value) in attrs {
        if name.is_empty() || name.len() >= 32 {
            return Err(Error::Attr {
                source_name: source.into(),
                name: (*name).into(),
                reason: "names have 1 to 31 bytes".into(),
            });
        }
        let stored = attr_chunk(&value.encode()).map_err(|e| Error::Attr {
            source_name: source.into(),
            name: (*name).into(),
            reason: format!("could not compress it ({e})"),
        })?;
        match vlmeta.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = stored,
            None => vlmeta.push((name.to_string(), stored)),
        }
    }
    Ok(())
}

/// Remove `name` from `vlmeta` (an error when it is not there).
pub(super) fn delete_in(
    vlmeta: &mut Vec<(String, Vec<u8>)>,
    name: &str,
    source: &str,
) -> Result<()> {
    let before = vlmeta.len();
    vlmeta.retain(|(n, _)| n != name);
    if vlmeta.len() == before {
        return Err(Error::Attr {
            source_name: source.into(),
            name: name.into(),
            reason: "no such attribute".into(),
        });
    }
    Ok(())
}

/// The frame at `path` with its attributes edited by `edit`, published in place.
fn edit_vlmeta(
    path: &Path,
    durability: Durability,
    edit: impl FnOnce(&mut Vec<(String, Vec<u8>)>, &str) -> Result<()>,
) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() && !meta.is_file() {
        return Err(Error::Frame {
            source_name: path.display().to_string(),
            reason: not_regular(&meta),
        });
    }
    let sparse = meta.is_dir();
    let _writer = writer_lock(path, path)?;
    if !sparse {
        journal::recover(path)?;
    }
    // python-blosc2's lock, when its users lock this frame: held exclusively (advancing its
    // generation counter, as every c-blosc2 writer does) from reading to publishing.
    let sidecar = FrameLock::open(path, sparse, true)?;
    let _held = sidecar.as_ref().map(FrameLock::exclusive).transpose()?;
    // Validated as a frame is for reading (header checks, parse) first.
    drop(Frame::open_for_writer(path)?);
    let file = if sparse {
        path.join("chunks.b2frame")
    } else {
        path.to_path_buf()
    };
    let disk = read_on_disk(&file, sparse)?;
    let mut vlmeta = disk.parts.vlmeta.clone();
    edit(&mut vlmeta, &path.display().to_string())?;
    let chunks = disk.offsets()?.into_iter().map(ChunkRef::Old).collect();
    FrameEdit {
        path,
        sparse,
        disk: &disk,
        durability,
    }
    .publish(Contents {
        chunks,
        vlmeta: &vlmeta,
        reshape: None,
    })?;
    Ok(())
}
