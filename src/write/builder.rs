//! [`ArrayBuilder`]: a new array's options, validated into a plan.

#![forbid(unsafe_code)]

use super::options::default_chunks_blocks;
use super::options::Target;
use super::plan::Plan;
use super::staging::Staging;
use super::writer::Writer;
use crate::codec::filters;
use crate::codec::RustCodec;
use crate::error::Error;
use crate::error::Result;
use crate::ffi::CompressParams;
use crate::ffi::Schunk;
use crate::format::frame::read_on_disk;
use crate::format::frame_writer::NewFrame;
use crate::format::meta;
use crate::format::meta::Format;
use crate::model::attrs::Value;
use crate::model::codec::Codec;
use crate::model::codec::Filter;
use crate::model::dtype::ByteOrder;
use crate::model::dtype::Dtype;
use crate::model::durability::Durability;
use crate::model::element::Element;
use crate::model::geometry::Geometry;

/// A new array's description: shape, dtype, geometry, compression and target options.
///
/// ```no_run
/// use b2nd::write::{ArrayBuilder, Codec, Target};
/// let data: Vec<f64> = (0..1_000_000).map(|i| i as f64).collect();
/// ArrayBuilder::for_type::<f64>(&[1000, 1000])
///     .chunks(&[100, 1000])
///     .blocks(&[10, 1000])
///     .codec(Codec::Lz4)
///     .clevel(5)
///     .write(Target::File("out.b2nd".into()), &data)?;
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ArrayBuilder {
    pub(super) shape: Vec<u64>,
    pub(super) dtype: Dtype,
    pub(super) chunks: Option<Vec<u64>>,
    pub(super) blocks: Option<Vec<u64>>,
    pub(super) codec: Codec,
    pub(super) clevel: u8,
    pub(super) filters: Option<Vec<Filter>>,
    pub(super) threads: crate::parallel::Threads,
    pub(super) format: Format,
    pub(super) overwrite: bool,
    pub(super) durability: Durability,
    pub(super) attrs: Vec<(String, Value)>,
}

/// A validated filter pipeline: the header's filter slots and metas, the filters Rust runs
/// before c-blosc2's codec, and the codec Rust runs instead of c-blosc2's.
struct Pipeline {
    slots: [u8; 6],
    metas: [u8; 6],
    forward: Option<filters::ForwardPipeline>,
    rust_codec: Option<(RustCodec, u8)>,
}

impl ArrayBuilder {
    /// A builder for an array like `a`: its shape, dtype, chunks, blocks, metalayer flavour,
    /// clevel, codec and filters (python-blosc2's defaults for a codec or a filter pipeline
    /// this crate does not write).
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/ref_7x5_i4.b2nd")?;
    /// let copy = b2nd::ArrayBuilder::like(&a).bytes_to_vec(&a.read_bytes()?)?;
    /// let b = b2nd::Array::from_bytes(copy)?;
    /// assert_eq!((b.chunks(), b.codec(), b.filters()), (a.chunks(), a.codec(), a.filters()));
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn like(a: &crate::array::Array) -> ArrayBuilder {
        let mut b = ArrayBuilder::new(a.shape(), a.dtype().clone())
            .chunks(a.chunks())
            .clevel(a.clevel().min(9));
        // A save_tensor frame's Blosc blocks are flat byte runs, not N-d blocks: its copy is
        // a b2nd array with blocks b2nd chooses.
        if a.format() != Format::Tensor {
            b = b.blocks(a.blocks()).format(a.format());
        }
        let (slots, metas) = a.filter_slots();
        let codec = a.codec();
        if !matches!(codec, Codec::Other { .. }) {
            b = b.codec(codec);
        }
        let filters: Vec<Filter> = slots
            .iter()
            .zip(metas)
            .filter_map(|(&id, m)| Filter::from_id(id, m))
            .collect();
        if !filters.iter().any(|f| matches!(f, Filter::Other { .. })) {
            b = b.filters(&filters);
        }
        b
    }

