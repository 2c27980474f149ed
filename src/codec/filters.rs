//! Undoing Blosc2 filter pipelines in Rust.
//!
//! The linked c-blosc2 (2.15.x) mis-decodes or refuses some filters written by c-blosc2 3.x
//! (python-blosc2 4.x). For such a chunk the caller clears the 6 filter bytes `[16..22]` and the
//! 6 filters_meta bytes `[24..30]` of the 32-byte extended header, lets C run the codec only, and
//! then calls [`undo_blocks`] (or [`Pipeline::undo_block_into`], block by block) on the decoded bytes. Clearing the filters does not change how C
//! splits a block into streams: the number of streams is `header typesize` when the header's
//! "not split" flag (0x10) is clear and 1 otherwise, whatever the filters are, and the filters
//! always run on the whole block before it is split (checked against c-blosc2 3.3.5: the filtered
//! bytes of a chunk are identical for every split mode).
//!
//! Callers must NOT undo filters in Rust for
//! - memcpyed chunks (header flags bit 0x02): c-blosc2 3.x keeps the filter bytes in the header
//!   but stores the data unfiltered (checked against 3.3.5);
//! - special chunks (zeros, NaN, repeated value, uninitialised): no filter is applied to them.
//!
//! # Semantics (c-blosc2 3.3.5, as bundled in python-blosc2 4.14.1)
//!
//! The c-blosc2 3.x sources were not available here; the 2.x sources
//! (`blosc/blosc2.c` `pipeline_forward`/`pipeline_backward`/`blosc_d`, `blosc/shuffle.c`,
//! `blosc/shuffle-generic.h`, `blosc/bitshuffle-generic.c`, `blosc/delta.c`,
//! `plugins/filters/bytedelta/bytedelta.c`, `plugins/filters/int_trunc/int_trunc.c`) were read,
//! the 3.x header comments in python-blosc2's bundled `blosc2.h` / `blosc2/filters-registry.h`
//! were read, and every rule below was then checked byte for byte against chunks produced by
//! python-blosc2 4.14.1 (c-blosc2 3.3.5): compressing with a filter, clearing the header's filter
//! bytes and decompressing gives the filtered-but-uncompressed bytes.
//!
//! Let `cts` be the typesize c-blosc2 works with: the real item size if it is <= 255, else 1
//! (items larger than 255 bytes are stored with typesize 1 in the chunk header and every
//! built-in filter sees typesize 1).
//!
//! Forward filters run per Blosc block in slot order 0..5; decoding undoes them per block in
//! reverse slot order 5..0. The last block of a chunk may be shorter than `blocksize`.
//!
//! - **SHUFFLE (1)**: a byte transpose with element width `w = meta` if `meta != 0`, else
//!   `w = cts`. In 2.x the meta was a repeat count (2.15 actually ignores it); in 3.x it is the
//!   byte-group width, independent of the item size: typesize 400 with meta 4 (`<U100`) shuffles
//!   4-byte groups; typesize 12 with meta 4 shuffles 4-byte groups; typesize 2 with meta 4
//!   shuffles 4-byte groups. With `n = len / w` groups, forward writes byte `j` of group `i` to
//!   `j * n + i`; the trailing `len % w` bytes are copied unchanged. `w == 1` is the identity.
//! - **BITSHUFFLE (2)**: the meta is ignored; element size `e = cts`. Only the first
//!   `n8 = (len / e) rounded down to a multiple of 8` elements are transposed, the rest of the
//!   block is copied. Transposition (bshuf `trans_bit_elem`) is a bit-matrix transpose: bit `k`
//!   (LSB = 0) of byte `j` of element `i` goes to output bit `(8 * j + k) * n8 + i`, output bits
//!   being numbered LSB-first inside each byte. (Chunk format version 2 used a different
//!   remainder rule; such old chunks never carry filters this module is needed for.)
//! - **DELTA (3)**: the meta is ignored. XOR with element width `w = cts` if cts is 1, 2, 4 or
//!   8, else 8 if `cts % 8 == 0`, else 1. Encoding, with `x` = the block's data as it enters the
//!   DELTA slot: block 0 keeps its first element and replaces element `i >= 1` by
//!   `x[i] ^ x[i-1]` (i.e. XOR with the previous element of the *same pipeline stage*); every
//!   other block is XORed bytewise with the ORIGINAL (unfiltered) bytes of block 0 at the same
//!   offsets. Decoding therefore needs block 0 fully decoded first: block 0 is undone by a running
//!   XOR, blocks `k > 0` by XOR with the fully decoded block 0 (this is what c-blosc2 does when
//!   decompressing serially). A tail shorter than `w` is left unchanged.
//!   c-blosc2 3.3.5's decode of a DELTA that follows another filter depends on the reader's
//!   thread count (with two or more, the other blocks race with block 0's later steps): this
//!   module decodes as its serial decoder does, and [`rust_can_undo`] refuses the pipelines of
//!   three or more where python's readers disagree with each other or with the data written.
//! - **TRUNC_PREC (4)**, **INT_TRUNC (36)**: lossy forward (zeroing low bits), identity
//!   backward (2.x `pipeline_backward` skips TRUNC_PREC; `int_trunc_backward` is a memcpy;
//!   checked: with only these filters, the full decode equals the codec-only decode).
//! - **BYTEDELTA (35)**: works on the bytes as they enter the slot (normally already shuffled).
//!   `s = meta` streams, or the real item size if `meta == 0` (python-blosc2 always writes
//!   `meta = typesize`, and only values up to 127). With `l = len / s`, stream `c` is the bytes
//!   `[c * l, (c + 1) * l)`; forward replaces each byte by its difference (mod 256) from the
//!   previous byte of the same stream (the first byte of a stream is kept); decoding is a
//!   running sum per stream. The trailing `len % s` bytes are copied unchanged (3.x copies them;
//!   2.15's plugin left them unwritten).
//! - BYTEDELTA_BUGGY (34), NDCELL (32), NDMEAN (33) and anything else: unsupported here.
//!   (The "buggy" bytedelta's output depends on whether the writer was built with SIMD.)
//!
//! ## What the linked c-blosc2 2.15 gets right by itself
//!
//! 2.15 ignores SHUFFLE's meta and always unshuffles with `cts`, so a SHUFFLE with meta 0 or
//! meta == cts is fine. BITSHUFFLE and TRUNC_PREC are the same as in 3.x. 2.15 undoes DELTA
//! correctly only when DELTA is the first active filter in slot order (its backward pipeline
//! XORs the wrong buffer when DELTA has to run before another filter). Plugin filters (ids >= 32)
//! are not compiled into our C at all.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;

use std::fmt;

use crate::codec::cells::Cells;
use crate::codec::kernels;

pub(crate) use crate::model::ids::{
    filter_name, BITSHUFFLE, BYTEDELTA, DELTA, INT_TRUNC, NDCELL, NDMEAN, NDMEAN_OLD, NOFILTER,
    SHUFFLE, TRUNC_PREC,
};

/// Number of filter slots in a Blosc2 chunk header (`BLOSC2_MAX_FILTERS`).
const NSLOTS: usize = 6;

/// Largest typesize c-blosc2 stores in a chunk header (`BLOSC_MAX_TYPESIZE`); larger items are
/// treated as a stream of bytes (typesize 1) by every built-in filter.
const MAX_HEADER_TYPESIZE: usize = 255;

