//! The ZFP codecs (c-blosc2 plugin codecs 33 `zfp_acc`, 34 `zfp_prec`, 35 `zfp_rate`), decoded
//! and encoded in Rust.
//!
//! Written from the definitions (LLNL zfp 1.0.1, the version c-blosc2 3.x builds, and
//! c-blosc2's `plugins/codecs/zfp/blosc2-zfp.c`); no zfp code is linked. Facts used:
//!
//! - A Blosc stream of a ZFP chunk is one whole b2nd block compressed as a zfp *field* of the
//!   block's shape (1 to 4 dimensions, the last one fastest), items `float` (typesize 4) or
//!   `double` (typesize 8) whatever the array's dtype, with no zfp header. A stream that is not
//!   a whole block (split streams) is stored as is by the writer.
//! - The codec meta chooses the zfp mode: `zfp_acc`: tolerance `10^(meta as i8)` (fixed
//!   accuracy: `minexp = floor(log2 tolerance)`); `zfp_prec`: precision `meta + 5, 7, 9, 11`
//!   for 1 to 4 dimensions, at most 64; `zfp_rate`: `meta / 100 * typesize * 8` bits per value,
//!   `floor(4^d * rate + 0.5)` bits per zfp block, at least `1 + ebits`, unaligned.
//! - The field is cut into 4^d blocks, visited with the last dimension fastest; edge blocks
//!   are padded by the encoder (`pad_block`) and cut by the decoder.
//! - A block: one bit (nonzero), the biased common exponent (8 or 11 bits), then the integer
//!   coefficients: block-floating-point cast to 32/64-bit integers, decorrelating lifting
//!   transform along each axis, reordered by sequency (`PERM`), negabinary, coded bit plane by
//!   bit plane from the top with group tests, within `maxbits` and `maxprec`.
//! - The bit stream is little-endian, least significant bit first, padded to 64-bit words.
//!
//! Reading past the end of a stream, a field that is not the block, and items other than 4
//! and 8 bytes are errors.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;

/// Per-block bit budget when no rate is set (`ZFP_MAX_BITS`).
const MAX_BITS: u32 = 16658;
/// Highest precision (`ZFP_MAX_PREC`).
const MAX_PREC: u32 = 64;
/// Lowest exponent (`ZFP_MIN_EXP`).
const MIN_EXP: i32 = -1074;

/// zfp's coefficient orders (`perm_1` .. `perm_4`): position in the coded sequence -> index in
/// the 4^d block (`x + 4 y + 16 z + 64 w`, x fastest).
const PERM1: [u8; 4] = [0, 1, 2, 3];
const PERM2: [u8; 16] = [0, 1, 4, 5, 2, 8, 6, 9, 3, 12, 10, 7, 13, 11, 14, 15];
#[rustfmt::skip]
const PERM3: [u8; 64] = [
    0, 1, 4, 16, 20, 17, 5, 2, 8, 32, 21, 6, 18, 24, 9, 33,
    36, 3, 12, 48, 22, 25, 37, 40, 34, 10, 7, 19, 28, 13, 49, 52,
    41, 38, 26, 23, 29, 53, 11, 35, 44, 14, 50, 56, 42, 27, 39, 45,
    30, 54, 57, 60, 51, 15, 43, 46, 58, 61, 55, 31, 62, 59, 47, 63,
];
#[rustfmt::skip]
const PERM4: [u8; 256] = [
    0, 1, 4, 16, 64, 5, 80, 17, 68, 65, 20, 2, 8, 32, 128, 84,
    81, 69, 21, 6, 18, 66, 24, 72, 9, 96, 33, 36, 129, 132, 144, 3,
    12, 48, 192, 85, 82, 70, 22, 73, 25, 88, 37, 100, 97, 148, 145, 133,
    10, 160, 34, 136, 130, 40, 7, 19, 67, 28, 76, 13, 112, 49, 52, 193,
    196, 208, 86, 89, 101, 149, 161, 137, 41, 134, 38, 164, 26, 152, 146, 104,
    98, 74, 83, 71, 23, 77, 29, 92, 53, 116, 113, 212, 209, 197, 11, 35,
    131, 44, 140, 14, 176, 50, 56, 194, 200, 224, 90, 165, 102, 153, 150, 105,
    168, 162, 138, 42, 87, 93, 117, 213, 27, 75, 99, 39, 135, 147, 108, 45,
    141, 156, 30, 78, 177, 180, 54, 114, 120, 57, 198, 210, 216, 201, 225, 228,
    15, 240, 51, 204, 195, 60, 169, 166, 154, 106, 91, 103, 151, 109, 157, 94,
    181, 118, 121, 214, 217, 229, 163, 139, 43, 142, 46, 172, 58, 184, 178, 232,
    226, 202, 241, 205, 61, 199, 55, 244, 31, 220, 211, 124, 115, 79, 170, 167,
    155, 107, 158, 110, 173, 122, 185, 182, 233, 230, 218, 95, 245, 119, 221, 215,
    125, 242, 206, 62, 203, 59, 248, 47, 236, 227, 188, 179, 143, 171, 174, 186,
    234, 246, 222, 126, 219, 123, 249, 111, 237, 231, 189, 183, 159, 252, 243, 207,
    63, 175, 250, 187, 238, 235, 190, 253, 247, 223, 127, 254, 251, 239, 191, 255,
];

