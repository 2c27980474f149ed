//! [`SChunk`]: any Blosc2 frame opened as a super-chunk, a stream of bytes cut into chunks,
//! whatever its metalayers: the containers python-blosc2 builds on (embedded stores, store
//! attributes, table manifests) and plain `blosc2.SChunk` files.

#![forbid(unsafe_code)]

use std::path::Path;

use crate::codec::chunk::{Decoded, Decoder, Target};
use crate::codec::error::ChunkError;
use crate::codec::worker::fetch_decode;
use crate::error::{Error, Result};
use crate::ffi::ChunkBytes;
use crate::format::chunk::ChunkHeader;
use crate::format::frame::{Frame, Storage};
use crate::model::attrs::Value;
use crate::model::chunk_data::ChunkData;
use crate::model::region::Region;

/// The largest decoded attribute value this crate reads (256 MiB).
pub const MAX_ATTR_BYTES: usize = 256 << 20;

/// A Blosc2 super-chunk: a frame (CFrame file, SFrame directory, a frame inside a larger file
/// or in memory) read as one stream of bytes, `chunksize` bytes per chunk (the last chunk may
/// be shorter), with its metalayers and attributes.
///
/// N-d arrays are opened with [`crate::Array`]; an `SChunk` is for everything else
/// python-blosc2 stores in frames.
///
/// ```
/// let s = b2nd::SChunk::open("tests/data/attrs_all.b2nd")?;
/// assert!(s.metalayer_names().contains(&"b2nd".to_string()));
/// assert_eq!(s.read_bytes()?.len() as u64, s.nbytes());
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct SChunk {
    frame: Frame,
    /// Frame format 3: the chunks, found by Rust from the frame's index.
    var: Option<VarChunks>,
}

/// The chunks of a contiguous frame in format 3 (variable-size chunks), which the linked
/// c-blosc2 2.15 reads as empty: the frame's bytes and each chunk's range in them.
struct VarChunks {
    bytes: Vec<u8>,
    chunks: Vec<std::ops::Range<usize>>,
}

/// Largest chunk-offsets index decoded (16 M chunks).
const MAX_INDEX_BYTES: usize = 8 << 24;

impl VarChunks {
    /// Find the chunks of `frame` from its offsets index, each checked to lie between the
    /// header and the index.
    fn read(frame: &Frame) -> Result<Option<VarChunks>> {
        let Some(layout) = frame.layout else {
            return Ok(None);
        };
        let Some(bytes) = frame.contiguous_bytes()? else {
            return Ok(None);
        };
        let bad = |reason: String| Error::Frame {
            source_name: frame.source.clone(),
            reason,
        };
        let (header_len, index_at) = (layout.header_len as usize, layout.index_at as usize);
        let index_end = index_at + layout.index_len as usize; // checked against the frame
        let mut chunks = Vec::new();
        if layout.index_len > 0 {
            let index = Decoder::new(1)
                .decode_standalone(&bytes[index_at..index_end], MAX_INDEX_BYTES)
                .map_err(|e| bad(format!("chunk index: {e}")))?;
            if index.len() % 8 != 0 {
                return Err(bad(format!("chunk index of {} bytes", index.len())));
            }
            for (n, raw) in index.chunks_exact(8).enumerate() {
                let off = i64::from_le_bytes(raw.try_into().expect("8 bytes"));
                let start = usize::try_from(off)
                    .ok()
                    .and_then(|o| o.checked_add(header_len))
                    .filter(|&s| s + 16 <= index_at)
                    .ok_or_else(|| {
                        bad(format!(
                            "chunk {n}: offset {off} outside the frame's chunks"
                        ))
                    })?;
                let h = ChunkHeader::parse(&bytes[start..index_at])
                    .map_err(|e| bad(format!("chunk {n}: {e}")))?;
                let end = start
                    .checked_add(h.cbytes)
                    .filter(|&e| e <= index_at && h.cbytes >= 16)
                    .ok_or_else(|| {
                        bad(format!("chunk {n}: {} bytes run past the chunks", h.cbytes))
                    })?;
                chunks.push(start..end);
            }
        }
        Ok(Some(VarChunks { bytes, chunks }))
    }
}

