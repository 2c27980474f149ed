//! What a user selects: NumPy basic indexing, one [`SliceItem`] per leading dimension
//! (missing trailing dimensions are taken whole), parsed from and printed as the CLI syntax
//! (`10:20,::3,-1`). The read engine that fetches a selection is `read::slice`.

#![forbid(unsafe_code)]

use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo};
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::model::geometry::Geometry;
use crate::model::region::{step, strides, Region, MAX_DIM, ZEROS};

/// How one dimension is indexed, as in NumPy basic indexing.
///
/// ```
/// use b2nd::SliceItem;
/// assert_eq!("-1".parse::<SliceItem>()?, SliceItem::Index(-1));
/// assert_eq!(
///     "2::3".parse::<SliceItem>()?,
///     SliceItem::Range { start: Some(2), stop: None, step: 3 }
/// );
/// assert_eq!(SliceItem::from(10..20).to_string(), "10:20");
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SliceItem {
    /// One position; negative values count from the end. The dimension is dropped from the
    /// result. Out of range is an error.
    Index(i64),
    /// Positions `start, start + step, ...` below `stop`. `None` means the start (or end) of
    /// the dimension; negative bounds count from the end; bounds are clamped to the
    /// dimension as NumPy does. `step` must be at least 1.
    Range {
        /// First position (default 0).
        start: Option<i64>,
        /// End position, exclusive (default: the dimension's length).
        stop: Option<i64>,
        /// Distance between selected positions (>= 1).
        step: u64,
    },
}

impl SliceItem {
    /// The whole dimension (`:`).
    pub const ALL: SliceItem = SliceItem::Range {
        start: None,
        stop: None,
        step: 1,
    };

    /// This range with every `step`-th position (`start:stop:step`); an index stays itself.
    pub fn step_by(self, step: u64) -> SliceItem {
        match self {
            SliceItem::Range { start, stop, .. } => SliceItem::Range { start, stop, step },
            i => i,
        }
    }
}

/// Slice items as ndarray's `s![]` writes them: indices and ranges of any integer type
/// (negative ones count from the end), `..` for a whole dimension, `range; step` for a step.
/// The result is an array of [`SliceItem`]s for the `read_slice*` methods.
///
/// ```
/// use b2nd::{s, SliceItem};
/// let n: usize = 4;
/// let items = s![1..n, .., -1, 2..;3];
/// assert_eq!(items[0], SliceItem::Range { start: Some(1), stop: Some(4), step: 1 });
/// assert_eq!(items[2], SliceItem::Index(-1));
/// assert_eq!(items[3].to_string(), "2::3");
/// ```
#[macro_export]
macro_rules! s {
    ($($item:expr $(; $step:expr)?),* $(,)?) => {
        [$($crate::SliceItem::from($item)$(.step_by($step))?),*]
    };
}

/// A position or bound of any integer type as the `i64` of a [`SliceItem`] (beyond `i64`:
/// `i64::MAX`, which is out of every array's range).
trait Position: Copy {
    fn position(self) -> i64;
}

macro_rules! positions {
    ($($t:ty),*) => {$(
        impl Position for $t {
            fn position(self) -> i64 {
                i64::try_from(self).unwrap_or(i64::MAX)
            }
        }

        impl From<$t> for SliceItem {
            fn from(i: $t) -> SliceItem {
                SliceItem::Index(i.position())
            }
        }

        impl From<Range<$t>> for SliceItem {
            fn from(r: Range<$t>) -> SliceItem {
                SliceItem::Range {
                    start: Some(r.start.position()),
                    stop: Some(r.end.position()),
                    step: 1,
                }
            }
        }

        impl From<RangeInclusive<$t>> for SliceItem {
            fn from(r: RangeInclusive<$t>) -> SliceItem {
                let end = r.end().position();
                SliceItem::Range {
                    start: Some(r.start().position()),
                    // `..=-1` is up to the end.
                    stop: if end == -1 { None } else { Some(end.saturating_add(1)) },
                    step: 1,
                }
            }
        }

        impl From<RangeFrom<$t>> for SliceItem {
            fn from(r: RangeFrom<$t>) -> SliceItem {
                SliceItem::Range {
                    start: Some(r.start.position()),
                    stop: None,
                    step: 1,
                }
            }
        }

        impl From<RangeTo<$t>> for SliceItem {
            fn from(r: RangeTo<$t>) -> SliceItem {
                SliceItem::Range {
                    start: None,
                    stop: Some(r.end.position()),
                    step: 1,
                }
            }
        }
    )*};
}

