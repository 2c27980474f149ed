//! The one writer of frames that change on disk: new contents (chunks, a chunk index, a
//! trailer of attributes, a header for the new shape) put down after everything the current
//! header reaches, or in new files, made durable, and only then published.
//!
//! New frames ([`NewFrame`]: arrays the builder writes, a store's frames) are written by
//! the same code: the header and metalayers of an empty frame as c-blosc2 lays them out,
//! then the chunks as they come, then the index, the trailer and the final header; a new
//! frame is written where nobody reads it (a staging path, or memory) and published by its
//! writer.
//!
//! Three ways to publish a change, one for each situation, all atomic for readers and after
//! a crash:
//! - a contiguous frame with chunks: the new chunks, index and trailer are appended past the
//!   frame's end with a journal record after them, made durable together, then one header
//!   write ([`journal::publish_header`]) publishes them (nothing a reader of the old contents
//!   reaches is overwritten);
//! - a contiguous frame without chunks (its trailer must follow the header) and compaction:
//!   a new file beside it, renamed over it;
//! - a sparse frame: new chunks to new chunk files, then a new `chunks.b2frame` renamed into
//!   place; chunk files the new index no longer names are deleted afterwards.

#![forbid(unsafe_code)]

use std::fs::OpenOptions;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::frame::{chunk_file_id, chunk_file_name, OnDisk};
use super::journal::{self, crash_point, Journal};
use super::parts::{special_offset, trailer_bytes, FrameParts};
use crate::error::{Error, Result};
use crate::ffi::fs::start_writeback;
use crate::ffi::{Cctx, CompressParams};
use crate::model::durability::Durability;
use crate::storage::{parent_dir, sync_dir};

/// A chunk of the new contents.
pub(crate) enum ChunkRef {
    /// An existing chunk's index entry, kept as it is.
    Old(i64),
    /// A special chunk's index code.
    Code(i64),
    /// New compressed bytes.
    Bytes(Vec<u8>),
}

/// A change of shape: the metalayer holding it (`name`, new `content` of the same length)
/// and the bytes of an extended chunk (whole blocks), which the header records.
pub(crate) struct Reshape<'a> {
    pub(crate) name: &'a str,
    pub(crate) content: Vec<u8>,
    pub(crate) chunk_bytes: u64,
}

/// What the header records of the new contents' sizes.
pub(crate) enum Sizes<'a> {
    /// Same shape, same chunks: the metalayers, sizes per chunk and data size stay as they
    /// are (whatever layout wrote them).
    Keep,
    /// An array's new shape.
    Reshape(Reshape<'a>),
    /// Chunks of their own sizes appended to a super-chunk: its new data size and chunk
    /// size (0: chunks of different sizes), and optionally a metalayer's new content (of
    /// the same length).
    Grown {
        nbytes: i64,
        chunksize: i32,
        meta: Option<(&'a str, Vec<u8>)>,
    },
}

/// The new contents of a frame.
pub(crate) struct Contents<'a> {
    /// Every chunk, in order.
    pub(crate) chunks: Vec<ChunkRef>,
    /// The attributes (name, stored value) the trailer holds.
    pub(crate) vlmeta: &'a [(String, Vec<u8>)],
    /// The sizes the header records.
    pub(crate) sizes: Sizes<'a>,
}

/// How new contents were published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Published {
    /// In the same file (a contiguous frame's header, a sparse frame's index file).
    InPlace,
    /// A new file was renamed over the old one (its locks are the old file's).
    Replaced,
}

/// The new contents placed: the frame's new length, what follows its chunks (index and
/// trailer) and its new header.
struct Laid {
    frame_len: u64,
    tail: Vec<u8>,
    header: Vec<u8>,
}

/// A frame on disk being changed: where it is and what it holds now.
pub(crate) struct FrameEdit<'a> {
    /// The frame file, or a sparse frame's directory.
    pub(crate) path: &'a Path,
    pub(crate) sparse: bool,
    /// The frame as read for this change.
    pub(crate) disk: &'a OnDisk,
    /// Whether the change is synced to the disk before it is published and returns.
    pub(crate) durability: Durability,
}

/// Give `new` (a temporary file, created 0600) the permissions of the file at `old` that it
/// replaces, if there is one: readers the old file let in are not shut out.
fn keep_permissions(new: &std::fs::File, old: &Path) -> std::io::Result<()> {
    match std::fs::metadata(old) {
        Ok(m) => new.set_permissions(m.permissions()),
        Err(_) => Ok(()),
    }
}

