//! The read layer: [`slice`](mod@slice) (selections and their engine, streaming), [`chunk_iter`]
//! (chunk by chunk), [`typed`] (strings and structured fields), and here whole arrays and
//! regions, decoded chunk by chunk, in parallel, straight into one C-order output.
//!
//! The output is cut into contiguous slabs along the first dimension longer than 1, one slab per
//! chunk row; slabs are filled in parallel (one c-blosc2 context and scratch buffer per
//! worker, compressed chunks fetched under the frame lock). When there are fewer slabs than
//! threads, the remaining threads decode blocks inside each chunk (c-blosc2's own threads).

#![forbid(unsafe_code)]

pub(crate) mod chunk_iter;
pub(crate) mod narrow;
pub(crate) mod slice;
pub(crate) mod typed;

use crate::array::Array;
use crate::codec::chunk::{Decoded, Runs, Target};
use crate::codec::worker::{fetch_decode, workers_for, Worker};
use crate::error::{Error, Result};
use crate::model::element::{self, Element};
use crate::model::geometry::GeometryError;
use crate::model::region::{ravel, step, Region};

/// Outputs at least this large are backed by transparent huge pages when the kernel allows.
const HUGE_PAGE_MIN: usize = 8 << 20;

/// One contiguous part of the output and the region of the array it holds.
struct Slab<'a> {
    out: &'a mut [u8],
    region: Region,
}

impl Array {
    /// Read the whole array as raw bytes in C order (the dtype's own byte order).
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("data.b2nd")?;
    /// let raw = a.read_bytes()?;
    /// assert_eq!(raw.len() as u64, a.nbytes());
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read_bytes(&self) -> Result<Vec<u8>> {
        let n = usize::try_from(self.nbytes())
            .map_err(|_| Error::InvalidArgument("array larger than the address space".into()))?;
        let mut out = crate::alloc::zeroed(n, "the array")?;
        self.read_bytes_into(&mut out)?;
        Ok(out)
    }

    /// Read the whole array as raw bytes into `out` (exactly [`Array::nbytes`] long).
    pub fn read_bytes_into(&self, out: &mut [u8]) -> Result<()> {
        self.read_region_into(&Region::whole(self.shape()), out)
    }

    /// Read the whole array as `T` (checked against the dtype; big-endian data converted).
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("data.b2nd")?;
    /// let v: Vec<f32> = a.read()?;
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read<T: Element + Default>(&self) -> Result<Vec<T>> {
        element::check::<T>(&self.dtype)?;
        let n = usize::try_from(self.nitems())
            .map_err(|_| Error::InvalidArgument("array larger than the address space".into()))?;
        let mut out = crate::alloc::filled(n, T::default(), "the array")?;
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Read the whole array as `T` into `out` (exactly [`Array::nitems`] long).
    pub fn read_into<T: Element>(&self, out: &mut [T]) -> Result<()> {
        element::check::<T>(&self.dtype)?;
        if out.len() as u64 != self.nitems() {
            return Err(Error::BufferSize {
                expected: (self.nitems() as usize).saturating_mul(self.itemsize()),
                got: out.len() * self.itemsize(),
            });
        }
        T::fill_from_bytes(out, &self.dtype, &mut |bytes| self.read_bytes_into(bytes))
    }

    /// Read the whole array as an `ndarray::ArrayD<T>` with the array's shape.
    #[cfg(feature = "ndarray")]
    pub fn read_ndarray<T: Element + Default>(&self) -> Result<ndarray::ArrayD<T>> {
        let v = self.read::<T>()?;
        let shape: Vec<usize> = self.shape().iter().map(|&s| s as usize).collect();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v)
            .map_err(|e| Error::InvalidArgument(format!("ndarray shape: {e}")))
    }

    /// Read the whole array as an `ndarray` array of a fixed number of dimensions
    /// (`Array2<f64>`, ...); an array of another rank is an error.
    #[cfg(feature = "ndarray")]
    pub fn read_ndarray_dim<T: Element + Default, D: ndarray::Dimension>(
        &self,
    ) -> Result<ndarray::Array<T, D>> {
        let rank = self.ndim();
        self.read_ndarray::<T>()?
            .into_dimensionality::<D>()
            .map_err(|_| {
                Error::InvalidArgument(format!(
                    "{}: an array of {rank} dimensions, not {}",
                    self.frame.source,
                    D::NDIM.map_or("any".to_string(), |n| n.to_string())
                ))
            })
    }