// Every integer type a position may come in: `usize` from Rust lengths, `u64` from b2nd's
// shapes, `i64` for negative positions, `i32` for unsuffixed literals.
positions!(i32, i64, u32, u64, usize);

impl From<RangeFull> for SliceItem {
    fn from(_: RangeFull) -> SliceItem {
        SliceItem::ALL
    }
}

impl fmt::Display for SliceItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SliceItem::Index(i) => write!(f, "{i}"),
            SliceItem::Range { start, stop, step } => {
                if let Some(s) = start {
                    write!(f, "{s}")?;
                }
                f.write_str(":")?;
                if let Some(s) = stop {
                    write!(f, "{s}")?;
                }
                if step != 1 {
                    write!(f, ":{step}")?;
                }
                Ok(())
            }
        }
    }
}

/// Parse one bound of a range: empty means absent.
fn parse_bound(s: &str, what: &str) -> std::result::Result<Option<i64>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse::<i64>()
        .map(Some)
        .map_err(|_| format!("{what} `{s}` is not an integer (or is out of range)"))
}

fn parse_item(s: &str) -> std::result::Result<SliceItem, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty item (use `:` for a whole dimension)".into());
    }
    if !s.contains(':') {
        return s
            .parse::<i64>()
            .map(SliceItem::Index)
            .map_err(|_| "not an integer or a `start:stop:step` range".into());
    }
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 {
        return Err("more than two `:` (expected `start:stop:step`)".into());
    }
    let start = parse_bound(parts[0], "start")?;
    let stop = parse_bound(parts[1], "stop")?;
    let step = match parts.get(2).map(|p| p.trim()) {
        None | Some("") => 1,
        Some(p) => {
            let v: i64 = p
                .parse()
                .map_err(|_| format!("step `{p}` is not an integer (or is out of range)"))?;
            if v == 0 {
                return Err("step 0: the step must be at least 1".into());
            }
            if v < 0 {
                return Err(format!(
                    "step {v}: negative steps are not supported (the step must be at least 1)"
                ));
            }
            v as u64
        }
    };
    Ok(SliceItem::Range { start, stop, step })
}

impl FromStr for SliceItem {
    type Err = Error;

    /// Parse `i`, `start:stop` or `start:stop:step` (each part optional in a range).
    fn from_str(s: &str) -> Result<SliceItem> {
        parse_item(s).map_err(|why| Error::InvalidArgument(format!("slice item `{s}`: {why}")))
    }
}

/// A selection: one [`SliceItem`] per leading dimension. Dereferences to `[SliceItem]`, so a
/// `&Slice` can be passed wherever `&[SliceItem]` is expected.
///
/// Parses the comma-separated syntax of the command line, with NumPy meaning:
///
/// ```
/// use b2nd::{Slice, SliceItem};
/// let s: Slice = "10:20, ::3, -1".parse()?;
/// assert_eq!(s.len(), 3);
/// assert_eq!(s[2], SliceItem::Index(-1));
/// assert_eq!(s.to_string(), "10:20,::3,-1");
/// assert!("::0".parse::<Slice>().is_err());   // step 0
/// assert!("5:1:-1".parse::<Slice>().is_err()); // negative step
/// assert!("".parse::<Slice>()?.is_empty());    // everything
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Slice(Vec<SliceItem>);

impl Slice {
    /// The whole array (no items).
    pub fn all() -> Slice {
        Slice(Vec::new())
    }
}

