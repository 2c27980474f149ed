//! Writing arrays python-blosc2 opens as its own: [`ArrayBuilder`], the streaming [`Writer`],
//! and attribute edits on existing files.
//!
//! Every write goes through one mechanism: data arrives in C order and is cut into *slabs*
//! of whole chunk rows along the first dimension; each slab's chunks are gathered into the
//! extended-chunk block layout (padding zeroed), compressed in parallel (all-zero chunks
//! become zero special chunks, as python-blosc2 writes them) and appended in order. Files
//! are written to a temporary path in the target directory and renamed on success, so an
//! error leaves nothing at the target.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::str::FromStr;

use rayon::prelude::*;

use crate::codec::filters;
use crate::codec::RustCodec;
use crate::error::{Error, Result};
use crate::ffi::{Cctx, CompressParams, Schunk};
use crate::format::frame::Frame;
use crate::format::meta::{self, Format};
use crate::model::attrs::Value;
use crate::model::dtype::{ByteOrder, Dtype};
use crate::model::element::Element;
use crate::model::geometry::Geometry;

/// Codecs a new array can use (the ones compiled into the linked c-blosc2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Codec {
    /// BloscLZ.
    BloscLz,
    /// LZ4.
    Lz4,
    /// LZ4 HC.
    Lz4hc,
    /// Zstandard (python-blosc2's default).
    Zstd,
    /// Zlib (encoded in Rust: the linked c-blosc2 2.15 has no zlib). Blocks are stored as one
    /// stream each; filters: `shuffle`, `shuffle:N`, `bytedelta`.
    Zlib,
    /// ZFP, fixed accuracy (lossy, encoded in Rust): absolute error at most about
    /// `10^exponent`. For `<f4`/`<f8` arrays of 1 to 4 dimensions with block sides of 4 or
    /// more, no filters, finite values.
    ZfpAccuracy(i8),
    /// ZFP, fixed precision (lossy): `bits + 5, 7, 9, 11` bit planes for 1 to 4 dimensions.
    /// Same conditions as [`Codec::ZfpAccuracy`].
    ZfpPrecision(u8),
    /// ZFP, fixed rate (lossy): each block compressed to this percentage (1 to 100) of its
    /// size. Same conditions as [`Codec::ZfpAccuracy`].
    ZfpRate(u8),
}

impl Codec {
    fn id(self) -> u8 {
        match self {
            Codec::BloscLz => 0,
            Codec::Lz4 => 1,
            Codec::Lz4hc => 2,
            Codec::Zlib => 4,
            Codec::Zstd => 5,
            Codec::ZfpAccuracy(_) => 33,
            Codec::ZfpPrecision(_) => 34,
            Codec::ZfpRate(_) => 35,
        }
    }

    /// The writable codec of a Blosc codec id and meta, if any.
    fn from_id(id: u8, meta: u8) -> Option<Codec> {
        Some(match id {
            0 => Codec::BloscLz,
            1 => Codec::Lz4,
            2 => Codec::Lz4hc,
            4 => Codec::Zlib,
            5 => Codec::Zstd,
            33 => Codec::ZfpAccuracy(meta as i8),
            34 => Codec::ZfpPrecision(meta),
            35 => Codec::ZfpRate(meta),
            _ => return None,
        })
    }

    /// The codec meta byte.
    fn meta(self) -> u8 {
        match self {
            Codec::ZfpAccuracy(e) => e as u8,
            Codec::ZfpPrecision(m) | Codec::ZfpRate(m) => m,
            _ => 0,
        }
    }

    /// The ZFP mode and meta, for the ZFP codecs.
    fn zfp(self) -> Option<(crate::codec::zfp::Mode, u8)> {
        crate::codec::zfp::Mode::from_id(self.id()).map(|m| (m, self.meta()))
    }
}

impl FromStr for Codec {
    type Err = Error;
    /// `blosclz`, `lz4`, `lz4hc`, `zlib`, `zstd`, `zfp_acc:EXPONENT`, `zfp_prec:BITS` or
    /// `zfp_rate:PERCENT` (case-insensitive).
    fn from_str(s: &str) -> Result<Codec> {
        let l = s.to_ascii_lowercase();
        let num = |v: &str| Error::InvalidArgument(format!("bad number {v:?} in codec {s:?}"));
        if let Some(v) = l.strip_prefix("zfp_acc:") {
            return v.parse().map(Codec::ZfpAccuracy).map_err(|_| num(v));
        }
        if let Some(v) = l.strip_prefix("zfp_prec:") {
            return v.parse().map(Codec::ZfpPrecision).map_err(|_| num(v));
        }
        if let Some(v) = l.strip_prefix("zfp_rate:") {
            return v.parse().map(Codec::ZfpRate).map_err(|_| num(v));
        }
        match l.as_str() {
            "blosclz" => Ok(Codec::BloscLz),
            "lz4" => Ok(Codec::Lz4),
            "lz4hc" => Ok(Codec::Lz4hc),
            "zstd" => Ok(Codec::Zstd),
            "zlib" => Ok(Codec::Zlib),
            _ => Err(Error::InvalidArgument(format!(
                "unknown codec {s:?} (writable: blosclz, lz4, lz4hc, zlib, zstd, zfp_acc:EXPONENT, zfp_prec:BITS, zfp_rate:PERCENT)"
            ))),
        }
    }
}

/// Filters a new array can use (the ones the linked c-blosc2 encodes as python-blosc2 4.x
/// decodes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Filter {
    /// Byte shuffle by item size.
    Shuffle,
    /// Bit shuffle by item size.
    Bitshuffle,
    /// XOR delta against the chunk's first block. Must come first in the pipeline: c-blosc2
    /// 2.15 and 3.x disagree on it after other filters.
    Delta,
    /// Truncate float mantissas to the given number of bits (lossy; `<f4`/`<f8` only).
    TruncPrec(u8),
    /// Byte shuffle in groups of this many bytes, whatever the item size (SHUFFLE with
    /// `filters_meta`, as c-blosc2 3.x defines it). python-blosc2 uses groups of 4 for `<U`
    /// arrays, and so does [`ArrayBuilder`] by default. When the width differs from the item
    /// size the linked c-blosc2 2.15 cannot encode it, so it is done in Rust; then it must be
    /// the only filter.
    ShuffleBytes(u8),
    /// BYTEDELTA (c-blosc2 3.x): each byte becomes its difference from the previous byte of
    /// its byte stream, one stream per item byte; put it after a shuffle, as python-blosc2
    /// does (`[SHUFFLE, BYTEDELTA]`). Done in Rust; combines with shuffles only.
    Bytedelta,
    /// NDCELL (c-blosc2 plugin 32): each block written cell by cell, cells of this side over
    /// every dimension (1 to 8 dimensions). Done in Rust.
    NdCell(u8),
    /// NDMEAN (c-blosc2 plugin 33, lossy): like [`Filter::NdCell`], every item of a cell
    /// replaced by the cell's mean; `<f4`/`<f8` only, side at most every block dimension.
    /// Done in Rust.
    NdMean(u8),
}

