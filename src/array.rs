//! [`Array`]: an opened N-d array, its metadata and attributes.

#![forbid(unsafe_code)]

use std::path::Path;

use crate::codec::filters::filter_name;
use crate::codec::worker::KeptWorkers;
use crate::error::{Error, Result};
use crate::format::chunk::{ChunkHeader, ChunkKind};
use crate::format::frame::{Frame, Storage};
use crate::format::meta::{self, Format, NdMeta, TensorMeta};
use crate::model::attrs::Value;
use crate::model::codec::{Codec, Filter};
use crate::model::dtype::Dtype;
use crate::model::geometry::Geometry;
use crate::model::ids::codec_name;

/// An N-d array stored in a Blosc2 frame with a `b2nd` (or legacy `caterva`) metalayer.
///
/// Opening validates the metalayer, the dtype and the geometry against the frame; nothing is
/// decoded until a read. Reads never modify the file. An `Array` is `Send + Sync`: reads from
/// several threads are serialised only while fetching compressed chunks.
///
/// Between reads an `Array` keeps its decoders and, per reading thread, one decoded and one
/// compressed chunk buffer (not for chunks over 64 MiB), so that repeated small reads cost
/// no setup; dropping the `Array` frees them.
///
/// ```no_run
/// let a = b2nd::Array::open("data.b2nd")?;
/// println!("{:?} {} chunks {:?}", a.shape(), a.dtype(), a.chunks());
/// let v: Vec<f64> = a.read()?;
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct Array {
    pub(crate) frame: Frame,
    pub(crate) meta: NdMeta,
    pub(crate) dtype: Dtype,
    pub(crate) geom: Geometry,
    pub(crate) threads: usize,
    /// Where parallel reads run.
    pub(crate) exec: crate::parallel::Threads,
    /// Decoders and chunk buffers kept between reads, so that small reads do not pay for
    /// new contexts and freshly faulted chunk buffers each time.
    pub(crate) workers: KeptWorkers,
    /// Whether a narrow read of its code units ([`Array::read_rows_narrow_into`]) met a
    /// block beyond Latin-1: later ones answer `false` at once rather than decode a block
    /// twice for every read.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) wide: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("source", &self.frame.source)
            .field("format", &self.meta.format)
            .field("shape", &self.geom.shape())
            .field("chunks", &self.geom.chunks())
            .field("blocks", &self.geom.blocks())
            .field("dtype", &self.dtype_str())
            .finish()
    }
}

/// Markers (metalayer names, and vlmeta names where python-blosc2 also uses them) of containers
/// that carry an N-d metalayer but no data of their own, with why they are refused. python-blosc2
/// 4.14.1's `process_opened_object` checks the same metalayers before treating a frame as an
/// NDArray.
const DERIVED_CONTAINERS: &[(&str, bool, &str)] = &[
    (
        "b2o",
        false,
        "it is a lazy expression or remote-array carrier (`b2o` metalayer): its chunks are \
         placeholders; evaluate it with python-blosc2 and save the result",
    ),
    (
        "LazyArray",
        true,
        "it is a saved lazy array of the older layout (`LazyArray` metalayer, `_LazyArray` \
         vlmeta: a lazyudf of a Python function or a lazy expression): its chunks are \
         placeholders; evaluate it with python-blosc2 and save the result",
    ),
    (
        "_LazyArray",
        true,
        "it is a saved lazy array of the older layout (`_LazyArray` vlmeta): its chunks are \
         placeholders; evaluate it with python-blosc2 and save the result",
    ),
    (
        "proxy-source",
        true,
        "it is a proxy cache (`proxy-source`): chunks not yet fetched from the source are missing",
    ),
    (
        "listarray",
        false,
        "it is a python-blosc2 ListArray (`listarray` metalayer), not an N-d array",
    ),
    (
        "vlarray",
        false,
        "it is a python-blosc2 ObjectArray (`vlarray` metalayer), not an N-d array",
    ),
    (
        "batcharray",
        false,
        "it is a python-blosc2 BatchArray (`batcharray` metalayer), not an N-d array",
    ),
];