impl std::fmt::Debug for SChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SChunk")
            .field("source", &self.frame.source)
            .field("metalayers", &self.metalayer_names())
            .field("nbytes", &self.nbytes())
            .field("chunksize", &self.chunksize())
            .finish()
    }
}

impl SChunk {
    /// Open a CFrame file or an SFrame directory.
    pub fn open(path: impl AsRef<Path>) -> Result<SChunk> {
        SChunk::from_frame(Frame::open(path.as_ref(), 0)?)
    }

    /// Open a CFrame that starts `offset` bytes into a larger file (e.g. a `.b2z` member).
    pub fn open_at(path: impl AsRef<Path>, offset: u64) -> Result<SChunk> {
        SChunk::from_frame(Frame::open(path.as_ref(), offset)?)
    }

    /// Open the super-chunk at `url` (feature `remote`; URLs as [`crate::Array::open_url`]
    /// takes them: a contiguous frame, or a sparse frame's prefix).
    #[cfg(feature = "remote")]
    pub fn open_url(url: &str) -> Result<SChunk> {
        SChunk::open_url_with(url, &crate::storage::RemoteOptions::new())
    }

    /// [`SChunk::open_url`] with explicit options.
    #[cfg(feature = "remote")]
    pub fn open_url_with(url: &str, options: &crate::storage::RemoteOptions) -> Result<SChunk> {
        SChunk::from_frame(Frame::open_url(url, options)?)
    }

