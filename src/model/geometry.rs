//! Array, chunk and block geometry: validation and the item layout of decoded chunks.
//!
//! Per dimension `i`: shape `S`, chunk shape `C`, block shape `B`. Chunks form a C-order grid
//! of `ceil(S/C)`; every chunk stores its *extended* shape `X = ceil(C/B)*B`, as C-order
//! blocks over the grid `X/B`, each a C-order run of `prod(B)` items. Only the part of a chunk
//! inside the array is data; the rest is padding and never exposed.

#![forbid(unsafe_code)]
// Geometry loops walk several per-dimension arrays in step; indexing reads clearest.
#![allow(clippy::needless_range_loop)]

/// Largest decoded chunk c-blosc2 can hold (its buffers are sized by `int32_t`).
pub const MAX_CHUNK_BYTES: u64 = i32::MAX as u64 - 32;

/// A geometry that breaks the rules: the field at fault and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeometryError {
    /// `shape`, `chunks`, `blocks`, `ndim` or `itemsize`.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl GeometryError {
    pub(crate) fn new(field: &str, reason: impl Into<String>) -> GeometryError {
        GeometryError {
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

impl std::error::Error for GeometryError {}

/// Validated geometry of an N-d array. All products are overflow-checked at construction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Geometry {
    shape: Vec<u64>,
    chunks: Vec<u64>,
    blocks: Vec<u64>,
    ext: Vec<u64>,
    grid: Vec<u64>,
    block_grid: Vec<u64>,
    itemsize: usize,
    nitems: u64,
    nchunks: u64,
    chunk_items: u64,
    block_items: u64,
}

use super::region::{product as prod, step, strides, unravel, Region, MAX_DIM};

fn div_ceil(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

impl Geometry {
    /// Validate a stored geometry for items of `itemsize` bytes.
    ///
    /// Rules: equal ranks (at most 16); shape >= 0; chunk and block > 0 where shape > 0;
    /// block <= chunk; items, bytes, chunk count and chunk bytes fit (a decoded chunk must fit
    /// c-blosc2's 2 GiB limit).
    ///
    /// ```
    /// let g = b2nd::Geometry::new(&[7, 5], &[4, 5], &[3, 2], 4).unwrap();
    /// assert_eq!(g.ext_chunks(), &[6, 6]);
    /// assert_eq!(g.nchunks(), 2);
    /// ```
    pub fn new(
        shape: &[i64],
        chunks: &[i32],
        blocks: &[i32],
        itemsize: usize,
    ) -> Result<Geometry, GeometryError> {
        Geometry::build(shape, chunks, blocks, itemsize).map_err(|(field, reason)| GeometryError {
            field: field.to_string(),
            reason,
        })
    }

    fn build(
        shape: &[i64],
        chunks: &[i32],
        blocks: &[i32],
        itemsize: usize,
    ) -> Result<Geometry, (&'static str, String)> {
        let nd = shape.len();
        if nd > MAX_DIM {
            return Err((
                "ndim",
                format!("{nd} dimensions, at most {MAX_DIM} supported"),
            ));
        }
        if chunks.len() != nd || blocks.len() != nd {
            return Err((
                "ndim",
                format!(
                    "rank mismatch: shape has {nd} dims, chunks {}, blocks {}",
                    chunks.len(),
                    blocks.len()
                ),
            ));
        }
        if itemsize == 0 {
            return Err(("itemsize", "itemsize is 0".into()));
        }
        let mut s = Vec::with_capacity(nd);
        let mut c = Vec::with_capacity(nd);
        let mut b = Vec::with_capacity(nd);
        for i in 0..nd {
            if shape[i] < 0 {
                return Err(("shape", format!("shape[{i}] = {} is negative", shape[i])));
            }
            if chunks[i] < 0 {
                return Err(("chunks", format!("chunks[{i}] = {} is negative", chunks[i])));
            }
            if blocks[i] < 0 {
                return Err(("blocks", format!("blocks[{i}] = {} is negative", blocks[i])));
            }
            if shape[i] > 0 {
                if chunks[i] == 0 {
                    return Err((
                        "chunks",
                        format!("chunks[{i}] = 0 but shape[{i}] = {}", shape[i]),
                    ));
                }
                if blocks[i] == 0 {
                    return Err((
                        "blocks",
                        format!("blocks[{i}] = 0 but shape[{i}] = {}", shape[i]),
                    ));
                }
            }
            if blocks[i] > chunks[i] {
                return Err((
                    "blocks",
                    format!(
                        "blocks[{i}] = {} exceeds chunks[{i}] = {}",
                        blocks[i], chunks[i]
                    ),
                ));
            }
            s.push(shape[i] as u64);
            c.push(chunks[i] as u64);
            b.push(blocks[i] as u64);
        }
        let nitems = prod(&s).ok_or(("shape", "number of items overflows".to_string()))?;
        let nbytes = nitems
            .checked_mul(itemsize as u64)
            .filter(|&n| n <= i64::MAX as u64)
            .ok_or(("shape", "array size in bytes overflows".to_string()))?;
        let _ = nbytes;
        let grid: Vec<u64> = s.iter().zip(&c).map(|(&s, &c)| div_ceil(s, c)).collect();
        let nchunks = prod(&grid).ok_or(("chunks", "number of chunks overflows".to_string()))?;
        let ext: Vec<u64> = c
            .iter()
            .zip(&b)
            .map(|(&c, &b)| div_ceil(c, b) * b)
            .collect();
        let block_grid: Vec<u64> = ext.iter().zip(&b).map(|(&x, &b)| div_ceil(x, b)).collect();
        let (chunk_items, block_items) = if nitems == 0 {
            (0, 0)
        } else {
            (
                prod(&ext).ok_or(("chunks", "chunk size overflows".to_string()))?,
                prod(&b).ok_or(("blocks", "block size overflows".to_string()))?,
            )
        };
        let chunk_bytes = chunk_items
            .checked_mul(itemsize as u64)
            .ok_or(("chunks", "chunk size overflows".to_string()))?;
        if chunk_bytes > MAX_CHUNK_BYTES {
            return Err((
                "chunks",
                format!("a chunk of {chunk_bytes} bytes exceeds the 2 GiB c-blosc2 limit"),
            ));
        }
        Ok(Geometry {
            shape: s,
            chunks: c,
            blocks: b,
            ext,
            grid,
            block_grid,
            itemsize,
            nitems,
            nchunks,
            chunk_items,
            block_items,
        })
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Array shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }
    /// Chunk shape.
    pub fn chunks(&self) -> &[u64] {
        &self.chunks
    }
    /// Block shape.
    pub fn blocks(&self) -> &[u64] {
        &self.blocks
    }
    /// Extended chunk shape `ceil(C/B)*B`: what each stored chunk holds.
    pub fn ext_chunks(&self) -> &[u64] {
        &self.ext
    }
    /// Chunk grid `ceil(S/C)`.
    pub fn chunk_grid(&self) -> &[u64] {
        &self.grid
    }
    /// Block grid inside one chunk, `X/B`.
    pub fn block_grid(&self) -> &[u64] {
        &self.block_grid
    }
    /// Bytes per item.
    pub fn itemsize(&self) -> usize {
        self.itemsize
    }
    /// Number of items in the array.
    pub fn nitems(&self) -> u64 {
        self.nitems
    }
    /// Logical size of the array in bytes (fits `i64`).
    pub fn nbytes(&self) -> u64 {
        self.nitems * self.itemsize as u64
    }
    /// Number of chunks the geometry implies.
    pub fn nchunks(&self) -> u64 {
        self.nchunks
    }
    /// Items in one stored (extended) chunk.
    pub fn chunk_items(&self) -> u64 {
        self.chunk_items
    }
    /// Bytes in one decoded (extended) chunk (at most `i32::MAX - 32`, c-blosc2's limit).
    pub fn chunk_bytes(&self) -> usize {
        (self.chunk_items * self.itemsize as u64) as usize
    }
    /// Bytes in one stored (extended) chunk from the chunk and block shapes alone, also for
    /// an empty array (whose [`Self::chunk_bytes`] is 0): what a frame's header records.
    pub(crate) fn ext_chunk_bytes(&self) -> u64 {
        self.ext.iter().product::<u64>() * self.itemsize as u64
    }
    /// Items in one block.
    pub fn block_items(&self) -> u64 {
        self.block_items
    }
    /// Bytes in one block.
    pub fn block_bytes(&self) -> usize {
        (self.block_items * self.itemsize as u64) as usize
    }

    /// Grid coordinates of chunk `idx` (C order).
    pub fn chunk_coords(&self, idx: u64) -> Vec<u64> {
        unravel(idx, &self.grid)
    }

    /// The region of the array chunk `idx` covers, padding excluded.
    ///
    /// ```
    /// let g = b2nd::Geometry::new(&[7, 5], &[4, 5], &[3, 2], 4).unwrap();
    /// let r = g.chunk_region(1);
    /// assert_eq!((r.start(), r.shape()), (&[4, 0][..], &[3, 5][..]));
    /// ```
    pub fn chunk_region(&self, idx: u64) -> Region {
        let cc = self.chunk_coords(idx);
        let origin: Vec<u64> = cc.iter().zip(&self.chunks).map(|(&c, &n)| c * n).collect();
        let extent: Vec<u64> = (0..self.ndim())
            .map(|i| self.chunks[i].min(self.shape[i].saturating_sub(origin[i])))
            .collect();
        Region::new(origin, extent)
    }

    /// The chunks `region` touches, as a region of the chunk grid.
    pub fn chunks_touched(&self, region: &Region) -> Region {
        region.cells_touched(&self.chunks)
    }

    /// Copy the part of decoded chunk `idx` (`src`, extended-chunk layout) that lies inside
    /// `region` into `dst`, a C-order buffer of that region.
    ///
    /// Only data items are copied; padding never is. `src` must hold [`Self::chunk_bytes`]
    /// bytes and `dst` `region.nitems() * itemsize` bytes (checked).
    pub fn copy_chunk_to_region(
        &self,
        idx: u64,
        src: &[u8],
        dst: &mut [u8],
        region: &Region,
    ) -> Result<(), GeometryError> {
        self.check_chunk_buffer("decoded chunk", src.len(), false)?;
        self.for_each_run(idx, region, dst.len(), |s, d, n| {
            dst[d..d + n].copy_from_slice(&src[s..s + n])
        })
    }

    /// Check that a chunk buffer (`what`) of `len` bytes holds the chunk: at least
    /// [`Self::chunk_bytes`], or exactly that many when `exact`.
    fn check_chunk_buffer(&self, what: &str, len: usize, exact: bool) -> Result<(), GeometryError> {
        let needed = self.chunk_bytes();
        if len < needed || (exact && len != needed) {
            return Err(GeometryError::new(
                "chunk",
                format!("{what} has {len} bytes, the chunk {needed}"),
            ));
        }
        Ok(())
    }

    /// The runs [`Geometry::copy_chunk_to_region`] copies, appended to `runs` as
    /// `(offset in the decoded chunk, offset in the region's buffer, bytes)`, grouped by block
    /// in block order (a run never spans two blocks). `region_bytes` is the buffer's length.
    pub(crate) fn chunk_runs(
        &self,
        idx: u64,
        region: &Region,
        region_bytes: usize,
        runs: &mut Vec<(usize, usize, usize)>,
    ) -> Result<(), GeometryError> {
        self.for_each_run(idx, region, region_bytes, |s, d, n| runs.push((s, d, n)))
    }

    /// Number of slabs (chunk rows along the first dimension) a C-order write is cut into:
    /// none for an empty array, one for a 0-d array.
    pub(crate) fn nslabs(&self) -> u64 {
        if self.nitems == 0 {
            0
        } else if self.ndim() == 0 {
            1
        } else {
            self.grid[0]
        }
    }

    /// Slab `k`: its first chunk, its number of chunks and the region it covers (chunk row
    /// `k` along the first dimension, clipped to the shape).
    pub(crate) fn slab(&self, k: u64) -> (u64, u64, Region) {
        if self.ndim() == 0 {
            return (0, 1, Region::whole(&[]));
        }
        let per_row: u64 = self.grid[1..].iter().product();
        let c0 = self.chunks[0];
        let rows = c0.min(self.shape[0] - k * c0);
        let region = Region::whole(&self.shape).with_dim(0, k * c0, rows);
        (k * per_row, per_row, region)
    }

    /// `region` cut into pieces for `threads` workers along its first dimension `d` longer
    /// than 1: one piece per chunk row along `d`; with fewer chunk rows than threads, rows
    /// are also cut at block boundaries so that every thread has a piece (a piece decodes
    /// only the blocks it touches, so the cuts cost no extra decoding). Returns `d` and the
    /// pieces' `[lo, hi)` positions along it, in order. `region` must be non-empty and lie
    /// inside the array.
    pub(crate) fn row_pieces(&self, region: &Region, threads: usize) -> (usize, Vec<(u64, u64)>) {
        let shape = region.shape();
        let d = shape.iter().position(|&s| s > 1).unwrap_or(0);
        let c = self.chunks[d].max(1);
        let b = self.blocks[d].max(1);
        let (lo, hi) = (region.start()[d], region.end(d));
        let nk = ((hi - 1) / c - lo / c + 1) as usize;
        let parts = if nk < threads {
            threads.div_ceil(nk) as u64
        } else {
            1
        };
        let mut ranges = Vec::new();
        for k in lo / c..=(hi - 1) / c {
            let (r_lo, r_hi) = (lo.max(k * c), hi.min((k + 1) * c));
            let (b_lo, b_hi) = ((r_lo - k * c) / b, (r_hi - 1 - k * c) / b + 1);
            let pieces = parts.min(b_hi - b_lo).max(1);
            let mut from = r_lo;
            for p in 1..pieces {
                let cut = k * c + (b_lo + (b_hi - b_lo) * p / pieces) * b;
                if cut > from && cut < r_hi {
                    ranges.push((from, cut));
                    from = cut;
                }
            }
            ranges.push((from, r_hi));
        }
        (d, ranges)
    }

    /// Rows `rows` of a 1-d array by chunk: `(chunk, first block, end block, rows)` for each
    /// chunk they touch, the blocks (of that chunk) holding its part of the rows. Empty for
    /// arrays of other ranks or rows outside the shape.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) fn row_blocks(
        &self,
        rows: std::ops::Range<u64>,
    ) -> Vec<(u64, usize, usize, std::ops::Range<u64>)> {
        let (Some(&n), Some(&c), Some(&b)) =
            (self.shape.first(), self.chunks.first(), self.blocks.first())
        else {
            return Vec::new();
        };
        if self.ndim() != 1 || c == 0 || b == 0 || rows.start >= rows.end || rows.end > n {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut at = rows.start;
        while at < rows.end {
            let chunk = at / c;
            let c0 = chunk * c;
            let stop = (c0 + c).min(rows.end);
            let first = ((at - c0) / b) as usize;
            let end = (stop - c0).div_ceil(b) as usize;
            out.push((chunk, first, end, at..stop));
            at = stop;
        }
        out
    }

    /// The runs of [`Self::chunk_runs`] as one, when they follow each other both in the
    /// decoded chunk and in the region's buffer: `(chunk offset, buffer offset, bytes)`.
    pub(crate) fn one_run(runs: &[(usize, usize, usize)]) -> Option<(usize, usize, usize)> {
        let (&(s0, d0, n0), rest) = runs.split_first()?;
        let mut n = n0;
        for &(s, d, m) in rest {
            if s != s0.checked_add(n)? || d != d0.checked_add(n)? {
                return None;
            }
            n = n.checked_add(m)?;
        }
        Some((s0, d0, n))
    }

    /// When decoded chunk `idx` is, byte for byte, one contiguous run of the C-order buffer
    /// of `region`, that run's byte range: the chunk can then be decoded straight into it.
    ///
    /// That holds when the chunk has no padding (its extended shape is its extent), its blocks
    /// tile it in plain C order (with `k` the last dimension split into several blocks, blocks
    /// span every dimension after `k` whole and are one item thick in every dimension before
    /// `k`: each block is then a C-order run of the chunk, and C order over the block grid
    /// puts the runs end to end), and its region is a contiguous run of `region`.
    pub fn direct_range(&self, idx: u64, region: &Region) -> Option<std::ops::Range<usize>> {
        let nd = self.ndim();
        if nd == 0 || idx >= self.nchunks || region.ndim() != nd {
            return None;
        }
        let chunk = self.chunk_region(idx);
        if (0..nd).any(|i| self.ext[i] != chunk.shape()[i]) {
            return None; // padding
        }
        if let Some(k) = (0..nd).rev().find(|&i| self.block_grid[i] > 1) {
            if self.blocks[..k].iter().any(|&b| b != 1) {
                return None;
            }
        }
        if !region.is_contiguous_part(&chunk) {
            return None;
        }
        let start = region.offset_of(chunk.start()) as usize * self.itemsize;
        Some(start..start + self.chunk_bytes())
    }

    /// The reverse of [`Self::copy_chunk_to_region`]: copy the part of `region` (`src`, its
    /// C-order buffer) that chunk `idx` covers into `dst`, the chunk's extended layout.
    /// Padding in `dst` is not written (zero it first).
    pub fn copy_region_to_chunk(
        &self,
        idx: u64,
        src: &[u8],
        dst: &mut [u8],
        region: &Region,
    ) -> Result<(), GeometryError> {
        self.check_chunk_buffer("chunk buffer", dst.len(), true)?;
        self.for_each_run(idx, region, src.len(), |c, b, n| {
            dst[c..c + n].copy_from_slice(&src[b..b + n])
        })
    }

    /// [`Self::copy_region_to_chunk`] into a `dst` of any contents: every byte the copy does
    /// not write (padding, and what `region` does not cover) is zeroed, and only those.
    pub(crate) fn gather_chunk(
        &self,
        idx: u64,
        src: &[u8],
        dst: &mut [u8],
        region: &Region,
    ) -> Result<(), GeometryError> {
        self.check_chunk_buffer("chunk buffer", dst.len(), true)?;
        // Runs come in the chunk's order: the gaps between them are zeroed on the way.
        let (mut next, mut ordered) = (0usize, true);
        self.for_each_run(idx, region, src.len(), |c, b, n| {
            if c >= next {
                dst[next..c].fill(0);
            } else {
                ordered = false;
            }
            dst[c..c + n].copy_from_slice(&src[b..b + n]);
            next = next.max(c + n);
        })?;
        if ordered {
            dst[next..].fill(0);
            Ok(())
        } else {
            dst.fill(0);
            self.copy_region_to_chunk(idx, src, dst, region)
        }
    }

    /// Fill the part of chunk `idx` inside `region` (`dst`, its C-order buffer) with the
    /// repeated item `value`.
    pub fn fill_chunk_in_region(
        &self,
        idx: u64,
        value: &[u8],
        dst: &mut [u8],
        region: &Region,
    ) -> Result<(), GeometryError> {
        if value.len() != self.itemsize {
            return Err(GeometryError::new(
                "itemsize",
                format!("fill value of {} bytes", value.len()),
            ));
        }
        let zero = value.iter().all(|&b| b == 0);
        self.for_each_run(idx, region, dst.len(), |_, d, n| {
            let run = &mut dst[d..d + n];
            if zero {
                run.fill(0);
            } else {
                for item in run.chunks_exact_mut(value.len()) {
                    item.copy_from_slice(value);
                }
            }
        })
    }

    /// Call `f(chunk_offset, region_offset, len)` (bytes) for each contiguous run of chunk
    /// `idx`'s data inside `region`, walking blocks then rows; every run lies inside the
    /// decoded chunk and inside the region's buffer of `region_len` bytes (checked here).
    fn for_each_run(
        &self,
        idx: u64,
        region: &Region,
        region_len: usize,
        mut f: impl FnMut(usize, usize, usize),
    ) -> Result<(), GeometryError> {
        let nd = self.ndim();
        if region.ndim() != nd {
            return Err(GeometryError::new(
                "ndim",
                format!("a region of {} dimensions in {nd}", region.ndim()),
            ));
        }
        if idx >= self.nchunks {
            return Err(GeometryError::new(
                "chunk",
                format!("chunk {idx} out of range ({} chunks)", self.nchunks),
            ));
        }
        let isz = self.itemsize;
        let need = region
            .nitems()
            .and_then(|n| n.checked_mul(isz as u64))
            .ok_or_else(|| GeometryError::new("shape", "region too large"))?;
        if need != region_len as u64 {
            return Err(GeometryError::new(
                "buffer",
                format!("region buffer has {region_len} bytes, the region {need}"),
            ));
        }
        if nd == 0 {
            f(0, 0, isz);
            return Ok(());
        }
        let chunk = self.chunk_region(idx);
        let origin = chunk.start();
        // The chunk's data inside the region, in array coordinates.
        let Some(part) = chunk.intersect(region) else {
            return Ok(());
        };
        let dst_stride = strides(region.shape());
        let blk_stride = strides(&self.blocks);
        let bgrid_stride = strides(&self.block_grid);
        // The blocks touched, in in-chunk block coordinates.
        let in_chunk: Vec<u64> = (0..nd).map(|i| part.start()[i] - origin[i]).collect();
        let blocks = Region::new(in_chunk, part.shape().to_vec()).cells_touched(&self.blocks);
        let (b_lo, b_hi) = blocks.bounds();
        let last = nd - 1;
        let mut b = b_lo;
        loop {
            // Block b: its region in array coordinates, clipped to the part.
            let mut r_lo = [0u64; MAX_DIM];
            let mut r_hi = [0u64; MAX_DIM];
            let mut bo = [0u64; MAX_DIM];
            let mut block_lin = 0u64;
            for i in 0..nd {
                bo[i] = origin[i] + b[i] * self.blocks[i];
                r_lo[i] = bo[i].max(part.start()[i]);
                r_hi[i] = (bo[i] + self.blocks[i]).min(part.end(i));
                block_lin += b[i] * bgrid_stride[i];
            }
            let block_base = block_lin * self.block_items;
            let run = ((r_hi[last] - r_lo[last]) as usize) * isz;
            // Rows of this block's part (all dims but the last).
            let mut a = r_lo;
            loop {
                let mut s_items = block_base;
                let mut d_items = 0u64;
                for i in 0..nd {
                    s_items += (a[i] - bo[i]) * blk_stride[i];
                    d_items += (a[i] - region.start()[i]) * dst_stride[i];
                }
                f((s_items as usize) * isz, (d_items as usize) * isz, run);
                if !step(&mut a[..last], &r_lo[..last], &r_hi[..last]) {
                    break;
                }
            }
            if !step(&mut b[..nd], &b_lo[..nd], &b_hi[..nd]) {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encode an array into its chunks the slow, obvious way (per item), for checking.
    fn encode_chunks(g: &Geometry, data: &[i32]) -> Vec<Vec<i32>> {
        let nd = g.ndim();
        let mut out = vec![vec![-1i32; g.chunk_items() as usize]; g.nchunks() as usize];
        for (lin, &v) in data.iter().enumerate() {
            let a = unravel(lin as u64, g.shape());
            let mut cidx = 0u64;
            let mut off_b = 0u64;
            let mut off_w = 0u64;
            for i in 0..nd {
                let c = a[i] / g.chunks()[i];
                let l = a[i] % g.chunks()[i];
                cidx = cidx * g.chunk_grid()[i] + c;
                off_b = off_b * g.block_grid()[i] + l / g.blocks()[i];
                off_w = off_w * g.blocks()[i] + l % g.blocks()[i];
            }
            out[cidx as usize][(off_b * g.block_items() + off_w) as usize] = v;
        }
        out
    }

    fn reg(start: &[u64], shape: &[u64]) -> Region {
        Region::new(start.to_vec(), shape.to_vec())
    }

    fn as_bytes(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn reference_example_from_format_notes() {
        let g = Geometry::new(&[7, 5], &[4, 5], &[3, 2], 4).unwrap();
        assert_eq!(g.ext_chunks(), &[6, 6]);
        let data: Vec<i32> = (0..35).collect();
        let chunks = encode_chunks(&g, &data);
        // Chunk 1 holds rows 4..7: 20 21 25 26 30 31 | 22 23 27 28 32 33 | 24 _ 29 _ 34 _ ...
        assert_eq!(&chunks[1][..6], &[20, 21, 25, 26, 30, 31]);
        assert_eq!(&chunks[1][6..12], &[22, 23, 27, 28, 32, 33]);
        assert_eq!(chunks[1][12], 24);
        assert_eq!(chunks[1][14], 29);
        let mut out = vec![0u8; 35 * 4];
        for c in 0..g.nchunks() {
            g.copy_chunk_to_region(
                c,
                &as_bytes(&chunks[c as usize]),
                &mut out,
                &Region::whole(&[7, 5]),
            )
            .unwrap();
        }
        assert_eq!(out, as_bytes(&data));
    }

    #[test]
    fn many_geometries_roundtrip_and_regions() {
        let cases: &[(&[i64], &[i32], &[i32])] = &[
            (&[], &[], &[]),
            (&[10], &[4], &[3]),
            (&[10], &[10], &[10]),
            (&[9, 7, 5], &[4, 3, 5], &[3, 2, 2]),
            (&[2, 3, 4, 5], &[2, 2, 3, 3], &[1, 2, 2, 2]),
            (&[1, 1, 13], &[1, 1, 5], &[1, 1, 5]),
            (&[5, 1, 3, 1, 2], &[3, 1, 2, 1, 2], &[2, 1, 1, 1, 1]),
        ];
        for (shape, chunks, blocks) in cases {
            let g = Geometry::new(shape, chunks, blocks, 4).unwrap();
            let n = g.nitems() as usize;
            let data: Vec<i32> = (0..n as i32).collect();
            let enc = encode_chunks(&g, &data);
            let shp = g.shape().to_vec();
            let mut out = vec![0u8; n * 4];
            for c in 0..g.nchunks() {
                g.copy_chunk_to_region(
                    c,
                    &as_bytes(&enc[c as usize]),
                    &mut out,
                    &Region::whole(&shp),
                )
                .unwrap();
            }
            assert_eq!(out, as_bytes(&data), "{shape:?} {chunks:?} {blocks:?}");
            // A sub-region: drop the first item along each dim where possible.
            if !shp.is_empty() && shp.iter().all(|&s| s >= 2) {
                let start: Vec<u64> = shp.iter().map(|_| 1).collect();
                let bshape: Vec<u64> = shp.iter().map(|&s| s - 1).collect();
                let m: u64 = bshape.iter().product();
                let mut sub = vec![0u8; m as usize * 4];
                for c in 0..g.nchunks() {
                    let r = Region::new(start.clone(), bshape.clone());
                    g.copy_chunk_to_region(c, &as_bytes(&enc[c as usize]), &mut sub, &r)
                        .unwrap();
                }
                let expect: Vec<i32> = (0..m)
                    .map(|l| {
                        let a = unravel(l, &bshape);
                        let mut lin = 0u64;
                        for i in 0..a.len() {
                            lin = lin * shp[i] + a[i] + 1;
                        }
                        lin as i32
                    })
                    .collect();
                assert_eq!(sub, as_bytes(&expect), "sub-region of {shape:?}");
            }
        }
    }

    #[test]
    fn direct_ranges() {
        // 1-d, blocks divide chunks: every full chunk is direct, the ragged last one is not.
        let g = Geometry::new(&[100], &[20], &[5], 8).unwrap();
        assert_eq!(g.direct_range(1, &reg(&[0], &[100])), Some(160..320));
        let g = Geometry::new(&[90], &[20], &[5], 8).unwrap();
        assert_eq!(g.direct_range(4, &reg(&[0], &[90])), None);
        // 2-d, chunks and blocks span whole rows.
        let g = Geometry::new(&[10, 6], &[4, 6], &[2, 6], 4).unwrap();
        assert_eq!(g.direct_range(1, &reg(&[0, 0], &[10, 6])), Some(96..192));
        assert_eq!(g.direct_range(1, &reg(&[4, 0], &[4, 6])), Some(0..96));
        // Blocks split the trailing dimension: not plain C order.
        let g = Geometry::new(&[10, 6], &[4, 6], &[2, 3], 4).unwrap();
        assert_eq!(g.direct_range(0, &reg(&[0, 0], &[10, 6])), None);
        // Chunks split the trailing dimension: not contiguous in the output.
        let g = Geometry::new(&[10, 6], &[4, 3], &[4, 3], 4).unwrap();
        assert_eq!(g.direct_range(0, &reg(&[0, 0], &[10, 6])), None);
        // Blocks split the trailing dimension below a whole leading one: blocks are (2,2)
        // tiles, not rows (found by the differential test: shape (2,8), chunks (2,8)).
        let g = Geometry::new(&[2, 8], &[2, 8], &[2, 2], 4).unwrap();
        assert_eq!(g.direct_range(0, &reg(&[0, 0], &[2, 8])), None);
        let g = Geometry::new(&[3, 3, 2, 1, 8], &[1, 3, 2, 1, 8], &[1, 3, 2, 1, 2], 4).unwrap();
        assert_eq!(g.direct_range(1, &reg(&[0; 5], &[3, 3, 2, 1, 8])), None);
        // Blocks one item thick before the split dimension are C-order runs laid end to end
        // (python-blosc2's layout for stacks of planes: chunks (4, 512, 512), blocks
        // (1, 64, 512)).
        let g = Geometry::new(&[3, 1, 8], &[3, 1, 8], &[1, 1, 2], 4).unwrap();
        assert_eq!(g.direct_range(0, &reg(&[0; 3], &[3, 1, 8])), Some(0..96));
        let g = Geometry::new(&[8, 16, 4], &[4, 16, 4], &[1, 2, 4], 8).unwrap();
        assert_eq!(
            g.direct_range(1, &reg(&[0; 3], &[8, 16, 4])),
            Some(2048..4096)
        );
        // ... but not thicker ones.
        let g = Geometry::new(&[8, 16, 4], &[4, 16, 4], &[2, 2, 4], 8).unwrap();
        assert_eq!(g.direct_range(1, &reg(&[0; 3], &[8, 16, 4])), None);
        let g = Geometry::new(&[1, 1, 8], &[1, 1, 8], &[1, 1, 2], 4).unwrap();
        assert_eq!(g.direct_range(0, &reg(&[0; 3], &[1, 1, 8])), Some(0..32));
        // ... unless the chunk is one row.
        let g = Geometry::new(&[10, 6], &[1, 3], &[1, 3], 4).unwrap();
        assert_eq!(g.direct_range(3, &reg(&[0, 0], &[10, 6])), Some(36..48));
    }

    /// Every shape whose dimensions divide those of `of`.
    fn divisor_shapes(of: &[u64]) -> Vec<Vec<u64>> {
        let mut all: Vec<Vec<u64>> = vec![vec![]];
        for &x in of {
            all = all
                .into_iter()
                .flat_map(|c| {
                    (1..=x)
                        .filter(move |d| x.is_multiple_of(*d))
                        .map(move |d| [c.clone(), vec![d]].concat())
                })
                .collect();
        }
        all
    }

    /// `direct_range` against the gather it stands for: for every small geometry, a chunk
    /// it calls direct is, byte for byte, its range of the source, and one it does not call
    /// direct is not (chunks and blocks dividing the shape, so no padding; the region is the
    /// whole array; every item's value differs).
    /// `gather_chunk` into a buffer of stale bytes equals `copy_region_to_chunk` into zeros,
    /// for every chunking and blocking (padding included) of small 2-D and 3-D shapes, with
    /// the whole array and a corner of it as the region.
    #[test]
    fn gather_zeroes_what_it_does_not_copy() {
        let upto = |of: &[u64]| -> Vec<Vec<u64>> {
            let mut all: Vec<Vec<u64>> = vec![vec![]];
            for &x in of {
                all = all
                    .into_iter()
                    .flat_map(|c| (1..=x).map(move |d| [c.clone(), vec![d]].concat()))
                    .collect();
            }
            all
        };
        let mut checked = 0;
        for shape in [&[5u64, 3][..], &[4, 3, 5]] {
            let shape_i64: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
            let corner = reg(
                &vec![1; shape.len()],
                &shape.iter().map(|x| x - 1).collect::<Vec<_>>(),
            );
            for chunks in upto(shape) {
                for blocks in upto(&chunks) {
                    let to_i32 = |v: &[u64]| v.iter().map(|&x| x as i32).collect::<Vec<_>>();
                    let g =
                        Geometry::new(&shape_i64, &to_i32(&chunks), &to_i32(&blocks), 2).unwrap();
                    for region in [reg(&vec![0; shape.len()], shape), corner.clone()] {
                        let n = region.nitems().unwrap() as usize * 2;
                        let src: Vec<u8> = (0..n).map(|i| (i % 251) as u8 + 1).collect();
                        for idx in 0..g.nchunks() {
                            let mut want = vec![0u8; g.chunk_bytes()];
                            g.copy_region_to_chunk(idx, &src, &mut want, &region)
                                .unwrap();
                            let mut got = vec![0xAAu8; g.chunk_bytes()];
                            g.gather_chunk(idx, &src, &mut got, &region).unwrap();
                            assert_eq!(
                                got, want,
                                "{shape:?} {chunks:?} {blocks:?} {region:?} {idx}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    #[test]
    fn direct_ranges_are_the_gather() {
        let dims = [1u64, 2, 3, 4, 6];
        let mut direct = 0;
        let mut shapes = Vec::new();
        for &a in &dims {
            for &b in &dims {
                shapes.push(vec![a, b]);
                for &c in &[1u64, 2, 4] {
                    shapes.push(vec![a, b, c]);
                }
            }
        }
        for shape in &shapes {
            let n: u64 = shape.iter().product();
            let src: Vec<u8> = (0..n as i32).flat_map(|x| x.to_le_bytes()).collect();
            let region = reg(&vec![0; shape.len()], shape);
            // Chunks and blocks dividing the shape, every combination.
            for chunks in &divisor_shapes(shape) {
                let blockings = divisor_shapes(chunks);
                let to_i32 = |v: &[u64]| v.iter().map(|&x| x as i32).collect::<Vec<_>>();
                let shape_i64: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
                for blocks in &blockings {
                    let g = Geometry::new(&shape_i64, &to_i32(chunks), &to_i32(blocks), 4).unwrap();
                    for idx in 0..g.nchunks() {
                        let mut gathered = vec![0u8; g.chunk_bytes()];
                        g.copy_region_to_chunk(idx, &src, &mut gathered, &region)
                            .unwrap();
                        let start = region.offset_of(g.chunk_region(idx).start()) as usize * 4;
                        let run = &src[start..start + g.chunk_bytes()];
                        let got = g.direct_range(idx, &region);
                        if let Some(r) = &got {
                            assert_eq!(
                                &src[r.clone()],
                                &gathered[..],
                                "{shape:?} {chunks:?} {blocks:?}"
                            );
                            direct += 1;
                        } else {
                            assert_ne!(
                                run,
                                &gathered[..],
                                "missed: {shape:?} {chunks:?} {blocks:?} chunk {idx}"
                            );
                        }
                    }
                }
            }
        }
        assert!(direct > 1000, "{direct} direct chunks");
    }

    #[test]
    fn validation() {
        assert!(Geometry::new(&[-1], &[1], &[1], 1).is_err());
        assert!(Geometry::new(&[4], &[0], &[0], 1).is_err());
        assert!(Geometry::new(&[4], &[2], &[3], 1).is_err());
        assert!(Geometry::new(&[4], &[2], &[0], 1).is_err());
        assert!(Geometry::new(&[4, 4], &[2], &[1], 1).is_err());
        assert!(Geometry::new(&[i64::MAX, i64::MAX], &[1, 1], &[1, 1], 1).is_err());
        assert!(Geometry::new(&[1 << 40], &[i32::MAX], &[i32::MAX], 8).is_err());
        let g = Geometry::new(&[0, 5], &[0, 5], &[0, 5], 8).unwrap();
        assert_eq!(g.nchunks(), 0);
        assert_eq!(g.nitems(), 0);
        let g = Geometry::new(&[], &[], &[], 8).unwrap();
        assert_eq!((g.nchunks(), g.nitems(), g.chunk_bytes()), (1, 1, 8));
    }
}