/// Why a frame with these metalayers (`has_layer`) and vlmeta names holds no N-d data of its
/// own, if it does not ([`DERIVED_CONTAINERS`]).
fn derived_container(has_layer: &dyn Fn(&str) -> bool, vlmeta: &[String]) -> Option<&'static str> {
    DERIVED_CONTAINERS
        .iter()
        .find(|(name, in_vlmeta, _)| {
            has_layer(name) || (*in_vlmeta && vlmeta.iter().any(|v| v == name))
        })
        .map(|(_, _, why)| *why)
}

impl Array {
    /// Open a CFrame file (`.b2nd`, `.b2frame`) or an SFrame directory.
    pub fn open(path: impl AsRef<Path>) -> Result<Array> {
        Array::from_frame(Frame::open(path.as_ref(), 0)?)
    }

    /// Open a CFrame that starts `offset` bytes into a larger file (e.g. a `.b2z` member).
    pub fn open_at(path: impl AsRef<Path>, offset: u64) -> Result<Array> {
        Array::from_frame(Frame::open(path.as_ref(), offset)?)
    }

    /// Open the array for [`crate::ArrayMut`], which holds python-blosc2's lock itself.
    pub(crate) fn open_for_writer(path: &Path) -> Result<Array> {
        Array::from_frame(Frame::open_for_writer(path)?)
    }