impl Filter {
    /// The writable filter of a Blosc filter id and meta (`Ok(None)` for an empty slot).
    fn from_id(id: u8, meta: u8) -> std::result::Result<Option<Filter>, ()> {
        Ok(Some(match id {
            0 => return Ok(None),
            1 if meta == 0 => Filter::Shuffle,
            1 => Filter::ShuffleBytes(meta),
            2 => Filter::Bitshuffle,
            3 => Filter::Delta,
            4 => Filter::TruncPrec(meta),
            32 => Filter::NdCell(meta),
            33 => Filter::NdMean(meta),
            35 => Filter::Bytedelta,
            _ => return Err(()),
        }))
    }

    /// Filter id and meta; BYTEDELTA's meta (the item size) is set by the builder.
    fn id_meta(self) -> (u8, u8) {
        match self {
            Filter::Shuffle => (1, 0),
            Filter::ShuffleBytes(w) => (1, w),
            Filter::Bytedelta => (35, 0),
            Filter::Bitshuffle => (2, 0),
            Filter::Delta => (3, 0),
            Filter::TruncPrec(bits) => (4, bits),
            Filter::NdCell(side) => (32, side),
            Filter::NdMean(side) => (33, side),
        }
    }
}

impl FromStr for Filter {
    type Err = Error;
    /// `shuffle`, `shuffle:BYTES`, `bitshuffle`, `bytedelta`, `delta`, `trunc_prec:BITS`,
    /// `ndcell:SIDE` or `ndmean:SIDE`.
    fn from_str(s: &str) -> Result<Filter> {
        let l = s.to_ascii_lowercase();
        match l.as_str() {
            "shuffle" => Ok(Filter::Shuffle),
            "bitshuffle" => Ok(Filter::Bitshuffle),
            "bytedelta" => Ok(Filter::Bytedelta),
            "delta" => Ok(Filter::Delta),
            _ => {
                if let Some(w) = l.strip_prefix("shuffle:") {
                    let w: u8 = w.parse().map_err(|_| {
                        Error::InvalidArgument(format!("bad shuffle group width in {s:?}"))
                    })?;
                    if w == 0 {
                        return Err(Error::InvalidArgument(format!(
                            "shuffle group width 0 in {s:?}"
                        )));
                    }
                    return Ok(Filter::ShuffleBytes(w));
                }
                for (prefix, make) in [
                    ("ndcell:", Filter::NdCell as fn(u8) -> Filter),
                    ("ndmean:", Filter::NdMean as fn(u8) -> Filter),
                ] {
                    if let Some(side) = l.strip_prefix(prefix) {
                        let n: u8 = side.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                            Error::InvalidArgument(format!("bad cell side in {s:?}"))
                        })?;
                        return Ok(make(n));
                    }
                }
                if let Some(bits) = l.strip_prefix("trunc_prec:") {
                    let b: u8 = bits.parse().map_err(|_| {
                        Error::InvalidArgument(format!("bad trunc_prec bits in {s:?}"))
                    })?;
                    return Ok(Filter::TruncPrec(b));
                }
                Err(Error::InvalidArgument(format!(
                    "unknown filter {s:?} (writable: shuffle, shuffle:BYTES, bitshuffle, bytedelta, delta, trunc_prec:BITS, ndcell:SIDE, ndmean:SIDE)"
                )))
            }
        }
    }
}

/// Where a new array goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A contiguous frame file (`.b2nd`).
    File(PathBuf),
    /// A sparse frame: a directory with `chunks.b2frame` and one file per chunk.
    Sparse(PathBuf),
    /// Contiguous frame bytes returned by [`Writer::finish`].
    Memory,
}

/// Target size of a default block (bytes).
const BLOCK_TARGET: u64 = 256 << 10;
/// Target size of a default chunk (bytes).
const CHUNK_TARGET: u64 = 4 << 20;

/// The default chunk and block shapes for `shape` and `itemsize`.
///
/// Deterministic, in the spirit of python-blosc2's: a block starts as the whole shape and
/// its leading dimensions are halved until it holds at most 256 KiB (so blocks keep whole
/// trailing rows where possible); a chunk then grows from the block by whole multiples,
/// trailing dimensions first, up to the shape and about 4 MiB. Dimensions of size 0 get 1.
///
/// ```
/// let (c, b) = b2nd::write::default_chunks_blocks(&[1000, 1000], 8);
/// assert_eq!(b, vec![32, 1000]);       // 250 KiB
/// assert_eq!(c, vec![512, 1000]);      // 3.9 MiB
/// ```
pub fn default_chunks_blocks(shape: &[u64], itemsize: usize) -> (Vec<u64>, Vec<u64>) {
    let isz = itemsize.max(1) as u64;
    let bytes = |v: &[u64]| v.iter().fold(isz, |a, &d| a.saturating_mul(d));
    let mut block: Vec<u64> = shape.iter().map(|&s| s.max(1)).collect();
    let mut i = 0;
    while bytes(&block) > BLOCK_TARGET && i < block.len() {
        if block[i] > 1 {
            block[i] = block[i].div_ceil(2);
        } else {
            i += 1;
        }
    }
    let mut chunk = block.clone();
    for i in (0..chunk.len()).rev() {
        let max_mult = shape[i].max(1) / block[i];
        let room = CHUNK_TARGET / bytes(&chunk).max(1);
        let k = max_mult.min(room).max(1);
        chunk[i] = block[i] * k;
    }
    (chunk, block)
}

/// A new array's description: shape, dtype, geometry, compression and target options.
///
/// ```no_run
/// use b2nd::write::{ArrayBuilder, Codec, Target};
/// let data: Vec<f64> = (0..1_000_000).map(|i| i as f64).collect();
/// ArrayBuilder::for_type::<f64>(&[1000, 1000])
///     .chunks(&[100, 1000])
///     .blocks(&[10, 1000])
///     .codec(Codec::Lz4)
///     .clevel(5)
///     .write(Target::File("out.b2nd".into()), &data)?;
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ArrayBuilder {
    shape: Vec<u64>,
    dtype: Dtype,
    chunks: Option<Vec<u64>>,
    blocks: Option<Vec<u64>>,
    codec: Codec,
    clevel: u8,
    filters: Option<Vec<Filter>>,
    threads: crate::parallel::Threads,
    format: Format,
    overwrite: bool,
    attrs: Vec<(String, Value)>,
}

