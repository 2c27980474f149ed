//! [`Journal`]: the sidecar `<file>.b2nd-journal` that makes an in-place change's header
//! update recoverable even if the header write itself is torn: the old and the new header,
//! with a checksum. It exists only while a header is being replaced.

#![forbid(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::zip::crc32;
use crate::error::{Error, Result};
use crate::model::durability::Durability;
use crate::storage::{parent_dir, sync_dir};

const MAGIC: &[u8; 8] = b"B2NDJRN1";

/// The two headers of one publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Journal {
    /// The header before the change.
    pub(crate) old: Vec<u8>,
    /// The header that publishes the change (same length).
    pub(crate) new: Vec<u8>,
}

/// A frame header compared with a journal's two copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderState {
    /// The header before the change: not published.
    Old,
    /// The header that publishes the change.
    New,
    /// Each byte from one copy or the other: a header write cut short.
    Torn,
    /// Neither: the journal belongs to some other file or version.
    Foreign,
}

/// Where the journal of the frame file `path` lives.
pub(crate) fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".b2nd-journal");
    path.with_file_name(name)
}

impl Journal {
    /// The journal's bytes: magic, both headers with their lengths, CRC-32 of all before.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(20 + self.old.len() + self.new.len());
        b.extend_from_slice(MAGIC);
        for h in [&self.old, &self.new] {
            b.extend_from_slice(&(h.len() as u32).to_le_bytes());
            b.extend_from_slice(h);
        }
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }

    /// Parse a journal; `None` when it is incomplete or damaged (a journal whose write was
    /// interrupted: the header write it guards had not started).
    pub(crate) fn decode(b: &[u8]) -> Option<Journal> {
        let body = b.get(..b.len().checked_sub(4)?)?;
        let crc = u32::from_le_bytes(b[body.len()..].try_into().ok()?);
        if !body.starts_with(MAGIC) || crc32(body) != crc {
            return None;
        }
        let mut at = MAGIC.len();
        let mut take = || {
            let n = u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?) as usize;
            let h = body.get(at + 4..at + 4 + n)?.to_vec();
            at += 4 + n;
            Some(h)
        };
        let (old, new) = (take()?, take()?);
        (old.len() == new.len() && at == body.len()).then_some(Journal { old, new })
    }

    /// How the header `head` found in the file relates to this journal.
    pub(crate) fn state_of(&self, head: &[u8]) -> HeaderState {
        if head == self.new.as_slice() {
            HeaderState::New
        } else if head == self.old.as_slice() {
            HeaderState::Old
        } else if head.len() == self.new.len()
            && head
                .iter()
                .zip(self.old.iter().zip(&self.new))
                .all(|(h, (o, n))| h == o || h == n)
        {
            HeaderState::Torn
        } else {
            HeaderState::Foreign
        }
    }

    /// Read the journal of `path`, if there is a valid one.
    pub(crate) fn read(path: &Path) -> Option<Journal> {
        // Only a regular file: reading a FIFO left under the journal's name would wait.
        let jpath = journal_path(path);
        if !std::fs::metadata(&jpath).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let bytes = std::fs::read(jpath).ok()?;
        Journal::decode(&bytes)
    }
}

/// Finish what an interrupted header publication left: a valid journal means all the data
/// its new header refers to was made durable before it was written, so the new header is
/// written (again) when the file holds the old one or a mix of both (a torn write); then the
/// journal is removed. An invalid (incomplete) journal means the header write had not
/// started: it is removed. A valid journal whose headers the file matches in no way belongs
/// to another file (copied or left beside this one) and is refused, never applied.
pub(crate) fn recover(path: &Path) -> Result<()> {
    let jpath = journal_path(path);
    if std::fs::symlink_metadata(&jpath).is_err() {
        return Ok(());
    }
    if let Some(j) = Journal::read(path) {
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        let mut head = vec![0u8; j.new.len()];
        let state = match crate::storage::read_at(&f, &mut head, 0) {
            Some(()) => j.state_of(&head),
            None => HeaderState::Foreign,
        };
        match state {
            HeaderState::New => {}
            HeaderState::Old | HeaderState::Torn => {
                f.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
                f.write_all(&j.new).map_err(io_err(path))?;
                f.sync_data().map_err(io_err(path))?;
            }
            HeaderState::Foreign => {
                return Err(Error::Frame {
                    source_name: path.display().to_string(),
                    reason: format!(
                        "{} belongs to another file or version (its headers match neither \
                         this file's header nor a mix of them): remove it to change this array",
                        jpath.display()
                    ),
                });
            }
        }
    }
    std::fs::remove_file(&jpath).map_err(io_err(&jpath))?;
    Ok(())
}