    /// Follow what writers published since this array was opened (or last refreshed), as
    /// python-blosc2's `NDArray.refresh()` does: `Ok(false)`, at the cost of one `stat` (and
    /// a read of python-blosc2's lock counter when the file is locked by its users), when
    /// nothing changed; otherwise the array is opened again from the same place and
    /// `Ok(true)`. Its shape, attributes and data are then the new ones; a change of the
    /// number of dimensions, chunks, blocks or dtype is an error (as in python-blosc2), and
    /// leaves the array as it was. In-memory arrays never change (`Ok(false)`).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("a.b2nd");
    /// b2nd::ArrayBuilder::for_type::<u8>(&[4]).write(b2nd::Target::File(path.clone()), &[1u8; 4])?;
    /// let mut reader = b2nd::Array::open(&path)?;
    /// assert!(!reader.refresh()?);
    /// b2nd::ArrayMut::open(&path)?.append(0, &[2u8; 3])?;
    /// assert!(reader.refresh()?);
    /// assert_eq!(reader.shape(), &[7]);
    /// assert_eq!(reader.read::<u8>()?, [1, 1, 1, 1, 2, 2, 2]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn refresh(&mut self) -> Result<bool> {
        if self.frame.unchanged() {
            return Ok(false);
        }
        let Some((path, offset)) = self.frame.origin() else {
            return Ok(false);
        };
        let frame = Frame::open(path, offset)?.named(self.frame.source.clone());
        let fresh = Array::from_frame(frame)?;
        let (old, new) = (&self.geom, &fresh.geom);
        if old.ndim() != new.ndim()
            || old.chunks() != new.chunks()
            || old.blocks() != new.blocks()
            || self.dtype != fresh.dtype
        {
            return Err(Error::Frame {
                source_name: self.frame.source.clone(),
                reason: format!(
                    "changed its layout since it was opened (dimensions {} -> {}, chunks {:?} -> {:?}, blocks {:?} -> {:?}, dtype {} -> {}): open it again",
                    old.ndim(),
                    new.ndim(),
                    old.chunks(),
                    new.chunks(),
                    old.blocks(),
                    new.blocks(),
                    self.dtype_str(),
                    fresh.dtype_str()
                ),
            });
        }
        let exec = self.exec.clone();
        *self = fresh.with_threads(exec);
        Ok(true)
    }

    /// Open an in-memory CFrame (the bytes of a `.b2nd` file).
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<Array> {
        Array::from_frame(Frame::from_bytes(bytes.into())?)
    }

    /// Open the array at `url` (feature `remote`) with the default [`crate::RemoteOptions`]:
    /// `http://` or `https://` (the server must answer range requests), `s3://bucket/key`,
    /// `gs://bucket/key` or `az://container/key` with credentials, region and endpoint from
    /// the environment as `object_store`'s builders read them (`AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`,
    /// `GOOGLE_SERVICE_ACCOUNT`, `AZURE_STORAGE_ACCOUNT_NAME`, ...), or
    /// `file:///absolute/path`. The URL names a contiguous
    /// frame, or the prefix of a sparse frame (its `chunks.b2frame` and chunk files).
    /// Header, chunk index and trailer are fetched once; reads then fetch only the chunks,
    /// and where a mask saves much only the blocks, they need, each request conditional on
    /// the object being the version opened. Calls block the calling thread (b2nd runs its
    /// own I/O runtime); from async code, call from a blocking task.
    ///
    /// ```no_run
    /// let a = b2nd::Array::open_url("http://127.0.0.1:8080/data/big.b2nd")?;
    /// let s: b2nd::Slice = "100:110".parse()?;
    /// let v: Vec<f64> = a.read_slice(&s)?;
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    #[cfg(feature = "remote")]
    pub fn open_url(url: &str) -> Result<Array> {
        Array::open_url_with(url, &crate::storage::RemoteOptions::new())
    }

    /// [`Array::open_url`] with explicit timeouts, retries, requests in flight and store
    /// settings.
    #[cfg(feature = "remote")]
    pub fn open_url_with(url: &str, options: &crate::storage::RemoteOptions) -> Result<Array> {
        Array::from_frame(Frame::open_url(url, options)?)
    }

    /// Open the array at `path` of a store the caller built (any `object_store` backend:
    /// S3, GCS, Azure, HTTP, local, in memory).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use b2nd::object_store::{memory::InMemory, path::Path, ObjectStoreExt};
    ///
    /// let store = Arc::new(InMemory::new());
    /// let bytes = std::fs::read("tests/data/f8_2d_ragged.b2nd")?;
    /// let rt = tokio::runtime::Runtime::new()?;
    /// rt.block_on(store.put(&Path::from("a/f8_2d_ragged.b2nd"), bytes.into()))?;
    /// let a = b2nd::Array::open_object(store, "a/f8_2d_ragged.b2nd", &b2nd::RemoteOptions::new())?;
    /// assert_eq!(a.shape(), &[10, 7]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "remote")]
    pub fn open_object(
        store: std::sync::Arc<dyn object_store::ObjectStore>,
        path: &str,
        options: &crate::storage::RemoteOptions,
    ) -> Result<Array> {
        Array::from_frame(Frame::open_object(store, path, options)?)
    }

    pub(crate) fn from_frame(frame: Frame) -> Result<Array> {
        let src = frame.source.clone();
        let (format, meta) = nd_metalayer(&frame)?;
        let p = &frame.params;
        let typesize = usize::try_from(p.typesize)
            .ok()
            .filter(|&t| t > 0)
            .ok_or_else(|| Error::Frame {
                source_name: src.clone(),
                reason: format!("invalid typesize {}", p.typesize),
            })?;
        let dtype = match &meta.dtype {
            Some(s) if meta.elements == 6 => Dtype::parse_draft(s)?,
            Some(s) => Dtype::parse(s)?,
            None => Dtype::bytes(typesize),
        };
        // c-blosc2 3.x's `to_cframe` (the frames python-blosc2 4.x embeds in stores) records
        // typesize 1 for items over 255 bytes, then cannot read its own frame; the metalayer's
        // dtype and the chunk sizes still describe the data.
        let typesize = if typesize == 1 && dtype.itemsize() > 255 {
            dtype.itemsize()
        } else {
            typesize
        };
        if dtype.itemsize() != typesize {
            return Err(Error::Geometry {
                source_name: src,
                reason: format!(
                    "dtype {} has itemsize {} but the frame's typesize is {typesize}",
                    meta.dtype.as_deref().unwrap_or("?"),
                    dtype.itemsize()
                ),
            });
        }
        // The oldest caterva files stored an all-zero blockshape: chunks are plain partitions.
        let blocks: Vec<i32> = if format == Format::Caterva
            && !meta.blocks.is_empty()
            && meta.blocks.iter().all(|&b| b == 0)
        {
            meta.chunks.clone()
        } else {
            meta.blocks.clone()
        };
        let geom = Geometry::new(&meta.shape, &meta.chunks, &blocks, typesize).map_err(|e| {
            Error::Metalayer {
                source_name: src.clone(),
                layer: format.name().into(),
                field: e.field,
                reason: e.reason,
            }
        })?;
        check_chunks(&frame, &geom)?;
        Ok(Array {
            frame,
            meta,
            dtype,
            geom,
            threads: crate::parallel::Threads::Global.len(),
            exec: crate::parallel::Threads::Global,
            workers: Default::default(),
            wide: Default::default(),
        })
    }

    /// Where reads run (default: rayon's global pool, shared by all arrays; see [`Threads`]).
    ///
    /// [`Threads`]: crate::Threads
    pub fn with_threads(mut self, threads: crate::parallel::Threads) -> Array {
        self.threads = threads.len();
        self.exec = threads;
        self
    }

    /// How many threads reads use.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Where the array came from (a path, `path@offset` or `<memory>`).
    pub fn source(&self) -> &str {
        &self.frame.source
    }

    /// Which metalayer describes the array ([`Format::Tensor`] for python-blosc2's
    /// `save_tensor` frames).
    pub fn format(&self) -> Format {
        self.meta.format
    }

    /// For a `save_tensor` / `pack_tensor` frame, what python-blosc2 rebuilds on load
    /// (`numpy`, `torch` or `tensorflow`); `None` for other arrays.
    pub fn tensor_kind(&self) -> Option<String> {
        if self.meta.format != Format::Tensor {
            return None;
        }
        let v = crate::schunk::attr(&self.frame, "__pack_tensor__").ok()??;
        TensorMeta::parse(&v).ok().map(|t| t.kind)
    }

    /// The decoded `b2nd` / `caterva` metalayer.
    pub(crate) fn nd_meta(&self) -> &NdMeta {
        &self.meta
    }

    /// Names of the frame's fixed metalayers (`b2nd` or `caterva`, and any others), in
    /// stored order (as [`SChunk::metalayer_names`](crate::SChunk::metalayer_names)).
    pub fn metalayer_names(&self) -> Vec<String> {
        self.frame.metalayer_names()
    }

    /// The raw (msgpack) content of metalayer `name` as stored, `None` if absent (as
    /// [`SChunk::metalayer`](crate::SChunk::metalayer)).
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/attrs_all.b2nd")?;
    /// let raw = a.metalayer("b2nd").expect("a b2nd array");
    /// assert_eq!(raw[0], 0x97); // a msgpack array of 7 items: version, ndim, shape, ...
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn metalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.frame.metalayer(name)
    }

    /// The metalayer format version.
    pub fn metalayer_version(&self) -> u8 {
        self.meta.version
    }

    /// The validated geometry.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// Number of dimensions (0 to 16).
    pub fn ndim(&self) -> usize {
        self.geom.ndim()
    }

    /// Array shape.
    pub fn shape(&self) -> &[u64] {
        self.geom.shape()
    }

    /// Chunk shape.
    pub fn chunks(&self) -> &[u64] {
        self.geom.chunks()
    }

    /// Block shape (for the oldest caterva files, the chunk shape).
    pub fn blocks(&self) -> &[u64] {
        self.geom.blocks()
    }

    /// The parsed dtype.
    pub fn dtype(&self) -> &Dtype {
        &self.dtype
    }

    /// The dtype string as stored (`|S{typesize}` when the metalayer has none).
    pub fn dtype_str(&self) -> String {
        match &self.meta.dtype {
            Some(s) => s.clone(),
            None => format!("|S{}", self.geom.itemsize()),
        }
    }

    /// Bytes per item.
    pub fn itemsize(&self) -> usize {
        self.geom.itemsize()
    }

    /// Number of items.
    pub fn nitems(&self) -> u64 {
        self.geom.nitems()
    }

    /// Logical size in bytes (items times itemsize).
    pub fn nbytes(&self) -> u64 {
        self.geom.nbytes()
    }

    /// Compressed size of the data as c-blosc2 reports it (0 if it reports a negative size).
    pub fn cbytes(&self) -> u64 {
        u64::try_from(self.frame.params.cbytes).unwrap_or(0)
    }

    /// Number of chunks.
    pub fn nchunks(&self) -> u64 {
        u64::try_from(self.frame.params.nchunks).unwrap_or(0)
    }

    /// The frame's codec (with its meta: the ZFP mode's parameter, ...), as the builder
    /// takes it: `ArrayBuilder::codec(a.codec())` writes with the same one.
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/attrs_all.b2nd")?;
    /// assert_eq!(a.codec(), b2nd::Codec::Zstd);
    /// assert_eq!(a.codec_name(), "zstd");
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn codec(&self) -> Codec {
        Codec::from_id(self.frame.params.compcode, self.frame.params.compcode_meta)
    }

    /// The frame's codec as a lowercase c-blosc2 name (`zstd`, `lz4`, `zfp_rate`, ...).
    pub fn codec_name(&self) -> String {
        codec_name(self.frame.params.compcode)
    }

    /// The frame's codec meta byte (e.g. the ZFP mode's parameter; 0 for most codecs).
    pub fn codec_meta(&self) -> u8 {
        self.frame.params.compcode_meta
    }

    /// The frame's compression level.
    pub fn clevel(&self) -> u8 {
        self.frame.params.clevel
    }

    /// The filters of the non-empty filter slots, in pipeline order, as the builder takes
    /// them.
    pub fn filters(&self) -> Vec<Filter> {
        let p = &self.frame.params;
        p.filters
            .iter()
            .zip(p.filters_meta)
            .filter_map(|(&id, meta)| Filter::from_id(id, meta))
            .collect()
    }

    /// Lowercase names of the non-empty filter slots, in pipeline order.
    pub fn filter_names(&self) -> Vec<String> {
        self.frame
            .params
            .filters
            .iter()
            .filter(|&&f| f != 0)
            .map(|&f| filter_name(f))
            .collect()
    }

    /// The six filter slots and their metas, as stored.
    pub fn filter_slots(&self) -> ([u8; 6], [u8; 6]) {
        (self.frame.params.filters, self.frame.params.filters_meta)
    }

    /// How stored chunk `index` (C order over the chunk grid) is stored, read from its
    /// header only (nothing is decompressed).
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/special_zeros_f8.b2nd")?;
    /// assert_eq!(a.chunk_kind(0)?, b2nd::ChunkKind::Zeros);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn chunk_kind(&self, index: u64) -> Result<ChunkKind> {
        if index >= self.nchunks() {
            return Err(Error::InvalidArgument(format!(
                "chunk {index} out of range: the frame stores {} chunks",
                self.nchunks()
            )));
        }
        let mut buf = crate::ffi::ChunkBytes::default();
        self.frame.chunk_into(index, &mut buf)?;
        ChunkHeader::parse(&buf)
            .map(|h| h.kind())
            .map_err(|m| Error::Chunk {
                source_name: self.source().to_string(),
                chunk: index as i64,
                reason: m.to_string(),
            })
    }

    /// The one value every byte of a 1-d array's items holds, told from each chunk's header
    /// and its blocks' stream sizes ([`crate::format::chunk::block_values`]: special chunks,
    /// blocks stored as runs; padding past the last item ignored), with at most two blocks
    /// that only decoding tells read to check; `None` when the items are not all one value
    /// or more blocks would have to be decoded to tell.
    pub(crate) fn uniform_byte(&self) -> Result<Option<u8>> {
        const FEW_BLOCKS: usize = 2;
        let (&[len], &[chunk_items]) = (self.shape(), self.chunks()) else {
            return Ok(None);
        };
        let item = (self.itemsize() as u64).max(1);
        let mut buf = crate::ffi::ChunkBytes::default();
        let (mut value, mut unknown) = (None, Vec::new());
        for n in 0..self.nchunks() {
            let first = n * chunk_items;
            let items = chunk_items.min(len.saturating_sub(first));
            self.frame.chunk_into(n, &mut buf)?;
            let Some(blocks) = crate::format::chunk::block_values(&buf)
                .map_err(|e| crate::codec::error::ChunkError::Corrupt(e.0).at(self.source(), n))?
            else {
                return Ok(None);
            };
            let block_items = (blocks.block_bytes as u64 / item).max(1);
            for (j, v) in (0..).zip(blocks.values) {
                let at = j * block_items;
                if at >= items {
                    break;
                }
                match v {
                    Some(v) if value.is_none_or(|w| w == v) => value = Some(v),
                    Some(_) => return Ok(None),
                    None if unknown.len() < FEW_BLOCKS => {
                        unknown.push((first + at, block_items.min(items - at)));
                    }
                    None => return Ok(None),
                }
            }
        }
        for (start, n) in unknown {
            let mut bytes = crate::alloc::zeroed((n * item) as usize, "a block of items")?;
            self.read_region_into(&crate::model::region::Region::new([start], [n]), &mut bytes)?;
            let v = *value.get_or_insert(bytes[0]);
            if bytes.iter().any(|&b| b != v) {
                return Ok(None);
            }
        }
        Ok(value)
    }

    /// Contiguous or sparse frame.
    pub fn storage(&self) -> Storage {
        self.frame.storage()
    }

    /// Names of the user attributes (vlmeta), in stored order.
    pub fn attr_names(&self) -> Vec<String> {
        crate::schunk::attr_names(&self.frame)
    }

    /// The raw (decompressed msgpack) bytes of attribute `name`, `None` if absent.
    ///
    /// Values are limited to [`crate::MAX_ATTR_BYTES`] decoded bytes.
    pub fn attr_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        crate::schunk::attr_bytes(&self.frame, name)
    }

    /// Attribute `name` decoded from msgpack with python-blosc2's conventions; `None` if absent.
    pub fn attr(&self, name: &str) -> Result<Option<Value>> {
        crate::schunk::attr(&self.frame, name)
    }

    /// All attributes, decoded, in stored order.
    pub fn attrs(&self) -> Result<Vec<(String, Value)>> {
        crate::schunk::attrs(&self.frame)
    }
}