    /// Open an in-memory CFrame.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<SChunk> {
        SChunk::from_frame(Frame::from_bytes(bytes.into())?)
    }

    /// Check that the frame's sizes describe a stream of whole chunks (all `chunksize` bytes
    /// but the last), the layout python-blosc2's SChunk reads and writes.
    pub(crate) fn from_frame(frame: Frame) -> Result<SChunk> {
        let p = &frame.params;
        let bad = |reason: String| Error::Frame {
            source_name: frame.source.clone(),
            reason,
        };
        let nchunks = u64::try_from(p.nchunks).map_err(|_| bad("negative chunk count".into()))?;
        let nbytes = u64::try_from(p.nbytes).map_err(|_| bad("negative byte count".into()))?;
        if p.typesize <= 0 {
            return Err(bad(format!("invalid typesize {}", p.typesize)));
        }
        if frame.version >= 3 {
            // Variable-size chunks: the linked c-blosc2 cannot enumerate them (reads refuse
            // them); the metalayers and attributes are still readable.
        } else if nchunks > 0 {
            let cs = u64::try_from(p.chunksize)
                .ok()
                .filter(|&c| c > 0)
                .ok_or_else(|| bad(format!("invalid chunksize {}", p.chunksize)))?;
            let full = (nchunks - 1)
                .checked_mul(cs)
                .ok_or_else(|| bad("chunk count times chunksize overflows".into()))?;
            if nbytes <= full || nbytes - full > cs {
                return Err(bad(format!(
                    "{nbytes} bytes in {nchunks} chunks of {cs} bytes: not a stream of whole \
                     chunks"
                )));
            }
        } else if nbytes != 0 {
            return Err(bad(format!("{nbytes} bytes but no chunks")));
        }
        let var = if frame.version >= 3 {
            VarChunks::read(&frame)?
        } else {
            None
        };
        Ok(SChunk { frame, var })
    }

    /// Where the frame came from (a path, `path@offset`, or `<memory>`).
    pub fn source(&self) -> &str {
        &self.frame.source
    }

    /// Bytes per item (what the codecs and filters see; 1 for byte streams).
    pub fn typesize(&self) -> usize {
        self.frame.params.typesize as usize
    }

    /// Decoded bytes per chunk (the last chunk may hold fewer); `None` for the variable-size
    /// chunks of frame format 3.
    pub fn chunksize(&self) -> Option<u64> {
        (self.frame.version < 3).then(|| u64::try_from(self.frame.params.chunksize).unwrap_or(0))
    }

    /// Number of chunks; `None` for a sparse frame in format 3, whose chunks the linked
    /// c-blosc2 2.15 cannot enumerate.
    pub fn nchunks(&self) -> Option<u64> {
        match &self.var {
            Some(v) => Some(v.chunks.len() as u64),
            None => (self.frame.version < 3).then_some(self.frame.params.nchunks as u64),
        }
    }

    /// Decoded bytes in the stream.
    pub fn nbytes(&self) -> u64 {
        self.frame.params.nbytes as u64
    }

    /// Compressed bytes of the chunks.
    pub fn cbytes(&self) -> u64 {
        u64::try_from(self.frame.params.cbytes).unwrap_or(0)
    }

    /// Contiguous or sparse frame.
    pub fn storage(&self) -> Storage {
        self.frame.storage()
    }

    /// Frame format version (2 for ordinary frames; 3 for the variable-size chunks of
    /// c-blosc2 3.x's VL-block containers).
    pub fn frame_version(&self) -> u8 {
        self.frame.version
    }

    /// Names of the fixed metalayers, in stored order.
    pub fn metalayer_names(&self) -> Vec<String> {
        self.frame.metalayer_names()
    }

    /// The raw (msgpack) content of metalayer `name`, `None` if absent.
    pub fn metalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.frame.metalayer(name)
    }

    /// Metalayer `name` decoded from msgpack; `None` if absent.
    pub fn metalayer_value(&self, name: &str) -> Result<Option<Value>> {
        match self.metalayer(name) {
            None => Ok(None),
            Some(b) => Value::decode(&b).map(Some).map_err(|e| Error::Attr {
                source_name: self.frame.source.clone(),
                name: format!("metalayer {name}"),
                reason: e.reason,
            }),
        }
    }

    /// Names of the user attributes (vlmeta), in stored order.
    pub fn attr_names(&self) -> Vec<String> {
        attr_names(&self.frame)
    }

    /// The raw (decompressed msgpack) bytes of attribute `name`, `None` if absent; values
    /// are limited to [`MAX_ATTR_BYTES`] decoded bytes.
    pub fn attr_bytes(&self, name: &str) -> Result<Option<Vec<u8>>> {
        attr_bytes(&self.frame, name)
    }

    /// Attribute `name` decoded from msgpack with python-blosc2's conventions; `None` if absent.
    pub fn attr(&self, name: &str) -> Result<Option<Value>> {
        attr(&self.frame, name)
    }

    /// All attributes, decoded, in stored order.
    pub fn attrs(&self) -> Result<Vec<(String, Value)>> {
        attrs(&self.frame)
    }

    /// The whole decoded stream.
    pub fn read_bytes(&self) -> Result<Vec<u8>> {
        if self.var.is_some() {
            let mut out = Vec::new();
            for n in 0..self.nchunks().unwrap_or(0) {
                out.extend(self.read_blocks(n)?.concat());
            }
            if out.len() as u64 != self.nbytes() {
                return Err(Error::Frame {
                    source_name: self.frame.source.clone(),
                    reason: format!(
                        "its chunks hold {} bytes, the header says {}",
                        out.len(),
                        self.nbytes()
                    ),
                });
            }
            return Ok(out);
        }
        self.read_bytes_range(0, self.nbytes())
    }

    /// The compressed bytes of chunk `n`.
    fn compressed_chunk(&self, n: u64) -> Result<Vec<u8>> {
        let nchunks = self.nchunks().unwrap_or(0);
        if n >= nchunks {
            return Err(Error::InvalidArgument(format!(
                "{}: chunk {n} of {nchunks}",
                self.frame.source
            )));
        }
        self.check_readable()?;
        match &self.var {
            Some(v) => Ok(v.bytes[v.chunks[n as usize].clone()].to_vec()),
            None => {
                let mut c = ChunkBytes::default();
                self.frame.chunk_into(n, &mut c)?;
                Ok(c.to_vec())
            }
        }
    }

    /// Decode chunk `n`, as [`Array::read_chunk`](crate::Array::read_chunk) does: its items
    /// (of a variable-length-block chunk, its blocks one after the other) and their place in
    /// the stream, a one-dimensional region in items of [`SChunk::typesize`]. A chunk that
    /// does not hold whole items is an error here ([`SChunk::read_blocks`] returns its bytes).
    ///
    /// ```
    /// let s = b2nd::SChunk::open("tests/data/attrs_all.b2nd")?;
    /// let c = s.read_chunk(0)?;
    /// assert_eq!(c.origin(), &[0]);
    /// assert_eq!(c.data().len() as u64, c.nitems() * s.typesize() as u64);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read_chunk(&self, n: u64) -> Result<ChunkData> {
        let data = self.read_blocks(n)?.concat();
        let t = self.typesize().max(1) as u64;
        let len = data.len() as u64;
        if !len.is_multiple_of(t) {
            return Err(self.chunk_error(
                n,
                ChunkError::Corrupt(format!("holds {len} bytes: not whole items of {t} bytes")),
            ));
        }
        let start = self.chunk_start(n)?;
        Ok(ChunkData::new(
            n,
            Region::new(vec![start / t], vec![len / t]),
            data,
        ))
    }

    /// Where chunk `n`'s decoded bytes start in the stream.
    fn chunk_start(&self, n: u64) -> Result<u64> {
        let Some(v) = &self.var else {
            return Ok(n * self.chunksize().unwrap_or(0));
        };
        // Variable-size chunks: the sizes their headers record, before `n`.
        let mut start = 0u64;
        for (k, r) in v.chunks[..n as usize].iter().enumerate() {
            let h = ChunkHeader::parse(&v.bytes[r.clone()])
                .map_err(|e| self.chunk_error(k as u64, e.into()))?;
            start += h.nbytes as u64;
        }
        Ok(start)
    }

    /// The decoded blocks of chunk `n`: one per variable-length block (BatchArray batches
    /// store one msgpack payload per block), or the whole chunk as one block otherwise.
    pub fn read_blocks(&self, n: u64) -> Result<Vec<Vec<u8>>> {
        let c = self.compressed_chunk(n)?;
        let h = ChunkHeader::parse(&c).map_err(|e| self.chunk_error(n, e.into()))?;
        // A chunk holds at most what the frame header declares for all chunks together
        // ([`SChunk::nbytes`], which a caller can check before reading), and its size is an
        // int32: at most 2 GiB whatever its own header says.
        let max = usize::try_from(self.nbytes())
            .unwrap_or(usize::MAX)
            .min(i32::MAX as usize);
        if crate::codec::vlblocks::is_vl(&h) {
            crate::codec::vlblocks::decode_blocks(&c, max).map_err(|e| self.chunk_error(n, e))
        } else {
            Decoder::new(1)
                .decode_standalone(&c, max)
                .map(|b| vec![b])
                .map_err(|e| self.chunk_error(n, e))
        }
    }

    /// The items of an ObjectArray, BatchArray or ListArray frame (metalayers `vlarray`,
    /// `batcharray`, `listarray`), decoded from msgpack with python-blosc2's conventions:
    /// one item per chunk (ObjectArray), or the items of every block of every batch in order
    /// (BatchArray; ListArray stores its rows in either).
    pub fn read_objects(&self) -> Result<Vec<Value>> {
        let names = self.metalayer_names();
        let has = |n: &str| names.iter().any(|m| m == n);
        let bad = |reason: String| Error::Frame {
            source_name: self.frame.source.clone(),
            reason,
        };
        let decode = |n: u64, b: &[u8]| {
            Value::decode(b).map_err(|e| bad(format!("chunk {n}: not msgpack: {}", e.reason)))
        };
        let mut out = Vec::new();
        if has("batcharray") {
            let meta = self.metalayer_value("batcharray")?;
            let serializer = meta
                .as_ref()
                .and_then(|m| m.get("serializer"))
                .and_then(Value::as_str)
                .unwrap_or("msgpack");
            if serializer == "arrow" {
                return self.read_arrow_objects(meta.as_ref());
            }
            if serializer != "msgpack" {
                return Err(Error::Unsupported {
                    source_name: self.frame.source.clone(),
                    chunk: 0,
                    what: "BatchArray serializer",
                    name: serializer.to_string(),
                });
            }
            for n in 0..self.nchunks().unwrap_or(0) {
                for block in self.read_blocks(n)? {
                    match decode(n, &block)? {
                        Value::Array(items) => out.extend(items),
                        other => {
                            return Err(bad(format!(
                                "chunk {n}: a block holding {other:?}, not a list"
                            )))
                        }
                    }
                }
            }
        } else if has("vlarray") {
            for n in 0..self.nchunks().unwrap_or(0) {
                out.push(decode(n, &self.read_blocks(n)?.concat())?);
            }
        } else {
            return Err(bad(format!(
                "not an ObjectArray, BatchArray or ListArray (metalayers: {})",
                names.join(", ")
            )));
        }
        Ok(out)
    }

    /// The items of a BatchArray whose blocks are Arrow IPC (feature `arrow`).
    #[cfg(feature = "arrow")]
    fn read_arrow_objects(&self, meta: Option<&Value>) -> Result<Vec<Value>> {
        let schema = match meta.and_then(|m| m.get("arrow_schema")) {
            Some(Value::Bytes(b)) => Some(b.as_slice()),
            _ => None,
        };
        let per_block = meta
            .and_then(|m| m.get("items_per_block"))
            .and_then(Value::as_u64);
        let mut out = Vec::new();
        for n in 0..self.nchunks().unwrap_or(0) {
            for block in self.read_blocks(n)? {
                let items = crate::format::arrow_ipc::block_items(&block, schema, per_block)
                    .map_err(|e| Error::Frame {
                        source_name: self.frame.source.clone(),
                        reason: format!("chunk {n}: {e}"),
                    })?;
                out.extend(items);
            }
        }
        Ok(out)
    }

    /// The items of a BatchArray whose blocks are Arrow IPC as the one Arrow array they
    /// are stored as (every block's, in order); `None` for other containers.
    #[cfg(feature = "arrow")]
    pub(crate) fn read_arrow_array(&self) -> Result<Option<arrow_array::ArrayRef>> {
        let names = self.metalayer_names();
        if !names.iter().any(|m| m == "batcharray") {
            return Ok(None);
        }
        let meta = self.metalayer_value("batcharray")?;
        if meta
            .as_ref()
            .and_then(|m| m.get("serializer"))
            .and_then(Value::as_str)
            != Some("arrow")
        {
            return Ok(None);
        }
        let schema = match meta.as_ref().and_then(|m| m.get("arrow_schema")) {
            Some(Value::Bytes(b)) => Some(b.as_slice()),
            _ => None,
        };
        let per_block = meta
            .as_ref()
            .and_then(|m| m.get("items_per_block"))
            .and_then(Value::as_u64);
        let bad = |n: u64, e: String| Error::Frame {
            source_name: self.frame.source.clone(),
            reason: format!("chunk {n}: {e}"),
        };
        let mut parts = Vec::new();
        for n in 0..self.nchunks().unwrap_or(0) {
            for block in self.read_blocks(n)? {
                parts.push(
                    crate::format::arrow_ipc::block_array(&block, schema, per_block)
                        .map_err(|e| bad(n, e))?,
                );
            }
        }
        let refs: Vec<&dyn arrow_array::Array> = parts.iter().map(|a| a.as_ref()).collect();
        if refs.is_empty() {
            return Ok(None);
        }
        arrow_select::concat::concat(&refs)
            .map(Some)
            .map_err(|e| bad(0, format!("Arrow blocks of different types: {e}")))
    }

    /// Without the `arrow` feature, Arrow-serialized blocks are refused by name.
    #[cfg(not(feature = "arrow"))]
    fn read_arrow_objects(&self, _meta: Option<&Value>) -> Result<Vec<Value>> {
        Err(Error::Unsupported {
            source_name: self.frame.source.clone(),
            chunk: 0,
            what: "BatchArray serializer",
            name: "arrow (Arrow IPC blocks: build b2nd with the `arrow` feature to read them)"
                .into(),
        })
    }

    /// `len` decoded bytes of the stream from byte `start`; only the chunks holding them are
    /// fetched and decoded.
    pub fn read_bytes_range(&self, start: u64, len: u64) -> Result<Vec<u8>> {
        let end = start
            .checked_add(len)
            .filter(|&e| e <= self.nbytes())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{}: bytes {start}..{start}+{len} outside the stream of {} bytes",
                    self.frame.source,
                    self.nbytes()
                ))
            })?;
        let mut out = Vec::new();
        if len == 0 {
            return Ok(out);
        }
        self.check_readable()?;
        if self.var.is_some() {
            // Variable-size chunks: no arithmetic finds the chunks of a range.
            let all = self.read_bytes()?;
            return Ok(all[start as usize..end as usize].to_vec());
        }
        let n = usize::try_from(len)
            .map_err(|_| Error::InvalidArgument(format!("{len} bytes do not fit in memory")))?;
        out.try_reserve_exact(n).map_err(|_| {
            Error::InvalidArgument(format!("cannot allocate {n} bytes for the stream"))
        })?;
        let cs = self.chunksize().unwrap_or(0);
        let mut decoder = Decoder::new(1);
        let mut compressed = ChunkBytes::default();
        let mut decoded = Vec::new();
        for c in start / cs..=(end - 1) / cs {
            let chunk_start = c * cs;
            let chunk_len = cs.min(self.nbytes() - chunk_start) as usize;
            decoded.clear();
            decoded.resize(chunk_len, 0);
            let (f, t) = (&self.frame, self.typesize());
            match fetch_decode(f, c, &mut compressed, &mut decoder, t, None, |_| {
                Target::Whole(&mut decoded)
            })? {
                Decoded::Data => {}
                Decoded::Zeros => decoded.fill(0),
            }
            let from = (start.max(chunk_start) - chunk_start) as usize;
            let to = (end.min(chunk_start + chunk_len as u64) - chunk_start) as usize;
            out.extend_from_slice(&decoded[from..to]);
        }
        Ok(out)
    }

    /// Refuse streams the linked c-blosc2 cannot enumerate.
    fn check_readable(&self) -> Result<()> {
        if self.frame.version >= 3 && self.var.is_none() {
            return Err(Error::Unsupported {
                source_name: self.frame.source.clone(),
                chunk: 0,
                what: "frame format",
                name: "version 3 (variable-size chunks)".into(),
            });
        }
        Ok(())
    }

    fn chunk_error(&self, chunk: u64, e: ChunkError) -> Error {
        e.at(&self.frame.source, chunk)
    }
}

