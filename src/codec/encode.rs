//! Blosc2 chunks encoded: [`Encoder`] owns a chunk's whole encode, the mirror of
//! [`Decoder`](super::chunk::Decoder): all-zero chunks as zero special chunks, the filters
//! c-blosc2 2.15 lacks (or runs slower) applied in Rust to each block inside c-blosc2's
//! compression (its prefilter: the block is filtered while in cache, on C's block threads),
//! and the codecs it lacks (ZLIB, ZFP) encoded in Rust, recording in the header what
//! python-blosc2 records.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;
use crate::codec::filters;
use crate::codec::RustCodec;
use crate::ffi::{
    lz4_compress_append, BlockFilter, CError, Cctx, CompressParams, EXTENDED_HEADER_LEN,
    SPLIT_ALWAYS, SPLIT_NEVER,
};
use crate::format::chunk::{set_filters, ChunkHeader};
use crate::model::ids;
use crate::parallel::Threads;
use std::sync::Mutex;

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

/// Per-thread encoding state: a c-blosc2 compression context (running the Rust filters as
/// its prefilter when there are any), the Rust stages, and their buffers (kept between chunks).
pub(crate) struct Encoder {
    cctx: Cctx,
    stages: RustStages,
    scratch: Vec<u8>,
    /// LZ4 chunks encoded as c-blosc2 3.x encodes them (see [`Lz4`]), when the pipeline
    /// allows.
    lz4: Option<Lz4>,
}

/// LZ4 chunks encoded block by block around LZ4's own encoder, as python-blosc2 4.x's
/// c-blosc2 3.x encodes them: LZ4 at acceleration `10 - clevel` (the linked c-blosc2 2.15
/// runs it at 1, "to match IPP": slower, and other bytes than python-blosc2's), everything
/// else as c-blosc2's `blosc_c` (one stream per item byte or one per block, streams of one
/// repeated byte stored as runs, streams LZ4 cannot shrink stored as they are). The filters
/// run in Rust ([`RustStages::forward`]) or there are none; a chunk that does not shrink
/// is left to c-blosc2 (stored as is).
struct Lz4 {
    acceleration: i32,
    split: bool,
    /// The header's first 32 bytes, sizes left to fill.
    header: [u8; EXTENDED_HEADER_LEN],
    forward: Option<filters::ForwardPipeline>,
    /// Where blocks are encoded when the context has block threads, and one lane per thread.
    exec: Option<Threads>,
    lanes: Vec<Lz4Lane>,
}

/// One block thread's buffers (kept between chunks).
#[derive(Default)]
struct Lz4Lane {
    filtered: Vec<u8>,
    scratch: Vec<u8>,
    /// The block it encoded last.
    packed: Vec<u8>,
}

/// A chunk being filled by block threads in block order: the chunk (header and block starts
/// first), the next block it takes, and the blocks encoded before their turn.
struct InOrder<'a> {
    out: &'a mut Vec<u8>,
    next: usize,
    waiting: Vec<Option<Vec<u8>>>,
}

impl InOrder<'_> {
    /// Append block `next`'s bytes and record where it starts.
    fn append(&mut self, block: &[u8]) -> Result<(), EncodeError> {
        let at = i32::try_from(self.out.len())
            .map_err(|_| EncodeError::Rust("a chunk over 2 GiB".into()))?;
        let slot = EXTENDED_HEADER_LEN + 4 * self.next;
        self.out[slot..slot + 4].copy_from_slice(&at.to_le_bytes());
        self.out.extend_from_slice(block);
        self.next += 1;
        Ok(())
    }
}

