//! The storage layer: where a frame's bytes live, read by ranges. Everything above it (the
//! frame parser, chunk fetches, stores and tables) asks for byte ranges through
//! [`RangeRead`] and [`Directory`] and never opens a file itself; c-blosc2 only ever sees
//! chunks already in memory.
//!
//! Backends: [`LocalFile`] (`pread`), [`LocalDir`] (a sparse frame's directory), [`Memory`],
//! and [`Window`] (a frame at an offset inside another source: an embedded frame, a `.b2z`
//! member).

#![forbid(unsafe_code)]

#[cfg(feature = "remote")]
mod kept;
mod local;
mod memory;
#[cfg(feature = "remote")]
mod remote;

use std::sync::Arc;

use crate::error::Result;

pub(crate) use local::{parent_dir, read_at, sync_dir, LocalDir, LocalFile};
pub(crate) use memory::{Memory, Window};
#[cfg(feature = "remote")]
pub use remote::{list_url, RemoteOptions};
#[cfg(feature = "remote")]
pub(crate) use remote::{RemoteDir, RemoteEntry, RemoteFrame};

/// Bytes a source hands over as they arrived: owned, in whatever buffer holds them (a
/// response's own, a `Vec`), so that keeping them needs no copy.
pub(crate) type Piece = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Bytes read by ranges: the one thing a read needs from where the data lives.
pub(crate) trait RangeRead: Send + Sync {
    /// Where the bytes live, for errors (a path, `path@offset`, `<memory>`).
    fn location(&self) -> String;

    /// How many bytes there are.
    fn size(&self) -> Result<u64>;

    /// Fill each buffer with the bytes starting at its position: all of them, or an error
    /// (a range past the end is one). A backend may coalesce the requests and run them
    /// concurrently; they do not overlap.
    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()>;

    /// Read each `(pos, len)` range, handing its bytes to `piece` as they arrive (as the
    /// backend holds them: a response's buffers are handed over, not copied):
    /// `piece(i, Ok(bytes))` for consecutive pieces of range `i`, in order, until its `len`
    /// bytes were handed over, or `piece(i, Err(e))` once when it fails (perhaps after some
    /// pieces of it). A remote backend runs the requests concurrently and streams each
    /// response, so pieces of different ranges interleave; this default reads the ranges in
    /// order, each in one piece. When `piece` returns `false` the reads not finished are
    /// dropped.
    fn read_each(
        &self,
        reads: &[(u64, usize)],
        piece: &mut (dyn FnMut(usize, Result<Piece>) -> bool + Send),
    ) {
        for (i, &(pos, len)) in reads.iter().enumerate() {
            let go_on = match self.read_range(pos, len) {
                Ok(b) => piece(i, Ok(Box::new(b))),
                Err(e) => piece(i, Err(e)),
            };
            if !go_on {
                return;
            }
        }
    }

    /// A hint: `ranges` (`(pos, len)`, in any order, possibly overlapping) will be read
    /// soon. A remote backend fetches them now, concurrently, and keeps them for those reads;
    /// local ones ignore it. Errors are left for the reads to meet.
    fn prefetch(&self, _ranges: &[(u64, usize)]) {}

    /// How many bytes of compressed chunks a frame on this source keeps in memory and
    /// fetches ahead of its readers (0: none; local sources are read directly).
    fn chunk_cache_budget(&self) -> usize {
        0
    }

    /// Read `len` bytes at `pos`.
    fn read_range(&self, pos: u64, len: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.read_vectored_at(&mut [(pos, &mut buf[..])])?;
        Ok(buf)
    }
}

/// A directory of named byte sources: a sparse frame (`chunks.b2frame` and one
/// `%08X.chunk` file per chunk).
pub(crate) trait Directory: Send + Sync {
    /// The source named `name` inside it.
    fn file(&self, name: &str) -> Result<Arc<dyn RangeRead>>;
}

/// Cut `buf` into consecutive parts as long as the `ranges` (of a source, from `base`),
/// each paired with its range's start: the requests for [`RangeRead::read_vectored_at`]
/// that fill one buffer with those ranges packed one after another.
pub(crate) fn packed_reads<'a>(
    buf: &'a mut [u8],
    base: u64,
    ranges: &[std::ops::Range<usize>],
) -> Vec<(u64, &'a mut [u8])> {
    let mut out = Vec::with_capacity(ranges.len());
    let mut rest = buf;
    for r in ranges {
        let n = r.len().min(rest.len());
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(n);
        out.push((base + r.start as u64, part));
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_reads_fill_the_buffer_in_order() {
        let src = Memory::new((0u8..100).collect());
        let mut buf = vec![0xffu8; 18];
        let mut reads = packed_reads(&mut buf, 50, &[0..4, 10..12, 30..40]);
        src.read_vectored_at(&mut reads).unwrap();
        assert_eq!(&buf[..4], &[50, 51, 52, 53]);
        assert_eq!(&buf[4..6], &[60, 61]);
        assert_eq!(&buf[6..16], &(80u8..90).collect::<Vec<_>>()[..]);
        assert_eq!(&buf[16..], &[0xff; 2]);
    }

    #[test]
    fn reads_past_the_end_fail_on_every_backend() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, (0u8..64).collect::<Vec<_>>()).unwrap();
        let file: Arc<dyn RangeRead> = Arc::new(LocalFile::open(&p).unwrap());
        let mem: Arc<dyn RangeRead> = Arc::new(Memory::new((0u8..64).collect()));
        let win: Arc<dyn RangeRead> = Arc::new(Window::new(file.clone(), 16).unwrap());
        for (s, len) in [(&file, 64u64), (&mem, 64), (&win, 48)] {
            assert_eq!(s.size().unwrap(), len);
            let first = if len == 48 { 16 } else { 0 };
            assert_eq!(
                s.read_range(2, 3).unwrap(),
                [first + 2, first + 3, first + 4]
            );
            assert!(s.read_range(len - 2, 3).is_err(), "{}", s.location());
            assert!(s.read_range(u64::MAX - 1, 3).is_err());
        }
        assert_eq!(win.location(), format!("{}@16", p.display()));
        let d = LocalDir::new(dir.path());
        assert_eq!(d.file("f").unwrap().read_range(63, 1).unwrap(), [63]);
        assert!(d.file("missing").is_err());
    }
}
