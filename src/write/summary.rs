//! The SUMMARY index python-blosc2 (4.4+) builds by default for every stored numeric or bool
//! column of a CTable it closes, computed as its `indexing._segment_summary` computes it: per
//! segment of `segment_len` rows (the column's block length), the minimum, the maximum and
//! flags (`1` all NaN, `2` some NaN, `4` all null: null rows of a null-aware column are left
//! out; a segment without a value has zero extrema and flags `4 | 1`, one whose values are all
//! NaN zero extrema and `1 | 2`). `where()` skips the segments whose extrema exclude a
//! predicate.

#![forbid(unsafe_code)]

use crate::model::dtype::Dtype;

/// `indexing.FLAG_ALL_NAN`, `FLAG_HAS_NAN`, `FLAG_ALL_NULL`.
const ALL_NAN: u8 = 1;
const HAS_NAN: u8 = 2;
const ALL_NULL: u8 = 4;

/// One item type python summarises, read from and written to little-endian bytes.
trait Item: Copy {
    const SIZE: usize;
    fn read(b: &[u8]) -> Self;
    fn write(self, out: &mut Vec<u8>);
    /// A float NaN (only floats get the NaN flags; complex values propagate NaN like NumPy's
    /// `min`/`max`).
    fn float_nan(self) -> bool {
        false
    }
    fn any_nan(self) -> bool {
        false
    }
    /// `self < other` in NumPy's order (complex: lexicographic).
    fn lt(self, other: Self) -> bool;
    fn zero() -> Self;
}

macro_rules! real_item {
    ($zero:expr, $nan:expr; $($t:ty),*) => {$(
        impl Item for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("item size"))
            }
            fn write(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn float_nan(self) -> bool {
                $nan(self)
            }
            fn lt(self, other: Self) -> bool {
                self < other
            }
            fn zero() -> Self {
                $zero
            }
        }
    )*};
}
real_item!(0, |_: Self| false; i8, i16, i32, i64, u8, u16, u32, u64);
real_item!(0.0, |x: Self| x.is_nan(); f32, f64);

/// A complex number of two `F` parts.
#[derive(Clone, Copy)]
struct Complex<F>(F, F);

macro_rules! complex_item {
    ($($t:ty),*) => {$(
        impl Item for Complex<$t> {
            const SIZE: usize = 2 * std::mem::size_of::<$t>();
            fn read(b: &[u8]) -> Self {
                let h = Self::SIZE / 2;
                Complex(<$t>::read(&b[..h]), <$t>::read(&b[h..]))
            }
            fn write(self, out: &mut Vec<u8>) {
                self.0.write(out);
                self.1.write(out);
            }
            fn any_nan(self) -> bool {
                self.0.is_nan() || self.1.is_nan()
            }
            fn lt(self, other: Self) -> bool {
                self.0 < other.0 || (self.0 == other.0 && self.1 < other.1)
            }
            fn zero() -> Self {
                Complex(0.0, 0.0)
            }
        }
    )*};
}
complex_item!(f32, f64);

/// NumPy's `segment.min()` and `.max()` of a non-empty segment (NaN propagates: the first
/// value holding one wins, as NumPy's reductions return it).
fn extrema<T: Item>(items: &[T]) -> (T, T) {
    let (mut lo, mut hi) = (items[0], items[0]);
    for &v in &items[1..] {
        if lo.any_nan() {
            break;
        }
        if v.any_nan() {
            return (v, v);
        }
        if v.lt(lo) {
            lo = v;
        }
        if hi.lt(v) {
            hi = v;
        }
    }
    (lo, hi)
}

/// `_segment_summary` of one segment: the record bytes (min, max, flags).
fn segment<T: Item>(items: &[T], valid: Option<&[bool]>, out: &mut Vec<u8>) {
    let mut flags = 0u8;
    let mut vals: Vec<T> = match valid {
        Some(v) if !v.iter().all(|&x| x) => {
            if !v.iter().any(|&x| x) {
                T::zero().write(out);
                T::zero().write(out);
                out.push(ALL_NULL | ALL_NAN);
                return;
            }
            items
                .iter()
                .zip(v)
                .filter(|(_, &k)| k)
                .map(|(&x, _)| x)
                .collect()
        }
        _ => items.to_vec(),
    };
    if vals.iter().any(|x| x.float_nan()) {
        flags |= HAS_NAN;
        vals.retain(|x| !x.float_nan());
        if vals.is_empty() {
            T::zero().write(out);
            T::zero().write(out);
            out.push(flags | ALL_NAN);
            return;
        }
    }
    let (lo, hi) = extrema(&vals);
    lo.write(out);
    hi.write(out);
    out.push(flags);
}

