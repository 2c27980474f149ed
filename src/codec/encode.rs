//! Blosc2 chunks encoded: [`Encoder`] owns a chunk's whole encode, the mirror of
//! [`Decoder`](super::chunk::Decoder): all-zero chunks as zero special chunks, the filters
//! c-blosc2 2.15 lacks (or runs slower) applied in Rust block by block before c-blosc2's codec,
//! and the codecs it lacks (ZLIB, ZFP) encoded in Rust, recording in the header what
//! python-blosc2 records.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;
use crate::codec::filters;
use crate::codec::RustCodec;
use crate::ffi::{CError, Cctx, CompressParams, EXTENDED_HEADER_LEN};
use crate::format::chunk::{set_filters, ChunkHeader};

/// Why a chunk could not be encoded.
#[derive(Debug)]
pub(crate) enum EncodeError {
    /// c-blosc2 refused (its code).
    C(CError),
    /// A Rust filter or codec refused (why).
    Rust(String),
}

impl std::fmt::Display for EncodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EncodeError::C(e) => e.fmt(f),
            EncodeError::Rust(why) => f.write_str(why),
        }
    }
}

impl From<CError> for EncodeError {
    fn from(e: CError) -> EncodeError {
        EncodeError::C(e)
    }
}

/// The Rust side of a chunk pipeline: filters (with the filter bytes chunk headers record)
/// and a codec (with its clevel), either or both absent.
#[derive(Clone, Default)]
pub(crate) struct RustStages {
    pub(crate) forward: Option<(filters::ForwardPipeline, [u8; 6], [u8; 6])>,
    pub(crate) codec: Option<(RustCodec, u8)>,
}

/// Per-thread encoding state: a c-blosc2 compression context, the Rust stages, and their
/// buffers (kept between chunks).
pub(crate) struct Encoder {
    cctx: Cctx,
    stages: RustStages,
    filtered: Vec<u8>,
    scratch: Vec<u8>,
}

