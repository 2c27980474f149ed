//! The Blosc2 chunk format: the header (16 or 32 bytes), parsed here, once, into
//! [`ChunkHeader`]; the block offsets and each block's streams and their size words
//! ([`BlockStreams`], [`stream_at`]), and what they tell without decoding
//! ([`block_values`]). The decode plan and pipeline built on them are in
//! [`crate::codec::chunk`].

#![forbid(unsafe_code)]

use crate::ffi::EXTENDED_HEADER_LEN;
use crate::format::Malformed;
use crate::model::ids as filters;

/// Largest dictionary a chunk may carry (c-blosc2's `BLOSC2_MAXDICTSIZE`).
pub(crate) const MAX_DICT_SIZE: usize = 128 * 1024;

/// Minimal (Blosc1-style) header length.
pub(crate) const MIN_HEADER_LEN: usize = 16;

/// The special-value kind of a chunk (Blosc2 flags, bits 4-6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    None,
    Zeros,
    Nan,
    Value,
    Uninit,
}

/// How a chunk is stored, from its header: what python-blosc2 and c-blosc2 write for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkKind {
    /// Compressed blocks.
    Data,
    /// Compressed blocks and the dictionary they were compressed with.
    Dict,
    /// Stored as is (header flags bit 0x02).
    Memcpy,
    /// No bytes: every item zero.
    Zeros,
    /// No bytes: every item NaN.
    Nan,
    /// One item, repeated.
    Value,
    /// No bytes: items never written (read as zeros).
    Uninit,
}

impl ChunkKind {
    /// Lowercase name: `data`, `dict`, `memcpy`, `zeros`, `nan`, `value`, `uninit`.
    pub fn name(self) -> &'static str {
        match self {
            ChunkKind::Data => "data",
            ChunkKind::Dict => "dict",
            ChunkKind::Memcpy => "memcpy",
            ChunkKind::Zeros => "zeros",
            ChunkKind::Nan => "nan",
            ChunkKind::Value => "value",
            ChunkKind::Uninit => "uninit",
        }
    }
}

/// The fields of a chunk header this crate uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChunkHeader {
    pub version: u8,
    pub flags: u8,
    /// The header's typesize byte: the item size, or 1 for items over 255 bytes.
    pub typesize: u8,
    pub nbytes: usize,
    pub blocksize: usize,
    pub cbytes: usize,
    pub extended: bool,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub udcodec: u8,
    /// The codec meta byte (for NDLZ, the cell side).
    pub codec_meta: u8,
    pub flags2: u8,
    pub blosc2_flags: u8,
}

impl ChunkHeader {
    /// Write `cbytes` (the chunk's whole length) into the header at the start of `b`.
    pub(crate) fn set_cbytes(b: &mut [u8], cbytes: i32) {
        b[12..16].copy_from_slice(&cbytes.to_le_bytes());
    }

    /// Write block `j`'s start into the offsets after the extended header at the start of
    /// `b`.
    pub(crate) fn set_block_start(b: &mut [u8], j: usize, start: i32) {
        let at = EXTENDED_HEADER_LEN + 4 * j;
        b[at..at + 4].copy_from_slice(&start.to_le_bytes());
    }

    /// Parse the header at the start of `b`.
    pub(crate) fn parse(b: &[u8]) -> Result<ChunkHeader, Malformed> {
        if b.len() < MIN_HEADER_LEN {
            return Err(format!("{} bytes, shorter than a chunk header", b.len()).into());
        }
        let le = |i: usize| i32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let (nbytes, blocksize, cbytes) = (le(4), le(8), le(12));
        if nbytes < 0 || blocksize < 0 || cbytes < 0 {
            return Err("negative size in chunk header".into());
        }
        let flags = b[2];
        let extended = flags & 0x05 == 0x05;
        let mut h = ChunkHeader {
            version: b[0],
            flags,
            typesize: b[3],
            nbytes: nbytes as usize,
            blocksize: blocksize as usize,
            cbytes: cbytes as usize,
            extended,
            filters: [0; 6],
            filters_meta: [0; 6],
            udcodec: 0,
            codec_meta: 0,
            flags2: 0,
            blosc2_flags: 0,
        };
        if extended {
            if b.len() < EXTENDED_HEADER_LEN {
                return Err(
                    format!("{} bytes, shorter than an extended chunk header", b.len()).into(),
                );
            }
            h.filters.copy_from_slice(&b[16..22]);
            h.udcodec = b[22];
            h.codec_meta = b[23];
            h.filters_meta.copy_from_slice(&b[24..30]);
            h.flags2 = b[30];
            h.blosc2_flags = b[31];
        } else {
            // Blosc1 header: shuffle / bitshuffle as flag bits.
            if flags & 0x01 != 0 {
                h.filters[5] = filters::SHUFFLE;
            } else if flags & 0x04 != 0 {
                h.filters[5] = filters::BITSHUFFLE;
            }
        }
        Ok(h)
    }