/// Publish `new` over `old` (the header at the start of `f`): journal (made durable with its
/// directory entry), header write, sync, journal removed. A crash before the header write
/// leaves the old contents; a torn header write is finished from the journal by the next
/// in-place open (`ArrayMut::open`). With [`Durability::Process`] nothing is synced (same
/// order of writes).
pub(crate) fn publish_header(
    path: &Path,
    f: &mut File,
    old: &[u8],
    new: &[u8],
    durability: Durability,
) -> Result<()> {
    let sync = durability.syncs();
    let jpath = journal_path(path);
    let journal = Journal {
        old: old.to_vec(),
        new: new.to_vec(),
    }
    .encode();
    let saved = File::create(&jpath).and_then(|mut j| {
        j.write_all(&journal)?;
        if sync {
            j.sync_all()?;
        }
        Ok(())
    });
    if let Err(e) = saved {
        // Nothing refers to a journal that is not complete (e.g. on a full disk): the
        // header is untouched, so the change simply did not happen.
        let _ = std::fs::remove_file(&jpath);
        return Err(io_err(&jpath)(e));
    }
    if sync {
        sync_dir(&parent_dir(path));
    }
    crash_point("header");
    let written = f
        .seek(SeekFrom::Start(0))
        .and_then(|_| write_header(f, new))
        .and_then(|_| if sync { f.sync_data() } else { Ok(()) });
    if let Err(e) = written {
        // Put the old header back and drop the journal; if that fails too, the journal
        // stays and the next open finishes the change (its data is durable).
        let restored = f
            .seek(SeekFrom::Start(0))
            .and_then(|_| f.write_all(old))
            .and_then(|_| f.sync_data());
        if restored.is_ok() {
            let _ = std::fs::remove_file(&jpath);
        }
        return Err(io_err(path)(e));
    }
    std::fs::remove_file(&jpath).map_err(io_err(&jpath))?;
    Ok(())
}

/// The header write.
fn write_header(f: &mut File, new: &[u8]) -> std::io::Result<()> {
    f.write_all(new)
}

/// A fault-injection point for the crash tests, in debug builds only:
/// `B2ND_TEST_CRASH_AT=<name>` makes the process exit abruptly there.
pub(crate) fn crash_point(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("B2ND_TEST_CRASH_AT").as_deref() == Ok(name) {
        std::process::exit(87);
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_every_truncation() {
        let j = Journal {
            old: vec![1, 2, 3],
            new: vec![4, 5, 6],
        };
        let b = j.encode();
        assert_eq!(Journal::decode(&b).as_ref(), Some(&j));
        for cut in 0..b.len() {
            assert_eq!(Journal::decode(&b[..cut]), None);
        }
        assert_eq!(j.state_of(&[1, 2, 3]), HeaderState::Old);
        assert_eq!(j.state_of(&[4, 5, 6]), HeaderState::New);
        assert_eq!(j.state_of(&[4, 2, 6]), HeaderState::Torn);
        assert_eq!(j.state_of(&[4, 9, 6]), HeaderState::Foreign);
        assert_eq!(j.state_of(&[4, 5]), HeaderState::Foreign);
        let mut bad = b.clone();
        bad[10] ^= 1;
        assert_eq!(Journal::decode(&bad), None);
        assert_eq!(
            journal_path(Path::new("/a/b.b2nd")),
            Path::new("/a/b.b2nd.b2nd-journal")
        );
    }
}
