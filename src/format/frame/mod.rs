//! Frame access: CFrames, SFrames, in-memory and embedded frames, parsed in Rust (header,
//! metalayers, chunk index, trailer) from byte ranges of their storage (`crate::storage`);
//! chunks are fetched by ranges too, and c-blosc2 only decodes them in memory. `header.rs`
//! parses the header file, `partial.rs` assembles partial chunks.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};
use crate::ffi::{ChunkBytes, EXTENDED_HEADER_LEN};
use crate::format::chunk::ChunkHeader;
use crate::format::journal;
use crate::format::lock::{FrameLock, Held};
use crate::format::parts::FrameParts;
use crate::format::Malformed;
use crate::storage::{packed_reads, Directory, LocalDir, LocalFile, Memory, RangeRead, Window};

mod header;
mod partial;

use header::*;
#[cfg(test)]
pub(crate) mod interleave;

/// How a frame is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Storage {
    /// One contiguous frame (a `.b2nd` file, an in-memory buffer or an embedded frame).
    Contiguous,
    /// A sparse frame: a directory with `chunks.b2frame` and one file per chunk.
    Sparse,
}

impl Storage {
    /// `"contiguous"` or `"sparse"`.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Contiguous => "contiguous",
            Storage::Sparse => "sparse",
        }
    }
}

/// A frame on disk as an in-place change sees it: its parts and where they are.
pub(crate) struct OnDisk {
    /// Header and attributes.
    pub(crate) parts: FrameParts,
    /// Bytes of the header.
    pub(crate) header_len: u64,
    /// Bytes of the frame (header to trailer end).
    pub(crate) frame_len: u64,
    /// The chunk-offsets index (a compressed chunk; empty without chunks).
    pub(crate) index: Vec<u8>,
    /// The chunks the header declares.
    pub(crate) nchunks: i64,
    /// The frame's name in errors.
    pub(crate) source: String,
}

impl OnDisk {
    /// The chunk index's entries, decoded.
    pub(crate) fn offsets(&self) -> Result<Vec<i64>> {
        // A frame of chunks of different sizes records chunk size 0, from which the header
        // implies no chunk: its index's own size counts them (8 bytes each).
        let nchunks = match self.index.get(4..8) {
            Some(b) if self.nchunks == 0 => {
                i64::from(i32::from_le_bytes(b.try_into().expect("4 bytes"))).max(0) / 8
            }
            _ => self.nchunks,
        };
        decode_index(&self.index, nchunks).map_err(|why| Error::Frame {
            source_name: self.source.clone(),
            reason: format!("chunk index: {why}"),
        })
    }
}

/// Read the frame at the start of `file` (a CFrame file, or the `chunks.b2frame` of a sparse
/// frame when `sparse`) for an in-place change: parsed as [`Frame::open`] parses it.
pub(crate) fn read_on_disk(file: &Path, sparse: bool) -> Result<OnDisk> {
    let source = file.display().to_string();
    let parsed = Parsed::read(&LocalFile::open(file)?, sparse, &source)?;
    Ok(OnDisk {
        header_len: parsed.layout.header_len,
        frame_len: parsed.header.frame_len,
        nchunks: parsed.header.nchunks,
        source,
        parts: parsed.parts,
        index: parsed.index,
    })
}

/// Parse `bytes`, a whole contiguous frame in memory, as [`read_on_disk`] parses a file.
pub(crate) fn read_in_memory(bytes: Vec<u8>, source: &str) -> Result<OnDisk> {
    let parsed = Parsed::read(&crate::storage::Memory::new(bytes), false, source)?;
    Ok(OnDisk {
        header_len: parsed.layout.header_len,
        frame_len: parsed.header.frame_len,
        nchunks: parsed.header.nchunks,
        source: source.to_string(),
        parts: parsed.parts,
        index: parsed.index,
    })
}

/// The chunk index's entries: the compressed index of a frame of `nchunks` chunks decoded
/// (at most 128 M entries).
fn decode_index(index: &[u8], nchunks: i64) -> std::result::Result<Vec<i64>, String> {
    if nchunks <= 0 {
        return Ok(Vec::new());
    }
    if nchunks > MAX_OFFSETS {
        return Err(format!(
            "{nchunks} chunks: more than the {MAX_OFFSETS} whose index this crate decodes"
        ));
    }
    let len = nchunks as usize * 8;
    let mut raw = crate::ffi::try_zeroed(len)
        .ok_or_else(|| format!("cannot allocate {len} bytes for the chunk index"))?;
    match crate::ffi::Dctx::new(1).decompress(index, &mut raw) {
        Ok(got) if got == len => {}
        Ok(got) => return Err(format!("the chunk index decodes to {got} bytes")),
        Err(e) => return Err(format!("the chunk index does not decode ({e})")),
    }
    Ok(raw
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect())
}

