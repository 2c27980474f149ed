//! Bit transposition behind BITSHUFFLE, built from the byte-shuffle kernels and an 8 x 8 bit
//! transposition of 8-byte words (vectorised like the rest of [`super`]).
//!
//! BITSHUFFLE (c-blosc2's `bitshuffle`, format 3 and later) works on the first `n8 = n - n % 8`
//! of a block's `n` elements of `e` bytes and copies the rest. Its output is `8e` bit planes of
//! `n8 / 8` bytes: plane `8j + k` holds bit `k` of byte `j` of every element, bit `m` of its
//! byte `q` belonging to element `8q + m`. That is three steps, each a kernel of this module's
//! parent: a byte shuffle by `e` (stream `j` = byte `j` of every element), the transposition of
//! each 8-byte word of those streams (word `q` of stream `j` = byte `j` of elements `8q..8q+8`
//! as rows; transposed, row `k` = bit `k` of each), and a byte shuffle by 8 of each stream
//! (row `k` of every word into plane `8j + k`). The inverse runs them backwards.

#![forbid(unsafe_code)]

use super::{shuffle_into_with, unshuffle_into_with, Isa};

/// Transpose the 8 x 8 bit matrix held in `x` (row `r` = byte `r`, column `c` = bit `c`,
/// least significant first): bit `c` of byte `r` of the result is bit `r` of byte `c` of `x`.
#[inline(always)]
pub(crate) fn transpose8x8(mut x: u64) -> u64 {
    // Swap 1x1 blocks inside 2x2, then 2x2 inside 4x4, then 4x4 inside 8x8 (delta swaps).
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^= t ^ (t << 28);
    x
}

/// [`transpose8x8`] on every 8-byte (little-endian) word of `words` in place; a trailing
/// piece shorter than 8 bytes is left alone.
pub(crate) fn transpose_words_with(isa: Isa, words: &mut [u8]) {
    let done = isa.transpose_words(words);
    for w in words[done..].chunks_exact_mut(8) {
        let x = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        w.copy_from_slice(&transpose8x8(x).to_le_bytes());
    }
}

/// The part of a block of `len` bytes BITSHUFFLE transposes, for elements of `e` bytes:
/// `(n8, body)` with `n8` the elements taken (a multiple of 8) and `body = n8 * e` bytes.
fn body(len: usize, e: usize) -> (usize, usize) {
    let n = len / e;
    let n8 = n - n % 8;
    (n8, n8 * e)
}

/// Inverse BITSHUFFLE of a block for elements of `e` bytes (`e >= 1`), with two buffers of the
/// block's length: `cur` holds the block and is working memory, `other` is working memory.
/// Returns where the decoded block is: `true` for `other`, `false` for `cur` (elements of one
/// byte end in `other`, wider ones in `cur`; a block of fewer than 8 elements stays in `cur`).
pub(crate) fn bitunshuffle(cur: &mut [u8], other: &mut [u8], e: usize) -> bool {
    bitunshuffle_with(Isa::best(), cur, other, e)
}

/// [`bitunshuffle`] with instruction set `isa`.
pub(crate) fn bitunshuffle_with(isa: Isa, cur: &mut [u8], other: &mut [u8], e: usize) -> bool {
    let e = e.max(1);
    let len = cur.len().min(other.len());
    let (n8, body) = body(len, e);
    if n8 == 0 {
        return false;
    }
    // Planes 8j..8j+8 (bytes j*n8.. of the block) as 8 streams: word q of the result holds
    // byte q of each, the 8 bits of byte j of elements 8q..8q+8 as rows.
    for j in 0..e {
        let s = j * n8..(j + 1) * n8;
        unshuffle_into_with(isa, &cur[s.clone()], &mut other[s], 8);
    }
    transpose_words_with(isa, &mut other[..body]);
    if e == 1 {
        other[body..len].copy_from_slice(&cur[body..len]);
        return true;
    }
    // `other` now holds e streams of n8 bytes (stream j = byte j of every element).
    unshuffle_into_with(isa, &other[..body], &mut cur[..body], e);
    false
}

/// BITSHUFFLE of `block` in place for elements of `e` bytes (`e >= 1`); `tmp` is working
/// memory at least as long. The inverse of [`bitunshuffle`].
pub(crate) fn bitshuffle(block: &mut [u8], tmp: &mut [u8], e: usize) {
    bitshuffle_with(Isa::best(), block, tmp, e);
}

/// [`bitshuffle`] with instruction set `isa`.
pub(crate) fn bitshuffle_with(isa: Isa, block: &mut [u8], tmp: &mut [u8], e: usize) {
    let e = e.max(1);
    let (n8, body) = body(block.len().min(tmp.len()), e);
    if n8 == 0 {
        return;
    }
    shuffle_into_with(isa, &block[..body], &mut tmp[..body], e);
    bit_planes_with(isa, &tmp[..body], n8, &mut block[..body]);
}