impl Lz4 {
    /// The LZ4 encoder for chunks compressed with `params` after `stages`, or `None` when
    /// c-blosc2 encodes them (another codec, level 0, or filters C runs).
    fn new(params: &CompressParams, stages: &RustStages, exec: &Threads) -> Option<Lz4> {
        if params.compcode != ids::LZ4
            || !(1..=9).contains(&params.clevel)
            || stages.codec.is_some()
        {
            return None;
        }
        let (slots, metas, forward) = match &stages.forward {
            Some((f, slots, metas)) => (*slots, *metas, Some(f.clone())),
            None if params.filters.iter().all(|&f| f == ids::NOFILTER) => {
                (params.filters, params.filters_meta, None)
            }
            None => return None,
        };
        let ts = usize::try_from(params.typesize)
            .ok()
            .filter(|&t| (1..=255).contains(&t))?;
        let blocksize = usize::try_from(params.blocksize).ok().filter(|&b| b > 0)?;
        // c-blosc2's `split_block` for LZ4, on the filters the header records.
        let split = match params.splitmode {
            SPLIT_ALWAYS => true,
            SPLIT_NEVER => false,
            _ => slots.contains(&ids::SHUFFLE) && ts <= 16 && blocksize / ts >= 32,
        };
        let mut header = [0u8; EXTENDED_HEADER_LEN];
        header[0] = 5; // BLOSC2_VERSION_FORMAT
        header[1] = 1; // BLOSC_LZ4_VERSION_FORMAT
        header[2] = 0x05 | if split { 0 } else { 0x10 } | (1 << 5); // extended, split, LZ4
        header[3] = ts as u8;
        header[16..22].copy_from_slice(&slots);
        header[22] = ids::LZ4;
        header[23] = params.compcode_meta;
        header[24..30].copy_from_slice(&metas);
        let threads = usize::try_from(params.nthreads).unwrap_or(1).max(1);
        Some(Lz4 {
            acceleration: 10 - i32::from(params.clevel),
            split,
            header,
            forward,
            exec: (threads > 1).then(|| exec.clone()),
            lanes: (0..threads).map(|_| Lz4Lane::default()).collect(),
        })
    }

    /// Encode `data` (whole blocks of `block_bytes`) into `out`; `false` (and `out`
    /// unspecified) when the chunk is for c-blosc2: it would not shrink, or its blocks are
    /// not whole streams.
    fn encode(
        &mut self,
        data: &[u8],
        block_bytes: usize,
        out: &mut Vec<u8>,
    ) -> Result<bool, EncodeError> {
        let ts = usize::from(self.header[3]);
        if data.len() < 32 || block_bytes == 0 || !data.len().is_multiple_of(block_bytes) {
            return Ok(false);
        }
        let nstreams = if self.split { ts } else { 1 };
        if !block_bytes.is_multiple_of(nstreams) {
            return Ok(false);
        }
        let nblocks = data.len() / block_bytes;
        let (accel, forward) = (self.acceleration, self.forward.as_ref());
        let as_i32 =
            |n: usize| i32::try_from(n).map_err(|_| EncodeError::Rust("a chunk over 2 GiB".into()));
        let filtering = |e: ChunkError| EncodeError::Rust(format!("filtering: {e}"));
        // As c-blosc2 lays it out: the header, each block's start, the blocks.
        let start = EXTENDED_HEADER_LEN + 4 * nblocks;
        out.clear();
        out.extend_from_slice(&self.header);
        out.resize(start, 0);
        if let Some(exec) = &self.exec {
            // At most the data and a header, or it is c-blosc2's: no reallocation on the way.
            out.reserve(data.len() + EXTENDED_HEADER_LEN);
            // Blocks on the block threads, each into its lane's buffer, then appended to
            // the chunk in block order: by the lane that encoded the next block to append
            // (and any later ones that wait, encoded), or left waiting until it is next.
            // The chunk is the one a single thread encodes, whatever the threads.
            let order = Mutex::new(InOrder {
                out,
                next: 0,
                waiting: vec![None; nblocks],
            });
            exec.for_each_lane(
                &mut self.lanes,
                data.chunks(block_bytes).enumerate(),
                |lane, (j, block)| -> Result<(), EncodeError> {
                    let Lz4Lane {
                        filtered,
                        scratch,
                        packed,
                    } = lane;
                    packed.clear();
                    lz4_block(block, forward, nstreams, accel, filtered, scratch, packed)
                        .map_err(filtering)?;
                    let mut o = order.lock().unwrap_or_else(|e| e.into_inner());
                    if j != o.next {
                        o.waiting[j] = Some(std::mem::take(packed));
                        return Ok(());
                    }
                    o.append(packed)?;
                    loop {
                        let next = o.next;
                        let Some(b) = o.waiting.get_mut(next).and_then(Option::take) else {
                            break;
                        };
                        o.append(&b)?;
                    }
                    Ok(())
                },
            )?;
        } else {
            // One thread: straight into the chunk.
            for (j, block) in data.chunks(block_bytes).enumerate() {
                let at = as_i32(out.len())?.to_le_bytes();
                out[EXTENDED_HEADER_LEN + 4 * j..EXTENDED_HEADER_LEN + 4 * j + 4]
                    .copy_from_slice(&at);
                let lane = &mut self.lanes[0];
                lz4_block(
                    block,
                    forward,
                    nstreams,
                    accel,
                    &mut lane.filtered,
                    &mut lane.scratch,
                    out,
                )
                .map_err(filtering)?;
            }
        }
        // More than the data plus BLOSC2_MAX_OVERHEAD (32) bytes: stored as is, by c-blosc2.
        if out.len() > data.len() + 32 {
            return Ok(false);
        }
        let total = as_i32(out.len())?;
        out[4..8].copy_from_slice(&as_i32(data.len())?.to_le_bytes());
        out[8..12].copy_from_slice(&as_i32(block_bytes)?.to_le_bytes());
        out[12..16].copy_from_slice(&total.to_le_bytes());
        Ok(true)
    }
}

