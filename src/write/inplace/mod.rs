//! [`ArrayMut`]: an existing array changed in place (write a region, resize, append, set or
//! delete attributes), every change published atomically; see `docs/in-place-writes.md`.
//!
//! One mechanism for every change: the new chunks, a new chunk index and a new trailer are
//! written *after* everything the current header reaches (contiguous frames) or to new files
//! (sparse frames), made durable, and only then published: by one header write guarded by a
//! journal (contiguous), or by renaming a new `chunks.b2frame` into place (sparse). Nothing a
//! reader of the old contents can reach is ever overwritten.

#![forbid(unsafe_code)]

mod plan;

use std::fs::File;
use std::path::{Path, PathBuf};

use super::builder::ArrayBuilder;
use super::derived;
use super::edit;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::format::frame::{read_on_disk, OnDisk};
use crate::format::frame_writer::{
    attr_chunk, ChunkRef, Contents, FrameEdit, Published, Reshape, Sizes,
};
use crate::format::journal;
use crate::format::lock::{writer_lock, FrameLock};
use crate::format::meta;
use crate::model::attrs::Value;
use crate::model::durability::Durability;
use crate::model::element::Element;
use crate::model::geometry::Geometry;
use crate::model::region::Region;
use crate::model::selection::Selection;
use crate::model::selection::SliceItem;
use crate::parallel::Threads;
use plan::Lanes;

/// An array opened for in-place changes: a contiguous `.b2nd` file, a sparse directory, or a
/// member of a `.b2d` store (see [`ArrayMut::open_in_store`]).
///
/// Each method is one change, published atomically: after a crash (or `kill -9`) at any
/// moment the file holds the whole old or the whole new contents of that change, for b2nd
/// and for python-blosc2 (see `docs/in-place-writes.md` for the guarantee and its limits).
/// Touched chunks are re-encoded with the array's own codec, level and filters, in
/// parallel; untouched chunks are not rewritten. Superseded chunks stay in a contiguous file
/// as dead space until [`ArrayMut::compact`].
///
/// One writer at a time: opening takes an exclusive advisory lock (`flock`) on the file (or
/// the sparse directory) for the life of the `ArrayMut`. [`Array`]s opened before a change
/// keep reading the contents they opened (nothing they reach is overwritten) until a
/// compaction replaces the file.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("a.b2nd");
/// b2nd::ArrayBuilder::for_type::<i32>(&[4, 4]).chunks(&[2, 2]).blocks(&[1, 2])
///     .write(b2nd::Target::File(path.clone()), &[0i32; 16])?;
/// let mut a = b2nd::ArrayMut::open(&path)?;
/// a.write_region(&b2nd::Region::new([1, 1], [2, 2]), &[1i32, 2, 3, 4])?;
/// a.append(0, &[7i32; 4])?; // one more row
/// assert_eq!(a.array().shape(), &[5, 4]);
/// drop(a);
/// let v: Vec<i32> = b2nd::Array::open(&path)?.read()?;
/// assert_eq!(&v[4..8], &[0, 1, 2, 0]);
/// assert_eq!(&v[16..], &[7; 4]);
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct ArrayMut {
    path: PathBuf,
    sparse: bool,
    /// Holds the advisory lock (the file, or the sparse directory).
    lock: File,
    array: Array,
    threads: Threads,
    /// Compression lanes kept between changes.
    lanes: Lanes,
    /// What each change survives once published.
    durability: Durability,
}