impl FrameEdit<'_> {
    /// Publish `contents` as the frame's new contents, the way the frame's kind needs.
    pub(crate) fn publish(&self, contents: Contents<'_>) -> Result<Published> {
        if self.sparse {
            self.publish_sparse(contents)?;
            Ok(Published::InPlace)
        } else if contents.chunks.is_empty() {
            self.rewrite(contents)?;
            Ok(Published::Replaced)
        } else {
            self.publish_contiguous(contents)?;
            Ok(Published::InPlace)
        }
    }

    /// A contiguous frame written anew beside the file and renamed over it (compaction, and
    /// frames without chunks, whose trailer must follow the header).
    pub(crate) fn rewrite(&self, contents: Contents<'_>) -> Result<()> {
        let disk = self.disk;
        let dir = parent_dir(self.path);
        let mut tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(io_err(&dir))?;
        let tpath = tmp.path().to_path_buf();
        let io = io_err(&tpath);
        let laid = self.lay_out(&contents, disk.header_len)?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        w.write_all(&vec![0u8; disk.header_len as usize])
            .map_err(&io)?;
        write_new_chunks(&mut w, &contents.chunks).map_err(&io)?;
        w.write_all(&laid.tail).map_err(&io)?;
        w.flush().map_err(&io)?;
        drop(w);
        let header = laid.header;
        let f = tmp.as_file_mut();
        f.seek(SeekFrom::Start(0)).map_err(&io)?;
        f.write_all(&header).map_err(&io)?;
        keep_permissions(f, self.path).map_err(&io)?;
        f.sync_all().map_err(&io)?;
        tmp.persist(self.path)
            .map_err(|e| io_err(self.path)(e.error))?;
        sync_dir(&dir);
        Ok(())
    }

    /// Delete the chunk files of a sparse frame that its index does not name (what
    /// compaction leaves of a sparse frame).
    pub(crate) fn remove_unreferenced_chunk_files(&self) -> Result<()> {
        let live: std::collections::HashSet<i64> = self
            .disk
            .offsets()?
            .into_iter()
            .filter(|&o| o >= 0)
            .collect();
        let dir = self.path;
        for e in std::fs::read_dir(dir).map_err(io_err(dir))? {
            let e = e.map_err(io_err(dir))?;
            if let Some(id) = chunk_file_id(&e.file_name()) {
                if !live.contains(&id) {
                    std::fs::remove_file(e.path()).map_err(io_err(&e.path()))?;
                }
            }
        }
        Ok(())
    }

    /// Where the new contents go when their new chunks are written in order from `pos` (the
    /// file's position after the header, or after the current frame), and the index,
    /// trailer and header that follow from it: what the file is changed to, computed before
    /// it is touched.
    fn lay_out(&self, contents: &Contents<'_>, mut pos: u64) -> Result<Laid> {
        let header_len = self.disk.header_len;
        let offsets: Vec<i64> = contents
            .chunks
            .iter()
            .map(|c| match c {
                ChunkRef::Old(o) | ChunkRef::Code(o) => *o,
                ChunkRef::Bytes(b) => {
                    let at = (pos - header_len) as i64;
                    pos += b.len() as u64;
                    at
                }
            })
            .collect();
        let tail = self.tail(&offsets, contents.vlmeta)?;
        let frame_len = pos + tail.len() as u64;
        let header = self.header(contents, frame_len, &offsets, pos - header_len)?;
        Ok(Laid {
            frame_len,
            tail,
            header,
        })
    }

    /// The header of the new contents: sizes, attributes flag and, for a new shape, the
    /// metalayer and sizes per chunk.
    fn header(
        &self,
        contents: &Contents<'_>,
        frame_len: u64,
        offsets: &[i64],
        cbytes: u64,
    ) -> Result<Vec<u8>> {
        let parts = &self.disk.parts;
        let has_vlmeta = !contents.vlmeta.is_empty();
        let header = match &contents.sizes {
            Sizes::Keep => parts.new_header(
                frame_len,
                parts.nbytes(),
                cbytes as i64,
                None,
                has_vlmeta,
                None,
            ),
            Sizes::Grown {
                nbytes,
                chunksize,
                meta,
            } => parts.new_header(
                frame_len,
                *nbytes,
                cbytes as i64,
                meta.as_ref().map(|(n, c)| (*n, c.as_slice())),
                has_vlmeta,
                Some(*chunksize),
            ),
            Sizes::Reshape(r) => {
                let nchunks = offsets.len() as u64;
                parts.new_header(
                    frame_len,
                    (nchunks * r.chunk_bytes) as i64,
                    cbytes as i64,
                    Some((r.name, &r.content)),
                    has_vlmeta,
                    (nchunks > 0).then_some(r.chunk_bytes as i32),
                )
            }
        };
        header.map_err(|e| self.bad(e.0))
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
            source_name: self.disk.source.clone(),
            reason,
        }
    }

    /// Contiguous frames: append chunks, index, trailer and the journal record after the
    /// current frame end, make them durable (one sync), then publish with one header write
    /// and cut the record off.
    fn publish_contiguous(&self, contents: Contents<'_>) -> Result<()> {
        let (path, disk) = (self.path, self.disk);
        let io = io_err(path);
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(&io)?;
        // Everything the new contents could be refused for is found here, before a byte of
        // the file changes.
        let Laid {
            frame_len,
            tail,
            header: new,
        } = self.lay_out(&contents, disk.frame_len)?;
        let appended = (|| {
            f.seek(SeekFrom::Start(disk.frame_len)).map_err(&io)?;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut f);
            write_new_chunks(&mut w, &contents.chunks).map_err(&io)?;
            w.write_all(&tail).map_err(&io)?;
            let record = Journal {
                old: disk.parts.header.clone(),
                new,
            };
            let record_bytes = record.encode();
            w.write_all(&record_bytes).map_err(&io)?;
            w.flush().map_err(&io)?;
            drop(w);
            // The record must end the file: bytes a failed earlier attempt left past it go.
            let end = frame_len + record_bytes.len() as u64;
            if f.metadata().map_err(&io)?.len() > end {
                f.set_len(end).map_err(&io)?;
            }
            if self.durability.syncs() {
                f.sync_data().map_err(&io)?;
            }
            crash_point("data");
            Ok((frame_len, record.new))
        })();
        let (frame_len, new) = match appended {
            Ok(done) => done,
            Err(e) => {
                // Nothing was published: drop what was appended (best effort).
                let _ = f.set_len(disk.frame_len);
                return Err(e);
            }
        };
        journal::publish_header(
            path,
            &mut f,
            &disk.parts.header,
            &new,
            disk.frame_len,
            self.durability,
        )?;
        // Published: the record is no longer needed (if this fails, the next in-place open
        // cuts it off).
        let _ = f.set_len(frame_len);
        Ok(())
    }

    /// Sparse frames: new chunks to new files, then a new `chunks.b2frame` renamed into
    /// place; chunk files no longer referenced are deleted afterwards.
    fn publish_sparse(&self, contents: Contents<'_>) -> Result<()> {
        let mut created = Vec::new();
        let r = self.write_sparse(contents, &mut created);
        if r.is_err() {
            // Not published: the new chunk files are nobody's.
            for p in created {
                let _ = std::fs::remove_file(p);
            }
        }
        r
    }

    fn write_sparse(&self, contents: Contents<'_>, created: &mut Vec<PathBuf>) -> Result<()> {
        let dir = self.path;
        let old_offsets = self.disk.offsets()?;
        let mut next = old_offsets.iter().copied().max().unwrap_or(-1).max(-1) + 1;
        for e in std::fs::read_dir(dir).map_err(io_err(dir))? {
            let e = e.map_err(io_err(dir))?;
            if let Some(id) = chunk_file_id(&e.file_name()) {
                next = next.max(id + 1);
            }
        }
        let mut offsets = Vec::with_capacity(contents.chunks.len());
        let mut cbytes = 0u64;
        for c in &contents.chunks {
            offsets.push(match c {
                ChunkRef::Old(o) | ChunkRef::Code(o) => {
                    if *o >= 0 {
                        let p = dir.join(chunk_file_name(*o as u64));
                        cbytes += std::fs::metadata(&p).map_err(io_err(&p))?.len();
                    }
                    *o
                }
                ChunkRef::Bytes(b) => {
                    let id = next;
                    next += 1;
                    let p = dir.join(chunk_file_name(id as u64));
                    let mut f = OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&p)
                        .map_err(io_err(&p))?;
                    created.push(p.clone());
                    f.write_all(b).map_err(io_err(&p))?;
                    if self.durability.syncs() {
                        f.sync_data().map_err(io_err(&p))?;
                    }
                    cbytes += b.len() as u64;
                    id
                }
            });
        }
        let body = self.tail(&offsets, contents.vlmeta)?;
        let frame_len = self.disk.header_len + body.len() as u64;
        let header = self.header(&contents, frame_len, &offsets, cbytes)?;
        let mut tmp = tempfile::Builder::new()
            .prefix(".b2nd-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(io_err(dir))?;
        let tpath = tmp.path().to_path_buf();
        let io = io_err(&tpath);
        tmp.write_all(&header).map_err(&io)?;
        tmp.write_all(&body).map_err(&io)?;
        if self.durability.syncs() {
            tmp.as_file().sync_all().map_err(&io)?;
        }
        let index = dir.join("chunks.b2frame");
        keep_permissions(tmp.as_file(), &index).map_err(&io)?;
        crash_point("data");
        tmp.persist(&index).map_err(|e| io_err(&index)(e.error))?;
        if self.durability.syncs() {
            sync_dir(dir);
        }
        // Published: chunk files the new index no longer uses can go.
        let live: std::collections::HashSet<i64> = offsets.iter().copied().collect();
        for &o in &old_offsets {
            if o >= 0 && !live.contains(&o) {
                let _ = std::fs::remove_file(dir.join(chunk_file_name(o as u64)));
            }
        }
        Ok(())
    }
}

