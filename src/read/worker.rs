//! The per-thread state of every read (whole arrays, selections): a decoder, whose c-blosc2
//! contexts use `inner` block-level threads, and chunk buffers reused from chunk to chunk and,
//! kept by the [`crate::Array`], from read to read.

#![forbid(unsafe_code)]

use crate::codec::chunk::Decoder;

/// One reading thread's decoder and buffers.
pub(crate) struct Worker {
    pub(super) decoder: Decoder,
    /// Block-level threads of the decoder's context.
    pub(super) inner: usize,
    pub(super) compressed: crate::ffi::ChunkBytes,
    pub(super) decoded: Vec<u8>,
    /// Scattered chunks: the current chunk's copy runs and the blocks they touch.
    pub(super) runs: Vec<(usize, usize, usize)>,
    pub(super) touched: Vec<bool>,
    /// Selections: the blocks of the current chunk a selection needs.
    pub(super) wanted: Vec<bool>,
}

impl crate::array::ChunkBuffers for Worker {
    fn drop_buffers(&mut self) {
        self.decoded = Vec::new();
        self.compressed = Default::default();
    }
}

impl Worker {
    /// A worker with `inner` block-level threads, decoding blocks of shape `blocks`.
    pub(super) fn new(inner: usize, blocks: &[u64]) -> Worker {
        Worker {
            decoder: Decoder::new(inner).with_blocks(blocks),
            inner,
            compressed: Default::default(),
            decoded: Vec::new(),
            runs: Vec::new(),
            touched: Vec::new(),
            wanted: Vec::new(),
        }
    }

    /// Use `inner` block-level threads from now on.
    pub(super) fn set_inner(&mut self, inner: usize, blocks: &[u64]) {
        if self.inner != inner {
            self.decoder = Decoder::new(inner).with_blocks(blocks);
            self.inner = inner;
        }
    }
}

/// At least `n` workers with `inner` block-level threads each (decoding blocks of shape
/// `blocks`), reusing those in `workers`.
pub(super) fn workers_for<'w>(
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
