//! Blosc2 chunks decoded (and, for the codecs done in Rust, encoded): the decode plan made
//! from the header ([`crate::format::chunk::ChunkHeader`]), with the filters and codecs the
//! linked c-blosc2 lacks done in Rust.
//!
//! Every chunk is checked from its header before c-blosc2 sees it: sizes against the array
//! geometry, chunk format, codec, dictionary flag and filter pipeline. What neither C nor Rust
//! can decode is refused by name, never decoded wrongly.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;
use crate::codec::filters;
use crate::codec::kernels;
use crate::codec::RustCodec;
use crate::ffi::{BlockHook, Dctx, HookedDctx, EXTENDED_HEADER_LEN};
use crate::format::chunk::{
    le_i32, stream_at, BlockStreams, ChunkHeader, FiltersCleared, Special, Stream, MAX_DICT_SIZE,
};
use crate::model::geometry::Geometry;
use crate::model::ids::codec_label;

/// What decoding produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// `dst` holds the decoded chunk.
    Data,
    /// All items are zero (a zero or uninitialised special chunk); `dst` was not written.
    Zeros,
}

/// How a chunk's filters get undone.
enum Path {
    /// Nothing to decode: zeros.
    Zeros,
    /// A repeated-value special chunk: the item after the header, repeated (done in Rust, since
    /// c-blosc2 2.15 repeats the first byte of items over 255 bytes).
    Repeat,
    /// Stored as is (memcpyed): the bytes after the header are the data, whatever the
    /// filter and dictionary flags say (c-blosc2 copies them from there too).
    Copy,
    /// c-blosc2 decodes everything.
    C,
    /// c-blosc2 decodes the codec with the filter bytes cleared; Rust undoes the filters.
    RustFilters,
    /// Rust decodes the codec streams of each block, then undoes the filters.
    Rust(RustCodec),
}

/// Decide how to decode a chunk, refusing what cannot be decoded.
fn plan(
    h: &ChunkHeader,
    expected_nbytes: usize,
    typesize: usize,
    len: usize,
) -> Result<Path, ChunkError> {
    let path = plan_path(h, expected_nbytes, typesize, len)?;
    // No chunk flagged with a dictionary reaches C: c-blosc2 2.15 frees the dictionary its
    // context keeps on every such chunk and, when the chunk's dictionary is then refused,
    // leaves the pointer dangling, freed again when the context is dropped (a double free).
    // Dictionary chunks C could decode are routed to Rust above, and stored-as-is ones
    // (python-blosc2 4.14.1 writes them for incompressible LZ4 dictionary arrays, keeping the
    // flag) are copied in Rust.
    if matches!(path, Path::C) && h.has_dict() {
        return Err(ChunkError::Unsupported(
            "chunk format",
            "a special chunk flagged with a dictionary (python-blosc2 cannot read it either)"
                .into(),
        ));
    }
    Ok(path)
}

/// [`plan`] before its check that no dictionary chunk goes to C.
fn plan_path(
    h: &ChunkHeader,
    expected_nbytes: usize,
    typesize: usize,
    len: usize,
) -> Result<Path, ChunkError> {
    let corrupt = |s: String| Err(ChunkError::Corrupt(s));
    check_sizes(h, expected_nbytes, len)?;
    if let Some(path) = special_path(h, typesize, len)? {
        return Ok(path);
    }
    if h.nbytes > 0 && (h.blocksize == 0 || h.blocksize > h.nbytes) {
        return corrupt(format!(
            "block size {} for a chunk of {} bytes",
            h.blocksize, h.nbytes
        ));
    }
    let header_typesize = filters::c_typesize(typesize.max(1));
    if h.extended && usize::from(h.typesize) != header_typesize {
        return corrupt(format!(
            "header typesize {} for items of {typesize} bytes (c-blosc2 records {header_typesize})",
            h.typesize
        ));
    }
    if h.memcpyed() {
        // c-blosc2 refuses one whose compressed size is not its data's plus the header's.
        if len != h.nbytes + h.header_len() {
            return corrupt(format!(
                "a stored-as-is chunk of {len} bytes holding {} bytes of data",
                h.nbytes
            ));
        }
        return Ok(Path::Copy);
    }
    let rust = rust_codec(h)?;
    if let Some(codec) = rust {
        return match filters::rust_can_undo(&h.filters, &h.filters_meta) {
            Ok(()) => Ok(Path::Rust(codec)),
            Err(e) => Err(unfilter_error(e)),
        };
    }
    if h.has_dict() && h.codec_format() == 0 {
        return Err(ChunkError::Unsupported(
            "codec",
            "blosclz with a dictionary".into(),
        ));
    }
    if filters::c_can_undo(&h.filters, &h.filters_meta, typesize) {
        if rust_filters_faster(h, typesize) {
            return Ok(Path::RustFilters);
        }
        return Ok(Path::C);
    }
    match filters::rust_can_undo(&h.filters, &h.filters_meta) {
        Ok(()) => Ok(Path::RustFilters),
        Err(e) => Err(unfilter_error(e)),
    }
}

