//! AVX2 kernels, chosen at run time: 32 items per step. `pulp`'s `V3` token proves the CPU
//! has AVX2 (x86-64-v3) and its safe wrappers call the instructions, so no `unsafe` here;
//! loads and stores are safe casts between `[u8; 32]` and `__m256i` (`bytemuck`). Each
//! function returns how many items (or bytes) it did; the caller finishes the rest.
//!
//! AVX2's byte unpacks work inside each 128-bit half: the interleaving network below is the
//! SSE2 one run on two 16-item halves at once, and a final cross-half permute puts items
//! 0-15 before items 16-31.

#![forbid(unsafe_code)]

use core::arch::x86_64::__m256i;
use pulp::x86::V3;

use crate::ffi::prefetch;

/// The AVX2 token if this CPU has AVX2 (detected once, then cached by `pulp`).
pub(crate) fn token() -> Option<V3> {
    V3::try_new()
}

#[inline(always)]
fn load(b: &[u8]) -> __m256i {
    let a: [u8; 32] = b[..32].try_into().expect("32 bytes");
    bytemuck::cast(a)
}

/// How many bytes ahead a forward shuffle asks for its input ([`prefetch`]). A write's
/// blocks mostly come from memory, not from a cache, and with the hardware's prefetching
/// alone the kernels waited on their loads: over 200 MB in 196 KB blocks on this
/// repository's benchmark VM, widths 2, 4, 8 and 16 took 11.2-11.9, 13.8-15.0, 19.2-20.5 and
/// 22.4-23.7 ms, now 8.6-8.8, 9.3-9.7, 9.1-10.9 and 19.1 ms (1, 2 and 3 KiB ahead did less).
const AHEAD: usize = 4096;

#[inline(always)]
fn store(o: &mut [u8], v: __m256i) {
    let a: [u8; 32] = bytemuck::cast(v);
    o[..32].copy_from_slice(&a);
}

/// A zero vector (the starting value of arrays filled below).
#[inline(always)]
fn zero() -> __m256i {
    bytemuck::Zeroable::zeroed()
}

/// The interleaving network for `W` streams, per 128-bit half: `W` rows of 16 bytes (byte
/// `i` of stream `j` at row `j`, column `i`) become 16 groups of `W` bytes in row order.
/// Written as plain calls and loops (no closures): every call must be inlined into the
/// AVX2 function `pulp` compiles, or the instructions become calls.
trait Interleave<const W: usize> {
    fn interleave(s: V3, v: [__m256i; W]) -> [__m256i; W];
}

/// The widths the network is defined for.
struct Net;

impl Interleave<2> for Net {
    #[inline(always)]
    fn interleave(s: V3, v: [__m256i; 2]) -> [__m256i; 2] {
        [
            s.avx2._mm256_unpacklo_epi8(v[0], v[1]),
            s.avx2._mm256_unpackhi_epi8(v[0], v[1]),
        ]
    }
}

impl Interleave<4> for Net {
    #[inline(always)]
    fn interleave(s: V3, v: [__m256i; 4]) -> [__m256i; 4] {
        let l = <Net as Interleave<2>>::interleave(s, [v[0], v[1]]);
        let r = <Net as Interleave<2>>::interleave(s, [v[2], v[3]]);
        let a = s.avx2;
        [
            a._mm256_unpacklo_epi16(l[0], r[0]),
            a._mm256_unpackhi_epi16(l[0], r[0]),
            a._mm256_unpacklo_epi16(l[1], r[1]),
            a._mm256_unpackhi_epi16(l[1], r[1]),
        ]
    }
}

impl Interleave<8> for Net {
    #[inline(always)]
    fn interleave(s: V3, v: [__m256i; 8]) -> [__m256i; 8] {
        let l = <Net as Interleave<4>>::interleave(s, [v[0], v[1], v[2], v[3]]);
        let r = <Net as Interleave<4>>::interleave(s, [v[4], v[5], v[6], v[7]]);
        let a = s.avx2;
        let mut out = [zero(); 8];
        for k in 0..4 {
            out[2 * k] = a._mm256_unpacklo_epi32(l[k], r[k]);
            out[2 * k + 1] = a._mm256_unpackhi_epi32(l[k], r[k]);
        }
        out
    }
}