    /// An array of `shape` and `dtype` (python-blosc2's defaults: zstd, clevel 5, shuffle).
    pub fn new(shape: &[u64], dtype: Dtype) -> ArrayBuilder {
        ArrayBuilder {
            shape: shape.to_vec(),
            dtype,
            chunks: None,
            blocks: None,
            codec: Codec::Zstd,
            clevel: 5,
            filters: None,
            threads: crate::parallel::Threads::Global,
            format: Format::B2nd,
            overwrite: false,
            durability: Durability::Disk,
            attrs: Vec::new(),
        }
    }

    /// An array of `shape` holding the Rust element type `T` (native byte order).
    pub fn for_type<T: Element>(shape: &[u64]) -> ArrayBuilder {
        ArrayBuilder::new(shape, T::dtype())
    }

    /// An array of `shape` with the NumPy dtype string `dtype` (e.g. `"<f8"`, `"|S5"`,
    /// `"[('a', '<i4'), ('b', '<f8')]"`).
    pub fn with_dtype_str(shape: &[u64], dtype: &str) -> Result<ArrayBuilder> {
        Ok(ArrayBuilder::new(shape, Dtype::parse(dtype)?))
    }

    /// Chunk shape (default: [`default_chunks_blocks`]).
    pub fn chunks(mut self, chunks: &[u64]) -> Self {
        self.chunks = Some(chunks.to_vec());
        self
    }

    /// Block shape (default: [`default_chunks_blocks`]).
    pub fn blocks(mut self, blocks: &[u64]) -> Self {
        self.blocks = Some(blocks.to_vec());
        self
    }

    /// Codec (default zstd).
    pub fn codec(mut self, codec: Codec) -> Self {
        self.codec = codec;
        self
    }

    /// Compression level 0-9 (default 5).
    pub fn clevel(mut self, clevel: u8) -> Self {
        self.clevel = clevel;
        self
    }

    /// Filter pipeline, at most 6, applied in order (default: shuffle). Empty: no filters.
    pub fn filters(mut self, filters: &[Filter]) -> Self {
        self.filters = Some(filters.to_vec());
        self
    }

    /// Where compression runs (default: rayon's global pool; see [`crate::Threads`]).
    pub fn threads(mut self, threads: crate::parallel::Threads) -> Self {
        self.threads = threads;
        self
    }

    /// Metalayer flavour: [`Format::B2nd`] (default) or legacy [`Format::Caterva`] (which
    /// stores no dtype: readers see `|S{itemsize}`). [`Format::Tensor`] is refused when
    /// written: b2nd reads save_tensor frames but does not write them.
    pub fn format(mut self, format: Format) -> Self {
        self.format = format;
        self
    }

    /// Replace an existing target (default: refuse).
    pub fn overwrite(mut self, yes: bool) -> Self {
        self.overwrite = yes;
        self
    }

    /// What a finished write survives (default [`Durability::Disk`]). Either way the array
    /// is published whole, by a rename, or not at all: a killed process leaves the old
    /// target or none. With [`Durability::Disk`] the new file (every file of a sparse frame)
    /// and its directory are synced to the disk around the rename, so the array also
    /// survives an operating-system crash or a power loss once [`Writer::finish`] returns;
    /// [`Durability::Process`] leaves them in the page cache, as python-blosc2 does, and
    /// saves the wait for the disk.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("scratch.b2nd");
    /// b2nd::ArrayBuilder::for_type::<u32>(&[4])
    ///     .durability(b2nd::Durability::Process)
    ///     .write(b2nd::Target::File(path.clone()), &[1u32, 2, 3, 4])?;
    /// assert_eq!(b2nd::Array::open(&path)?.read::<u32>()?, [1, 2, 3, 4]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }

    /// Add a user attribute (vlmeta), read by python-blosc2 as `arr.vlmeta[name]`.
    pub fn attr(mut self, name: &str, value: Value) -> Self {
        self.attrs.push((name.to_string(), value));
        self
    }

