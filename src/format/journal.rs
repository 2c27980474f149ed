//! [`Journal`]: the record that makes an in-place change's header write recoverable even if
//! the write itself is torn: the old and the new header, with a checksum. It is written at
//! the end of the frame file, right after the change's new chunks, index and trailer (past
//! the new frame's end, where no reader looks), made durable with them by one sync, and cut
//! off again once the new header is durable.
//!
//! The record is trusted only when the header is a mix of its two copies (a torn header
//! write). The header write starts after the sync, so then the record and the data it
//! publishes are durable. A header still equal to the old copy means the change was not
//! published (its data may not have reached the disk): it is rolled back.

#![forbid(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use super::parts::header_frame_len;
use super::zip::crc32;
use crate::error::{Error, Result};
use crate::model::durability::Durability;
use crate::storage::read_at;

/// The record's first bytes.
const MAGIC: &[u8; 8] = b"B2NDJRN2";
/// The record's last bytes (after the length of what precedes them), found from the file's end.
const END: &[u8; 8] = b"B2NDJEND";
/// The largest record read back: two headers (a few hundred bytes each, plus metalayers).
const MAX_RECORD: u64 = 1 << 26;

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
    /// Neither: the record belongs to some other version of the file.
    Foreign,
}

impl Journal {
    /// The record's bytes: magic, both headers with their lengths, CRC-32 of all before,
    /// then the length of all that and the end magic.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(32 + self.old.len() + self.new.len());
        b.extend_from_slice(MAGIC);
        for h in [&self.old, &self.new] {
            b.extend_from_slice(&(h.len() as u32).to_le_bytes());
            b.extend_from_slice(h);
        }
        let crc = crc32(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        let n = b.len() as u32;
        b.extend_from_slice(&n.to_le_bytes());
        b.extend_from_slice(END);
        b
    }

    /// Parse a whole record; `None` when it is incomplete or damaged.
    pub(crate) fn decode(b: &[u8]) -> Option<Journal> {
        let b = b.strip_suffix(END)?;
        let (b, n) = b.split_at(b.len().checked_sub(4)?);
        if u32::from_le_bytes(n.try_into().ok()?) as usize != b.len() {
            return None;
        }
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

    /// The record that ends a file of `len` bytes read by `read` (buffer, position), and
    /// where it starts, if there is a valid one right after the frame its new header
    /// describes.
    pub(crate) fn at_end(
        len: u64,
        read: impl Fn(&mut [u8], u64) -> Option<()>,
    ) -> Option<(Journal, u64)> {
        let mut tail = [0u8; 12];
        read(&mut tail, len.checked_sub(12)?)?;
        if &tail[4..] != END {
            return None;
        }
        let total = u64::from(u32::from_le_bytes(tail[..4].try_into().ok()?)) + 12;
        if total > len.min(MAX_RECORD) {
            return None;
        }
        let at = len - total;
        let mut b = vec![0u8; total as usize];
        read(&mut b, at)?;
        let j = Journal::decode(&b)?;
        (header_frame_len(&j.new) == Some(at)).then_some((j, at))
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

    /// The record ending the file `f`, with the state of the file's header against it.
    fn in_file(f: &File) -> Option<(Journal, u64, HeaderState)> {
        let len = f.metadata().ok()?.len();
        let (j, at) = Journal::at_end(len, |b, pos| read_at(f, b, pos))?;
        let mut head = vec![0u8; j.new.len()];
        let state = match read_at(f, &mut head, 0) {
            Some(()) => j.state_of(&head),
            None => HeaderState::Foreign,
        };
        Some((j, at, state))
    }
}

/// Finish or undo what an interrupted publication left at the end of the frame file `path`:
/// - a torn header (a mix of the record's two copies): the record and the data it publishes
///   were durable before the header write began, so the new header is written again;
/// - the old header: the change was not published, and its data may not be durable: the
///   appended bytes are cut off;
/// - the new header: published; the record is cut off;
/// - neither: a record some other version of the file left past its frame (a writer that
///   does not know records changed it since): dead bytes, never applied.
pub(crate) fn recover(path: &Path) -> Result<()> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io_err(path))?;
    let Some((j, at, state)) = Journal::in_file(&f) else {
        return Ok(());
    };
    match state {
        HeaderState::New => f.set_len(at).map_err(io_err(path))?,
        HeaderState::Torn => {
            f.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
            f.write_all(&j.new).map_err(io_err(path))?;
            f.sync_data().map_err(io_err(path))?;
            f.set_len(at).map_err(io_err(path))?;
        }
        HeaderState::Old => {
            if let Some(end) = header_frame_len(&j.old).filter(|&end| end <= at) {
                f.set_len(end).map_err(io_err(path))?;
            }
        }
        HeaderState::Foreign => {}
    }
    Ok(())
}

