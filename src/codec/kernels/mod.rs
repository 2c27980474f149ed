//! Byte-transposition, bit-transposition and per-stream prefix-sum kernels behind the Rust
//! filters (SHUFFLE with any group width, BITSHUFFLE, BYTEDELTA).
//!
//! The instruction set is chosen at run time ([`Isa::best`]): AVX2 (32 items per step,
//! [`avx2`], on x86_64 CPUs that have it), else SSE2 (16 items per step, [`sse2`], every
//! x86_64), else the scalar loops, which define the results and finish whatever a wide
//! kernel leaves (the tests check every instruction set this CPU has against them).

#![forbid(unsafe_code)]

use std::sync::OnceLock;

/// An instruction set the kernels can run with, narrowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    /// Plain Rust loops (the reference).
    Scalar,
    /// SSE2, 16 bytes per instruction.
    Sse2,
    /// AVX2, 32 bytes per instruction (x86_64 only, detected at run time).
    Avx2,
}

impl Isa {
    /// The instruction set the kernels use: the widest this CPU has, or a narrower one named
    /// by the environment variable `B2ND_SIMD` (`scalar`, `sse2` or `avx2`; read once, for
    /// benchmarks and to rule the wide kernels out when hunting a problem; results are the
    /// same bytes whichever is used).
    pub(crate) fn best() -> Isa {
        static BEST: OnceLock<Isa> = OnceLock::new();
        *BEST.get_or_init(|| {
            let cap = match std::env::var("B2ND_SIMD").as_deref() {
                Ok("scalar") => Isa::Scalar,
                Ok("sse2") => Isa::Sse2,
                _ => Isa::Avx2,
            };
            Isa::detected().min(cap)
        })
    }

    /// The widest instruction set this CPU has.
    fn detected() -> Isa {
        #[cfg(target_arch = "x86_64")]
        if avx2::token().is_some() {
            return Isa::Avx2;
        }
        if cfg!(all(
            any(target_arch = "x86", target_arch = "x86_64"),
            target_feature = "sse2"
        )) {
            Isa::Sse2
        } else {
            Isa::Scalar
        }
    }

    /// Every instruction set this CPU can run, narrowest first.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        [Isa::Scalar, Isa::Sse2, Isa::Avx2]
            .into_iter()
            .filter(|&i| i <= Isa::detected())
            .collect()
    }

    /// Items `first..first + count` of `w` streams of `n` bytes unshuffled into `dst` by the
    /// wide kernel; returns how many items it did (from `first` on).
    fn unshuffle_items(
        self,
        src: &[u8],
        dst: &mut [u8],
        w: usize,
        n: usize,
        first: usize,
        count: usize,
    ) -> usize {
        match self {
            Isa::Scalar => 0,
            Isa::Sse2 => sse2::unshuffle_items(src, dst, w, n, first, count),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or(0, |t| {
                avx2::unshuffle_items(t, src, dst, w, n, first, count)
            }),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => 0,
        }
    }

    /// `n` items of `w` bytes shuffled into `w` streams by the wide kernel; returns how many
    /// items it did.
    fn shuffle(self, src: &[u8], dst: &mut [u8], w: usize, n: usize) -> usize {
        match self {
            Isa::Scalar => 0,
            Isa::Sse2 => sse2::shuffle(src, dst, w, n),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or(0, |t| avx2::shuffle(t, src, dst, w, n)),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => 0,
        }
    }

    /// The 8 x 8 bit transposition ([`bits::transpose8x8`]) of the words in whole vectors of
    /// `words` by the wide kernel, in place; returns the bytes done.
    fn transpose_words(self, words: &mut [u8]) -> usize {
        match self {
            Isa::Scalar => 0,
            Isa::Sse2 => sse2::transpose_words(words),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or(0, |t| avx2::transpose_words(t, words)),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => 0,
        }
    }

    /// The bit planes of one byte stream by the wide kernel ([`bits::bit_planes_with`]):
    /// `out` gets 8 planes of `stream.len() / 8` bytes; returns the stream bytes done (whole
    /// vectors).
    fn bit_planes(self, stream: &[u8], out: &mut [u8]) -> usize {
        match self {
            Isa::Scalar | Isa::Sse2 => 0,
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or(0, |t| avx2::bit_planes(t, stream, out)),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => 0,
        }
    }

    /// `dst[i] ^= src[i]` over the whole vectors of `dst` by the wide kernel; returns the
    /// bytes done.
    fn xor_into(self, dst: &mut [u8], src: &[u8]) -> usize {
        match self {
            Isa::Scalar => 0,
            Isa::Sse2 => sse2::xor_into(dst, src),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or(0, |t| avx2::xor_into(t, dst, src)),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => 0,
        }
    }

    /// In-place running byte sum over the bytes of `stream` the wide kernel takes; returns
    /// them and the running sum so far.
    fn prefix_sum(self, stream: &mut [u8]) -> (usize, u8) {
        match self {
            Isa::Scalar => (0, 0),
            Isa::Sse2 => sse2::prefix_sum(stream),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => avx2::token().map_or((0, 0), |t| avx2::prefix_sum(t, stream)),
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => (0, 0),
        }
    }
}

