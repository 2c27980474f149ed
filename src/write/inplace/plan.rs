//! What one in-place change builds: where each chunk of the new contents comes from, the old
//! data that partly written chunks need, and the chunks encoded in parallel lanes.

#![forbid(unsafe_code)]

use super::super::plan::Plan;
use super::super::writer::{pack_chunk, Packer};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::format::frame_writer::ChunkRef;
use crate::format::parts::{special_offset, ZERO_CHUNK_OFFSET};
use crate::model::codec::{Codec, Filter};
use crate::model::geometry::Geometry;
use crate::model::region::{copy_overlap, ravel, Region};
use crate::parallel::Threads;

/// Where chunk `n` of the new contents comes from.
pub(super) enum Source {
    /// The old chunk's index entry, kept as it is.
    Keep(i64),
    /// A chunk of zeros (grown area).
    Zeros,
    /// Encoded anew: from the written data alone (`full`), or from old data and written data.
    Build { full: bool },
}

/// Where each chunk of the new geometry `g1` comes from, given the old geometry `g0`, its
/// chunk index and the region written (if any).
pub(super) fn sources(
    g0: &Geometry,
    g1: &Geometry,
    old_offsets: &[i64],
    written: Option<&Region>,
) -> Vec<Source> {
    let n0 = old_offsets.len() as u64;
    let n1 = if g1.nitems() == 0 { 0 } else { g1.nchunks() };
    (0..n1)
        .map(|idx| {
            let ext = g1.chunk_region(idx);
            let coords = g1.chunk_coords(idx);
            let old = (n0 > 0 && coords.iter().zip(g0.chunk_grid()).all(|(c, n)| c < n))
                .then(|| ravel(&coords, g0.chunk_grid()));
            let covered = written.and_then(|r| r.intersect(&ext));
            let full = covered.as_ref() == Some(&ext);
            match (old, covered) {
                (_, Some(_)) if full => Source::Build { full: true },
                (Some(i0), None) if g0.chunk_region(i0) == ext => {
                    Source::Keep(old_offsets[i0 as usize])
                }
                (None, None) => Source::Zeros,
                _ => Source::Build { full: false },
            }
        })
        .collect()
}

/// Whether the change encodes chunks; refused when the array's codec or filters can be read
/// but not written, or are lossy and a chunk mixes old and new data. Changes that encode
/// nothing (attributes, resizes along whole chunks) need neither.
pub(super) fn encodes(a: &Array, sources: &[Source]) -> Result<bool> {
    if !sources.iter().any(|s| matches!(s, Source::Build { .. })) {
        return Ok(false);
    }
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
    // A lossy pipeline re-encoding decoded data changes values nobody wrote (ZFP's modes and
    // NDMEAN's cell means are not idempotent): only chunks made wholly of new data may be
    // encoded then.
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
    Ok(true)
}

/// The C-order bytes of every partly written or re-cut chunk of `g1`: the old data it keeps
/// (read from `a`, in parallel inside; straight into place when it is one run of the
/// chunk's bytes), then the written data over it, and zeros where neither lies. Buffers come
/// from `spare` (the last change's, given back with [`Lanes::recycle`]) when they are big
/// enough: then they are zeroed only when the old and written data do not cover them.
pub(super) fn partial_inputs(
    a: &Array,
    g1: &Geometry,
    sources: &[Source],
    write: Option<(&Region, &[u8])>,
    spare: &mut Vec<Vec<u8>>,
) -> Result<Vec<Vec<u8>>> {
    let isz = g1.itemsize();
    let whole_old = Region::whole(a.shape());
    let count = |r: &Option<Region>| r.as_ref().and_then(Region::nitems).unwrap_or(0);
    let mut inputs = Vec::new();
    for (idx, s) in sources.iter().enumerate() {
        if !matches!(s, Source::Build { full: false }) {
            continue;
        }
        let ext = g1.chunk_region(idx as u64);
        let n = ext.nitems().unwrap_or(0) as usize * isz;
        let keep = whole_old.intersect(&ext);
        let written = write.and_then(|(r, _)| r.intersect(&ext));
        let both = keep
            .as_ref()
            .zip(written.as_ref())
            .and_then(|(k, w)| k.intersect(w));
        // Two boxes inside `ext` cover it when their union has as many items.
        let covered = count(&keep) + count(&written) - count(&both) == ext.nitems().unwrap_or(0);
        let mut buf = spare.pop().unwrap_or_default();
        if buf.capacity() < n {
            drop(buf);
            buf = crate::alloc::zeroed(n, "a chunk to re-encode")?;
        } else {
            buf.resize(n, 0);
            if !covered {
                buf.fill(0);
            }
        }
        if let Some(keep) = keep {
            let len = keep.nitems().unwrap_or(0) as usize * isz;
            // The old array starts at the origin, so `keep` starts where the chunk does.
            if ext.is_contiguous_part(&keep) {
                a.read_region_into(&keep, &mut buf[..len])?;
            } else {
                let mut old = crate::alloc::zeroed(len, "old data of a chunk to re-encode")?;
                a.read_region_into(&keep, &mut old)?;
                copy_overlap(&keep, &old, &ext, &mut buf, isz);
            }
        }
        if let Some((r, data)) = write {
            copy_overlap(r, data, &ext, &mut buf, isz);
        }
        inputs.push(buf);
    }
    Ok(inputs)
}