/// Why a path that is neither a regular file nor a directory is refused: opening a FIFO
/// for reading waits for a writer (forever, if none comes), and devices and sockets hold no
/// frame that can be read at random.
pub(crate) fn not_regular(meta: &std::fs::Metadata) -> String {
    #[cfg(unix)]
    let kind = {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            "a FIFO"
        } else if t.is_socket() {
            "a socket"
        } else if t.is_char_device() || t.is_block_device() {
            "a device"
        } else {
            "not a regular file"
        }
    };
    #[cfg(not(unix))]
    let kind = {
        let _ = meta;
        "not a regular file"
    };
    format!("{kind}: b2nd reads regular files and directories only")
}

/// Refuse a sparse frame directory holding a chunk file that is not a regular file (opening
/// a FIFO would wait for a writer forever).
fn check_chunk_files(dir: &Path) -> std::result::Result<(), String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(()); // reported when the index is opened
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let is_frame_file = {
            let n = name.to_string_lossy();
            n.ends_with(".chunk") || n == "chunks.b2frame"
        };
        if !is_frame_file {
            continue;
        }
        let regular = match e.file_type() {
            Ok(t) if t.is_file() => true,
            Ok(t) if t.is_symlink() => e.path().metadata().is_ok_and(|m| m.is_file()),
            _ => false,
        };
        if !regular {
            let why = e
                .path()
                .metadata()
                .map(|m| not_regular(&m))
                .unwrap_or_else(|_| "unreadable".into());
            return Err(format!("`{}`: {why}", name.to_string_lossy()));
        }
    }
    Ok(())
}

/// Refuse a frame file whose header an interrupted in-place change left half-written: the
/// file ends with a valid journal record and the header is a mix of its old and new copies.
/// (A record the header matches in no way is dead bytes past the frame, and is ignored.)
fn check_journal(file: &LocalFile, source: &str) -> Result<()> {
    let read = |b: &mut [u8], pos: u64| file.read_vectored_at(&mut [(pos, b)]).ok();
    if !journal::torn(file.size()?, read) {
        return Ok(());
    }
    Err(Error::Frame {
        source_name: source.to_string(),
        reason: "an in-place change was interrupted while it wrote the header: open the \
                 array for writing (ArrayMut::open) to finish it"
            .into(),
    })
}

/// The super-chunk parameters a frame header records, as c-blosc2 derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FrameParams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nchunks: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub contiguous: bool,
}

/// Where a frame's bytes are.
enum FrameBytes {
    /// A contiguous frame, from the start of this source.
    Contiguous(Arc<dyn RangeRead>),
    /// A sparse frame: its `chunks.b2frame`, and the directory of its chunk files.
    Sparse {
        index: Arc<dyn RangeRead>,
        dir: Arc<dyn Directory>,
    },
}

/// An opened frame: what its header, index and trailer say, parsed in Rust from byte ranges
/// of its storage, and where its chunks are. Chunks are fetched by ranges too; c-blosc2
/// only decodes them, in memory.
pub(crate) struct Frame {
    pub(crate) source: String,
    pub(crate) params: FrameParams,
    /// Frame format version (2 ordinary; 3 = variable-size chunks, which c-blosc2 2.15 reads
    /// as empty: only acceptable for arrays without chunks).
    pub(crate) version: u8,
    /// Where the index is, for contiguous frames.
    pub(crate) layout: Option<Layout>,
    bytes: FrameBytes,
    header: FrameHeader,
    parts: FrameParts,
    /// The chunk-offsets index as stored (a compressed chunk; empty without chunks).
    index: Vec<u8>,
    /// The index decoded, on first use.
    offsets: OnceLock<std::result::Result<Vec<i64>, String>>,
    /// For frames in local files: what tells this version of the file from a later one.
    files: Option<ChunkFiles>,
    /// Compressed chunks kept and fetched ahead (remote contiguous frames only).
    cache: Option<Arc<super::chunk_cache::ChunkCache>>,
    /// The chunks' offsets, sorted and distinct, on first use (where each chunk ends).
    sorted_offsets: OnceLock<Vec<u64>>,
}

