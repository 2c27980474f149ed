//! SSE2 kernels (every x86_64 CPU), through `safe_arch`'s safe wrappers: 16 items per step.
//! Each returns how many items (or bytes) it did; the caller finishes the rest.

#![forbid(unsafe_code)]

use safe_arch::{
    add_i8_m128i, bitand_m128i, bitxor_m128i, byte_shl_imm_u128_m128i, load_unaligned_m128i, m128i,
    set_splat_i64_m128i, shl_imm_u64_m128i, shr_imm_u64_m128i, shuffle_ai_f32_all_m128i,
    store_unaligned_m128i, unpack_high_i16_m128i, unpack_high_i32_m128i, unpack_high_i64_m128i,
    unpack_high_i8_m128i, unpack_low_i16_m128i, unpack_low_i32_m128i, unpack_low_i64_m128i,
    unpack_low_i8_m128i, zeroed_m128i,
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

/// [`super::unshuffle_items_into`] for widths 2, 4, 8 and 16, 16 items at a time;
/// returns how many items were done.
pub(crate) fn unshuffle_items(
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
pub(crate) fn shuffle(src: &[u8], dst: &mut [u8], w: usize, n: usize) -> usize {
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
pub(crate) fn prefix_sum(stream: &mut [u8]) -> (usize, u8) {
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

/// [`super::bits::transpose8x8`] on the two words of each whole 16-byte piece of `words`, in
/// place; returns the bytes done.
pub(crate) fn transpose_words(words: &mut [u8]) -> usize {
    let c1 = set_splat_i64_m128i(0x00AA_00AA_00AA_00AA);
    let c2 = set_splat_i64_m128i(0x0000_CCCC_0000_CCCC);
    let c3 = set_splat_i64_m128i(0x0000_0000_F0F0_F0F0);
    let body = words.len() / 16 * 16;
    for piece in words[..body].chunks_exact_mut(16) {
        let mut x = load(piece);
        let t = bitand_m128i(bitxor_m128i(x, shr_imm_u64_m128i::<7>(x)), c1);
        x = bitxor_m128i(x, bitxor_m128i(t, shl_imm_u64_m128i::<7>(t)));
        let t = bitand_m128i(bitxor_m128i(x, shr_imm_u64_m128i::<14>(x)), c2);
        x = bitxor_m128i(x, bitxor_m128i(t, shl_imm_u64_m128i::<14>(t)));
        let t = bitand_m128i(bitxor_m128i(x, shr_imm_u64_m128i::<28>(x)), c3);
        x = bitxor_m128i(x, bitxor_m128i(t, shl_imm_u64_m128i::<28>(t)));
        store_unaligned_m128i(piece.try_into().expect("16 bytes"), x);
    }
    body
}

/// `dst[i] ^= src[i]` over whole 16-byte pieces of `dst`; returns the bytes done.
pub(crate) fn xor_into(dst: &mut [u8], src: &[u8]) -> usize {
    let body = dst.len().min(src.len()) / 16 * 16;
    for (d, s) in dst[..body].chunks_exact_mut(16).zip(src.chunks_exact(16)) {
        let x = bitxor_m128i(load(d), load(s));
        store_unaligned_m128i(d.try_into().expect("16 bytes"), x);
    }
    body
}
