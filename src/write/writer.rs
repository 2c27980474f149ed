//! The streaming [`Writer`]: slabs of chunk rows gathered, compressed in parallel, appended.

#![forbid(unsafe_code)]

use super::appender::Sink;
use super::options::Target;
use super::plan::Plan;
use super::staging::Staging;
use crate::codec::encode::{EncodeError, Encoder};
use crate::error::Error;
use crate::error::Result;
use crate::ffi::CompressParams;
use crate::model::attrs::Value;
use crate::model::durability::Durability;
use crate::model::element::Element;
use crate::model::geometry::Geometry;
use crate::model::region::Region;

/// A streaming writer: push the array's bytes in C order (any amount at a time), then
/// [`Writer::finish`]. Memory use is about one slab of chunk rows along the first dimension.
///
/// ```no_run
/// use b2nd::write::{ArrayBuilder, Target};
/// let mut w = ArrayBuilder::for_type::<u16>(&[1_000_000, 64]).create(Target::File("big.b2nd".into()))?;
/// for _ in 0..1000 {
///     let rows = vec![7u16; 1000 * 64];
///     w.push(bytemuck::cast_slice(&rows))?;
/// }
/// w.finish()?;
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct Writer {
    pub(super) plan: Plan,
    /// The frame being written (its chunks appended here or on a thread of their own).
    pub(super) sink: Sink,
    pub(super) staging: Staging,
    pub(super) target: Target,
    /// Whether the frame is synced before it is published.
    pub(super) durability: Durability,
    pub(super) threads: usize,
    /// Where compression runs.
    pub(super) exec: crate::parallel::Threads,
    pub(super) attrs: Vec<(String, Value)>,
    pub(super) slab: Vec<u8>,
    pub(super) next_slab: u64,
    pub(super) pushed: u64,
    /// Chunks appended through [`Writer::push_chunk`] (the two push styles do not mix).
    pub(super) next_chunk: u64,
    pub(super) packer: Option<Packer>,
    /// Idle per-worker compression states, and the c-blosc2 thread count they were made for.
    pub(super) spare: Vec<Packer>,
    pub(super) spare_threads: i16,
    /// The compressed chunks of a slab, kept from slab to slab (or back from the appending
    /// thread): a chunk-size buffer reused is not faulted in again (fresh ones cost 10-15 % of
    /// a write in page clearing).
    pub(super) out_bufs: Vec<Vec<u8>>,
}

/// Per-worker compression state: the encoder and the buffer chunks are gathered into.
pub(super) struct Packer {
    encoder: Encoder,
    chunk: Vec<u8>,
    block_shape: Vec<usize>,
}

impl Packer {
    /// A packer compressing as `plan` says, with `params` (from [`Plan::cctx_params`]).
    /// Block threads (when `params` has them) run on `exec`.
    pub(super) fn new(
        plan: &Plan,
        params: &CompressParams,
        exec: &crate::parallel::Threads,
    ) -> Result<Packer> {
        Ok(Packer {
            encoder: Encoder::new(params, plan.rust_stages(), exec)
                .map_err(|e| Error::blosc("a compression context", e))?,
            chunk: Vec::new(),
            block_shape: plan.geom.blocks().iter().map(|&b| b as usize).collect(),
        })
    }
}

impl Writer {
    pub(super) fn nbytes(&self) -> u64 {
        self.plan.geom.nbytes()
    }

    /// Bytes of slab `k` (chunk row `k` along dim 0, clipped to the shape).
    pub(super) fn slab_bytes(&self, k: u64) -> usize {
        let g = &self.plan.geom;
        g.slab(k).2.nitems().unwrap_or(0) as usize * g.itemsize()
    }

    pub(super) fn nslabs(&self) -> u64 {
        self.plan.geom.nslabs()
    }

    /// Push the next whole chunk, in chunk order (C order over the chunk grid): the data of
    /// the region the chunk covers, in C order of that region, without padding. Cannot be
    /// mixed with [`Writer::push`].
    pub fn push_chunk(&mut self, data: &[u8]) -> Result<()> {
        if self.pushed > 0 && self.next_chunk == 0 {
            return Err(Error::InvalidArgument(
                "push_chunk after push: the two styles do not mix".into(),
            ));
        }
        let g = &self.plan.geom;
        let idx = self.next_chunk;
        let total = if g.nitems() == 0 { 0 } else { g.nchunks() };
        if idx >= total {
            return Err(Error::InvalidArgument(format!(
                "all {total} chunks were already pushed"
            )));
        }
        let region = g.chunk_region(idx);
        let want = region.nitems().unwrap_or(0) as usize * g.itemsize();
        if data.len() != want {
            return Err(Error::InvalidArgument(format!(
                "chunk {idx} covers {want} bytes, {} given",
                data.len()
            )));
        }
        if self.packer.is_none() {
            let params = self.plan.cctx_params(self.threads);
            self.packer = Some(Packer::new(&self.plan, &params, &self.exec)?);
        }
        let p = self.packer.as_mut().expect("set above");
        let out = pack_chunk(g, p, idx, data, &region)?;
        self.sink.append(vec![out])?;
        self.next_chunk += 1;
        self.pushed += data.len() as u64;
        if self.next_chunk == total {
            self.next_slab = self.nslabs();
        }
        Ok(())
    }