/// The header's version, sizes and flags fit a chunk of `len` bytes holding
/// `expected_nbytes` decoded.
fn check_sizes(h: &ChunkHeader, expected_nbytes: usize, len: usize) -> Result<(), ChunkError> {
    let corrupt = |s: String| Err(ChunkError::Corrupt(s));
    if h.version > 5 {
        return Err(ChunkError::Unsupported(
            "chunk format",
            format!(
                "version {} (variable-length blocks, c-blosc2 3.x only)",
                h.version
            ),
        ));
    }
    if h.version == 0 {
        return corrupt("chunk format version 0".into());
    }
    if h.nbytes != expected_nbytes {
        return corrupt(format!(
            "holds {} bytes decoded, the array geometry needs {expected_nbytes}",
            h.nbytes
        ));
    }
    if h.cbytes != len {
        return corrupt(format!(
            "header says {} compressed bytes, the frame holds {len}",
            h.cbytes
        ));
    }
    if h.flags2 & 0x01 != 0 {
        return Err(ChunkError::Unsupported(
            "chunk format",
            "variable-length blocks".into(),
        ));
    }
    Ok(())
}

/// The path of a special chunk (zeros, NaNs, a repeated value), checked; `None` for a chunk
/// holding data.
fn special_path(h: &ChunkHeader, typesize: usize, len: usize) -> Result<Option<Path>, ChunkError> {
    let corrupt = |s: String| Err(ChunkError::Corrupt(s));
    match h.special() {
        Special::Zeros | Special::Uninit => Ok(Some(Path::Zeros)),
        Special::Nan => {
            if typesize != 4 && typesize != 8 {
                return corrupt(format!("NaN special chunk for items of {typesize} bytes"));
            }
            Ok(Some(Path::C))
        }
        Special::Value => {
            // The payload is one whole item: c-blosc2 derives the item size from cbytes (the
            // header's typesize byte is 1 for items over 255 bytes).
            if typesize == 0 || len != EXTENDED_HEADER_LEN + typesize {
                return corrupt(format!(
                    "repeated-value chunk of {len} bytes, items of {typesize} bytes need {}",
                    EXTENDED_HEADER_LEN + typesize
                ));
            }
            if !h.nbytes.is_multiple_of(typesize) {
                return corrupt(format!(
                    "repeated-value chunk of {} bytes is not whole items of {typesize} bytes",
                    h.nbytes
                ));
            }
            Ok(Some(Path::Repeat))
        }
        Special::None => Ok(None),
    }
}

/// The codec Rust runs for this chunk's streams (`None`: c-blosc2's), or why neither can.
fn rust_codec(h: &ChunkHeader) -> Result<Option<RustCodec>, ChunkError> {
    let corrupt = |s: String| Err(ChunkError::Corrupt(s));
    // c-blosc2 2.15 decodes LZ4 dictionaries wrongly (error -3) and ZSTD dictionaries
    // unsafely (see `RustCodec::ZstdDict`), and has no ZLIB: Rust decodes those streams.
    let rust = match h.codec_format() {
        4 if h.has_dict() => Some(RustCodec::ZstdDict),
        0 | 4 => None,              // blosclz, zstd: compiled in
        1 if !h.has_dict() => None, // lz4 / lz4hc
        1 => Some(RustCodec::Lz4),  // lz4 / lz4hc with a dictionary
        3 if h.has_dict() => {
            return Err(ChunkError::Unsupported(
                "codec",
                "zlib (id 4) with a dictionary".into(),
            ))
        }
        3 => Some(RustCodec::Zlib),
        2 => return Err(ChunkError::Unsupported("codec", "snappy (id 3)".into())),
        6 if h.udcodec == 32 => Some(RustCodec::Ndlz(h.codec_meta)),
        6 if crate::codec::zfp::Mode::from_id(h.udcodec).is_some() => {
            let mode = crate::codec::zfp::Mode::from_id(h.udcodec).expect("checked");
            Some(RustCodec::Zfp(mode, h.codec_meta))
        }
        6 => return Err(ChunkError::Unsupported("codec", codec_label(h.udcodec))),
        other => return corrupt(format!("unknown codec format {other}")),
    };
    Ok(rust)
}

/// Whether Rust should undo this chunk's filters although c-blosc2 can: when this CPU has
/// AVX2 and every active filter is a SHUFFLE of 2, 4, 8 or 16-byte items or a BITSHUFFLE of
/// 1, 2, 4, 8 or 16-byte elements (the widths [`kernels`] have vector code for). The linked
/// c-blosc2 2.15 is built with SSE2 only (`blosc2-src` decides AVX2 at build time, without it
/// by default); [`kernels`] pick AVX2 at run time, so C then runs the codec only and the hook
/// undoes the filters of each block. DELTA (blocks decoded against block 0) stays with C.
fn rust_filters_faster(h: &ChunkHeader, typesize: usize) -> bool {
    let avx2 = kernels::Isa::best() == kernels::Isa::Avx2;
    let cts = filters::c_typesize(typesize.max(1));
    let mut active = (0..6)
        .filter(|&i| !filters::is_identity_backward(h.filters[i]))
        .peekable();
    active.peek().is_some()
        && active.all(|i| match h.filters[i] {
            // A shuffle of 1-byte groups (bools, bytes, items over 255 bytes) moves nothing:
            // c-blosc2 2.15 still copies each block through its byte-at-a-time generic
            // unshuffle.
            filters::SHUFFLE if filters::shuffle_width(h.filters_meta[i], cts) == 1 => true,
            filters::SHUFFLE => {
                avx2 && (h.filters_meta[i] == 0 || usize::from(h.filters_meta[i]) == typesize)
                    && matches!(typesize, 2 | 4 | 8 | 16)
            }
            filters::BITSHUFFLE => avx2 && matches!(cts, 1 | 2 | 4 | 8 | 16),
            _ => false,
        })
}