impl std::ops::Deref for Slice {
    type Target = [SliceItem];
    fn deref(&self) -> &[SliceItem] {
        &self.0
    }
}

impl From<Vec<SliceItem>> for Slice {
    fn from(v: Vec<SliceItem>) -> Slice {
        Slice(v)
    }
}

impl FromIterator<SliceItem> for Slice {
    fn from_iter<I: IntoIterator<Item = SliceItem>>(iter: I) -> Slice {
        Slice(iter.into_iter().collect())
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl FromStr for Slice {
    type Err = Error;

    /// Parse comma-separated items (`10:20,::3,-1`); an empty or blank string selects
    /// everything. Step 0, negative steps and anything unparsable are refused.
    fn from_str(s: &str) -> Result<Slice> {
        if s.trim().is_empty() {
            return Ok(Slice::all());
        }
        s.split(',')
            .enumerate()
            .map(|(i, item)| {
                parse_item(item).map_err(|why| {
                    Error::InvalidArgument(format!(
                        "slice `{s}`: item {} `{}`: {why}",
                        i + 1,
                        item.trim()
                    ))
                })
            })
            .collect()
    }
}

/// A resolved selection, one entry per array dimension: positions `start + k * step` for
/// `k < count`; `keep` is false for integer-indexed dimensions (dropped from the output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    pub(crate) start: Vec<u64>,
    pub(crate) step: Vec<u64>,
    pub(crate) count: Vec<u64>,
    pub(crate) keep: Vec<bool>,
}

impl Selection {
    /// Resolve `items` against an array of `shape`, with NumPy's rules.
    pub(crate) fn resolve(items: &[SliceItem], shape: &[u64]) -> Result<Selection> {
        let nd = shape.len();
        if items.len() > nd {
            return Err(Error::InvalidArgument(format!(
                "too many indices: {} slice items for an array of {nd} dimensions",
                items.len()
            )));
        }
        let mut sel = Selection {
            start: vec![0; nd],
            step: vec![1; nd],
            count: shape.to_vec(),
            keep: vec![true; nd],
        };
        for (d, item) in items.iter().enumerate() {
            let n = i128::from(shape[d]);
            match *item {
                SliceItem::Index(i) => {
                    let j = if i < 0 {
                        i128::from(i) + n
                    } else {
                        i128::from(i)
                    };
                    if j < 0 || j >= n {
                        return Err(Error::InvalidArgument(format!(
                            "index {i} is out of bounds for dimension {d} with size {n}"
                        )));
                    }
                    sel.start[d] = j as u64;
                    sel.count[d] = 1;
                    sel.keep[d] = false;
                }
                SliceItem::Range { start, stop, step } => {
                    if step == 0 {
                        return Err(Error::InvalidArgument(format!(
                            "dimension {d}: slice step 0 (the step must be at least 1)"
                        )));
                    }
                    // NumPy (PySlice_AdjustIndices) for a positive step.
                    let clamp = |v: Option<i64>, default: i128| match v {
                        None => default,
                        Some(v) if v < 0 => (i128::from(v) + n).max(0),
                        Some(v) => i128::from(v).min(n),
                    };
                    let a = clamp(start, 0);
                    let b = clamp(stop, n);
                    let step = i128::from(step);
                    let count = if b > a { (b - a + step - 1) / step } else { 0 };
                    sel.start[d] = a as u64;
                    // A step beyond the dimension selects at most one position.
                    sel.step[d] = step.min(n.max(1)) as u64;
                    sel.count[d] = count as u64;
                }
            }
        }
        Ok(sel)
    }

    pub(crate) fn ndim(&self) -> usize {
        self.count.len()
    }

    /// The selected positions as one region of the array, when every step is 1 (integer
    /// indices are regions of extent 1); `None` otherwise.
    pub(crate) fn contiguous_region(&self) -> Option<Region> {
        (0..self.ndim())
            .all(|d| self.step[d] == 1 || self.count[d] <= 1)
            .then(|| Region::new(self.start.clone(), self.count.clone()))
    }