impl Encoder {
    /// An encoder for chunks c-blosc2 compresses with `params` (without the filters done in
    /// Rust) after the Rust `stages`.
    pub(crate) fn new(params: &CompressParams, stages: RustStages) -> Result<Encoder, CError> {
        Ok(Encoder {
            cctx: Cctx::new(params)?,
            stages,
            filtered: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Encode `data` (a whole extended chunk: whole blocks of `block_bytes`, items of
    /// `typesize` bytes, b2nd blocks of `block_shape`) into `out` (replacing its contents,
    /// reusing its allocation). An all-zero chunk becomes a zero special chunk. Rust
    /// filters run block by block before c-blosc2's codec and are recorded in the header; a
    /// chunk c-blosc2 stores uncompressed (memcpyed) keeps its data unfiltered instead
    /// (readers ignore the filters of such chunks).
    pub(crate) fn encode(
        &mut self,
        data: &[u8],
        block_bytes: usize,
        block_shape: &[usize],
        typesize: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), EncodeError> {
        if data.iter().all(|&b| b == 0) {
            return Ok(self.cctx.zeros_chunk(data.len(), out)?);
        }
        let Some((forward, fslots, fmeta)) = &self.stages.forward else {
            return Ok(self.cctx.compress(data, out)?);
        };
        if let Some((codec, clevel)) = self.stages.codec {
            *out = encode_in_rust(
                codec,
                clevel,
                data,
                block_bytes,
                block_shape,
                typesize,
                forward,
                (fslots, fmeta),
                &mut self.scratch,
            )
            .map_err(|e| EncodeError::Rust(e.to_string()))?;
            return Ok(());
        }
        self.filtered.resize(data.len(), 0);
        for (b, f) in data
            .chunks(block_bytes)
            .zip(self.filtered.chunks_mut(block_bytes))
        {
            forward
                .apply_block(b, f, &mut self.scratch)
                .map_err(|e| EncodeError::Rust(format!("filtering: {e}")))?;
        }
        self.cctx.compress(&self.filtered, out)?;
        let compressed = ChunkHeader::parse(out).is_ok_and(|h| h.extended && !h.memcpyed());
        if !compressed {
            return Ok(self.cctx.compress(data, out)?);
        }
        set_filters(out, fslots, fmeta);
        Ok(())
    }
}

/// Encode `data` (whole blocks of `block_bytes`, items of `typesize` bytes) as a chunk whose
/// codec Rust runs (ZLIB), each block filtered by `forward` first and stored as one stream
/// (the header's "not split" flag set); `filters`/`filters_meta` are the header bytes that
/// record the pipeline. A block of zeros is stored as a zero run, a block the codec does not
/// shrink as is; a chunk that would not shrink is stored uncompressed (memcpyed, unfiltered).
#[allow(clippy::too_many_arguments)]
fn encode_in_rust(
    codec: RustCodec,
    clevel: u8,
    data: &[u8],
    block_bytes: usize,
    block_shape: &[usize],
    typesize: usize,
    forward: &filters::ForwardPipeline,
    header_filters: (&[u8; 6], &[u8; 6]),
    scratch: &mut Vec<u8>,
) -> Result<Vec<u8>, ChunkError> {
    let nbytes = i32::try_from(data.len()).map_err(|_| "chunk over 2 GiB".to_string())?;
    if block_bytes == 0 || !data.len().is_multiple_of(block_bytes) {
        return Err(format!("{} bytes are not whole blocks of {block_bytes}", data.len()).into());
    }
    let nblocks = data.len() / block_bytes;
    // (header codec format, user codec id, codec meta)
    let (codec_format, udcodec, codec_meta): (u8, u8, u8) = match codec {
        RustCodec::Zlib => (3, 0, 0),
        RustCodec::Zfp(mode, meta) => (6, mode.id(), meta),
        other => return Err(format!("{} is not written here", other.name()).into()),
    };
    let mut out = vec![0u8; EXTENDED_HEADER_LEN + 4 * nblocks];
    let mut filtered = vec![0u8; block_bytes];
    for (j, block) in data.chunks(block_bytes).enumerate() {
        let start = i32::try_from(out.len()).map_err(|_| "chunk over 2 GiB".to_string())?;
        out[EXTENDED_HEADER_LEN + 4 * j..EXTENDED_HEADER_LEN + 4 * j + 4]
            .copy_from_slice(&start.to_le_bytes());
        forward.apply_block(block, &mut filtered, scratch)?;
        if filtered.iter().all(|&b| b == 0) {
            out.extend_from_slice(&0i32.to_le_bytes());
            continue;
        }
        match codec.encode_stream(&filtered, clevel, block_shape, typesize)? {
            Some(c) => {
                out.extend_from_slice(&(c.len() as i32).to_le_bytes());
                out.extend_from_slice(&c);
            }
            None => {
                out.extend_from_slice(&(block_bytes as i32).to_le_bytes());
                out.extend_from_slice(&filtered);
            }
        }
    }
    let header_typesize = filters::c_typesize(typesize.max(1)) as u8;
    let mut flags = 0x01 | 0x04 | 0x10 | (codec_format << 5);
    let (fs, fm) = header_filters;
    // c-blosc2 stores a chunk under 32 bytes (BLOSC_MIN_BUFFERSIZE) as is, and one whose
    // streams outgrow the data plus a header.
    let (fs, fm) = if data.len() < 32 || out.len() > EXTENDED_HEADER_LEN + data.len() {
        out.truncate(EXTENDED_HEADER_LEN);
        out.extend_from_slice(data);
        // As c-blosc2 writes it: a chunk under 32 bytes is memcpyed before any header flag
        // but "extended" is set; a larger one keeps its codec and split bits.
        flags = if data.len() < 32 { 0x07 } else { flags | 0x02 };
        (&[0u8; 6], &[0u8; 6])
    } else {
        (fs, fm)
    };
    let cbytes = i32::try_from(out.len()).map_err(|_| "chunk over 2 GiB".to_string())?;
    out[0] = 5; // chunk format version
    out[1] = 1; // codec format version (BLOSC_ZLIB_VERSION_FORMAT)
    out[2] = flags;
    out[3] = header_typesize;
    out[4..8].copy_from_slice(&nbytes.to_le_bytes());
    out[8..12].copy_from_slice(&(block_bytes as i32).to_le_bytes());
    out[12..16].copy_from_slice(&cbytes.to_le_bytes());
    set_filters(&mut out, fs, fm);
    out[22] = udcodec;
    out[23] = codec_meta;
    Ok(out)
}