impl ArrayBuilder {
    /// A builder for an array like `a`: its shape, dtype, chunks, blocks, metalayer flavour,
    /// clevel, codec and filters (python-blosc2's defaults for a codec or a filter pipeline
    /// this crate does not write).
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/ref_7x5_i4.b2nd")?;
    /// let copy = b2nd::ArrayBuilder::like(&a).bytes_to_vec(&a.read_bytes()?)?;
    /// let b = b2nd::Array::from_bytes(copy)?;
    /// assert_eq!((b.chunks(), b.codec(), b.filters()), (a.chunks(), a.codec(), a.filters()));
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn like(a: &crate::Array) -> ArrayBuilder {
        let mut b = ArrayBuilder::new(a.shape(), a.dtype().clone())
            .chunks(a.chunks())
            .blocks(a.blocks())
            .format(a.format())
            .clevel(a.clevel().min(9));
        let (slots, metas) = a.filter_slots();
        if let Some(c) = Codec::from_id(a.codec_id(), a.codec_meta()) {
            b = b.codec(c);
        }
        let filters: std::result::Result<Vec<Option<Filter>>, ()> = slots
            .iter()
            .zip(metas)
            .map(|(&id, m)| Filter::from_id(id, m))
            .collect();
        if let Ok(f) = filters {
            let f: Vec<Filter> = f.into_iter().flatten().collect();
            b = b.filters(&f);
        }
        b
    }

    /// An array of `shape` and `dtype` (python-blosc2's defaults: zstd, clevel 5, shuffle).
    pub fn new(shape: &[u64], dtype: Dtype) -> ArrayBuilder {
        ArrayBuilder {
            shape: shape.to_vec(),
            dtype,
            chunks: None,
            blocks: None,
            codec: Codec::Zstd,
            clevel: 5,
            filters: None,
            threads: crate::parallel::Threads::Global,
            format: Format::B2nd,
            overwrite: false,
            attrs: Vec::new(),
        }
    }

    /// An array of `shape` holding the Rust element type `T` (native byte order).
    pub fn for_type<T: Element>(shape: &[u64]) -> ArrayBuilder {
        ArrayBuilder::new(shape, T::dtype())
    }

    /// An array of `shape` with the NumPy dtype string `dtype` (e.g. `"<f8"`, `"|S5"`,
    /// `"[('a', '<i4'), ('b', '<f8')]"`).
    pub fn with_dtype_str(shape: &[u64], dtype: &str) -> Result<ArrayBuilder> {
        Ok(ArrayBuilder::new(shape, Dtype::parse(dtype)?))
    }

    /// Chunk shape (default: [`default_chunks_blocks`]).
    pub fn chunks(mut self, chunks: &[u64]) -> Self {
        self.chunks = Some(chunks.to_vec());
        self
    }

    /// Block shape (default: [`default_chunks_blocks`]).
    pub fn blocks(mut self, blocks: &[u64]) -> Self {
        self.blocks = Some(blocks.to_vec());
        self
    }

    /// Codec (default zstd).
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Compression level 0-9 (default 5).
    pub fn clevel(mut self, clevel: u8) -> Self {
        self.clevel = clevel;
        self
    }

