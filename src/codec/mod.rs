//! The codec layer: what turns a Blosc stream or block back into items, done in Rust where the
//! linked c-blosc2 2.15 lacks it or does it differently from 3.x. Submodules: [`filters`]
//! (every filter, forward and backward, per block), [`kernels`] (their SIMD inner loops),
//! [`cells`] (NDCELL / NDMEAN cell order), [`ndlz`] and [`zfp`] (plugin codecs), [`worker`]
//! (one decoding lane: a decoder and its chunk buffers).
//!
//! This module: Blosc2 codecs decoded (and encoded) in Rust: the ones the linked c-blosc2 2.15
//! lacks (ZLIB, NDLZ, ZFP) or decodes wrongly (LZ4 / LZ4HC streams compressed against a chunk
//! dictionary).
//!
//! A codec here works on one Blosc *stream* (a block, or one of its `typesize` byte streams
//! when the block is split): c-blosc2 3.x's `zlib_wrap_decompress` is zlib's `uncompress` (a
//! zlib-wrapped deflate stream, decoded here by the pure-Rust `flate2`/`zlib-rs`), and
//! `lz4_wrap_decompress` is `LZ4_decompress_safe_usingDict` with the chunk's dictionary (called
//! through [`crate::ffi`]: the LZ4 library compiled into the linked c-blosc2 has it, only
//! c-blosc2 2.15's wrapper does not use it). Both must produce exactly the stream's size, else
//! the chunk is corrupt.
//! The chunk layout around the streams is walked in [`crate::format::chunk`].

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;

pub(crate) mod cells;
pub(crate) mod chunk;
pub(crate) mod encode;
pub(crate) mod error;
pub(crate) mod filters;
pub(crate) mod kernels;
pub(crate) mod ndlz;
pub(crate) mod vlblocks;
pub(crate) mod worker;
pub(crate) mod zfp;

/// A codec whose streams Rust decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RustCodec {
    /// ZLIB (codec id 4, header codec format 3).
    Zlib,
    /// LZ4 or LZ4HC (ids 1 and 2, format 1): one LZ4 block format, with or without dictionary.
    Lz4,
    /// Zstandard (id 5, format 4) with a dictionary: decoded here because c-blosc2 2.15 keeps
    /// a decompression context's dictionary state across chunks (a freed dictionary stays
    /// in use, and `assert(dict_ddict != NULL)` aborts on a chunk whose dictionary zstd
    /// rejects; found by fuzzing). Chunks without a dictionary go to c-blosc2.
    ZstdDict,
    /// NDLZ (user codec 32) with this cell side (the codec meta, 4 or 8): [`crate::codec::ndlz`].
    Ndlz(u8),
    /// ZFP (user codecs 33-35) with its codec meta: [`crate::codec::zfp`].
    Zfp(crate::codec::zfp::Mode, u8),
}