/// The three ZFP codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Fixed accuracy (codec id 33): meta is the tolerance's decimal exponent, signed.
    Accuracy,
    /// Fixed precision (id 34): meta plus 5, 7, 9 or 11 bit planes.
    Precision,
    /// Fixed rate (id 35): meta is the percentage of the item size kept.
    Rate,
}

impl Mode {
    /// The mode of a Blosc codec id.
    pub(crate) fn from_id(id: u8) -> Option<Mode> {
        match id {
            33 => Some(Mode::Accuracy),
            34 => Some(Mode::Precision),
            35 => Some(Mode::Rate),
            _ => None,
        }
    }

    /// The Blosc codec id.
    pub(crate) fn id(self) -> u8 {
        match self {
            Mode::Accuracy => 33,
            Mode::Precision => 34,
            Mode::Rate => 35,
        }
    }
}

/// A zfp stream's parameters (`zfp_stream`'s minbits, maxbits, maxprec, minexp).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Params {
    minbits: u32,
    maxbits: u32,
    maxprec: u32,
    minexp: i32,
}

impl Params {
    /// What blosc2-zfp sets for `mode` with `meta`, `ndim` dimensions and items of
    /// `typesize` bytes (4 or 8).
    fn new(mode: Mode, meta: u8, ndim: usize, typesize: usize) -> Params {
        match mode {
            Mode::Accuracy => {
                // tolerance = 10^meta; frexp(tolerance) - 1 is floor(log2(tolerance)), the
                // biased exponent of the (always normal) double minus 1023.
                let tolerance = 10f64.powi(i32::from(meta as i8));
                let minexp = ((tolerance.to_bits() >> 52) & 0x7ff) as i32 - 1023;
                Params {
                    minbits: 1,
                    maxbits: MAX_BITS,
                    maxprec: MAX_PREC,
                    minexp,
                }
            }
            Mode::Precision => {
                let prec = u32::from(meta) + 3 + 2 * ndim as u32;
                Params {
                    minbits: 1,
                    maxbits: MAX_BITS,
                    maxprec: prec.min(MAX_PREC),
                    minexp: MIN_EXP,
                }
            }
            Mode::Rate => {
                // The same double arithmetic as blosc2-zfp and zfp_stream_set_rate.
                let ratio = f64::from(meta) / 100.0;
                let rate = ratio * typesize as f64 * 8.0;
                let n = (1u32 << (2 * ndim)) as f64;
                let bits = (n * rate + 0.5).floor() as u32;
                let bits = bits.max(if typesize == 4 { 1 + 8 } else { 1 + 11 });
                Params {
                    minbits: bits,
                    maxbits: bits,
                    maxprec: MAX_PREC,
                    minexp: MIN_EXP,
                }
            }
        }
    }
}

/// zfp's `precision()`: the bit planes coded for a block whose largest exponent is `emax`.
fn precision(emax: i32, p: &Params, dims: usize) -> u32 {
    let planes = i64::from(emax) - i64::from(p.minexp) + 2 * dims as i64 + 2;
    (planes.max(0) as u64).min(u64::from(p.maxprec)) as u32
}

/// Reads a zfp bit stream: least significant bit of each byte first.
struct BitReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// The stream ended before its blocks did.
const OVERRUN: &str = "the zfp stream ends before its blocks";

