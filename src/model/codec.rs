//! [`Codec`] and [`Filter`]: the codecs and filters an array is compressed with, as reads
//! report them and the builder takes them, on the ids of [`super::ids`].

#![forbid(unsafe_code)]

use std::str::FromStr;

use super::ids;
use crate::error::{Error, Result};

/// A Blosc2 codec: what [`crate::Array::codec`] reports and what [`crate::ArrayBuilder`]
/// compresses with. Every variant but [`Codec::Other`] can be written.
///
/// ```
/// use b2nd::Codec;
/// let c: Codec = "zfp_acc:-3".parse()?;
/// assert_eq!(c, Codec::ZfpAccuracy(-3));
/// assert_eq!(c.to_string(), "zfp_acc:-3");
/// assert_eq!(c.name(), "zfp_acc");
/// # Ok::<(), b2nd::Error>(())
/// ```
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
    /// A codec this crate reads but does not write (NDLZ, LZ4 against a dictionary is still
    /// LZ4), or does not know: its Blosc id and meta. The builder refuses it.
    Other {
        /// The Blosc codec id.
        id: u8,
        /// The codec meta byte.
        meta: u8,
    },
}

impl Codec {
    /// The codec's Blosc id (c-blosc2's `compcode`).
    pub fn id(self) -> u8 {
        match self {
            Codec::BloscLz => ids::BLOSCLZ,
            Codec::Lz4 => ids::LZ4,
            Codec::Lz4hc => ids::LZ4HC,
            Codec::Zlib => ids::ZLIB,
            Codec::Zstd => ids::ZSTD,
            Codec::ZfpAccuracy(_) => ids::ZFP_ACC,
            Codec::ZfpPrecision(_) => ids::ZFP_PREC,
            Codec::ZfpRate(_) => ids::ZFP_RATE,
            Codec::Other { id, .. } => id,
        }
    }

    /// The codec of a Blosc codec id and meta.
    pub(crate) fn from_id(id: u8, meta: u8) -> Codec {
        match id {
            ids::BLOSCLZ => Codec::BloscLz,
            ids::LZ4 => Codec::Lz4,
            ids::LZ4HC => Codec::Lz4hc,
            ids::ZLIB => Codec::Zlib,
            ids::ZSTD => Codec::Zstd,
            ids::ZFP_ACC => Codec::ZfpAccuracy(meta as i8),
            ids::ZFP_PREC => Codec::ZfpPrecision(meta),
            ids::ZFP_RATE => Codec::ZfpRate(meta),
            _ => Codec::Other { id, meta },
        }
    }

    /// The codec meta byte.
    pub fn meta(self) -> u8 {
        match self {
            Codec::ZfpAccuracy(e) => e as u8,
            Codec::ZfpPrecision(m) | Codec::ZfpRate(m) | Codec::Other { meta: m, .. } => m,
            _ => 0,
        }
    }

    /// The codec's lowercase name (`zstd`, `zfp_acc`, `ndlz`, ...), without parameters.
    pub fn name(self) -> String {
        match self {
            Codec::ZfpAccuracy(_) => "zfp_acc".into(),
            Codec::ZfpPrecision(_) => "zfp_prec".into(),
            Codec::ZfpRate(_) => "zfp_rate".into(),
            c => ids::codec_name(c.id()),
        }
    }
}

/// The form [`Codec::from_str`] reads (`zstd`, `zfp_rate:50`); for [`Codec::Other`] its name.
impl std::fmt::Display for Codec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Codec::ZfpAccuracy(e) => write!(f, "zfp_acc:{e}"),
            Codec::ZfpPrecision(m) => write!(f, "zfp_prec:{m}"),
            Codec::ZfpRate(m) => write!(f, "zfp_rate:{m}"),
            c => f.write_str(&c.name()),
        }
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

/// A Blosc2 filter: what [`crate::Array::filters`] reports and what [`crate::ArrayBuilder`]
/// writes. Every variant but [`Filter::Other`] can be written.
///
/// ```
/// use b2nd::Filter;
/// let f: Filter = "trunc_prec:10".parse()?;
/// assert_eq!((f, f.to_string()), (Filter::TruncPrec(10), "trunc_prec:10".to_string()));
/// # Ok::<(), b2nd::Error>(())
/// ```
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
    /// arrays, and so does [`crate::ArrayBuilder`] by default. When the width differs from the item
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
    /// A filter this crate reads but does not write (INT_TRUNC, ...), or does not know: its
    /// Blosc id and meta. The builder refuses it.
    Other {
        /// The Blosc filter id.
        id: u8,
        /// Its `filters_meta` byte.
        meta: u8,
    },
}

impl Filter {
    /// The filter of a Blosc filter id and meta (`None` for an empty slot).
    pub(crate) fn from_id(id: u8, meta: u8) -> Option<Filter> {
        Some(match id {
            ids::NOFILTER => return None,
            ids::SHUFFLE if meta == 0 => Filter::Shuffle,
            ids::SHUFFLE => Filter::ShuffleBytes(meta),
            ids::BITSHUFFLE => Filter::Bitshuffle,
            ids::DELTA => Filter::Delta,
            ids::TRUNC_PREC => Filter::TruncPrec(meta),
            ids::NDCELL => Filter::NdCell(meta),
            ids::NDMEAN => Filter::NdMean(meta),
            ids::BYTEDELTA => Filter::Bytedelta,
            _ => Filter::Other { id, meta },
        })
    }

    /// The filter's lowercase name (`shuffle`, `ndcell`, `int_trunc`, ...), without
    /// parameters.
    pub fn name(self) -> String {
        ids::filter_name(self.id_meta().0)
    }

    /// Filter id and meta; BYTEDELTA's meta (the item size) is set by the builder.
    pub(crate) fn id_meta(self) -> (u8, u8) {
        match self {
            Filter::Shuffle => (ids::SHUFFLE, 0),
            Filter::ShuffleBytes(w) => (ids::SHUFFLE, w),
            Filter::Bytedelta => (ids::BYTEDELTA, 0),
            Filter::Bitshuffle => (ids::BITSHUFFLE, 0),
            Filter::Delta => (ids::DELTA, 0),
            Filter::TruncPrec(bits) => (ids::TRUNC_PREC, bits),
            Filter::NdCell(side) => (ids::NDCELL, side),
            Filter::NdMean(side) => (ids::NDMEAN, side),
            Filter::Other { id, meta } => (id, meta),
        }
    }
}

/// The form [`Filter::from_str`] reads (`shuffle`, `ndcell:4`); for [`Filter::Other`] its name.
impl std::fmt::Display for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Filter::ShuffleBytes(w) => write!(f, "shuffle:{w}"),
            Filter::TruncPrec(b) => write!(f, "trunc_prec:{b}"),
            Filter::NdCell(s) => write!(f, "ndcell:{s}"),
            Filter::NdMean(s) => write!(f, "ndmean:{s}"),
            x => f.write_str(&x.name()),
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