    /// Push the next bytes of the array (C order, the dtype's byte order).
    pub fn push(&mut self, mut data: &[u8]) -> Result<()> {
        if self.next_chunk > 0 {
            return Err(Error::InvalidArgument(
                "push after push_chunk: the two styles do not mix".into(),
            ));
        }
        let left = self.nbytes() - self.pushed;
        if data.len() as u64 > left {
            return Err(Error::InvalidArgument(format!(
                "{} bytes pushed beyond the array's {} bytes",
                data.len() as u64 - left,
                self.nbytes()
            )));
        }
        while !data.is_empty() {
            let want = self.slab_bytes(self.next_slab);
            if self.slab.is_empty() && data.len() >= want {
                // A whole slab straight from the caller's memory.
                let (slab, rest) = data.split_at(want);
                self.write_slab(slab)?;
                data = rest;
            } else {
                let take = (want - self.slab.len()).min(data.len());
                self.slab.extend_from_slice(&data[..take]);
                data = &data[take..];
                if self.slab.len() == want {
                    let slab = std::mem::take(&mut self.slab);
                    self.write_slab(&slab)?;
                    self.slab = slab;
                    self.slab.clear();
                }
            }
        }
        Ok(())
    }

    /// Compress and append the chunks of the next slab.
    pub(super) fn write_slab(&mut self, slab: &[u8]) -> Result<()> {
        let k = self.next_slab;
        let g = &self.plan.geom;
        let (first, count, region) = g.slab(k);
        let outer = (count as usize).min(self.threads).max(1);
        let params = self.plan.cctx_params((self.threads / outer).max(1));
        if self.spare_threads != params.nthreads {
            // Contexts carry their thread count: rebuild when it changes.
            self.spare.clear();
            self.spare_threads = params.nthreads;
        }
        // One compression context and gather buffer per lane, reused across slabs.
        while self.spare.len() < outer {
            self.spare
                .push(Packer::new(&self.plan, &params, &self.exec)?);
        }
        let g = &self.plan.geom;
        let mut compressed = std::mem::take(&mut self.out_bufs);
        if compressed.is_empty() {
            compressed = self.sink.spent();
        }
        compressed.resize_with(count as usize, Vec::new);
        let work = (first..first + count).zip(compressed.iter_mut());
        self.exec
            .for_each_lane(&mut self.spare[..outer], work, |p, (idx, slot)| {
                pack_chunk_into(g, p, idx, slab, &region, slot)
            })?;
        self.out_bufs = self.sink.append(compressed)?;
        self.pushed += slab.len() as u64;
        self.next_slab += 1;
        Ok(())
    }

    /// Push typed items (C order, continuing where the last push stopped); `T` must be the
    /// array's dtype.
    pub fn push_items<T: Element>(&mut self, items: &[T]) -> Result<()> {
        if *self.plan.dtype() != T::dtype() {
            return Err(Error::TypeMismatch {
                dtype: self.plan.dtype().to_numpy_str(),
                requested: T::NAME,
            });
        }
        self.push(&T::as_bytes(items))
    }

    /// Check that the whole array was pushed, add the attributes, and move the result into
    /// place. For [`Target::Memory`] use [`Writer::finish_to_vec`].
    pub fn finish(self) -> Result<()> {
        if matches!(self.target, Target::Memory) {
            return Err(Error::InvalidArgument(
                "an in-memory array is finished with finish_to_vec".into(),
            ));
        }
        self.complete().map(|_| ())
    }

    /// Like [`Writer::finish`], for [`Target::Memory`]: the contiguous frame's bytes.
    pub fn finish_to_vec(self) -> Result<Vec<u8>> {
        if !matches!(self.target, Target::Memory) {
            return Err(Error::InvalidArgument(
                "finish_to_vec is for Target::Memory; files are finished with finish".into(),
            ));
        }
        self.complete()?
            .ok_or_else(|| Error::InvalidArgument("no in-memory frame".into()))
    }