/// Fill `dst` with the item stored after the header of a repeated-value chunk (checked by
/// [`plan`]: `src` is the header plus exactly one item of `typesize` bytes).
fn fill_repeated(src: &[u8], dst: &mut [u8], typesize: usize) {
    let item = &src[EXTENDED_HEADER_LEN..EXTENDED_HEADER_LEN + typesize];
    for d in dst.chunks_exact_mut(typesize) {
        d.copy_from_slice(item);
    }
}

/// Decode a chunk whose codec streams Rust decodes ([`Path::Rust`]): walk the block offsets
/// (and dictionary), decode each wanted block's streams into its place in `dst`, then undo the
/// filters in Rust. Blocks with `skip[j]` are left alone (block 0 is decoded anyway when the
/// pipeline has DELTA). Every offset and size is checked against `src`.
#[allow(clippy::too_many_arguments)]
fn decode_in_rust(
    h: &ChunkHeader,
    codec: RustCodec,
    src: &[u8],
    dst: &mut [u8],
    typesize: usize,
    blocks: &[usize],
    skip: Option<&[bool]>,
    scratch: &mut Vec<u8>,
) -> Result<(), ChunkError> {
    let corrupt = |s: String| ChunkError::Corrupt(s);
    if h.nbytes == 0 {
        return Ok(());
    }
    let nblocks = h.nbytes.div_ceil(h.blocksize);
    let bstarts_end = nblocks
        .checked_mul(4)
        .and_then(|n| n.checked_add(EXTENDED_HEADER_LEN))
        .filter(|&e| e <= src.len())
        .ok_or_else(|| corrupt(format!("{nblocks} block offsets do not fit in the chunk")))?;
    let (dict, data_start) = if h.has_dict() {
        let size = le_i32(src, bstarts_end)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s > 0 && s <= MAX_DICT_SIZE)
            .ok_or_else(|| corrupt("dictionary size missing or out of range".into()))?;
        let start = bstarts_end + 4;
        let dict = src
            .get(start..start + size)
            .ok_or_else(|| corrupt(format!("dictionary of {size} bytes overruns the chunk")))?;
        (Some(dict), start + size)
    } else {
        (None, bstarts_end)
    };
    let has_delta = h.has_delta();
    for j in 0..nblocks {
        if skip.is_some_and(|m| m.get(j) == Some(&true)) && !(j == 0 && has_delta) {
            continue;
        }
        let block_err = |s: String| corrupt(format!("block {j}: {s}"));
        let b = BlockStreams::of(h, src, j, data_start).map_err(block_err)?;
        let mut at = b.offset;
        for s in 0..b.nstreams {
            let out = &mut dst[b.start + s * b.neblock..b.start + (s + 1) * b.neblock];
            let (stream, next) = stream_at(src, at, s).map_err(block_err)?;
            at = next;
            match stream {
                Stream::Run(v) => out.fill(v),
                Stream::Bytes(bytes) if bytes.len() == b.neblock => out.copy_from_slice(bytes),
                Stream::Bytes(bytes) => codec
                    .decode_stream(bytes, out, dict, blocks, typesize)
                    .map_err(|e| block_err(format!("stream {s}: {e}")))?,
            }
        }
    }
    filters::undo_blocks(
        &h.filters,
        &h.filters_meta,
        typesize,
        blocks,
        h.blocksize,
        dst,
        scratch,
        skip,
    )
    .map_err(unfilter_error)
}

/// A filter error as a chunk error.
fn unfilter_error(e: filters::UnfilterError) -> ChunkError {
    match e {
        filters::UnfilterError::Unsupported { id, meta } => ChunkError::Unsupported(
            "filter",
            format!("{} (id {id}, meta {meta})", filters::filter_name(id)),
        ),
        filters::UnfilterError::Corrupt(s) => ChunkError::Corrupt(s),
    }
}

/// Which blocks of a chunk a caller needs: one flag per block of `block_bytes` bytes, in the
/// chunk's block order (for b2nd chunks, the C-order block grid of the extended chunk).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockMask<'a> {
    /// `wanted[j]`: block `j` must be decoded.
    pub wanted: &'a [bool],
    /// Bytes per block (the last block of a chunk may be shorter).
    pub block_bytes: usize,
}

/// The Rust filter inverse c-blosc2 runs on each block of a chunk it decoded with the filter
/// bytes cleared (see [`HookedDctx`]): the filters are undone while the block is in cache and
/// the block is written to the output once.
struct FilterHook {
    /// The pipeline and the (filters, meta, typesize) it was built for.
    pipeline: Option<(filters::Pipeline, [u8; 6], [u8; 6], usize)>,
    /// Blocks are projected to the low byte of each 4-byte code unit
    /// ([`filters::Pipeline::narrow_block_into`]) instead of undone whole.
    narrow: bool,
    /// Set when a projected block had a code unit of 256 or more (the call then fails).
    wide: std::sync::atomic::AtomicBool,
}