    /// What ZFP needs: `<f4`/`<f8` items (it codes the bytes as native floats), 1 to 4
    /// dimensions, block sides of 4 or more (blosc2-zfp refuses smaller ones), no filters
    /// (they would hand it other numbers than the values), a rate of 1 to 100 percent.
    pub(super) fn check_zfp(&self, filters: &[Filter], blocks: &[u64]) -> Result<()> {
        let bad = |s: String| Err(Error::InvalidArgument(format!("zfp: {s}")));
        if !matches!(
            self.dtype,
            Dtype::Float {
                size: 4 | 8,
                order: ByteOrder::Little
            }
        ) {
            return bad(format!(
                "codes <f4 or <f8 items, not {}",
                self.dtype.to_numpy_str()
            ));
        }
        if blocks.is_empty() || blocks.len() > 4 {
            return bad(format!("arrays of 1 to 4 dimensions, not {}", blocks.len()));
        }
        if let Some(b) = blocks.iter().find(|&&b| b < 4) {
            return bad(format!(
                "block sides of 4 or more (blocks {blocks:?} have {b})"
            ));
        }
        if !filters.is_empty() {
            return bad(format!("takes no filters (given {filters:?})"));
        }
        if let Codec::ZfpRate(r) = self.codec {
            if r == 0 || r > 100 {
                return bad(format!("rate {r}: 1 to 100 percent"));
            }
        }
        Ok(())
    }

    /// Validate everything and work out the geometry, parameters and metalayer bytes.
    pub(super) fn plan(&self) -> Result<Plan> {
        let bad = |s: String| Err(Error::InvalidArgument(s));
        let nd = self.shape.len();
        if nd > meta::MAX_DIM {
            return bad(format!(
                "{nd} dimensions, at most {} supported",
                meta::MAX_DIM
            ));
        }
        let itemsize = self.dtype.itemsize();
        if itemsize == 0 {
            return bad("dtype has itemsize 0".into());
        }
        if self.format == Format::Tensor {
            return bad("b2nd writes b2nd or caterva arrays, not save_tensor frames".into());
        }
        let (chunks, blocks) = self.chunks_blocks(itemsize)?;
        self.check_codec()?;
        let pipeline = self.pipeline(&blocks)?;

        let shape_i: Vec<i64> = self.shape.iter().map(|&s| s as i64).collect();
        let chunks_i: Vec<i32> = chunks.iter().map(|&s| s as i32).collect();
        let blocks_i: Vec<i32> = blocks.iter().map(|&s| s as i32).collect();
        let geom = Geometry::new(&shape_i, &chunks_i, &blocks_i, itemsize)
            .map_err(|e| Error::InvalidArgument(format!("{}: {}", e.field, e.reason)))?;
        let dtype_str = self.dtype.to_numpy_str();
        let meta_bytes = meta::encode(
            self.format,
            &shape_i,
            &chunks_i,
            &blocks_i,
            Some(&dtype_str),
        );
        let params = CompressParams {
            compcode: self.codec.id(),
            compcode_meta: self.codec.meta(),
            clevel: self.clevel,
            typesize: i32::try_from(itemsize)
                .map_err(|_| Error::InvalidArgument("itemsize too large".into()))?,
            blocksize: geom.block_bytes() as i32,
            splitmode: crate::ffi::SPLIT_AUTO,
            filters: pipeline.slots,
            filters_meta: pipeline.metas,
            nthreads: 1,
        };
        Ok(Plan {
            dtype: self.dtype.clone(),
            geom,
            params,
            meta_bytes,
            format: self.format,
            forward: pipeline.forward,
            rust_codec: pipeline.rust_codec,
        })
    }

    /// The chunk and block shapes (given, or python-blosc2's defaults), validated.
    fn chunks_blocks(&self, itemsize: usize) -> Result<(Vec<u64>, Vec<u64>)> {
        let bad = |s: String| Err(Error::InvalidArgument(s));
        let nd = self.shape.len();
        let (dc, db) = default_chunks_blocks(&self.shape, itemsize);
        let chunks = self.chunks.clone().unwrap_or(dc);
        let blocks = match (&self.blocks, &self.chunks) {
            (Some(b), _) => b.clone(),
            (None, None) => db,
            // Chunks given, blocks not: default blocks within those chunks.
            (None, Some(c)) => default_chunks_blocks(c, itemsize).1,
        };
        for (name, v) in [("chunks", &chunks), ("blocks", &blocks)] {
            if v.len() != nd {
                return bad(format!("{name} has {} dimensions, the shape {nd}", v.len()));
            }
            if let Some(i) = v.iter().position(|&x| x == 0) {
                return bad(format!("{name}[{i}] is 0"));
            }
        }
        for i in 0..nd {
            if blocks[i] > chunks[i] {
                return bad(format!(
                    "blocks[{i}] = {} exceeds chunks[{i}] = {}",
                    blocks[i], chunks[i]
                ));
            }
            if chunks[i] > i32::MAX as u64 || self.shape[i] > i64::MAX as u64 {
                return bad(format!("dimension {i} too large"));
            }
        }
        Ok((chunks, blocks))
    }