    /// Filter pipeline, at most 6, applied in order (default: shuffle). Empty: no filters.
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = Some(filters.to_vec());
        self
    }

    /// Where compression runs (default: rayon's global pool; see [`crate::Threads`]).
    pub fn threads(mut self, threads: crate::parallel::Threads) -> Self {
        self.threads = threads;
        self
    }

    /// Metalayer flavour: [`Format::B2nd`] (default) or legacy [`Format::Caterva`] (which
    /// stores no dtype: readers see `|S{itemsize}`).
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Replace an existing target (default: refuse).
    pub fn overwrite(mut self, yes: bool) -> Self {
        self.overwrite = yes;
        self
    }

    /// Add a user attribute (vlmeta), read by python-blosc2 as `arr.vlmeta[name]`.
    pub fn attr(mut self, name: &str, value: Value) -> Self {
        self.attrs.push((name.to_string(), value));
        self
    }

    /// What ZFP needs: `<f4`/`<f8` items (it codes the bytes as native floats), 1 to 4
    /// dimensions, block sides of 4 or more (blosc2-zfp refuses smaller ones), no filters
    /// (they would hand it other numbers than the values), a rate of 1 to 100 percent.
    fn check_zfp(&self, filters: &[Filter], blocks: &[u64]) -> Result<()> {
        let bad = |s: String| Err(Error::InvalidArgument(format!("zfp: {s}")));
        if !matches!(
            self.dtype,
            Dtype::Float {
                size: 4 | 8,
                order: ByteOrder::Little
            }
        ) {
            return bad(format!(
                "codes <f4 or <f8 items, not {}",
                self.dtype.to_numpy_str()
            ));
        }
        if blocks.is_empty() || blocks.len() > 4 {
            return bad(format!("arrays of 1 to 4 dimensions, not {}", blocks.len()));
        }
        if let Some(b) = blocks.iter().find(|&&b| b < 4) {
            return bad(format!(
                "block sides of 4 or more (blocks {blocks:?} have {b})"
            ));
        }
        if !filters.is_empty() {
            return bad(format!("takes no filters (given {filters:?})"));
        }
        if let Codec::ZfpRate(r) = self.codec {
            if r == 0 || r > 100 {
                return bad(format!("rate {r}: 1 to 100 percent"));
            }
        }
        Ok(())
    }

    /// Validate everything and work out the geometry, parameters and metalayer bytes.
    fn plan(&self) -> Result<Plan> {
        let bad = |s: String| Err(Error::InvalidArgument(s));
        let nd = self.shape.len();
        if nd > meta::MAX_DIM {
            return bad(format!(
                "{nd} dimensions, at most {} supported",
                meta::MAX_DIM
            ));
        }
        let itemsize = self.dtype.itemsize();
        if itemsize == 0 {
            return bad("dtype has itemsize 0".into());
        }
        let (dc, db) = default_chunks_blocks(&self.shape, itemsize);
        let chunks = self.chunks.clone().unwrap_or(dc);
        let blocks = match (&self.blocks, &self.chunks) {
            (Some(b), _) => b.clone(),
            (None, None) => db,
            // Chunks given, blocks not: default blocks within those chunks.
            (None, Some(c)) => default_chunks_blocks(c, itemsize).1,
        };
        for (name, v) in [("chunks", &chunks), ("blocks", &blocks)] {
            if v.len() != nd {
                return bad(format!("{name} has {} dimensions, the shape {nd}", v.len()));
            }
            if let Some(i) = v.iter().position(|&x| x == 0) {
                return bad(format!("{name}[{i}] is 0"));
            }
        }
        for i in 0..nd {
            if blocks[i] > chunks[i] {
                return bad(format!(
                    "blocks[{i}] = {} exceeds chunks[{i}] = {}",
                    blocks[i], chunks[i]
                ));
            }
            if chunks[i] > i32::MAX as u64 || self.shape[i] > i64::MAX as u64 {
                return bad(format!("dimension {i} too large"));
            }
        }
        if self.clevel > 9 {
            return bad(format!("clevel {} (0 to 9)", self.clevel));
        }
        let zfp = self.codec.zfp();
        let filters = self.filters.clone().unwrap_or(if zfp.is_some() {
            Vec::new() // ZFP works on the values themselves
        } else {
            vec![default_filter(&self.dtype)]
        });
        if zfp.is_some() {
            self.check_zfp(&filters, &blocks)?;
        }
        if filters.len() > 6 {
            return bad(format!("{} filters, at most 6", filters.len()));
        }
        if let Some(p) = filters.iter().position(|f| *f == Filter::Delta) {
            if p != 0 {
                return bad("delta must be the first filter: c-blosc2 2.15 and python-blosc2 4.x disagree on it after other filters".into());
            }
        }
        for f in &filters {
            if let Filter::TruncPrec(bits) = f {
                let max = match self.dtype {
                    Dtype::Float { size: 4, .. } => 23,
                    Dtype::Float { size: 8, .. } => 52,
                    _ => return bad("trunc_prec applies to 4- and 8-byte floats only".into()),
                };
                if *bits == 0 || *bits > max {
                    return bad(format!(
                        "trunc_prec keeps 1 to {max} mantissa bits, not {bits}"
                    ));
                }
            }
        }
        let mut fslots = [0u8; 6];
        let mut fmeta = [0u8; 6];
        if self.filters.is_none() && !filters.is_empty() {
            // python-blosc2's default layout: [0, 0, 0, 0, 0, SHUFFLE]
            (fslots[5], fmeta[5]) = filters[0].id_meta();
        } else {
            for (i, f) in filters.iter().enumerate() {
                (fslots[i], fmeta[i]) = f.id_meta();
            }
        }
        // Pipelines readers cannot undo (a DELTA among three filters or more: see
        // filters::rust_can_undo) are not written either.
        filters::rust_can_undo(&fslots, &fmeta).map_err(|e| {
            Error::InvalidArgument(format!(
                "{e}: a DELTA combines with at most one other filter"
            ))
        })?;
        // BYTEDELTA works on one stream per item byte, as python-blosc2 writes it.
        for (id, m) in fslots.iter().zip(fmeta.iter_mut()) {
            if *id == 35 {
                *m = u8::try_from(itemsize).map_err(|_| {
                    Error::InvalidArgument("bytedelta: items over 255 bytes".into())
                })?;
            }
        }
        // What c-blosc2 2.15 encodes differently from 3.x (byte-group shuffles, BYTEDELTA) is
        // done in Rust; C then compresses with no filters and the chunk headers get the
        // pipeline back.
        // NDCELL / NDMEAN work on the b2nd block shape; NDMEAN on little-endian floats.
        let block_shape: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
        if fslots.contains(&33)
            && !matches!(
                self.dtype,
                Dtype::Float {
                    size: 4 | 8,
                    order: ByteOrder::Little
                }
            )
        {
            return Err(Error::InvalidArgument(format!(
                "ndmean averages <f4 or <f8 items, not {}",
                self.dtype.to_numpy_str()
            )));
        }
        let (forward, rust_codec) = if self.codec == Codec::Zlib {
            // Codec and filters in Rust.
            let f = filters::ForwardPipeline::all_in_rust(&fslots, &fmeta, itemsize, &block_shape)
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "{e}: zlib arrays take shuffle, shuffle:N and bytedelta filters"
                    ))
                })?;
            (Some(f), Some((RustCodec::Zlib, self.clevel)))
        } else if let Some((mode, meta)) = zfp {
            let f = filters::ForwardPipeline::all_in_rust(&fslots, &fmeta, itemsize, &block_shape)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?;
            (Some(f), Some((RustCodec::Zfp(mode, meta), self.clevel)))
        } else {
            let f = filters::ForwardPipeline::new(&fslots, &fmeta, itemsize, &block_shape).map_err(|e| {
                Error::InvalidArgument(format!(
                    "{e}: shuffle:N with N other than the item size, and bytedelta, combine only with shuffles"
                ))
            })?;
            (f, None)
        };

        let shape_i: Vec<i64> = self.shape.iter().map(|&s| s as i64).collect();
        let chunks_i: Vec<i32> = chunks.iter().map(|&s| s as i32).collect();
        let blocks_i: Vec<i32> = blocks.iter().map(|&s| s as i32).collect();
        let geom = Geometry::new(&shape_i, &chunks_i, &blocks_i, itemsize)
            .map_err(|e| Error::InvalidArgument(format!("{}: {}", e.field, e.reason)))?;
        let dtype_str = self.dtype.to_numpy_str();
        let meta_bytes = meta::encode(
            self.format,
            &shape_i,
            &chunks_i,
            &blocks_i,
            Some(&dtype_str),
        );
        let params = CompressParams {
            compcode: self.codec.id(),
            compcode_meta: self.codec.meta(),
            clevel: self.clevel,
            typesize: i32::try_from(itemsize)
                .map_err(|_| Error::InvalidArgument("itemsize too large".into()))?,
            blocksize: geom.block_bytes() as i32,
            splitmode: crate::ffi::SPLIT_AUTO,
            filters: fslots,
            filters_meta: fmeta,
            nthreads: 1,
        };
        Ok(Plan {
            dtype: self.dtype.clone(),
            geom,
            params,
            meta_bytes,
            format: self.format,
            forward,
            rust_codec,
        })
    }

    /// Start a streaming write to `target`: push C-order data with [`Writer::push`], then
    /// [`Writer::finish`].
    pub fn create(self, target: Target) -> Result<Writer> {
        let plan = self.plan()?;
        let staging = Staging::new(&target, self.overwrite)?;
        let mut schunk = Schunk::create(
            staging.c_path(),
            !matches!(target, Target::Sparse(_)),
            &plan.params,
        )
        .map_err(|reason| staging.error(reason))?;
        schunk
            .meta_add(plan.format.name(), &plan.meta_bytes)
            .map_err(|code| {
                staging.error(format!(
                    "cannot add the metalayer (c-blosc2 {})",
                    crate::ffi::describe_code(code)
                ))
            })?;
        let g = &plan.geom;
        let row_bytes = if g.ndim() == 0 {
            g.itemsize()
        } else {
            g.shape()[1..].iter().product::<u64>() as usize * g.itemsize()
        };
        Ok(Writer {
            plan,
            schunk,
            staging,
            target,
            threads: self.threads.len(),
            exec: self.threads.clone(),
            attrs: self.attrs,
            row_bytes,
            slab: Vec::new(),
            next_slab: 0,
            pushed: 0,
            next_chunk: 0,
            packer: None,
            spare: std::sync::Mutex::new(Vec::new()),
            spare_threads: 0,
        })
    }

    /// Write a whole array from raw C-order bytes in the dtype's byte order to a file or
    /// sparse directory (for [`Target::Memory`] use [`ArrayBuilder::bytes_to_vec`]).
    pub fn write_bytes(self, target: Target, data: &[u8]) -> Result<()> {
        let mut w = self.create(target)?;
        w.push(data)?;
        w.finish()
    }

    /// Write a whole array from typed items (C order) to a file or sparse directory. The
    /// dtype must be `T`'s.
    pub fn write<T: Element>(self, target: Target, data: &[T]) -> Result<()> {
        let bytes = self.typed_bytes(data)?;
        self.write_bytes(target, &bytes)
    }

    /// The contiguous frame (`.b2nd` file bytes) of a whole array from raw C-order bytes.
    pub fn bytes_to_vec(self, data: &[u8]) -> Result<Vec<u8>> {
        let mut w = self.create(Target::Memory)?;
        w.push(data)?;
        w.finish_to_vec()
    }

    /// The contiguous frame (`.b2nd` file bytes) of a whole array from typed items.
    ///
    /// ```
    /// let frame = b2nd::ArrayBuilder::for_type::<i32>(&[3]).to_vec(&[1, 2, 3])?;
    /// assert_eq!(b2nd::Array::from_bytes(frame)?.read::<i32>()?, [1, 2, 3]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn to_vec<T: Element>(self, data: &[T]) -> Result<Vec<u8>> {
        let bytes = self.typed_bytes(data)?;
        self.bytes_to_vec(&bytes)
    }

    /// `data`'s bytes, if `T` is the builder's dtype.
    fn typed_bytes<'a, T: Element>(&self, data: &'a [T]) -> Result<std::borrow::Cow<'a, [u8]>> {
        if self.dtype != T::dtype() {
            return Err(Error::TypeMismatch {
                dtype: self.dtype.to_numpy_str(),
                requested: T::NAME,
            });
        }
        Ok(T::as_bytes(data))
    }

    /// Write a whole array from an `ndarray` array or view with any strides (its shape must
    /// equal the builder's).
    #[cfg(feature = "ndarray")]
    pub fn write_ndarray<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        self,
        target: Target,
        a: &ndarray::ArrayBase<S, D>,
    ) -> Result<()> {
        let shape: Vec<u64> = a.shape().iter().map(|&s| s as u64).collect();
        if shape != self.shape {
            return Err(Error::InvalidArgument(format!(
                "ndarray shape {shape:?} differs from the builder's {:?}",
                self.shape
            )));
        }
        let std = a.as_standard_layout();
        let slice = std
            .as_slice()
            .ok_or_else(|| Error::InvalidArgument("ndarray not contiguous".into()))?;
        self.write(target, slice)
    }
}