/// Where a [`NewFrame`] goes.
enum Dest {
    /// A contiguous frame file, written from the header's end on.
    File {
        path: PathBuf,
        w: std::io::BufWriter<std::fs::File>,
    },
    /// A sparse frame's directory: one file per chunk, then `chunks.b2frame`.
    Dir(PathBuf),
    /// A contiguous frame in memory (the header's bytes first).
    Memory(Vec<u8>),
}

/// A new frame being written: chunks appended in order after the header of an empty frame
/// (`template`, with the metalayers), then [`NewFrame::finish`] writes the chunk index, the
/// trailer and the final header. Special chunks (zeros, NaN, uninitialised) take no bytes:
/// their index entry says what they are, as c-blosc2 records them.
pub(crate) struct NewFrame {
    parts: FrameParts,
    header_len: u64,
    dest: Dest,
    offsets: Vec<i64>,
    /// Frame position after the last chunk written (contiguous frames).
    pos: u64,
    /// Compressed bytes of the chunks written.
    cbytes: u64,
    /// Decoded bytes of all chunks (their headers' `nbytes`).
    nbytes: u64,
    /// Decoded bytes of each chunk (the first's), and whether every chunk but a shorter
    /// last one has them (c-blosc2 records 0 otherwise).
    chunksize: Option<(u64, bool)>,
    last_nbytes: u64,
    /// File position from which writeback has not been started yet (contiguous frames).
    writeback_from: u64,
    /// Whether written bytes are sent on to the disk early (the frame is synced before it is
    /// published).
    writeback: bool,
    /// Where that early writeback is started (made on its first use).
    flusher: Option<Box<Flusher>>,
}

