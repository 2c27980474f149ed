//! [`ArrayMut`]: an existing array changed in place (write a region, resize, append, set or
//! delete attributes), every change published atomically; see `docs/in-place-writes.md`.
//!
//! One mechanism for every change: the new chunks, a new chunk index and a new trailer are
//! written *after* everything the current header reaches (contiguous frames) or to new files
//! (sparse frames), made durable, and only then published: by one header write guarded by a
//! journal (contiguous), or by renaming a new `chunks.b2frame` into place (sparse). Nothing a
//! reader of the old contents can reach is ever overwritten.

#![forbid(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};

use super::builder::ArrayBuilder;
use super::derived;
use super::staging::parent_dir;
use super::writer::{pack_chunk, Packer};
use crate::array::Array;
use crate::error::Error;
use crate::error::Result;
use crate::ffi::Cctx;
use crate::ffi::CompressParams;
use crate::format::frame::{read_on_disk, OnDisk};
use crate::format::journal::{journal_path, HeaderState, Journal};
use crate::format::lock::FrameLock;
use crate::format::meta;
use crate::format::parts::{special_offset, trailer_bytes, ZERO_CHUNK_OFFSET};
use crate::model::attrs::Value;
use crate::model::codec::Codec;
use crate::model::codec::Filter;
use crate::model::element::Element;
use crate::model::geometry::Geometry;
use crate::model::region::Region;
use crate::model::region::{copy_overlap, ravel};
use crate::model::selection::SliceItem;
use crate::parallel::Threads;
use crate::read::slice::Selection;
use std::path::Path;
use std::path::PathBuf;

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
/// a.write_region(&[1, 1], &[2, 2], &[1i32, 2, 3, 4])?;
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
    /// Compression lanes kept between changes, and the block threads they were made with.
    lanes: Vec<Packer>,
    lane_threads: i16,
}

impl std::fmt::Debug for ArrayMut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayMut")
            .field("path", &self.path)
            .field("shape", &self.array.shape())
            .finish()
    }
}

/// Where chunk `n` of the new contents comes from.
enum Source {
    /// The old chunk's index entry, kept as it is.
    Keep(i64),
    /// A chunk of zeros (grown area).
    Zeros,
    /// Encoded anew: from the written data alone (`full`), or from old data and written data.
    Build { full: bool },
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Take the writer's lock on `what` (for the array at `path`), waiting up to half a second:
/// a lock can be held briefly by a process another thread of this program is starting
/// (a forked child shares the open file until it executes its program).
fn lock_file(path: &Path, what: &Path) -> Result<File> {
    let f = File::open(what).map_err(io_err(what))?;
    let mut wait = std::time::Duration::from_micros(200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(f),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    path: path.to_path_buf(),
                })
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err(what)(e)),
        }
    }
}

/// The CTable (python-blosc2's layout: a root holding `_meta`, `_valid_rows` and `_cols/`,
/// summaries under `_indexes/`) that the file at `path` belongs to, if any.
fn table_of(path: &Path) -> Option<PathBuf> {
    let is_root = |d: &Path| {
        d.join("_cols").is_dir()
            && (d.join("_meta.b2f").exists() || d.join("_valid_rows.b2nd").exists())
    };
    let parent = path.parent()?;
    let name = path.file_name()?.to_str()?;
    if name.starts_with("_valid_rows.") && is_root(parent) {
        return Some(parent.to_path_buf());
    }
    let mut dir = parent;
    loop {
        let here = dir.file_name().and_then(|n| n.to_str());
        let up = dir.parent()?;
        if matches!(here, Some("_cols" | "_indexes")) && is_root(up) {
            return Some(up.to_path_buf());
        }
        dir = up;
    }
}