    /// The output shape: the selected counts of the kept dimensions.
    pub(crate) fn shape(&self) -> Vec<u64> {
        self.count
            .iter()
            .zip(&self.keep)
            .filter(|(_, &k)| k)
            .map(|(&c, _)| c)
            .collect()
    }

    /// Number of selected items (fits the array's item count).
    pub(crate) fn nitems(&self) -> u64 {
        self.count.iter().product()
    }

    /// Split the positions `k in [lo, hi)` of dimension `d` by the chunk (of length `c`) that
    /// holds them: `(chunk coordinate, k_lo, k_hi)` in order.
    pub(crate) fn chunk_groups(
        &self,
        d: usize,
        c: u64,
        lo: u64,
        hi: u64,
    ) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        let (start, step) = (self.start[d], self.step[d]);
        let mut k = lo;
        std::iter::from_fn(move || {
            if k >= hi {
                return None;
            }
            let cc = (start + k * step) / c;
            let next = self.next_outside(d, k, (cc + 1) * c).min(hi);
            let g = (cc, k, next);
            k = next;
            Some(g)
        })
    }

    /// The first `k' > k` whose position along `d` is at or beyond `end` (the position of `k`
    /// being below it).
    pub(crate) fn next_outside(&self, d: usize, k: u64, end: u64) -> u64 {
        let (start, step) = (self.start[d], self.step[d]);
        debug_assert!(start + k * step < end);
        (end - start).div_ceil(step)
    }
}

/// The selected positions of one dimension inside one chunk, as item offsets into the decoded
/// chunk (`src`) and into the output part (`dst`), and the in-chunk blocks they fall in.
#[derive(Default)]
struct DimPart {
    src: Vec<u64>,
    dst: Vec<u64>,
    blocks: Vec<u64>,
}

/// Where the selected items of one chunk go: built by [`Selection::chunk_copy`], walked by
/// [`ChunkCopy::for_each_run`]. All offsets are in bytes.
pub(crate) struct ChunkCopy {
    /// Dimensions before the last: one entry per selected position.
    dims: Vec<DimPart>,
    /// The last dimension: runs `(chunk offset, output offset, bytes)` of items consecutive
    /// in both the chunk and the output (one per block touched when the step is 1).
    runs: Vec<(usize, usize, usize)>,
    itemsize: usize,
}

impl Selection {
    /// Call `f` for every chunk holding selected positions of `part` (a region in selection
    /// coordinates), in C order of the chunk grid, with the chunk's `(grid coordinate, k0,
    /// k1)` along each dimension (see [`Selection::chunk_copy`]); stops at `f`'s first error.
    pub(crate) fn try_for_each_chunk<E>(
        &self,
        g: &Geometry,
        part: &Region,
        mut f: impl FnMut(&[(u64, u64, u64)]) -> Result<(), E>,
    ) -> Result<(), E> {
        let nd = g.ndim();
        // Per dimension: the chunks along it holding selected positions of the part.
        let groups: Vec<Vec<(u64, u64, u64)>> = (0..nd)
            .map(|i| {
                self.chunk_groups(i, g.chunks()[i], part.start()[i], part.end(i))
                    .collect()
            })
            .collect();
        let ends = group_counts(groups.iter().map(Vec::len));
        let mut pick = ZEROS;
        let mut chunk = [(0u64, 0u64, 0u64); MAX_DIM];
        loop {
            for (i, g) in groups.iter().enumerate() {
                chunk[i] = g[pick[i] as usize];
            }
            f(&chunk[..nd])?;
            if !step(&mut pick[..nd], &ZEROS[..nd], &ends[..nd]) {
                return Ok(());
            }
        }
    }

