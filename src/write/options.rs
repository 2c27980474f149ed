//! Where a new array goes, and the default chunk shapes.

#![forbid(unsafe_code)]

use std::path::PathBuf;

/// Where a new array goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A contiguous frame file (`.b2nd`).
    File(PathBuf),
    /// A sparse frame: a directory with `chunks.b2frame` and one file per chunk.
    Sparse(PathBuf),
    /// Contiguous frame bytes returned by [`Writer::finish`](crate::Writer::finish).
    Memory,
}

/// Target size of a default block (bytes).
pub(super) const BLOCK_TARGET: u64 = 256 << 10;
/// Target size of a default chunk (bytes).
pub(super) const CHUNK_TARGET: u64 = 4 << 20;

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
