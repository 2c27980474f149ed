//! Region reads with NumPy basic-indexing semantics, and streaming them in slabs.
//!
//! A selection is one [`SliceItem`] per leading dimension (missing trailing dimensions are
//! taken whole): an integer index (negative counts from the end; the dimension is dropped
//! from the result) or a `start:stop:step` range (bounds clamp as in NumPy, `step >= 1`).
//!
//! Only the chunks holding selected items are fetched, and inside each chunk only the blocks
//! holding selected items are decoded (c-blosc2's block maskout). Like whole-array reads, the
//! output is cut into contiguous parts, one per chunk row along the first output dimension
//! longer than 1, filled in parallel with one c-blosc2 context per worker.

#![forbid(unsafe_code)]
// Selection loops walk several per-dimension arrays in step; indexing reads clearest.
#![allow(clippy::needless_range_loop)]

use crate::array::Array;
use crate::codec::chunk::{BlockMask, Decoded, Target};
use crate::codec::worker::{fetch_decode, workers_for, Worker};
use crate::error::{Error, Result};
use crate::model::element::{self, Element};
use crate::model::region::{ravel, step, Region, ZEROS};
#[cfg(test)]
use crate::model::selection::Slice;
use crate::model::selection::{Selection, SliceItem};

/// A part of the selection and its C-order output: `region` is in selection coordinates
/// (`k` per dimension, the `k`-th selected position).
struct SelPart<'a> {
    out: &'a mut [u8],
    region: Region,
}