/// Inverse byte shuffle with group width `w` from `src` into `dst` (same length): `src` holds
/// `w` streams of `n = len / w` bytes, byte `i` of stream `j` becomes byte `j` of group `i`.
/// The trailing `len % w` bytes are copied unchanged; `w <= 1` or `n <= 1` is a plain copy.
pub(crate) fn unshuffle_into(src: &[u8], dst: &mut [u8], w: usize) {
    unshuffle_into_with(Isa::best(), src, dst, w);
}

/// [`unshuffle_into`] with instruction set `isa`.
pub(crate) fn unshuffle_into_with(isa: Isa, src: &[u8], dst: &mut [u8], w: usize) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    let n = len / w.max(1);
    if w <= 1 || n <= 1 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let body = n * w;
    let done = isa.unshuffle_items(&src[..body], &mut dst[..body], w, n, 0, n);
    unshuffle_scalar(&src[..body], &mut dst[..body], w, n, done);
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Unshuffle only items `first..first + dst.len() / w` of a shuffled block `src` (`w` streams
/// of `n = src.len() / w` bytes; any tail after them is not read) into `dst`: byte `b` of
/// item `first + k` is `src[b * n + first + k]`. Lets a block be unshuffled straight into
/// the output runs it is scattered to. `false` (nothing written) when the items are not in
/// the block.
pub(crate) fn unshuffle_items_into(src: &[u8], w: usize, first: usize, dst: &mut [u8]) -> bool {
    unshuffle_items_into_with(Isa::best(), src, w, first, dst)
}

/// [`unshuffle_items_into`] with instruction set `isa`.
pub(crate) fn unshuffle_items_into_with(
    isa: Isa,
    src: &[u8],
    w: usize,
    first: usize,
    dst: &mut [u8],
) -> bool {
    let w = w.max(1);
    let n = src.len() / w;
    let count = dst.len() / w;
    if !dst.len().is_multiple_of(w) || first.checked_add(count).is_none_or(|end| end > n) {
        return false;
    }
    if w == 1 {
        dst.copy_from_slice(&src[first..first + count]);
        return true;
    }
    let mut done = isa.unshuffle_items(src, dst, w, n, first, count);
    if done < count && count >= 32 {
        // The last 32 items again, overlapping what is done: the same bytes are rewritten,
        // and a run of e.g. 244 items (an edge chunk) needs no scalar tail.
        let from = count - 32;
        if isa.unshuffle_items(src, &mut dst[from * w..], w, n, first + from, 32) == 32 {
            done = count;
        }
    }
    for (k, item) in dst.chunks_exact_mut(w).enumerate().skip(done) {
        for (b, x) in item.iter_mut().enumerate() {
            *x = src[b * n + first + k];
        }
    }
    true
}

/// Forward byte shuffle with group width `w` from `src` into `dst` (same length): byte `j` of
/// group `i` becomes byte `i` of stream `j`; the trailing `len % w` bytes are copied
/// unchanged. The inverse of [`unshuffle_into`].
pub(crate) fn shuffle_into(src: &[u8], dst: &mut [u8], w: usize) {
    shuffle_into_with(Isa::best(), src, dst, w);
}

/// [`shuffle_into`] with instruction set `isa`.
pub(crate) fn shuffle_into_with(isa: Isa, src: &[u8], dst: &mut [u8], w: usize) {
    let len = src.len().min(dst.len());
    let n = len / w.max(1);
    if w <= 1 || n <= 1 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let done = isa.shuffle(&src[..n * w], &mut dst[..n * w], w, n);
    if done < n {
        shuffle_rest(src, dst, w, n, done);
    }
    dst[n * w..len].copy_from_slice(&src[n * w..len]);
}

/// Scalar [`shuffle_into`] body for items `from..n`.
fn shuffle_rest(src: &[u8], dst: &mut [u8], w: usize, n: usize, from: usize) {
    if from > 0 {
        for (j, stream) in dst[..n * w].chunks_exact_mut(n).enumerate() {
            for (i, b) in stream.iter_mut().enumerate().skip(from) {
                *b = src[i * w + j];
            }
        }
        return;
    }
    match w {
        2 => shuffle_const::<2>(src, dst, n),
        4 => shuffle_const::<4>(src, dst, n),
        8 => shuffle_const::<8>(src, dst, n),
        16 => shuffle_const::<16>(src, dst, n),
        _ => {
            for (j, stream) in dst[..n * w].chunks_exact_mut(n).enumerate() {
                for (i, b) in stream.iter_mut().enumerate() {
                    *b = src[i * w + j];
                }
            }
        }
    }
}

/// [`shuffle_into`] for a compile-time width.
fn shuffle_const<const W: usize>(src: &[u8], dst: &mut [u8], n: usize) {
    let mut streams: Vec<&mut [u8]> = dst[..n * W].chunks_exact_mut(n).collect();
    for (i, item) in src[..n * W].chunks_exact(W).enumerate() {
        for (s, &b) in streams.iter_mut().zip(item) {
            s[i] = b;
        }
    }
}

/// Scalar [`unshuffle_into`] body for items `from..n`.
fn unshuffle_scalar(src: &[u8], dst: &mut [u8], w: usize, n: usize, from: usize) {
    if from >= n {
        return;
    }
    match w {
        2 => unshuffle_const::<2>(src, dst, n, from),
        4 => unshuffle_const::<4>(src, dst, n, from),
        8 => unshuffle_const::<8>(src, dst, n, from),
        16 => unshuffle_const::<16>(src, dst, n, from),
        _ => {
            for (j, stream) in src.chunks_exact(n).enumerate() {
                for (i, &b) in stream.iter().enumerate().skip(from) {
                    dst[i * w + j] = b;
                }
            }
        }
    }
}

/// [`unshuffle_scalar`] for a compile-time width: one iterator per stream, no index arithmetic
/// in the inner loop.
fn unshuffle_const<const W: usize>(src: &[u8], dst: &mut [u8], n: usize, from: usize) {
    let mut streams: [std::slice::Iter<'_, u8>; W] =
        std::array::from_fn(|j| src[j * n + from..(j + 1) * n].iter());
    for item in dst[from * W..n * W].chunks_exact_mut(W) {
        for (b, s) in item.iter_mut().zip(streams.iter_mut()) {
            *b = s.next().copied().unwrap_or(0);
        }
    }
}

/// Undo BYTEDELTA with `s` streams in place: a running sum (mod 256) inside each stream of
/// `l = len / s` bytes; the trailing `len % s` bytes are left unchanged.
pub(crate) fn unbytedelta(block: &mut [u8], s: usize) {
    unbytedelta_with(Isa::best(), block, s);
}

/// [`unbytedelta`] with instruction set `isa`.
pub(crate) fn unbytedelta_with(isa: Isa, block: &mut [u8], s: usize) {
    let l = block.len() / s.max(1);
    if l == 0 {
        return;
    }
    for stream in block[..s * l].chunks_exact_mut(l) {
        let (done, carry) = isa.prefix_sum(stream);
        let mut acc = carry;
        for b in &mut stream[done..] {
            acc = acc.wrapping_add(*b);
            *b = acc;
        }
    }
}

/// BYTEDELTA with `s` streams in place: each byte of a stream of `l = len / s` bytes becomes
/// its difference (mod 256) from the previous byte of the stream (the first byte is kept);
/// the trailing `len % s` bytes are left unchanged. The inverse of [`unbytedelta`].
pub(crate) fn bytedelta(block: &mut [u8], s: usize) {
    let l = block.len() / s.max(1);
    if l == 0 {
        return;
    }
    for stream in block[..s * l].chunks_exact_mut(l) {
        let mut prev = 0u8;
        for b in stream.iter_mut() {
            let x = *b;
            *b = x.wrapping_sub(prev);
            prev = x;
        }
    }
}

/// Undo DELTA on block 0 of a chunk, in place: element `i >= 1` of `w` bytes (`w` is 1, 2, 4
/// or 8) becomes the XOR of elements `0..=i` (a running XOR); a trailing `len % w` bytes are
/// left alone. Eight bytes at a time: a prefix XOR inside each little-endian word (shifts by
/// `w`, `2w`, ... bytes), then the previous word's last element XORed into every element.
pub(crate) fn undelta_first(block: &mut [u8], w: usize) {
    let (step, spread) = match w {
        1 => (8, 0x0101_0101_0101_0101u64),
        2 => (16, 0x0001_0001_0001_0001),
        4 => (32, 0x0000_0001_0000_0001),
        8 => (64, 1),
        _ => return undelta_first_scalar(block, w.max(1), 1),
    };
    let words = block.len() / 8;
    let mut carry = 0u64;
    for word in block[..words * 8].chunks_exact_mut(8) {
        let mut x = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let mut sh = step;
        while sh < 64 {
            x ^= x << sh;
            sh *= 2;
        }
        x ^= carry;
        word.copy_from_slice(&x.to_le_bytes());
        // The last element of this word, in every element slot of the next.
        carry = if step == 64 {
            x
        } else {
            (x >> (64 - step)) * spread
        };
    }
    undelta_first_scalar(block, w, (words * 8 / w).max(1));
}

/// [`undelta_first`] element by element from element `from` on (the reference).
fn undelta_first_scalar(block: &mut [u8], w: usize, from: usize) {
    let n = block.len() / w;
    for i in from.max(1)..n {
        for b in 0..w {
            block[i * w + b] ^= block[(i - 1) * w + b];
        }
    }
}

/// Undo DELTA on a block other than 0, in place: XOR with the decoded block 0 (`reference`,
/// at least as long) over the block's whole elements of `w` bytes; a trailing `len % w` bytes
/// are left alone.
pub(crate) fn undelta_other(block: &mut [u8], reference: &[u8], w: usize) {
    undelta_other_with(Isa::best(), block, reference, w);
}

/// [`undelta_other`] with instruction set `isa`.
pub(crate) fn undelta_other_with(isa: Isa, block: &mut [u8], reference: &[u8], w: usize) {
    let body = block.len() / w.max(1) * w.max(1);
    let (block, reference) = (&mut block[..body], &reference[..body]);
    let done = isa.xor_into(block, reference);
    for (x, r) in block[done..].iter_mut().zip(&reference[done..]) {
        *x ^= *r;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;
mod bits;
pub(crate) use bits::{bitshuffle, bitshuffle_into, bitunshuffle};
#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
mod sse2;
#[cfg(not(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
)))]
#[path = "none.rs"]
mod sse2;

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pseudo-random bytes (xorshift), the same for the same seed.
    pub(super) fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    fn unshuffle_reference(src: &[u8], w: usize) -> Vec<u8> {
        let mut out = src.to_vec();
        let n = src.len() / w;
        if w > 1 && n > 1 {
            for i in 0..n {
                for j in 0..w {
                    out[i * w + j] = src[j * n + i];
                }
            }
        }
        out
    }

    #[test]
    fn unshuffle_matches_reference() {
        for w in [1, 2, 3, 4, 5, 8, 12, 16, 17, 64] {
            for len in [
                0, 1, 15, 16, 31, 32, 33, 64, 100, 255, 256, 257, 1000, 4096, 4099,
            ] {
                let src = bytes(len, (w * 1000 + len) as u64);
                for isa in Isa::available() {
                    let mut dst = vec![0xAA; len];
                    unshuffle_into_with(isa, &src, &mut dst, w);
                    assert_eq!(dst, unshuffle_reference(&src, w), "{isa:?} w {w} len {len}");
                }
            }
        }
    }

    #[test]
    fn unshuffle_items_matches_a_slice_of_the_whole() {
        for w in [1, 2, 3, 4, 8, 16, 12] {
            for len in [64 * w, 1000 * w + 3, 37 * w] {
                let src = bytes(len, (w * 7 + len) as u64);
                let mut whole = vec![0; len];
                unshuffle_into(&src, &mut whole, w);
                let n = len / w;
                let cases = [
                    (0, n),
                    (1, n - 1),
                    (5, 17),
                    (3, 40),
                    (n - 3, 3),
                    (n - 33, 33),
                    (7, 244), // an edge chunk's run: 7 x 32 items and a tail of 20
                    (n / 2, 0),
                ];
                for isa in Isa::available() {
                    for (first, count) in cases.into_iter().filter(|(f, c)| f + c <= n) {
                        let mut part = vec![0xAA; count * w];
                        assert!(unshuffle_items_into_with(isa, &src, w, first, &mut part));
                        assert_eq!(
                            part,
                            whole[first * w..(first + count) * w],
                            "{isa:?} w {w} first {first}"
                        );
                    }
                }
                assert!(!unshuffle_items_into(&src, w, n, &mut vec![0; w]));
            }
        }
    }

    #[test]
    fn shuffle_inverts_unshuffle() {
        for w in [1, 2, 3, 4, 8, 16, 64] {
            for len in [0, 1, 7, 64, 65, 128, 1000, 4099, 4160, 32 * w * 3 + 5] {
                let src = bytes(len, (w * 31 + len) as u64);
                let mut reference = vec![0; len];
                shuffle_into_with(Isa::Scalar, &src, &mut reference, w);
                if len / w > 1 && w > 1 {
                    assert_eq!(
                        reference[1], src[w],
                        "w {w}: stream 0 holds byte 0 of each group"
                    );
                }
                for isa in Isa::available() {
                    let mut shuffled = vec![0; len];
                    shuffle_into_with(isa, &src, &mut shuffled, w);
                    assert_eq!(shuffled, reference, "{isa:?} w {w} len {len}");
                    let mut back = vec![0; len];
                    unshuffle_into_with(isa, &shuffled, &mut back, w);
                    assert_eq!(back, src, "{isa:?} w {w} len {len}");
                }
            }
        }
    }

    #[test]
    fn undelta_matches_element_by_element() {
        for w in [1, 2, 4, 8] {
            for len in [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 64, 100, 1003, 4096] {
                let src = bytes(len, (w * 977 + len) as u64);
                let mut expect = src.clone();
                undelta_first_scalar(&mut expect, w, 1);
                let mut got = src.clone();
                undelta_first(&mut got, w);
                assert_eq!(got, expect, "first block, w {w} len {len}");
                let reference = bytes(len + 5, len as u64);
                let body = len / w * w;
                for isa in Isa::available() {
                    let mut got = src.clone();
                    undelta_other_with(isa, &mut got, &reference, w);
                    for i in 0..len {
                        let want = if i < body {
                            src[i] ^ reference[i]
                        } else {
                            src[i]
                        };
                        assert_eq!(
                            got[i], want,
                            "{isa:?} other block, w {w} len {len} byte {i}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn bytedelta_inverts_unbytedelta() {
        for s in [1, 2, 4, 8] {
            for len in [0, 3, 16, 100, 4097] {
                let src = bytes(len, (s * 131 + len) as u64);
                let mut b = src.clone();
                bytedelta(&mut b, s);
                let l = len / s;
                if l > 1 {
                    assert_eq!(b[1], src[1].wrapping_sub(src[0]), "s {s} len {len}");
                }
                unbytedelta(&mut b, s);
                assert_eq!(b, src, "s {s} len {len}");
            }
        }
    }

    #[test]
    fn unbytedelta_matches_reference() {
        for s in [1, 2, 3, 4, 8, 16] {
            for len in [0, 1, 3, 16, 17, 48, 64, 100, 1000, 4097] {
                let b = bytes(len, (s * 7919 + len) as u64);
                let mut expect = b.clone();
                let l = len / s;
                for c in 0..s {
                    let mut acc = 0u8;
                    for x in &mut expect[c * l..(c + 1) * l] {
                        acc = acc.wrapping_add(*x);
                        *x = acc;
                    }
                }
                for isa in Isa::available() {
                    let mut b = b.clone();
                    unbytedelta_with(isa, &mut b, s);
                    assert_eq!(b, expect, "{isa:?} s {s} len {len}");
                }
            }
        }
    }
}
/// Throughput of every kernel with every instruction set this CPU has, on 256 KiB blocks
/// (a typical Blosc block), each result checked against the scalar one. A measurement, run
/// by hand (BENCHMARKS.md): `cargo test --release --lib kernel_throughput -- --ignored
/// --nocapture`.
#[cfg(test)]
mod throughput {
    use super::*;

    fn gbs(bytes: usize, reps: usize, mut f: impl FnMut()) -> f64 {
        let t = std::time::Instant::now();
        for _ in 0..reps {
            f();
        }
        (bytes * reps) as f64 / t.elapsed().as_secs_f64() / 1e9
    }

    #[test]
    #[ignore = "a measurement: run by hand with --release --nocapture"]
    fn kernel_throughput() {
        let len = 256 << 10;
        let src: Vec<u8> = (0..len).map(|i| (i * 7 + i / 13) as u8).collect();
        for w in [2usize, 4, 8, 16] {
            let mut expect = (vec![0u8; len], vec![0u8; len]);
            unshuffle_into_with(Isa::Scalar, &src, &mut expect.0, w);
            shuffle_into_with(Isa::Scalar, &src, &mut expect.1, w);
            for isa in Isa::available() {
                let reps = if isa == Isa::Scalar { 100 } else { 2000 };
                let mut dst = vec![0u8; len];
                let u = gbs(len, reps, || {
                    unshuffle_into_with(isa, std::hint::black_box(&src), &mut dst, w)
                });
                assert_eq!(dst, expect.0);
                let f = gbs(len, reps, || {
                    shuffle_into_with(isa, std::hint::black_box(&src), &mut dst, w)
                });
                assert_eq!(dst, expect.1);
                eprintln!("width {w:2} {isa:?}: unshuffle {u:5.1} GB/s, shuffle {f:5.1} GB/s");
            }
        }
        // Short runs, as a scatter into a region unshuffles them: 256 items of 4 bytes at a
        // time out of a 256 KiB block.
        let n = len / 4;
        let mut whole = vec![0u8; len];
        unshuffle_into_with(Isa::Scalar, &src, &mut whole, 4);
        for isa in Isa::available() {
            let mut run = vec![0u8; 1024];
            let reps = if isa == Isa::Scalar { 100 } else { 2000 };
            let t = gbs(len, reps, || {
                for first in (0..n).step_by(256) {
                    unshuffle_items_into_with(isa, std::hint::black_box(&src), 4, first, &mut run);
                }
            });
            assert_eq!(run, whole[len - 1024..]);
            eprintln!("unshuffle of 256-item runs, width 4, {isa:?}: {t:5.1} GB/s");
        }
        let mut expect = src.clone();
        unbytedelta_with(Isa::Scalar, &mut expect, 4);
        for isa in Isa::available() {
            let mut b = src.clone();
            unbytedelta_with(isa, &mut b, 4);
            assert_eq!(b, expect);
            let reps = if isa == Isa::Scalar { 100 } else { 2000 };
            let t = gbs(len, reps, || unbytedelta_with(isa, &mut b, 4));
            eprintln!("bytedelta (4 streams) {isa:?}: undo {t:5.1} GB/s");
        }
        for w in [1usize, 2, 4, 8] {
            let mut b = src.clone();
            let s = gbs(len, 100, || undelta_first_scalar(&mut b, w, 1));
            let f = gbs(len, 1000, || undelta_first(&mut b, w));
            let mut expect = src.clone();
            undelta_first_scalar(&mut expect, w, 1);
            b.copy_from_slice(&src);
            undelta_first(&mut b, w);
            assert_eq!(b, expect);
            eprintln!("undo DELTA on block 0, {w}-byte elements: {s:5.1} GB/s element by element, {f:5.1} GB/s by words");
            for isa in Isa::available() {
                let t = gbs(len, 1000, || undelta_other_with(isa, &mut b, &src, w));
                eprintln!("undo DELTA on another block, {w}-byte elements, {isa:?}: {t:5.1} GB/s");
            }
        }
        for e in [1usize, 4, 8] {
            let expect = bits::bitunshuffle_reference(&src, e);
            for isa in Isa::available() {
                let (mut cur, mut other) = (src.clone(), vec![0u8; len]);
                let reps = if isa == Isa::Scalar { 100 } else { 1000 };
                let u = gbs(len, reps, || {
                    cur.copy_from_slice(std::hint::black_box(&src));
                    bits::bitunshuffle_with(isa, &mut cur, &mut other, e);
                });
                cur.copy_from_slice(&src);
                let got = if bits::bitunshuffle_with(isa, &mut cur, &mut other, e) {
                    other.clone()
                } else {
                    cur.clone()
                };
                assert_eq!(got, expect);
                let f = gbs(len, reps, || {
                    cur.copy_from_slice(std::hint::black_box(&expect));
                    bits::bitshuffle_with(isa, &mut cur, &mut other, e);
                });
                let mut tmp = vec![0u8; len];
                let fi = gbs(len, reps, || {
                    bits::bitshuffle_into_with(isa, &expect, &mut cur, &mut tmp, e);
                });
                eprintln!(
                    "bitshuffle, {e}-byte elements, {isa:?}: undo {u:5.1} GB/s, \
                     forward {f:5.1} GB/s (each with a copy of the block in), \
                     forward into another buffer (the writer's) {fi:5.1} GB/s"
                );
            }
        }
    }
}
