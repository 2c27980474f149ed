//! Rectangular regions of N-d grids, and the one place the crate's index arithmetic lives:
//! C-order strides, ravel and unravel, and the odometer every multi-dimensional walk uses
//! (items of a chunk, blocks of a chunk, chunks of a region, cells of a block, parts of a
//! selection).

#![forbid(unsafe_code)]
// Region arithmetic walks several per-dimension arrays in step; indexing reads clearest.
#![allow(clippy::needless_range_loop)]

/// Most dimensions an array can have (c-blosc2's `B2ND_MAX_DIM`).
pub const MAX_DIM: usize = 16;

/// A rectangular region of an N-d grid: `[start[i], start[i] + shape[i])` along each
/// dimension `i`. Used for parts of an array (the region a chunk covers, a part to read or
/// write) and, inside the crate, for parts of a selection.
///
/// ```
/// use b2nd::Region;
/// let r = Region::new(vec![2, 0], vec![3, 4]);
/// assert_eq!(r.end(0), 5);
/// assert_eq!(r.nitems(), Some(12));
/// let inner = r.intersect(&Region::new(vec![4, 1], vec![10, 10])).unwrap();
/// assert_eq!((inner.start(), inner.shape()), (&[4, 1][..], &[1, 3][..]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    start: Vec<u64>,
    shape: Vec<u64>,
}

impl Region {
    /// The region `[start, start + shape)` (vectors, arrays or slices of `u64`).
    ///
    /// ```
    /// let r = b2nd::Region::new([2, 1], [2, 3]);
    /// assert_eq!((r.start(), r.shape()), (&[2, 1][..], &[2, 3][..]));
    /// ```
    ///
    /// # Panics
    /// When `start` and `shape` have different lengths.
    pub fn new(start: impl Into<Vec<u64>>, shape: impl Into<Vec<u64>>) -> Region {
        let (start, shape) = (start.into(), shape.into());
        assert_eq!(
            start.len(),
            shape.len(),
            "region start and shape ranks differ"
        );
        Region { start, shape }
    }

    /// The whole of a grid of `shape`, starting at the origin.
    pub fn whole(shape: &[u64]) -> Region {
        Region {
            start: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The first position along each dimension.
    pub fn start(&self) -> &[u64] {
        &self.start
    }

    /// The length along each dimension.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// One past the last position along dimension `d` (saturating).
    pub fn end(&self, d: usize) -> u64 {
        self.start[d].saturating_add(self.shape[d])
    }

    /// Number of positions, or `None` when that overflows `u64`.
    pub fn nitems(&self) -> Option<u64> {
        product(&self.shape)
    }

    /// Whether the region holds no position.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// Whether the region lies inside a grid of `shape` (same rank, every end within it).
    pub fn fits_in(&self, shape: &[u64]) -> bool {
        self.ndim() == shape.len()
            && (0..self.ndim()).all(|d| {
                self.start[d]
                    .checked_add(self.shape[d])
                    .is_some_and(|e| e <= shape[d])
            })
    }

    /// The positions both regions hold, or `None` when there are none (or the ranks differ).
    pub fn intersect(&self, other: &Region) -> Option<Region> {
        if self.ndim() != other.ndim() {
            return None;
        }
        let mut r = Region::whole(&vec![0; self.ndim()]);
        for d in 0..self.ndim() {
            let lo = self.start[d].max(other.start[d]);
            let hi = self.end(d).min(other.end(d));
            if lo >= hi {
                return None;
            }
            r.start[d] = lo;
            r.shape[d] = hi - lo;
        }
        Some(r)
    }

    /// The region's bounds `[lo, hi)` as fixed arrays, for [`step`].
    pub(crate) fn bounds(&self) -> ([u64; MAX_DIM], [u64; MAX_DIM]) {
        let mut lo = [0u64; MAX_DIM];
        let mut hi = [0u64; MAX_DIM];
        for i in 0..self.ndim() {
            lo[i] = self.start[i];
            hi[i] = self.end(i);
        }
        (lo, hi)
    }

    /// The same region with dimension `d` narrowed to `[start, start + len)`.
    pub(crate) fn with_dim(&self, d: usize, start: u64, len: u64) -> Region {
        let mut r = self.clone();
        r.start[d] = start;
        r.shape[d] = len;
        r
    }

    /// The region with each dimension divided by `unit` (rounded outwards): the cells of a
    /// grid of `unit`-sized cells it touches. Empty dimensions stay empty; `unit` is nonzero.
    pub(crate) fn cells_touched(&self, unit: &[u64]) -> Region {
        let mut r = self.clone();
        for d in 0..self.ndim() {
            if self.shape[d] == 0 {
                continue;
            }
            let u = unit[d].max(1);
            r.start[d] = self.start[d] / u;
            r.shape[d] = (self.end(d) - 1) / u + 1 - r.start[d];
        }
        r
    }

    /// Offset of position `pos` (inside the region) from the region's first position, in
    /// the C order of the region's shape.
    pub(crate) fn offset_of(&self, pos: &[u64]) -> u64 {
        let mut lin = 0u64;
        for d in 0..self.ndim() {
            lin = lin * self.shape[d] + (pos[d] - self.start[d]);
        }
        lin
    }

    /// Whether `other` lies inside this region and is, in this region's C order, one
    /// contiguous run: every dimension after the first one `other` spans more than one
    /// position of is spanned whole.
    pub(crate) fn is_contiguous_part(&self, other: &Region) -> bool {
        let mut wide = false;
        for d in 0..self.ndim() {
            if other.start[d] < self.start[d] || other.end(d) > self.end(d) {
                return false;
            }
            if wide && other.shape[d] != self.shape[d] {
                return false;
            }
            if other.shape[d] > 1 {
                wide = true;
            }
        }
        true
    }
}

/// The product of `v`, or `None` on overflow.
pub(crate) fn product(v: &[u64]) -> Option<u64> {
    v.iter().try_fold(1u64, |a, &b| a.checked_mul(b))
}

/// C-order strides (in items) of a grid of `shape`: `strides[i] = prod(shape[i+1..])`.
/// Callers have checked the product fits.
pub(crate) fn strides(shape: &[u64]) -> [u64; MAX_DIM] {
    let mut s = [0u64; MAX_DIM];
    let mut acc = 1u64;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc = acc.wrapping_mul(shape[i]);
    }
    s
}

/// C-order linear index of `coords` in a grid of `shape`.
pub(crate) fn ravel(coords: &[u64], shape: &[u64]) -> u64 {
    coords
        .iter()
        .zip(shape)
        .fold(0u64, |lin, (&c, &n)| lin * n + c)
}

/// C-order coordinates of linear index `idx` in a grid of `shape`.
pub(crate) fn unravel(mut idx: u64, shape: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; shape.len()];
    for i in (0..shape.len()).rev() {
        if shape[i] > 0 {
            out[i] = idx % shape[i];
            idx /= shape[i];
        }
    }
    out
}

