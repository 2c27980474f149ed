//! Byte-transposition and per-stream prefix-sum kernels behind the Rust filter inverses
//! (SHUFFLE with any group width, BYTEDELTA).
//!
//! On x86 / x86_64 with SSE2 (every x86_64 target) the common widths run 16 items per step
//! through `safe_arch`'s safe SSE2 wrappers; everything else, and other architectures, use the
//! scalar loops, which define the results (the tests check both agree).

#![forbid(unsafe_code)]

/// Inverse byte shuffle with group width `w` from `src` into `dst` (same length): `src` holds
/// `w` streams of `n = len / w` bytes, byte `i` of stream `j` becomes byte `j` of group `i`.
/// The trailing `len % w` bytes are copied unchanged; `w <= 1` or `n <= 1` is a plain copy.
pub(crate) fn unshuffle_into(src: &[u8], dst: &mut [u8], w: usize) {
    debug_assert_eq!(src.len(), dst.len());
    let len = src.len().min(dst.len());
    let n = len / w.max(1);
    if w <= 1 || n <= 1 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let body = n * w;
    let done = simd::unshuffle(&src[..body], &mut dst[..body], w, n);
    unshuffle_scalar(&src[..body], &mut dst[..body], w, n, done);
    dst[body..len].copy_from_slice(&src[body..len]);
}

/// Unshuffle only items `first..first + dst.len() / w` of a shuffled block `src` (`w` streams
/// of `n = src.len() / w` bytes; any tail after them is not read) into `dst`: byte `b` of
/// item `first + k` is `src[b * n + first + k]`. Lets a block be unshuffled straight into
/// the output runs it is scattered to. `false` (nothing written) when the items are not in
/// the block.
pub(crate) fn unshuffle_items_into(src: &[u8], w: usize, first: usize, dst: &mut [u8]) -> bool {
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
    let done = simd::unshuffle_items(src, dst, w, n, first, count);
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
    let len = src.len().min(dst.len());
    let n = len / w.max(1);
    if w <= 1 || n <= 1 {
        dst[..len].copy_from_slice(&src[..len]);
        return;
    }
    let done = simd::shuffle(&src[..n * w], &mut dst[..n * w], w, n);
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
    let l = block.len() / s.max(1);
    if l == 0 {
        return;
    }
    for stream in block[..s * l].chunks_exact_mut(l) {
        let (done, carry) = simd::prefix_sum(stream);
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

#[cfg(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
))]
mod simd {
    use safe_arch::{
        add_i8_m128i, byte_shl_imm_u128_m128i, load_unaligned_m128i, m128i,
        shuffle_ai_f32_all_m128i, store_unaligned_m128i, unpack_high_i16_m128i,
        unpack_high_i32_m128i, unpack_high_i64_m128i, unpack_high_i8_m128i, unpack_low_i16_m128i,
        unpack_low_i32_m128i, unpack_low_i64_m128i, unpack_low_i8_m128i, zeroed_m128i,
    };

    fn load(b: &[u8]) -> m128i {
        load_unaligned_m128i(b[..16].try_into().expect("16 bytes"))
    }

    /// Interleave 2 streams of 16 bytes: out = 16 groups of 2 bytes.
    fn interleave2(s: [m128i; 2]) -> [m128i; 2] {
        [
            unpack_low_i8_m128i(s[0], s[1]),
            unpack_high_i8_m128i(s[0], s[1]),
        ]
    }

    /// Interleave 4 streams of 16 bytes into 16 groups of 4 bytes.
    fn interleave4(s: [m128i; 4]) -> [m128i; 4] {
        let l = interleave2([s[0], s[1]]);
        let r = interleave2([s[2], s[3]]);
        [
            unpack_low_i16_m128i(l[0], r[0]),
            unpack_high_i16_m128i(l[0], r[0]),
            unpack_low_i16_m128i(l[1], r[1]),
            unpack_high_i16_m128i(l[1], r[1]),
        ]
    }