fn summaries<T: Item>(
    bytes: &[u8],
    valid: Option<&[bool]>,
    segment_len: usize,
) -> (Vec<u8>, usize) {
    let items: Vec<T> = bytes.chunks_exact(T::SIZE).map(T::read).collect();
    let mut out = Vec::new();
    let mut n = 0;
    for (k, seg) in items.chunks(segment_len.max(1)).enumerate() {
        let v = valid.map(|v| &v[k * segment_len..k * segment_len + seg.len()]);
        segment(seg, v, &mut out);
        n += 1;
    }
    (out, n)
}

/// The summary records (min, max, flags; packed, little-endian) of a column of `dtype`
/// holding `bytes`, per `segment_len` rows, with `valid` rows only (a null-aware column), and
/// their count; `None` when python-blosc2 builds no summary for this dtype (not a number or
/// bool, or not stored little-endian).
pub(crate) fn column_summaries(
    dtype: &Dtype,
    bytes: &[u8],
    valid: Option<&[bool]>,
    segment_len: usize,
) -> Option<(Vec<u8>, usize)> {
    let s = dtype.to_numpy_str();
    if !(s.starts_with('<') || s.starts_with('|')) {
        return None;
    }
    Some(match &s[1..] {
        "b1" | "u1" => summaries::<u8>(bytes, valid, segment_len),
        "i1" => summaries::<i8>(bytes, valid, segment_len),
        "i2" => summaries::<i16>(bytes, valid, segment_len),
        "u2" => summaries::<u16>(bytes, valid, segment_len),
        "i4" => summaries::<i32>(bytes, valid, segment_len),
        "u4" => summaries::<u32>(bytes, valid, segment_len),
        "i8" => summaries::<i64>(bytes, valid, segment_len),
        "u8" => summaries::<u64>(bytes, valid, segment_len),
        "f4" => summaries::<f32>(bytes, valid, segment_len),
        "f8" => summaries::<f64>(bytes, valid, segment_len),
        "c8" => summaries::<Complex<f32>>(bytes, valid, segment_len),
        "c16" => summaries::<Complex<f64>>(bytes, valid, segment_len),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f8(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn rec(lo: f64, hi: f64, flags: u8) -> Vec<u8> {
        let mut r = f8(&[lo, hi]);
        r.push(flags);
        r
    }

    #[test]
    fn segments_as_python_summarises_them() {
        let dt = Dtype::parse("<f8").unwrap();
        let n = f64::NAN;
        let data = f8(&[3.0, -1.0, 2.0, n, n, n, 5.0, 4.0, 7.0]);
        let (s, k) = column_summaries(&dt, &data, None, 3).unwrap();
        assert_eq!(k, 3);
        let want = [rec(-1.0, 3.0, 0), rec(0.0, 0.0, 3), rec(4.0, 7.0, 0)].concat();
        assert_eq!(s, want);
        // With nulls: a segment without a valid row, one with some.
        let valid = [true, false, false, false, false, false, false, true, true];
        let (s, _) = column_summaries(&dt, &data, Some(&valid), 3).unwrap();
        let want = [rec(3.0, 3.0, 0), rec(0.0, 0.0, 5), rec(4.0, 7.0, 0)].concat();
        assert_eq!(s, want);
        // A ragged last segment, NaN among values.
        let (s, k) = column_summaries(&dt, &f8(&[1.0, n, 0.5, 2.0]), None, 3).unwrap();
        assert_eq!(k, 2);
        assert_eq!(s, [rec(0.5, 1.0, 2), rec(2.0, 2.0, 0)].concat());
        assert!(column_summaries(&Dtype::parse("<U3").unwrap(), &[0; 12], None, 1).is_none());
        assert!(column_summaries(&Dtype::parse(">i4").unwrap(), &[0; 4], None, 1).is_none());
    }
}
