//! Variable-length-block chunks (c-blosc2 3.x, `README_CHUNK_FORMAT.rst`: chunk format
//! version 6, `blosc2_flags2` bit 0), decoded in Rust: the linked c-blosc2 2.15 refuses them.
//! python-blosc2 4.x writes them for BatchArray and ListArray batches, one msgpack payload per
//! block.
//!
//! Layout: the 32-byte extended header, whose `blocksize` field holds the number of blocks;
//! `bstarts`, one `int32` offset (from the chunk start) per block; when the chunk uses a
//! dictionary (`blosc2_flags` bit 0), its size (`int32`) and bytes; then, at each block's
//! start, the block's decoded size (`int32`) followed by its single compressed stream,
//! which runs to the next block's start (the chunk's end for the last). A stream exactly as
//! long as its decoded size is stored as is (as c-blosc2 does for incompressible streams).
//! Filters must leave typesize-1 bytes unchanged (none, or SHUFFLE); the codec is BloscLZ,
//! LZ4 / LZ4HC, ZLIB or Zstandard.
//!
//! [`encode_blocks`] writes such chunks as c-blosc2 3.x's `blosc2_vlcompress_ctx` does for
//! python-blosc2: each block compressed on its own with the frame's codec (Zstandard, LZ4
//! and ZLIB here; a block that does not shrink, or any BloscLZ block, stored as is).

#![forbid(unsafe_code)]

use super::error::ChunkError;
use crate::ffi::EXTENDED_HEADER_LEN;
use crate::format::chunk::{ChunkHeader, MAX_DICT_SIZE};
use crate::format::parts::FrameCodec;

/// Whether `chunk` (whose header parses) holds variable-length blocks.
pub(crate) fn is_vl(h: &ChunkHeader) -> bool {
    h.extended && h.flags2 & 0x01 != 0
}

fn le32(b: &[u8], at: usize) -> Option<usize> {
    let v = i32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?);
    usize::try_from(v).ok()
}

/// Decode every block of a variable-length-block chunk: the blocks' bytes, in order. The
/// blocks together hold at most `max_nbytes` bytes (checked before anything is allocated).
pub(crate) fn decode_blocks(chunk: &[u8], max_nbytes: usize) -> Result<Vec<Vec<u8>>, ChunkError> {
    let h = ChunkHeader::parse(chunk)?;
    check_header(&h, chunk.len(), max_nbytes)?;
    let nblocks = h.blocksize;
    let bstarts_end = nblocks
        .checked_mul(4)
        .and_then(|n| n.checked_add(EXTENDED_HEADER_LEN))
        .filter(|&e| e <= chunk.len())
        .ok_or_else(|| ChunkError::Corrupt(format!("{nblocks} block starts do not fit")))?;
    let mut data_start = bstarts_end;
    let dict: &[u8] = if h.blosc2_flags & 0x01 != 0 {
        let dsize = le32(chunk, bstarts_end)
            .filter(|&d| d <= MAX_DICT_SIZE)
            .ok_or_else(|| ChunkError::Corrupt("bad dictionary size".into()))?;
        let d = chunk
            .get(bstarts_end + 4..bstarts_end + 4 + dsize)
            .ok_or_else(|| ChunkError::Corrupt("dictionary outside the chunk".into()))?;
        data_start = bstarts_end + 4 + dsize;
        d
    } else {
        &[]
    };
    let starts: Vec<usize> = (0..nblocks)
        .map(|i| le32(chunk, EXTENDED_HEADER_LEN + 4 * i))
        .collect::<Option<_>>()
        .ok_or_else(|| ChunkError::Corrupt("a negative block start".into()))?;
    let mut out = Vec::with_capacity(nblocks);
    let mut total = 0usize;
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(chunk.len());
        if start < data_start || end < start + 4 || end > chunk.len() {
            return Err(ChunkError::Corrupt(format!(
                "block {i}: bytes {start}..{end} outside the chunk's data"
            )));
        }
        let size = le32(chunk, start)
            .ok_or_else(|| ChunkError::Corrupt(format!("block {i}: negative size")))?;
        total = total
            .checked_add(size)
            .filter(|&t| t <= h.nbytes)
            .ok_or_else(|| {
                ChunkError::Corrupt(format!("blocks exceed the {} bytes declared", h.nbytes))
            })?;
        let stream = &chunk[start + 4..end];
        let block = decode_block(&h, i, stream, size, dict)?;
        out.push(block);
    }
    if total != h.nbytes {
        return Err(ChunkError::Corrupt(format!(
            "blocks hold {total} bytes, the header {}",
            h.nbytes
        )));
    }
    Ok(out)
}