impl BlockHook for FilterHook {
    fn finish_block(&self, input: &mut [u8], output: &mut [u8]) -> bool {
        match &self.pipeline {
            Some((p, ..)) if self.narrow => {
                let ok = p.narrow_block_into(input, output);
                if !ok {
                    self.wide.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                ok
            }
            Some((p, ..)) => p.undo_block_into(input, output).is_ok(),
            None => false,
        }
    }
}

/// Per-thread decoding state: c-blosc2 contexts and scratch buffers.
pub(crate) struct Decoder {
    nthreads: usize,
    dctx: Dctx,
    /// A single-threaded context for DELTA chunks Rust cannot unfilter when `dctx` has block
    /// threads (created when first needed): c-blosc2 2.15's threaded DELTA decode makes every
    /// block wait for block 0 (`pipeline_backward`, `delta_cv`) and never wakes them when
    /// block 0 fails, so a chunk whose first block is corrupt hangs the read forever (found
    /// by fuzzing). DELTA chunks Rust can unfilter take the Rust-filters path instead.
    serial: Option<Dctx>,
    /// For chunks whose filters Rust undoes block by block (created when first needed).
    hooked: Option<HookedDctx<FilterHook>>,
    filter_scratch: Vec<u8>,
    /// c-blosc2 maskout (`true` = skip the block), rebuilt per masked decode.
    maskout: Vec<bool>,
    /// The b2nd block shape, for filters that need it (NDCELL, NDMEAN); empty if unknown.
    blocks: Vec<usize>,
}

/// A chunk's decode plan, made once from its header for the decoded size the caller expects:
/// the header's fields and the route its decode takes (refused here when nothing can decode
/// it).
struct ChunkPlan {
    h: ChunkHeader,
    path: Path,
}

impl ChunkPlan {
    /// Parse and check `src`'s header for a chunk of `nbytes` decoded bytes of items of
    /// `typesize` bytes.
    fn new(src: &[u8], nbytes: usize, typesize: usize) -> Result<ChunkPlan, ChunkError> {
        let h = ChunkHeader::parse(src)?;
        let path = plan(&h, nbytes, typesize, src.len())?;
        Ok(ChunkPlan { h, path })
    }

    /// Whether blocks of `block_bytes` can be decoded alone, straight from c-blosc2's codec
    /// (what decoding a part or block by block needs): an ordinary compressed chunk of
    /// exactly those blocks, without DELTA (every block is decoded against block 0).
    fn blockwise(&self, nblocks: usize, block_bytes: usize) -> bool {
        self.h.maskable(nblocks, block_bytes)
            && !self.h.memcpyed()
            && !self.h.has_delta()
            && matches!(self.path, Path::C | Path::RustFilters)
    }
}

/// What one decode fills: see [`Decoder::decode_into`].
pub(crate) enum Target<'a> {
    /// The whole decoded chunk (exactly its decoded size).
    Whole(&'a mut [u8]),
    /// A chunk-size buffer of which only the blocks the mask wants are sure to be decoded
    /// (the bytes of the others are unspecified).
    Blocks(&'a mut [u8], BlockMask<'a>),
    /// Byte runs of the decoded chunk copied into an output.
    Runs(Runs<'a>),
    /// Consecutive whole blocks of little-endian 4-byte code units, projected to each unit's
    /// low byte as the codec produces them (decoded with the blocks' mask, so a fetch of
    /// those blocks alone is enough).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    Narrow(Narrow<'a>),
}

/// Runs of a decoded chunk to copy into an output (a region of an array, in C order).
pub(crate) struct Runs<'a> {
    /// A chunk-size scratch buffer (its decoded size).
    pub(crate) decoded: &'a mut [u8],
    /// `(offset in the decoded chunk, offset in out, bytes)`, grouped by block in block
    /// order (a run never spans two blocks), inside both buffers.
    pub(crate) runs: &'a [(usize, usize, usize)],
    pub(crate) out: &'a mut [u8],
    /// The blocks a run touches.
    pub(crate) touched: &'a [bool],
    /// Bytes per block.
    pub(crate) block_bytes: usize,
    /// Only the touched blocks' bytes were fetched (the others are unspecified): they must be
    /// decoded with their mask.
    pub(crate) partial: bool,
}

/// Blocks `first_block..` of a chunk of 4-byte code units (NumPy `U`, little-endian) as one
/// byte a unit: what a column of Latin-1 strings needs, without the other three bytes.
pub(crate) struct Narrow<'a> {
    /// A chunk-size destination c-blosc2 asks for and never writes: its pages stay untouched.
    pub(crate) blank: &'a mut [u8],
    /// The first block wanted.
    pub(crate) first_block: usize,
    /// A quarter of the wanted blocks' decoded bytes (whole blocks, the chunk's last one
    /// possibly short).
    pub(crate) out: &'a mut [u8],
    /// Bytes per block.
    pub(crate) block_bytes: usize,
    /// What became of the blocks.
    pub(crate) outcome: &'a mut Narrowed,
}

/// What a [`Target::Narrow`] decode did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Narrowed {
    /// `out` holds the blocks' low bytes.
    Done,
    /// A unit of the blocks is 256 or more (`out` unspecified): read them whole.
    Wide,
    /// The chunk's blocks cannot be projected as the codec produces them (another filter,
    /// a codec Rust runs, a special or stored chunk): read them whole and project them.
    Unprojectable,
}