    /// The special-value kind, if any.
    pub(crate) fn special(&self) -> Special {
        if !self.extended {
            return Special::None;
        }
        match (self.blosc2_flags >> 4) & 0x07 {
            1 => Special::Zeros,
            2 => Special::Nan,
            3 => Special::Value,
            4 => Special::Uninit,
            _ => Special::None,
        }
    }

    /// How the chunk is stored.
    pub(crate) fn kind(&self) -> ChunkKind {
        match self.special() {
            Special::Zeros => ChunkKind::Zeros,
            Special::Nan => ChunkKind::Nan,
            Special::Value => ChunkKind::Value,
            Special::Uninit => ChunkKind::Uninit,
            Special::None if self.memcpyed() => ChunkKind::Memcpy,
            Special::None if self.has_dict() => ChunkKind::Dict,
            Special::None => ChunkKind::Data,
        }
    }

    /// Stored without compression (and without filters).
    pub(crate) fn memcpyed(&self) -> bool {
        self.flags & 0x02 != 0
    }

    /// The header's length: 32 bytes when extended, else 16.
    pub(crate) fn header_len(&self) -> usize {
        if self.extended {
            EXTENDED_HEADER_LEN
        } else {
            MIN_HEADER_LEN
        }
    }

    /// Whether a block mask over `nblocks` blocks of `block_bytes` bytes applies to this chunk
    /// (an ordinary data chunk with exactly those blocks): the decoder's
    /// [`Target::Blocks`](crate::codec::chunk::Target::Blocks) then decodes only the wanted blocks, plus block 0 when [`ChunkHeader::has_delta`].
    pub(crate) fn maskable(&self, nblocks: usize, block_bytes: usize) -> bool {
        self.extended
            && self.special() == Special::None
            && self.nbytes > 0
            && self.blocksize == block_bytes
            && self.nbytes.div_ceil(self.blocksize) == nblocks
    }

    /// Whether the chunk carries a dictionary (blosc2 flags bit 0).
    pub(crate) fn has_dict(&self) -> bool {
        self.blosc2_flags & 0x01 != 0
    }

    /// Whether blocks are stored as one stream each (header flags bit 4), not split.
    pub(crate) fn dont_split(&self) -> bool {
        self.flags & 0x10 != 0
    }

    /// Whether the filter pipeline has DELTA (every block is decoded against block 0).
    pub(crate) fn has_delta(&self) -> bool {
        self.filters.contains(&filters::DELTA)
    }

    /// The codec format bits (header flags bits 5-7).
    pub(crate) fn codec_format(&self) -> u8 {
        self.flags >> 5
    }
}

/// Put filter ids and metas into a chunk header (`[16..22]` and `[24..30]`).
pub(crate) fn set_filters(header: &mut [u8], filters: &[u8; 6], meta: &[u8; 6]) {
    header[16..22].copy_from_slice(filters);
    header[24..30].copy_from_slice(meta);
}

/// A chunk whose header filter bytes are cleared while this guard lives, and put back when it
/// drops (a panic included): c-blosc2 then decodes the codec only, and Rust the filters.
pub(crate) struct FiltersCleared<'a> {
    chunk: &'a mut [u8],
    filters: [u8; 6],
    meta: [u8; 6],
}