/// The bit planes of `streams` (byte streams of `n8` bytes each, `n8` a multiple of 8)
/// into `dst`: stream `j` becomes planes `8j..8j+8` of `n8 / 8` bytes, plane `8j + k`
/// holding bit `k` of the stream's bytes, 8 to a byte (the forward half of BITSHUFFLE after
/// its byte shuffle). The wide kernel does whole vectors of each stream; the rest is
/// [`transpose8x8`] on each 8 bytes.
pub(crate) fn bit_planes_with(isa: Isa, streams: &[u8], n8: usize, dst: &mut [u8]) {
    let plane = n8 / 8;
    for (stream, out) in streams.chunks_exact(n8).zip(dst.chunks_exact_mut(n8)) {
        let done = isa.bit_planes(stream, out);
        for (q, w) in stream[done..].chunks_exact(8).enumerate() {
            let q = done / 8 + q;
            let t = transpose8x8(u64::from_le_bytes(w.try_into().expect("8 bytes")));
            for (k, b) in t.to_le_bytes().into_iter().enumerate() {
                out[k * plane + q] = b;
            }
        }
    }
}

/// BITSHUFFLE of `src` into `dst` (same length) for elements of `e` bytes (`e >= 1`);
/// `tmp` is working memory at least as long. [`bitshuffle`] without the copy into place.
pub(crate) fn bitshuffle_into(src: &[u8], dst: &mut [u8], tmp: &mut [u8], e: usize) {
    bitshuffle_into_with(Isa::best(), src, dst, tmp, e);
}

/// [`bitshuffle_into`] with instruction set `isa`.
pub(crate) fn bitshuffle_into_with(isa: Isa, src: &[u8], dst: &mut [u8], tmp: &mut [u8], e: usize) {
    let e = e.max(1);
    let len = src.len().min(dst.len());
    let (n8, body) = body(len.min(tmp.len()), e);
    // A byte shuffle by `e` (a copy for one-byte elements), then each stream's bit planes;
    // the elements after the last whole 8 are copied.
    if n8 > 0 {
        shuffle_into_with(isa, &src[..body], &mut tmp[..body], e);
        bit_planes_with(isa, &tmp[..body], n8, &mut dst[..body]);
    }
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// The definition, bit by bit: the reference the kernels are tested against.
#[cfg(test)]
pub(crate) fn bitunshuffle_reference(src: &[u8], e: usize) -> Vec<u8> {
    let (n8, body) = body(src.len(), e);
    let mut dst = src.to_vec();
    let plane = n8 / 8;
    for i in 0..n8 {
        for j in 0..e {
            let mut byte = 0u8;
            for k in 0..8 {
                let at = (8 * j + k) * plane + i / 8;
                byte |= ((src[at] >> (i % 8)) & 1) << k;
            }
            dst[i * e + j] = byte;
        }
    }
    debug_assert!(body <= src.len());
    dst
}

#[cfg(test)]
mod tests {
    use super::super::tests::bytes;
    use super::*;

    #[test]
    fn transpose8x8_matches_definition() {
        for s in 1..1000u64 {
            let x = u64::from_le_bytes(bytes(8, s).try_into().unwrap());
            let y = transpose8x8(x);
            for r in 0..8 {
                for c in 0..8 {
                    assert_eq!((y >> (8 * r + c)) & 1, (x >> (8 * c + r)) & 1);
                }
            }
        }
    }

    #[test]
    fn transpose_words_matches_scalar_for_every_isa() {
        for len in [0, 8, 16, 24, 32, 40, 64, 72, 1000, 4096] {
            let src = bytes(len, len as u64 + 3);
            let mut expect = src.clone();
            transpose_words_with(Isa::Scalar, &mut expect);
            for isa in Isa::available() {
                let mut w = src.clone();
                transpose_words_with(isa, &mut w);
                assert_eq!(w, expect, "{isa:?} len {len}");
            }
        }
    }

    #[test]
    fn bitunshuffle_matches_definition_and_bitshuffle_inverts_it() {
        for e in [1, 2, 3, 4, 5, 8, 12, 16, 17, 255] {
            for n in [
                0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 127, 128, 255, 256, 300, 520, 1024, 4103,
            ] {
                let len = n * e + n % 5 % e.max(1); // a few blocks end with a partial element
                let enc = bytes(len, (e * 10_000 + n) as u64);
                let expect = bitunshuffle_reference(&enc, e);
                for isa in Isa::available() {
                    let mut cur = enc.clone();
                    let mut other = vec![0xA5; len];
                    let in_other = bitunshuffle_with(isa, &mut cur, &mut other, e);
                    let got = if in_other { &other } else { &cur };
                    assert_eq!(*got, expect, "{isa:?} e {e} n {n}");
                    let mut back = expect.clone();
                    let mut tmp = vec![0; len];
                    let mut into = vec![0x5A; len];
                    bitshuffle_into_with(isa, &expect, &mut into, &mut tmp, e);
                    assert_eq!(into, enc, "{isa:?} e {e} n {n}: forward into");
                    bitshuffle_with(isa, &mut back, &mut tmp, e);
                    assert_eq!(back, enc, "{isa:?} e {e} n {n}: forward");
                }
            }
        }
    }
}