/// Why a filter pipeline could not be undone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UnfilterError {
    /// No Rust inverse for this filter (id and its filters_meta byte).
    Unsupported { id: u8, meta: u8 },
    /// The arguments are inconsistent (zero typesize or blocksize, ...).
    Corrupt(String),
}

impl fmt::Display for UnfilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnfilterError::Unsupported { id, meta } => write!(
                f,
                "unsupported Blosc filter: {} (id {id}, meta {meta})",
                filter_name(*id)
            ),
            UnfilterError::Corrupt(msg) => write!(f, "cannot undo Blosc filters: {msg}"),
        }
    }
}

impl std::error::Error for UnfilterError {}

impl From<ChunkError> for UnfilterError {
    fn from(e: ChunkError) -> UnfilterError {
        UnfilterError::Corrupt(e.to_string())
    }
}

/// The typesize c-blosc2 records in the chunk header and hands to its built-in filters.
pub(crate) fn c_typesize(typesize: usize) -> usize {
    if typesize > MAX_HEADER_TYPESIZE {
        1
    } else {
        typesize
    }
}

/// Whether the filter is a no-op when decoding.
pub(crate) fn is_identity_backward(id: u8) -> bool {
    matches!(id, NOFILTER | TRUNC_PREC | INT_TRUNC)
}

/// Byte-group width SHUFFLE uses in c-blosc2 3.x.
pub(crate) fn shuffle_width(meta: u8, cts: usize) -> usize {
    if meta == 0 {
        cts
    } else {
        meta as usize
    }
}

/// Element width of the DELTA filter's XOR (c-blosc2 `delta_encoder`/`delta_decoder`).
fn delta_width(cts: usize) -> usize {
    match cts {
        1 | 2 | 4 | 8 => cts,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

/// Number of byte streams BYTEDELTA uses.
fn bytedelta_streams(meta: u8, typesize: usize) -> usize {
    if meta == 0 {
        typesize
    } else {
        meta as usize
    }
}

/// Whether the linked c-blosc2 2.15 decodes this pipeline exactly as c-blosc2 3.x would.
///
/// True when every slot is NOFILTER, SHUFFLE with meta 0 or meta equal to the header typesize
/// (2.15 ignores the meta and unshuffles with the header typesize), BITSHUFFLE, TRUNC_PREC, or
/// DELTA provided no other active filter comes before DELTA in slot order (2.15 only undoes
/// DELTA correctly when it is the last step of its backward pipeline). Conservative: a few
/// exotic pipelines 2.15 happens to decode right (e.g. `[DELTA, DELTA]`) are left to Rust.
/// Checked against every pipeline in the test corpus: whenever this returns true, 2.15's full
/// decode equals 3.3.5's.
pub(crate) fn c_can_undo(filters: &[u8; 6], meta: &[u8; 6], typesize: usize) -> bool {
    let cts = c_typesize(typesize.max(1));
    let mut active_before = false;
    for slot in 0..NSLOTS {
        match filters[slot] {
            NOFILTER | TRUNC_PREC => {}
            SHUFFLE => {
                let m = meta[slot] as usize;
                if m != 0 && m != cts {
                    return false;
                }
                active_before = true;
            }
            BITSHUFFLE => active_before = true,
            DELTA => {
                if active_before {
                    return false;
                }
                active_before = true;
            }
            _ => return false,
        }
    }
    true
}

/// Whether [`undo_blocks`] can undo this pipeline; the error names the first slot (in slot
/// order) it cannot.
///
/// Besides filters without a Rust inverse, this refuses DELTA pipelines that python-blosc2
/// 4.14.1 (c-blosc2 3.3.5) gives no single meaning: a DELTA in a pipeline of three or more
/// filters (TRUNC_PREC and INT_TRUNC, the identity when decoding, not counted). c-blosc2's
/// decode of those depends on the reader's thread count (with two threads or more block 0
/// keeps a DELTA undone and the other blocks race with it; serial decode differs again, and
/// for some pipelines is not the data written either: [SHUFFLE, NDCELL, DELTA], [DELTA,
/// BITSHUFFLE, NDCELL], [DELTA, SHUFFLE, BITSHUFFLE], [DELTA, DELTA, BITSHUFFLE], ... found
/// by scripts/diff_test.py), so any answer would be success with a meaning python does not
/// give it (docs/meaning-audit.md). DELTA with one other filter, or two DELTAs, read as
/// c-blosc2's serial decoder reads them: the data written. The error names the first
/// DELTA's slot.
pub(crate) fn rust_can_undo(filters: &[u8; 6], meta: &[u8; 6]) -> Result<(), UnfilterError> {
    // TRUNC_PREC and INT_TRUNC are the identity when decoding and are not counted (their
    // pipelines with DELTA read as python-blosc2 reads them: fixture filt_combo4_f8).
    let active = filters
        .iter()
        .filter(|&&f| !is_identity_backward(f))
        .count();
    for slot in 0..NSLOTS {
        match filters[slot] {
            NOFILTER | TRUNC_PREC | INT_TRUNC | NDCELL | NDMEAN | NDMEAN_OLD | SHUFFLE
            | BITSHUFFLE | BYTEDELTA => {}
            DELTA => {
                if active > 2 {
                    return Err(UnfilterError::Unsupported {
                        id: DELTA,
                        meta: meta[slot],
                    });
                }
            }
            id => {
                return Err(UnfilterError::Unsupported {
                    id,
                    meta: meta[slot],
                })
            }
        }
    }
    Ok(())
}

/// One backward step of a pipeline (identity filters dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// Inverse SHUFFLE with this group width.
    Shuffle(usize),
    /// Inverse BITSHUFFLE with this element size.
    Bitshuffle(usize),
    /// Inverse DELTA with this XOR width.
    Delta(usize),
    /// Inverse BYTEDELTA with this many streams.
    Bytedelta(usize),
    /// Inverse NDCELL / NDMEAN: the block back from cell order to C order.
    Cells(Cells),
}

impl Step {
    /// The step for filter `id` with `meta` on items of `typesize` bytes in b2nd blocks of
    /// shape `blocks` (empty when unknown); `None` for a filter that is the identity when
    /// decoding (NOFILTER, TRUNC_PREC, INT_TRUNC) or unknown here.
    fn of(
        id: u8,
        meta: u8,
        typesize: usize,
        blocks: &[usize],
    ) -> Result<Option<Step>, UnfilterError> {
        let cts = c_typesize(typesize.max(1));
        let cells = |c: Result<Cells, ChunkError>| match c {
            Ok(c) => Ok(Some(Step::Cells(c))),
            Err(why) => Err(UnfilterError::Corrupt(format!(
                "{}: {why}",
                filter_name(id)
            ))),
        };
        match id {
            SHUFFLE => Ok(Some(Step::Shuffle(shuffle_width(meta, cts)))),
            BITSHUFFLE => Ok(Some(Step::Bitshuffle(cts))),
            DELTA => Ok(Some(Step::Delta(delta_width(cts)))),
            BYTEDELTA => Ok(Some(Step::Bytedelta(bytedelta_streams(meta, typesize)))),
            NDCELL | NDMEAN | NDMEAN_OLD if blocks.is_empty() => {
                Err(UnfilterError::Unsupported { id, meta })
            }
            NDCELL => cells(Cells::ndcell(meta, blocks, typesize)),
            NDMEAN | NDMEAN_OLD => cells(Cells::ndmean(meta, blocks, typesize)),
            _ => Ok(None),
        }
    }
}

/// A filter pipeline checked by [`rust_can_undo`], as the backward steps to run on each block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pipeline {
    steps: Vec<Step>,
}