struct Plan {
    dtype: Dtype,
    geom: Geometry,
    params: CompressParams,
    meta_bytes: Vec<u8>,
    format: Format,
    forward: Option<filters::ForwardPipeline>,
    /// A codec encoded in Rust (with its clevel): c-blosc2 then only writes zero chunks.
    rust_codec: Option<(RustCodec, u8)>,
}

impl Plan {
    fn dtype(&self) -> &Dtype {
        &self.dtype
    }

    /// The Rust filters for a [`Packer`], with the filter bytes chunk headers record.
    fn forward_state(&self) -> Option<(filters::ForwardPipeline, [u8; 6], [u8; 6])> {
        self.forward
            .clone()
            .map(|f| (f, self.params.filters, self.params.filters_meta))
    }

    /// Parameters for the compression contexts, with `nthreads` block threads: the frame's
    /// parameters, minus a filter done in Rust.
    fn cctx_params(&self, nthreads: usize) -> CompressParams {
        let mut p = self.params.clone();
        p.nthreads = nthreads.clamp(1, i16::MAX as usize) as i16;
        if self.forward.is_some() {
            // c-blosc2's automatic split decision looks at the filters it is given (none
            // here): take it as it would with the recorded ones, so that the chunks are split
            // into byte streams exactly when python-blosc2's would be. Split when the codec
            // is fast (BloscLZ, LZ4, or ZSTD up to clevel 5), a SHUFFLE is in the pipeline,
            // items are at most 16 bytes and a block holds at least 32 of them.
            let fast = matches!(p.compcode, 0 | 1) || (p.compcode == 5 && p.clevel <= 5);
            let shuffle = p.filters.contains(&1);
            let ts = p.typesize.max(1);
            let split = fast && shuffle && ts <= 16 && p.blocksize / ts >= 32;
            p.splitmode = if split {
                crate::ffi::SPLIT_ALWAYS
            } else {
                crate::ffi::SPLIT_NEVER
            };
            p.filters = [0; 6];
            p.filters_meta = [0; 6];
        }
        p
    }
}

/// The filter python-blosc2 4.x uses by default for a dtype: SHUFFLE in 4-byte groups for
/// `U` strings (one code point per group), plain SHUFFLE otherwise.
fn default_filter(dtype: &Dtype) -> Filter {
    match dtype {
        Dtype::Unicode { .. } => Filter::ShuffleBytes(4),
        _ => Filter::Shuffle,
    }
}

/// A temporary target in a private directory next to the destination, renamed into place on
/// success and removed (by drop) on failure.
enum Staging {
    Disk {
        tmp: tempfile::TempDir,
        inner: PathBuf,
        dest: PathBuf,
        overwrite: bool,
        sparse: bool,
    },
    Memory,
}

