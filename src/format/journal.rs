//! [`Journal`]: the sidecar `<file>.b2nd-journal` that makes an in-place change's header
//! update recoverable even if the header write itself is torn: the old and the new header,
//! with a checksum. It exists only while a header is being replaced.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use super::zip::crc32;

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