impl RustCodec {
    /// The name used in errors.
    pub(crate) fn name(self) -> &'static str {
        match self {
            RustCodec::Zlib => "zlib",
            RustCodec::Lz4 => "lz4",
            RustCodec::ZstdDict => "zstd",
            RustCodec::Ndlz(_) => "ndlz",
            RustCodec::Zfp(crate::codec::zfp::Mode::Accuracy, _) => "zfp_acc",
            RustCodec::Zfp(crate::codec::zfp::Mode::Precision, _) => "zfp_prec",
            RustCodec::Zfp(crate::codec::zfp::Mode::Rate, _) => "zfp_rate",
        }
    }

    /// Decode one stream `src` into exactly `dst.len()` bytes, with the chunk's dictionary if
    /// it has one; `block` (the b2nd block shape) and `typesize` are for ZFP.
    pub(crate) fn decode_stream(
        self,
        src: &[u8],
        dst: &mut [u8],
        dict: Option<&[u8]>,
        block: &[usize],
        typesize: usize,
    ) -> Result<(), ChunkError> {
        let n = match self {
            RustCodec::Zlib => {
                if dict.is_some() {
                    return Err("zlib with a dictionary (c-blosc2 never writes one)".into());
                }
                let mut z = flate2::Decompress::new(true);
                let status = z
                    .decompress(src, dst, flate2::FlushDecompress::Finish)
                    .map_err(|e| format!("zlib stream: {e}"))?;
                if status != flate2::Status::StreamEnd {
                    return Err("zlib stream does not end where its block does".into());
                }
                usize::try_from(z.total_out()).unwrap_or(usize::MAX)
            }
            RustCodec::Lz4 => crate::ffi::lz4_decompress_with_dict(src, dst, dict.unwrap_or(&[]))
                .ok_or_else(|| "malformed lz4 stream".to_string())?,
            RustCodec::ZstdDict => crate::ffi::zstd_decompress(src, dst, dict.unwrap_or(&[]))
                .ok_or_else(|| "malformed zstd stream or dictionary".to_string())?,
            RustCodec::Ndlz(cell) => {
                if dict.is_some() {
                    return Err("ndlz with a dictionary".into());
                }
                crate::codec::ndlz::decode(src, dst, usize::from(cell))?
            }
            RustCodec::Zfp(mode, meta) => {
                if dict.is_some() {
                    return Err("zfp with a dictionary".into());
                }
                crate::codec::zfp::decode(mode, meta, src, dst, block, typesize)?;
                dst.len()
            }
        };
        if n != dst.len() {
            return Err(format!(
                "{} stream decoded to {n} bytes, the block needs {}",
                self.name(),
                dst.len()
            )
            .into());
        }
        Ok(())
    }

    /// Encode one stream (ZLIB and ZFP: the other codecs are written by c-blosc2); `None`
    /// when it does not shrink (the caller stores it as is). `block` and `typesize` are for
    /// ZFP, which codes a whole b2nd block.
    pub(crate) fn encode_stream(
        self,
        src: &[u8],
        clevel: u8,
        block: &[usize],
        typesize: usize,
    ) -> Result<Option<Vec<u8>>, ChunkError> {
        match self {
            RustCodec::Zlib => {
                use std::io::Write;
                let level = flate2::Compression::new(u32::from(clevel.min(9)));
                let mut e = flate2::write::ZlibEncoder::new(Vec::with_capacity(src.len()), level);
                e.write_all(src).map_err(|e| format!("zlib: {e}"))?;
                let out = e.finish().map_err(|e| format!("zlib: {e}"))?;
                Ok((out.len() < src.len()).then_some(out))
            }
            RustCodec::Zfp(mode, meta) => {
                crate::codec::zfp::encode(mode, meta, src, block, typesize)
            }
            other => Err(format!("{} streams are written by c-blosc2", other.name()).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zlib_round_trips_and_sizes_are_checked() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8 / 3).collect();
        let c = RustCodec::Zlib
            .encode_stream(&data, 5, &[], 1)
            .unwrap()
            .expect("compressible");
        let mut out = vec![0u8; data.len()];
        RustCodec::Zlib
            .decode_stream(&c, &mut out, None, &[], 1)
            .unwrap();
        assert_eq!(out, data);
        // A destination of the wrong size is an error, never a partial success.
        let mut short = vec![0u8; data.len() - 1];
        assert!(RustCodec::Zlib
            .decode_stream(&c, &mut short, None, &[], 1)
            .is_err());
        let mut long = vec![0u8; data.len() + 1];
        assert!(RustCodec::Zlib
            .decode_stream(&c, &mut long, None, &[], 1)
            .is_err());
        assert!(RustCodec::Zlib
            .decode_stream(&c[..c.len() / 2], &mut out, None, &[], 1)
            .is_err());
    }

    #[test]
    fn lz4_with_dictionary() {
        // An LZ4 block (sequence format) that is one match into the dictionary: token 0x0F
        // (no literals, match length 4 + 15 + ext), offset 8, then the last 5 bytes literal.
        let dict = b"abcdefgh";
        // literals-only block: token 0x50 (5 literals), "hello"
        let lit = [0x50, b'h', b'e', b'l', b'l', b'o'];
        let mut out = [0u8; 5];
        RustCodec::Lz4
            .decode_stream(&lit, &mut out, Some(dict), &[], 1)
            .unwrap();
        assert_eq!(&out, b"hello");
        // token 0x04: 0 literals, match len 8; offset 8 (into the dictionary); then a final
        // literals-only sequence 0x50 "hello".
        let m = [0x04, 8, 0, 0x50, b'h', b'e', b'l', b'l', b'o'];
        let mut out = [0u8; 13];
        RustCodec::Lz4
            .decode_stream(&m, &mut out, Some(dict), &[], 1)
            .unwrap();
        assert_eq!(&out, b"abcdefghhello");
        // Without its dictionary the offset points before the output: an error.
        assert!(RustCodec::Lz4
            .decode_stream(&m, &mut out, None, &[], 1)
            .is_err());
        // Garbage and the wrong size are errors.
        assert!(RustCodec::Lz4
            .decode_stream(&[0xff; 7], &mut out, Some(dict), &[], 1)
            .is_err());
        let mut long = [0u8; 14];
        assert!(RustCodec::Lz4
            .decode_stream(&m, &mut long, Some(dict), &[], 1)
            .is_err());
    }
}