    /// Interleave 8 streams of 16 bytes into 16 groups of 8 bytes.
    fn interleave8(s: [m128i; 8]) -> [m128i; 8] {
        let l = interleave4([s[0], s[1], s[2], s[3]]);
        let r = interleave4([s[4], s[5], s[6], s[7]]);
        std::array::from_fn(|k| {
            if k % 2 == 0 {
                unpack_low_i32_m128i(l[k / 2], r[k / 2])
            } else {
                unpack_high_i32_m128i(l[k / 2], r[k / 2])
            }
        })
    }

    /// Interleave 16 streams of 16 bytes into 16 groups of 16 bytes.
    fn interleave16(s: [m128i; 16]) -> [m128i; 16] {
        let l = interleave8(std::array::from_fn(|j| s[j]));
        let r = interleave8(std::array::from_fn(|j| s[8 + j]));
        std::array::from_fn(|k| {
            if k % 2 == 0 {
                unpack_low_i64_m128i(l[k / 2], r[k / 2])
            } else {
                unpack_high_i64_m128i(l[k / 2], r[k / 2])
            }
        })
    }

    /// Unshuffle 16 items at a time for widths 2, 4, 8 and 16; returns how many items were
    /// done (a multiple of 16; 0 for other widths).
    pub(super) fn unshuffle(src: &[u8], dst: &mut [u8], w: usize, n: usize) -> usize {
        unshuffle_items(src, dst, w, n, 0, n)
    }

    /// [`super::unshuffle_items_into`] for widths 2, 4, 8 and 16, 16 items at a time;
    /// returns how many items were done.
    pub(super) fn unshuffle_items(
        src: &[u8],
        dst: &mut [u8],
        w: usize,
        n: usize,
        first: usize,
        count: usize,
    ) -> usize {
        match w {
            2 => run::<2>(src, dst, n, first, count, interleave2),
            4 => run::<4>(src, dst, n, first, count, interleave4),
            8 => run::<8>(src, dst, n, first, count, interleave8),
            16 => run::<16>(src, dst, n, first, count, interleave16),
            _ => 0,
        }
    }

    /// Items `first..first + count` of `W` streams of `n` bytes into `dst` (`count * W`
    /// bytes), 16 at a time; returns how many were done.
    fn run<const W: usize>(
        src: &[u8],
        dst: &mut [u8],
        n: usize,
        first: usize,
        count: usize,
        interleave: fn([m128i; W]) -> [m128i; W],
    ) -> usize {
        let body = count / 16 * 16;
        for (k, out) in dst[..body * W].chunks_exact_mut(16 * W).enumerate() {
            let i = first + 16 * k;
            let v = interleave(std::array::from_fn(|j| load(&src[j * n + i..])));
            for (o, x) in out.chunks_exact_mut(16).zip(v) {
                store_unaligned_m128i(o.try_into().expect("16 bytes"), x);
            }
        }
        body
    }

    /// Forward shuffle of 16 items at a time for width 4; returns the items done.
    ///
    /// Reading 16 four-byte items as four 16-byte rows and interleaving them as if they were
    /// streams moves byte `x` of the 64 to position `rotl2(x)` (6-bit index); twice, to
    /// `rotl4(x) = rotr2(x)`, which sends byte `b` of item `t` (`x = 4t + b`) to `16b + t`:
    /// row `b` then holds byte `b` of the 16 items, i.e. 16 bytes of stream `b`.
    pub(super) fn shuffle(src: &[u8], dst: &mut [u8], w: usize, n: usize) -> usize {
        if w != 4 {
            return 0;
        }
        let body = n / 16 * 16;
        for (k, items) in src[..body * 4].chunks_exact(64).enumerate() {
            let rows = std::array::from_fn(|r| load(&items[16 * r..]));
            let v = interleave4(interleave4(rows));
            for (b, x) in v.into_iter().enumerate() {
                let at = b * n + 16 * k;
                store_unaligned_m128i((&mut dst[at..at + 16]).try_into().expect("16 bytes"), x);
            }
        }
        body
    }