/// A contiguous frame's bytes are sent to the disk in steps of this many as they are written
/// (every new frame is synced before it is published): small enough that the sync waits for
/// little more than the last chunk.
const WRITEBACK_STEP: u64 = 1 << 20;

/// A thread starting the disk writes of a new frame's bytes ([`start_writeback`]) once they
/// are in the file. Queueing them takes the kernel about 0.1 ms a MiB, which the thread
/// compressing and writing the frame does not wait for (the kernel's own writeback of a file
/// left unsynced also runs beside its writer). Dropping it waits for what was sent.
struct Flusher {
    jobs: Option<std::sync::mpsc::SyncSender<(std::fs::File, u64, u64)>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flusher {
    /// The thread, or none if it cannot start (writeback is then started by the caller).
    fn start() -> Flusher {
        // A few requests may wait: each holds a descriptor, so the queue is short.
        let (jobs, todo) = std::sync::mpsc::sync_channel::<(std::fs::File, u64, u64)>(8);
        let thread = std::thread::Builder::new()
            .name("b2nd-writeback".into())
            .spawn(move || {
                for (f, from, len) in todo {
                    start_writeback(&f, from, len);
                }
            });
        match thread {
            Ok(t) => Flusher {
                jobs: Some(jobs),
                thread: Some(t),
            },
            Err(_) => Flusher {
                jobs: None,
                thread: None,
            },
        }
    }

    /// Start writing `len` bytes of `f` from `from` back to the disk, on the thread (or here).
    fn send(&self, f: std::fs::File, from: u64, len: u64) {
        let back = match &self.jobs {
            Some(jobs) => jobs.send((f, from, len)).err().map(|e| e.0),
            None => Some((f, from, len)),
        };
        if let Some((f, from, len)) = back {
            start_writeback(&f, from, len);
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl NewFrame {
    /// A contiguous frame at `path`, whose first bytes are already the template's header
    /// (c-blosc2 created it there).
    pub(crate) fn file(template: OnDisk, path: &Path) -> Result<NewFrame> {
        let io = io_err(path);
        let mut f = OpenOptions::new().write(true).open(path).map_err(&io)?;
        f.seek(SeekFrom::Start(template.header_len)).map_err(&io)?;
        let w = std::io::BufWriter::with_capacity(1 << 20, f);
        Ok(NewFrame::new(
            template,
            Dest::File {
                path: path.to_path_buf(),
                w,
            },
        ))
    }

    /// A sparse frame in directory `dir`, holding the template's `chunks.b2frame`.
    pub(crate) fn sparse(template: OnDisk, dir: &Path) -> NewFrame {
        NewFrame::new(template, Dest::Dir(dir.to_path_buf()))
    }

    /// A contiguous frame in memory, from `template`, the bytes of an empty frame.
    pub(crate) fn memory(template: Vec<u8>) -> Result<NewFrame> {
        let disk = super::frame::read_in_memory(template.clone(), "<memory>")?;
        let head = template[..disk.header_len as usize].to_vec();
        Ok(NewFrame::new(disk, Dest::Memory(head)))
    }

    fn new(template: OnDisk, dest: Dest) -> NewFrame {
        NewFrame {
            pos: template.header_len,
            header_len: template.header_len,
            parts: template.parts,
            dest,
            offsets: Vec::new(),
            cbytes: 0,
            nbytes: 0,
            chunksize: None,
            last_nbytes: 0,
            writeback_from: 0,
            writeback: true,
            flusher: None,
        }
    }

    /// The frame with its bytes sent on to the disk as they are written (for a frame synced
    /// before it is published: [`Durability::Disk`]), or left to the page cache.
    pub(crate) fn with_durability(mut self, durability: Durability) -> NewFrame {
        self.writeback = durability.syncs();
        self
    }

    fn bad(&self, reason: impl Into<String>) -> Error {
        Error::Frame {
            source_name: match &self.dest {
                Dest::File { path, .. } | Dest::Dir(path) => path.display().to_string(),
                Dest::Memory(_) => "<memory>".into(),
            },
            reason: reason.into(),
        }
    }

    /// Append `chunk` (a whole compressed chunk) as the next one.
    pub(crate) fn append(&mut self, chunk: &[u8]) -> Result<()> {
        let h = super::chunk::ChunkHeader::parse(chunk)
            .map_err(|e| self.bad(format!("chunk {}: {}", self.offsets.len(), e.0)))?;
        let nbytes = h.nbytes as u64;
        match self.chunksize {
            None => self.chunksize = Some((nbytes, true)),
            // Only the last chunk may hold fewer bytes than the first.
            Some((first, ref mut regular)) => {
                if self.last_nbytes != first || nbytes > first {
                    *regular = false;
                }
            }
        }
        self.last_nbytes = nbytes;
        self.nbytes += nbytes;
        let entry = match special_offset(chunk) {
            Some(code) => code,
            None => {
                let n = self.offsets.len() as u64;
                match &mut self.dest {
                    Dest::File { path, w } => {
                        for piece in chunk.chunks(1 << 20) {
                            w.write_all(piece).map_err(io_err(path))?;
                        }
                        // What reached the file so far starts to go to the disk now, while
                        // later chunks compress: the sync before publishing then waits for
                        // the last few MiB only, not the whole file.
                        let on_file = self.pos + chunk.len() as u64 - w.buffer().len() as u64;
                        if self.writeback && on_file >= self.writeback_from + WRITEBACK_STEP {
                            let from = self.writeback_from;
                            match w.get_ref().try_clone() {
                                Ok(f) => self
                                    .flusher
                                    .get_or_insert_with(|| Box::new(Flusher::start()))
                                    .send(f, from, on_file - from),
                                Err(_) => start_writeback(w.get_ref(), from, on_file - from),
                            }
                            self.writeback_from = on_file;
                        }
                    }
                    Dest::Memory(v) => v.extend_from_slice(chunk),
                    Dest::Dir(dir) => {
                        let p = dir.join(chunk_file_name(n));
                        let mut f = std::fs::File::create(&p).map_err(io_err(&p))?;
                        f.write_all(chunk).map_err(io_err(&p))?;
                        if self.writeback {
                            self.flusher
                                .get_or_insert_with(|| Box::new(Flusher::start()))
                                .send(f, 0, chunk.len() as u64);
                        }
                    }
                }
                self.cbytes += chunk.len() as u64;
                match self.dest {
                    Dest::Dir(_) => n as i64,
                    _ => {
                        let at = (self.pos - self.header_len) as i64;
                        self.pos += chunk.len() as u64;
                        at
                    }
                }
            }
        };
        self.offsets.push(entry);
        Ok(())
    }

    /// Write the chunk index, a trailer holding `vlmeta` (name, msgpack value) and the final
    /// header. Returns the frame's bytes for an in-memory frame. Nothing is synced: the
    /// caller publishes the frame (and makes it durable first).
    pub(crate) fn finish(self, vlmeta: &[(String, Vec<u8>)]) -> Result<Option<Vec<u8>>> {
        let mut stored = Vec::with_capacity(vlmeta.len());
        for (name, v) in vlmeta {
            let c = attr_chunk(v).map_err(|e| Error::Attr {
                source_name: self.bad("").to_string(),
                name: name.clone(),
                reason: format!("could not store it ({e})"),
            })?;
            stored.push((name.clone(), c));
        }
        let mut tail = Vec::new();
        if !self.offsets.is_empty() {
            tail = index_chunk(&self.offsets)
                .map_err(|e| Error::blosc("compressing the chunk index", e))?;
        }
        tail.extend_from_slice(&trailer_bytes(&stored).map_err(|e| self.bad(e.0))?);
        let body_start = match self.dest {
            Dest::Dir(_) => self.header_len,
            _ => self.pos,
        };
        let frame_len = body_start + tail.len() as u64;
        let chunksize = match self.chunksize {
            Some((first, true)) => Some(first as i32),
            Some((_, false)) => Some(0),
            None => None,
        };
        let header = self
            .parts
            .new_header(
                frame_len,
                self.nbytes as i64,
                self.cbytes as i64,
                None,
                !stored.is_empty(),
                chunksize,
            )
            .map_err(|e| self.bad(e.0))?;
        match self.dest {
            Dest::File { path, w } => {
                let io = io_err(&path);
                let mut f = w.into_inner().map_err(|e| io(e.into_error()))?;
                f.write_all(&tail).map_err(&io)?;
                f.set_len(frame_len).map_err(&io)?;
                f.seek(SeekFrom::Start(0)).map_err(&io)?;
                f.write_all(&header).map_err(&io)?;
                Ok(None)
            }
            Dest::Dir(dir) => {
                let p = dir.join("chunks.b2frame");
                let mut bytes = header;
                bytes.extend_from_slice(&tail);
                std::fs::write(&p, bytes).map_err(io_err(&p))?;
                Ok(None)
            }
            Dest::Memory(mut v) => {
                v[..header.len()].copy_from_slice(&header);
                v.extend_from_slice(&tail);
                Ok(Some(v))
            }
        }
    }
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Write the new chunks of `chunks` in order (where [`FrameEdit::lay_out`] placed them).
fn write_new_chunks(w: &mut impl Write, chunks: &[ChunkRef]) -> std::io::Result<()> {
    for c in chunks {
        if let ChunkRef::Bytes(b) = c {
            w.write_all(b)?;
        }
    }
    Ok(())
}

/// The chunk index: the offsets as a Blosc2 chunk of little-endian `int64`s, not split into
/// byte streams, as c-blosc2 2.15 writes it (with it, new frames are byte-identical to the
/// ones c-blosc2 wrote when it appended their chunks itself).
fn index_chunk(offsets: &[i64]) -> std::result::Result<Vec<u8>, crate::ffi::CError> {
    let raw: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    small_chunk(&raw, 8, crate::ffi::SPLIT_NEVER)
}

/// An attribute's msgpack bytes as stored in the trailer: a Blosc2 chunk.
pub(crate) fn attr_chunk(msgpack: &[u8]) -> std::result::Result<Vec<u8>, crate::ffi::CError> {
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
        compcode: crate::model::ids::BLOSCLZ,
        compcode_meta: 0,
        clevel: 5,
        typesize,
        blocksize: 0,
        splitmode,
        filters: [0, 0, 0, 0, 0, crate::model::ids::SHUFFLE],
        filters_meta: [0; 6],
        nthreads: 1,
    };
    let mut out = Vec::new();
    Cctx::new(&params)?.compress(bytes, &mut out)?;
    Ok(out)
}