/// A variable-length-block chunk holding `blocks` (each non-empty), in the layout
/// [`decode_blocks`] reads, with the settings of its frame `p` (whose filters must leave
/// typesize-1 bytes unchanged).
pub(crate) fn encode_blocks(blocks: &[Vec<u8>], p: &FrameCodec) -> Result<Vec<u8>, ChunkError> {
    use crate::model::ids;
    let format = match p.compcode {
        ids::BLOSCLZ => 0,
        ids::LZ4 | ids::LZ4HC => 1,
        ids::ZLIB => 3,
        ids::ZSTD => 4,
        other => {
            return Err(ChunkError::Unsupported(
                "codec",
                format!("{} on variable-length blocks", ids::codec_name(other)),
            ))
        }
    };
    let harmless = p
        .filters
        .iter()
        .zip(&p.filters_meta)
        .all(|(&f, &m)| f == 0 || (f == ids::SHUFFLE && (m == 0 || m == 1)));
    if !harmless {
        return Err(ChunkError::Unsupported(
            "filter",
            format!("{:?} on variable-length blocks", p.filters),
        ));
    }
    let too_big = || ChunkError::Corrupt("variable-length blocks over 2 GiB".into());
    let nbytes: usize = blocks.iter().map(Vec::len).sum();
    let fits = |n: usize| i32::try_from(n).map_err(|_| too_big());
    let mut c = vec![0u8; EXTENDED_HEADER_LEN + 4 * blocks.len()];
    c[0] = 6; // chunk format version: variable-length blocks
    c[1] = 1; // codec format version
    c[2] = 0x05 | 0x10 | (format << 5); // extended header, blocks not split, codec format
    c[3] = 1; // typesize
    c[4..8].copy_from_slice(&fits(nbytes)?.to_le_bytes());
    c[8..12].copy_from_slice(&fits(blocks.len())?.to_le_bytes());
    c[16..22].copy_from_slice(&p.filters);
    c[22] = p.compcode;
    c[23] = p.compcode_meta;
    c[24..30].copy_from_slice(&p.filters_meta);
    c[30] = 0x01; // variable-length blocks
    for (i, b) in blocks.iter().enumerate() {
        if b.is_empty() {
            return Err(ChunkError::Corrupt(format!("block {i} is empty")));
        }
        let at = fits(c.len())?;
        c[EXTENDED_HEADER_LEN + 4 * i..EXTENDED_HEADER_LEN + 4 * i + 4]
            .copy_from_slice(&at.to_le_bytes());
        c.extend_from_slice(&fits(b.len())?.to_le_bytes());
        let packed = if p.clevel == 0 {
            None
        } else {
            match format {
                1 => {
                    let mut out = Vec::new();
                    crate::ffi::lz4_compress_append(b, &mut out, b.len() - 1, 1).map(|_| out)
                }
                3 => super::RustCodec::Zlib.encode_stream(b, p.clevel, &[], 1)?,
                4 => crate::ffi::zstd_compress(b, i32::from(p.clevel)),
                _ => None,
            }
        };
        match packed.filter(|s| s.len() < b.len()) {
            Some(s) => c.extend_from_slice(&s),
            None => c.extend_from_slice(b),
        }
    }
    let cbytes = fits(c.len())?;
    c[12..16].copy_from_slice(&cbytes.to_le_bytes());
    Ok(c)
}

/// The header of a variable-length-block chunk of `chunk_len` bytes is one this decoder
/// reads: sizes within the chunk and `max_nbytes`, no special value, no filter but a
/// harmless SHUFFLE.
fn check_header(h: &ChunkHeader, chunk_len: usize, max_nbytes: usize) -> Result<(), ChunkError> {
    if !is_vl(h) {
        return Err(ChunkError::Corrupt(
            "not a variable-length-block chunk".into(),
        ));
    }
    if h.cbytes != chunk_len {
        return Err(ChunkError::Corrupt(format!(
            "header says {} compressed bytes, the chunk holds {}",
            h.cbytes, chunk_len
        )));
    }
    if h.nbytes > max_nbytes {
        return Err(ChunkError::Corrupt(format!(
            "declares {} decoded bytes, more than the {max_nbytes} allowed",
            h.nbytes
        )));
    }
    if h.special() != crate::format::chunk::Special::None {
        return Err(ChunkError::Unsupported(
            "chunk format",
            "a special value in a variable-length-block chunk".into(),
        ));
    }
    for (slot, (&f, &m)) in h.filters.iter().zip(&h.filters_meta).enumerate() {
        // SHUFFLE of one-byte items (the stream's typesize) changes nothing.
        let harmless = f == 0 || (f == crate::model::ids::SHUFFLE && (m == 0 || m == 1));
        if !harmless {
            return Err(ChunkError::Unsupported(
                "filter",
                format!(
                    "{} (slot {slot}) on variable-length blocks",
                    crate::model::ids::filter_name(f)
                ),
            ));
        }
    }
    Ok(())
}