    /// The compression level and codec are ones this writer writes.
    fn check_codec(&self) -> Result<()> {
        let bad = |s: String| Err(Error::InvalidArgument(s));
        if self.clevel > 9 {
            return bad(format!("clevel {} (0 to 9)", self.clevel));
        }
        if let Codec::Other { id, .. } = self.codec {
            return bad(format!(
                "codec {} is not written here",
                crate::model::ids::codec_label(id)
            ));
        }
        if let Some(Filter::Other { id, .. }) = self
            .filters
            .iter()
            .flatten()
            .find(|f| matches!(f, Filter::Other { .. }))
        {
            return bad(format!(
                "filter {} (id {id}) is read here, not written",
                crate::model::ids::filter_name(*id)
            ));
        }
        Ok(())
    }

    /// The filter pipeline (given, or python-blosc2's default for the dtype), validated, as
    /// the header's six slots and what runs it: the Rust forward filters and, for ZLIB and
    /// ZFP, the Rust codec.
    fn pipeline(&self, blocks: &[u64]) -> Result<Pipeline> {
        let bad = |s: String| Err(Error::InvalidArgument(s));
        let itemsize = self.dtype.itemsize();
        let zfp = crate::codec::zfp::Mode::from_id(self.codec.id()).map(|m| (m, self.codec.meta()));
        let filters = self.filters.clone().unwrap_or(if zfp.is_some() {
            Vec::new() // ZFP works on the values themselves
        } else {
            vec![default_filter(&self.dtype)]
        });
        if zfp.is_some() {
            self.check_zfp(&filters, blocks)?;
        }
        if filters.len() > 6 {
            return bad(format!("{} filters, at most 6", filters.len()));
        }
        if let Some(p) = filters.iter().position(|f| *f == Filter::Delta) {
            if p != 0 {
                return bad("delta must be the first filter: c-blosc2 2.15 and python-blosc2 4.x disagree on it after other filters".into());
            }
        }
        for f in &filters {
            if let Filter::TruncPrec(bits) = f {
                let max = match self.dtype {
                    Dtype::Float { size: 4, .. } => 23,
                    Dtype::Float { size: 8, .. } => 52,
                    _ => return bad("trunc_prec applies to 4- and 8-byte floats only".into()),
                };
                if *bits == 0 || *bits > max {
                    return bad(format!(
                        "trunc_prec keeps 1 to {max} mantissa bits, not {bits}"
                    ));
                }
            }
        }
        let mut fslots = [0u8; 6];
        let mut fmeta = [0u8; 6];
        if self.filters.is_none() && !filters.is_empty() {
            // python-blosc2's default layout: [0, 0, 0, 0, 0, SHUFFLE]
            (fslots[5], fmeta[5]) = filters[0].id_meta();
        } else {
            for (i, f) in filters.iter().enumerate() {
                (fslots[i], fmeta[i]) = f.id_meta();
            }
        }
        // Pipelines readers cannot undo (a DELTA among three filters or more: see
        // filters::rust_can_undo) are not written either.
        filters::rust_can_undo(&fslots, &fmeta).map_err(|e| {
            Error::InvalidArgument(format!(
                "{e}: a DELTA combines with at most one other filter"
            ))
        })?;
        // BYTEDELTA works on one stream per item byte, as python-blosc2 writes it.
        for (id, m) in fslots.iter().zip(fmeta.iter_mut()) {
            if *id == crate::model::ids::BYTEDELTA {
                *m = u8::try_from(itemsize).map_err(|_| {
                    Error::InvalidArgument("bytedelta: items over 255 bytes".into())
                })?;
            }
        }
        // What c-blosc2 2.15 encodes differently from 3.x (byte-group shuffles, BYTEDELTA) is
        // done in Rust; C then compresses with no filters and the chunk headers get the
        // pipeline back.
        // NDCELL / NDMEAN work on the b2nd block shape; NDMEAN on little-endian floats.
        let block_shape: Vec<usize> = blocks.iter().map(|&b| b as usize).collect();
        if fslots.contains(&33)
            && !matches!(
                self.dtype,
                Dtype::Float {
                    size: 4 | 8,
                    order: ByteOrder::Little
                }
            )
        {
            return Err(Error::InvalidArgument(format!(
                "ndmean averages <f4 or <f8 items, not {}",
                self.dtype.to_numpy_str()
            )));
        }
        let (forward, rust_codec) = if self.codec == Codec::Zlib {
            // Codec and filters in Rust.
            let f = filters::ForwardPipeline::all_in_rust(&fslots, &fmeta, itemsize, &block_shape)
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "{e}: zlib arrays take shuffle, shuffle:N and bytedelta filters"
                    ))
                })?;
            (Some(f), Some((RustCodec::Zlib, self.clevel)))
        } else if let Some((mode, meta)) = zfp {
            let f = filters::ForwardPipeline::all_in_rust(&fslots, &fmeta, itemsize, &block_shape)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?;
            (Some(f), Some((RustCodec::Zfp(mode, meta), self.clevel)))
        } else {
            let f = filters::ForwardPipeline::new(&fslots, &fmeta, itemsize, &block_shape).map_err(|e| {
                Error::InvalidArgument(format!(
                    "{e}: shuffle:N with N other than the item size, and bytedelta, combine only with shuffles"
                ))
            })?;
            (f, None)
        };

        Ok(Pipeline {
            slots: fslots,
            metas: fmeta,
            forward,
            rust_codec,
        })
    }

    /// Start a streaming write to `target`: push C-order data with [`Writer::push`], then
    /// [`Writer::finish`].
    pub fn create(self, target: Target) -> Result<Writer> {
        let plan = self.plan()?;
        let staging = Staging::new(&target, self.overwrite)?;
        let frame = new_frame(&staging, matches!(target, Target::Sparse(_)), &plan)?
            .with_durability(self.durability);
        // With threads to spare, a large array's chunks are appended on a thread of their
        // own while the next slab is compressed.
        let g = &plan.geom;
        let overlap = self.threads.len() >= 2 && g.nslabs() >= 2 && g.nbytes() >= 16 << 20;
        Ok(Writer {
            sink: super::appender::Sink::new(frame, overlap)?,
            plan,
            staging,
            target,
            durability: self.durability,
            threads: self.threads.len(),
            exec: self.threads.clone(),
            attrs: self.attrs,
            slab: Vec::new(),
            next_slab: 0,
            pushed: 0,
            next_chunk: 0,
            packer: None,
            spare: Vec::new(),
            spare_threads: 0,
            out_bufs: Vec::new(),
        })
    }

    /// Write a whole array from raw C-order bytes in the dtype's byte order to a file or
    /// sparse directory (for [`Target::Memory`] use [`ArrayBuilder::bytes_to_vec`]).
    pub fn write_bytes(self, target: Target, data: &[u8]) -> Result<()> {
        let mut w = self.create(target)?;
        w.push(data)?;
        w.finish()
    }

    /// Write a whole array from typed items (C order) to a file or sparse directory. The
    /// dtype must be `T`'s.
    pub fn write<T: Element>(self, target: Target, data: &[T]) -> Result<()> {
        let bytes = self.typed_bytes(data)?;
        self.write_bytes(target, &bytes)
    }

    /// The contiguous frame (`.b2nd` file bytes) of a whole array from raw C-order bytes.
    pub fn bytes_to_vec(self, data: &[u8]) -> Result<Vec<u8>> {
        let mut w = self.create(Target::Memory)?;
        w.push(data)?;
        w.finish_to_vec()
    }

    /// The contiguous frame (`.b2nd` file bytes) of a whole array from typed items.
    ///
    /// ```
    /// let frame = b2nd::ArrayBuilder::for_type::<i32>(&[3]).to_vec(&[1, 2, 3])?;
    /// assert_eq!(b2nd::Array::from_bytes(frame)?.read::<i32>()?, [1, 2, 3]);
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn to_vec<T: Element>(self, data: &[T]) -> Result<Vec<u8>> {
        let bytes = self.typed_bytes(data)?;
        self.bytes_to_vec(&bytes)
    }

    /// `data`'s bytes, if `T` is the builder's dtype.
    pub(super) fn typed_bytes<'a, T: Element>(
        &self,
        data: &'a [T],
    ) -> Result<std::borrow::Cow<'a, [u8]>> {
        if self.dtype != T::dtype() {
            return Err(Error::TypeMismatch {
                dtype: self.dtype.to_numpy_str(),
                requested: T::NAME,
            });
        }
        Ok(T::as_bytes(data))
    }

    /// A builder for an array of `a`'s shape and element type (then
    /// [`ArrayBuilder::write_ndarray`] writes `a`; chunks, blocks and codec as for
    /// [`ArrayBuilder::for_type`]).
    ///
    /// ```
    /// # #[cfg(feature = "ndarray")] {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let a = ndarray::Array2::<f32>::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32);
    /// let path = dir.path().join("a.b2nd");
    /// b2nd::ArrayBuilder::from_ndarray(&a).write_ndarray(b2nd::Target::File(path.clone()), &a)?;
    /// let back: ndarray::Array2<f32> = b2nd::Array::open(&path)?.read_ndarray_dim()?;
    /// assert_eq!(back, a);
    /// # }
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    #[cfg(feature = "ndarray")]
    pub fn from_ndarray<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        a: &ndarray::ArrayBase<S, D>,
    ) -> ArrayBuilder {
        let shape: Vec<u64> = a.shape().iter().map(|&s| s as u64).collect();
        ArrayBuilder::for_type::<T>(&shape)
    }

    /// Write a whole array from an `ndarray` array or view with any strides (its shape must
    /// equal the builder's).
    #[cfg(feature = "ndarray")]
    pub fn write_ndarray<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        self,
        target: Target,
        a: &ndarray::ArrayBase<S, D>,
    ) -> Result<()> {
        let shape: Vec<u64> = a.shape().iter().map(|&s| s as u64).collect();
        if shape != self.shape {
            return Err(Error::InvalidArgument(format!(
                "ndarray shape {shape:?} differs from the builder's {:?}",
                self.shape
            )));
        }
        let std = a.as_standard_layout();
        let slice = std
            .as_slice()
            .ok_or_else(|| Error::InvalidArgument("ndarray not contiguous".into()))?;
        self.write(target, slice)
    }
}