impl Array {
    /// The shape a selection reads to: integer-indexed dimensions dropped, ranges clamped.
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("data.b2nd")?; // say shape (100, 50)
    /// let s: b2nd::Slice = "10:20,-1".parse()?;
    /// assert_eq!(a.slice_shape(&s)?, vec![10]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn slice_shape(&self, items: &[SliceItem]) -> Result<Vec<u64>> {
        Ok(Selection::resolve(items, self.shape())?.shape())
    }

    /// Read a selection as raw bytes (the dtype's own byte order) in the C order of its shape
    /// ([`Array::slice_shape`]). See [`SliceItem`] for the indexing rules.
    ///
    /// Only the chunks holding selected items are fetched and, inside them, only the blocks
    /// holding selected items are decoded.
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("data.b2nd")?; // say shape (100, 50), <f8
    /// let s: b2nd::Slice = "10:20,::3".parse()?;
    /// let raw = a.read_slice_bytes(&s)?;
    /// assert_eq!(a.slice_shape(&s)?, vec![10, 17]);
    /// assert_eq!(raw.len(), 10 * 17 * 8);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read_slice_bytes(&self, items: &[SliceItem]) -> Result<Vec<u8>> {
        let sel = Selection::resolve(items, self.shape())?;
        let n = self.sel_bytes(&sel)?;
        let mut out = crate::alloc::zeroed(n, "the selection")?;
        self.fill_selection(&sel, &mut out)?;
        Ok(out)
    }

    /// Read a selection as raw bytes into `out` (exactly the selection's size in bytes, see
    /// [`Array::slice_shape`]).
    pub fn read_slice_bytes_into(&self, items: &[SliceItem], out: &mut [u8]) -> Result<()> {
        let sel = Selection::resolve(items, self.shape())?;
        self.fill_selection(&sel, out)
    }

    /// Read a selection as `T` (checked against the dtype; big-endian data converted) in the
    /// C order of its shape ([`Array::slice_shape`]; [`Array::read_slice_ndarray`] returns
    /// values and shape together).
    ///
    /// ```no_run
    /// use b2nd::{Array, Slice, SliceItem};
    /// let a = Array::open("data.b2nd")?; // say shape (1000, 3, 40), <f8
    /// // Every 3rd row of rows 10..20, all of dimension 1, the last column.
    /// let s: Slice = "10:20:3,:,-1".parse()?;
    /// let v = a.read_slice::<f64>(&s)?;
    /// assert_eq!(a.slice_shape(&s)?, vec![4, 3]);
    /// // The same with items built in code.
    /// let items = [SliceItem::Range { start: Some(10), stop: Some(20), step: 3 }, (..).into(), (-1).into()];
    /// assert_eq!(a.read_slice::<f64>(&items)?, v);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read_slice<T: Element + Default>(&self, items: &[SliceItem]) -> Result<Vec<T>> {
        element::check::<T>(&self.dtype)?;
        let sel = Selection::resolve(items, self.shape())?;
        let n = usize::try_from(sel.nitems()).map_err(|_| {
            Error::InvalidArgument("selection larger than the address space".into())
        })?;
        let mut out = vec![T::default(); n];
        T::fill_from_bytes(&mut out, &self.dtype, &mut |bytes| {
            self.fill_selection(&sel, bytes)
        })?;
        Ok(out)
    }

    /// Read a selection as `T` into `out` (exactly as many items as the selection holds).
    pub fn read_slice_into<T: Element>(&self, items: &[SliceItem], out: &mut [T]) -> Result<()> {
        element::check::<T>(&self.dtype)?;
        let sel = Selection::resolve(items, self.shape())?;
        if out.len() as u64 != sel.nitems() {
            return Err(Error::BufferSize {
                expected: (sel.nitems() as usize).saturating_mul(self.itemsize()),
                got: out.len().saturating_mul(self.itemsize()),
            });
        }
        T::fill_from_bytes(out, &self.dtype, &mut |bytes| {
            self.fill_selection(&sel, bytes)
        })
    }

    /// Read a selection as an `ndarray::ArrayD<T>` of the selection's shape (0-d for a
    /// selection of integers only).
    ///
    /// ```no_run
    /// # #[cfg(feature = "ndarray")] {
    /// let a = b2nd::Array::open("data.b2nd")?; // say shape (100, 50), <i4
    /// let v = a.read_slice_ndarray::<i32>(&"::10,5:8".parse::<b2nd::Slice>()?)?;
    /// assert_eq!(v.shape(), &[10, 3]);
    /// # }
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    #[cfg(feature = "ndarray")]
    pub fn read_slice_ndarray<T: Element + Default>(
        &self,
        items: &[SliceItem],
    ) -> Result<ndarray::ArrayD<T>> {
        let v = self.read_slice::<T>(items)?;
        let shape: Vec<usize> = self
            .slice_shape(items)?
            .iter()
            .map(|&s| s as usize)
            .collect();
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), v)
            .map_err(|e| Error::InvalidArgument(format!("ndarray shape: {e}")))
    }

    /// Stream a selection as consecutive parts of its C-order bytes, each at most about
    /// `max_bytes` long (at least one item), without ever holding the whole selection.
    ///
    /// Parts are whole runs of chunks along the first output dimension longer than 1 (a
    /// deeper dimension is used when one position of it is already larger than `max_bytes`);
    /// each part is read in parallel like [`Array::read_slice_bytes`]. Peak memory is about
    /// one part plus one decoded chunk per thread.
    ///
    /// ```no_run
    /// use std::io::Write;
    /// let a = b2nd::Array::open("big.b2nd")?;
    /// let mut slabs = a.slice_slabs(&b2nd::Slice::all(), 64 << 20)?;
    /// let mut out = std::io::sink();
    /// let mut buf = Vec::new();
    /// while slabs.read_next(&mut buf)? {
    ///     out.write_all(&buf).unwrap();
    /// }
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn slice_slabs(&self, items: &[SliceItem], max_bytes: usize) -> Result<SliceSlabs<'_>> {
        let sel = Selection::resolve(items, self.shape())?;
        Ok(SliceSlabs::new(self, sel, max_bytes.max(1)))
    }

    fn sel_bytes(&self, sel: &Selection) -> Result<usize> {
        usize::try_from(sel.nitems())
            .ok()
            .and_then(|n| n.checked_mul(self.itemsize()))
            .ok_or_else(|| Error::InvalidArgument("selection larger than the address space".into()))
    }

    /// Read the whole selection into `out`, with the array's kept workers.
    fn fill_selection(&self, sel: &Selection, out: &mut [u8]) -> Result<()> {
        let b = SelPart {
            out,
            region: Region::whole(&sel.count),
        };
        self.workers.with(|ws| self.fill_sel_part(sel, b, ws))
    }

    /// Read a part of the selection into its C-order buffer, in parallel over chunk rows
    /// along the part's first dimension longer than 1, with (and into) `workers`.
    fn fill_sel_part(
        &self,
        sel: &Selection,
        b: SelPart<'_>,
        workers: &mut Vec<Worker>,
    ) -> Result<()> {
        let g = &self.geom;
        let nd = g.ndim();
        let isz = g.itemsize();
        let items = b.region.nitems().unwrap_or(u64::MAX);
        let need = usize::try_from(items)
            .ok()
            .and_then(|n| n.checked_mul(isz))
            .ok_or_else(|| {
                Error::InvalidArgument("selection larger than the address space".into())
            })?;
        if b.out.len() != need {
            return Err(Error::BufferSize {
                expected: need,
                got: b.out.len(),
            });
        }
        if items == 0 {
            return Ok(());
        }
        if nd == 0 {
            let w = &mut workers_for(workers, 1, self.threads, self.geom.blocks())[0];
            return self.fill_part(w, sel, b);
        }
        let len = b.region.shape();
        if sel.step.iter().all(|&s| s == 1) {
            let start: Vec<u64> = (0..nd)
                .map(|i| sel.start[i] + b.region.start()[i])
                .collect();
            let region = Region::new(start, len.to_vec());
            if b.out.len() < g.chunk_bytes() {
                // A region smaller than a chunk: over a URL, when it covers half its chunks
                // or more (a scan's part of a chunk), they and the next ones are fetched
                // ahead whole and kept, so the scan's next part finds its chunk here.
                self.fetch_ahead(&region);
            }
            // The region reader decodes chunks straight into the output where their layout
            // allows, else block by block (only the blocks the region touches), each
            // block's runs copied out while it is in cache: a chunk-size buffer is never
            // written, so a scan by small regions faults no page of it.
            return self.fill_region(&region, b.out, workers);
        }
        let d = len.iter().position(|&s| s > 1).unwrap_or(0);
        let row_bytes = len[d + 1..].iter().product::<u64>() as usize * isz;
        let mut parts = Vec::new();
        let mut rest = b.out;
        let (lo_d, hi_d) = (b.region.start()[d], b.region.end(d));
        for (_, k0, k1) in sel.chunk_groups(d, g.chunks()[d], lo_d, hi_d) {
            let (head, tail) = rest.split_at_mut((k1 - k0) as usize * row_bytes);
            rest = tail;
            parts.push(SelPart {
                out: head,
                region: b.region.with_dim(d, k0, k1 - k0),
            });
        }
        let outer = parts.len().min(self.threads).max(1);
        // Block-level threads only pay off when a chunk has much to decode: a selection
        // smaller than a chunk decodes a few blocks, where waking c-blosc2's threads costs
        // more than it saves (a 10-item slice: 0.11 ms with one thread, 0.29 ms with two).
        let inner = if need < g.chunk_bytes() {
            1
        } else {
            (self.threads / outer).max(1)
        };
        let lanes = workers_for(workers, outer, inner, self.geom.blocks());
        self.exec
            .for_each_lane(lanes, parts, |w, part| self.fill_part(w, sel, part))
    }

    /// Decode every chunk holding selected items of the part and copy them into it.
    fn fill_part(&self, w: &mut Worker, sel: &Selection, b: SelPart<'_>) -> Result<()> {
        let g = &self.geom;
        let nd = g.ndim();
        if nd == 0 {
            // One chunk of one item.
            let n = b.out.len();
            return match self.decode_chunk(w, 0, false)? {
                Decoded::Data => {
                    b.out.copy_from_slice(&w.decoded[..n]);
                    Ok(())
                }
                Decoded::Zeros => {
                    b.out.fill(0);
                    Ok(())
                }
            };
        }
        sel.try_for_each_chunk(g, &b.region, |chunk| {
            self.copy_chunk(w, sel, chunk, &b.region, b.out)
        })
    }

    /// Fetch chunk `idx` and decode it into `w.decoded`: with `masked`, only the blocks
    /// flagged in `w.wanted` are sure to be decoded.
    fn decode_chunk(&self, w: &mut Worker, idx: u64, masked: bool) -> Result<Decoded> {
        let g = &self.geom;
        if w.decoded.len() != g.chunk_bytes() {
            // Fresh buffers are zeroed by the allocator: the pages of blocks a mask skips
            // are never touched.
            crate::alloc::fit(&mut w.decoded, g.chunk_bytes(), "a decoded chunk")?;
        }
        let bb = g.block_bytes();
        let (c, d) = (&mut w.compressed, &mut w.decoder);
        let (wanted, decoded) = (&w.wanted, &mut w.decoded);
        // With a mask, read just the wanted blocks' bytes when that saves much.
        let mask = masked.then_some((wanted.as_slice(), bb));
        fetch_decode(
            &self.frame,
            idx,
            c,
            d,
            g.itemsize(),
            mask,
            |_| match masked {
                true => Target::Blocks(
                    decoded,
                    BlockMask {
                        wanted,
                        block_bytes: bb,
                    },
                ),
                false => Target::Whole(decoded),
            },
        )
    }

    /// Copy the selected items of one chunk into the part. `chunk[i]` is the chunk's grid
    /// coordinate along dimension `i` and the range of selected positions it holds there.
    fn copy_chunk(
        &self,
        w: &mut Worker,
        sel: &Selection,
        chunk: &[(u64, u64, u64)],
        part: &Region,
        out: &mut [u8],
    ) -> Result<()> {
        let g = &self.geom;
        let coords: Vec<u64> = chunk.iter().map(|c| c.0).collect();
        let idx = ravel(&coords, g.chunk_grid());
        let copy = sel.chunk_copy(g, chunk, part, &mut w.wanted);
        let kind = self.decode_chunk(w, idx, true)?;
        let src: &[u8] = &w.decoded;
        copy.for_each_run(|s, d, n| {
            let dst = &mut out[d..d + n];
            match kind {
                Decoded::Data => dst.copy_from_slice(&src[s..s + n]),
                Decoded::Zeros => dst.fill(0),
            }
        });
        Ok(())
    }
}