/// Whether a frame file of `len` bytes read by `read` (buffer, position) starts with a
/// header an interrupted publication left torn (a mix of the two copies of the record at
/// its end), which no reader may read.
pub(crate) fn torn(len: u64, read: impl Fn(&mut [u8], u64) -> Option<()>) -> bool {
    let Some((j, _)) = Journal::at_end(len, &read) else {
        return false;
    };
    let mut head = vec![0u8; j.new.len()];
    read(&mut head, 0).is_some() && j.state_of(&head) == HeaderState::Torn
}

/// Publish `new` over `old`, the header at the start of `f`, whose record (see
/// [`Journal::encode`]) ends the file and is durable with the data: one header write, and
/// a sync. A crash before the write leaves the old contents; a torn write is finished by
/// the next in-place open (`ArrayMut::open`). If the write fails, the old header is put
/// back and the file cut to `old_end` (if even that fails, the record stays, and the next
/// open finishes or undoes the change). With [`Durability::Process`] nothing is synced.
pub(crate) fn publish_header(
    path: &Path,
    f: &mut File,
    old: &[u8],
    new: &[u8],
    old_end: u64,
    durability: Durability,
) -> Result<()> {
    crash_point("header");
    let written = f
        .seek(SeekFrom::Start(0))
        .and_then(|_| write_header(f, new))
        .and_then(|_| {
            if durability.syncs() {
                f.sync_data()
            } else {
                Ok(())
            }
        });
    if let Err(e) = written {
        let restored = f
            .seek(SeekFrom::Start(0))
            .and_then(|_| f.write_all(old))
            .and_then(|_| f.sync_data());
        if restored.is_ok() {
            let _ = f.set_len(old_end);
        }
        return Err(io_err(path)(e));
    }
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

    /// A header whose frame length field says `len`.
    fn header(len: u64, fill: u8) -> Vec<u8> {
        let mut h = vec![fill; 30];
        h[15] = 0xcf;
        h[16..24].copy_from_slice(&len.to_be_bytes());
        h
    }

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
            assert_eq!(Journal::decode(&b[cut + 1..]), None);
        }
        assert_eq!(j.state_of(&[1, 2, 3]), HeaderState::Old);
        assert_eq!(j.state_of(&[4, 5, 6]), HeaderState::New);
        assert_eq!(j.state_of(&[4, 2, 6]), HeaderState::Torn);
        assert_eq!(j.state_of(&[4, 9, 6]), HeaderState::Foreign);
        assert_eq!(j.state_of(&[4, 5]), HeaderState::Foreign);
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 1;
            assert_eq!(Journal::decode(&bad), None, "byte {i} flipped");
        }
    }

    /// The record is found at the end of a file only where its new header says the frame
    /// ends, and only whole.
    #[test]
    fn found_at_the_end_right_after_its_frame() {
        let j = Journal {
            old: header(40, 1),
            new: header(50, 2),
        };
        let mut file = vec![7u8; 50];
        file.extend_from_slice(&j.encode());
        let read = |f: &[u8]| {
            let f = f.to_vec();
            move |b: &mut [u8], pos: u64| {
                b.copy_from_slice(f.get(pos as usize..pos as usize + b.len())?);
                Some(())
            }
        };
        let len = file.len() as u64;
        assert_eq!(Journal::at_end(len, read(&file)), Some((j.clone(), 50)));
        // Anywhere else, or cut short, or followed by anything: not a record.
        let mut moved = vec![7u8; 51];
        moved.extend_from_slice(&j.encode());
        assert_eq!(Journal::at_end(len + 1, read(&moved)), None);
        for cut in 0..file.len() {
            assert_eq!(Journal::at_end(cut as u64, read(&file[..cut])), None);
        }
        let mut more = file.clone();
        more.push(0);
        assert_eq!(Journal::at_end(len + 1, read(&more)), None);
        // A torn header is seen as such; old and new ones are not.
        let mut torn_file = file.clone();
        torn_file[16..20].copy_from_slice(&j.new[16..20]);
        torn_file[20..30].copy_from_slice(&j.old[20..30]);
        torn_file[..16].copy_from_slice(&j.new[..16]);
        assert!(torn(len, read(&torn_file)));
        assert!(!torn(len, read(&file)));
        let mut new_file = file.clone();
        new_file[..30].copy_from_slice(&j.new);
        assert!(!torn(len, read(&new_file)));
    }
}