    /// A chunk whose decoded layout disagrees with the geometry.
    pub(crate) fn layout_error(&self, chunk: u64, e: GeometryError) -> Error {
        Error::Chunk {
            source_name: self.frame.source.clone(),
            chunk: chunk as i64,
            reason: e.to_string(),
        }
    }

    /// Read `region` of the array as raw bytes in the region's C order into `out` (exactly
    /// `region.nitems() * itemsize` bytes), with the array's kept workers. Only the chunks
    /// the region touches are fetched and decoded. (Public as a step-1 slice:
    /// [`Array::read_slice_bytes_into`].)
    pub(crate) fn read_region_into(&self, region: &Region, out: &mut [u8]) -> Result<()> {
        self.workers.with(|ws| self.fill_region(region, out, ws))
    }

    /// Read `region` into `out` with (and into) `workers`: the output is cut into slabs, one
    /// per chunk row along the region's first dimension longer than 1, filled in parallel.
    pub(crate) fn fill_region(
        &self,
        region: &Region,
        out: &mut [u8],
        workers: &mut Vec<Worker>,
    ) -> Result<()> {
        let g = &self.geom;
        let nd = g.ndim();
        let isz = g.itemsize();
        if !region.fits_in(g.shape()) {
            return Err(Error::InvalidArgument(format!(
                "region {:?} + {:?} exceeds the array's shape {:?}",
                region.start(),
                region.shape(),
                g.shape()
            )));
        }
        let items = region.nitems().unwrap_or(0);
        let need = (items as usize).saturating_mul(isz);
        if out.len() != need {
            return Err(Error::BufferSize {
                expected: need,
                got: out.len(),
            });
        }
        if items == 0 {
            return Ok(());
        }
        if out.len() >= HUGE_PAGE_MIN {
            crate::ffi::advise_huge_pages(out);
        }
        if nd == 0 {
            let w = &mut workers_for(workers, 1, self.threads, g.blocks())[0];
            return self.decode_chunk_into_region(w, 0, out, region);
        }
        // Split along the first region dimension longer than 1 (everything before it is a
        // single index, so each piece is one contiguous run of the output).
        let (d, ranges) = g.row_pieces(region, self.threads);
        let shape = region.shape();
        let row_bytes: usize = shape[d + 1..].iter().product::<u64>() as usize * isz;
        let mut slabs = Vec::new();
        let mut rest = out;
        for (r_lo, r_hi) in ranges {
            let (head, tail) = rest.split_at_mut(((r_hi - r_lo) as usize) * row_bytes);
            rest = tail;
            slabs.push(Slab {
                out: head,
                region: region.with_dim(d, r_lo, r_hi - r_lo),
            });
        }
        self.fetch_ahead(region);
        let outer = slabs.len().min(self.threads).max(1);
        let inner = (self.threads / outer).max(1);
        let lanes = workers_for(workers, outer, inner, g.blocks());
        self.exec
            .for_each_lane(lanes, slabs, |w, slab| self.fill_slab(w, slab))
    }

    /// For a remote frame, when `region` covers at least half of the chunks it touches:
    /// fetch those chunks ahead, concurrently, then the chunks after them in index order (a
    /// sequential reader's next ones; the frame's chunk cache bounds how far). Smaller
    /// regions fetch only the blocks they need, when decoded.
    pub(crate) fn fetch_ahead(&self, region: &Region) {
        self.fetch_share_ahead(region, 2, true);
    }

    /// For a remote frame, when rows `rows` (of the first dimension, whole along the
    /// others) cover at least an eighth of the chunks holding them: fetch those chunks ahead
    /// (and no others), each decoded block by block as it arrives. A reader of a part of
    /// the array in many small reads (a query's partition in batches) announces its part
    /// so; smaller parts fetch only the blocks they need, when decoded. Whether the chunks
    /// are fetched ahead.
    pub(crate) fn fetch_rows_ahead(&self, rows: std::ops::Range<u64>) -> bool {
        let shape = self.geom.shape();
        if rows.start >= rows.end || shape.is_empty() || rows.end > shape[0] {
            return false;
        }
        let mut start = vec![0; shape.len()];
        start[0] = rows.start;
        let mut count = shape.to_vec();
        count[0] = rows.end - rows.start;
        self.fetch_share_ahead(&Region::new(start, count), 8, false)
    }