impl BitReader<'_> {
    fn read_bit(&mut self) -> Result<bool, ChunkError> {
        let byte = *self.buf.get(self.pos >> 3).ok_or(OVERRUN)?;
        let bit = (byte >> (self.pos & 7)) & 1 != 0;
        self.pos += 1;
        Ok(bit)
    }

    /// `n` (at most 64) bits, the first read in the lowest bit.
    fn read_bits(&mut self, n: u32) -> Result<u64, ChunkError> {
        let mut v = 0u64;
        for i in 0..n {
            if self.read_bit()? {
                v |= 1 << i;
            }
        }
        Ok(v)
    }

    fn skip(&mut self, n: u32) -> Result<(), ChunkError> {
        let end = self.pos + n as usize;
        if end > self.buf.len() * 8 {
            return Err(OVERRUN.into());
        }
        self.pos = end;
        Ok(())
    }
}

/// Writes a zfp bit stream (see [`BitReader`]).
#[derive(Default)]
struct BitWriter {
    buf: Vec<u8>,
    pos: usize,
}

impl BitWriter {
    fn write_bit(&mut self, bit: bool) -> bool {
        if self.pos & 7 == 0 {
            self.buf.push(0);
        }
        if bit {
            *self.buf.last_mut().expect("pushed") |= 1 << (self.pos & 7);
        }
        self.pos += 1;
        bit
    }

    fn write_bits(&mut self, v: u64, n: u32) {
        for i in 0..n {
            self.write_bit((v >> i) & 1 != 0);
        }
    }

    fn pad(&mut self, n: u32) {
        for _ in 0..n {
            self.write_bit(false);
        }
    }

    /// Pad to a whole 64-bit word (`stream_flush`) and return the bytes.
    fn finish(mut self) -> Vec<u8> {
        let rem = self.pos % 64;
        if rem != 0 {
            self.pad((64 - rem) as u32);
        }
        self.buf
    }
}

/// The signed integers of the block transform (`int32` for float, `int64` for double), with
/// C's wrapping arithmetic.
trait Int: Copy + Default {
    const BITS: u32;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn half(self) -> Self;
    /// To negabinary (`int2uint`), in the low `BITS` bits.
    fn to_nega(self) -> u64;
    /// From negabinary (`uint2int`).
    fn from_nega(u: u64) -> Self;
}

/// `Int` for `$i` (`$u` its unsigned twin): wrapping arithmetic, negabinary with the
/// `0xaa..aa` mask of its width.
macro_rules! int {
    ($i:ty, $u:ty) => {
        impl Int for $i {
            const BITS: u32 = <$i>::BITS;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn half(self) -> Self {
                self >> 1
            }
            fn to_nega(self) -> u64 {
                const NB: $u = <$u>::MAX / 3 * 2; // 0xaa..aa
                u64::from((self as $u).wrapping_add(NB) ^ NB)
            }
            fn from_nega(u: u64) -> Self {
                const NB: $u = <$u>::MAX / 3 * 2;
                ((u as $u ^ NB).wrapping_sub(NB)) as $i
            }
        }
    };
}

int!(i32, u32);
int!(i64, u64);

/// The item types: `f32` and `f64`.
trait Real: Copy + Default {
    type I: Int;
    const SIZE: usize;
    const EBITS: u32;
    const EBIAS: i32;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
    /// `dequantize(1, emax)`: 2^(emax - (bits - 2)), rounded as `ldexp` does.
    fn scale(emax: i32) -> Self;
    /// `s * i`, the integer converted to the float type first, as in C.
    fn times(s: Self, i: Self::I) -> Self;
    /// `exponent()`: frexp's exponent of `|x|`, at least `1 - EBIAS`; `-EBIAS` for zero.
    fn exponent(self) -> i32;
    fn magnitude(self) -> Self;
    fn larger(self, o: Self) -> bool;
    fn finite(self) -> bool;
    /// `(Int)(quantize(1, emax) * x)`: x scaled by 2^(bits - 2 - emax), truncated.
    fn quantize(self, emax: i32) -> Self::I;
}

/// `x * 2^e` in doubles, exact while the result is a normal number.
fn scale_f64(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= f64::from_bits(((1000 + 1023) as u64) << 52);
        e -= 1000;
    }
    while e < -1000 {
        x *= f64::from_bits(((-1000 + 1023) as u64) << 52);
        e += 1000;
    }
    x * f64::from_bits(((e + 1023) as u64) << 52)
}

