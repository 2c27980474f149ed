//! Attribute edits: the one way a frame's attributes (vlmeta) change, for [`ArrayMut`]
//! (`set_attrs`, `delete_attr`) and for any array file, sparse directory or super-chunk
//! frame ([`set_attrs`], [`delete_attrs`]): an in-place change of the trailer, published
//! as every in-place change is (journaled header write, or a new `chunks.b2frame`), under
//! the writer's lock and python-blosc2's lock sidecar when it is used.
//!
//! [`ArrayMut`]: super::ArrayMut

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::format::chunk::ChunkHeader;
use crate::format::frame::{not_regular, read_on_disk, Frame, OnDisk};
use crate::format::frame_writer::{attr_chunk, ChunkRef, Contents, FrameEdit, Sizes};
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
    edit_frame(path, durability, |_, vlmeta, source| {
        edit(vlmeta, source).map(|()| None)
    })
}

/// New last chunks of a super-chunk frame: the first `keep` chunks stay, `chunks` follow
/// them; and a metalayer's new content (of the same length) published with them.
pub(crate) struct Tail {
    pub(crate) keep: usize,
    pub(crate) chunks: Vec<Vec<u8>>,
    pub(crate) meta: Option<(&'static str, Vec<u8>)>,
}

/// A frame as an edit sees it: where it is and what it holds.
pub(crate) struct FrameAt<'a> {
    path: &'a Path,
    sparse: bool,
    pub(crate) disk: &'a OnDisk,
}

impl FrameAt<'_> {
    /// The bytes of chunk `n` (an error for a special chunk, which has none).
    pub(crate) fn chunk(&self, n: usize) -> Result<Vec<u8>> {
        self.read(n, None)
    }

    /// The decoded bytes chunk `n` holds (its header's).
    fn chunk_nbytes(&self, n: usize) -> Result<i64> {
        let head = self.read(n, Some(16))?;
        Ok(i64::from(i32::from_le_bytes([
            head[4], head[5], head[6], head[7],
        ])))
    }

    /// Chunk `n`'s first `len` bytes, or all of them.
    fn read(&self, n: usize, len: Option<usize>) -> Result<Vec<u8>> {
        let bad = |reason: String| Error::Chunk {
            source_name: self.path.display().to_string(),
            chunk: n as i64,
            reason,
        };
        let offsets = self.disk.offsets()?;
        let off = *offsets.get(n).ok_or_else(|| bad("no such chunk".into()))?;
        let off = u64::try_from(off).map_err(|_| bad("a special chunk".into()))?;
        let (file, at) = if self.sparse {
            (
                self.path.join(crate::format::frame::chunk_file_name(off)),
                0,
            )
        } else {
            (self.path.to_path_buf(), self.disk.header_len + off)
        };
        let io = |source| Error::Io {
            path: file.clone(),
            source,
        };
        let f = std::fs::File::open(&file).map_err(io)?;
        let mut head = [0u8; 16];
        crate::storage::read_at(&f, &mut head, at).ok_or_else(|| bad("truncated".into()))?;
        let cbytes = usize::try_from(i32::from_le_bytes([head[12], head[13], head[14], head[15]]))
            .ok()
            .filter(|&c| c >= 16 && at + c as u64 <= self.disk.frame_len.max(at + 16))
            .ok_or_else(|| bad("bad compressed size".into()))?;
        let mut out = vec![0u8; len.unwrap_or(cbytes).min(cbytes)];
        crate::storage::read_at(&f, &mut out, at).ok_or_else(|| bad("truncated".into()))?;
        Ok(out)
    }
}

/// The frame at `path` changed by `edit` (given the frame as read, its attributes to edit
/// and its name; returning new last chunks, if any), published in place as one change
/// under the writer's lock and python-blosc2's lock sidecar.
pub(crate) fn edit_frame(
    path: &Path,
    durability: Durability,
    edit: impl FnOnce(&FrameAt<'_>, &mut Vec<(String, Vec<u8>)>, &str) -> Result<Option<Tail>>,
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
    let source = path.display().to_string();
    let at = FrameAt {
        path,
        sparse,
        disk: &disk,
    };
    let tail = edit(&at, &mut vlmeta, &source)?;
    let mut chunks: Vec<ChunkRef> = disk.offsets()?.into_iter().map(ChunkRef::Old).collect();
    let sizes = match tail {
        None => Sizes::Keep,
        Some(Tail {
            keep,
            chunks: new,
            meta,
        }) => {
            chunks.truncate(keep);
            let mut sizes = (0..chunks.len())
                .map(|n| at.chunk_nbytes(n))
                .collect::<Result<Vec<i64>>>()?;
            for c in new {
                let h = ChunkHeader::parse(&c).map_err(|e| Error::Frame {
                    source_name: source.clone(),
                    reason: format!("a new chunk: {}", e.0),
                })?;
                sizes.push(h.nbytes as i64);
                chunks.push(ChunkRef::Bytes(c));
            }
            Sizes::Grown {
                nbytes: sizes.iter().sum(),
                chunksize: chunksize_of(&sizes),
                meta,
            }
        }
    };
    FrameEdit {
        path,
        sparse,
        disk: &disk,
        durability,
    }
    .publish(Contents {
        chunks,
        vlmeta: &vlmeta,
        sizes,
    })?;
    Ok(())
}

/// The chunk size a frame of chunks of `sizes` decoded bytes records, as c-blosc2 records
/// it: the first chunk's size while every chunk but the last has it and the last is no
/// larger, else 0 (none: 0).
fn chunksize_of(sizes: &[i64]) -> i32 {
    let Some((&first, rest)) = sizes.split_first() else {
        return 0;
    };
    let regular = match rest.split_last() {
        None => true,
        Some((&last, middle)) => middle.iter().all(|&s| s == first) && last <= first,
    };
    if regular {
        i32::try_from(first).unwrap_or(0)
    } else {
        0
    }
}