/// The frame's `b2nd` (or else `caterva`) metalayer, parsed; refused when there is none or
/// the frame carries a derived container (lazy expressions) rather than data.
fn nd_metalayer(frame: &Frame) -> Result<(Format, NdMeta)> {
    let src = frame.source.clone();
    let layers = frame.metalayers();
    let find = |name: &str| {
        layers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.as_slice())
    };
    let (format, bytes) = match (find("b2nd"), find("caterva")) {
        (Some(b), _) => (Format::B2nd, b),
        (None, Some(c)) => (Format::Caterva, c),
        (None, None) => {
            if frame.vlmeta_names().iter().any(|n| n == "__pack_tensor__") {
                return Ok((Format::Tensor, tensor_layout(frame)?));
            }
            let names: Vec<&str> = layers.iter().map(|(n, _)| n.as_str()).collect();
            let found = if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            };
            return Err(Error::NotNdArray {
                source_name: src,
                found,
            });
        }
    };
    let vl = frame.vlmeta_names();
    if let Some(reason) = derived_container(&|n| find(n).is_some(), &vl) {
        return Err(Error::NoData {
            source_name: src,
            reason: reason.into(),
        });
    }
    let meta = meta::parse(format, bytes).map_err(|e| Error::Metalayer {
        source_name: src.clone(),
        layer: format.name().into(),
        field: e.field,
        reason: e.reason,
    })?;
    Ok((format, meta))
}