/// The items of `data`, laid out in Fortran (column-major) order over `shape`, in C order
/// (items of `itemsize` bytes; `data` holds exactly the shape's items).
pub(crate) fn fortran_to_c(data: &[u8], shape: &[u64], itemsize: usize) -> Vec<u8> {
    let nd = shape.len();
    let mut out = vec![0u8; data.len()];
    if data.is_empty() || nd == 0 {
        out.copy_from_slice(data);
        return out;
    }
    // Fortran strides (in items), read at C-order positions.
    let mut fs = [0u64; MAX_DIM];
    let mut acc = 1u64;
    for i in 0..nd {
        fs[i] = acc;
        acc *= shape[i];
    }
    let mut pos = ZEROS;
    for dst in out.chunks_exact_mut(itemsize) {
        let f = pos[..nd].iter().zip(&fs).map(|(a, s)| a * s).sum::<u64>() as usize;
        dst.copy_from_slice(&data[f * itemsize..(f + 1) * itemsize]);
        step(&mut pos[..nd], &ZEROS[..nd], shape);
    }
    out
}

/// The odometer: advance `pos` to the next position of the box `[lo, hi)` in C order (the
/// last dimension fastest). Returns `false`, with `pos` back at `lo`, when `pos` was the
/// last position. With no dimension there is one position, so it returns `false` at once.
pub(crate) fn step(pos: &mut [u64], lo: &[u64], hi: &[u64]) -> bool {
    for i in (0..pos.len()).rev() {
        pos[i] += 1;
        if pos[i] < hi[i] {
            return true;
        }
        pos[i] = lo[i];
    }
    false
}

/// Copy the items of `src` (the C-order buffer of region `src_r`) that also lie in `dst_r`
/// into `dst` (the C-order buffer of `dst_r`), items of `itemsize` bytes. Buffers must hold
/// their regions (checked by the callers' sizes; a short one panics on slicing).
pub(crate) fn copy_overlap(
    src_r: &Region,
    src: &[u8],
    dst_r: &Region,
    dst: &mut [u8],
    itemsize: usize,
) {
    let Some(ov) = src_r.intersect(dst_r) else {
        return;
    };
    let nd = ov.ndim();
    if nd == 0 {
        dst[..itemsize].copy_from_slice(&src[..itemsize]);
        return;
    }
    let run = ov.shape[nd - 1] as usize * itemsize;
    let (lo, mut hi) = ov.bounds();
    hi[nd - 1] = lo[nd - 1] + 1; // one step per row
    let mut pos = lo;
    loop {
        let s = src_r.offset_of(&pos[..nd]) as usize * itemsize;
        let d = dst_r.offset_of(&pos[..nd]) as usize * itemsize;
        dst[d..d + run].copy_from_slice(&src[s..s + run]);
        if !step(&mut pos[..nd], &lo[..nd], &hi[..nd]) {
            break;
        }
    }
}