/// A selection streamed in consecutive C-order parts: see [`Array::slice_slabs`].
///
/// Read parts with [`SliceSlabs::read_next`] (reusing one buffer) or iterate (one new
/// `Vec<u8>` per part). The parts, concatenated, are exactly what
/// [`Array::read_slice_bytes`] returns.
pub struct SliceSlabs<'a> {
    array: &'a Array,
    sel: Selection,
    shape: Vec<u64>,
    /// The dimension parts are cut along; `None`: everything in one part.
    dim: Option<usize>,
    /// Current position in the dimensions before `dim`.
    prefix: Vec<u64>,
    /// Next position along `dim`.
    k: u64,
    /// Most positions along `dim` per part.
    rows_max: u64,
    done: bool,
    /// Decoders and buffers, kept from part to part.
    workers: Vec<Worker>,
}

impl std::fmt::Debug for SliceSlabs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SliceSlabs")
            .field("shape", &self.shape)
            .field("dim", &self.dim)
            .field("rows_max", &self.rows_max)
            .field("done", &self.done)
            .finish()
    }
}

impl<'a> SliceSlabs<'a> {
    fn new(array: &'a Array, sel: Selection, max_bytes: usize) -> SliceSlabs<'a> {
        let nd = sel.ndim();
        let isz = array.itemsize() as u64;
        let unit = |d: usize| sel.count[d + 1..].iter().product::<u64>() * isz;
        let mut dim = sel.count.iter().position(|&c| c > 1);
        while let Some(d) = dim {
            if unit(d) <= max_bytes as u64 {
                break;
            }
            match (d + 1..nd).find(|&j| sel.count[j] > 1) {
                Some(j) => dim = Some(j),
                None => break,
            }
        }
        let rows_max = dim.map_or(1, |d| (max_bytes as u64 / unit(d).max(1)).max(1));
        SliceSlabs {
            array,
            shape: sel.shape(),
            done: sel.nitems() == 0,
            prefix: vec![0; dim.unwrap_or(0)],
            sel,
            dim,
            k: 0,
            rows_max,
            workers: Vec::new(),
        }
    }

    /// The shape of the whole selection.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Size of the whole selection in bytes.
    pub fn nbytes(&self) -> u64 {
        self.sel.nitems() * self.array.itemsize() as u64
    }

    /// Read the next part into `buf` (resized to fit); `Ok(false)` when there is none left.
    pub fn read_next(&mut self, buf: &mut Vec<u8>) -> Result<bool> {
        if self.done {
            return Ok(false);
        }
        let sel = &self.sel;
        let nd = sel.ndim();
        let Some(d) = self.dim else {
            // At most one position per dimension: a single part.
            self.done = true;
            crate::alloc::fit(buf, self.array.sel_bytes(sel)?, "a slab of the selection")?;
            let b = SelPart {
                out: buf.as_mut_slice(),
                region: Region::whole(&sel.count),
            };
            self.array.fill_sel_part(sel, b, &mut self.workers)?;
            return Ok(true);
        };
        // Whole chunk runs along `d`, up to rows_max positions (a chunk run longer than
        // that is cut).
        let total = sel.count[d];
        let c = self.array.chunks()[d];
        let mut end = self.k;
        for (_, k0, k1) in sel.chunk_groups(d, c, self.k, total) {
            if k1 - self.k <= self.rows_max {
                end = k1;
            } else {
                if k0 == self.k {
                    end = self.k + self.rows_max;
                }
                break;
            }
        }
        let mut start = vec![0u64; nd];
        let mut len = sel.count.clone();
        for i in 0..d {
            start[i] = self.prefix[i];
            len[i] = 1;
        }
        start[d] = self.k;
        len[d] = end - self.k;
        let region = Region::new(start, len);
        crate::alloc::fit(
            buf,
            region.nitems().unwrap_or(0) as usize * self.array.itemsize(),
            "a slab of the selection",
        )?;
        let b = SelPart {
            out: buf.as_mut_slice(),
            region,
        };
        self.array.fill_sel_part(sel, b, &mut self.workers)?;
        // Advance.
        self.k = end;
        if self.k == total {
            self.k = 0;
            self.done = !step(&mut self.prefix, &ZEROS[..d], &sel.count[..d]);
        }
        Ok(true)
    }
}

impl Iterator for SliceSlabs<'_> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        let mut buf = Vec::new();
        match self.read_next(&mut buf) {
            Ok(true) => Some(Ok(buf)),
            Ok(false) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::chunk::{Decoder, Target};

    fn r(start: Option<i64>, stop: Option<i64>, step: u64) -> SliceItem {
        SliceItem::Range { start, stop, step }
    }

    #[test]
    fn parse_and_display() {
        let s: Slice = "10:20,::3,-1".parse().unwrap();
        assert_eq!(
            s.to_vec(),
            vec![
                r(Some(10), Some(20), 1),
                r(None, None, 3),
                SliceItem::Index(-1)
            ]
        );
        assert_eq!(s.to_string(), "10:20,::3,-1");
        let s: Slice = " : , 5: , :-2 , 1:2:1 , +3 ".parse().unwrap();
        assert_eq!(
            s.to_vec(),
            vec![
                SliceItem::ALL,
                r(Some(5), None, 1),
                r(None, Some(-2), 1),
                r(Some(1), Some(2), 1),
                SliceItem::Index(3)
            ]
        );
        assert_eq!(s.to_string(), ":,5:,:-2,1:2,3");
        assert_eq!("".parse::<Slice>().unwrap(), Slice::all());
        assert_eq!("  ".parse::<Slice>().unwrap(), Slice::all());
        for bad in [
            "::0",
            "1:5:0",
            "::-1",
            "5:1:-2",
            "a",
            "1,,2",
            "1,",
            ",1",
            "1:2:3:4",
            "1.5",
            "--1",
            "1:x",
            "::y",
            "99999999999999999999",
            "...",
        ] {
            let e = bad.parse::<Slice>().unwrap_err().to_string();
            assert!(e.contains("slice"), "{bad}: {e}");
        }
        let e = "0,::0".parse::<Slice>().unwrap_err().to_string();
        assert!(e.contains("item 2") && e.contains("step"), "{e}");
        let e = "::-2".parse::<Slice>().unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
    }

    #[test]
    fn resolve_follows_numpy() {
        let shape = [10u64];
        let check = |item: SliceItem, start: u64, step: u64, count: u64| {
            let s = Selection::resolve(&[item], &shape).unwrap();
            assert_eq!(
                (s.start[0], s.step[0], s.count[0]),
                (start, step, count),
                "{item}"
            );
        };
        check(r(None, None, 1), 0, 1, 10);
        check(r(Some(2), Some(8), 3), 2, 3, 2); // 2, 5
        check(r(Some(-3), None, 1), 7, 1, 3);
        check(r(Some(-30), Some(30), 1), 0, 1, 10); // clamped
        check(r(Some(8), Some(2), 1), 8, 1, 0); // empty
        check(r(Some(12), None, 1), 10, 1, 0);
        check(r(None, Some(-12), 1), 0, 1, 0);
        check(r(Some(3), None, 100), 3, 10, 1); // huge step
        check(r(None, None, u64::MAX), 0, 10, 1);
        check(r(Some(i64::MIN), Some(i64::MAX), 4), 0, 4, 3);
        check(SliceItem::Index(-1), 9, 1, 1);
        check(SliceItem::Index(0), 0, 1, 1);
        for bad in [
            SliceItem::Index(10),
            SliceItem::Index(-11),
            r(None, None, 0),
        ] {
            assert!(Selection::resolve(&[bad], &shape).is_err(), "{bad}");
        }
        assert!(Selection::resolve(&[SliceItem::ALL; 2], &shape).is_err());
        // Missing trailing dims whole; integer dims dropped; 0-d results.
        let s = Selection::resolve(&[SliceItem::Index(1)], &[3, 4, 5]).unwrap();
        assert_eq!(s.shape(), vec![4, 5]);
        let s = Selection::resolve(&[1.into(), 2.into(), (-1).into()], &[3, 4, 5]).unwrap();
        assert_eq!((s.shape(), s.nitems()), (vec![], 1));
        let s = Selection::resolve(&[], &[]).unwrap();
        assert_eq!((s.shape(), s.nitems()), (vec![], 1));
        assert!(Selection::resolve(&[SliceItem::Index(0)], &[]).is_err());
        // Empty dimension: ranges are empty, any index is out of range.
        let s = Selection::resolve(&[SliceItem::ALL, (1..3).into()], &[0, 5]).unwrap();
        assert_eq!(s.shape(), vec![0, 2]);
        assert!(Selection::resolve(&[SliceItem::Index(0)], &[0, 5]).is_err());
    }

    /// Decode chunk `idx` of a fixture whole, then with only block `want` wanted into a
    /// buffer of 0xee bytes: (whole, masked, block bytes, blocks per chunk).
    fn masked_decode(
        name: &str,
        idx: u64,
        want: usize,
        threads: usize,
    ) -> (Vec<u8>, Vec<u8>, usize) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/slices")
            .join(name);
        let a = Array::open(path).unwrap();
        let g = a.geometry();
        let mut compressed = crate::ffi::ChunkBytes::default();
        a.frame.chunk_into(idx, &mut compressed).unwrap();
        let mut d = Decoder::new(threads).with_blocks(g.blocks());
        let mut whole = vec![0u8; g.chunk_bytes()];
        assert_eq!(
            d.decode(&mut compressed, &mut whole, g.itemsize()).unwrap(),
            Decoded::Data
        );
        let nblocks = g.block_grid().iter().product::<u64>() as usize;
        let mut wanted = vec![false; nblocks];
        wanted[want] = true;
        let mask = BlockMask {
            wanted: &wanted,
            block_bytes: g.block_bytes(),
        };
        let mut masked = vec![0xeeu8; g.chunk_bytes()];
        d.decode_into(
            &mut compressed,
            g.itemsize(),
            Target::Blocks(&mut masked, mask),
        )
        .unwrap();
        (whole, masked, g.block_bytes())
    }