/// The N-d layout of a python-blosc2 `save_tensor` / `pack_tensor` frame: its shape and dtype
/// from vlmeta `__pack_tensor__`, its chunks (flat runs of `chunksize` bytes of the C-order
/// items) as the N-d chunks they are, each one block decoded whole (the Blosc blocks inside
/// are flat byte runs, not N-d blocks). Chunks that split a row unevenly, or a short last
/// chunk, have no N-d chunk shape: refused, naming the way to read the bytes.
fn tensor_layout(frame: &Frame) -> Result<NdMeta> {
    let src = frame.source.clone();
    let bad = |field: &str, reason: String| Error::Metalayer {
        source_name: src.clone(),
        layer: "__pack_tensor__ (vlmeta)".into(),
        field: field.into(),
        reason,
    };
    let value = crate::schunk::attr(frame, "__pack_tensor__")?
        .ok_or_else(|| bad("__pack_tensor__", "absent".into()))?;
    let t = TensorMeta::parse(&value).map_err(|e| bad(&e.field, e.reason))?;
    let nitems = t
        .shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .ok_or_else(|| bad("shape", format!("{:?} overflows", t.shape)))?;
    let p = &frame.params;
    let typesize = i64::from(p.typesize.max(1));
    let chunk_items = u64::try_from(i64::from(p.chunksize) / typesize).unwrap_or(0);
    let whole: Option<Vec<i32>> = t.shape.iter().map(|&d| i32::try_from(d).ok()).collect();
    let chunks = if nitems == 0 {
        t.shape.iter().map(|&d| i32::from(d > 0)).collect()
    } else if p.nchunks == 1 && chunk_items == nitems && whole.is_some() {
        whole.unwrap_or_default()
    } else {
        (1..=t.shape.len())
            .find_map(|k| {
                let inner = t.shape[k..].iter().map(|&d| d as u64).product::<u64>();
                let m = chunk_items
                    .is_multiple_of(inner)
                    .then(|| chunk_items / inner)?;
                let along = t.shape[k - 1] as u64;
                (m >= 1 && m <= along && along.is_multiple_of(m)).then(|| {
                    let mut c = vec![1i64; k - 1];
                    c.push(m as i64);
                    c.extend_from_slice(&t.shape[k..]);
                    c.iter()
                        .map(|&d| i32::try_from(d).ok())
                        .collect::<Option<Vec<i32>>>()
                })?
            })
            .ok_or_else(|| Error::Geometry {
                source_name: src.clone(),
                reason: format!(
                    "a save_tensor frame of shape {:?} whose chunks of {chunk_items} items are \
                     no N-d chunks of it (a row split unevenly, or a short last chunk): read \
                     its C-order bytes with SChunk::read_bytes",
                    t.shape
                ),
            })?
    };
    Ok(NdMeta {
        format: Format::Tensor,
        elements: 7,
        version: 0,
        shape: t.shape,
        blocks: chunks.clone(),
        chunks,
        dtype_format: Some(0),
        dtype: Some(t.dtype),
    })
}

/// The frame's chunk count and size agree with the geometry its metalayer gives.
fn check_chunks(frame: &Frame, geom: &Geometry) -> Result<()> {
    let src = frame.source.clone();
    let p = &frame.params;
    if frame.version >= 3 && geom.nitems() > 0 {
        return Err(Error::Frame {
            source_name: src,
            reason: "frame format version 3 (variable-size chunks, written by c-blosc2 3.x for \
                         VL-block containers) is not supported"
                .into(),
        });
    }
    let nchunks = u64::try_from(p.nchunks).unwrap_or(u64::MAX);
    let want = if geom.nitems() == 0 {
        0
    } else {
        geom.nchunks()
    };
    if nchunks != want {
        return Err(Error::Geometry {
            source_name: src,
            reason: format!("the metalayer implies {want} chunks, the frame holds {nchunks}"),
        });
    }
    if nchunks > 0
        && geom.nitems() > 0
        && usize::try_from(p.chunksize).ok() != Some(geom.chunk_bytes())
    {
        return Err(Error::Geometry {
            source_name: src,
            reason: format!(
                "the metalayer implies chunks of {} bytes, the frame's chunksize is {}",
                geom.chunk_bytes(),
                p.chunksize
            ),
        });
    }
    Ok(())
}