impl<'a> FiltersCleared<'a> {
    /// Clear the filter bytes of `chunk`, an extended-header chunk (checked by the caller's
    /// [`ChunkHeader::parse`]).
    pub(crate) fn new(chunk: &'a mut [u8]) -> FiltersCleared<'a> {
        let mut filters = [0u8; 6];
        let mut meta = [0u8; 6];
        filters.copy_from_slice(&chunk[16..22]);
        meta.copy_from_slice(&chunk[24..30]);
        set_filters(chunk, &[0; 6], &[0; 6]);
        FiltersCleared {
            chunk,
            filters,
            meta,
        }
    }

    /// The chunk, filter bytes cleared.
    pub(crate) fn chunk(&mut self) -> &mut [u8] {
        self.chunk
    }
}

impl Drop for FiltersCleared<'_> {
    fn drop(&mut self) {
        set_filters(self.chunk, &self.filters, &self.meta);
    }
}

/// Read a little-endian i32 at `at`, if there.
pub(crate) fn le_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(i32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Where block `j` of a chunk is and how it is split: c-blosc2 stores a block as `nstreams`
/// streams of `neblock` bytes each (one per byte of the item when split, one when not or for
/// a short last block), from `offset` in the chunk.
pub(crate) struct BlockStreams {
    /// The block's first byte in the decoded chunk.
    pub(crate) start: usize,
    /// Where its first stream's size word is in the chunk.
    pub(crate) offset: usize,
    pub(crate) nstreams: usize,
    /// Decoded bytes per stream.
    pub(crate) neblock: usize,
}

impl BlockStreams {
    /// Block `j` of the chunk `src` with header `h` (its data after `data_start`), checked.
    pub(crate) fn of(
        h: &ChunkHeader,
        src: &[u8],
        j: usize,
        data_start: usize,
    ) -> Result<BlockStreams, String> {
        let nblocks = h.nbytes.div_ceil(h.blocksize);
        let leftover = h.nbytes % h.blocksize;
        let last_short = j + 1 == nblocks && leftover != 0;
        let bsize = if last_short { leftover } else { h.blocksize };
        let offset = le_i32(src, EXTENDED_HEADER_LEN + 4 * j)
            .and_then(|o| usize::try_from(o).ok())
            .filter(|&o| o >= data_start && o < src.len())
            .ok_or_else(|| "offset outside the chunk".to_string())?;
        let nstreams = if h.dont_split() || last_short {
            1
        } else {
            usize::from(h.typesize).max(1)
        };
        if bsize % nstreams != 0 {
            return Err(format!(
                "{bsize} bytes do not split into {nstreams} streams"
            ));
        }
        Ok(BlockStreams {
            start: j * h.blocksize,
            offset,
            nstreams,
            neblock: bsize / nstreams,
        })
    }
}

/// One stream of a block, as its size word tells.
pub(crate) enum Stream<'a> {
    /// Every byte the one value (a size of 0: zeros; a negative size and a token: `-size`).
    Run(u8),
    /// Stored bytes: the codec's output, or the stream itself when as long as decoded.
    Bytes(&'a [u8]),
}

/// Stream `s` whose size word is at `at` in `src`, and where the next one starts.
pub(crate) fn stream_at(src: &[u8], at: usize, s: usize) -> Result<(Stream<'_>, usize), String> {
    let csize = le_i32(src, at).ok_or_else(|| format!("stream {s} size missing"))?;
    let at = at + 4;
    if csize == 0 {
        return Ok((Stream::Run(0), at));
    }
    if csize < 0 {
        let token = *src
            .get(at)
            .ok_or_else(|| format!("stream {s} token missing"))?;
        if token & 0x01 == 0 || csize < -255 {
            return Err(format!(
                "stream {s}: unknown run encoding (size {csize}, token {token})"
            ));
        }
        return Ok((Stream::Run((-csize) as u8), at + 1));
    }
    let n = csize as usize;
    let bytes = src
        .get(at..at + n)
        .ok_or_else(|| format!("stream {s} of {n} bytes overruns"))?;
    Ok((Stream::Bytes(bytes), at + n))
}

/// The one value of each block of a chunk, where its stored form shows it
/// ([`block_values`]).
#[derive(Debug)]
pub(crate) struct BlockValues {
    /// Decoded bytes per block (the last may be shorter).
    pub(crate) block_bytes: usize,
    /// Per block: the one value every byte holds, `None` where only decoding would tell.
    pub(crate) values: Vec<Option<u8>>,
}

/// What the chunk `src` says of its decoded bytes without decompressing anything: its
/// block size and, for each block, the one value every byte of the block holds where that
/// shows in the header or stream size words (a zero or uninitialised special chunk, a
/// repeated-value chunk whose item is one byte repeated, a block whose every stream is a run
/// of one value, a block of a chunk stored as is whose bytes are one value) and `None` where
/// only decoding would tell. `Ok(None)` for a chunk whose filters move bits (anything but
/// SHUFFLE).
pub(crate) fn block_values(src: &[u8]) -> Result<Option<BlockValues>, Malformed> {
    let h = ChunkHeader::parse(src)?;
    let whole = |v: Option<u8>| {
        Ok(Some(BlockValues {
            block_bytes: h.nbytes.max(1),
            values: vec![v],
        }))
    };
    match h.special() {
        Special::Zeros | Special::Uninit => return whole(Some(0)),
        Special::Nan => return Ok(None),
        Special::Value => {
            let item = src.get(EXTENDED_HEADER_LEN..).unwrap_or_default();
            return whole(
                item.first()
                    .copied()
                    .filter(|&v| item.iter().all(|&b| b == v)),
            );
        }
        Special::None => {}
    }
    if h.blocksize == 0 {
        return Ok(None);
    }
    if h.memcpyed() {
        // The data follows the header as is (whatever the filter flags say).
        let data = src
            .get(h.header_len()..)
            .and_then(|d| d.get(..h.nbytes))
            .ok_or_else(|| Malformed(format!("{} stored bytes missing", h.nbytes)))?;
        let one = |b: &[u8]| b.first().copied().filter(|&v| b.iter().all(|&x| x == v));
        return Ok(Some(BlockValues {
            block_bytes: h.blocksize,
            values: data.chunks(h.blocksize).map(one).collect(),
        }));
    }
    let moves_bytes_only = h
        .filters
        .iter()
        .all(|&f| f == filters::NOFILTER || f == filters::SHUFFLE);
    if !h.extended || !moves_bytes_only {
        return Ok(None);
    }
    let corrupt = |j: usize, e: String| Malformed(format!("block {j}: {e}"));
    let nblocks = h.nbytes.div_ceil(h.blocksize);
    let data_start = EXTENDED_HEADER_LEN.saturating_add(nblocks.saturating_mul(4));
    let mut values = Vec::with_capacity(nblocks.min(src.len() / 4));
    for j in 0..nblocks {
        let b = BlockStreams::of(&h, src, j, data_start).map_err(|e| corrupt(j, e))?;
        let (mut at, mut value) = (b.offset, None);
        for s in 0..b.nstreams {
            let (stream, next) = stream_at(src, at, s).map_err(|e| corrupt(j, e))?;
            value = match stream {
                Stream::Run(v) if s == 0 || value == Some(v) => Some(v),
                _ => None,
            };
            if value.is_none() {
                break;
            }
            at = next;
        }
        values.push(value);
    }
    Ok(Some(BlockValues {
        block_bytes: h.blocksize,
        values,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleared_filters_come_back_even_on_panic() {
        let mut chunk = vec![0u8; 40];
        set_filters(&mut chunk, &[1, 2, 3, 0, 0, 35], &[4, 0, 0, 0, 0, 8]);
        let before = chunk.clone();
        {
            let mut g = FiltersCleared::new(&mut chunk);
            assert!(g.chunk()[16..22].iter().all(|&b| b == 0));
            assert!(g.chunk()[24..30].iter().all(|&b| b == 0));
        }
        assert_eq!(chunk, before);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = FiltersCleared::new(&mut chunk);
            panic!("a decode that fails");
        }));
        assert!(r.is_err());
        assert_eq!(chunk, before);
    }
}