impl Interleave<16> for Net {
    #[inline(always)]
    fn interleave(s: V3, v: [__m256i; 16]) -> [__m256i; 16] {
        let mut lo = [zero(); 8];
        let mut hi = [zero(); 8];
        lo.copy_from_slice(&v[..8]);
        hi.copy_from_slice(&v[8..]);
        let l = <Net as Interleave<8>>::interleave(s, lo);
        let r = <Net as Interleave<8>>::interleave(s, hi);
        let a = s.avx2;
        let mut out = [zero(); 16];
        for k in 0..8 {
            out[2 * k] = a._mm256_unpacklo_epi64(l[k], r[k]);
            out[2 * k + 1] = a._mm256_unpackhi_epi64(l[k], r[k]);
        }
        out
    }
}

/// [`super::unshuffle_items_into`] for widths 2, 4, 8 and 16, 32 items at a time; returns
/// how many items were done (0 for other widths).
pub(crate) fn unshuffle_items(
    s: V3,
    src: &[u8],
    dst: &mut [u8],
    w: usize,
    n: usize,
    first: usize,
    count: usize,
) -> usize {
    let job = Job {
        s,
        src,
        dst,
        n,
        first,
        count,
    };
    match w {
        2 => s.vectorize(Unshuffle::<2>(job)),
        4 => s.vectorize(Unshuffle::<4>(job)),
        8 => s.vectorize(Unshuffle::<8>(job)),
        16 => s.vectorize(Unshuffle::<16>(job)),
        _ => 0,
    }
}

/// The arguments of one kernel call.
struct Job<'a> {
    s: V3,
    src: &'a [u8],
    dst: &'a mut [u8],
    n: usize,
    first: usize,
    count: usize,
}

/// Unshuffle with width `W`, as the function `pulp` compiles with AVX2 enabled.
struct Unshuffle<'a, const W: usize>(Job<'a>);

impl<const W: usize> pulp::NullaryFnOnce for Unshuffle<'_, W>
where
    Net: Interleave<W>,
{
    type Output = usize;

    /// Items `first..first + count` of `W` streams of `n` bytes into `dst`, 32 at a time.
    #[inline(always)]
    fn call(self) -> usize {
        let Job {
            s,
            src,
            dst,
            n,
            first,
            count,
        } = self.0;
        let body = count / 32 * 32;
        // After interleaving, vector k holds output bytes 16k..16k+16 of items 0-15 in its
        // low half and the same bytes of items 16-31 in its high half.
        let half = 16 * W;
        for (k, out) in dst[..body * W].chunks_exact_mut(32 * W).enumerate() {
            let i = first + 32 * k;
            let mut v = [zero(); W];
            for (j, x) in v.iter_mut().enumerate() {
                *x = load(&src[j * n + i..]);
            }
            let v = <Net as Interleave<W>>::interleave(s, v);
            for p in 0..W / 2 {
                let (a, b) = (v[2 * p], v[2 * p + 1]);
                store(
                    &mut out[32 * p..],
                    s.avx2._mm256_permute2x128_si256::<0x20>(a, b),
                );
                store(
                    &mut out[half + 32 * p..],
                    s.avx2._mm256_permute2x128_si256::<0x31>(a, b),
                );
            }
        }
        body
    }
}

/// Forward shuffle of widths 2, 4, 8 and 16, 32 items at a time: `src` holds `n` items of
/// `w` bytes, `dst` gets `w` streams of `n` bytes; returns how many items were done.
///
/// In each 128-bit half, 16 items read as `w` rows of 16 bytes are `w` 16-byte "streams" in
/// the wrong order: interleaving them moves byte `x` of the half's `16w` to position
/// `rotl(x, log2 w)` (a `4 + log2 w`-bit index), so `m` more interleaves with
/// `(m + 1) log2 w = 0 mod (4 + log2 w)` (4, 2, 6 and 1 for widths 2, 4, 8, 16) send byte `b`
/// of item `t` to `16b + t`: row `b` holds 16 bytes of stream `b`. A cross-half permute
/// first puts items 0-15 in the low halves and items 16-31 in the high halves.
pub(crate) fn shuffle(s: V3, src: &[u8], dst: &mut [u8], w: usize, n: usize) -> usize {
    let job = Job {
        s,
        src,
        dst,
        n,
        first: 0,
        count: n,
    };
    match w {
        2 => s.vectorize(Shuffle::<2, 4>(job)),
        4 => s.vectorize(Shuffle::<4, 2>(job)),
        8 => s.vectorize(Shuffle8(job)),
        16 => s.vectorize(Shuffle::<16, 1>(job)),
        _ => 0,
    }
}