/// The filter python-blosc2 4.x uses by default for a dtype: SHUFFLE in 4-byte groups for
/// `U` strings (one code point per group), plain SHUFFLE otherwise.
pub(super) fn default_filter(dtype: &Dtype) -> Filter {
    match dtype {
        Dtype::Unicode { .. } => Filter::ShuffleBytes(4),
        _ => Filter::Shuffle,
    }
}

/// The frame a write starts: c-blosc2 lays out the header and metalayer of an empty frame
/// at the staging path (or in memory); the chunks, index, trailer and final header are
/// `NewFrame`'s.
fn new_frame(staging: &Staging, sparse: bool, plan: &Plan) -> Result<NewFrame> {
    let name = staging.name();
    let mut schunk = Schunk::create(staging.c_path(), !sparse, &plan.params)
        .map_err(|e| Error::blosc(format!("{name}: creating the frame"), e))?;
    schunk
        .meta_add(plan.format.name(), &plan.meta_bytes)
        .map_err(|e| Error::blosc(format!("{name}: adding the metalayer"), e))?;
    match staging.c_path() {
        None => NewFrame::memory(
            schunk
                .serialize_cframe()
                .map_err(|e| Error::blosc("serialising the in-memory frame", e))?,
        ),
        Some(path) => {
            drop(schunk); // c-blosc2 has written the empty frame
            if sparse {
                let template = read_on_disk(&path.join("chunks.b2frame"), true)?;
                Ok(NewFrame::sparse(template, path))
            } else {
                NewFrame::file(read_on_disk(path, false)?, path)
            }
        }
    }
}