impl Decoder {
    /// A decoder whose c-blosc2 context uses `nthreads` block-level threads.
    pub(crate) fn new(nthreads: usize) -> Decoder {
        Decoder {
            nthreads,
            dctx: Dctx::new(nthreads),
            serial: None,
            hooked: None,
            filter_scratch: Vec::new(),
            maskout: Vec::new(),
            blocks: Vec::new(),
        }
    }

    /// The same decoder for chunks of b2nd blocks of this shape (NDCELL and NDMEAN need it).
    pub(crate) fn with_blocks(mut self, blocks: &[u64]) -> Decoder {
        self.blocks = blocks.iter().map(|&b| b as usize).collect();
        self
    }

    /// Decode a standalone chunk (e.g. a vlmeta value) whose decoded size comes from its own
    /// header, at most `max_nbytes`.
    pub(crate) fn decode_standalone(
        &mut self,
        src: &[u8],
        max_nbytes: usize,
    ) -> Result<Vec<u8>, ChunkError> {
        let h = ChunkHeader::parse(src)?;
        if h.nbytes > max_nbytes {
            return Err(ChunkError::Corrupt(format!(
                "declares {} decoded bytes, more than the {max_nbytes} allowed",
                h.nbytes
            )));
        }
        let typesize = usize::from(src[3]).max(1);
        let mut out = vec![0u8; h.nbytes];
        match self.decode(&mut src.to_vec(), &mut out, typesize)? {
            Decoded::Data => {}
            Decoded::Zeros => out.fill(0),
        }
        Ok(out)
    }

    /// Decode chunk `src` whole into `dst` (see [`Decoder::decode_into`]).
    pub(crate) fn decode(
        &mut self,
        src: &mut [u8],
        dst: &mut [u8],
        typesize: usize,
    ) -> Result<Decoded, ChunkError> {
        self.decode_into(src, typesize, Target::Whole(dst))
    }

    /// The one decoder entry: decode chunk `src` (compressed bytes, items of `typesize`
    /// bytes) into `target`, by the fastest route the chunk allows. The header is parsed and
    /// checked once. `src` is mutable because filters Rust undoes are hidden from C by
    /// clearing the header's filter bytes during the call; they are put back before
    /// returning.
    ///
    /// - [`Target::Whole`] and [`Target::Blocks`]: [`Decoded::Zeros`] means all items are
    ///   zero and the buffer was not written. The mask of `Blocks` is used (c-blosc2's block
    ///   maskout, and the Rust filters skip the same blocks) only for ordinary data chunks
    ///   whose Blosc blocks are exactly the mask's blocks; other chunks are decoded whole.
    ///   Block 0 is always decoded when the chunk has DELTA.
    /// - [`Target::Runs`]: the runs are in `out` on success (zeros for a zero chunk), and
    ///   [`Decoded::Data`] is returned. A single run of whole consecutive blocks (a thread's
    ///   share of a chunk) is decoded straight into `out`; with one thread, large blocks are
    ///   decoded and copied out one at a time while in cache (a lone SHUFFLE then undone
    ///   straight into `out`); otherwise the touched blocks are decoded into `decoded` and
    ///   the runs copied.
    pub(crate) fn decode_into(
        &mut self,
        src: &mut [u8],
        typesize: usize,
        target: Target<'_>,
    ) -> Result<Decoded, ChunkError> {
        match target {
            Target::Whole(dst) => {
                let p = ChunkPlan::new(src, dst.len(), typesize)?;
                self.decode_planned(&p, src, dst, typesize, None)
            }
            Target::Blocks(dst, mask) => {
                let p = ChunkPlan::new(src, dst.len(), typesize)?;
                self.decode_planned(&p, src, dst, typesize, Some(mask))
            }
            Target::Runs(r) => {
                let p = ChunkPlan::new(src, r.decoded.len(), typesize)?;
                self.decode_runs(&p, src, typesize, r)?;
                Ok(Decoded::Data)
            }
            Target::Narrow(n) => {
                let p = ChunkPlan::new(src, n.blank.len(), typesize)?;
                self.decode_narrow(&p, src, typesize, n)?;
                Ok(Decoded::Data)
            }
        }
    }

    /// [`Target::Narrow`], for the chunk planned as `p`: blockwise chunks whose pipeline
    /// [`narrows`](filters::Pipeline::narrows) are projected block by block by the hook,
    /// never unshuffled nor written whole; others are left to the caller.
    fn decode_narrow(
        &mut self,
        p: &ChunkPlan,
        src: &mut [u8],
        typesize: usize,
        n: Narrow<'_>,
    ) -> Result<(), ChunkError> {
        let Narrow {
            blank,
            first_block,
            out,
            block_bytes: bb,
            outcome,
        } = n;
        let chunk_bytes = blank.len();
        let start = first_block.saturating_mul(bb);
        let end = start
            .saturating_add(out.len().saturating_mul(4))
            .min(chunk_bytes);
        if bb == 0 || start >= end || (end - start) != out.len().saturating_mul(4) {
            return Err(ChunkError::Corrupt(format!(
                "{} projected bytes from block {first_block} of a chunk of {chunk_bytes}",
                out.len()
            )));
        }
        let nblocks = chunk_bytes.div_ceil(bb);
        let end_block = end.div_ceil(bb);
        let by_hook = p.blockwise(nblocks, bb)
            && usize::from(p.h.typesize) == typesize
            && end <= p.h.nbytes
            && filters::rust_can_undo(&p.h.filters, &p.h.filters_meta).is_ok()
            && self.hooked_for(&p.h, typesize)?.narrows();
        if !by_hook {
            *outcome = Narrowed::Unprojectable;
            return Ok(());
        }
        self.maskout.clear();
        self.maskout
            .extend((0..nblocks).map(|j| j < first_block || j >= end_block));
        let hooked = self.hooked.as_mut().expect("made by hooked_for");
        let hook = hooked.hook_mut();
        hook.narrow = true;
        hook.wide.store(false, std::sync::atomic::Ordering::Relaxed);
        let mut cleared = FiltersCleared::new(src);
        let r = hooked.decompress_part(cleared.chunk(), blank, &self.maskout, out, start, 4);
        let hook = hooked.hook_mut();
        hook.narrow = false;
        if hook.wide.load(std::sync::atomic::Ordering::Relaxed) {
            *outcome = Narrowed::Wide;
            return Ok(());
        }
        let n = r?;
        if n != chunk_bytes {
            return Err(ChunkError::Corrupt(format!(
                "decoded {n} bytes, expected {chunk_bytes}"
            )));
        }
        *outcome = Narrowed::Done;
        Ok(())
    }