/// Forward shuffle with width `W` and `M` interleaves, compiled with AVX2 by `pulp`.
struct Shuffle<'a, const W: usize, const M: usize>(Job<'a>);

impl<const W: usize, const M: usize> pulp::NullaryFnOnce for Shuffle<'_, W, M>
where
    Net: Interleave<W>,
{
    type Output = usize;

    #[inline(always)]
    fn call(self) -> usize {
        let Job { s, src, dst, n, .. } = self.0;
        let body = n / 32 * 32;
        let half = 16 * W;
        for (k, items) in src[..body * W].chunks_exact(32 * W).enumerate() {
            for line in 0..W / 2 {
                prefetch(src, k * 32 * W + AHEAD + 64 * line);
            }
            let mut v = [zero(); W];
            for (q, x) in v.iter_mut().enumerate() {
                let (a, b) = (
                    load(&items[32 * (q / 2)..]),
                    load(&items[half + 32 * (q / 2)..]),
                );
                *x = if q % 2 == 0 {
                    s.avx2._mm256_permute2x128_si256::<0x20>(a, b)
                } else {
                    s.avx2._mm256_permute2x128_si256::<0x31>(a, b)
                };
            }
            for _ in 0..M {
                v = <Net as Interleave<W>>::interleave(s, v);
            }
            for (b, x) in v.into_iter().enumerate() {
                store(&mut dst[b * n + 32 * k..], x);
            }
        }
        body
    }
}

/// Forward shuffle with width 8, compiled with AVX2 by `pulp`: per 32 items, the 16-byte
/// halves of items `2m, 2m + 1` (pairs `P_m`) are gathered as vector `i` = `[P_i, P_8+i]`,
/// a byte shuffle turns each half into 8 words (word `b` = byte `b` of its two items), and
/// an 8 x 8 transposition of those words (unpacks by 16, 32 and 64 bits) leaves in vector
/// `b` byte `b` of items 0-15 (low half) and 16-31 (high half): 56 instructions for 256
/// bytes, where the interleaving network needs 6 rounds of 24.
struct Shuffle8<'a>(Job<'a>);