fn parent_dir(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

impl Staging {
    fn new(target: &Target, overwrite: bool) -> Result<Staging> {
        let (dest, sparse) = match target {
            Target::File(d) => (d, false),
            Target::Sparse(d) => (d, true),
            Target::Memory => return Ok(Staging::Memory),
        };
        if !overwrite && std::fs::symlink_metadata(dest).is_ok() {
            return Err(Error::TargetExists {
                path: dest.to_path_buf(),
            });
        }
        let dir = parent_dir(dest);
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&dir)
            .map_err(|source| Error::Io {
                path: dir.clone(),
                source,
            })?;
        let inner = tmp.path().join("array");
        Ok(Staging::Disk {
            tmp,
            inner,
            dest: dest.clone(),
            overwrite,
            sparse,
        })
    }

    fn c_path(&self) -> Option<&Path> {
        match self {
            Staging::Disk { inner, .. } => Some(inner),
            Staging::Memory => None,
        }
    }

    fn name(&self) -> String {
        match self {
            Staging::Disk { dest, .. } => dest.display().to_string(),
            Staging::Memory => "<memory>".into(),
        }
    }

    fn error(&self, reason: String) -> Error {
        Error::Frame {
            source_name: self.name(),
            reason,
        }
    }

    /// Move the finished temporary into place (the private directory is removed on drop).
    fn commit(self) -> Result<()> {
        let Staging::Disk {
            tmp,
            inner,
            dest,
            overwrite,
            sparse,
        } = self
        else {
            return Ok(());
        };
        let io = |source| Error::Io {
            path: dest.clone(),
            source,
        };
        let exists = std::fs::symlink_metadata(&dest).is_ok();
        if exists && !overwrite {
            return Err(Error::TargetExists {
                path: dest.to_path_buf(),
            });
        }
        if !sparse && !dest.is_dir() {
            if overwrite {
                std::fs::rename(&inner, &dest).map_err(io)?; // atomic replace
            } else {
                // Atomic no-clobber: a hard link fails if the name was taken meanwhile.
                std::fs::hard_link(&inner, &dest).map_err(io)?;
            }
        } else {
            if exists {
                if dest.is_dir() {
                    std::fs::remove_dir_all(&dest).map_err(io)?;
                } else {
                    std::fs::remove_file(&dest).map_err(io)?;
                }
            }
            std::fs::rename(&inner, &dest).map_err(io)?;
        }
        drop(tmp);
        Ok(())
    }
}

/// A streaming writer: push the array's bytes in C order (any amount at a time), then
/// [`Writer::finish`]. Memory use is about one slab of chunk rows along the first dimension.
///
/// ```no_run
/// use b2nd::write::{ArrayBuilder, Target};
/// let mut w = ArrayBuilder::for_type::<u16>(&[1_000_000, 64]).create(Target::File("big.b2nd".into()))?;
/// for _ in 0..1000 {
///     let rows = vec![7u16; 1000 * 64];
///     w.push(bytemuck::cast_slice(&rows))?;
/// }
/// w.finish()?;
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct Writer {
    plan: Plan,
    schunk: Schunk,
    staging: Staging,
    target: Target,
    threads: usize,
    /// Where compression runs.
    exec: crate::parallel::Threads,
    attrs: Vec<(String, Value)>,
    row_bytes: usize,
    slab: Vec<u8>,
    next_slab: u64,
    pushed: u64,
    /// Chunks appended through [`Writer::push_chunk`] (the two push styles do not mix).
    next_chunk: u64,
    packer: Option<Packer>,
    /// Idle per-worker compression states, and the c-blosc2 thread count they were made for.
    spare: std::sync::Mutex<Vec<Packer>>,
    spare_threads: i16,
}

/// Per-worker compression state.
struct Packer {
    cctx: Cctx,
    chunk: Vec<u8>,
    /// Filters done in Rust, if any (with the header bytes to record), their output and
    /// working memory.
    forward: Option<(filters::ForwardPipeline, [u8; 6], [u8; 6])>,
    /// A codec encoded in Rust (with its clevel), if any.
    rust_codec: Option<(RustCodec, u8)>,
    filtered: Vec<u8>,
    scratch: Vec<u8>,
}

impl Writer {
    fn nbytes(&self) -> u64 {
        self.plan.geom.nbytes()
    }

    /// Bytes of slab `k` (chunk row `k` along dim 0, clipped to the shape).
    fn slab_bytes(&self, k: u64) -> usize {
        let g = &self.plan.geom;
        if g.ndim() == 0 {
            return g.itemsize();
        }
        let c0 = g.chunks()[0];
        let rows = c0.min(g.shape()[0] - k * c0);
        rows as usize * self.row_bytes
    }

    fn nslabs(&self) -> u64 {
        let g = &self.plan.geom;
        if g.nitems() == 0 {
            0
        } else if g.ndim() == 0 {
            1
        } else {
            g.chunk_grid()[0]
        }
    }

    /// Push the next whole chunk, in chunk order (C order over the chunk grid): the data of
    /// the region the chunk covers, in C order of that region, without padding. Cannot be
    /// mixed with [`Writer::push`].
    pub fn push_chunk(&mut self, data: &[u8]) -> Result<()> {
        if self.pushed > 0 && self.next_chunk == 0 {
            return Err(Error::InvalidArgument(
                "push_chunk after push: the two styles do not mix".into(),
            ));
        }
        let g = &self.plan.geom;
        let idx = self.next_chunk;
        let total = if g.nitems() == 0 { 0 } else { g.nchunks() };
        if idx >= total {
            return Err(Error::InvalidArgument(format!(
                "all {total} chunks were already pushed"
            )));
        }
        let (start, shape) = g.chunk_region(idx);
        let want = shape.iter().product::<u64>() as usize * g.itemsize();
        if data.len() != want {
            return Err(Error::InvalidArgument(format!(
                "chunk {idx} covers {want} bytes, {} given",
                data.len()
            )));
        }
        if self.packer.is_none() {
            let params = self.plan.cctx_params(self.threads);
            self.packer = Some(Packer {
                cctx: Cctx::new(&params).map_err(Error::InvalidArgument)?,
                chunk: Vec::new(),
                forward: self.plan.forward_state(),
                rust_codec: self.plan.rust_codec,
                filtered: Vec::new(),
                scratch: Vec::new(),
            });
        }
        let p = self.packer.as_mut().expect("set above");
        let out = pack_chunk(g, p, idx, data, &start, &shape)?;
        self.schunk
            .append_chunk(&out)
            .map_err(|code| Error::Blosc {
                context: format!("{}: appending chunk {idx}", self.staging.name()),
                code,
            })?;
        self.next_chunk += 1;
        self.pushed += data.len() as u64;
        if self.next_chunk == total {
            self.next_slab = self.nslabs();
        }
        Ok(())
    }