/// Block `i` of the chunk of header `h`: `stream` (its bytes after the size) decoded to its
/// `size` bytes, with the chunk's dictionary `dict` (empty without one).
fn decode_block(
    h: &ChunkHeader,
    i: usize,
    stream: &[u8],
    size: usize,
    dict: &[u8],
) -> Result<Vec<u8>, ChunkError> {
    let mut block = vec![0u8; size];
    if h.memcpyed() || stream.len() == size {
        if stream.len() != size {
            return Err(ChunkError::Corrupt(format!(
                "block {i}: {} bytes stored for {size}",
                stream.len()
            )));
        }
        block.copy_from_slice(stream);
    } else {
        let dict_opt = (!dict.is_empty()).then_some(dict);
        let got = match h.codec_format() {
            0 => crate::ffi::blosclz_decompress_into(stream, &mut block),
            1 => super::RustCodec::Lz4
                .decode_stream(stream, &mut block, dict_opt, &[], 1)
                .map(|()| size)
                .ok(),
            3 => super::RustCodec::Zlib
                .decode_stream(stream, &mut block, dict_opt, &[], 1)
                .map(|()| size)
                .ok(),
            4 => crate::ffi::zstd_decompress(stream, &mut block, dict),
            other => {
                return Err(ChunkError::Unsupported(
                    "codec",
                    format!("codec format {other} on variable-length blocks"),
                ))
            }
        };
        if got != Some(size) {
            return Err(ChunkError::Corrupt(format!(
                "block {i}: its stream does not decode to {size} bytes"
            )));
        }
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chunk of raw (stored) blocks.
    fn chunk(blocks: &[&[u8]]) -> Vec<u8> {
        let n = blocks.len();
        let nbytes: usize = blocks.iter().map(|b| b.len()).sum();
        let mut c = vec![0u8; EXTENDED_HEADER_LEN + 4 * n];
        c[0] = 6;
        c[1] = 1;
        c[2] = 0x95;
        c[3] = 1;
        c[4..8].copy_from_slice(&(nbytes as i32).to_le_bytes());
        c[8..12].copy_from_slice(&(n as i32).to_le_bytes());
        c[21] = 1; // SHUFFLE
        c[30] = 1; // VL blocks
        for (i, b) in blocks.iter().enumerate() {
            let at = c.len() as i32;
            c[32 + 4 * i..36 + 4 * i].copy_from_slice(&at.to_le_bytes());
            c.extend_from_slice(&(b.len() as i32).to_le_bytes());
            c.extend_from_slice(b);
        }
        let len = c.len() as i32;
        c[12..16].copy_from_slice(&len.to_le_bytes());
        c
    }

    #[test]
    fn encoded_blocks_decode_with_every_codec() {
        use crate::model::ids;
        let text: Vec<u8> = (0..3000u32)
            .flat_map(|i| format!("v{}", i % 17).into_bytes())
            .collect();
        let blocks = vec![text.clone(), b"\x91\xa1x".to_vec(), text[..100].to_vec()];
        for compcode in [ids::BLOSCLZ, ids::LZ4, ids::LZ4HC, ids::ZLIB, ids::ZSTD] {
            for clevel in [0, 5] {
                let p = FrameCodec {
                    compcode,
                    compcode_meta: 0,
                    clevel,
                    filters: [0, 0, 0, 0, 0, ids::SHUFFLE],
                    filters_meta: [0; 6],
                };
                let c = encode_blocks(&blocks, &p).unwrap();
                assert_eq!(
                    decode_blocks(&c, 1 << 20).unwrap(),
                    blocks,
                    "{compcode} {clevel}"
                );
                let squeezed = compcode != ids::BLOSCLZ && clevel > 0;
                assert_eq!(c.len() < text.len(), squeezed, "{compcode} {clevel}");
            }
        }
        let p = FrameCodec {
            compcode: ids::ZSTD,
            compcode_meta: 0,
            clevel: 5,
            filters: [0, 0, 0, 0, 0, ids::BITSHUFFLE],
            filters_meta: [0; 6],
        };
        assert!(encode_blocks(&blocks, &p).is_err());
    }

    #[test]
    fn stored_blocks() {
        let c = chunk(&[b"\x93\x01\x02\x03", b"\x91\xa1x"]);
        assert_eq!(
            decode_blocks(&c, 1 << 20).unwrap(),
            vec![b"\x93\x01\x02\x03".to_vec(), b"\x91\xa1x".to_vec()]
        );
    }

    #[test]
    fn hostile_chunks_are_errors() {
        let good = chunk(&[b"abcd", b"efg"]);
        for len in 0..good.len() {
            assert!(decode_blocks(&good[..len], 1 << 20).is_err(), "{len}");
        }
        let mut c = good.clone();
        c[8..12].copy_from_slice(&1000i32.to_le_bytes()); // too many blocks
        assert!(decode_blocks(&c, 1 << 20).is_err());
        let mut c = good.clone();
        c[32..36].copy_from_slice(&(-4i32).to_le_bytes()); // negative start
        assert!(decode_blocks(&c, 1 << 20).is_err());
        let mut c = good.clone();
        c[4..8].copy_from_slice(&6i32.to_le_bytes()); // sizes disagree
        assert!(decode_blocks(&c, 1 << 20).is_err());
        assert!(decode_blocks(&good, 3).is_err()); // over the limit
        let mut c = good;
        c[16] = 2; // BITSHUFFLE
        assert!(matches!(
            decode_blocks(&c, 1 << 20),
            Err(ChunkError::Unsupported(..))
        ));
    }
}
