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
mod tests;