/// What a frame read from the local file system checks around every fetch.
struct ChunkFiles {
    /// The frame file, or the sparse-frame directory.
    path: PathBuf,
    /// Where the frame starts in its file (contiguous frames).
    frame_offset: u64,
    sparse: bool,
    /// The file holding the header (the frame file, or `chunks.b2frame`) as it was when
    /// opened: an in-place change or a compaction alters it.
    stamp: Option<Stamp>,
    /// python-blosc2's lock sidecar, when the frame is locked by its users: taken shared
    /// while opening and fetching chunks (c-blosc2's readers do), with its generation
    /// counter as it was when opened (any later writer advances it).
    shared: Option<(FrameLock, u64)>,
}

/// What tells two versions of an opened frame file apart: its stamp and its first bytes
/// from `offset` (its header, or most of it; empty when unreadable), read through the open
/// file, whatever its path names by now.
fn version(file: &LocalFile, offset: u64) -> (Option<Stamp>, Vec<u8>) {
    let stamp = file.metadata().ok().map(|m| Stamp::from_metadata(&m));
    let mut head = vec![0; 4096];
    let n = file.read_upto_at(&mut head, offset).unwrap_or(0);
    head.truncate(n);
    (stamp, head)
}

/// What identifies one version of a file: size, modification time, and (Unix) inode.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp(u64, Option<std::time::SystemTime>, u64);

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path)
            .ok()
            .map(|m| Stamp::from_metadata(&m))
    }

    fn from_metadata(m: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        let ino = std::os::unix::fs::MetadataExt::ino(m);
        #[cfg(not(unix))]
        let ino = 0;
        Stamp(m.len(), m.modified().ok(), ino)
    }
}

impl ChunkFiles {
    fn header_file(&self) -> PathBuf {
        if self.sparse {
            self.path.join("chunks.b2frame")
        } else {
            self.path.clone()
        }
    }
}

/// Where one chunk is, from its index entry.
enum Entry {
    /// A special chunk (zeros, NaN, uninitialised): no bytes stored, its index code.
    Special(i64),
    /// Bytes from this offset after the header (contiguous frames).
    At(u64),
    /// A sparse frame's chunk file with this number.
    File(u32),
}

impl Frame {
    /// Open a CFrame file or an SFrame directory, the frame starting at `offset`. When
    /// python-blosc2's lock sidecar is there (or `BLOSC_LOCKING` is set), the opening and
    /// every chunk fetch take it shared, as c-blosc2's readers do.
    pub(crate) fn open(path: &Path, offset: u64) -> Result<Frame> {
        Frame::open_with(path, offset, true)
    }

    /// [`Frame::open`] for the writer that holds python-blosc2's lock exclusively while it
    /// reads (a shared lock on another descriptor would wait for itself).
    pub(crate) fn open_for_writer(path: &Path) -> Result<Frame> {
        Frame::open_with(path, 0, false)
    }