    /// Push the next bytes of the array (C order, the dtype's byte order).
    pub fn push(&mut self, mut data: &[u8]) -> Result<()> {
        if self.next_chunk > 0 {
            return Err(Error::InvalidArgument(
                "push after push_chunk: the two styles do not mix".into(),
            ));
        }
        let left = self.nbytes() - self.pushed;
        if data.len() as u64 > left {
            return Err(Error::InvalidArgument(format!(
                "{} bytes pushed beyond the array's {} bytes",
                data.len() as u64 - left,
                self.nbytes()
            )));
        }
        while !data.is_empty() {
            let want = self.slab_bytes(self.next_slab);
            if self.slab.is_empty() && data.len() >= want {
                // A whole slab straight from the caller's memory.
                let (slab, rest) = data.split_at(want);
                self.write_slab(slab)?;
                data = rest;
            } else {
                let take = (want - self.slab.len()).min(data.len());
                self.slab.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.slab.len() == want {
                    let slab = std::mem::take(&mut self.slab);
                    self.write_slab(&slab)?;
                    self.slab = slab;
                    self.slab.clear();
                }
            }
        }
        Ok(())
    }

    /// Compress and append the chunks of the next slab.
    fn write_slab(&mut self, slab: &[u8]) -> Result<()> {
        let k = self.next_slab;
        let g = &self.plan.geom;
        let nd = g.ndim();
        let (first, count, start, shape) = if nd == 0 {
            (0u64, 1u64, vec![], vec![])
        } else {
            let per_row: u64 = g.chunk_grid()[1..].iter().product();
            let mut start = vec![0u64; nd];
            let mut shape = g.shape().to_vec();
            start[0] = k * g.chunks()[0];
            shape[0] = (slab.len() / self.row_bytes) as u64;
            (k * per_row, per_row, start, shape)
        };
        let outer = (count as usize).min(self.threads).max(1);
        let params = self.plan.cctx_params((self.threads / outer).max(1));
        if self.spare_threads != params.nthreads {
            // Contexts carry their thread count: rebuild when it changes.
            self.spare.lock().unwrap_or_else(|e| e.into_inner()).clear();
            self.spare_threads = params.nthreads;
        }
        let g = &self.plan.geom;
        let plan = &self.plan;
        let spare = &self.spare;
        // One compression context and gather buffer per worker, reused across slabs.
        let pack = |idx: u64| -> Result<Vec<u8>> {
            let p = spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let mut p = match p {
                Some(p) => p,
                None => Packer {
                    cctx: Cctx::new(&params).map_err(Error::InvalidArgument)?,
                    chunk: Vec::new(),
                    forward: plan.forward_state(),
                    rust_codec: plan.rust_codec,
                    filtered: Vec::new(),
                    scratch: Vec::new(),
                },
            };
            let r = pack_chunk(g, &mut p, idx, slab, &start, &shape);
            spare.lock().unwrap_or_else(|e| e.into_inner()).push(p);
            r
        };
        let compressed: Vec<Vec<u8>> = match outer > 1 {
            true => self.exec.install(|| {
                (first..first + count)
                    .into_par_iter()
                    .map(pack)
                    .collect::<Result<Vec<_>>>()
            })?,
            false => (first..first + count)
                .map(pack)
                .collect::<Result<Vec<_>>>()?,
        };
        for (j, c) in compressed.iter().enumerate() {
            self.schunk.append_chunk(c).map_err(|code| Error::Blosc {
                context: format!(
                    "{}: appending chunk {}",
                    self.staging.name(),
                    first + j as u64
                ),
                code,
            })?;
        }
        self.pushed += slab.len() as u64;
        self.next_slab += 1;
        Ok(())
    }

    /// Push typed items (C order, continuing where the last push stopped); `T` must be the
    /// array's dtype.
    pub fn push_items<T: Element>(&mut self, items: &[T]) -> Result<()> {
        if *self.plan.dtype() != T::dtype() {
            return Err(Error::TypeMismatch {
                dtype: self.plan.dtype().to_numpy_str(),
                requested: T::NAME,
            });
        }
        self.push(&T::as_bytes(items))
    }

    /// Check that the whole array was pushed, add the attributes, and move the result into
    /// place. For [`Target::Memory`] use [`Writer::finish_to_vec`].
    pub fn finish(self) -> Result<()> {
        if matches!(self.target, Target::Memory) {
            return Err(Error::InvalidArgument(
                "an in-memory array is finished with finish_to_vec".into(),
            ));
        }
        self.complete().map(|_| ())
    }

    /// Like [`Writer::finish`], for [`Target::Memory`]: the contiguous frame's bytes.
    pub fn finish_to_vec(self) -> Result<Vec<u8>> {
        if !matches!(self.target, Target::Memory) {
            return Err(Error::InvalidArgument(
                "finish_to_vec is for Target::Memory; files are finished with finish".into(),
            ));
        }
        self.complete()?
            .ok_or_else(|| Error::InvalidArgument("no in-memory frame".into()))
    }

    fn complete(mut self) -> Result<Option<Vec<u8>>> {
        if self.pushed != self.nbytes() || self.next_slab != self.nslabs() {
            return Err(Error::InvalidArgument(format!(
                "only {} of the array's {} bytes were pushed",
                self.pushed + self.slab.len() as u64,
                self.nbytes()
            )));
        }
        for (name, v) in std::mem::take(&mut self.attrs) {
            self.schunk
                .vlmeta_set(&name, &v.encode())
                .map_err(|code| Error::Attr {
                    source_name: self.staging.name(),
                    name: name.clone(),
                    reason: format!(
                        "c-blosc2 could not store it ({})",
                        crate::ffi::describe_code(code)
                    ),
                })?;
        }
        let bytes = if matches!(self.target, Target::Memory) {
            Some(
                self.schunk
                    .serialize_cframe()
                    .map_err(|code| Error::Blosc {
                        context: "serialising the in-memory frame".into(),
                        code,
                    })?,
            )
        } else {
            None
        };
        drop(self.schunk); // flush and close before the rename
        self.staging.commit()?;
        Ok(bytes)
    }
}