impl Pipeline {
    /// The backward pipeline for a chunk's filter and meta bytes, the real item size and the
    /// b2nd block shape (empty when unknown: NDCELL and NDMEAN need it).
    pub(crate) fn new(
        filters: &[u8; 6],
        meta: &[u8; 6],
        typesize: usize,
        blocks: &[usize],
    ) -> Result<Pipeline, UnfilterError> {
        rust_can_undo(filters, meta)?;
        let mut steps = Vec::new();
        for slot in (0..NSLOTS).rev() {
            let (id, m) = (filters[slot], meta[slot]);
            match Step::of(id, m, typesize, blocks)? {
                Some(step) => steps.push(step),
                None if is_identity_backward(id) => {}
                // rust_can_undo accepted every slot.
                None => return Err(UnfilterError::Unsupported { id, meta: m }),
            }
        }
        if typesize == 0 && !steps.is_empty() {
            return Err(UnfilterError::Corrupt("typesize is 0".to_string()));
        }
        Ok(Pipeline { steps })
    }

    /// Whether blocks depend on block 0 (a DELTA step): such chunks must be undone in block
    /// order with [`undo_blocks`], never block by block with [`Pipeline::undo_block_into`].
    pub(crate) fn has_delta(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Step::Delta(_)))
    }

    /// Undo the pipeline on one block of a DELTA-free pipeline: `src` holds the block as the
    /// codec produced it and is used as working memory; the decoded block goes to `dst` (same
    /// length). Permuting steps alternate between the two buffers, in-place steps run where the
    /// data is, so the block is written to `dst` once when the pipeline ends with a permutation.
    pub(crate) fn undo_block_into(
        &self,
        src: &mut [u8],
        dst: &mut [u8],
    ) -> Result<(), UnfilterError> {
        if self.has_delta() {
            return Err(UnfilterError::Corrupt(
                "DELTA blocks cannot be undone independently".to_string(),
            ));
        }
        if src.len() != dst.len() {
            return Err(UnfilterError::Corrupt(format!(
                "block of {} bytes for a destination of {}",
                src.len(),
                dst.len()
            )));
        }
        let mut in_src = true;
        for &step in &self.steps {
            let (cur, other): (&mut [u8], &mut [u8]) = if in_src {
                (&mut *src, &mut *dst)
            } else {
                (&mut *dst, &mut *src)
            };
            match step {
                Step::Bytedelta(s) => kernels::unbytedelta(cur, s),
                Step::Shuffle(w) => {
                    kernels::unshuffle_into(cur, other, w);
                    in_src = !in_src;
                }
                Step::Bitshuffle(e) => {
                    if kernels::bitunshuffle(cur, other, e) {
                        in_src = !in_src;
                    }
                }
                Step::Cells(c) => {
                    c.uncell_into(cur, other).map_err(UnfilterError::from)?;
                    in_src = !in_src;
                }
                Step::Delta(_) => unreachable!("checked above"),
            }
        }
        if in_src {
            dst.copy_from_slice(src);
        }
        Ok(())
    }
}

impl Pipeline {
    /// Whether [`Pipeline::narrow_block_into`] can project this pipeline's blocks: no filter,
    /// or a SHUFFLE of 4-byte groups (python-blosc2's for NumPy `U` strings), whose first
    /// byte plane is the low byte of every code unit.
    pub(crate) fn narrows(&self) -> bool {
        matches!(self.steps.as_slice(), [] | [Step::Shuffle(4)])
    }

    /// One block of little-endian 4-byte code units (UCS-4), as the codec produced it, projected
    /// to the low byte of each unit into `dst` (`src.len() / 4` bytes): `false` when a unit is
    /// 256 or more (the block is not Latin-1), when the block is not whole units, or when
    /// [`Pipeline::narrows`] does not hold. Under a 4-byte SHUFFLE the low bytes are the
    /// block's first quarter and the other three quarters must be zero: no unshuffle.
    pub(crate) fn narrow_block_into(&self, src: &[u8], dst: &mut [u8]) -> bool {
        if !src.len().is_multiple_of(4) || dst.len() != src.len() / 4 {
            return false;
        }
        match self.steps.as_slice() {
            [] => narrow_ucs4(src, dst),
            [Step::Shuffle(4)] => {
                let (low, high) = src.split_at(dst.len());
                if !all_zero(high) {
                    return false;
                }
                dst.copy_from_slice(low);
                true
            }
            _ => false,
        }
    }
}

/// Little-endian 4-byte code units `src` to their low bytes in `dst` (`src.len() / 4`
/// bytes): `false`, with `dst` partly written, when a unit is 256 or more.
pub(crate) fn narrow_ucs4(src: &[u8], dst: &mut [u8]) -> bool {
    if !src.len().is_multiple_of(4) || dst.len() != src.len() / 4 {
        return false;
    }
    // 1024 units at a time: the high bytes OR-ed without a branch, checked per run.
    for (s, d) in src.chunks(4096).zip(dst.chunks_mut(1024)) {
        let mut high = 0u32;
        for (u, b) in s.chunks_exact(4).zip(d.iter_mut()) {
            let v = u32::from_le_bytes([u[0], u[1], u[2], u[3]]);
            high |= v;
            *b = v as u8;
        }
        if high > 0xFF {
            return false;
        }
    }
    true
}

/// Whether every byte of `b` is zero (OR-ed 4 KiB at a time, stopping at the first run with a
/// non-zero byte).
fn all_zero(b: &[u8]) -> bool {
    b.chunks(4096).all(|run| {
        let (words, tail) = run.split_at(run.len() / 8 * 8);
        let w = words.chunks_exact(8).fold(0u64, |a, w| {
            a | u64::from_ne_bytes(w.try_into().unwrap_or([1; 8]))
        });
        w == 0 && tail.iter().all(|&x| x == 0)
    })
}

/// A pipeline of SHUFFLE (any group width), BITSHUFFLE, BYTEDELTA, NDCELL and NDMEAN steps
/// applied in Rust when writing: the linked c-blosc2 2.15 does not encode a byte-group SHUFFLE
/// as c-blosc2 3.x defines it (it shuffles by item size) and has none of the others but
/// BITSHUFFLE, so C compresses the result with no filters and the chunk header gets the
/// pipeline back (BITSHUFFLE runs here when it shares a pipeline with them, or when Rust
/// runs the codec too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForwardPipeline {
    /// Steps in slot (encoding) order.
    steps: Vec<Step>,
}

impl ForwardPipeline {
    /// The pipeline for these filter slots, or `None` when c-blosc2 2.15 encodes them as
    /// 3.x does (nothing for Rust to do). An error names a filter that would need Rust
    /// but cannot be combined here (only SHUFFLE, BITSHUFFLE, BYTEDELTA, NDCELL and NDMEAN
    /// are encoded in Rust).
    pub(crate) fn new(
        filters: &[u8; 6],
        meta: &[u8; 6],
        typesize: usize,
        blocks: &[usize],
    ) -> Result<Option<ForwardPipeline>, UnfilterError> {
        let cts = c_typesize(typesize.max(1));
        let needs_rust = (0..NSLOTS).any(|slot| match filters[slot] {
            SHUFFLE => meta[slot] != 0 && usize::from(meta[slot]) != cts,
            BYTEDELTA | NDCELL | NDMEAN => true,
            _ => false,
        });
        if !needs_rust && !ForwardPipeline::faster_in_rust(filters, meta, cts) {
            return Ok(None);
        }
        ForwardPipeline::all_in_rust(filters, meta, typesize, blocks).map(Some)
    }