/// Make the directory entry changes in `dir` durable (a no-op where directories cannot be
/// opened).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Finish what an interrupted header publication left: a valid journal means all the data
/// its new header refers to was made durable before it was written, so the new header is
/// written (again) when the file holds the old one or a mix of both (a torn write); then the
/// journal is removed. An invalid (incomplete) journal means the header write had not
/// started: it is removed. A valid journal whose headers the file matches in no way belongs
/// to another file (copied or left beside this one) and is refused, never applied.
fn recover(path: &Path) -> Result<()> {
    let jpath = journal_path(path);
    if std::fs::symlink_metadata(&jpath).is_err() {
        return Ok(());
    }
    if let Some(j) = Journal::read(path) {
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        let mut head = vec![0u8; j.new.len()];
        let state = match crate::storage::read_at(&f, &mut head, 0) {
            Some(()) => j.state_of(&head),
            None => HeaderState::Foreign,
        };
        match state {
            HeaderState::New => {}
            HeaderState::Old | HeaderState::Torn => {
                f.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
                f.write_all(&j.new).map_err(io_err(path))?;
                f.sync_data().map_err(io_err(path))?;
            }
            HeaderState::Foreign => {
                return Err(Error::Frame {
                    source_name: path.display().to_string(),
                    reason: format!(
                        "{} belongs to another file or version (its headers match neither \
                         this file's header nor a mix of them): remove it to change this array",
                        jpath.display()
                    ),
                });
            }
        }
    }
    std::fs::remove_file(&jpath).map_err(io_err(&jpath))?;
    Ok(())
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
        if let Some(root) = table_of(&path) {
            return Err(Error::Store {
                path: root.display().to_string(),
                reason: format!(
                    "{} is a member of this CTable (its columns, valid rows and summaries must \
                     change together): change the table as a table, not its members",
                    path.display()
                ),
            });
        }
        let sparse = meta.is_dir();
        let lock = lock_file(&path, &path)?;
        if !sparse {
            recover(&path)?;
        }
        let array = Array::open_for_writer(&path)?;
        let threads = array.exec.clone();
        Ok(ArrayMut {
            path,
            sparse,
            lock,
            array,
            threads,
            lanes: Vec::new(),
            lane_threads: 0,
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

    /// The array as it is now (after the last change).
    pub fn array(&self) -> &Array {
        &self.array
    }

    /// The path being changed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `data` (raw bytes in the dtype's byte order, C order of the region) into the
    /// region `[start, start + shape)`, which must lie inside the array.
    pub fn write_region_bytes(&mut self, start: &[u64], shape: &[u64], data: &[u8]) -> Result<()> {
        let region = self.check_region(start, shape, data.len())?;
        let new_shape = self.array.shape().to_vec();
        self.change(&new_shape, Some((&region, data)), None)
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
        self.write_region_bytes(region.start(), region.shape(), data)
    }

    /// Write typed items into the region `[start, start + shape)` (`T` must be the array's
    /// dtype).
    pub fn write_region<T: Element>(
        &mut self,
        start: &[u64],
        shape: &[u64],
        data: &[T],
    ) -> Result<()> {
        self.check_type::<T>()?;
        self.write_region_bytes(start, shape, &T::as_bytes(data))
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
        self.write_region(start, &shape, &items)
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
        for (name, value) in attrs {
            if name.is_empty() || name.len() >= 32 {
                return Err(Error::Attr {
                    source_name: self.array.source().into(),
                    name: (*name).into(),
                    reason: "names have 1 to 31 bytes".into(),
                });
            }
            let stored = compress_attr(&value.encode()).map_err(|e| Error::Attr {
                source_name: self.array.source().into(),
                name: (*name).into(),
                reason: format!("could not compress it ({e})"),
            })?;
            match vlmeta.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = stored,
                None => vlmeta.push((name.to_string(), stored)),
            }
        }
        let shape = self.array.shape().to_vec();
        self.change(&shape, None, Some(vlmeta))
    }

    /// Delete the attribute `name` (an error when there is none).
    pub fn delete_attr(&mut self, name: &str) -> Result<()> {
        let mut vlmeta = self.current()?.parts.vlmeta;
        let before = vlmeta.len();
        vlmeta.retain(|(n, _)| n != name);
        if vlmeta.len() == before {
            return Err(Error::Attr {
                source_name: self.array.source().into(),
                name: name.into(),
                reason: "no such attribute".into(),
            });
        }
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
        if self.sparse {
            let disk = self.current()?;
            let live: std::collections::HashSet<i64> = self
                .old_offsets(&disk)?
                .into_iter()
                .filter(|&o| o >= 0)
                .collect();
            for e in std::fs::read_dir(&self.path).map_err(io_err(&self.path))? {
                let e = e.map_err(io_err(&self.path))?;
                if let Some(id) = chunk_file_id(&e.file_name()) {
                    if !live.contains(&id) {
                        std::fs::remove_file(e.path()).map_err(io_err(&e.path()))?;
                    }
                }
            }
            return Ok(());
        }
        let disk = self.current()?;
        let offsets = self.old_offsets(&disk)?;
        let mut chunks = Vec::with_capacity(offsets.len());
        let mut buf = crate::ffi::ChunkBytes::default();
        for (n, &o) in offsets.iter().enumerate() {
            if o < 0 {
                chunks.push(Built::Code(o));
                continue;
            }
            self.array.frame.chunk_into(n as u64, &mut buf)?;
            chunks.push(Built::Bytes(buf.to_vec()));
        }
        let shape = self.array.shape().to_vec();
        self.publish_rewrite(&disk, &shape, chunks, &disk.parts.vlmeta)?;
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

    fn check_region(&self, start: &[u64], shape: &[u64], len: usize) -> Result<Region> {
        let nd = self.array.ndim();
        if start.len() != nd || shape.len() != nd {
            return Err(Error::InvalidArgument(format!(
                "region of {} / {} dimensions in a {nd}-dimensional array",
                start.len(),
                shape.len()
            )));
        }
        let region = Region::new(start.to_vec(), shape.to_vec());
        if !region.fits_in(self.array.shape()) {
            return Err(Error::InvalidArgument(format!(
                "region {start:?} + {shape:?} exceeds the array's shape {:?}",
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
        Ok(region)
    }

    /// The frame as it is on disk now.
    fn current(&self) -> Result<OnDisk> {
        if self.sparse {
            read_on_disk(&self.path.join("chunks.b2frame"), true)
        } else {
            read_on_disk(&self.path, false)
        }
    }

    /// The current chunk index entries, decoded at once from the index chunk.
    fn old_offsets(&self, disk: &OnDisk) -> Result<Vec<i64>> {
        let g = self.array.geometry();
        let n = if g.nitems() == 0 { 0 } else { g.nchunks() } as usize;
        if n == 0 {
            return Ok(Vec::new());
        }
        let bad = |why: String| self.bad(format!("chunk index: {why}"));
        let ix = &disk.index;
        if ix.len() < 16 {
            return Err(bad("truncated".into()));
        }
        let nbytes = u32::from_le_bytes([ix[4], ix[5], ix[6], ix[7]]) as usize;
        if nbytes < n * 8 || nbytes > n * 8 + (1 << 20) {
            return Err(bad(format!("{nbytes} bytes of offsets for {n} chunks")));
        }
        let mut raw = vec![0u8; nbytes];
        let got = crate::ffi::Dctx::new(1)
            .decompress(ix, &mut raw)
            .map_err(|e| bad(e.to_string()))?;
        if got != nbytes {
            return Err(bad(format!("decoded {got} of {nbytes} bytes")));
        }
        Ok(raw
            .chunks_exact(8)
            .take(n)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect())
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
        let a = &self.array;
        let disk = self.current()?;
        let old_offsets = self.old_offsets(&disk)?;
        let g0 = a.geometry().clone();
        let g1 = if shape == g0.shape() {
            g0.clone()
        } else {
            let m = a.metalayer();
            let shape_i: Vec<i64> = shape
                .iter()
                .map(|&s| i64::try_from(s))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| Error::InvalidArgument(format!("shape {shape:?} too large")))?;
            Geometry::new(&shape_i, &m.chunks, &m.blocks, g0.itemsize())
                .map_err(|e| Error::InvalidArgument(format!("new shape {shape:?}: {e}")))?
        };
        let n0 = old_offsets.len() as u64;
        let n1 = if g1.nitems() == 0 { 0 } else { g1.nchunks() };

        // Where each new chunk comes from.
        let mut sources = Vec::with_capacity(n1 as usize);
        for idx in 0..n1 {
            let ext = g1.chunk_region(idx);
            let coords = g1.chunk_coords(idx);
            let old = (n0 > 0 && coords.iter().zip(g0.chunk_grid()).all(|(c, n)| c < n))
                .then(|| ravel(&coords, g0.chunk_grid()));
            let covered = write.and_then(|(r, _)| r.intersect(&ext));
            let full = covered.as_ref() == Some(&ext);
            sources.push(match (old, covered) {
                (_, Some(_)) if full => Source::Build { full: true },
                (Some(i0), None) if g0.chunk_region(i0) == ext => {
                    Source::Keep(old_offsets[i0 as usize])
                }
                (None, None) => Source::Zeros,
                _ => Source::Build { full: false },
            });
        }

        // Chunks to encode need the array's compression plan (refused when its codec or
        // filters can be read but not written); changes that encode nothing (attributes,
        // resizes along whole chunks) do not.
        let plan = if sources.iter().any(|s| matches!(s, Source::Build { .. })) {
            if matches!(a.codec(), Codec::Other { .. })
                || a.filters()
                    .iter()
                    .any(|f| matches!(f, Filter::Other { .. }))
            {
                return Err(Error::InvalidArgument(format!(
                    "{}: codec {} / filters {:?} can be read but not written, so its chunks cannot be re-encoded",
                    a.source(),
                    a.codec_name(),
                    a.filter_names()
                )));
            }
            // A lossy pipeline re-encoding decoded data changes values nobody wrote (ZFP's
            // modes and NDMEAN's cell means are not idempotent): only chunks made wholly of
            // new data may be encoded then.
            let lossy = matches!(
                a.codec(),
                Codec::ZfpAccuracy(_) | Codec::ZfpPrecision(_) | Codec::ZfpRate(_)
            ) || a.filters().iter().any(|f| matches!(f, Filter::NdMean(_)));
            if let Some(idx) = sources
                .iter()
                .position(|s| matches!(s, Source::Build { full: false }))
                .filter(|_| lossy)
            {
                return Err(Error::InvalidArgument(format!(
                    "{}: codec {} / filters {:?} are lossy: re-encoding chunk {idx} would change values outside the written region (write whole chunks, or grow and shrink along chunk boundaries)",
                    a.source(),
                    a.codec_name(),
                    a.filter_names()
                )));
            }
            let mut builder = ArrayBuilder::like(a);
            builder.shape = shape.to_vec();
            builder.threads = self.threads.clone();
            Some(builder.plan()?)
        } else {
            None
        };

        // Old data of partly written or re-cut chunks, read first (reads run in parallel
        // inside), then every chunk to build encoded in parallel.
        let isz = g1.itemsize();
        let mut inputs: Vec<(u64, Vec<u8>)> = Vec::new();
        for (idx, s) in sources.iter().enumerate() {
            let idx = idx as u64;
            if !matches!(s, Source::Build { full: false }) {
                continue;
            }
            let ext = g1.chunk_region(idx);
            let mut buf = vec![0u8; ext.nitems().unwrap_or(0) as usize * isz];
            if let Some(keep) = Region::whole(g0.shape()).intersect(&ext) {
                let mut old = vec![0u8; keep.nitems().unwrap_or(0) as usize * isz];
                a.read_region_into(&keep, &mut old)?;
                copy_overlap(&keep, &old, &ext, &mut buf, isz);
            }
            if let Some((r, data)) = write {
                copy_overlap(r, data, &ext, &mut buf, isz);
            }
            inputs.push((idx, buf));
        }
        let mut built: Vec<Option<Vec<u8>>> = vec![None; n1 as usize];
        if let Some(plan) = &plan {
            let mut jobs: Vec<Job<'_>> = Vec::new();
            let mut input_iter = inputs.iter();
            for (idx, slot) in built.iter_mut().enumerate() {
                let idx = idx as u64;
                match sources[idx as usize] {
                    Source::Build { full: true } => {
                        let (r, data) = write.expect("a full chunk comes from a write");
                        jobs.push((idx, data, r.clone(), slot));
                    }
                    Source::Build { full: false } => {
                        let (_, buf) = input_iter.next().expect("read above");
                        jobs.push((idx, buf, g1.chunk_region(idx), slot));
                    }
                    _ => {}
                }
            }
            // One lane per chunk up to the thread count; fewer chunks than threads share the
            // threads inside each chunk (block-parallel compression). Lanes (contexts and
            // buffers) are kept across changes.
            let threads = self.array.threads().max(1);
            let lanes_n = threads.min(jobs.len().max(1));
            let params = plan.cctx_params((threads / lanes_n).max(1));
            if self.lane_threads != params.nthreads {
                self.lanes.clear();
                self.lane_threads = params.nthreads;
            }
            while self.lanes.len() < lanes_n {
                let cctx = Cctx::new(&params).map_err(|e| Error::InvalidArgument(e.to_string()))?;
                self.lanes.push(Packer::new(cctx, plan));
            }
            self.threads.for_each_lane(
                &mut self.lanes[..lanes_n],
                jobs,
                |p, (idx, src, region, slot)| {
                    *slot = Some(pack_chunk(&g1, p, idx, src, &region)?);
                    Ok::<(), Error>(())
                },
            )?;
        }
        let chunks: Vec<Built> = sources
            .iter()
            .zip(built)
            .map(|(s, b)| match (s, b) {
                (Source::Keep(o), _) => Built::Old(*o),
                (Source::Zeros, _) => Built::Code(ZERO_CHUNK_OFFSET),
                (_, Some(bytes)) => match special_offset(&bytes) {
                    Some(code) => Built::Code(code),
                    None => Built::Bytes(bytes),
                },
                (_, None) => unreachable!("every chunk to build was built"),
            })
            .collect();
        // A change of the data (not of attributes alone) makes python-blosc2's indexes
        // stale and its query cache wrong: both are fixed in the same published trailer.
        let data_changed = write.is_some() || shape != g0.shape();
        let mut vlmeta = vlmeta.unwrap_or_else(|| disk.parts.vlmeta.clone());
        if data_changed {
            derived::invalidate(&mut vlmeta, a.source(), compress_attr)?;
        }
        if self.sparse {
            self.publish_sparse(&disk, shape, chunks, &old_offsets, &vlmeta)?;
        } else if n1 == 0 {
            self.publish_rewrite(&disk, shape, chunks, &vlmeta)?;
        } else {
            self.publish_contiguous(&disk, shape, chunks, &vlmeta)?;
        }
        self.reopen(!self.sparse && n1 == 0)?;
        if data_changed {
            // Published: nothing refers to the query cache's payload any more.
            derived::remove_query_cache_payload(&self.path)?;
        }
        Ok(())
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
            self.lock = lock_file(&self.path, &self.path)?;
        }
        self.array = Array::open_for_writer(&self.path)?.with_threads(self.threads.clone());
        Ok(())
    }

    /// The header of the new contents: sizes, attributes flag and the shape in the
    /// metalayer.
    fn header_for(
        &self,
        disk: &OnDisk,
        shape: &[u64],
        frame_len: u64,
        offsets: &[i64],
        cbytes: u64,
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<Vec<u8>> {
        let nchunks = offsets.len() as u64;
        let has_vlmeta = !vlmeta.is_empty();
        let a = &self.array;
        if shape == a.shape() {
            // Same shape, same chunks: the metalayer, sizes per chunk and data size stay as
            // they are (whatever layout wrote them).
            return disk
                .parts
                .new_header(
                    frame_len,
                    disk.parts.nbytes(),
                    cbytes as i64,
                    None,
                    has_vlmeta,
                    None,
                )
                .map_err(|e| self.bad(e.0));
        }
        let m = a.metalayer();
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
        let content = meta::encode(m.format, &shape_i, &m.chunks, &m.blocks, m.dtype.as_deref());
        // The extended chunk (whole blocks), from the shapes: an empty array's geometry
        // reports no chunk bytes.
        let chunk_bytes = m
            .chunks
            .iter()
            .zip(&m.blocks)
            .map(|(&c, &b)| (c as u64).div_ceil(b.max(1) as u64) * b as u64)
            .product::<u64>()
            * a.itemsize() as u64;
        let nbytes = nchunks as i64 * chunk_bytes as i64;
        let chunksize = (nchunks > 0).then_some(chunk_bytes as i32);
        disk.parts
            .new_header(
                frame_len,
                nbytes,
                cbytes as i64,
                Some((name, &content)),
                has_vlmeta,
                chunksize,
            )
            .map_err(|e| self.bad(e.0))
    }

    /// What follows the chunks of a frame: the chunk index (none without chunks) and the
    /// trailer holding `vlmeta`.
    fn tail(&self, offsets: &[i64], vlmeta: &[(String, Vec<u8>)]) -> Result<Vec<u8>> {
        let mut tail = Vec::new();
        if !offsets.is_empty() {
            tail =
                index_chunk(offsets).map_err(|e| Error::blosc("compressing the chunk index", e))?;
        }
        tail.extend_from_slice(&trailer_bytes(vlmeta).map_err(|e| self.bad(e.0))?);
        Ok(tail)
    }

    fn bad(&self, reason: String) -> Error {
        Error::Frame {
            source_name: self.array.source().into(),
            reason,
        }
    }

    /// Contiguous frames: append chunks, index and trailer after the current frame end,
    /// make them durable, then publish with one journaled header write.
    fn publish_contiguous(
        &mut self,
        disk: &OnDisk,
        shape: &[u64],
        chunks: Vec<Built>,
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<()> {
        let path = self.path.clone();
        let io = io_err(&path);
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(&io)?;
        let result = (|| {
            f.seek(SeekFrom::Start(disk.frame_len)).map_err(&io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut f);
            let (offsets, pos) =
                write_chunks(&mut w, &chunks, disk.frame_len, disk.header_len).map_err(&io)?;
            let cbytes = pos - disk.header_len;
            let tail = self.tail(&offsets, vlmeta)?;
            w.write_all(&tail).map_err(&io)?;
            w.flush().map_err(&io)?;
            drop(w);
            let frame_len = pos + tail.len() as u64;
            f.sync_data().map_err(&io)?;
            crash_point("data");
            let new = self.header_for(disk, shape, frame_len, &offsets, cbytes, vlmeta)?;
            publish_header(&path, &mut f, &disk.parts.header, &new)?;
            Ok(frame_len)
        })();
        match result {
            Ok(frame_len) => {
                // Bytes a failed earlier attempt left past the end.
                if f.metadata().map(|m| m.len() > frame_len).unwrap_or(false) {
                    let _ = f.set_len(frame_len);
                }
                Ok(())
            }
            Err(e) => {
                // Nothing was published: drop what was appended (best effort), unless a
                // journal still refers to it (the next open then finishes the change).
                if std::fs::symlink_metadata(journal_path(&path)).is_err() {
                    let _ = f.set_len(disk.frame_len);
                }
                Err(e)
            }
        }
    }

    /// A contiguous frame written anew beside the file and renamed over it (compaction, and
    /// frames without chunks, whose trailer must follow the header).
    fn publish_rewrite(
        &mut self,
        disk: &OnDisk,
        shape: &[u64],
        chunks: Vec<Built>,
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<()> {
        let dir = parent_dir(&self.path);
        let mut tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(io_err(&dir))?;
        let tpath = tmp.path().to_path_buf();
        let io = io_err(&tpath);
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        w.write_all(&vec![0u8; disk.header_len as usize])
            .map_err(&io)?;
        let (offsets, pos) =
            write_chunks(&mut w, &chunks, disk.header_len, disk.header_len).map_err(&io)?;
        let cbytes = pos - disk.header_len;
        let tail = self.tail(&offsets, vlmeta)?;
        w.write_all(&tail).map_err(&io)?;
        let frame_len = pos + tail.len() as u64;
        w.flush().map_err(&io)?;
        drop(w);
        let header = self.header_for(disk, shape, frame_len, &offsets, cbytes, vlmeta)?;
        let f = tmp.as_file_mut();
        f.seek(SeekFrom::Start(0)).map_err(&io)?;
        f.write_all(&header).map_err(&io)?;
        f.sync_all().map_err(&io)?;
        tmp.persist(&self.path)
            .map_err(|e| io_err(&self.path)(e.error))?;
        sync_dir(&dir);
        Ok(())
    }

    /// Sparse frames: new chunks to new files, then a new `chunks.b2frame` renamed into
    /// place; chunk files no longer referenced are deleted afterwards.
    fn publish_sparse(
        &mut self,
        disk: &OnDisk,
        shape: &[u64],
        chunks: Vec<Built>,
        old_offsets: &[i64],
        vlmeta: &[(String, Vec<u8>)],
    ) -> Result<()> {
        let mut created = Vec::new();
        let r = self.write_sparse(disk, shape, chunks, old_offsets, vlmeta, &mut created);
        if r.is_err() {
            // Not published: the new chunk files are nobody's.
            for p in created {
                let _ = std::fs::remove_file(p);
            }
        }
        r
    }

    fn write_sparse(
        &mut self,
        disk: &OnDisk,
        shape: &[u64],
        chunks: Vec<Built>,
        old_offsets: &[i64],
        vlmeta: &[(String, Vec<u8>)],
        created: &mut Vec<PathBuf>,
    ) -> Result<()> {
        let dir = self.path.clone();
        let mut next = old_offsets.iter().copied().max().unwrap_or(-1).max(-1) + 1;
        for e in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
            let e = e.map_err(io_err(&dir))?;
            if let Some(id) = chunk_file_id(&e.file_name()) {
                next = next.max(id + 1);
            }
        }
        let mut offsets = Vec::with_capacity(chunks.len());
        let mut cbytes = 0u64;
        for c in &chunks {
            offsets.push(match c {
                Built::Old(o) | Built::Code(o) => {
                    if *o >= 0 {
                        let p = dir.join(chunk_file_name(*o));
                        cbytes += std::fs::metadata(&p).map_err(io_err(&p))?.len();
                    }
                    *o
                }
                Built::Bytes(b) => {
                    let id = next;
                    next += 1;
                    let p = dir.join(chunk_file_name(id));
                    let mut f = OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&p)
                        .map_err(io_err(&p))?;
                    created.push(p.clone());
                    f.write_all(b).map_err(io_err(&p))?;
                    f.sync_data().map_err(io_err(&p))?;
                    cbytes += b.len() as u64;
                    id
                }
            });
        }
        let body = self.tail(&offsets, vlmeta)?;
        let frame_len = disk.header_len + body.len() as u64;
        let header = self.header_for(disk, shape, frame_len, &offsets, cbytes, vlmeta)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(io_err(&dir))?;
        let tpath = tmp.path().to_path_buf();
        let io = io_err(&tpath);
        tmp.write_all(&header).map_err(&io)?;
        tmp.write_all(&body).map_err(&io)?;
        tmp.as_file().sync_all().map_err(&io)?;
        let index = dir.join("chunks.b2frame");
        crash_point("data");
        tmp.persist(&index).map_err(|e| io_err(&index)(e.error))?;
        sync_dir(&dir);
        // Published: chunk files the new index no longer uses can go.
        let live: std::collections::HashSet<i64> = offsets.iter().copied().collect();
        for &o in old_offsets {
            if o >= 0 && !live.contains(&o) {
                let _ = std::fs::remove_file(dir.join(chunk_file_name(o)));
            }
        }
        Ok(())
    }
}

/// One chunk to encode: its index, the C-order bytes of a region holding it, that
/// region, and where the result goes.
type Job<'a> = (u64, &'a [u8], Region, &'a mut Option<Vec<u8>>);

/// A chunk of the new contents.
enum Built {
    /// An existing chunk's index entry.
    Old(i64),
    /// A special chunk's index code.
    Code(i64),
    /// New compressed bytes.
    Bytes(Vec<u8>),
}

fn chunk_file_name(id: i64) -> String {
    crate::format::frame::chunk_file_name(id as u64)
}

fn chunk_file_id(name: &std::ffi::OsStr) -> Option<i64> {
    let s = name.to_str()?.strip_suffix(".chunk")?;
    (s.len() == 8)
        .then(|| i64::from_str_radix(s, 16).ok())
        .flatten()
}

/// Write the chunks with bytes to `w`, the first at frame position `pos`: the index entries
/// of all `chunks` (offsets count from the end of the `header_len`-byte header) and the
/// position after the last one written.
fn write_chunks(
    w: &mut impl Write,
    chunks: &[Built],
    mut pos: u64,
    header_len: u64,
) -> std::io::Result<(Vec<i64>, u64)> {
    let mut offsets = Vec::with_capacity(chunks.len());
    for c in chunks {
        offsets.push(match c {
            Built::Old(o) | Built::Code(o) => *o,
            Built::Bytes(b) => {
                w.write_all(b)?;
                let at = (pos - header_len) as i64;
                pos += b.len() as u64;
                at
            }
        });
    }
    Ok((offsets, pos))
}

/// The chunk index: the offsets as a Blosc2 chunk of little-endian `int64`s.
fn index_chunk(offsets: &[i64]) -> std::result::Result<Vec<u8>, crate::ffi::CError> {
    let raw: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    small_chunk(&raw, 8, crate::ffi::SPLIT_ALWAYS)
}

/// An attribute's msgpack bytes as stored in the trailer: a Blosc2 chunk.
fn compress_attr(msgpack: &[u8]) -> std::result::Result<Vec<u8>, crate::ffi::CError> {
    small_chunk(msgpack, 1, crate::ffi::SPLIT_NEVER)
}

/// `bytes` as one Blosc2 chunk with the parameters c-blosc2 uses for its own bookkeeping
/// chunks (BloscLZ, level 5, shuffle, one thread).
fn small_chunk(
    bytes: &[u8],
    typesize: i32,
    splitmode: i32,
) -> std::result::Result<Vec<u8>, crate::ffi::CError> {
    let params = CompressParams {
        compcode: 0,
        compcode_meta: 0,
        clevel: 5,
        typesize,
        blocksize: 0,
        splitmode,
        filters: [0, 0, 0, 0, 0, 1],
        filters_meta: [0; 6],
        nthreads: 1,
    };
    let mut out = Vec::new();
    Cctx::new(&params)?.compress(bytes, &mut out)?;
    Ok(out)
}

/// Publish `new` over `old` (the header at the start of `f`): journal (made durable with its
/// directory entry), header write, sync, journal removed. A crash before the header write
/// leaves the old contents; a torn header write is finished from the journal by the next
/// [`ArrayMut::open`].
fn publish_header(path: &Path, f: &mut File, old: &[u8], new: &[u8]) -> Result<()> {
    let jpath = journal_path(path);
    let journal = Journal {
        old: old.to_vec(),
        new: new.to_vec(),
    }
    .encode();
    let saved = File::create(&jpath).and_then(|mut j| {
        j.write_all(&journal)?;
        j.sync_all()
    });
    if let Err(e) = saved {
        // Nothing refers to a journal that is not complete (e.g. on a full disk): the
        // header is untouched, so the change simply did not happen.
        let _ = std::fs::remove_file(&jpath);
        return Err(io_err(&jpath)(e));
    }
    sync_dir(&parent_dir(path));
    crash_point("header");
    let written = f
        .seek(SeekFrom::Start(0))
        .and_then(|_| write_header(f, new))
        .and_then(|_| f.sync_data());
    if let Err(e) = written {
        // Put the old header back and drop the journal; if that fails too, the journal
        // stays and the next open finishes the change (its data is durable).
        let restored = f
            .seek(SeekFrom::Start(0))
            .and_then(|_| f.write_all(old))
            .and_then(|_| f.sync_data());
        if restored.is_ok() {
            let _ = std::fs::remove_file(&jpath);
        }
        return Err(io_err(path)(e));
    }
    std::fs::remove_file(&jpath).map_err(io_err(&jpath))?;
    Ok(())
}

/// The header write.
fn write_header(f: &mut File, new: &[u8]) -> std::io::Result<()> {
    f.write_all(new)
}

/// A fault-injection point for the crash tests, in debug builds only:
/// `B2ND_TEST_CRASH_AT=<name>` makes the process exit abruptly there.
fn crash_point(name: &str) {
    #[cfg(debug_assertions)]
    if std::env::var("B2ND_TEST_CRASH_AT").as_deref() == Ok(name) {
        std::process::exit(87);
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}