/// Names of a frame's user attributes (vlmeta), in stored order.
pub(crate) fn attr_names(frame: &Frame) -> Vec<String> {
    frame.vlmeta_names()
}

/// The decompressed bytes of a frame's attribute `name`, `None` if absent.
pub(crate) fn attr_bytes(frame: &Frame, name: &str) -> Result<Option<Vec<u8>>> {
    let Some(raw) = frame.vlmeta_raw(name) else {
        return Ok(None);
    };
    let mut d = Decoder::new(1);
    d.decode_standalone(&raw, MAX_ATTR_BYTES)
        .map(Some)
        .map_err(|e| Error::Attr {
            source_name: frame.source.clone(),
            name: name.into(),
            reason: match e {
                ChunkError::Unsupported(..) => e.to_string(),
                _ => format!("corrupt stored value: {e}"),
            },
        })
}

/// A frame's attribute `name`, decoded; `None` if absent.
pub(crate) fn attr(frame: &Frame, name: &str) -> Result<Option<Value>> {
    match attr_bytes(frame, name)? {
        None => Ok(None),
        Some(b) => Value::decode(&b).map(Some).map_err(|e| Error::Attr {
            source_name: frame.source.clone(),
            name: name.into(),
            reason: e.reason,
        }),
    }
}

/// All of a frame's attributes, decoded, in stored order.
pub(crate) fn attrs(frame: &Frame) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for n in attr_names(frame) {
        if let Some(v) = attr(frame, &n)? {
            out.push((n, v));
        }
    }
    Ok(out)
}