/// `Real` for an IEEE type: `$t` with `$bits` bits (`$u` its bit pattern, `$i` the transform
/// integer), `$ebits` exponent bits and `$mant` mantissa bits.
macro_rules! real {
    ($t:ty, $i:ty, $u:ty, $bits:expr, $ebits:expr, $mant:expr) => {
        impl Real for $t {
            type I = $i;
            const SIZE: usize = $bits / 8;
            const EBITS: u32 = $ebits;
            const EBIAS: i32 = (1 << ($ebits - 1)) - 1;
            fn load(b: &[u8]) -> Self {
                let mut a = [0u8; $bits / 8];
                a.copy_from_slice(&b[..$bits / 8]);
                <$t>::from_le_bytes(a)
            }
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
            }
            fn scale(emax: i32) -> Self {
                let e = emax - ($bits - 2);
                let min_normal = 1 - Self::EBIAS;
                if e > Self::EBIAS {
                    <$t>::INFINITY
                } else if e >= min_normal {
                    <$t>::from_bits(((e + Self::EBIAS) as $u) << $mant)
                } else if e >= min_normal - $mant {
                    <$t>::from_bits(1 << (e - (min_normal - $mant)))
                } else {
                    0.0 // half the smallest subnormal rounds to even: zero
                }
            }
            fn times(s: Self, i: $i) -> Self {
                s * i as $t
            }
            fn exponent(self) -> i32 {
                if self == 0.0 {
                    return -Self::EBIAS;
                }
                let be = ((self.to_bits() >> $mant) & ((1 << $ebits) - 1)) as i32;
                if be == 0 {
                    1 - Self::EBIAS
                } else {
                    be - (Self::EBIAS - 1)
                }
            }
            fn magnitude(self) -> Self {
                self.abs()
            }
            fn larger(self, o: Self) -> bool {
                self > o
            }
            fn finite(self) -> bool {
                self.is_finite()
            }
            fn quantize(self, emax: i32) -> $i {
                scale_f64(f64::from(self), ($bits - 2) - emax) as $i
            }
        }
    };
}

real!(f32, i32, u32, 32, 8, 23);
real!(f64, i64, u64, 64, 11, 52);

/// The coefficient order for `dims` dimensions.
fn perm(dims: usize) -> &'static [u8] {
    match dims {
        1 => &PERM1,
        2 => &PERM2,
        3 => &PERM3,
        _ => &PERM4,
    }
}

/// Inverse lifting of the 4 values `p[at], p[at + s], ...` (`inv_lift`).
fn inv_lift<I: Int>(p: &mut [I], at: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[at], p[at + s], p[at + 2 * s], p[at + 3 * s]);
    y = y.add(w.half());
    w = w.sub(y.half());
    y = y.add(w);
    w = w.sub(y.sub(w));
    z = z.add(x);
    x = x.sub(z.sub(x));
    y = y.add(z);
    z = z.sub(y.sub(z));
    w = w.add(x);
    x = x.sub(w.sub(x));
    p[at] = x;
    p[at + s] = y;
    p[at + 2 * s] = z;
    p[at + 3 * s] = w;
}

/// Forward lifting (`fwd_lift`).
fn fwd_lift<I: Int>(p: &mut [I], at: usize, s: usize) {
    let (mut x, mut y, mut z, mut w) = (p[at], p[at + s], p[at + 2 * s], p[at + 3 * s]);
    x = x.add(w).half();
    w = w.sub(x);
    z = z.add(y).half();
    y = y.sub(z);
    x = x.add(z).half();
    z = z.sub(x);
    w = w.add(y).half();
    y = y.sub(w);
    w = w.add(y.half());
    y = y.sub(w.half());
    p[at] = x;
    p[at + s] = y;
    p[at + 2 * s] = z;
    p[at + 3 * s] = w;
}

/// The start of every line along the axis of stride `s` in a 4^dims block.
fn lines(dims: usize, s: usize) -> impl Iterator<Item = usize> {
    (0..1usize << (2 * dims)).filter(move |&i| (i / s).is_multiple_of(4))
}

/// The inverse decorrelating transform: slowest axis first, then down to x.
fn inv_xform<I: Int>(p: &mut [I], dims: usize) {
    for axis in (0..dims).rev() {
        let s = 1 << (2 * axis);
        for at in lines(dims, s) {
            inv_lift(p, at, s);
        }
    }
}

