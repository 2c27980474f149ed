//! Walking an array chunk by chunk, for arrays larger than memory.

#![forbid(unsafe_code)]

use crate::array::Array;
use crate::codec::chunk::{Decoded, Target};
use crate::codec::worker::{fetch_decode, workers_for, Worker};
use crate::error::{Error, Result};
use crate::model::chunk_data::ChunkData;

/// Sequential iterator over an array's chunks: see [`Array::iter_chunks`].
pub struct ChunkIter<'a> {
    array: &'a Array,
    next: u64,
    end: u64,
    worker: Worker,
}

impl std::fmt::Debug for ChunkIter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChunkIter")
            .field("next", &self.next)
            .field("end", &self.end)
            .finish()
    }
}

impl Iterator for ChunkIter<'_> {
    type Item = Result<ChunkData>;

    fn next(&mut self) -> Option<Result<ChunkData>> {
        if self.next >= self.end {
            return None;
        }
        let idx = self.next;
        self.next += 1;
        Some(self.array.chunk_data(idx, &mut self.worker))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.end - self.next).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for ChunkIter<'_> {}

impl Array {
    /// Number of chunks holding data: 0 for an empty array, 1 for a 0-d one.
    fn data_chunks(&self) -> u64 {
        if self.nitems() == 0 {
            0
        } else {
            self.geom.nchunks()
        }
    }

    /// Iterate over the chunks in index order, decoding one at a time: memory stays at about
    /// one chunk whatever the array's size. Each item is the chunk's region and data (see
    /// [`ChunkData`]); an error for one chunk does not end the iteration.
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("big.b2nd")?;
    /// let mut total = 0u64;
    /// for chunk in a.iter_chunks() {
    ///     let chunk = chunk?;
    ///     total += chunk.nitems();
    /// }
    /// assert_eq!(total, a.nitems());
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn iter_chunks(&self) -> ChunkIter<'_> {
        ChunkIter {
            array: self,
            next: 0,
            end: self.data_chunks(),
            worker: Worker::new(self.threads, self.geom.blocks()),
        }
    }

    /// Decode chunk `index` (C order over the chunk grid; see [`Array::iter_chunks`]).
    pub fn read_chunk(&self, index: u64) -> Result<ChunkData> {
        if index >= self.data_chunks() {
            return Err(Error::InvalidArgument(format!(
                "chunk {index} out of range: the array has {} chunks",
                self.data_chunks()
            )));
        }
        self.workers.with(|ws| {
            let w = &mut workers_for(ws, 1, self.threads, self.geom.blocks())[0];
            self.chunk_data(index, w)
        })
    }

    /// Call `f` on every chunk, decoding chunks in parallel on [`Array::threads`] threads
    /// (in no particular order); each thread holds one decoded chunk at a time. Stops at the
    /// first error (from decoding or from `f`).
    ///
    /// ```no_run
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// let a = b2nd::Array::open("big.b2nd")?;
    /// let nonzero = AtomicU64::new(0);
    /// a.par_for_each_chunk(|c| {
    ///     let n = c.to_vec::<f64>(a.dtype())?.iter().filter(|&&x| x != 0.0).count();
    ///     nonzero.fetch_add(n as u64, Ordering::Relaxed);
    ///     Ok::<(), b2nd::Error>(())
    /// })?;
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn par_for_each_chunk<E, F>(&self, f: F) -> Result<(), E>
    where
        E: From<Error> + Send,
        F: Fn(ChunkData) -> Result<(), E> + Sync + Send,
    {
        let n = self.data_chunks();
        // One lane per thread, each decoding whole chunks; a single lane uses the block-level
        // threads instead.
        let outer = (n.min(self.threads as u64) as usize).max(1);
        let inner = (self.threads / outer).max(1);
        self.workers.with(|ws| {
            let lanes = workers_for(ws, outer, inner, self.geom.blocks());
            self.exec.for_each_lane(lanes, 0..n, |w, idx| {
                f(self.chunk_data(idx, w).map_err(E::from)?)
            })
        })
    }

    /// Fetch and decode chunk `idx` into its region's C-order bytes.
    fn chunk_data(&self, idx: u64, w: &mut Worker) -> Result<ChunkData> {
        let g = &self.geom;
        let region = g.chunk_region(idx);
        let bytes = region.shape().iter().product::<u64>() as usize * g.itemsize();
        let mut data = crate::alloc::zeroed(bytes, "a chunk")?;
        crate::alloc::fit(&mut w.decoded, g.chunk_bytes(), "a decoded chunk")?;
        let (c, d, decoded) = (&mut w.compressed, &mut w.decoder, &mut w.decoded);
        let kind = fetch_decode(&self.frame, idx, c, d, g.itemsize(), None, |_| {
            Target::Whole(decoded)
        })?;
        if kind == Decoded::Data {
            g.copy_chunk_to_region(idx, &w.decoded, &mut data, &region)
                .map_err(|e| self.layout_error(idx, e))?;
        }
        Ok(ChunkData::new(idx, region, data))
    }
}