    fn open_with(path: &Path, offset: u64, share: bool) -> Result<Frame> {
        let source = if offset == 0 {
            path.display().to_string()
        } else {
            format!("{}@{offset}", path.display())
        };
        let bad = |reason: String| Error::Frame {
            source_name: source.clone(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() && !meta.is_file() {
            return Err(bad(not_regular(&meta)));
        }
        // A writer may publish a change (a header write in place, a renamed index) while
        // this opens the frame in several reads: everything is read through one open file,
        // whose stamp and header bytes are taken before and after, and the open is tried
        // again when they differ, so that every part of the opened frame comes from one
        // version. (A file renamed over the path meanwhile does not disturb the open one;
        // its stamp tells [`Frame::unchanged`] that the path holds another version now.)
        let sparse = meta.is_dir();
        let head_at = if sparse { 0 } else { offset };
        let sidecar = if share {
            FrameLock::open(path, sparse, false)?
        } else {
            None
        };
        for _ in 0..16 {
            let held = sidecar.as_ref().map(FrameLock::shared).transpose()?;
            let file = Frame::open_header_file(path, offset, sparse, &bad)?;
            let before = version(&file, head_at);
            let bytes = if sparse {
                FrameBytes::Sparse {
                    index: file.clone(),
                    dir: Arc::new(LocalDir::new(path)),
                }
            } else {
                if offset == 0 {
                    check_journal(&file, &source)?;
                }
                let whole: Arc<dyn RangeRead> = file.clone();
                #[cfg(test)]
                let whole: Arc<dyn RangeRead> = Arc::new(interleave::Interleaved(whole));
                if offset == 0 {
                    FrameBytes::Contiguous(whole)
                } else {
                    let window = Window::new(whole, offset)
                        .map_err(|_| bad(format!("offset {offset} lies past the file's end")))?;
                    FrameBytes::Contiguous(Arc::new(window))
                }
            };
            let parsed = Frame::parse(source.clone(), bytes);
            let after = version(&file, head_at);
            // A parse that failed while the file changed is tried again: the failure may be
            // the mix of two versions (a header of one, an index of the other).
            if before == after && (parsed.is_err() || before.0.is_some()) {
                let mut frame = parsed?;
                let generation = held.map(|h| h.generation);
                frame.files = Some(ChunkFiles {
                    path: path.to_path_buf(),
                    frame_offset: offset,
                    sparse,
                    stamp: before.0,
                    shared: sidecar.zip(generation),
                });
                return Ok(frame);
            }
            drop(held);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        Err(bad(
            "the file kept changing while it was being opened".into()
        ))
    }

    /// The file holding the header of the frame at `path`, opened: the frame file, or a
    /// sparse frame's `chunks.b2frame` (its chunk files checked to be regular files).
    fn open_header_file(
        path: &Path,
        offset: u64,
        sparse: bool,
        bad: &dyn Fn(String) -> Error,
    ) -> Result<Arc<LocalFile>> {
        if !sparse {
            return Ok(Arc::new(LocalFile::open(path)?));
        }
        check_chunk_files(path).map_err(bad)?;
        if offset != 0 {
            return Err(bad(
                "an offset applies to a file, not a sparse-frame directory".into(),
            ));
        }
        let index = path.join("chunks.b2frame");
        if !index.is_file() {
            return Err(bad(
                "directory without `chunks.b2frame`: not a sparse frame".into(),
            ));
        }
        Ok(Arc::new(LocalFile::open(&index)?))
    }

    /// Open the contiguous frame starting `offset` bytes into `src` (a remote store's
    /// member), named `location@offset` in errors.
    #[cfg(feature = "remote")]
    pub(crate) fn in_source(src: Arc<dyn RangeRead>, offset: u64) -> Result<Frame> {
        let name = src.location();
        if offset == 0 {
            return Frame::parse(name, FrameBytes::Contiguous(src));
        }
        let source = format!("{name}@{offset}");
        let window = Window::new(src, offset).map_err(|_| Error::Frame {
            source_name: source.clone(),
            reason: format!("offset {offset} lies past the object's end"),
        })?;
        Frame::parse(source, FrameBytes::Contiguous(Arc::new(window)))
    }

    /// Open the frame at `url` (an object, or a sparse frame's prefix).
    #[cfg(feature = "remote")]
    pub(crate) fn open_url(url: &str, options: &crate::storage::RemoteOptions) -> Result<Frame> {
        let entry = crate::storage::RemoteEntry::open_url(url, options)?;
        Frame::from_remote(url, crate::storage::RemoteFrame::open(entry)?)
    }

    /// Open the frame at `path` of a caller's `store`.
    #[cfg(feature = "remote")]
    pub(crate) fn open_object(
        store: Arc<dyn object_store::ObjectStore>,
        path: &str,
        options: &crate::storage::RemoteOptions,
    ) -> Result<Frame> {
        let name = format!("{store}/{path}");
        let p = object_store::path::Path::parse(path).map_err(|e| Error::Remote {
            url: name.clone(),
            reason: e.to_string(),
        })?;
        let entry = crate::storage::RemoteEntry::open(store, p, &name, options)?;
        Frame::from_remote(&name, crate::storage::RemoteFrame::open(entry)?)
    }

    /// Open the frame at `url` (a contiguous frame's object, or a sparse frame's prefix),
    /// named `url` in errors.
    #[cfg(feature = "remote")]
    pub(crate) fn from_remote(url: &str, remote: crate::storage::RemoteFrame) -> Result<Frame> {
        let bytes = match remote {
            crate::storage::RemoteFrame::Object(o) => FrameBytes::Contiguous(Arc::new(o)),
            crate::storage::RemoteFrame::Sparse { index, dir } => FrameBytes::Sparse {
                index: Arc::new(index),
                dir: Arc::new(dir),
            },
        };
        Frame::parse(url.to_string(), bytes)
    }

    /// Open an in-memory CFrame.
    pub(crate) fn from_bytes(bytes: Vec<u8>) -> Result<Frame> {
        Frame::parse(
            "<memory>".into(),
            FrameBytes::Contiguous(Arc::new(Memory::new(bytes))),
        )
    }

    /// Parse the frame in `bytes`, named `source` in errors.
    fn parse(source: String, bytes: FrameBytes) -> Result<Frame> {
        let (src, sparse) = match &bytes {
            FrameBytes::Contiguous(s) => (s, false),
            FrameBytes::Sparse { index, .. } => (index, true),
        };
        let p = Parsed::read(src.as_ref(), sparse, &source)?;
        let budget = src.chunk_cache_budget();
        let cache =
            (!sparse && budget > 0).then(|| Arc::new(super::chunk_cache::ChunkCache::new(budget)));
        Ok(Frame {
            source,
            params: p.params,
            version: p.header.version,
            layout: (!sparse).then_some(p.layout),
            bytes,
            header: p.header,
            parts: p.parts,
            index: p.index,
            offsets: OnceLock::new(),
            files: None,
            cache,
            sorted_offsets: OnceLock::new(),
        })
    }

    /// The whole bytes of a contiguous frame (`None` for a sparse one).
    pub(crate) fn contiguous_bytes(&self) -> Result<Option<Vec<u8>>> {
        let FrameBytes::Contiguous(src) = &self.bytes else {
            return Ok(None);
        };
        let len = usize::try_from(self.header.frame_len).map_err(|_| Error::Frame {
            source_name: self.source.clone(),
            reason: "frame larger than memory".into(),
        })?;
        src.read_range(0, len).map(Some)
    }

    /// The same frame, named `source` in errors (a store member: `store.b2z:/key`).
    pub(crate) fn named(mut self, source: String) -> Frame {
        self.source = source;
        self
    }

    /// How the frame is stored.
    pub(crate) fn storage(&self) -> Storage {
        match self.bytes {
            FrameBytes::Contiguous(_) => Storage::Contiguous,
            FrameBytes::Sparse { .. } => Storage::Sparse,
        }
    }

    /// Names and contents of the fixed-size metalayers, in stored order.
    pub(crate) fn metalayers(&self) -> Vec<(String, Vec<u8>)> {
        self.parts.metalayers()
    }

    /// Names of the fixed-size metalayers, in stored order.
    pub(crate) fn metalayer_names(&self) -> Vec<String> {
        self.metalayers().into_iter().map(|(n, _)| n).collect()
    }

    /// The content of fixed-size metalayer `name`, if present.
    pub(crate) fn metalayer(&self, name: &str) -> Option<Vec<u8>> {
        self.metalayers()
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
    }

    /// Names of the variable-length metalayers (user attributes), in stored order.
    pub(crate) fn vlmeta_names(&self) -> Vec<String> {
        self.parts.vlmeta.iter().map(|(n, _)| n.clone()).collect()
    }

    /// The stored (compressed, a Blosc2 chunk) content of attribute `name`, if present.
    pub(crate) fn vlmeta_raw(&self, name: &str) -> Option<Vec<u8>> {
        self.parts
            .vlmeta
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    }

    fn chunk_error(&self, n: u64, reason: String) -> Error {
        Error::Chunk {
            source_name: self.source.clone(),
            chunk: n as i64,
            reason,
        }
    }

    /// The decoded chunk index (decoded once, on first use).
    fn offsets(&self) -> std::result::Result<&[i64], String> {
        let decoded = self
            .offsets
            .get_or_init(|| decode_index(&self.index, self.params.nchunks));
        decoded.as_deref().map_err(Clone::clone)
    }

    /// Whether this frame fetches chunks ahead of its readers (a remote contiguous frame
    /// with a chunk cache).
    pub(crate) fn fetches_ahead(&self) -> bool {
        self.cache.is_some()
    }

    /// Fetch `chunks` ahead into the chunk cache (remote contiguous frames; nothing
    /// otherwise): each chunk's bytes run from its offset to the next chunk's, or to the
    /// index. Chunks whose place is odd (special, outside the frame) are left to their
    /// readers.
    pub(crate) fn prefetch(&self, chunks: impl IntoIterator<Item = u64>) {
        let (Some(cache), FrameBytes::Contiguous(src), Some(layout)) =
            (&self.cache, &self.bytes, &self.layout)
        else {
            return;
        };
        let Ok(offsets) = self.offsets() else {
            return;
        };
        let sorted = self.sorted_offsets.get_or_init(|| {
            let mut v: Vec<u64> = offsets
                .iter()
                .filter_map(|&o| u64::try_from(o).ok())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        });
        let header_len = layout.header_len;
        let data_end = layout.index_at.saturating_sub(header_len);
        let mut wanted = Vec::new();
        let mut total = 0u64;
        for n in chunks {
            if total > cache.budget() as u64 {
                break; // the rest is announced by later reads
            }
            let Some(&o) = offsets.get(n as usize) else {
                continue;
            };
            let Ok(o) = u64::try_from(o) else {
                continue; // special: nothing to fetch
            };
            let i = sorted.partition_point(|&x| x <= o);
            let end = sorted.get(i).copied().unwrap_or(data_end).min(data_end);
            // A chunk is at most 2 GiB; a longer gap to the next offset (a damaged index,
            // unused space) is left to the chunk's reader, which reads what its header says.
            let len = end.saturating_sub(o);
            if len > 0 && len <= (i32::MAX as u64).min(cache.budget() as u64) {
                wanted.push((n, header_len + o, len));
                total += len;
            }
        }
        cache.prefetch(src, &wanted);
    }

    /// Where chunk `n` is, from the index: checked as c-blosc2 checks it (`get_coffset`).
    fn entry(&self, n: u64) -> Result<Entry> {
        if n >= u64::try_from(self.params.nchunks).unwrap_or(0) {
            return Err(self.chunk_error(n, "a chunk number outside the frame".into()));
        }
        let offsets = self.offsets().map_err(|e| self.chunk_error(n, e))?;
        let off = offsets[n as usize];
        if off < 0 {
            return Ok(Entry::Special(off));
        }
        match self.bytes {
            FrameBytes::Sparse { .. } => u32::try_from(off).map(Entry::File).map_err(|_| {
                self.chunk_error(n, format!("chunk file number {off} is not a 32-bit one"))
            }),
            FrameBytes::Contiguous(_) => Ok(Entry::At(off as u64)),
        }
    }

    /// Copy compressed chunk `n` into `out`.
    pub(crate) fn chunk_into(&self, n: u64, out: &mut ChunkBytes) -> Result<()> {
        let _shared = self.share()?;
        let fetched = self.fetch_chunk(n, out).map_err(|e| match e {
            Error::Io { path, source } => self.chunk_error(
                n,
                format!(
                    "could not read it from {} ({source}): missing or truncated chunk data",
                    path.display()
                ),
            ),
            e => e,
        });
        // A change published since this frame was opened could mix versions. Checked after
        // the fetch: unchanged now means unchanged during it.
        if !self.unchanged() {
            return Err(self.changed_error());
        }
        fetched
    }

    fn fetch_chunk(&self, n: u64, out: &mut ChunkBytes) -> Result<()> {
        match self.entry(n)? {
            Entry::Special(code) => {
                let p = &self.params;
                let last = n + 1 == p.nchunks as u64;
                let rest = p.nbytes % i64::from(p.chunksize.max(1));
                let nbytes = if last && rest > 0 {
                    rest as i32
                } else {
                    p.chunksize
                };
                let header = crate::ffi::special_chunk(code, nbytes, p.typesize, p.blocksize)
                    .ok_or_else(|| {
                        self.chunk_error(n, format!("index entry {code:#x} names no special value"))
                    })?
                    .map_err(|e| self.chunk_error(n, format!("a special chunk: {e}")))?;
                out.buffer(header.len()).copy_from_slice(&header);
                Ok(())
            }
            Entry::File(number) => {
                let FrameBytes::Sparse { dir, .. } = &self.bytes else {
                    unreachable!("file entries come from sparse frames")
                };
                let file = dir.file(&chunk_file_name(number.into()))?;
                let len = file.size()?;
                if len < 16 || len > i32::MAX as u64 {
                    return Err(self
                        .chunk_error(n, format!("its chunk file holds {len} bytes, not a chunk")));
                }
                let buf = out.buffer(len as usize);
                file.read_vectored_at(&mut [(0, buf)])
            }
            Entry::At(offset) => {
                let FrameBytes::Contiguous(src) = &self.bytes else {
                    unreachable!("offsets come from contiguous frames")
                };
                // Fetched ahead: the chunk is the start of its bytes, as its header says.
                let got = self.cache.as_ref().map(|c| c.get(n));
                if let Some(super::chunk_cache::Got::Failed(e)) = got {
                    return Err(e);
                }
                if let Some(super::chunk_cache::Got::Bytes(b)) = got {
                    let mut c = [0u8; 4];
                    let cbytes = b
                        .copy_to(12, &mut c)
                        .then(|| u32::from_le_bytes(c) as usize);
                    if let Some(cb) = cbytes.filter(|&c| c >= EXTENDED_HEADER_LEN && c <= b.len()) {
                        if b.copy_to(0, out.buffer(cb)) {
                            return Ok(());
                        }
                    }
                }
                // The chunk lies between the header and the index chunk, inside the frame.
                // c-blosc2 2.15 (`frame_get_chunk`) would allocate the compressed size the
                // chunk's header declares (up to 2 GiB) before checking that the frame holds
                // that much (found by fuzzing).
                let h = &self.header;
                let start = u64::from(h.header_len).saturating_add(offset);
                let outside =
                    || self.chunk_error(n, format!("its offset {offset} lies outside the frame"));
                if start.saturating_add(EXTENDED_HEADER_LEN as u64) > h.frame_len {
                    return Err(outside());
                }
                let header = src.read_range(start, EXTENDED_HEADER_LEN)?;
                let cbytes = u64::from(u32::from_le_bytes([
                    header[12], header[13], header[14], header[15],
                ]));
                if cbytes < EXTENDED_HEADER_LEN as u64 || start + cbytes > h.frame_len {
                    return Err(self.chunk_error(
                        n,
                        format!(
                            "its header declares {cbytes} compressed bytes, more than the \
                             frame holds from offset {offset}"
                        ),
                    ));
                }
                let buf = out.buffer(cbytes as usize);
                src.read_vectored_at(&mut [(start, buf)])
            }
        }
    }

    /// Whether the frame's file is still the version this frame opened (and, when it is
    /// locked by its users, no writer has taken the lock since).
    pub(crate) fn unchanged(&self) -> bool {
        match &self.files {
            Some(f) => {
                f.stamp.is_some()
                    && Stamp::of(&f.header_file()) == f.stamp
                    && f.shared
                        .as_ref()
                        .is_none_or(|(l, seen)| l.read_seq().ok() == Some(*seen))
            }
            None => true,
        }
    }

    /// The shared lock, held while chunks are fetched from a frame its users lock.
    fn share(&self) -> Result<Option<Held<'_>>> {
        self.files
            .as_ref()
            .and_then(|f| f.shared.as_ref())
            .map(|(l, _)| l.shared())
            .transpose()
    }

    /// The file (or sparse directory) and frame offset this frame was opened from, if any.
    pub(crate) fn origin(&self) -> Option<(&Path, u64)> {
        self.files
            .as_ref()
            .map(|f| (f.path.as_path(), f.frame_offset))
    }

    fn changed_error(&self) -> Error {
        Error::Frame {
            source_name: self.source.clone(),
            reason: "the file changed since it was opened (an in-place change, compaction, \
                     replacement, truncation or removal): open it again to read what it holds now"
                .into(),
        }
    }
}

/// The name of a sparse frame's chunk file number `n` (c-blosc2: `%08X.chunk`).
pub(crate) fn chunk_file_name(n: u64) -> String {
    format!("{n:08X}.chunk")
}

/// The number of a sparse frame's chunk file named `name` (the inverse of
/// [`chunk_file_name`]), if it is one.
pub(crate) fn chunk_file_id(name: &std::ffi::OsStr) -> Option<i64> {
    let s = name.to_str()?.strip_suffix(".chunk")?;
    (s.len() == 8)
        .then(|| i64::from_str_radix(s, 16).ok())
        .flatten()
}

#[cfg(test)]
mod tests;