    /// [`Array::fetch_ahead`] when `region` covers at least `1 / share` of the chunks it
    /// touches, with the chunks after them when `sequential`; whether it did.
    fn fetch_share_ahead(&self, region: &Region, share: u128, sequential: bool) -> bool {
        if !self.frame.fetches_ahead() {
            return false;
        }
        let g = &self.geom;
        let nd = g.ndim();
        let (lo, hi) = g.chunks_touched(region).bounds();
        let mut touched = Vec::new();
        let mut c = lo;
        loop {
            touched.push(ravel(&c[..nd], g.chunk_grid()));
            if !step(&mut c[..nd], &lo[..nd], &hi[..nd]) {
                break;
            }
        }
        let covered = region.nitems().unwrap_or(0) as u128 * g.itemsize() as u128;
        if share * covered < touched.len() as u128 * g.chunk_bytes() as u128 {
            return false;
        }
        let last = touched.iter().copied().max().unwrap_or(0);
        let nchunks = g.chunk_grid().iter().product::<u64>();
        let after = if sequential { last + 1..nchunks } else { 0..0 };
        self.frame.prefetch(touched.into_iter().chain(after));
        true
    }

    /// Decode every chunk intersecting the slab and copy its data into it.
    fn fill_slab(&self, w: &mut Worker, slab: Slab<'_>) -> Result<()> {
        let g = &self.geom;
        let nd = g.ndim();
        let (lo, hi) = g.chunks_touched(&slab.region).bounds();
        let mut c = lo;
        loop {
            let idx = ravel(&c[..nd], g.chunk_grid());
            self.decode_chunk_into_region(w, idx, slab.out, &slab.region)?;
            if !step(&mut c[..nd], &lo[..nd], &hi[..nd]) {
                return Ok(());
            }
        }
    }

    /// Fetch and decode chunk `idx`, then copy its part of `region` into `out`.
    fn decode_chunk_into_region(
        &self,
        w: &mut Worker,
        idx: u64,
        out: &mut [u8],
        region: &Region,
    ) -> Result<()> {
        let g = &self.geom;
        if let Some(range) = g.direct_range(idx, region) {
            // The chunk's bytes are exactly this run of the output: decode in place.
            let dst = &mut out[range];
            let (c, d) = (&mut w.compressed, &mut w.decoder);
            return match fetch_decode(&self.frame, idx, c, d, g.itemsize(), None, |_| {
                Target::Whole(&mut *dst)
            })? {
                Decoded::Data => Ok(()),
                Decoded::Zeros => {
                    dst.fill(0);
                    Ok(())
                }
            };
        }
        crate::alloc::fit(&mut w.decoded, g.chunk_bytes(), "a decoded chunk")?;
        // Block by block: each block is copied out while it is in cache.
        let bb = g.block_bytes();
        w.runs.clear();
        g.chunk_runs(idx, region, out.len(), &mut w.runs)
            .map_err(|e| self.layout_error(idx, e))?;
        w.touched.clear();
        w.touched.resize(g.chunk_bytes() / bb.max(1), false);
        for &(s, _, _) in &w.runs {
            if let Some(t) = w.touched.get_mut(s / bb.max(1)) {
                *t = true;
            }
        }
        // Only the touched blocks' bytes are read when that saves much (a box or a thread's
        // part of a chunk); every decode then uses the same mask.
        let (c, d) = (&mut w.compressed, &mut w.decoder);
        let (touched, runs, decoded) = (&w.touched, &w.runs, &mut w.decoded);
        fetch_decode(
            &self.frame,
            idx,
            c,
            d,
            g.itemsize(),
            Some((touched, bb)),
            |partial| {
                Target::Runs(Runs {
                    decoded,
                    runs,
                    out,
                    touched,
                    block_bytes: bb,
                    partial,
                })
            },
        )
        .map(drop)
    }
}
