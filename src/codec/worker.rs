//! A decoding lane: one thread's decoder (whose c-blosc2 context uses `inner` block-level
//! threads) and chunk buffers, reused from chunk to chunk and, kept by an array in
//! [`KeptWorkers`], from read to read. Every read (whole arrays, regions, selections, chunk
//! by chunk) decodes through one.

#![forbid(unsafe_code)]

use crate::codec::chunk::{Decoded, Decoder, Target};
use crate::error::Result;
use crate::ffi::{ChunkBytes, FreshPages};
use crate::format::frame::Frame;

/// Largest decoded chunk whose buffer is kept between reads (per worker).
/// The one fetch-and-decode of every chunk read: fetch chunk `idx` of `frame` into
/// `compressed` (with `wanted`, a block mask and the bytes per block, only the bytes those
/// blocks need when that saves much) and decode it with `decoder` into the target `target`
/// makes, told whether only the wanted blocks were fetched (such a chunk must be decoded
/// with the same mask). A failure names the frame and the chunk.
pub(crate) fn fetch_decode<'t>(
    frame: &Frame,
    idx: u64,
    compressed: &mut ChunkBytes,
    decoder: &mut Decoder,
    typesize: usize,
    wanted: Option<(&[bool], usize)>,
    target: impl FnOnce(bool) -> Target<'t>,
) -> Result<Decoded> {
    let partial = wanted.is_some_and(|(mask, block_bytes)| {
        frame.chunk_blocks_into(idx, mask, block_bytes, compressed)
    });
    if !partial {
        frame.chunk_into(idx, compressed)?;
    }
    decoder
        .decode_into(compressed, typesize, target(partial))
        .map_err(|e| e.at(&frame.source, idx))
}

const KEPT_CHUNK_BUFFER_MAX: usize = 64 << 20;

/// A worker's [`Worker::blank`] of `n` bytes: only ever handed to c-blosc2 as a destination it
/// does not write (never to a decode that writes its output).
#[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
pub(crate) fn blank(buf: &mut FreshPages, n: usize) -> Result<&mut [u8]> {
    if buf.len() < n {
        *buf = FreshPages::default();
        *buf = crate::alloc::fresh_pages(n, "a chunk-size destination")?;
    }
    Ok(&mut buf[..n])
}

/// One reading thread's decoder and buffers.
pub(crate) struct Worker {
    pub(crate) decoder: Decoder,
    /// Block-level threads of the decoder's context.
    inner: usize,
    pub(crate) compressed: crate::ffi::ChunkBytes,
    pub(crate) decoded: Vec<u8>,
    /// A chunk-size destination c-blosc2 is handed and never writes (projected reads): fresh
    /// zero pages never touched, so it is kept whatever its size. See [`blank`].
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) blank: FreshPages,
    /// Scattered chunks: the current chunk's copy runs and the blocks they touch.
    pub(crate) runs: Vec<(usize, usize, usize)>,
    pub(crate) touched: Vec<bool>,
    /// Selections: the blocks of the current chunk a selection needs.
    pub(crate) wanted: Vec<bool>,
}

impl Worker {
    /// A worker with `inner` block-level threads, decoding blocks of shape `blocks`.
    pub(crate) fn new(inner: usize, blocks: &[u64]) -> Worker {
        Worker {
            decoder: Decoder::new(inner).with_blocks(blocks),
            inner,
            compressed: Default::default(),
            decoded: Vec::new(),
            blank: FreshPages::default(),
            runs: Vec::new(),
            touched: Vec::new(),
            wanted: Vec::new(),
        }
    }

    /// Use `inner` block-level threads from now on.
    fn set_inner(&mut self, inner: usize, blocks: &[u64]) {
        if self.inner != inner {
            self.decoder = Decoder::new(inner).with_blocks(blocks);
            self.inner = inner;
        }
    }

    /// Drop the buffers over [`KEPT_CHUNK_BUFFER_MAX`] (a kept compressed buffer is reused
    /// without being cleared again: reading a few blocks of a large chunk asks for one of the
    /// chunk's compressed size each time).
    fn drop_big_buffers(&mut self) {
        if self.decoded.capacity() > KEPT_CHUNK_BUFFER_MAX {
            self.decoded = Vec::new();
        }
        if self.compressed.capacity() > KEPT_CHUNK_BUFFER_MAX {
            self.compressed = Default::default();
        }
    }
}

impl Drop for Worker {
    /// The decoded-chunk buffer goes to the process's spare buffers for the next array.
    fn drop(&mut self) {
        crate::alloc::give_back(std::mem::take(&mut self.decoded));
    }
}

/// At least `n` workers with `inner` block-level threads each (decoding blocks of shape
/// `blocks`), reusing those in `workers`; the first `n` are returned.
pub(crate) fn workers_for<'w>(
    workers: &'w mut Vec<Worker>,
    n: usize,
    inner: usize,
    blocks: &[u64],
) -> &'w mut [Worker] {
    for w in workers.iter_mut().take(n) {
        w.set_inner(inner, blocks);
    }
    while workers.len() < n {
        workers.push(Worker::new(inner, blocks));
    }
    &mut workers[..n]
}

/// Workers an array keeps between reads, so that reading part by part, or many small
/// slices, does not rebuild decoders and re-fault chunk buffers each time. Concurrent reads
/// (the partitions of a scan) each take a set of their own: up to [`KEPT_SETS`] sets are
/// kept.
#[derive(Default)]
pub(crate) struct KeptWorkers(std::sync::Mutex<Vec<Vec<Worker>>>);

/// The most sets of workers an array keeps.
const KEPT_SETS: usize = 8;

impl KeptWorkers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<Worker>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take a kept set of workers (possibly none).
    pub(crate) fn take(&self) -> Vec<Worker> {
        self.lock().pop().unwrap_or_default()
    }

    /// Keep `workers` for a next read, unless [`KEPT_SETS`] sets are kept already; buffers
    /// over 64 MiB are dropped first.
    pub(crate) fn give_back(&self, mut workers: Vec<Worker>) {
        if workers.is_empty() {
            return;
        }
        workers.iter_mut().for_each(Worker::drop_big_buffers);
        let mut kept = self.lock();
        if kept.len() < KEPT_SETS {
            kept.push(workers);
        }
    }

    /// Run `f` with the kept workers (taken for the call, given back after).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Vec<Worker>) -> R) -> R {
        let mut workers = self.take();
        let r = f(&mut workers);
        self.give_back(workers);
        r
    }
}