/// One chunk to encode: its index, the C-order bytes of a region holding it, that
/// region, and where the result goes.
type Job<'a> = (u64, &'a [u8], Region, &'a mut Option<Vec<u8>>);

/// Compression lanes kept between changes (contexts and buffers), and the block threads
/// they were made with.
#[derive(Default)]
pub(super) struct Lanes {
    packers: Vec<Packer>,
    threads: i16,
    /// Input buffers of the last change's partly written chunks, for the next one.
    pub(super) spare: Vec<Vec<u8>>,
}

/// The most input buffers kept between changes.
const SPARE_BUFFERS: usize = 4;

impl Lanes {
    /// Keep up to [`SPARE_BUFFERS`] of a change's input buffers for the next change.
    pub(super) fn recycle(&mut self, inputs: Vec<Vec<u8>>) {
        let room = SPARE_BUFFERS.saturating_sub(self.spare.len());
        self.spare.extend(inputs.into_iter().take(room));
    }

    /// Encode every chunk `sources` builds: whole chunks from `write`'s data, partial ones
    /// from `inputs` (in order). One lane per chunk up to `threads`; fewer chunks than
    /// threads share the threads inside each chunk (block-parallel compression).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn encode(
        &mut self,
        exec: &Threads,
        threads: usize,
        plan: &Plan,
        g1: &Geometry,
        sources: &[Source],
        write: Option<(&Region, &[u8])>,
        inputs: &[Vec<u8>],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let mut built: Vec<Option<Vec<u8>>> = vec![None; sources.len()];
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
                    let buf = input_iter.next().expect("one input per partial chunk");
                    jobs.push((idx, buf, g1.chunk_region(idx), slot));
                }
                _ => {}
            }
        }
        let threads = threads.max(1);
        let lanes_n = threads.min(jobs.len().max(1));
        let params = plan.cctx_params((threads / lanes_n).max(1));
        if self.threads != params.nthreads {
            self.packers.clear();
            self.threads = params.nthreads;
        }
        while self.packers.len() < lanes_n {
            self.packers.push(Packer::new(plan, &params, exec)?);
        }
        exec.for_each_lane(
            &mut self.packers[..lanes_n],
            jobs,
            |p, (idx, src, region, slot)| {
                *slot = Some(pack_chunk(g1, p, idx, src, &region)?);
                Ok::<(), Error>(())
            },
        )?;
        Ok(built)
    }
}

/// The new contents' chunks: kept entries, zero chunks and the encoded bytes (special
/// chunks recorded by their index code).
pub(super) fn chunk_refs(sources: &[Source], built: Vec<Option<Vec<u8>>>) -> Vec<ChunkRef> {
    sources
        .iter()
        .zip(built)
        .map(|(s, b)| match (s, b) {
            (Source::Keep(o), _) => ChunkRef::Old(*o),
            (Source::Zeros, _) => ChunkRef::Code(ZERO_CHUNK_OFFSET),
            (_, Some(bytes)) => match special_offset(&bytes) {
                Some(code) => ChunkRef::Code(code),
                None => ChunkRef::Bytes(bytes),
            },
            (_, None) => unreachable!("every chunk to build was built"),
        })
        .collect()
}
