//! One decoded chunk and the region it covers: what chunk reads return.

#![forbid(unsafe_code)]

use crate::error::{Error, Result};
use crate::model::dtype::Dtype;
use crate::model::element::{self, Element};
use crate::model::region::Region;

/// One decoded chunk, as [`Array::read_chunk`](crate::Array::read_chunk),
/// [`Array::iter_chunks`](crate::Array::iter_chunks) and
/// [`SChunk::read_chunk`](crate::SChunk::read_chunk) return it: its index, the region it
/// covers and that region's items.
///
/// `data` holds the region's items (padding excluded) as raw bytes in the C order of `shape`,
/// in the dtype's own byte order: `shape.iter().product() * itemsize` bytes. Edge chunks cover
/// less than the chunk shape. For an SChunk, the region is one-dimensional: the chunk's
/// items (of the SChunk's `typesize`) in the decoded stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkData {
    index: u64,
    region: Region,
    data: Vec<u8>,
}

impl ChunkData {
    /// Chunk `index` covering `region`, holding `data`.
    pub(crate) fn new(index: u64, region: Region, data: Vec<u8>) -> ChunkData {
        ChunkData {
            index,
            region,
            data,
        }
    }

    /// The chunk's index (C order over the chunk grid).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The region of the array the chunk covers (padding excluded).
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Array coordinates of the region's first item.
    pub fn origin(&self) -> &[u64] {
        self.region.start()
    }

    /// The region's shape.
    pub fn shape(&self) -> &[u64] {
        self.region.shape()
    }

    /// The region's items as raw bytes, C order, in the dtype's byte order.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The region's items, taken.
    pub fn into_data(self) -> Vec<u8> {
        self.data
    }

    /// Number of items in the region.
    pub fn nitems(&self) -> u64 {
        self.region.shape().iter().product()
    }

    /// The region's items as `T`, checked against `dtype` (the array's, see
    /// [`Array::dtype`](crate::Array::dtype)); big-endian data converted.
    ///
    /// ```no_run
    /// let a = b2nd::Array::open("data.b2nd")?; // <f8
    /// for chunk in a.iter_chunks() {
    ///     let chunk = chunk?;
    ///     let v: Vec<f64> = chunk.to_vec(a.dtype())?;
    ///     println!("{:?} {:?}: sum {}", chunk.origin(), chunk.shape(), v.iter().sum::<f64>());
    /// }
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn to_vec<T: Element + Default>(&self, dtype: &Dtype) -> Result<Vec<T>> {
        element::check::<T>(dtype)?;
        let n = self.nitems() as usize;
        if n.checked_mul(dtype.itemsize()) != Some(self.data.len()) {
            return Err(Error::BufferSize {
                expected: n.saturating_mul(dtype.itemsize()),
                got: self.data.len(),
            });
        }
        let mut out = vec![T::default(); n];
        T::fill_from_bytes(&mut out, dtype, &mut |bytes| {
            bytes.copy_from_slice(&self.data);
            Ok(())
        })?;
        Ok(out)
    }
}