impl pulp::NullaryFnOnce for Shuffle8<'_> {
    type Output = usize;

    #[inline(always)]
    fn call(self) -> usize {
        let Job { s, src, dst, n, .. } = self.0;
        let a = s.avx2;
        let pairs = s.avx._mm256_setr_epi8(
            0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
            5, 13, 6, 14, 7, 15,
        );
        let body = n / 32 * 32;
        for (k, items) in src[..body * 8].chunks_exact(256).enumerate() {
            for line in 0..4 {
                prefetch(src, k * 256 + AHEAD + 64 * line);
            }
            let mut v = [zero(); 8];
            for (i, x) in v.iter_mut().enumerate() {
                let (lo, hi) = (
                    load(&items[32 * (i / 2)..]),
                    load(&items[128 + 32 * (i / 2)..]),
                );
                let g = if i % 2 == 0 {
                    a._mm256_permute2x128_si256::<0x20>(lo, hi)
                } else {
                    a._mm256_permute2x128_si256::<0x31>(lo, hi)
                };
                *x = a._mm256_shuffle_epi8(g, pairs);
            }
            let t = [
                a._mm256_unpacklo_epi16(v[0], v[1]),
                a._mm256_unpackhi_epi16(v[0], v[1]),
                a._mm256_unpacklo_epi16(v[2], v[3]),
                a._mm256_unpackhi_epi16(v[2], v[3]),
                a._mm256_unpacklo_epi16(v[4], v[5]),
                a._mm256_unpackhi_epi16(v[4], v[5]),
                a._mm256_unpacklo_epi16(v[6], v[7]),
                a._mm256_unpackhi_epi16(v[6], v[7]),
            ];
            let u = [
                a._mm256_unpacklo_epi32(t[0], t[2]),
                a._mm256_unpackhi_epi32(t[0], t[2]),
                a._mm256_unpacklo_epi32(t[1], t[3]),
                a._mm256_unpackhi_epi32(t[1], t[3]),
                a._mm256_unpacklo_epi32(t[4], t[6]),
                a._mm256_unpackhi_epi32(t[4], t[6]),
                a._mm256_unpacklo_epi32(t[5], t[7]),
                a._mm256_unpackhi_epi32(t[5], t[7]),
            ];
            let r = [
                a._mm256_unpacklo_epi64(u[0], u[4]),
                a._mm256_unpackhi_epi64(u[0], u[4]),
                a._mm256_unpacklo_epi64(u[1], u[5]),
                a._mm256_unpackhi_epi64(u[1], u[5]),
                a._mm256_unpacklo_epi64(u[2], u[6]),
                a._mm256_unpackhi_epi64(u[2], u[6]),
                a._mm256_unpacklo_epi64(u[3], u[7]),
                a._mm256_unpackhi_epi64(u[3], u[7]),
            ];
            for (b, x) in r.into_iter().enumerate() {
                store(&mut dst[b * n + 32 * k..], x);
            }
        }
        body
    }
}

/// In-place running byte sum over whole 32-byte pieces of `stream`; returns the bytes done
/// and the running sum so far.
pub(crate) fn prefix_sum(s: V3, stream: &mut [u8]) -> (usize, u8) {
    s.vectorize(PrefixSum(s, stream))
}

/// [`prefix_sum`], compiled with AVX2 by `pulp`.
struct PrefixSum<'a>(V3, &'a mut [u8]);

impl pulp::NullaryFnOnce for PrefixSum<'_> {
    type Output = (usize, u8);

    #[inline(always)]
    fn call(self) -> (usize, u8) {
        let PrefixSum(s, stream) = self;
        let a = s.avx2;
        let last15 = s.avx._mm256_set1_epi8(15);
        let mut carry = zero();
        let body = stream.len() / 32 * 32;
        for piece in stream[..body].chunks_exact_mut(32) {
            // Prefix sums inside each 16-byte half ...
            let mut v = load(piece);
            v = a._mm256_add_epi8(v, a._mm256_slli_si256::<1>(v));
            v = a._mm256_add_epi8(v, a._mm256_slli_si256::<2>(v));
            v = a._mm256_add_epi8(v, a._mm256_slli_si256::<4>(v));
            v = a._mm256_add_epi8(v, a._mm256_slli_si256::<8>(v));
            // ... then the low half's total added to the high half, and the carry in.
            let tops = a._mm256_shuffle_epi8(v, last15);
            v = a._mm256_add_epi8(v, a._mm256_permute2x128_si256::<0x08>(tops, tops));
            v = a._mm256_add_epi8(v, carry);
            store(piece, v);
            // Broadcast byte 31 (the running sum).
            let tops = a._mm256_shuffle_epi8(v, last15);
            carry = a._mm256_permute2x128_si256::<0x11>(tops, tops);
        }
        let last = if body == 0 { 0 } else { stream[body - 1] };
        (body, last)
    }
}

/// [`super::bits::transpose8x8`] on the four words of each whole 32-byte piece of `words`, in
/// place; returns the bytes done.
pub(crate) fn transpose_words(s: V3, words: &mut [u8]) -> usize {
    s.vectorize(TransposeWords(s, words))
}

/// [`transpose_words`], compiled with AVX2 by `pulp`.
struct TransposeWords<'a>(V3, &'a mut [u8]);