    /// Whether Rust encodes these slots (of items whose header typesize is `cts`) faster
    /// than the linked c-blosc2, whose filters are SSE2 code: with AVX2, a pipeline of
    /// SHUFFLE and BITSHUFFLE steps whose byte shuffles have vector kernels (widths 1, 2,
    /// 4, 8 and 16; BITSHUFFLE of such elements runs 3-6x C's SSE2 bit transposition).
    /// Either encodes the same bytes.
    fn faster_in_rust(filters: &[u8; 6], meta: &[u8; 6], cts: usize) -> bool {
        let vector = |w: usize| matches!(w, 1 | 2 | 4 | 8 | 16);
        kernels::Isa::best() == kernels::Isa::Avx2
            && filters.iter().any(|&f| f != NOFILTER)
            && (0..NSLOTS).all(|slot| match filters[slot] {
                NOFILTER => true,
                SHUFFLE => vector(shuffle_width(meta[slot], cts)),
                BITSHUFFLE => vector(cts),
                _ => false,
            })
    }

    /// The whole pipeline in Rust (b2nd blocks of shape `blocks`), as for chunks whose codec
    /// Rust runs too (ZLIB): SHUFFLE (any width), BITSHUFFLE, BYTEDELTA, NDCELL and NDMEAN; an error
    /// names another filter.
    pub(crate) fn all_in_rust(
        filters: &[u8; 6],
        meta: &[u8; 6],
        typesize: usize,
        blocks: &[usize],
    ) -> Result<ForwardPipeline, UnfilterError> {
        let mut steps = Vec::new();
        for slot in 0..NSLOTS {
            let (id, m) = (filters[slot], meta[slot]);
            match Step::of(id, m, typesize, blocks)? {
                Some(
                    step @ (Step::Shuffle(_)
                    | Step::Bitshuffle(_)
                    | Step::Bytedelta(_)
                    | Step::Cells(_)),
                ) => steps.push(step),
                _ if id == NOFILTER => {}
                _ => return Err(UnfilterError::Unsupported { id, meta: m }),
            }
        }
        Ok(ForwardPipeline { steps })
    }

    /// Encode one block from `src` into `dst` (same length); `scratch` is working memory.
    /// Errors only for a block whose size is not the one the pipeline was made for.
    pub(crate) fn apply_block(
        &self,
        src: &[u8],
        dst: &mut [u8],
        scratch: &mut Vec<u8>,
    ) -> Result<(), ChunkError> {
        // Working memory only: grown once, never cleared (every step writes before it reads).
        if scratch.len() < src.len() {
            scratch.resize(src.len(), 0);
        }
        let scratch = &mut scratch[..src.len()];
        // Where the data is: 0 = src (read-only), 1 = dst, 2 = scratch.
        let mut at = 0;
        for &step in &self.steps {
            match step {
                Step::Shuffle(w) => {
                    let (from, to): (&[u8], &mut [u8]) = match at {
                        0 => (src, &mut *dst),
                        1 => (&*dst, &mut *scratch),
                        _ => (&*scratch, &mut *dst),
                    };
                    kernels::shuffle_into(from, to, w);
                    at = if at == 1 { 2 } else { 1 };
                }
                Step::Bytedelta(s) => {
                    if at == 0 {
                        dst.copy_from_slice(src);
                        at = 1;
                    }
                    kernels::bytedelta(if at == 1 { &mut *dst } else { &mut *scratch }, s);
                }
                Step::Bitshuffle(e) => {
                    // From the source into `dst`, or in place where the data is, the other
                    // buffer as working memory.
                    if at == 0 {
                        kernels::bitshuffle_into(src, dst, scratch, e);
                        at = 1;
                    } else if at == 1 {
                        kernels::bitshuffle(dst, scratch, e);
                    } else {
                        kernels::bitshuffle(scratch, dst, e);
                    }
                }
                Step::Cells(c) => {
                    let (from, to): (&[u8], &mut [u8]) = match at {
                        0 => (src, &mut *dst),
                        1 => (&*dst, &mut *scratch),
                        _ => (&*scratch, &mut *dst),
                    };
                    c.forward_into(from, to)?;
                    at = if at == 1 { 2 } else { 1 };
                }
                // `all_in_rust` admits only the steps above.
                Step::Delta(_) => unreachable!("not a forward step"),
            }
        }
        match at {
            0 => dst.copy_from_slice(src),
            2 => dst.copy_from_slice(scratch),
            _ => {}
        }
        Ok(())
    }
}

/// Undo the filter pipeline on a chunk that C decoded with the codec only.
///
/// `data` is the whole decoded chunk (its length is the chunk's nbytes), made of Blosc blocks of
/// `blocksize` bytes (the last one may be shorter). `typesize` is the real item size (it may
/// exceed 255). `scratch` is reused working memory (grown to at most `blocksize` bytes).
/// On error `data` may be partially modified. (Readers use [`undo_blocks`] or
/// [`Pipeline::undo_block_into`]; this whole-chunk form is what the tests check.)
#[cfg(test)]
pub(crate) fn undo_chunk(
    filters: &[u8; 6],
    meta: &[u8; 6],
    typesize: usize,
    blocksize: usize,
    data: &mut [u8],
    scratch: &mut Vec<u8>,
) -> Result<(), UnfilterError> {
    undo_blocks(filters, meta, typesize, &[], blocksize, data, scratch, None)
}