impl std::fmt::Debug for ArrayMut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayMut")
            .field("path", &self.path)
            .field("shape", &self.array.shape())
            .finish()
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl ArrayMut {
    /// Open the array at `path` (a contiguous file or a sparse directory) for changes,
    /// taking the writer's lock ([`Error::Locked`] when another writer keeps it for half a
    /// second) and finishing what an interrupted change left, if anything (a journal that
    /// belongs to another file is refused, not applied).
    pub fn open(path: impl AsRef<Path>) -> Result<ArrayMut> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(io_err(&path))?;
        if !meta.is_dir() && !meta.is_file() {
            return Err(Error::Frame {
                source_name: path.display().to_string(),
                reason: crate::format::frame::not_regular(&meta),
            });
        }
        if let Some(root) = crate::format::ctable::table_of(&path) {
            return Err(Error::Store {
                path: root.display().to_string(),
                reason: format!(
                    "{} is a member of this CTable (its columns, valid rows and summaries must \
                     change together): change it with TableMut, not its members",
                    path.display()
                ),
            });
        }
        ArrayMut::open_member(path, meta.is_dir())
    }

    /// [`ArrayMut::open`] of a table's member, for [`TableMut`](super::TableMut), which
    /// changes a table's arrays together.
    pub(crate) fn open_table_member(path: impl AsRef<Path>) -> Result<ArrayMut> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(io_err(&path))?;
        ArrayMut::open_member(path, meta.is_dir())
    }

    /// This writer, for the same file renamed to `path` (a staged member published by a
    /// directory exchange): the array reopened there, the writer's lock (on the file, not
    /// its name) kept throughout.
    pub(crate) fn moved_to(mut self, path: impl AsRef<Path>) -> Result<ArrayMut> {
        self.path = path.as_ref().to_path_buf();
        self.array = Array::open_for_writer(&self.path)?;
        self.threads = self.array.exec.clone();
        Ok(self)
    }

    fn open_member(path: PathBuf, sparse: bool) -> Result<ArrayMut> {
        let lock = writer_lock(&path, &path)?;
        if !sparse {
            journal::recover(&path)?;
        }
        let array = Array::open_for_writer(&path)?;
        if array.format() == crate::format::meta::Format::Tensor {
            return Err(Error::InvalidArgument(format!(
                "{}: a python-blosc2 save_tensor frame is read only in b2nd (its shape lives \
                 in vlmeta, which python-blosc2 rewrites whole): copy it to a b2nd array to change it",
                path.display()
            )));
        }
        let threads = array.exec.clone();
        Ok(ArrayMut {
            path,
            sparse,
            lock,
            array,
            threads,
            lanes: Lanes::default(),
            durability: Durability::Disk,
        })
    }

    /// Open the member `key` of the directory store (`.b2d`) at `store` for changes. Members
    /// of `.b2z` files and members embedded in `embed.b2e` cannot be changed in place.
    pub fn open_in_store(store: impl AsRef<Path>, key: &str) -> Result<ArrayMut> {
        let store = store.as_ref();
        let refuse = |reason: String| Error::Store {
            path: store.display().to_string(),
            reason,
        };
        if !store.is_dir() {
            return Err(refuse(
                "only members of a directory store (.b2d) can be changed in place".into(),
            ));
        }
        let rel = crate::store::keys::member_file(key).map_err(refuse)?;
        let path = store.join(rel);
        if !path.exists() {
            return Err(Error::KeyNotFound {
                store: store.display().to_string(),
                key: format!(
                    "{key} (as a .b2nd file: embedded members cannot be changed in place)"
                ),
            });
        }
        ArrayMut::open(path)
    }

    /// Where parallel encoding runs (default: the array's, see [`Array::with_threads`]).
    pub fn with_threads(mut self, threads: Threads) -> ArrayMut {
        self.threads = threads.clone();
        self.array = self.array.with_threads(threads);
        self
    }

    /// What each change survives once it returns (default [`Durability::Disk`]: syncs
    /// to the disk; [`Durability::Process`]: a killed process, not a power loss, for cheaper
    /// appends and region writes; compaction and changes that rewrite the whole file
    /// always sync).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.b2nd");
    /// b2nd::ArrayBuilder::for_type::<f64>(&[0, 4]).chunks(&[1, 4])
    ///     .write::<f64>(b2nd::Target::File(path.clone()), &[])?;
    /// let mut a = b2nd::ArrayMut::open(&path)?.with_durability(b2nd::Durability::Process);
    /// for i in 0..3 {
    ///     a.append(0, &[i as f64; 4])?;
    /// }
    /// assert_eq!(b2nd::Array::open(&path)?.shape(), &[3, 4]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn with_durability(mut self, durability: Durability) -> ArrayMut {
        self.durability = durability;
        self
    }

    /// The array as it is now (after the last change).
    pub fn array(&self) -> &Array {
        &self.array
    }

    /// The path being changed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `data` (raw bytes in the dtype's byte order, C order of the region) into
    /// `region`, which must lie inside the array.
    pub fn write_region_bytes(&mut self, region: &Region, data: &[u8]) -> Result<()> {
        self.check_region(region, data.len())?;
        let new_shape = self.array.shape().to_vec();
        self.change(&new_shape, Some((region, data)), None)
    }

    /// Write `data` (raw bytes in the dtype's byte order, in the C order of the slice's shape,
    /// [`Array::slice_shape`]) into a NumPy basic-indexing slice whose steps are all 1, as
    /// python-blosc2's `a[items] = data` does (integer indices drop their dimension, bounds
    /// clamp). An empty slice changes nothing.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.b2nd");
    /// b2nd::ArrayBuilder::for_type::<i16>(&[3, 4]).write(b2nd::Target::File(path.clone()), &[0i16; 12])?;
    /// let mut a = b2nd::ArrayMut::open(&path)?;
    /// let s: b2nd::Slice = "1, 1:3".parse()?;
    /// a.write_slice_bytes(&s, &[5u8, 0, 6, 0])?;
    /// assert_eq!(a.array().read::<i16>()?, [0, 0, 0, 0, 0, 5, 6, 0, 0, 0, 0, 0]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn write_slice_bytes(&mut self, items: &[SliceItem], data: &[u8]) -> Result<()> {
        if let Some((d, step)) = items.iter().enumerate().find_map(|(d, i)| match i {
            SliceItem::Range { step, .. } if *step != 1 => Some((d, *step)),
            _ => None,
        }) {
            return Err(Error::InvalidArgument(format!(
                "dimension {d}: step {step}: slices written in place take steps of 1"
            )));
        }
        let sel = Selection::resolve(items, self.array.shape())?;
        let region = sel.contiguous_region().expect("steps of 1 make one region");
        if region.nitems() == Some(0) {
            return match data.len() {
                0 => Ok(()),
                n => Err(Error::BufferSize {
                    expected: 0,
                    got: n,
                }),
            };
        }
        self.write_region_bytes(&region, data)
    }

    /// Write typed items into `region` (`T` must be the array's dtype).
    pub fn write_region<T: Element>(&mut self, region: &Region, data: &[T]) -> Result<()> {
        self.check_type::<T>()?;
        self.write_region_bytes(region, &T::as_bytes(data))
    }

    /// Write an ndarray view at `start` (its shape is the region's).
    #[cfg(feature = "ndarray")]
    pub fn write_ndarray<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        &mut self,
        start: &[u64],
        view: &ndarray::ArrayBase<S, D>,
    ) -> Result<()> {
        let shape: Vec<u64> = view.shape().iter().map(|&s| s as u64).collect();
        let items: Vec<T> = view.iter().cloned().collect();
        self.write_region(&Region::new(start, shape), &items)
    }

    /// Change the shape (same number of dimensions). Grown positions read as zeros, as
    /// python-blosc2's `resize` leaves them; shrinking drops the positions outside.
    pub fn resize(&mut self, shape: &[u64]) -> Result<()> {
        if shape.len() != self.array.ndim() {
            return Err(Error::InvalidArgument(format!(
                "new shape {shape:?} has {} dimensions, the array {}",
                shape.len(),
                self.array.ndim()
            )));
        }
        self.change(shape, None, None)
    }

    /// Append `data` (raw bytes, C order) along `axis`: its shape is the array's with
    /// `axis` replaced by however many positions `data` holds. Grows the array and writes
    /// the data, published as one change.
    pub fn append_bytes(&mut self, axis: usize, data: &[u8]) -> Result<()> {
        let shape = self.array.shape().to_vec();
        if axis >= shape.len() {
            return Err(Error::InvalidArgument(format!(
                "axis {axis} of a {}-dimensional array",
                shape.len()
            )));
        }
        let slice_bytes = shape
            .iter()
            .enumerate()
            .filter(|&(d, _)| d != axis)
            .map(|(_, &s)| s)
            .product::<u64>()
            .saturating_mul(self.array.itemsize() as u64);
        if slice_bytes == 0 || !(data.len() as u64).is_multiple_of(slice_bytes) {
            return Err(Error::InvalidArgument(format!(
                "{} bytes are not whole slices of {slice_bytes} bytes along axis {axis}",
                data.len()
            )));
        }
        let added = data.len() as u64 / slice_bytes;
        let mut new_shape = shape.clone();
        new_shape[axis] = shape[axis]
            .checked_add(added)
            .ok_or_else(|| Error::InvalidArgument("the new shape overflows".into()))?;
        let mut start = vec![0; shape.len()];
        start[axis] = shape[axis];
        let mut region_shape = shape;
        region_shape[axis] = added;
        let region = Region::new(start, region_shape);
        self.change(&new_shape, Some((&region, data)), None)
    }

    /// Append typed items along `axis` (see [`ArrayMut::append_bytes`]).
    pub fn append<T: Element>(&mut self, axis: usize, data: &[T]) -> Result<()> {
        self.check_type::<T>()?;
        self.append_bytes(axis, &T::as_bytes(data))
    }

    /// Set (add or replace) the attribute `name`.
    pub fn set_attr(&mut self, name: &str, value: &Value) -> Result<()> {
        self.set_attrs(&[(name, value.clone())])
    }

    /// Set several attributes, published as one change.
    pub fn set_attrs(&mut self, attrs: &[(&str, Value)]) -> Result<()> {
        let mut vlmeta = self.current()?.parts.vlmeta;
        edit::set_in(&mut vlmeta, attrs, self.array.source())?;
        let shape = self.array.shape().to_vec();
        self.change(&shape, None, Some(vlmeta))
    }

    /// Delete the attribute `name` (an error when there is none).
    pub fn delete_attr(&mut self, name: &str) -> Result<()> {
        let mut vlmeta = self.current()?.parts.vlmeta;
        edit::delete_in(&mut vlmeta, name, self.array.source())?;
        let shape = self.array.shape().to_vec();
        self.change(&shape, None, Some(vlmeta))
    }

    /// Rewrite the array without dead space (superseded chunks, old indexes and trailers),
    /// copying the live chunks as they are, into a new file renamed over the old one (a
    /// sparse frame: delete chunk files nothing refers to). [`Array`]s opened before must be
    /// reopened afterwards.
    pub fn compact(&mut self) -> Result<()> {
        let sidecar = FrameLock::open(&self.path, self.sparse, true)?;
        let _held = sidecar.as_ref().map(FrameLock::exclusive).transpose()?;
        self.follow_others()?;
        let disk = self.current()?;
        let edit = FrameEdit {
            path: &self.path,
            sparse: self.sparse,
            disk: &disk,
            durability: self.durability,
        };
        if self.sparse {
            return edit.remove_unreferenced_chunk_files();
        }
        let offsets = self.old_offsets(&disk)?;
        let mut chunks = Vec::with_capacity(offsets.len());
        let mut buf = crate::ffi::ChunkBytes::default();
        for (n, &o) in offsets.iter().enumerate() {
            if o < 0 {
                chunks.push(ChunkRef::Code(o));
                continue;
            }
            self.array.frame.chunk_into(n as u64, &mut buf)?;
            chunks.push(ChunkRef::Bytes(buf.to_vec()));
        }
        edit.rewrite(Contents {
            chunks,
            vlmeta: &disk.parts.vlmeta,
            sizes: Sizes::Keep,
        })?;
        self.reopen(true)
    }

    fn check_type<T: Element>(&self) -> Result<()> {
        if *self.array.dtype() != T::dtype() {
            return Err(Error::TypeMismatch {
                dtype: self.array.dtype().to_numpy_str(),
                requested: T::NAME,
            });
        }
        Ok(())
    }

    fn check_region(&self, region: &Region, len: usize) -> Result<()> {
        let nd = self.array.ndim();
        if region.ndim() != nd {
            return Err(Error::InvalidArgument(format!(
                "region of {} dimensions in a {nd}-dimensional array",
                region.ndim()
            )));
        }
        if !region.fits_in(self.array.shape()) {
            return Err(Error::InvalidArgument(format!(
                "region {:?} + {:?} exceeds the array's shape {:?}",
                region.start(),
                region.shape(),
                self.array.shape()
            )));
        }
        let want = region
            .nitems()
            .and_then(|n| n.checked_mul(self.array.itemsize() as u64));
        if want != Some(len as u64) {
            return Err(Error::BufferSize {
                expected: want.unwrap_or(u64::MAX) as usize,
                got: len,
            });
        }
        Ok(())
    }

    /// The frame as it is on disk now.
    fn current(&self) -> Result<OnDisk> {
        if self.sparse {
            read_on_disk(&self.path.join("chunks.b2frame"), true)
        } else {
            read_on_disk(&self.path, false)
        }
    }

    /// The current chunk index entries, as many as the array's geometry has chunks.
    fn old_offsets(&self, disk: &OnDisk) -> Result<Vec<i64>> {
        let g = self.array.geometry();
        let n = if g.nitems() == 0 { 0 } else { g.nchunks() };
        let offsets = disk.offsets()?;
        if offsets.len() as u64 != n {
            return Err(self.bad(format!(
                "chunk index: {} entries for {n} chunks",
                offsets.len()
            )));
        }
        Ok(offsets)
    }

    /// The geometry of the array with `shape` (its chunks and blocks).
    fn geometry_for(&self, shape: &[u64]) -> Result<Geometry> {
        let g0 = self.array.geometry();
        if shape == g0.shape() {
            return Ok(g0.clone());
        }
        let m = self.array.nd_meta();
        let shape_i: Vec<i64> = shape
            .iter()
            .map(|&s| i64::try_from(s))
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| Error::InvalidArgument(format!("shape {shape:?} too large")))?;
        Geometry::new(&shape_i, &m.chunks, &m.blocks, g0.itemsize())
            .map_err(|e| Error::InvalidArgument(format!("new shape {shape:?}: {e}")))
    }

    /// The one mechanism: the array with `shape`, `write` written into it, and the
    /// attributes `vlmeta` (unchanged when `None`), published atomically.
    fn change(
        &mut self,
        shape: &[u64],
        write: Option<(&Region, &[u8])>,
        vlmeta: Option<Vec<(String, Vec<u8>)>>,
    ) -> Result<()> {
        // python-blosc2's lock (c-blosc2 3.2+), when it is used: taken exclusively (which
        // advances its generation counter) from reading the current state until the change
        // is published (dropped at the end of this function).
        let sidecar = FrameLock::open(&self.path, self.sparse, true)?;
        let _held = sidecar.as_ref().map(FrameLock::exclusive).transpose()?;
        self.follow_others()?;
        let disk = self.current()?;
        let old_offsets = self.old_offsets(&disk)?;
        let g0 = self.array.geometry().clone();
        let g1 = self.geometry_for(shape)?;
        let sources = plan::sources(&g0, &g1, &old_offsets, write.map(|(r, _)| r));
        let mut built = vec![None; sources.len()];
        if plan::encodes(&self.array, &sources)? {
            let mut builder = ArrayBuilder::like(&self.array);
            builder.shape = shape.to_vec();
            builder.threads = self.threads.clone();
            let encoding = builder.plan()?;
            let inputs =
                plan::partial_inputs(&self.array, &g1, &sources, write, &mut self.lanes.spare)?;
            built = self.lanes.encode(
                &self.threads,
                self.array.threads(),
                &encoding,
                &g1,
                &sources,
                write,
                &inputs,
            )?;
            self.lanes.recycle(inputs);
        }
        let chunks = plan::chunk_refs(&sources, built);
        // A change of the data (not of attributes alone) makes python-blosc2's indexes
        // stale and its query cache wrong: both are fixed in the same published trailer.
        let data_changed = write.is_some() || shape != g0.shape();
        let mut vlmeta = vlmeta.unwrap_or_else(|| disk.parts.vlmeta.clone());
        if data_changed {
            derived::invalidate(&mut vlmeta, self.array.source(), attr_chunk)?;
        }
        let reshape = self.reshape(&disk, shape)?;
        let published = FrameEdit {
            path: &self.path,
            sparse: self.sparse,
            disk: &disk,
            durability: self.durability,
        }
        .publish(Contents {
            chunks,
            vlmeta: &vlmeta,
            sizes: reshape.map_or(Sizes::Keep, Sizes::Reshape),
        })?;
        self.reopen(published == Published::Replaced)?;
        if data_changed {
            // Published: nothing refers to the query cache's payload any more.
            derived::remove_query_cache_payload(&self.path)?;
        }
        Ok(())
    }

    /// The metalayer and chunk size of the array with `shape` (`None`: the shape stays).
    fn reshape<'d>(&self, disk: &'d OnDisk, shape: &[u64]) -> Result<Option<Reshape<'d>>> {
        let a = &self.array;
        if shape == a.shape() {
            return Ok(None);
        }
        let m = a.nd_meta();
        let name = m.format.name();
        let old = disk
            .parts
            .metalayer(name)
            .ok_or_else(|| self.bad(format!("no `{name}` metalayer")))?;
        let reencoded = meta::encode(m.format, &m.shape, &m.chunks, &m.blocks, m.dtype.as_deref());
        if reencoded != old {
            return Err(self.bad(format!(
                "the `{name}` metalayer is not laid out as c-blosc2 writes it, so its shape cannot be rewritten"
            )));
        }
        let shape_i: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
        // The extended chunk (whole blocks), from the shapes: an empty array's geometry
        // reports no chunk bytes.
        let chunk_bytes = a.geometry().ext_chunk_bytes();
        Ok(Some(Reshape {
            name,
            content: meta::encode(m.format, &shape_i, &m.chunks, &m.blocks, m.dtype.as_deref()),
            chunk_bytes,
        }))
    }

    fn bad(&self, reason: String) -> Error {
        Error::Frame {
            source_name: self.array.source().into(),
            reason,
        }
    }

    /// Follow a change another writer (python-blosc2) published since this array was last
    /// read, so that the next change starts from what the file holds now.
    fn follow_others(&mut self) -> Result<()> {
        if !self.array.frame.unchanged() {
            self.reopen(false)?;
        }
        Ok(())
    }

    /// Open the new contents; `replaced`: a rewrite renamed a new file into place, whose
    /// lock is taken now (a writer in another process that opened the path meanwhile found
    /// the old file locked, or locks the new one first and this fails with `Locked`).
    fn reopen(&mut self, replaced: bool) -> Result<()> {
        if replaced {
            self.lock = writer_lock(&self.path, &self.path)?;
        }
        self.array = Array::open_for_writer(&self.path)?.with_threads(self.threads.clone());
        Ok(())
    }
}
