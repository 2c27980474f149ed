//! [`SChunk`]: any Blosc2 frame opened as a super-chunk, a stream of bytes cut into chunks,
//! whatever its metalayers: the containers python-blosc2 builds on (embedded stores, store
//! attributes, table manifests) and plain `blosc2.SChunk` files.

#![forbid(unsafe_code)]

use std::path::Path;

use crate::codec::chunk::{ChunkError, Decoded, Decoder};
use crate::error::{Error, Result};
use crate::ffi::ChunkBytes;
use crate::format::frame::{Frame, Storage};
use crate::model::attrs::Value;

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
        Ok(SChunk { frame })
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

    /// Number of chunks; `None` for frame format 3, whose chunks the linked c-blosc2 2.15
    /// cannot enumerate.
    pub fn nchunks(&self) -> Option<u64> {
        (self.frame.version < 3).then_some(self.frame.params.nchunks as u64)
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
        self.frame
            .lock()
            .metalayers()
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    }

    /// The raw (msgpack) content of metalayer `name`, `None` if absent.
    pub fn metalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.frame
            .lock()
            .metalayers()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
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
        self.read_bytes_range(0, self.nbytes())
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
            self.frame.chunk_into(c, &mut compressed)?;
            decoded.clear();
            decoded.resize(chunk_len, 0);
            match decoder
                .decode(&mut compressed, &mut decoded, self.typesize())
                .map_err(|e| self.chunk_error(c, e))?
            {
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
        if self.frame.version >= 3 {
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
        chunk_error(&self.frame.source, chunk, e)
    }
}

/// The public error for chunk `chunk` of frame `source`.
pub(crate) fn chunk_error(source: &str, chunk: u64, e: ChunkError) -> Error {
    let source_name = source.to_string();
    let chunk = chunk as i64;
    match e {
        ChunkError::Corrupt(reason) => Error::Chunk {
            source_name,
            chunk,
            reason,
        },
        ChunkError::C(e) => Error::Chunk {
            source_name,
            chunk,
            reason: format!("could not decompress it ({e})"),
        },
        ChunkError::Unsupported(what, name) => Error::Unsupported {
            source_name,
            chunk,
            what,
            name,
        },
    }
}

/// Names of a frame's user attributes (vlmeta), in stored order.
pub(crate) fn attr_names(frame: &Frame) -> Vec<String> {
    frame.lock().vlmeta_names()
}

/// The decompressed bytes of a frame's attribute `name`, `None` if absent.
pub(crate) fn attr_bytes(frame: &Frame, name: &str) -> Result<Option<Vec<u8>>> {
    let Some(raw) = frame.lock().vlmeta_raw(name) else {
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