    /// [`Target::Runs`], for the chunk planned as `p`.
    fn decode_runs(
        &mut self,
        p: &ChunkPlan,
        src: &mut [u8],
        typesize: usize,
        r: Runs<'_>,
    ) -> Result<(), ChunkError> {
        let Runs {
            decoded,
            runs,
            out,
            touched,
            block_bytes: bb,
            partial,
        } = r;
        let outside = || ChunkError::Corrupt("copy run outside its buffers".into());
        let chunk_bytes = decoded.len();
        if let Some((s, d, n)) = Geometry::one_run(runs)
            .filter(|&(s, _, n)| bb > 0 && s % bb == 0 && n < chunk_bytes && n % bb == 0 && n > 0)
        {
            let nblocks = chunk_bytes.div_ceil(bb);
            if p.blockwise(nblocks, bb) && usize::from(p.h.typesize) == typesize {
                let part = out.get_mut(d..d.saturating_add(n)).ok_or_else(outside)?;
                if (s + n) / bb <= nblocks && s + n <= p.h.nbytes {
                    return self.decode_part(p, src, decoded, typesize, bb, s / bb, part);
                }
            }
        }
        if self.nthreads == 1
            && bb >= (64 << 10)
            && touched.len() >= 2
            && p.blockwise(touched.len(), bb)
        {
            return self.decode_by_block(p, src, decoded, typesize, bb, touched, runs, out);
        }
        let mask = partial.then_some(BlockMask {
            wanted: touched,
            block_bytes: bb,
        });
        match self.decode_planned(p, src, decoded, typesize, mask)? {
            Decoded::Zeros => {
                for &(_, d, n) in runs {
                    out.get_mut(d..d + n).ok_or_else(outside)?.fill(0);
                }
            }
            Decoded::Data => {
                for &(s, d, n) in runs {
                    let from = decoded.get(s..s + n).ok_or_else(outside)?;
                    out.get_mut(d..d + n)
                        .ok_or_else(outside)?
                        .copy_from_slice(from);
                }
            }
        }
        Ok(())
    }

    /// Decode the chunk planned as `p` into `dst` (its decoded size), only the blocks `mask`
    /// wants when it applies.
    fn decode_planned(
        &mut self,
        p: &ChunkPlan,
        src: &mut [u8],
        dst: &mut [u8],
        typesize: usize,
        mask: Option<BlockMask<'_>>,
    ) -> Result<Decoded, ChunkError> {
        let h = &p.h;
        let masked = !matches!(p.path, Path::Zeros) && mask.is_some_and(|m| self.set_maskout(h, m));
        let decoded = match p.path {
            Path::Zeros => return Ok(Decoded::Zeros),
            Path::Copy => {
                let at = h.header_len();
                let data = src.get(at..at + dst.len()).ok_or_else(|| {
                    ChunkError::Corrupt("stored-as-is chunk shorter than its data".into())
                })?;
                if masked {
                    // Only the wanted blocks, as C copies them.
                    let bs = h.blocksize.max(1);
                    for (j, _) in self.maskout.iter().enumerate().filter(|(_, &skip)| !skip) {
                        let r = j * bs..((j + 1) * bs).min(dst.len());
                        dst[r.clone()].copy_from_slice(&data[r]);
                    }
                } else {
                    dst.copy_from_slice(data);
                }
                return Ok(Decoded::Data);
            }
            Path::Repeat => {
                fill_repeated(src, dst, typesize);
                return Ok(Decoded::Data);
            }
            Path::Rust(codec) => {
                let skip = masked.then_some(self.maskout.as_slice());
                let scratch = &mut self.filter_scratch;
                decode_in_rust(h, codec, src, dst, typesize, &self.blocks, skip, scratch)?;
                return Ok(Decoded::Data);
            }
            Path::C
                if h.has_delta()
                    && !h.memcpyed()
                    && h.special() == Special::None
                    && self.dctx.threads() > 1 =>
            {
                // Never c-blosc2's threaded DELTA (see `serial`): Rust undoes the filters
                // when it can, else a single-threaded context decodes the chunk. (Memcpyed
                // chunks keep their filter bytes but hold the data unfiltered, and special
                // chunks (NaN) keep them but hold no filtered data: C copies or fills them,
                // with no DELTA wait. Found by fuzzing: a NaN chunk with SHUFFLE and DELTA
                // bytes read as NaN by whole reads but as garbage, without an error, by the
                // chunk iterator, whose decoder has block threads.)
                if filters::rust_can_undo(&h.filters, &h.filters_meta).is_ok() {
                    let mut cleared = FiltersCleared::new(src);
                    self.decode_rust_filters(h, cleared.chunk(), dst, typesize, masked)
                } else {
                    let serial = self.serial.get_or_insert_with(|| Dctx::new(1));
                    if serial.threads() > 1 {
                        return Err(ChunkError::Unsupported(
                            "chunk filters",
                            "DELTA with more than two other filters while BLOSC_NTHREADS is \
                             set: c-blosc2 2.15 could hang decoding it; unset BLOSC_NTHREADS"
                                .into(),
                        ));
                    }
                    if masked {
                        serial.decompress_masked(src, dst, &self.maskout)
                    } else {
                        serial.decompress(src, dst)
                    }
                    .map_err(ChunkError::C)
                }
            }
            Path::C => if masked {
                self.dctx.decompress_masked(src, dst, &self.maskout)
            } else {
                self.dctx.decompress(src, dst)
            }
            .map_err(ChunkError::C),
            Path::RustFilters => {
                // C decodes the codec only: the filter bytes are cleared for the call and put
                // back afterwards (the caller's chunk is left as it was).
                let mut cleared = FiltersCleared::new(src);
                self.decode_rust_filters(h, cleared.chunk(), dst, typesize, masked)
            }
        };
        let n = decoded?;
        if n != dst.len() {
            return Err(ChunkError::Corrupt(format!(
                "decoded {n} bytes, expected {}",
                dst.len()
            )));
        }
        Ok(Decoded::Data)
    }