/// The forward transform: x first, then up to the slowest axis.
fn fwd_xform<I: Int>(p: &mut [I], dims: usize) {
    for axis in 0..dims {
        let s = 1 << (2 * axis);
        for at in lines(dims, s) {
            fwd_lift(p, at, s);
        }
    }
}

/// Decode `data.len()` negabinary coefficients of `intprec` bits within `maxbits` bits and
/// `maxprec` bit planes; the bits read. (zfp's rate-constrained decoder; without a binding
/// budget it reads exactly what the unconstrained one does.)
fn decode_ints(
    r: &mut BitReader<'_>,
    maxbits: u32,
    maxprec: u32,
    intprec: u32,
    data: &mut [u64],
) -> Result<u32, ChunkError> {
    let size = data.len();
    let kmin = intprec.saturating_sub(maxprec);
    let mut bits = maxbits;
    let mut n = 0usize;
    data.fill(0);
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        let m = n.min(bits as usize);
        bits -= m as u32;
        for d in data.iter_mut().take(m) {
            if r.read_bit()? {
                *d += 1 << k;
            }
        }
        while bits > 0 && n < size {
            bits -= 1;
            if !r.read_bit()? {
                break;
            }
            while bits > 0 && n < size - 1 {
                bits -= 1;
                if r.read_bit()? {
                    break;
                }
                n += 1;
            }
            data[n] += 1 << k;
            n += 1;
        }
    }
    Ok(maxbits - bits)
}

/// Encode coefficients as [`decode_ints`] decodes them; the bits written.
fn encode_ints(w: &mut BitWriter, maxbits: u32, maxprec: u32, intprec: u32, data: &[u64]) -> u32 {
    let size = data.len();
    let kmin = intprec.saturating_sub(maxprec);
    let mut bits = maxbits;
    let mut n = 0usize;
    let mut k = intprec;
    while bits > 0 && k > kmin {
        k -= 1;
        let bit = |i: usize| (data[i] >> k) & 1 != 0;
        let m = n.min(bits as usize);
        bits -= m as u32;
        for i in 0..m {
            w.write_bit(bit(i));
        }
        let mut ones = (m..size).filter(|&i| bit(i)).count();
        while bits > 0 && n < size {
            bits -= 1;
            if !w.write_bit(ones > 0) {
                break;
            }
            ones -= 1;
            while bits > 0 && n < size - 1 {
                bits -= 1;
                if w.write_bit(bit(n)) {
                    break;
                }
                n += 1;
            }
            n += 1;
        }
    }
    maxbits - bits
}

/// Decode one 4^dims block of `out.len()` values.
fn decode_block<F: Real>(
    r: &mut BitReader<'_>,
    p: &Params,
    dims: usize,
    out: &mut [F],
) -> Result<(), ChunkError> {
    let mut bits = 1u32;
    if !r.read_bit()? {
        out.fill(F::default());
        if p.minbits > bits {
            r.skip(p.minbits - bits)?;
        }
        return Ok(());
    }
    bits += F::EBITS;
    let emax = r.read_bits(F::EBITS)? as i32 - F::EBIAS;
    let maxprec = precision(emax, p, dims);
    let minbits = p.minbits - bits.min(p.minbits);
    let maxbits = p.maxbits.saturating_sub(bits);
    let size = out.len();
    let mut ublock = [0u64; 256];
    let used = decode_ints(r, maxbits, maxprec, F::I::BITS, &mut ublock[..size])?;
    if used < minbits {
        r.skip(minbits - used)?;
    }
    let mut iblock = [F::I::default(); 256];
    for (&u, &at) in ublock[..size].iter().zip(perm(dims)) {
        iblock[usize::from(at)] = F::I::from_nega(u);
    }
    inv_xform(&mut iblock[..size], dims);
    let s = F::scale(emax);
    for (o, &i) in out.iter_mut().zip(&iblock[..size]) {
        *o = F::times(s, i);
    }
    Ok(())
}