/// One block as c-blosc2's `blosc_c` encodes it (after `forward`, if any), appended to
/// `out`: `nstreams` streams, each a 4-byte size and its bytes: 0 for a run of zeros, `-v` and a token byte 1
/// for a run of byte `v`, LZ4's bytes when shorter than the stream, else the stream itself.
fn lz4_block(
    block: &[u8],
    forward: Option<&filters::ForwardPipeline>,
    nstreams: usize,
    acceleration: i32,
    filtered: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<(), ChunkError> {
    let src: &[u8] = match forward {
        Some(f) => {
            filtered.resize(block.len(), 0);
            f.apply_block(block, filtered, scratch)?;
            filtered
        }
        None => block,
    };
    let neblock = src.len() / nstreams;
    for stream in src.chunks_exact(neblock) {
        let v = stream[0];
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        let size = if is_run(stream) {
            if v != 0 {
                out.push(1); // the token of a run of a non-zero byte
            }
            -i32::from(v)
        } else {
            match lz4_compress_append(stream, out, neblock - 1, acceleration) {
                Some(n) => n as i32,
                None => {
                    out.extend_from_slice(stream);
                    neblock as i32
                }
            }
        };
        out[at..at + 4].copy_from_slice(&size.to_le_bytes());
    }
    Ok(())
}

/// Whether every byte of `s` (not empty) is its first (c-blosc2's `get_run`), compared 64
/// bytes at a time.
fn is_run(s: &[u8]) -> bool {
    let v = s[0];
    let pattern = [v; 64];
    let mut wide = s.chunks_exact(64);
    wide.all(|c| c == pattern) && wide.remainder().iter().all(|&b| b == v)
}

/// The Rust forward filters as c-blosc2's prefilter: each block filtered into C's block
/// buffer, with working memory of the calling thread's own.
struct ForwardFilter(filters::ForwardPipeline);

impl BlockFilter for ForwardFilter {
    fn filter_block(&self, input: &[u8], output: &mut [u8]) -> bool {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            self.0.apply_block(input, output, &mut s).is_ok()
        })
    }
}