/// Gather chunk `idx` from the box `src` covers into the extended layout (padding zeroed) and
/// compress it; an all-zero chunk becomes a zero special chunk.
fn pack_chunk(
    g: &Geometry,
    p: &mut Packer,
    idx: u64,
    src: &[u8],
    start: &[u64],
    shape: &[u64],
) -> Result<Vec<u8>> {
    let chunk_bytes = g.chunk_bytes();
    // A chunk whose bytes are one run of the source (no padding, blocks in C order) is
    // compressed from there; otherwise it is gathered into the padded chunk layout.
    let data: &[u8] = match g.direct_range(idx, start, shape) {
        Some(r) if r.len() == chunk_bytes && r.end <= src.len() => &src[r],
        _ => {
            p.chunk.clear();
            p.chunk.resize(chunk_bytes, 0);
            g.copy_box_to_chunk(idx, src, &mut p.chunk, start, shape)
                .map_err(Error::InvalidArgument)?;
            &p.chunk
        }
    };
    let mut out = Vec::new();
    let blosc = |code| Error::Blosc {
        context: format!("compressing chunk {idx}"),
        code,
    };
    if data.iter().all(|&b| b == 0) {
        p.cctx.zeros_chunk(chunk_bytes, &mut out).map_err(blosc)?;
        return Ok(out);
    }
    let Some((forward, fslots, fmeta)) = &p.forward else {
        p.cctx.compress(data, &mut out).map_err(blosc)?;
        return Ok(out);
    };
    if let Some((codec, clevel)) = p.rust_codec {
        let headers = (fslots, fmeta);
        let block_shape: Vec<usize> = g.blocks().iter().map(|&b| b as usize).collect();
        return crate::codec::chunk::encode_in_rust(
            codec,
            clevel,
            data,
            g.block_bytes(),
            &block_shape,
            g.itemsize(),
            forward,
            headers,
            &mut p.scratch,
        )
        .map_err(|e| Error::InvalidArgument(format!("compressing chunk {idx}: {e}")));
    }
    // Filter each block (the padded chunk is whole blocks), compress with no filters, and
    // record the filters in the header. A chunk C stores uncompressed (memcpyed) keeps its
    // data unfiltered instead: readers ignore the filters of such chunks.
    p.filtered.resize(chunk_bytes, 0);
    for (b, f) in data
        .chunks(g.block_bytes())
        .zip(p.filtered.chunks_mut(g.block_bytes()))
    {
        forward
            .apply_block(b, f, &mut p.scratch)
            .map_err(|e| Error::InvalidArgument(format!("filtering chunk {idx}: {e}")))?;
    }
    p.cctx.compress(&p.filtered, &mut out).map_err(blosc)?;
    let extended = out.len() >= 32 && out[2] & 0x05 == 0x05;
    if !extended || out[2] & 0x02 != 0 {
        p.cctx.compress(data, &mut out).map_err(blosc)?;
        return Ok(out);
    }
    crate::format::chunk::set_filters(&mut out, fslots, fmeta);
    Ok(out)
}

/// Set user attributes (vlmeta) on an existing array file or sparse directory, crash-safely:
/// the frame is edited in a temporary copy (chunk files of sparse frames are hard-linked,
/// not copied) that then replaces the original.
pub fn set_attrs(path: impl AsRef<Path>, attrs: &[(&str, Value)]) -> Result<()> {
    edit_frame(path.as_ref(), |s, name| {
        for (k, v) in attrs {
            s.vlmeta_set(k, &v.encode()).map_err(|code| Error::Attr {
                source_name: name.into(),
                name: (*k).into(),
                reason: format!(
                    "c-blosc2 could not store it ({})",
                    crate::ffi::describe_code(code)
                ),
            })?;
        }
        Ok(())
    })
}

/// Delete user attributes from an existing array file or sparse directory (crash-safely, as
/// [`set_attrs`]). Deleting an absent name is an error.
pub fn delete_attrs(path: impl AsRef<Path>, names: &[&str]) -> Result<()> {
    edit_frame(path.as_ref(), |s, src| {
        for k in names {
            if !s.vlmeta_names().iter().any(|n| n == k) {
                return Err(Error::Attr {
                    source_name: src.into(),
                    name: (*k).into(),
                    reason: "no such attribute".into(),
                });
            }
            s.vlmeta_delete(k).map_err(|code| Error::Attr {
                source_name: src.into(),
                name: (*k).into(),
                reason: format!(
                    "c-blosc2 could not delete it ({})",
                    crate::ffi::describe_code(code)
                ),
            })?;
        }
        Ok(())
    })
}

fn edit_frame(path: &Path, edit: impl FnOnce(&mut Schunk, &str) -> Result<()>) -> Result<()> {
    let io = |p: &Path, source| Error::Io {
        path: p.to_path_buf(),
        source,
    };
    // Validate as a frame first (header checks, parse).
    drop(Frame::open(path, 0)?);
    let dir = parent_dir(path);
    let name = path.display().to_string();
    if path.is_dir() {
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempdir_in(&dir)
            .map_err(|e| io(&dir, e))?;
        for e in std::fs::read_dir(path).map_err(|e| io(path, e))? {
            let e = e.map_err(|e| io(path, e))?;
            let to = tmp.path().join(e.file_name());
            if e.file_name() == "chunks.b2frame" {
                std::fs::copy(e.path(), &to).map_err(|er| io(&e.path(), er))?;
            } else if std::fs::hard_link(e.path(), &to).is_err() {
                std::fs::copy(e.path(), &to).map_err(|er| io(&e.path(), er))?;
            }
        }
        {
            let mut s = Schunk::open(tmp.path(), 0).map_err(|reason| Error::Frame {
                source_name: name.clone(),
                reason,
            })?;
            edit(&mut s, &name)?;
        }
        // Swap: original -> backup, copy -> original, drop backup.
        let backup = tempfile::Builder::new()
            .prefix(".b2nd-old-")
            .tempdir_in(&dir)
            .map_err(|e| io(&dir, e))?;
        let backup_path = backup.path().join("old");
        std::fs::rename(path, &backup_path).map_err(|e| io(path, e))?;
        let t = tmp.keep();
        if let Err(e) = std::fs::rename(&t, path) {
            let _ = std::fs::rename(&backup_path, path);
            let _ = std::fs::remove_dir_all(&t);
            return Err(io(path, e));
        }
        drop(backup);
        Ok(())
    } else {
        let tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| io(&dir, e))?
            .into_temp_path();
        std::fs::copy(path, &tmp).map_err(|e| io(path, e))?;
        {
            let mut s = Schunk::open(&tmp, 0).map_err(|reason| Error::Frame {
                source_name: name.clone(),
                reason,
            })?;
            edit(&mut s, &name)?;
        }
        tmp.persist(path).map_err(|e| io(path, e.error))
    }
}