    pub(super) fn complete(mut self) -> Result<Option<Vec<u8>>> {
        if self.pushed != self.nbytes() || self.next_slab != self.nslabs() {
            return Err(Error::InvalidArgument(format!(
                "only {} of the array's {} bytes were pushed",
                self.pushed + self.slab.len() as u64,
                self.nbytes()
            )));
        }
        let vlmeta: Vec<(String, Vec<u8>)> = std::mem::take(&mut self.attrs)
            .into_iter()
            .map(|(name, v)| (name, v.encode()))
            .collect();
        let bytes = self.sink.into_frame()?.finish(&vlmeta)?;
        self.staging.commit(self.durability)?;
        Ok(bytes)
    }
}

/// Gather chunk `idx` from `src`, the C-order bytes of `region`, into the extended layout
/// (padding zeroed) and compress it; an all-zero chunk becomes a zero special chunk.
pub(super) fn pack_chunk(
    g: &Geometry,
    p: &mut Packer,
    idx: u64,
    src: &[u8],
    region: &Region,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    pack_chunk_into(g, p, idx, src, region, &mut out)?;
    Ok(out)
}

/// [`pack_chunk`] into `out` (replacing its contents, reusing its allocation).
pub(super) fn pack_chunk_into(
    g: &Geometry,
    p: &mut Packer,
    idx: u64,
    src: &[u8],
    region: &Region,
    out: &mut Vec<u8>,
) -> Result<()> {
    let chunk_bytes = g.chunk_bytes();
    // A chunk whose bytes are one run of the source (no padding, blocks in C order) is
    // compressed from there; otherwise it is gathered into the padded chunk layout.
    let data: &[u8] = match g.direct_range(idx, region) {
        Some(r) if r.len() == chunk_bytes && r.end <= src.len() => &src[r],
        _ => {
            p.chunk.resize(chunk_bytes, 0);
            g.gather_chunk(idx, src, &mut p.chunk, region)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?;
            &p.chunk
        }
    };
    let block_shape = &p.block_shape;
    p.encoder
        .encode(data, g.block_bytes(), block_shape, g.itemsize(), out)
        .map_err(|e| match e {
            EncodeError::C(e) => Error::blosc(format!("compressing chunk {idx}"), e),
            EncodeError::Rust(why) => {
                Error::InvalidArgument(format!("compressing chunk {idx}: {why}"))
            }
        })
}

#[cfg(test)]
mod tests {
    use crate::array::Array;
    use crate::ffi::ChunkBytes;
    use crate::parallel::Threads;
    use crate::write::ArrayBuilder;

    /// The raw bytes of every chunk of `a`.
    fn chunks(a: &Array) -> Vec<Vec<u8>> {
        let mut buf = ChunkBytes::default();
        (0..a.nchunks())
            .map(|n| {
                a.frame.chunk_into(n, &mut buf).unwrap();
                buf.to_vec()
            })
            .collect()
    }

    /// b2nd writes python-blosc2's own LZ4 chunks, byte for byte: fixtures python-blosc2
    /// 4.14.1 wrote with one thread (its c-blosc2 3.3.5 runs LZ4 at acceleration 10 - clevel,
    /// the linked c-blosc2 2.15 at 1), rewritten from their data with their parameters, by
    /// one thread and by block threads.
    #[test]
    fn lz4_chunks_are_python_blosc2s() {
        let mut compared = 0;
        for name in [
            "codec_lz4_c1",
            "codec_lz4_c9",
            "codec_lz4_bitshuffle_f8",
            "split_never_lz4_f8",
            "ndcell_1d_f8",
            "sparse_u1_1d",
        ] {
            let path = format!("{}/tests/data/{name}.b2nd", env!("CARGO_MANIFEST_DIR"));
            let a = Array::open(&path).unwrap();
            let want = chunks(&a);
            let data = a.read_bytes().unwrap();
            for threads in [Threads::Single, Threads::count(2).unwrap()] {
                // Filters as python-blosc2's default layout records them, or as given.
                let b = if a.filter_slots() == ([0, 0, 0, 0, 0, 1], [0; 6]) {
                    ArrayBuilder::new(a.shape(), a.dtype().clone())
                        .chunks(a.chunks())
                        .blocks(a.blocks())
                        .codec(a.codec())
                        .clevel(a.clevel())
                } else {
                    ArrayBuilder::like(&a)
                }
                .threads(threads);
                let ours = Array::from_bytes(b.bytes_to_vec(&data).unwrap()).unwrap();
                let got = chunks(&ours);
                assert_eq!(got.len(), want.len(), "{name}");
                for (n, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        g == w,
                        "{name} chunk {n}: {:?}\nvs python's {:?}",
                        &g[..32.min(g.len())],
                        &w[..32.min(w.len())]
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared >= 20, "{compared} chunks");
    }
}
