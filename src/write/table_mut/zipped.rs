//! A table saved as a zip (`.b2z`) changed as python-blosc2 changes one: its members are
//! unpacked into a staging directory beside it (`.NAME.b2nd-*.tmp`), every change is made
//! there as on a `.b2d`, and after each change the directory is packed into a new zip beside
//! the table (stored members, the largest first and `embed.b2e` last, python-blosc2's
//! order) and renamed over it: readers see the whole old zip or the whole new one, never a
//! torn one. The writer's lock is taken on the new zip before the rename, so it holds
//! across; a kill leaves the old zip and staging files, which the next
//! [`TableMut::open`](super::TableMut::open) removes.

#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::lock::writer_lock;
use crate::format::zip::{ZipIndex, ZipWriter};
use crate::model::durability::Durability;
use crate::storage::{LocalFile, RangeRead};

/// The store member python-blosc2 writes last in a `.b2z`.
const EMBED_FILE: &str = "embed.b2e";

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Io { path, source }
}

/// A `.b2z` table being changed: the zip, the directory its members are unpacked in, and
/// the writer's lock on the zip.
#[derive(Debug)]
pub(super) struct Zipped {
    zip: PathBuf,
    /// The prefix of this table's staging names beside the zip.
    prefix: String,
    staging: tempfile::TempDir,
    _lock: File,
}

impl Zipped {
    /// Unpack the members of the zip at `zip` (whose writer's lock `lock` holds) into a
    /// staging directory beside it, named with `prefix`.
    pub(super) fn unpack(zip: &Path, prefix: &str, lock: File) -> Result<Zipped> {
        let parent = match zip.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let staging = tempfile::Builder::new()
            .prefix(prefix)
            .suffix(".tmp")
            .tempdir_in(&parent)
            .map_err(io(&parent))?;
        let z = Zipped {
            zip: zip.to_path_buf(),
            prefix: prefix.to_string(),
            staging,
            _lock: lock,
        };
        z.fill()?;
        Ok(z)
    }

    /// Put the old zip's members back in the directory (after a failed publish).
    pub(super) fn reset(&self) -> Result<()> {
        let dir = self.dir();
        std::fs::remove_dir_all(&dir).map_err(io(&dir))?;
        self.fill()
    }

    /// Unpack the zip's members into the (absent) directory.
    fn fill(&self) -> Result<()> {
        let zip = &self.zip;
        let dir = self.dir();
        std::fs::create_dir(&dir).map_err(io(&dir))?;
        let src = LocalFile::open(zip)?;
        let len = src.size()?;
        let index = ZipIndex::read(&src, len).map_err(|m| Error::Store {
            path: zip.display().to_string(),
            reason: format!("not a zip python-blosc2 writes: {}", m.0),
        })?;
        let mut file = File::open(zip).map_err(io(zip))?;
        for e in &index.entries {
            if !e.stored {
                return Err(Error::Store {
                    path: zip.display().to_string(),
                    reason: format!(
                        "member {:?} is compressed (python-blosc2 stores them)",
                        e.name
                    ),
                });
            }
            let to = dir.join(&e.name);
            if let Some(d) = to.parent() {
                std::fs::create_dir_all(d).map_err(io(d))?;
            }
            file.seek(SeekFrom::Start(e.data_offset)).map_err(io(zip))?;
            let mut out = File::create(&to).map_err(io(&to))?;
            let copied = std::io::copy(&mut (&mut file).take(e.size), &mut out).map_err(io(&to))?;
            if copied != e.size {
                return Err(Error::Store {
                    path: zip.display().to_string(),
                    reason: format!("member {:?} ends past the end of the file", e.name),
                });
            }
        }
        Ok(())
    }

    /// The zip.
    pub(super) fn zip(&self) -> &Path {
        &self.zip
    }

    /// The directory the table is unpacked in.
    pub(super) fn dir(&self) -> PathBuf {
        self.staging.path().join("table.b2d")
    }

    /// Pack the directory into a new zip beside the old one and rename it over it, the
    /// writer's lock moved to the new zip first.
    pub(super) fn publish(&mut self, durability: Durability) -> Result<()> {
        let dir = self.dir();
        let mut files = Vec::new();
        collect(&dir, &dir, &mut files)?;
        // python-blosc2's order: the largest members first, `embed.b2e` last.
        files.sort_by_key(|(name, size)| (name == EMBED_FILE, std::cmp::Reverse(*size)));
        let parent = self
            .staging
            .path()
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let tmp = tempfile::Builder::new()
            .prefix(&self.prefix)
            .suffix(".tmp")
            .tempfile_in(&parent)
            .map_err(io(&parent))?;
        let tpath = tmp.path().to_path_buf();
        let mut w = ZipWriter::new(std::io::BufWriter::new(tmp.as_file()));
        for (name, _) in &files {
            let data = std::fs::read(dir.join(name)).map_err(io(&dir.join(name)))?;
            w.add(name, &data).map_err(io(&tpath))?;
        }
        let mut out = w.finish().map_err(io(&tpath))?;
        out.flush().map_err(io(&tpath))?;
        drop(out);
        if let Ok(m) = std::fs::metadata(&self.zip) {
            tmp.as_file()
                .set_permissions(m.permissions())
                .map_err(io(&tpath))?;
        }
        if durability == Durability::Disk {
            tmp.as_file().sync_all().map_err(io(&tpath))?;
        }
        let lock = writer_lock(&self.zip, &tpath)?;
        tmp.persist(&self.zip).map_err(|e| Error::Io {
            path: self.zip.clone(),
            source: e.error,
        })?;
        if durability == Durability::Disk {
            if let Ok(d) = File::open(&parent) {
                let _ = d.sync_all();
            }
        }
        self._lock = lock;
        Ok(())
    }
}

/// The files under `dir` (paths relative to `root`, `/`-separated) with their sizes.
fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, u64)>) -> Result<()> {
    for e in std::fs::read_dir(dir).map_err(io(dir))? {
        let e = e.map_err(io(dir))?;
        let p = e.path();
        let kind = e.file_type().map_err(io(&p))?;
        if kind.is_dir() {
            collect(root, &p, out)?;
        } else {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let name = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            let size = e.metadata().map_err(io(&p))?.len();
            out.push((name, size));
        }
    }
    Ok(())
}