    /// The copy of one chunk's selected items into an output `part` (a region in selection
    /// coordinates, C order): `chunk[i]` is the chunk's grid coordinate along dimension `i`
    /// and the range `[k0, k1)` of selected positions it holds there (from
    /// [`Selection::chunk_groups`]). `wanted` is set to the chunk's blocks that hold selected
    /// items (one flag per block, C order over the block grid).
    pub(crate) fn chunk_copy(
        &self,
        g: &Geometry,
        chunk: &[(u64, u64, u64)],
        part: &Region,
        wanted: &mut Vec<bool>,
    ) -> ChunkCopy {
        let nd = g.ndim();
        let isz = g.itemsize();
        // Strides in items: of the output part, of a block, of the block grid.
        let dst_stride = strides(part.shape());
        let blk_stride = strides(g.blocks());
        let grid_stride = strides(g.block_grid());
        let lo = part.start();
        let last = nd - 1;
        let mut dims: Vec<DimPart> = Vec::with_capacity(nd);
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for (i, &(cc, k0, k1)) in chunk.iter().enumerate() {
            let origin = cc * g.chunks()[i];
            let bl = g.blocks()[i];
            let (start, step) = (self.start[i], self.step[i]);
            let mut p = DimPart::default();
            let mut k = k0;
            while k < k1 {
                let l = start + k * step - origin;
                let blk = l / bl;
                let kb = self.next_outside(i, k, origin + (blk + 1) * bl).min(k1);
                p.blocks.push(blk);
                let base = blk * grid_stride[i] * g.block_items();
                for j in k..kb {
                    let src = base + (l % bl + (j - k) * step) * blk_stride[i];
                    let dst = (j - lo[i]) * dst_stride[i];
                    if i < last {
                        p.src.push(src);
                        p.dst.push(dst);
                    } else if step == 1 {
                        // The whole block segment is one run.
                        runs.push((
                            src as usize * isz,
                            dst as usize * isz,
                            (kb - k) as usize * isz,
                        ));
                        break;
                    } else {
                        runs.push((src as usize * isz, dst as usize * isz, isz));
                    }
                }
                k = kb;
            }
            dims.push(p);
        }
        // Blocks holding selected items: the product of the per-dimension block sets.
        let nblocks = g.block_grid().iter().product::<u64>() as usize;
        wanted.clear();
        wanted.resize(nblocks, false);
        let ends = group_counts(dims.iter().map(|p| p.blocks.len()));
        let mut pick = ZEROS;
        loop {
            let mut lin = 0u64;
            for (i, p) in dims.iter().enumerate() {
                lin += p.blocks[pick[i] as usize] * grid_stride[i];
            }
            wanted[lin as usize] = true;
            if !step(&mut pick[..nd], &ZEROS[..nd], &ends[..nd]) {
                break;
            }
        }
        ChunkCopy {
            dims,
            runs,
            itemsize: isz,
        }
    }
}

impl ChunkCopy {
    /// Call `f(chunk offset, output offset, bytes)` for every run of selected items, in
    /// output order.
    pub(crate) fn for_each_run(&self, mut f: impl FnMut(usize, usize, usize)) {
        let isz = self.itemsize;
        let last = self.dims.len() - 1;
        let outer = &self.dims[..last];
        let ends = group_counts(outer.iter().map(|p| p.src.len()));
        let mut pick = ZEROS;
        loop {
            let (mut s0, mut d0) = (0usize, 0usize);
            for (i, p) in outer.iter().enumerate() {
                s0 += p.src[pick[i] as usize] as usize * isz;
                d0 += p.dst[pick[i] as usize] as usize * isz;
            }
            for &(s, d, n) in &self.runs {
                f(s0 + s, d0 + d, n);
            }
            if !step(&mut pick[..last], &ZEROS[..last], &ends[..last]) {
                return;
            }
        }
    }
}

/// Per-dimension counts as odometer ends.
fn group_counts(lens: impl Iterator<Item = usize>) -> [u64; MAX_DIM] {
    let mut ends = ZEROS;
    for (e, n) in ends.iter_mut().zip(lens) {
        *e = n as u64;
    }
    ends
}