/// Zeros for the `lo` of [`step`] over index ranges starting at 0.
pub(crate) const ZEROS: [u64; MAX_DIM] = [0; MAX_DIM];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_overlap_copies_the_intersection() {
        let a = Region::new(vec![0, 0], vec![3, 4]);
        let src: Vec<u8> = (0..12).collect();
        let b = Region::new(vec![1, 2], vec![3, 3]);
        let mut dst = vec![99u8; 9];
        copy_overlap(&a, &src, &b, &mut dst, 1);
        assert_eq!(dst, vec![6, 7, 99, 10, 11, 99, 99, 99, 99]);
        let mut d0 = vec![0u8; 2];
        copy_overlap(
            &Region::whole(&[]),
            &[5, 6],
            &Region::whole(&[]),
            &mut d0,
            2,
        );
        assert_eq!(d0, vec![5, 6]);
    }

    #[test]
    fn step_walks_a_box_in_c_order() {
        let (lo, hi) = ([1u64, 0, 2], [3u64, 2, 4]);
        let mut pos = lo;
        let mut seen = vec![pos];
        while step(&mut pos, &lo, &hi) {
            seen.push(pos);
        }
        assert_eq!(seen.len(), 2 * 2 * 2);
        assert_eq!(seen[1], [1, 0, 3]);
        assert_eq!(seen[2], [1, 1, 2]);
        assert_eq!(seen[7], [2, 1, 3]);
        assert_eq!(pos, lo);
        // Every position once, in increasing C order.
        let r = Region::new(lo.to_vec(), vec![2, 2, 2]);
        let offsets: Vec<u64> = seen.iter().map(|p| r.offset_of(p)).collect();
        assert_eq!(offsets, (0..8).collect::<Vec<_>>());
        // No dimension: one position.
        assert!(!step(&mut [], &[], &[]));
    }

    #[test]
    fn ravel_unravel_strides_agree() {
        let shape = [3u64, 1, 4, 5];
        let s = strides(&shape);
        assert_eq!(&s[..4], &[20, 20, 5, 1]);
        for idx in 0..60 {
            let c = unravel(idx, &shape);
            assert_eq!(ravel(&c, &shape), idx);
            assert_eq!(c.iter().zip(&s).map(|(a, b)| a * b).sum::<u64>(), idx);
        }
    }

    #[test]
    fn regions_intersect_and_cut() {
        let a = Region::new(vec![0, 5], vec![10, 5]);
        assert!(a.intersect(&Region::new(vec![10, 5], vec![1, 1])).is_none());
        assert!(a.fits_in(&[10, 10]));
        assert!(!a.fits_in(&[10, 9]));
        assert!(!Region::new(vec![u64::MAX], vec![2]).fits_in(&[u64::MAX]));
        assert_eq!(
            Region::new(vec![3, 7], vec![6, 1]).cells_touched(&[4, 4]),
            Region::new(vec![0, 1], vec![3, 1])
        );
        let whole = Region::whole(&[4, 6]);
        assert!(whole.is_contiguous_part(&Region::new(vec![1, 0], vec![2, 6])));
        assert!(whole.is_contiguous_part(&Region::new(vec![1, 2], vec![1, 3])));
        assert!(!whole.is_contiguous_part(&Region::new(vec![1, 2], vec![2, 3])));
        assert_eq!(whole.with_dim(0, 1, 2), Region::new(vec![1, 0], vec![2, 6]));
    }

    #[test]
    fn fortran_order_to_c_order() {
        // Item (i, j, k) of a (2, 3, 4) array sits at i + 2 j + 6 k in Fortran order and at
        // 12 i + 4 j + k in C order; items of 2 bytes hold their C-order index.
        let shape = [2u64, 3, 4];
        let mut fortran = vec![0u8; 48];
        for i in 0..2u16 {
            for j in 0..3u16 {
                for k in 0..4u16 {
                    let f = (i + 2 * j + 6 * k) as usize;
                    fortran[2 * f..2 * f + 2].copy_from_slice(&(12 * i + 4 * j + k).to_le_bytes());
                }
            }
        }
        let c = fortran_to_c(&fortran, &shape, 2);
        let want: Vec<u8> = (0u16..24).flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(c, want);
        // One dimension, no items, no dimensions: unchanged.
        assert_eq!(fortran_to_c(&want, &[24], 2), want);
        assert_eq!(fortran_to_c(&[], &[0, 3], 8), Vec::<u8>::new());
        assert_eq!(fortran_to_c(&[7, 8], &[], 2), vec![7, 8]);
    }
}