/// Undo the filters of a chunk C decoded (with a block mask): blocks `j` with `skip[j] == true`
/// were not decoded (their bytes are whatever `data` held) and are left alone. Block 0 is
/// undone whatever `skip` says when the pipeline has DELTA (the other blocks are undone against
/// it; callers must not have masked it out).
#[allow(clippy::too_many_arguments)]
pub(crate) fn undo_blocks(
    filters: &[u8; 6],
    meta: &[u8; 6],
    typesize: usize,
    blocks: &[usize],
    blocksize: usize,
    data: &mut [u8],
    scratch: &mut Vec<u8>,
    skip: Option<&[bool]>,
) -> Result<(), UnfilterError> {
    let pipeline = Pipeline::new(filters, meta, typesize, blocks)?;
    if pipeline.steps.is_empty() || data.is_empty() {
        return Ok(());
    }
    if blocksize == 0 {
        return Err(UnfilterError::Corrupt("blocksize is 0".to_string()));
    }

    // Blocks in order: DELTA makes blocks > 0 depend on the fully decoded block 0.
    let has_delta = pipeline.has_delta();
    let mut start = 0;
    while start < data.len() {
        let len = blocksize.min(data.len() - start);
        let j = start / blocksize;
        if skip.is_some_and(|m| m.get(j) == Some(&true)) && !(j == 0 && has_delta) {
            start += len;
            continue;
        }
        let (done, rest) = data.split_at_mut(start);
        let block = &mut rest[..len];
        for &step in &pipeline.steps {
            match step {
                Step::Shuffle(w) => {
                    scratch.clear();
                    scratch.extend_from_slice(block);
                    kernels::unshuffle_into(scratch, block, w);
                }
                Step::Bitshuffle(e) => {
                    scratch.clear();
                    scratch.resize(block.len(), 0);
                    if kernels::bitunshuffle(block, scratch, e) {
                        block.copy_from_slice(scratch);
                    }
                }
                Step::Delta(w) => {
                    if start == 0 {
                        kernels::undelta_first(block, w);
                    } else {
                        // `done` starts with the fully decoded block 0, which is at least
                        // `len` bytes long since only the last block can be short.
                        kernels::undelta_other(block, &done[..len], w);
                    }
                }
                Step::Bytedelta(s) => kernels::unbytedelta(block, s),
                Step::Cells(c) => {
                    scratch.clear();
                    scratch.extend_from_slice(block);
                    c.uncell_into(scratch, block).map_err(UnfilterError::from)?;
                }
            }
        }
        start += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- forward filters, written from the c-blosc2 3.x semantics documented above ----

    fn shuffle_fwd(block: &[u8], w: usize) -> Vec<u8> {
        let mut out = block.to_vec();
        let n = block.len() / w;
        for i in 0..n {
            for j in 0..w {
                out[j * n + i] = block[i * w + j];
            }
        }
        out
    }

    fn get_bit(buf: &[u8], bit: usize) -> bool {
        buf[bit / 8] >> (bit % 8) & 1 == 1
    }

    fn bitshuffle_fwd(block: &[u8], e: usize) -> Vec<u8> {
        let mut out = block.to_vec();
        let n = block.len() / e;
        let n8 = n - n % 8;
        for b in &mut out[..n8 * e] {
            *b = 0;
        }
        for i in 0..n8 {
            for j in 0..e {
                for k in 0..8 {
                    if get_bit(block, (i * e + j) * 8 + k) {
                        let ob = (8 * j + k) * n8 + i;
                        out[ob / 8] |= 1 << (ob % 8);
                    }
                }
            }
        }
        out
    }

    /// `stage` = block data entering DELTA, `orig0` = original (unfiltered) block 0.
    fn delta_fwd(stage: &[u8], first: bool, orig0: &[u8], w: usize) -> Vec<u8> {
        let mut out = stage.to_vec();
        let n = stage.len() / w;
        for i in 0..n {
            for b in 0..w {
                let p = i * w + b;
                out[p] = if first {
                    if i == 0 {
                        stage[p]
                    } else {
                        stage[p] ^ stage[p - w]
                    }
                } else {
                    stage[p] ^ orig0[p]
                };
            }
        }
        out
    }

    fn bytedelta_fwd(block: &[u8], s: usize) -> Vec<u8> {
        let mut out = block.to_vec();
        let l = block.len() / s;
        for c in 0..s {
            for i in 0..l {
                let p = c * l + i;
                let prev = if i == 0 { 0 } else { block[p - 1] };
                out[p] = block[p].wrapping_sub(prev);
            }
        }
        out
    }

    /// Forward pipeline on a whole chunk (TRUNC_PREC / INT_TRUNC are treated as identity: their
    /// forward is lossy and their backward is the identity).
    fn pipeline_fwd(
        filters: &[u8; 6],
        meta: &[u8; 6],
        typesize: usize,
        blocksize: usize,
        data: &[u8],
    ) -> Vec<u8> {
        let cts = c_typesize(typesize);
        let mut out = Vec::with_capacity(data.len());
        let orig0 = &data[..blocksize.min(data.len())];
        for (k, block) in data.chunks(blocksize).enumerate() {
            let mut cur = block.to_vec();
            for slot in 0..6 {
                let m = meta[slot];
                cur = match filters[slot] {
                    SHUFFLE => shuffle_fwd(&cur, shuffle_width(m, cts)),
                    BITSHUFFLE => bitshuffle_fwd(&cur, cts),
                    DELTA => delta_fwd(&cur, k == 0, orig0, delta_width(cts)),
                    BYTEDELTA => bytedelta_fwd(&cur, bytedelta_streams(m, typesize)),
                    _ => cur,
                };
            }
            out.extend_from_slice(&cur);
        }
        out
    }

    /// Small deterministic PRNG (xorshift64*), so tests need no dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn bytes(&mut self, n: usize) -> Vec<u8> {
            (0..n).map(|_| (self.next() >> 32) as u8).collect()
        }
    }

    fn undo(filters: [u8; 6], meta: [u8; 6], ts: usize, bs: usize, enc: &[u8]) -> Vec<u8> {
        let mut dec = enc.to_vec();
        let mut scratch = Vec::new();
        undo_chunk(&filters, &meta, ts, bs, &mut dec, &mut scratch).unwrap();
        dec
    }

    fn roundtrip(filters: [u8; 6], meta: [u8; 6], ts: usize, bs: usize, data: &[u8]) {
        let enc = pipeline_fwd(&filters, &meta, ts, bs, data);
        let dec = undo(filters, meta, ts, bs, &enc);
        assert!(
            dec == data,
            "round trip failed: filters {filters:?} meta {meta:?} typesize {ts} blocksize {bs} \
             nbytes {}",
            data.len()
        );
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    const TYPESIZES: [usize; 10] = [1, 2, 3, 4, 5, 8, 12, 16, 24, 400];

    /// (block size, number of bytes) pairs for an item size: blocks that are and are not
    /// multiples of the item size, a short last block, a chunk smaller than one block.
    fn layouts(ts: usize) -> Vec<(usize, usize)> {
        vec![
            (ts * 64, ts * 200),
            (ts * 37, ts * 100),
            (ts * 8 + 3, ts * 50 + 1),
            (100, 1000),
            (96, 1001),
            (4096, 333),
            (7, 61),
            (1, 9),
        ]
    }

    // ---- names, ids, predicates ----

    #[test]
    fn ids_match_c_blosc2() {
        assert_eq!(
            [NOFILTER, SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC],
            [0, 1, 2, 3, 4]
        );
        assert_eq!([NDCELL, NDMEAN, BYTEDELTA, INT_TRUNC], [32, 33, 35, 36]);
    }

    #[test]
    fn names() {
        assert_eq!(filter_name(SHUFFLE), "shuffle");
        assert_eq!(filter_name(BITSHUFFLE), "bitshuffle");
        assert_eq!(filter_name(DELTA), "delta");
        assert_eq!(filter_name(TRUNC_PREC), "trunc_prec");
        assert_eq!(filter_name(BYTEDELTA), "bytedelta");
        assert_eq!(filter_name(INT_TRUNC), "int_trunc");
        assert_eq!(filter_name(NDCELL), "ndcell");
        assert_eq!(filter_name(NDMEAN), "ndmean");
        assert_eq!(filter_name(34), "filter 34");
        assert_eq!(filter_name(200), "filter 200");
        let e = UnfilterError::Unsupported { id: 32, meta: 4 };
        assert!(e.to_string().contains("ndcell"));
    }

    #[test]
    fn rust_can_undo_reports_first_unsupported_slot() {
        assert_eq!(rust_can_undo(&[0; 6], &[0; 6]), Ok(()));
        assert_eq!(
            rust_can_undo(&[3, 1, 2, 4, 35, 36], &[0; 6]),
            Err(UnfilterError::Unsupported { id: 3, meta: 0 })
        );
        assert_eq!(rust_can_undo(&[0, 1, 2, 4, 35, 36], &[0; 6]), Ok(()));
        assert_eq!(
            rust_can_undo(&[0, 1, 32, 33, 0, 0], &[0, 0, 4, 5, 0, 0]),
            Ok(()) // NDCELL, NDMEAN (their Pipeline needs the block shape)
        );
        assert_eq!(
            rust_can_undo(&[0, 1, 34, 33, 0, 0], &[0, 0, 4, 5, 0, 0]),
            Err(UnfilterError::Unsupported { id: 34, meta: 4 })
        );
        assert_eq!(
            rust_can_undo(&[0, 0, 0, 0, 1, 34], &[0, 0, 0, 0, 0, 8]),
            Err(UnfilterError::Unsupported { id: 34, meta: 8 })
        );
        for f in [SHUFFLE, BITSHUFFLE, BYTEDELTA, NDCELL] {
            // A DELTA among three filters or more: refused, naming the first DELTA slot.
            for (p, slot) in [
                ([DELTA, f, DELTA, 0, 0, 0], 0),
                ([f, DELTA, DELTA, 0, 0, 0], 1),
                ([f, f, DELTA, 0, 0, 0], 2),
                ([0, f, DELTA, f, 0, 0], 2),
                ([DELTA, DELTA, f, 0, 0, 0], 0),
                ([0, f, TRUNC_PREC, f, 0, DELTA], 5),
            ] {
                let meta = [1, 2, 3, 4, 5, 6];
                assert_eq!(
                    rust_can_undo(&p, &meta),
                    Err(UnfilterError::Unsupported {
                        id: DELTA,
                        meta: meta[slot]
                    }),
                    "{p:?}"
                );
            }
            // A DELTA with one other filter (identity filters aside): accepted.
            for p in [
                [0, f, 0, 0, DELTA, 0],
                [0, DELTA, 0, INT_TRUNC, f, 0],
                [DELTA, 0, DELTA, 0, 0, TRUNC_PREC],
            ] {
                assert_eq!(rust_can_undo(&p, &[0; 6]), Ok(()), "{p:?}");
            }
        }
        let mut data = vec![1u8; 16];
        let mut scratch = Vec::new();
        assert_eq!(
            undo_chunk(
                &[0, 0, 0, 0, 0, 33],
                &[0, 0, 0, 0, 0, 2],
                4,
                16,
                &mut data,
                &mut scratch
            ),
            Err(UnfilterError::Unsupported { id: 33, meta: 2 })
        );
    }

    #[test]
    fn c_can_undo_rules() {
        let sh = [0, 0, 0, 0, 0, SHUFFLE];
        assert!(c_can_undo(&sh, &[0; 6], 4));
        assert!(c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 4));
        assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 12));
        assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 400)); // <U100
        assert!(c_can_undo(&sh, &[0, 0, 0, 0, 0, 1], 400)); // width 1 either way
        assert!(c_can_undo(&sh, &[0; 6], 400));
        assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 2], 4));
        assert!(c_can_undo(
            &[0, 0, 0, 0, 0, BITSHUFFLE],
            &[0, 0, 0, 0, 0, 7],
            8
        ));
        assert!(c_can_undo(&[0, 0, 0, 0, DELTA, SHUFFLE], &[0; 6], 8));
        assert!(c_can_undo(&[DELTA, 0, BITSHUFFLE, 0, 0, 0], &[0; 6], 8));
        assert!(c_can_undo(
            &[TRUNC_PREC, DELTA, SHUFFLE, 0, 0, 0],
            &[10, 0, 0, 0, 0, 0],
            8
        ));
        assert!(!c_can_undo(&[0, 0, 0, 0, SHUFFLE, DELTA], &[0; 6], 8));
        assert!(!c_can_undo(
            &[0, 0, 0, 0, SHUFFLE, BYTEDELTA],
            &[0, 0, 0, 0, 0, 8],
            8
        ));
        assert!(!c_can_undo(&[INT_TRUNC, 0, 0, 0, 0, 0], &[0; 6], 8));
        assert!(!c_can_undo(&[NDCELL, 0, 0, 0, 0, 0], &[0; 6], 8));
        assert!(c_can_undo(&[0; 6], &[0; 6], 8));
    }

    #[test]
    fn bad_arguments() {
        let mut scratch = Vec::new();
        let mut data = vec![0u8; 8];
        let sh = [0, 0, 0, 0, 0, SHUFFLE];
        assert!(matches!(
            undo_chunk(&sh, &[0; 6], 0, 8, &mut data, &mut scratch),
            Err(UnfilterError::Corrupt(_))
        ));
        assert!(matches!(
            undo_chunk(&sh, &[0; 6], 4, 0, &mut data, &mut scratch),
            Err(UnfilterError::Corrupt(_))
        ));
        // Nothing to do: fine whatever the sizes.
        assert_eq!(
            undo_chunk(&[0; 6], &[0; 6], 0, 0, &mut data, &mut scratch),
            Ok(())
        );
        assert_eq!(
            undo_chunk(&sh, &[0; 6], 4, 8, &mut [], &mut scratch),
            Ok(())
        );
    }

    // ---- hand-computed vectors ----

    #[test]
    fn shuffle_known_vectors() {
        // Two items of typesize 4.
        let data = [0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3];
        let enc = [0xa0, 0xb0, 0xa1, 0xb1, 0xa2, 0xb2, 0xa3, 0xb3];
        assert_eq!(
            pipeline_fwd(&[SHUFFLE, 0, 0, 0, 0, 0], &[0; 6], 4, 8, &data),
            enc
        );
        assert_eq!(undo([SHUFFLE, 0, 0, 0, 0, 0], [0; 6], 4, 8, &enc), data);
        // Same bytes as typesize 8 with meta 4: groups of 4 bytes regardless of typesize.
        assert_eq!(
            undo([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 4], 8, 8, &enc),
            data
        );
        // Trailing bytes (block of 10, width 4): the last 2 bytes are not shuffled.
        let data: Vec<u8> = (0..10).collect();
        let enc = [0, 4, 1, 5, 2, 6, 3, 7, 8, 9];
        assert_eq!(
            undo([SHUFFLE, 0, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0], 2, 10, &enc),
            data
        );
        // Two blocks of 6 bytes, typesize 3; a 4-byte last block.
        let data: Vec<u8> = (0..16).collect();
        let enc = [0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, 12, 13, 14, 15];
        assert_eq!(undo([SHUFFLE, 0, 0, 0, 0, 0], [0; 6], 3, 6, &enc), data);
    }

    #[test]
    fn bitshuffle_known_vectors() {
        // 8 one-byte elements: element i = 1 << i gives the 8x8 identity, which is its own
        // transpose.
        let data: Vec<u8> = (0..8).map(|i| 1u8 << i).collect();
        assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 8, &data), data);
        // 8 elements all 0x01: bit plane 0 is all ones, the others zero.
        let enc = [0xff, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 8, &enc),
            vec![1u8; 8]
        );
        // Typesize 2, 8 elements all 0x8001: planes 0 (byte 0 bit 0) and 15 (byte 1 bit 7).
        let mut enc = vec![0u8; 16];
        enc[0] = 0xff;
        enc[15] = 0xff;
        let data: Vec<u8> = [0x01u8, 0x80].repeat(8);
        assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 2, 16, &enc), data);
        // 9 elements: the 9th is copied.
        let mut enc9 = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0x5a];
        let dec = undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 9, &enc9);
        assert_eq!(dec, [1, 1, 1, 1, 1, 1, 1, 1, 0x5a]);
        enc9.truncate(7); // fewer than 8 elements: nothing moves
        assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 7, &enc9), enc9);
    }

    #[test]
    fn delta_known_vectors() {
        // typesize 2, two blocks of 4 bytes (2 items each).
        // block 0 items 0x0102, 0x0304 -> 0x0102, 0x0304^0x0102 = 0x0206
        // block 1 items 0x1111, 0x2222 -> XOR with original block 0 bytes.
        let data = [0x02, 0x01, 0x04, 0x03, 0x11, 0x11, 0x22, 0x22];
        let enc = [0x02, 0x01, 0x06, 0x02, 0x13, 0x10, 0x26, 0x21];
        assert_eq!(
            pipeline_fwd(&[DELTA, 0, 0, 0, 0, 0], &[0; 6], 2, 4, &data),
            enc
        );
        assert_eq!(undo([DELTA, 0, 0, 0, 0, 0], [0; 6], 2, 4, &enc), data);
        // typesize 12 works on single bytes, typesize 16 on 8-byte words.
        assert_eq!(delta_width(12), 1);
        assert_eq!(delta_width(16), 8);
        assert_eq!(delta_width(24), 8);
        assert_eq!(delta_width(c_typesize(400)), 1);
        assert_eq!(delta_width(3), 1);
    }

    #[test]
    fn bytedelta_known_vectors() {
        // 3 streams of 3 bytes plus a 1-byte tail.
        let data = [10, 12, 11, 0, 255, 1, 7, 7, 7, 99];
        let enc = [10, 2, 255, 0, 255, 2, 7, 0, 0, 99];
        assert_eq!(
            pipeline_fwd(
                &[BYTEDELTA, 0, 0, 0, 0, 0],
                &[3, 0, 0, 0, 0, 0],
                1,
                10,
                &data
            ),
            enc
        );
        assert_eq!(
            undo([BYTEDELTA, 0, 0, 0, 0, 0], [3, 0, 0, 0, 0, 0], 1, 10, &enc),
            data
        );
        // meta 0 means the real item size (here 3).
        assert_eq!(undo([BYTEDELTA, 0, 0, 0, 0, 0], [0; 6], 3, 10, &enc), data);
    }

    #[test]
    fn trunc_filters_are_identity_backward() {
        let mut rng = Rng(7);
        let data = rng.bytes(1000);
        for f in [TRUNC_PREC, INT_TRUNC] {
            assert_eq!(
                undo([0, 0, 0, 0, 0, f], [0, 0, 0, 0, 0, 5], 4, 256, &data),
                data
            );
        }
        // ...and they do not disturb the filters around them.
        roundtrip(
            [DELTA, TRUNC_PREC, INT_TRUNC, SHUFFLE, 0, 0],
            [0, 3, 7, 0, 0, 0],
            8,
            512,
            &data[..992],
        );
    }

    // Filtered (codec-decoded) bytes of chunks written by python-blosc2 4.14.1 / c-blosc2 3.3.5
    // (LZ4, no split), obtained by compressing `c_sample()` with the filters, clearing the
    // header's filter bytes and decompressing:
    //   data = (numpy.arange(64, dtype='<u4') * 3 + 1000).tobytes()
    //   blosc2.compress2(data, cparams=blosc2.CParams(codec=LZ4, clevel=9, filters=..,
    //       filters_meta=.., typesize=.., blocksize=.., splitmode=NEVER_SPLIT))
    fn c_sample() -> Vec<u8> {
        (0..64u32)
            .flat_map(|i| (1000 + 3 * i).to_le_bytes())
            .collect()
    }

    /// filters, filters_meta, typesize, blocksize, filtered bytes (hex).
    type Case = ([u8; 6], [u8; 6], usize, usize, &'static str);

    #[test]
    fn c_blosc2_3_vectors() {
        let data = c_sample();
        #[rustfmt::skip]
        let cases: [Case; 10] = [
            ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0], 4, 64, "
             e8ebeef1f4f7fafd000306090c0f12150303030303030303040404040404040400000000000000000000000000000000
             00000000000000000000000000000000181b1e2124272a2d303336393c3f424504040404040404040404040404040404
             0000000000000000000000000000000000000000000000000000000000000000484b4e5154575a5d606366696c6f7275
             040404040404040404040404040404040000000000000000000000000000000000000000000000000000000000000000
             787b7e8184878a8d909396999c9fa2a50404040404040404040404040404040400000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4], 12, 96, "
             e8ebeef1f4f7fafd000306090c0f1215181b1e2124272a2d030303030303030304040404040404040404040404040404
             000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             303336393c3f4245484b4e5154575a5d606366696c6f7275040404040404040404040404040404040404040404040404
             000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             787b7e8184878a8d909396999c9fa2a50404040404040404040404040404040400000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4], 20, 80, "
             e8ebeef1f4f7fafd000306090c0f1215181b1e2103030303030303030404040404040404040404040000000000000000
             000000000000000000000000000000000000000000000000000000000000000024272a2d303336393c3f4245484b4e51
             54575a5d0404040404040404040404040404040404040404000000000000000000000000000000000000000000000000
             00000000000000000000000000000000606366696c6f7275787b7e8184878a8d90939699040404040404040404040404
             040404040404040400000000000000000000000000000000000000000000000000000000000000000000000000000000
             9c9fa2a5040404040000000000000000",
            ),
            ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2], 8, 64, "
             e800eb00ee00f100f400f700fa00fd0000000300060009000c000f001200150003000300030003000300030003000300
             0400040004000400040004000400040018001b001e002100240027002a002d0030003300360039003c003f0042004500
             040004000400040004000400040004000400040004000400040004000400040048004b004e005100540057005a005d00
             60006300660069006c006f00720075000400040004000400040004000400040004000400040004000400040004000400
             78007b007e008100840087008a008d0090009300960099009c009f00a200a50004000400040004000400040004000400
             04000400040004000400040004000400",
            ),
            ([0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0], 4, 64, "
             aaaa6666b4b4c738f8c0ff00ff00ff00ff00ff0000ff0000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000aaaa6666b4b4c738073ff83f00c0000000000000ffff00000000000000000000
             0000000000000000000000000000000000000000000000000000000000000000aaaa6666b4b4c738f8c000ffffff0000
             00000000ffff000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             aaaa6666b4b4c738073f07c00700f8ff00000000ffff0000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0], 2, 256, "
             444444444444444444444444444444441414141414141414141414141414141410451045104510451045104510451045
             155040051550400515504005155040054055005015005505405500501500550555550000405555050000555515000050
             555500000000005055555555150000005555000000000000000000004055555555550000000000000000000000000000
             555500000000000000000000000000000000555555555555555555555555555500000000000000000000000000000000
             000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([3, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], 4, 64, "
             e803000003000000050000001f00000005000000030000000d00000007000000fd07000003000000050000000f000000
             05000000030000001d00000007000000f0070000f0070000f0070000d0070000d0070000d0070000d0070000d0070000
             3000000030000000300000003000000030000000300000005000000050000000a0070000a0070000a0070000a0070000
             a0070000a0070000a0070000a00700006000000060000000600000006000000060000000600000006000000060000000
             900700009007000090070000700700007007000070070000700700007007000090000000900000009000000090000000
             9000000090000000b0000000b0000000",
            ),
            ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 0, 8], 8, 128, "
             e80606060606060606060606060606060300000001000000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000eb06060606060606060606060606060603000000010000000000000000000000
             000000000000000000000000000000000000000000000000000000000000000048060606060606060606060606060606
             040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             4b0606060606060606060606060606060400000000000000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 4, 4], 12, 96, "
             e80303030303030303030303030303030303030303030303030000000000000001000000000000000000000000000000
             000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             300303030303030303030303030303030303030303030303040000000000000000000000000000000000000000000000
             000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
             780303030303030303030303030303030400000000000000000000000000000000000000000000000000000000000000
             00000000000000000000000000000000",
            ),
            ([0, 0, 0, 3, 1, 0], [0, 0, 0, 0, 0, 0], 8, 64, "
             e8061a0efa060a1e030000000700000000000000000000000000000000000000eb1a060afe0a061a0300000007000000
             00000000000000000000000000000000f0f0d0d030303050070707070000000000000000000000000000000000000000
             f0d0d0d030303050070707070000000000000000000000000000000000000000a0a0a0a0606060600707070700000000
             00000000000000000000000000000000a0a0a0a060606060070707070000000000000000000000000000000000000000
             90907070909090b007070707000000000000000000000000000000000000000090707070909090b00707070700000000
             00000000000000000000000000000000",
            ),
        ];
        for (filters, meta, ts, bs, enc) in cases {
            let enc = hex(enc);
            assert_eq!(enc.len(), data.len());
            assert_eq!(
                pipeline_fwd(&filters, &meta, ts, bs, &data),
                enc,
                "forward {filters:?} {meta:?} ts {ts}"
            );
            assert_eq!(
                undo(filters, meta, ts, bs, &enc),
                data,
                "undo {filters:?} {meta:?} ts {ts}"
            );
        }
    }

    // ---- randomized round trips ----

    #[test]
    fn roundtrip_single_filters() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for ts in TYPESIZES {
            for (bs, nbytes) in layouts(ts) {
                let data = rng.bytes(nbytes);
                for m in [0u8, 1, 2, 3, 4, 5, 8, 16] {
                    roundtrip([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, m], ts, bs, &data);
                    roundtrip(
                        [BYTEDELTA, 0, 0, 0, 0, 0],
                        [m, 0, 0, 0, 0, 0],
                        ts,
                        bs,
                        &data,
                    );
                }
                roundtrip([0, 0, 0, 0, 0, BITSHUFFLE], [0; 6], ts, bs, &data);
                roundtrip([DELTA, 0, 0, 0, 0, 0], [0; 6], ts, bs, &data);
            }
        }
    }

    #[test]
    fn forward_pipeline_matches_reference_encoder() {
        let mut rng = Rng(11);
        let cases: [([u8; 6], [u8; 6], usize); 5] = [
            ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 4], 64),
            ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0], 4),
            ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [0, 8, 0, 0, 0, 0], 8),
            ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [2, 4, 0, 0, 0, 0], 4),
            ([BYTEDELTA, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0], 2),
        ];
        for (f, m, ts) in cases {
            let fwd = ForwardPipeline::new(&f, &m, ts, &[])
                .unwrap()
                .expect("needs Rust");
            for (bs, len) in [(256, 1000), (64 * ts, 64 * ts * 3 + 5)] {
                let data = rng.bytes(len);
                let want = pipeline_fwd(&f, &m, ts, bs, &data);
                let mut got = vec![0u8; len];
                let mut scratch = Vec::new();
                for (b, o) in data.chunks(bs).zip(got.chunks_mut(bs)) {
                    fwd.apply_block(b, o, &mut scratch).unwrap();
                }
                assert_eq!(got, want, "{f:?} {m:?} ts {ts} bs {bs}");
                assert_eq!(undo(f, m, ts, bs, &got), data);
            }
        }
        // What c-blosc2 2.15 encodes as 3.x does runs in Rust only where Rust is faster:
        // with AVX2, shuffles of vector widths and BITSHUFFLE; never DELTA or odd widths.
        let avx2 = kernels::Isa::best() == kernels::Isa::Avx2;
        for (f, m, ts) in [
            ([0, 0, 0, 0, 0, SHUFFLE], [0; 6], 8),
            ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 8], 8),
            ([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 4),
            ([0, 0, 0, 0, SHUFFLE, BITSHUFFLE], [0; 6], 2),
        ] {
            let p = ForwardPipeline::new(&f, &m, ts, &[]).unwrap();
            assert_eq!(p.is_some(), avx2, "{f:?} {m:?} {ts}");
        }
        for (f, ts) in [
            ([0, 0, 0, 0, 0, SHUFFLE], 3),
            ([BITSHUFFLE, 0, 0, 0, 0, 0], 12),
            ([DELTA, 0, 0, 0, 0, SHUFFLE], 8),
            ([0, 0, 0, 0, SHUFFLE, TRUNC_PREC], 8),
            ([0; 6], 8),
        ] {
            assert_eq!(
                ForwardPipeline::new(&f, &[0; 6], ts, &[]),
                Ok(None),
                "{f:?} {ts}"
            );
        }
        assert!(
            ForwardPipeline::new(&[DELTA, BYTEDELTA, 0, 0, 0, 0], &[0, 4, 0, 0, 0, 0], 4, &[])
                .is_err()
        );
    }

    #[test]
    fn roundtrip_combinations() {
        let combos: [([u8; 6], [u8; 6]); 14] = [
            ([0, 0, 0, 0, SHUFFLE, BYTEDELTA], [0; 6]),
            ([0, 0, 0, 0, SHUFFLE, BYTEDELTA], [0, 0, 0, 0, 4, 4]),
            ([0, 0, 0, 0, BITSHUFFLE, BYTEDELTA], [0, 0, 0, 0, 0, 3]),
            ([0, 0, 0, DELTA, SHUFFLE, 0], [0; 6]),
            ([0, 0, 0, DELTA, SHUFFLE, 0], [0, 0, 0, 0, 4, 0]),
            ([0, 0, 0, 0, SHUFFLE, DELTA], [0, 0, 0, 0, 2, 0]),
            ([0, 0, 0, 0, BITSHUFFLE, DELTA], [0; 6]),
            ([DELTA, BITSHUFFLE, 0, 0, 0, 0], [0; 6]),
            ([SHUFFLE, SHUFFLE, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0]),
            ([SHUFFLE, BITSHUFFLE, 0, 0, 0, 0], [0; 6]),
            ([DELTA, BYTEDELTA, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0]),
            (
                [0, 0, 0, SHUFFLE, BYTEDELTA, BITSHUFFLE],
                [0, 0, 0, 4, 0, 0],
            ),
            ([DELTA, DELTA, 0, 0, 0, 0], [0; 6]),
            (
                [DELTA, TRUNC_PREC, SHUFFLE, INT_TRUNC, 0, 0],
                [0, 9, 2, 9, 5, 0],
            ),
        ];
        let mut rng = Rng(42);
        for ts in TYPESIZES {
            for (bs, nbytes) in layouts(ts) {
                // Half random, half smooth data.
                let mut data = rng.bytes(nbytes);
                for (i, b) in data.iter_mut().enumerate().skip(nbytes / 2) {
                    *b = (i / 5) as u8;
                }
                for (filters, meta) in combos {
                    roundtrip(filters, meta, ts, bs, &data);
                }
            }
        }
    }

    #[test]
    fn scratch_is_reused_and_blocks_are_independent_except_delta() {
        // Undoing a chunk equals undoing each block separately (no DELTA).
        let mut rng = Rng(3);
        let (ts, bs) = (8, 256);
        let data = rng.bytes(1000);
        let filters = [0, 0, 0, 0, SHUFFLE, BYTEDELTA];
        let meta = [0, 0, 0, 0, 0, 8];
        let enc = pipeline_fwd(&filters, &meta, ts, bs, &data);
        let whole = undo(filters, meta, ts, bs, &enc);
        let mut scratch = vec![0xee; 3]; // junk content must not matter
        let mut parts = Vec::new();
        for block in enc.chunks(bs) {
            let mut b = block.to_vec();
            undo_chunk(&filters, &meta, ts, bs, &mut b, &mut scratch).unwrap();
            parts.extend(b);
        }
        assert_eq!(whole, data);
        assert_eq!(parts, data);
    }
}