impl Encoder {
    /// An encoder for chunks c-blosc2 compresses with `params` (without the filters done in
    /// Rust) after the Rust `stages`.
    pub(crate) fn new(
        params: &CompressParams,
        stages: RustStages,
        exec: &Threads,
    ) -> Result<Encoder, CError> {
        let lz4 = Lz4::new(params, &stages, exec);
        let cctx = match &stages {
            RustStages {
                forward: Some((f, _, _)),
                codec: None,
            } => Cctx::with_filter(params, Box::new(ForwardFilter(f.clone())))?,
            _ => Cctx::new(params)?,
        };
        Ok(Encoder {
            cctx,
            stages,
            scratch: Vec::new(),
            lz4,
        })
    }

    /// Encode `data` (a whole extended chunk: whole blocks of `block_bytes`, items of
    /// `typesize` bytes, b2nd blocks of `block_shape`) into `out` (replacing its contents,
    /// reusing its allocation). An all-zero chunk becomes a zero special chunk. Rust
    /// filters run block by block inside c-blosc2's compression and are recorded in the
    /// header; a chunk c-blosc2 stores uncompressed (memcpyed) keeps its data unfiltered
    /// (readers ignore the filters of such chunks), as c-blosc2 stores it.
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
        if let Some(lz4) = &mut self.lz4 {
            if lz4.encode(data, block_bytes, out)? {
                return Ok(());
            }
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
        // The context's prefilter runs `forward` on every block.
        // (A block the filters refuse fails it as C's "filter pipeline error".)
        self.cctx.compress(data, out)?;
        let compressed = ChunkHeader::parse(out).is_ok_and(|h| h.extended && !h.memcpyed());
        if !compressed {
            // Stored as is: a header and the blocks as C's prefilter left them (filtered).
            // c-blosc2 stores the data itself in such chunks, and readers ignore their
            // filters: the data replaces the filtered bytes behind the same header.
            let memcpyed = ChunkHeader::parse(out).is_ok_and(|h| h.memcpyed());
            if !memcpyed || out.len() != EXTENDED_HEADER_LEN + data.len() {
                return Err(EncodeError::Rust(format!(
                    "c-blosc2 stored a chunk of {} bytes in {} bytes, neither compressed nor \
                     as is",
                    data.len(),
                    out.len()
                )));
            }
            out.truncate(EXTENDED_HEADER_LEN);
            out.extend_from_slice(data);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::{SPLIT_ALWAYS, SPLIT_NEVER};
    use crate::model::ids::{BITSHUFFLE, BLOSCLZ, LZ4, SHUFFLE, ZSTD};

    /// Bytes that compress somewhat: small random steps, runs of zeros, some noise.
    fn data(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut acc = 0u32;
        (0..len)
            .map(|i| match (i / 4096) % 4 {
                0 => 0,
                1 => next() as u8,
                _ => {
                    acc = acc.wrapping_add((next() % 3) as u32);
                    (acc >> (8 * (i % 4))) as u8
                }
            })
            .collect()
    }

    /// A chunk's compressed blocks in block order (c-blosc2's threads store them in the
    /// order they finish): from each block's start to the next start after it.
    fn blocks(chunk: &[u8]) -> Vec<Vec<u8>> {
        let h = ChunkHeader::parse(chunk).unwrap();
        if h.memcpyed() {
            return vec![chunk[32..].to_vec()];
        }
        let n = h.nbytes.div_ceil(h.blocksize);
        let starts: Vec<usize> = (0..n)
            .map(|j| i32::from_le_bytes(chunk[32 + 4 * j..36 + 4 * j].try_into().unwrap()) as usize)
            .collect();
        let mut sorted = starts.clone();
        sorted.push(chunk.len());
        sorted.sort();
        starts
            .iter()
            .map(|&s| {
                let end = sorted[sorted.partition_point(|&x| x <= s)];
                chunk[s..end].to_vec()
            })
            .collect()
    }

    /// The Rust filters (c-blosc2's prefilter, on C's block threads) encode exactly the
    /// chunk c-blosc2 2.15 encodes with its own filters, for every pipeline they take over
    /// from C: the same bytes, header included, stored-as-is chunks too.
    #[test]
    fn rust_filters_encode_the_bytes_c_filters_do() {
        let (mut checked, mut as_is) = (0, 0);
        for (filters, typesizes) in [
            ([0, 0, 0, 0, 0, SHUFFLE], &[1usize, 2, 4, 8, 16][..]),
            ([BITSHUFFLE, 0, 0, 0, 0, 0], &[1, 2, 4, 8, 16]),
            ([0, 0, 0, 0, SHUFFLE, BITSHUFFLE], &[2, 4, 8]),
        ] {
            for &ts in typesizes {
                for (codec, clevel) in [(BLOSCLZ, 5), (LZ4, 5), (LZ4, 9), (ZSTD, 1), (ZSTD, 5)] {
                    for split in [SPLIT_ALWAYS, SPLIT_NEVER] {
                        for nthreads in [1, 2] {
                            // Blocks whose element count is not a multiple of 8 (BITSHUFFLE
                            // leaves the rest as is), and a chunk of random bytes (stored
                            // as is).
                            for (blocksize, nblocks, seed) in
                                [(ts * 1000, 7, 1), (ts * 4096 + ts, 3, 2), (ts * 512, 4, 0)]
                            {
                                let len = blocksize * nblocks;
                                let d = if seed == 0 {
                                    // Random bytes: no codec shrinks them.
                                    let mut x = 7u64;
                                    (0..len)
                                        .map(|_| {
                                            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                                            (x >> 56) as u8
                                        })
                                        .collect()
                                } else {
                                    data(len, seed + ts as u64)
                                };
                                let c_params = CompressParams {
                                    compcode: codec,
                                    compcode_meta: 0,
                                    clevel,
                                    typesize: ts as i32,
                                    blocksize: blocksize as i32,
                                    splitmode: split,
                                    filters,
                                    filters_meta: [0; 6],
                                    nthreads,
                                };
                                let mut want = Vec::new();
                                Cctx::new(&c_params)
                                    .unwrap()
                                    .compress(&d, &mut want)
                                    .unwrap();
                                let forward = filters::ForwardPipeline::all_in_rust(
                                    &filters,
                                    &[0; 6],
                                    ts,
                                    &[],
                                )
                                .unwrap();
                                let rust_params = CompressParams {
                                    filters: [0; 6],
                                    ..c_params.clone()
                                };
                                let stages = RustStages {
                                    forward: Some((forward, filters, [0; 6])),
                                    codec: None,
                                };
                                let mut enc =
                                    Encoder::new(&rust_params, stages, &Threads::Global).unwrap();
                                // C's LZ4 (acceleration 1) here: the filters are the test.
                                enc.lz4 = None;
                                let mut got = Vec::new();
                                enc.encode(&d, blocksize, &[], ts, &mut got).unwrap();
                                let what = format!(
                                    "{filters:?} ts {ts} codec {codec}/{clevel} split {split} \
                                     threads {nthreads} blocksize {blocksize}"
                                );
                                assert_eq!(got.len(), want.len(), "{what}");
                                if nthreads == 1 {
                                    assert!(got == want, "{what}: other bytes");
                                } else {
                                    // C's threads store blocks in the order they finish.
                                    assert_eq!(got[..32], want[..32], "{what}: header");
                                    assert_eq!(blocks(&got), blocks(&want), "{what}: blocks");
                                }
                                checked += 1;
                                as_is += usize::from(ChunkHeader::parse(&got).unwrap().memcpyed());
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 13 * 5 * 2 * 2 * 3);
        // Every random chunk (a third) was stored as is.
        assert_eq!(as_is, checked / 3);
    }
}