/// Encode one 4^dims block.
fn encode_block<F: Real>(w: &mut BitWriter, p: &Params, dims: usize, block: &[F]) {
    let mut bits = 1u32;
    let mut max = F::default();
    for &v in block {
        let m = v.magnitude();
        if m.larger(max) {
            max = m;
        }
    }
    let emax = max.exponent();
    let maxprec = precision(emax, p, dims);
    let e = if maxprec > 0 { emax + F::EBIAS } else { 0 };
    if e == 0 {
        w.write_bit(false);
        if p.minbits > bits {
            w.pad(p.minbits - bits);
        }
        return;
    }
    bits += F::EBITS;
    w.write_bits(2 * e as u64 + 1, bits);
    let size = block.len();
    let mut iblock = [F::I::default(); 256];
    for (i, &v) in iblock.iter_mut().zip(block) {
        *i = v.quantize(emax);
    }
    fwd_xform(&mut iblock[..size], dims);
    let mut ublock = [0u64; 256];
    for (u, &at) in ublock.iter_mut().zip(perm(dims)) {
        *u = iblock[usize::from(at)].to_nega();
    }
    let minbits = p.minbits - bits.min(p.minbits);
    let maxbits = p.maxbits.saturating_sub(bits);
    let used = encode_ints(w, maxbits, maxprec, F::I::BITS, &ublock[..size]);
    if used < minbits {
        w.pad(minbits - used);
    }
}

/// The zfp blocks of a field of shape `shape` (1 to 4 dims, last fastest), in zfp's order:
/// for each, the origin and the extent (1 to 4) along each dimension.
fn tiles(shape: &[usize]) -> impl Iterator<Item = ([usize; 4], [usize; 4])> + '_ {
    // An iterator, not a list: the tile count follows the block shape a file declares.
    let d = shape.len();
    let mut grid = [1usize; 4];
    for (g, &n) in grid.iter_mut().zip(shape) {
        *g = n.div_ceil(4);
    }
    let total: usize = grid[..d].iter().product();
    (0..total).map(move |mut t| {
        let mut origin = [0usize; 4];
        let mut extent = [1usize; 4];
        for a in (0..d).rev() {
            origin[a] = (t % grid[a]) * 4;
            extent[a] = (shape[a] - origin[a]).min(4);
            t /= grid[a];
        }
        (origin, extent)
    })
}

/// For a tile, each position of the 4^d block inside the field: (block index, field index).
fn tile_cells<'a>(
    shape: &'a [usize],
    origin: &[usize; 4],
    extent: &[usize; 4],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    let d = shape.len();
    let (o, e) = (*origin, *extent);
    (0..1usize << (2 * d)).filter_map(move |b| {
        let mut field = 0usize;
        for a in 0..d {
            let c = (b >> (2 * (d - 1 - a))) & 3;
            if c >= e[a] {
                return None;
            }
            field = field * shape[a] + o[a] + c;
        }
        Some((b, field))
    })
}

/// Check a field: 1 to 4 dims, none empty, items of 4 or 8 bytes, `len` bytes exactly.
fn check_field(shape: &[usize], typesize: usize, len: usize) -> Result<(), ChunkError> {
    if shape.is_empty() || shape.len() > 4 {
        return Err(format!(
            "ZFP works on blocks of 1 to 4 dimensions, not {}",
            shape.len()
        )
        .into());
    }
    if typesize != 4 && typesize != 8 {
        return Err(format!("ZFP works on items of 4 or 8 bytes, not {typesize}").into());
    }
    let n = shape
        .iter()
        .try_fold(typesize, |acc, &s| acc.checked_mul(s))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("ZFP block shape {shape:?} is empty or too large"))?;
    if n != len {
        return Err(format!(
            "ZFP block of shape {shape:?} is {n} bytes, the stream decodes to {len}"
        )
        .into());
    }
    Ok(())
}

/// Decode one Blosc stream `src` of a ZFP chunk: the b2nd block of shape `block`, items of
/// `typesize` bytes, into `dst` (exactly the block's bytes).
pub(crate) fn decode(
    mode: Mode,
    meta: u8,
    src: &[u8],
    dst: &mut [u8],
    block: &[usize],
    typesize: usize,
) -> Result<(), ChunkError> {
    check_field(block, typesize, dst.len())?;
    let p = Params::new(mode, meta, block.len(), typesize);
    if typesize == 4 {
        decode_field::<f32>(&p, src, dst, block)
    } else {
        decode_field::<f64>(&p, src, dst, block)
    }
}

fn decode_field<F: Real>(
    p: &Params,
    src: &[u8],
    dst: &mut [u8],
    shape: &[usize],
) -> Result<(), ChunkError> {
    let d = shape.len();
    let mut r = BitReader { buf: src, pos: 0 };
    let mut vals = [F::default(); 256];
    for (origin, extent) in tiles(shape) {
        decode_block(&mut r, p, d, &mut vals[..1 << (2 * d)])?;
        for (b, f) in tile_cells(shape, &origin, &extent) {
            vals[b].store(&mut dst[f * F::SIZE..(f + 1) * F::SIZE]);
        }
    }
    Ok(())
}