    /// The [`Path::RustFilters`] part of [`Decoder::decode_planned`], for `src` with its
    /// filter bytes cleared: C's result (bytes or error code), or a filter error.
    fn decode_rust_filters(
        &mut self,
        h: &ChunkHeader,
        src: &[u8],
        dst: &mut [u8],
        typesize: usize,
        masked: bool,
    ) -> Result<usize, ChunkError> {
        let by_block = !self.hooked_for(h, typesize)?.has_delta();
        let hooked = self.hooked.as_mut().expect("made by hooked_for");
        if by_block {
            // c-blosc2 decodes each block's codec and the hook undoes its filters.
            Ok(if masked {
                hooked
                    .context()
                    .decompress_masked(src, dst, &self.maskout)?
            } else {
                hooked.context().decompress(src, dst)?
            })
        } else {
            // DELTA: blocks depend on block 0, undone in order after the whole chunk.
            let n = if masked {
                self.dctx.decompress_masked(src, dst, &self.maskout)?
            } else {
                self.dctx.decompress(src, dst)?
            };
            if n == dst.len() {
                let (f, m, bs) = (&h.filters, &h.filters_meta, h.blocksize);
                let scratch = &mut self.filter_scratch;
                let skip = masked.then_some(self.maskout.as_slice());
                filters::undo_blocks(f, m, typesize, &self.blocks, bs, dst, scratch, skip)
                    .map_err(unfilter_error)?;
            }
            Ok(n)
        }
    }

    /// The hooked context, its hook set up to undo the filters of chunk `h` (items of
    /// `typesize` bytes); returns the pipeline.
    fn hooked_for(
        &mut self,
        h: &ChunkHeader,
        typesize: usize,
    ) -> Result<&filters::Pipeline, ChunkError> {
        let key = (h.filters, h.filters_meta, typesize);
        let nthreads = self.nthreads;
        let hooked = self.hooked.get_or_insert_with(|| {
            HookedDctx::new(
                nthreads,
                FilterHook {
                    pipeline: None,
                    narrow: false,
                    wide: Default::default(),
                },
            )
        });
        let hook = hooked.hook_mut();
        if !matches!(&hook.pipeline, Some((_, f, m, t)) if (*f, *m, *t) == key) {
            hook.pipeline = None;
            let p = filters::Pipeline::new(&key.0, &key.1, key.2, &self.blocks)
                .map_err(unfilter_error)?;
            hook.pipeline = Some((p, key.0, key.1, key.2));
        }
        Ok(&hook.pipeline.as_ref().expect("set above").0)
    }

