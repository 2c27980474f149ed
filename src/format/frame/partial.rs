//! Partial chunks: only the blocks a read needs fetched from a chunk, assembled into a
//! chunk of their own that its header and block offsets describe.

#![forbid(unsafe_code)]

use super::*;

impl Frame {
    /// Fetch only what decoding the blocks flagged in `wanted` needs from chunk `n`: the
    /// chunk header, block offsets (and dictionary), and those blocks' bytes (plus block 0
    /// when the chunk has DELTA), packed one after another in one vectored read, as a chunk
    /// of its own whose header and offsets say so (its length, each read block's start; a
    /// block left out points at a read one). Such a chunk must be decoded with the same mask
    /// ([`Target::Blocks`](crate::codec::chunk::Target::Blocks) or
    /// [`Target::Runs`](crate::codec::chunk::Target::Runs) with `partial`), which never
    /// reads the blocks left out. A chunk the cache fetches ahead gives its bytes as soon as
    /// they arrived, however many blocks are wanted (a copy of those blocks only).
    ///
    /// Returns `false`, with `out` unspecified, when this does not apply or would not save
    /// much (special or uncompressed chunks, most blocks wanted of a chunk not fetched
    /// ahead, anything unexpected): the caller then fetches the whole chunk, which also
    /// reports any error.
    pub(crate) fn chunk_blocks_into(
        &self,
        n: u64,
        wanted: &[bool],
        block_bytes: usize,
        out: &mut ChunkBytes,
    ) -> bool {
        // A chunk fetched ahead (or on its way): its blocks are taken from the cache as soon
        // as their bytes arrived, however many are wanted.
        let cached = self.cache.as_ref().is_some_and(|c| c.has(n));
        // A changed file fails here; the caller's whole-chunk fetch then reports it.
        let Ok(_shared) = self.share() else {
            return false;
        };
        self.try_chunk_blocks_into(n, wanted, block_bytes, out, cached)
            .unwrap_or(false)
            && self.unchanged()
    }

    pub(super) fn try_chunk_blocks_into(
        &self,
        n: u64,
        wanted: &[bool],
        block_bytes: usize,
        out: &mut ChunkBytes,
        cached: bool,
    ) -> Option<bool> {
        let nblocks = wanted.len();
        let nwanted = wanted.iter().filter(|&&w| w).count();
        if nwanted == 0 || (!cached && 2 * nwanted > nblocks) {
            return Some(false);
        }
        let (sparse_file, in_cache);
        let (src, base, end): (&dyn RangeRead, u64, u64) = match (self.entry(n).ok()?, &self.bytes)
        {
            (Entry::Special(_), _) => return Some(false), // nothing to read
            (Entry::File(number), FrameBytes::Sparse { dir, .. }) => {
                sparse_file = dir.file(&chunk_file_name(number.into())).ok()?;
                let len = sparse_file.size().ok()?;
                (sparse_file.as_ref(), 0, len)
            }
            (Entry::At(offset), FrameBytes::Contiguous(src)) => {
                let at = u64::from(self.header.header_len).checked_add(offset)?;
                let src: &dyn RangeRead = match (&self.cache, cached) {
                    (Some(cache), true) => {
                        in_cache = crate::format::chunk_cache::CachedChunk {
                            cache,
                            n,
                            base: at,
                            src: src.as_ref(),
                        };
                        &in_cache
                    }
                    _ => src.as_ref(),
                };
                (src, at, self.header.frame_len)
            }
            _ => return None,
        };
        // The chunk header and its block offsets, in one read (one request remotely).
        let bstarts_end = EXTENDED_HEADER_LEN.checked_add(nblocks.checked_mul(4)?)?;
        if base.checked_add(bstarts_end as u64)? > end {
            return Some(false);
        }
        let head = src.read_range(base, bstarts_end).ok()?;
        let ch = ChunkHeader::parse(&head[..EXTENDED_HEADER_LEN]).ok()?;
        if !ch.maskable(nblocks, block_bytes)
            || ch.memcpyed()
            || ch.cbytes < bstarts_end
            || base.checked_add(ch.cbytes as u64)? > end
        {
            return Some(false);
        }
        let raw = &head[EXTENDED_HEADER_LEN..];
        let starts: Vec<usize> = raw
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .map(|x| {
                usize::try_from(x)
                    .ok()
                    .filter(|&x| x >= bstarts_end && x < ch.cbytes)
            })
            .collect::<Option<_>>()?;
        // Blocks are stored in the order they were compressed (not necessarily block order):
        // each one ends where the next stored one starts, the last at the chunk's end.
        let mut sorted = starts.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|p| p[0] == p[1]) {
            return Some(false);
        }
        let end_of = |start: usize| {
            let i = sorted.partition_point(|&x| x <= start);
            sorted.get(i).copied().unwrap_or(ch.cbytes)
        };
        // Byte ranges to read: what lies between the offsets and the first block (a
        // dictionary), then each needed block; the header and offsets are already here.
        let mut ranges = Vec::with_capacity(starts.len() + 1);
        ranges.push(bstarts_end..sorted[0]);
        for (j, &start) in starts.iter().enumerate() {
            if wanted[j] || (j == 0 && ch.has_delta()) {
                ranges.push(start..end_of(start));
            }
        }
        ranges.sort_unstable_by_key(|r| r.start);
        let total: usize = bstarts_end + ranges.iter().map(|r| r.len()).sum::<usize>();
        if !cached && 2 * total > ch.cbytes {
            return Some(false);
        }
        ranges.retain(|r| !r.is_empty());
        // Neighbouring ranges (gaps under 4 KiB) are read as one.
        let mut merged: Vec<std::ops::Range<usize>> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(m) if r.start <= m.end + 4096 => m.end = m.end.max(r.end),
                _ => merged.push(r),
            }
        }
        // The ranges are laid out one after another behind the header and offsets (a
        // buffer of the bytes read, not of the whole chunk: a scan of a large chunk block by
        // block writes no fresh pages for each part), and the header and offsets changed to
        // match: the chunk's length, each read block's new start. A block not read points at
        // a read one (a masked decode never reads it). The dictionary, right after the
        // offsets, keeps its place.
        let total = bstarts_end + merged.iter().map(|r| r.len()).sum::<usize>();
        // Where each merged range starts in the buffer; a position is found by binary search
        // (the ranges are sorted and disjoint).
        let packed: Vec<usize> = merged
            .iter()
            .scan(bstarts_end, |to, r| {
                let at = *to;
                *to += r.len();
                Some(at)
            })
            .collect();
        let moved = |at: usize| {
            let i = merged.partition_point(|r| r.end <= at);
            let r = merged.get(i).filter(|r| r.contains(&at))?;
            Some(packed[i] + (at - r.start))
        };
        let first_read = starts
            .iter()
            .zip(wanted)
            .find(|(_, w)| **w)
            .and_then(|(&s, _)| moved(s))?;
        let buf = out.buffer(total);
        buf[..bstarts_end].copy_from_slice(&head);
        ChunkHeader::set_cbytes(buf, i32::try_from(total).ok()?);
        for (j, &start) in starts.iter().enumerate() {
            let to = i32::try_from(moved(start).unwrap_or(first_read)).ok()?;
            ChunkHeader::set_block_start(buf, j, to);
        }
        let mut reads = packed_reads(&mut buf[bstarts_end..], base, &merged);
        src.read_vectored_at(&mut reads).ok()?;
        Some(true)
    }
}