impl pulp::NullaryFnOnce for TransposeWords<'_> {
    type Output = usize;

    #[inline(always)]
    fn call(self) -> usize {
        let TransposeWords(s, words) = self;
        let a = s.avx2;
        let c1 = s.avx._mm256_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let c2 = s.avx._mm256_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let c3 = s.avx._mm256_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let body = words.len() / 32 * 32;
        for piece in words[..body].chunks_exact_mut(32) {
            let mut x = load(piece);
            let t = a._mm256_and_si256(a._mm256_xor_si256(x, a._mm256_srli_epi64::<7>(x)), c1);
            x = a._mm256_xor_si256(x, a._mm256_xor_si256(t, a._mm256_slli_epi64::<7>(t)));
            let t = a._mm256_and_si256(a._mm256_xor_si256(x, a._mm256_srli_epi64::<14>(x)), c2);
            x = a._mm256_xor_si256(x, a._mm256_xor_si256(t, a._mm256_slli_epi64::<14>(t)));
            let t = a._mm256_and_si256(a._mm256_xor_si256(x, a._mm256_srli_epi64::<28>(x)), c3);
            x = a._mm256_xor_si256(x, a._mm256_xor_si256(t, a._mm256_slli_epi64::<28>(t)));
            store(piece, x);
        }
        body
    }
}

/// The 8 bit planes of byte stream `stream` into `out` (same length): byte `q` of plane `k`
/// (at `k * stream.len() / 8`) holds bit `k` of stream bytes `8q..8q+8`, the first in its
/// lowest bit. Per 64 stream bytes: the top bit of each byte by `movemask`, 8 times, the
/// bytes shifted left by one bit in between. Returns the stream bytes done.
pub(crate) fn bit_planes(s: V3, stream: &[u8], out: &mut [u8]) -> usize {
    s.vectorize(BitPlanes(s, stream, out))
}

/// [`bit_planes`], compiled with AVX2 by `pulp`.
struct BitPlanes<'a>(V3, &'a [u8], &'a mut [u8]);

impl pulp::NullaryFnOnce for BitPlanes<'_> {
    type Output = usize;

    #[inline(always)]
    fn call(self) -> usize {
        let BitPlanes(s, stream, out) = self;
        let a = s.avx2;
        let len = stream.len().min(out.len());
        let plane = len / 8;
        // 64 stream bytes at a time: 8 bytes of each plane.
        let body = len / 64 * 64;
        // Each plane as 8-byte words, taken in step with the stream's 64-byte pieces.
        let mut planes = out[..8 * plane]
            .chunks_exact_mut(plane.max(1))
            .map(|p| p.chunks_exact_mut(8));
        let mut words: [_; 8] = std::array::from_fn(|_| planes.next().expect("8 planes"));
        for piece in stream[..body].chunks_exact(64) {
            let (mut x, mut y) = (load(&piece[..32]), load(&piece[32..]));
            let mut m = [0u64; 8];
            for k in (0..8).rev() {
                let lo = a._mm256_movemask_epi8(x) as u32;
                let hi = a._mm256_movemask_epi8(y) as u32;
                m[k] = u64::from(lo) | (u64::from(hi) << 32);
                x = a._mm256_slli_epi16::<1>(x);
                y = a._mm256_slli_epi16::<1>(y);
            }
            for (w, m) in words.iter_mut().zip(m) {
                if let Some(d) = w.next() {
                    d.copy_from_slice(&m.to_le_bytes());
                }
            }
        }
        body
    }
}

/// `dst[i] ^= src[i]` over whole 32-byte pieces of `dst`; returns the bytes done.
pub(crate) fn xor_into(s: V3, dst: &mut [u8], src: &[u8]) -> usize {
    s.vectorize(XorInto(s, dst, src))
}

/// [`xor_into`], compiled with AVX2 by `pulp`.
struct XorInto<'a>(V3, &'a mut [u8], &'a [u8]);

impl pulp::NullaryFnOnce for XorInto<'_> {
    type Output = usize;

    #[inline(always)]
    fn call(self) -> usize {
        let XorInto(s, dst, src) = self;
        let body = dst.len().min(src.len()) / 32 * 32;
        for (d, x) in dst[..body].chunks_exact_mut(32).zip(src.chunks_exact(32)) {
            let v = s.avx2._mm256_xor_si256(load(d), load(x));
            store(d, v);
        }
        body
    }
}