/// Encode one b2nd block `src` (shape `block`, items of `typesize` bytes) as blosc2-zfp
/// does; `Ok(None)` when it does not shrink (the caller stores it as is). Errors for what
/// blosc2-zfp refuses (dims, item size, block sides under 4) and for values that are not
/// finite (zfp's result for them is undefined).
pub(crate) fn encode(
    mode: Mode,
    meta: u8,
    src: &[u8],
    block: &[usize],
    typesize: usize,
) -> Result<Option<Vec<u8>>, ChunkError> {
    check_field(block, typesize, src.len())?;
    if let Some(s) = block.iter().find(|&&s| s < 4) {
        return Err(format!("ZFP needs block sides of 4 or more (block {block:?} has {s})").into());
    }
    let p = Params::new(mode, meta, block.len(), typesize);
    let out = if typesize == 4 {
        encode_field::<f32>(&p, src, block)?
    } else {
        encode_field::<f64>(&p, src, block)?
    };
    Ok((out.len() < src.len()).then_some(out))
}

fn encode_field<F: Real>(p: &Params, src: &[u8], shape: &[usize]) -> Result<Vec<u8>, ChunkError> {
    let d = shape.len();
    let mut w = BitWriter::default();
    let size = 1usize << (2 * d);
    let mut vals = [F::default(); 256];
    for (origin, extent) in tiles(shape) {
        for (b, f) in tile_cells(shape, &origin, &extent) {
            let v = F::load(&src[f * F::SIZE..(f + 1) * F::SIZE]);
            if !v.finite() {
                return Err("ZFP cannot encode NaN or infinity".into());
            }
            vals[b] = v;
        }
        pad(&mut vals[..size], d, &extent);
        encode_block(&mut w, p, d, &vals[..size]);
    }
    Ok(w.finish())
}

