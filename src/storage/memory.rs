//! Bytes already in memory ([`Memory`]), and a frame inside a larger source ([`Window`]).

#![forbid(unsafe_code)]

use std::sync::Arc;

use super::RangeRead;
use crate::error::{Error, Result};

/// Bytes held in memory.
pub(crate) struct Memory {
    bytes: Vec<u8>,
}

impl Memory {
    /// Hold `bytes`.
    pub(crate) fn new(bytes: Vec<u8>) -> Memory {
        Memory { bytes }
    }
}

/// A read past the end of `location`'s `size` bytes.
fn past_end(location: String) -> Error {
    Error::Io {
        path: location.into(),
        source: std::io::ErrorKind::UnexpectedEof.into(),
    }
}

impl RangeRead for Memory {
    fn location(&self) -> String {
        "<memory>".into()
    }

    fn size(&self) -> Result<u64> {
        Ok(self.bytes.len() as u64)
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (pos, buf) in reads.iter_mut() {
            let src = usize::try_from(*pos)
                .ok()
                .and_then(|p| self.bytes.get(p..p.checked_add(buf.len())?))
                .ok_or_else(|| past_end(self.location()))?;
            buf.copy_from_slice(src);
        }
        Ok(())
    }
}

/// The bytes of another source from `offset` to its end: a frame embedded in a larger file.
pub(crate) struct Window {
    inner: Arc<dyn RangeRead>,
    offset: u64,
}

impl Window {
    /// The bytes of `inner` from `offset` on (which must not be past its end).
    pub(crate) fn new(inner: Arc<dyn RangeRead>, offset: u64) -> Result<Window> {
        if offset > inner.size()? {
            return Err(past_end(inner.location()));
        }
        Ok(Window { inner, offset })
    }
}

impl RangeRead for Window {
    fn location(&self) -> String {
        format!("{}@{}", self.inner.location(), self.offset)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.inner.size()?.saturating_sub(self.offset))
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        for (pos, _) in reads.iter_mut() {
            *pos = pos
                .checked_add(self.offset)
                .ok_or_else(|| past_end(self.location()))?;
        }
        self.inner.read_vectored_at(reads)
    }

    fn read_each(
        &self,
        reads: &[(u64, usize)],
        piece: &mut (dyn FnMut(usize, Result<super::Piece>) -> bool + Send),
    ) {
        let moved: Option<Vec<(u64, usize)>> = reads
            .iter()
            .map(|&(p, l)| p.checked_add(self.offset).map(|p| (p, l)))
            .collect();
        match moved {
            Some(m) => self.inner.read_each(&m, piece),
            None => {
                for i in 0..reads.len() {
                    if !piece(i, Err(past_end(self.location()))) {
                        return;
                    }
                }
            }
        }
    }

    fn prefetch(&self, ranges: &[(u64, usize)]) {
        let moved: Vec<(u64, usize)> = ranges
            .iter()
            .filter_map(|&(p, l)| p.checked_add(self.offset).map(|p| (p, l)))
            .collect();
        self.inner.prefetch(&moved);
    }

    fn chunk_cache_budget(&self) -> usize {
        self.inner.chunk_cache_budget()
    }
}