    #[test]
    fn partial_chunk_fetch_reads_what_the_mask_needs() {
        // Only the header, block offsets and the wanted block (plus block 0 with DELTA) are
        // read from disk; decoding that with the mask gives the wanted block's bytes.
        // Written here: compressible data with many blocks per chunk, contiguous (LZ4,
        // DELTA + SHUFFLE) and sparse (ZSTD + SHUFFLE).
        use crate::write::{ArrayBuilder, Codec, Filter, Target};
        let dir = tempfile::tempdir().unwrap();
        // 16-bit noise in 4-byte items: blocks of 16 KB compress to about half.
        let data: Vec<u8> = (0..64 * 3000u32)
            .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 16).to_le_bytes())
            .collect();
        let build = || {
            ArrayBuilder::new(
                &[64, 3000],
                crate::model::dtype::Dtype::parse("<u4").unwrap(),
            )
            .chunks(&[32, 3000])
            .blocks(&[4, 1000])
        };
        let contiguous = dir.path().join("c.b2nd");
        build()
            .codec(Codec::Lz4)
            .filters(&[Filter::Delta, Filter::Shuffle])
            .write_bytes(Target::File(contiguous.clone()), &data)
            .unwrap();
        let sparse = dir.path().join("s.b2nd");
        build()
            .codec(Codec::Zstd)
            .write_bytes(Target::Sparse(sparse.clone()), &data)
            .unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/slices");
        for (path, idx, want) in [
            (fixtures.join("unicode_u3.b2nd"), 0, 2),
            (fixtures.join("delta_c_u4.b2nd"), 1, 3),
            (fixtures.join("delta_rust_i8.b2nd"), 1, 3),
            (contiguous, 1, 13),
            (sparse.clone(), 0, 5),
            (sparse, 1, 23),
        ] {
            let name = path.display().to_string();
            let a = Array::open(path).unwrap();
            let g = a.geometry();
            let nblocks = g.block_grid().iter().product::<u64>() as usize;
            assert!(nblocks >= 4, "{name}: {nblocks} blocks");
            let mut whole_c = crate::ffi::ChunkBytes::default();
            a.frame.chunk_into(idx, &mut whole_c).unwrap();
            let mut wanted = vec![false; nblocks];
            wanted[want] = true;
            let mut part = crate::ffi::ChunkBytes::default();
            assert!(
                a.frame
                    .chunk_blocks_into(idx, &wanted, g.block_bytes(), &mut part),
                "{name}: partial fetch not taken"
            );
            // Only the bytes read are held, as a chunk of their own length.
            assert!(part.len() < whole_c.len(), "{name}: everything was read");
            let h = crate::format::chunk::ChunkHeader::parse(&part).unwrap();
            assert_eq!(h.cbytes, part.len(), "{name}");
            let mut d = Decoder::new(1).with_blocks(g.blocks());
            let mut whole = vec![0u8; g.chunk_bytes()];
            d.decode(&mut whole_c, &mut whole, g.itemsize()).unwrap();
            let mask = BlockMask {
                wanted: &wanted,
                block_bytes: g.block_bytes(),
            };
            let mut masked = vec![0xeeu8; g.chunk_bytes()];
            d.decode_into(
                &mut part,
                g.itemsize(),
                crate::codec::chunk::Target::Blocks(&mut masked, mask),
            )
            .unwrap();
            let bb = g.block_bytes();
            let block = want * bb..((want + 1) * bb).min(masked.len());
            assert_eq!(masked[block.clone()], whole[block], "{name}");
            // Most blocks wanted: the whole chunk is fetched instead.
            let all = vec![true; nblocks];
            assert!(!a
                .frame
                .chunk_blocks_into(idx, &all, g.block_bytes(), &mut part));
        }
        // In-memory frames always fetch whole chunks.
        let bytes = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/slices/d2_f8_lz4.b2nd"),
        )
        .unwrap();
        let a = Array::from_bytes(bytes).unwrap();
        let g = a.geometry();
        let nblocks = g.block_grid().iter().product::<u64>() as usize;
        let mut wanted = vec![false; nblocks];
        wanted[1] = true;
        let mut part = crate::ffi::ChunkBytes::default();
        assert!(!a
            .frame
            .chunk_blocks_into(0, &wanted, g.block_bytes(), &mut part));
    }

    #[test]
    fn masked_decoding_decodes_only_wanted_blocks() {
        let untouched = |b: &[u8]| b.iter().all(|&x| x == 0xee);
        // c-blosc2 path (LZ4 + SHUFFLE), Rust filter path (<U3: SHUFFLE meta 4): only block 2
        // is written.
        for (name, threads) in [
            ("d2_f8_lz4.b2nd", 1),
            ("d2_f8_lz4.b2nd", 3),
            ("unicode_u3.b2nd", 1),
            ("bytedelta_f4.b2nd", 2),
        ] {
            let (whole, masked, bb) = masked_decode(name, 0, 2, threads);
            assert_eq!(masked[2 * bb..3 * bb], whole[2 * bb..3 * bb], "{name}");
            assert!(untouched(&masked[..2 * bb]), "{name}: block 0/1 written");
            assert!(untouched(&masked[3 * bb..]), "{name}: later blocks written");
        }
        // DELTA (undone by C, or in Rust after a SHUFFLE): block 0 is decoded too, since the
        // wanted block is decoded against it (and c-blosc2's threads would wait for it).
        for (name, threads) in [
            ("delta_c_u4.b2nd", 1),
            ("delta_c_u4.b2nd", 2),
            ("delta_rust_i8.b2nd", 1),
            ("delta_rust_i8.b2nd", 2),
        ] {
            let (whole, masked, bb) = masked_decode(name, 1, 3, threads);
            assert_eq!(masked[3 * bb..4 * bb], whole[3 * bb..4 * bb], "{name}");
            assert_eq!(masked[..bb], whole[..bb], "{name}: block 0");
            assert!(untouched(&masked[bb..3 * bb]), "{name}: blocks 1/2 written");
            assert!(untouched(&masked[4 * bb..]), "{name}: later blocks written");
        }
    }

    #[test]
    fn chunk_groups_split_by_chunk() {
        let s = Selection::resolve(&[r(Some(1), None, 3)], &[20]).unwrap();
        // positions 1 4 7 10 13 16 19; chunks of 5: [1,4] [7] [10,13] [16,19]
        assert_eq!(
            s.chunk_groups(0, 5, 0, 7).collect::<Vec<_>>(),
            vec![(0, 0, 2), (1, 2, 3), (2, 3, 5), (3, 5, 7)]
        );
        assert_eq!(
            s.chunk_groups(0, 5, 3, 6).collect::<Vec<_>>(),
            vec![(2, 3, 5), (3, 5, 6)]
        );
        let s = Selection::resolve(&[r(None, None, 7)], &[20]).unwrap();
        // positions 0 7 14; chunks of 2: 0, 3, 7
        assert_eq!(
            s.chunk_groups(0, 2, 0, 3).collect::<Vec<_>>(),
            vec![(0, 0, 1), (3, 1, 2), (7, 2, 3)]
        );
    }
}