    /// Decode the consecutive blocks of the chunk planned as `p` that `out` holds, straight
    /// into `out`: `out` is the decoded chunk's bytes from block `first_block` on (whole
    /// blocks of `block_bytes`). Nothing else is decoded or written: `scratch` is the
    /// chunk-size destination c-blosc2 asks for, which it does not write (a fresh allocation
    /// stays untouched, so a part of a huge chunk costs no page faults for it). When this
    /// does not apply (a pipeline the hook does not run), the touched blocks are decoded
    /// into `scratch` and copied.
    #[allow(clippy::too_many_arguments)]
    fn decode_part(
        &mut self,
        p: &ChunkPlan,
        src: &mut [u8],
        scratch: &mut [u8],
        typesize: usize,
        block_bytes: usize,
        first_block: usize,
        out: &mut [u8],
    ) -> Result<(), ChunkError> {
        let h = &p.h;
        let nblocks = h.nbytes.div_ceil(block_bytes);
        let end_block = first_block + out.len() / block_bytes;
        let start = first_block * block_bytes;
        if filters::rust_can_undo(&h.filters, &h.filters_meta).is_err() {
            let wanted: Vec<bool> = (0..nblocks)
                .map(|j| j >= first_block && j < end_block)
                .collect();
            let mask = BlockMask {
                wanted: &wanted,
                block_bytes,
            };
            return match self.decode_planned(p, src, scratch, typesize, Some(mask))? {
                Decoded::Zeros => {
                    out.fill(0);
                    Ok(())
                }
                Decoded::Data => {
                    out.copy_from_slice(&scratch[start..start + out.len()]);
                    Ok(())
                }
            };
        }
        if self.hooked_for(h, typesize)?.has_delta() {
            return Err(ChunkError::Corrupt("DELTA pipeline without DELTA".into()));
        }
        self.maskout.clear();
        self.maskout
            .extend((0..nblocks).map(|j| j < first_block || j >= end_block));
        let hooked = self.hooked.as_mut().expect("made by hooked_for");
        let mut cleared = FiltersCleared::new(src);
        let n = hooked.decompress_part(cleared.chunk(), scratch, &self.maskout, out, start, 1)?;
        if n != scratch.len() {
            return Err(ChunkError::Corrupt(format!(
                "decoded {n} bytes, expected {}",
                scratch.len()
            )));
        }
        Ok(())
    }

    /// Decode the chunk planned as `p` one Blosc block at a time into `dst`, copying each
    /// decoded block's `runs` into `out` while it is still in cache; only the blocks
    /// `touched` flags are decoded. When the chunk's only filter is a plain SHUFFLE (by item
    /// size), c-blosc2 runs just the codec and the items of each run are unshuffled straight
    /// into `out` (one pass instead of C's unshuffle plus a copy).
    #[allow(clippy::too_many_arguments)]
    fn decode_by_block(
        &mut self,
        p: &ChunkPlan,
        src: &mut [u8],
        dst: &mut [u8],
        typesize: usize,
        block_bytes: usize,
        touched: &[bool],
        runs: &[(usize, usize, usize)],
        out: &mut [u8],
    ) -> Result<(), ChunkError> {
        let h = &p.h;
        let nblocks = touched.len();
        let outside = || ChunkError::Corrupt("copy run outside its block".into());
        // A lone SHUFFLE by item size (what c-blosc2 2.15 undoes itself) is left to the copy.
        let active: Vec<usize> = (0..6)
            .filter(|&i| h.filters[i] != filters::NOFILTER)
            .collect();
        let unshuffle = match active.as_slice() {
            [i] if h.filters[*i] == filters::SHUFFLE
                && (2..=255).contains(&typesize)
                && (h.filters_meta[*i] == 0 || usize::from(h.filters_meta[*i]) == typesize) =>
            {
                Some(typesize)
            }
            _ => None,
        };
        // C then runs the codec only (filter bytes cleared until `cleared` drops), on the
        // plan of the cleared chunk.
        let mut cleared: FiltersCleared;
        let cleared_plan: ChunkPlan;
        let (src, p): (&mut [u8], &ChunkPlan) = if unshuffle.is_some() {
            cleared = FiltersCleared::new(src);
            let src = cleared.chunk();
            cleared_plan = ChunkPlan::new(src, dst.len(), typesize)?;
            (src, &cleared_plan)
        } else {
            (src, p)
        };
        let mut one = vec![false; nblocks];
        let mut k = 0;
        for j in (0..nblocks).filter(|&j| touched[j]) {
            one[j] = true;
            let mask = BlockMask {
                wanted: &one,
                block_bytes,
            };
            if self.decode_planned(p, src, dst, typesize, Some(mask))? == Decoded::Zeros {
                // Blockwise chunks are never special.
                return Err(ChunkError::Corrupt("inconsistent special chunk".into()));
            }
            one[j] = false;
            let block = &dst[j * block_bytes..((j + 1) * block_bytes).min(dst.len())];
            // Runs come grouped by block, in block order.
            let base = j * block_bytes;
            while let Some(&(s, d, n)) = runs.get(k).filter(|r| r.0 < base + block_bytes) {
                let off = s.checked_sub(base).ok_or_else(outside)?;
                let to = out.get_mut(d..d + n).ok_or_else(outside)?;
                match unshuffle {
                    // The block is still shuffled: unshuffle the run's items into place.
                    Some(w) => {
                        if off % w != 0
                            || !crate::codec::kernels::unshuffle_items_into(block, w, off / w, to)
                        {
                            return Err(outside());
                        }
                    }
                    None => to.copy_from_slice(block.get(off..off + n).ok_or_else(outside)?),
                }
                k += 1;
            }
        }
        Ok(())
    }

    /// Build `self.maskout` for `mask` if it applies to the chunk with header `h` (already
    /// planned); `false` when the chunk must be decoded whole.
    fn set_maskout(&mut self, h: &ChunkHeader, mask: BlockMask<'_>) -> bool {
        // Special chunks (NaN, repeated value) are cheap and laid out by C: decode whole.
        if !h.maskable(mask.wanted.len(), mask.block_bytes) || mask.wanted.iter().all(|&w| w) {
            return false;
        }
        self.maskout.clear();
        self.maskout.extend(mask.wanted.iter().map(|&w| !w));
        if h.has_delta() {
            self.maskout[0] = false;
        }
        true
    }
}

#[cfg(test)]
mod tests;