    /// In-place running byte sum over whole 16-byte pieces of `stream`; returns the bytes done
    /// and the running sum so far.
    pub(super) fn prefix_sum(stream: &mut [u8]) -> (usize, u8) {
        let mut carry = zeroed_m128i();
        let body = stream.len() / 16 * 16;
        for piece in stream[..body].chunks_exact_mut(16) {
            let mut v = load(piece);
            v = add_i8_m128i(v, byte_shl_imm_u128_m128i::<1>(v));
            v = add_i8_m128i(v, byte_shl_imm_u128_m128i::<2>(v));
            v = add_i8_m128i(v, byte_shl_imm_u128_m128i::<4>(v));
            v = add_i8_m128i(v, byte_shl_imm_u128_m128i::<8>(v));
            v = add_i8_m128i(v, carry);
            store_unaligned_m128i(piece.try_into().expect("16 bytes"), v);
            // Broadcast byte 15 (the running sum) to all lanes.
            let hi = unpack_high_i8_m128i(v, v);
            let hi = unpack_high_i16_m128i(hi, hi);
            carry = shuffle_ai_f32_all_m128i::<0xFF>(hi);
        }
        let last = if body == 0 { 0 } else { stream[body - 1] };
        (body, last)
    }
}

#[cfg(not(all(
    any(target_arch = "x86", target_arch = "x86_64"),
    target_feature = "sse2"
)))]
mod simd {
    pub(super) fn shuffle(_src: &[u8], _dst: &mut [u8], _w: usize, _n: usize) -> usize {
        0
    }
    pub(super) fn unshuffle(_src: &[u8], _dst: &mut [u8], _w: usize, _n: usize) -> usize {
        0
    }
    pub(super) fn unshuffle_items(
        _src: &[u8],
        _dst: &mut [u8],
        _w: usize,
        _n: usize,
        _first: usize,
        _count: usize,
    ) -> usize {
        0
    }
    pub(super) fn prefix_sum(_stream: &mut [u8]) -> (usize, u8) {
        (0, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize, seed: u64) -> Vec<u8> {
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
                let mut dst = vec![0xAA; len];
                unshuffle_into(&src, &mut dst, w);
                assert_eq!(dst, unshuffle_reference(&src, w), "w {w} len {len}");
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
                for (first, count) in [(0, n), (1, n - 1), (5, 17), (n - 3, 3), (n / 2, 0)] {
                    let mut part = vec![0xAA; count * w];
                    assert!(unshuffle_items_into(&src, w, first, &mut part), "w {w}");
                    assert_eq!(
                        part,
                        whole[first * w..(first + count) * w],
                        "w {w} first {first}"
                    );
                }
                assert!(!unshuffle_items_into(&src, w, n, &mut vec![0; w]));
            }
        }
    }

    #[test]
    fn shuffle_inverts_unshuffle() {
        for w in [1, 2, 3, 4, 8, 16, 64] {
            for len in [0, 1, 7, 64, 65, 128, 1000, 4099, 4160] {
                let src = bytes(len, (w * 31 + len) as u64);
                let mut shuffled = vec![0; len];
                shuffle_into(&src, &mut shuffled, w);
                let mut back = vec![0; len];
                unshuffle_into(&shuffled, &mut back, w);
                assert_eq!(back, src, "w {w} len {len}");
                if len / w > 1 && w > 1 {
                    assert_eq!(
                        shuffled[1], src[w],
                        "w {w}: stream 0 holds byte 0 of each group"
                    );
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
            for len in [0, 1, 3, 16, 17, 48, 100, 1000, 4097] {
                let mut b = bytes(len, (s * 7919 + len) as u64);
                let mut expect = b.clone();
                let l = len / s;
                for c in 0..s {
                    let mut acc = 0u8;
                    for x in &mut expect[c * l..(c + 1) * l] {
                        acc = acc.wrapping_add(*x);
                        *x = acc;
                    }
                }
                unbytedelta(&mut b, s);
                assert_eq!(b, expect, "s {s} len {len}");
            }
        }
    }
}
