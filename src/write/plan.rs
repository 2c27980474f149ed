//! A new array's validated plan: dtype, geometry, the frame's compression parameters and
//! metalayer, and what is done in Rust (filters, codec) rather than in c-blosc2.

#![forbid(unsafe_code)]

use crate::codec::encode::RustStages;
use crate::codec::filters;
use crate::codec::RustCodec;
use crate::ffi::CompressParams;
use crate::format::meta::Format;
use crate::model::dtype::Dtype;
use crate::model::geometry::Geometry;
use crate::model::ids;

/// What [`ArrayBuilder::plan`](super::builder::ArrayBuilder) validated: everything a
/// [`Writer`](super::writer::Writer) needs.
pub(super) struct Plan {
    pub(super) dtype: Dtype,
    pub(super) geom: Geometry,
    pub(super) params: CompressParams,
    pub(super) meta_bytes: Vec<u8>,
    pub(super) format: Format,
    pub(super) forward: Option<filters::ForwardPipeline>,
    /// A codec encoded in Rust (with its clevel): c-blosc2 then only writes zero chunks.
    pub(super) rust_codec: Option<(RustCodec, u8)>,
}

impl Plan {
    pub(super) fn dtype(&self) -> &Dtype {
        &self.dtype
    }

    /// What is done in Rust before (and instead of) c-blosc2's codec, for an
    /// [`Encoder`](crate::codec::encode::Encoder).
    pub(super) fn rust_stages(&self) -> RustStages {
        RustStages {
            forward: self
                .forward
                .clone()
                .map(|f| (f, self.params.filters, self.params.filters_meta)),
            codec: self.rust_codec,
        }
    }

    /// Parameters for the compression contexts, with `nthreads` block threads: the frame's
    /// parameters, minus a filter done in Rust.
    pub(super) fn cctx_params(&self, nthreads: usize) -> CompressParams {
        let mut p = self.params.clone();
        p.nthreads = nthreads.clamp(1, i16::MAX as usize) as i16;
        if self.forward.is_some() {
            // c-blosc2's automatic split decision looks at the filters it is given (none
            // here): take it as it would with the recorded ones, so that the chunks are split
            // into byte streams exactly when python-blosc2's would be. Split when the codec
            // is fast (BloscLZ, LZ4, or ZSTD up to clevel 5), a SHUFFLE is in the pipeline,
            // items are at most 16 bytes and a block holds at least 32 of them.
            let fast = matches!(p.compcode, ids::BLOSCLZ | ids::LZ4)
                || (p.compcode == ids::ZSTD && p.clevel <= 5);
            let shuffle = p.filters.contains(&1);
            let ts = p.typesize.max(1);
            let split = fast && shuffle && ts <= 16 && p.blocksize / ts >= 32;
            p.splitmode = if split {
                crate::ffi::SPLIT_ALWAYS
            } else {
                crate::ffi::SPLIT_NEVER
            };
            p.filters = [0; 6];
            p.filters_meta = [0; 6];
        }
        p
    }
}