/// Fill the positions of a partial block outside `extent` as zfp's `gather_partial` does:
/// along x first (`pad_block`), then y, z, w; lines along an axis run over every position of
/// the faster axes and the filled positions of the slower ones.
fn pad<F: Real>(v: &mut [F], d: usize, extent: &[usize; 4]) {
    // extent is in field order (last = x); axis k counts from x.
    for k in 0..d {
        let n = extent[d - 1 - k];
        if n >= 4 {
            continue;
        }
        let s = 1usize << (2 * k);
        for at in lines(d, s) {
            // slower axes (> k) must be inside their extents
            let inside = (k + 1..d).all(|j| (at >> (2 * j)) & 3 < extent[d - 1 - j]);
            if !inside {
                continue;
            }
            let q = |i: usize| at + i * s;
            if n == 0 {
                v[q(0)] = F::default();
            }
            if n <= 1 {
                v[q(1)] = v[q(0)];
            }
            if n <= 2 {
                v[q(2)] = v[q(1)];
            }
            v[q(3)] = v[q(0)];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *seed >> 33
    }

    fn smooth(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut v = 0.0;
        (0..n)
            .map(|_| {
                v += (lcg(&mut s) % 2001) as f64 / 1000.0 - 1.0;
                v
            })
            .collect()
    }

    #[test]
    fn parameters_follow_blosc2_zfp() {
        // rate: 30 % of 32 bits = 9.6 bits a value, 16 values a 2-d block: floor(154.1).
        let p = Params::new(Mode::Rate, 30, 2, 4);
        assert_eq!((p.minbits, p.maxbits), (154, 154));
        // at least 1 + ebits
        assert_eq!(Params::new(Mode::Rate, 1, 1, 8).maxbits, 12);
        // precision: meta + 5 / 7 / 9 / 11, at most 64
        assert_eq!(Params::new(Mode::Precision, 10, 3, 8).maxprec, 19);
        assert_eq!(Params::new(Mode::Precision, 200, 1, 8).maxprec, 64);
        // accuracy: floor(log2(10^meta)), meta signed
        assert_eq!(Params::new(Mode::Accuracy, (-3i8) as u8, 2, 8).minexp, -10);
        assert_eq!(Params::new(Mode::Accuracy, 0, 2, 8).minexp, 0);
        assert_eq!(Params::new(Mode::Accuracy, 2, 2, 8).minexp, 6);
    }

    #[test]
    fn round_trips_within_the_modes_bounds() {
        for dims in 1..=4usize {
            let shape: Vec<usize> = [7, 5, 6, 4][..dims].to_vec();
            let n: usize = shape.iter().product();
            let x = smooth(n, dims as u64);
            for typesize in [4usize, 8] {
                let mut src = vec![0u8; n * typesize];
                for (i, v) in x.iter().enumerate() {
                    if typesize == 4 {
                        (*v as f32).store(&mut src[i * 4..i * 4 + 4]);
                    } else {
                        v.store(&mut src[i * 8..i * 8 + 8]);
                    }
                }
                let value = |b: &[u8], i: usize| {
                    if typesize == 4 {
                        f64::from(f32::load(&b[i * 4..]))
                    } else {
                        f64::load(&b[i * 8..])
                    }
                };
                for (mode, meta, bound) in [
                    (Mode::Accuracy, (-3i8) as u8, 1e-3),
                    (Mode::Precision, 40, 1e-3),
                    (Mode::Rate, 60, 0.5),
                ] {
                    let enc = match encode(mode, meta, &src, &shape, typesize).unwrap() {
                        Some(e) => {
                            assert_eq!(e.len() % 8, 0, "whole 64-bit words");
                            e
                        }
                        None => src.clone(), // did not shrink: stored as is
                    };
                    let mut dst = vec![0u8; src.len()];
                    if enc.len() < src.len() {
                        decode(mode, meta, &enc, &mut dst, &shape, typesize).unwrap();
                    } else {
                        dst.copy_from_slice(&src);
                    }
                    for i in 0..n {
                        let err = (value(&dst, i) - value(&src, i)).abs();
                        assert!(err <= bound, "{mode:?} {dims}d {typesize}: {err}");
                    }
                    // Every truncation is an error, never a panic or a short success.
                    if enc.len() < src.len() {
                        for cut in [0, 1, enc.len() / 2] {
                            assert!(decode(mode, meta, &enc[..cut], &mut dst, &shape, typesize)
                                .is_err());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn zero_blocks_and_hostile_input() {
        // A block of zeros is one bit (fixed accuracy) and decodes to zeros.
        let src = vec![0u8; 16 * 8];
        let enc = encode(Mode::Accuracy, 0, &src, &[4, 4], 8)
            .unwrap()
            .unwrap();
        assert_eq!(enc, vec![0u8; 8]);
        let mut dst = vec![1u8; 128];
        decode(Mode::Accuracy, 0, &enc, &mut dst, &[4, 4], 8).unwrap();
        assert!(dst.iter().all(|&b| b == 0));
        // The field must be the stream's block; 1 to 4 dims; items of 4 or 8 bytes.
        assert!(decode(Mode::Rate, 50, &enc, &mut dst, &[4, 5], 8).is_err());
        assert!(decode(Mode::Rate, 50, &enc, &mut dst, &[2, 2, 2, 2, 2], 4).is_err());
        assert!(decode(Mode::Rate, 50, &enc, &mut dst, &[16, 4], 2).is_err());
        assert!(decode(Mode::Rate, 50, &enc, &mut dst, &[], 8).is_err());
        // Random bytes: an error or a value, never a panic.
        let mut seed = 7u64;
        for t in 0..300 {
            let len = (lcg(&mut seed) % 200) as usize;
            let junk: Vec<u8> = (0..len).map(|_| lcg(&mut seed) as u8).collect();
            let mode = [Mode::Accuracy, Mode::Precision, Mode::Rate][t % 3];
            let meta = lcg(&mut seed) as u8;
            let shape: &[usize] = [&[9usize][..], &[5, 6], &[4, 3, 5], &[2, 3, 2, 5]][t % 4];
            let ts = if t % 2 == 0 { 4 } else { 8 };
            let mut out = vec![0u8; shape.iter().product::<usize>() * ts];
            let _ = decode(mode, meta, &junk, &mut out, shape, ts);
        }
        // NaN and infinity are not encoded; blocks under 4 are refused.
        let mut nan = vec![0u8; 16 * 4];
        f32::NAN.store(&mut nan[8..12]);
        assert!(encode(Mode::Rate, 50, &nan, &[4, 4], 4).is_err());
        assert!(encode(Mode::Rate, 50, &[0u8; 32], &[2, 4], 4).is_err());
    }
}
