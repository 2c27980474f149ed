//! [`Cctx`]: a compression context, and [`CompressParams`], the parameters it takes.

use std::os::raw::c_void;
use std::ptr::NonNull;

use blosc2_src as sys;

use super::error::c_size;
use super::{init, CError, EXTENDED_HEADER_LEN};

/// Compression parameters for new chunks and frames (a plain-Rust mirror of the parts of
/// `blosc2_cparams` this crate sets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CompressParams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub splitmode: i32,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub nthreads: i16,
}

impl CompressParams {
    pub(super) fn to_c(&self) -> sys::blosc2_cparams {
        sys::blosc2_cparams {
            compcode: self.compcode,
            compcode_meta: self.compcode_meta,
            clevel: self.clevel,
            typesize: self.typesize,
            blocksize: self.blocksize,
            splitmode: self.splitmode,
            filters: self.filters,
            filters_meta: self.filters_meta,
            nthreads: self.nthreads.max(1),
            ..Default::default()
        }
    }
}

/// Work c-blosc2 hands to Rust for every block it compresses with a context made by
/// [`Cctx::with_filter`] (c-blosc2's prefilter): the block's filters, run while the block is in
/// cache, before C's codec.
///
/// Called from c-blosc2's block threads, possibly several at once, hence `Sync`.
pub(crate) trait BlockFilter: Send + Sync {
    /// Filter one block: `input` is the block's bytes in the caller's source, `output` (same
    /// length) where the filtered block goes. `false` fails the compression.
    fn filter_block(&self, input: &[u8], output: &mut [u8]) -> bool;
}

/// A c-blosc2 compression context (one per thread).
pub(crate) struct Cctx {
    ptr: NonNull<sys::blosc2_context>,
    params: CompressParams,
    /// The prefilter C calls for every block (`Box::leak`ed; C holds it as `user_data`),
    /// freed after the context.
    filter: Option<NonNull<Box<dyn BlockFilter>>>,
}

// SAFETY: a context has no thread affinity; `compress` takes `&mut self`; the filter is owned
// (like a `Box`) and `Send`.
unsafe impl Send for Cctx {}

impl Cctx {
    /// A context compressing with `params`.
    pub(crate) fn new(params: &CompressParams) -> Result<Cctx, CError> {
        Cctx::create(params, None)
    }

    /// A context compressing with `params` whose blocks `filter` filters first (the
    /// filters in `params`, if any, then run after it). A chunk C stores uncompressed
    /// (memcpyed) then holds the filtered bytes: the caller stores such chunks again with a
    /// context without filter.
    pub(crate) fn with_filter(
        params: &CompressParams,
        filter: Box<dyn BlockFilter>,
    ) -> Result<Cctx, CError> {
        Cctx::create(params, Some(filter))
    }

    fn create(
        params: &CompressParams,
        filter: Option<Box<dyn BlockFilter>>,
    ) -> Result<Cctx, CError> {
        init();
        let filter = filter.map(|f| NonNull::from(Box::leak(Box::new(f))));
        let mut c = params.to_c();
        let mut preparams = sys::blosc2_prefilter_params {
            user_data: filter.map_or(std::ptr::null_mut(), |f| f.as_ptr() as *mut c_void),
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            output_size: 0,
            output_typesize: 0,
            output_offset: 0,
            nchunk: 0,
            nblock: 0,
            tid: 0,
            ttmp: std::ptr::null_mut(),
            ttmp_nbytes: 0,
            ctx: std::ptr::null_mut(),
        };
        if filter.is_some() {
            c.prefilter = Some(filter_trampoline);
            // C copies the struct while creating the context.
            c.preparams = &mut preparams;
        }
        // SAFETY: the cparams value is fully initialised (pointers NULL, or the prefilter and
        // its parameters, which C copies); NULL is checked.
        let ptr = unsafe { sys::blosc2_create_cctx(c) };
        let Some(ptr) = NonNull::new(ptr) else {
            if let Some(f) = filter {
                // SAFETY: leaked above, never handed to a context: freed once, here.
                drop(unsafe { Box::from_raw(f.as_ptr()) });
            }
            return Err(CError::Null(
                "rejected the compression parameters (or a BLOSC_COMPRESSOR naming a plugin)",
            ));
        };
        let ctx = Cctx {
            ptr,
            params: params.clone(),
            filter,
        };
        // c-blosc2 2.15 takes BLOSC_COMPRESSOR, BLOSC_CLEVEL, BLOSC_SHUFFLE, BLOSC_DELTA,
        // BLOSC_TYPESIZE, BLOSC_BLOCKSIZE and BLOSC_SPLITMODE from the environment over the
        // parameters it is given (`blosc2_create_cctx`): a write would then succeed with
        // other parameters than the ones asked for. Refused (BLOSC_NTHREADS only changes
        // the threads, not what is written, and is left to apply).
        let mut got = sys::blosc2_cparams::default();
        // SAFETY: the context is live and owned by `ctx`; `got` is a valid out struct that
        // blosc2_ctx_get_cparams fills field by field. Its pointers are not used.
        let rc = unsafe { sys::blosc2_ctx_get_cparams(ctx.ptr.as_ptr(), &mut got) };
        let asked = params.to_c();
        let same = rc >= 0
            && (
                got.compcode,
                got.clevel,
                got.typesize,
                got.blocksize,
                got.splitmode,
            ) == (
                asked.compcode,
                asked.clevel,
                asked.typesize,
                asked.blocksize,
                asked.splitmode,
            )
            && got.filters == asked.filters
            && got.filters_meta == asked.filters_meta;
        if !same {
            return Err(CError::Invalid(
                "c-blosc2 2.15 replaced the compression parameters with BLOSC_* environment \
                 variables (BLOSC_COMPRESSOR, BLOSC_CLEVEL, BLOSC_SHUFFLE, BLOSC_DELTA, \
                 BLOSC_TYPESIZE, BLOSC_BLOCKSIZE, BLOSC_SPLITMODE): unset them to write with b2nd",
            ));
        }
        Ok(ctx)
    }

    /// Compress `src` into a new chunk in `dst` (replacing its contents).
    pub(crate) fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<(), CError> {
        let cap = src.len() + sys::BLOSC2_MAX_OVERHEAD as usize;
        let srcsize = c_size(src.len())?;
        let dstsize = c_size(cap)?;
        dst.clear();
        // Capacity only: C writes the output, so the buffer is not zeroed first (zeroing a
        // fresh chunk-sized buffer costs a page-fault pass of its own).
        dst.reserve(cap);
        // SAFETY: context valid and exclusively borrowed; `src` readable for srcsize bytes;
        // `dst`'s allocation has at least `cap` = dstsize writable bytes (reserved above),
        // distinct from `src`; C writes at most dstsize bytes and reads none of them.
        let rc = unsafe {
            sys::blosc2_compress_ctx(
                self.ptr.as_ptr(),
                src.as_ptr() as *const c_void,
                srcsize,
                dst.as_mut_ptr() as *mut c_void,
                dstsize,
            )
        };
        if rc <= 0 {
            return Err(CError::Code(i64::from(rc.min(-1))));
        }
        // SAFETY: on success C initialised the first `rc` (<= dstsize <= capacity) bytes.
        unsafe { dst.set_len(rc as usize) };
        Ok(())
    }

    /// A zero-special chunk of `nbytes` decoded bytes (takes no data bytes in a frame).
    pub(crate) fn zeros_chunk(&self, nbytes: usize, dst: &mut Vec<u8>) -> Result<(), CError> {
        let n = c_size(nbytes)?;
        dst.clear();
        dst.resize(EXTENDED_HEADER_LEN, 0);
        // SAFETY: `dst` holds EXTENDED_HEADER_LEN writable bytes, the size C needs.
        let rc = unsafe {
            sys::blosc2_chunk_zeros(
                self.params.to_c(),
                n,
                dst.as_mut_ptr() as *mut c_void,
                EXTENDED_HEADER_LEN as i32,
            )
        };
        if rc < 0 {
            return Err(CError::Code(i64::from(rc)));
        }
        dst.truncate(rc as usize);
        Ok(())
    }
}

impl Drop for Cctx {
    fn drop(&mut self) {
        // SAFETY: valid context owned by this handle, freed exactly once.
        unsafe { sys::blosc2_free_ctx(self.ptr.as_ptr()) }
        if let Some(f) = self.filter.take() {
            // SAFETY: leaked in `create` for this context, which is freed above (C calls the
            // filter only inside `compress`): freed exactly once, here.
            drop(unsafe { Box::from_raw(f.as_ptr()) });
        }
    }
}

/// The prefilter c-blosc2 calls for each block of a [`Cctx::with_filter`] context.
///
/// # Safety
/// Called by c-blosc2 only, with the parameters `pipeline_forward` builds.
unsafe extern "C" fn filter_trampoline(
    p: *mut sys::blosc2_prefilter_params,
) -> std::os::raw::c_int {
    if p.is_null() {
        return -1;
    }
    // SAFETY: C passes a pointer to a parameter struct on its stack, valid for this call.
    let p = unsafe { &*p };
    let Ok(len) = usize::try_from(p.output_size) else {
        return -1;
    };
    if p.user_data.is_null() || p.input.is_null() || p.output.is_null() {
        return -1;
    }
    // SAFETY: `user_data` is the filter `Cctx::create` leaked; it outlives the context and is
    // only read (shared) while C compresses.
    let filter = unsafe { &*(p.user_data as *const Box<dyn BlockFilter>) };
    // SAFETY: `input` is `src + offset`, the block's `output_size` bytes inside the source
    // `compress` borrows for the whole call (only read by C).
    let input = unsafe { std::slice::from_raw_parts(p.input, len) };
    // SAFETY: `output` is this thread's private block buffer (at least a block long) or, for
    // a chunk stored uncompressed, the block's `output_size` bytes in the destination
    // `compress` reserved; no other thread writes them during this call, and they do not
    // overlap the source.
    let output = unsafe { std::slice::from_raw_parts_mut(p.output, len) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        filter.filter_block(input, output)
    })) {
        Ok(true) => 0,
        _ => -1,
    }
}

/// The chunk c-blosc2 2.15 stands in for a special entry `code` of a frame's chunk index
/// (`frame_special_chunk`): a 32-byte header of a chunk of zeros, uninitialised items or
/// NaNs holding `nbytes` bytes, made by C from its default parameters with the frame's
/// `typesize` and `blocksize` (so the header is the one C's own fetch returns). The kinds
/// are tested in C's order: zeros, uninitialised, NaN; `None` for a code naming none of them.
pub(crate) fn special_chunk(
    code: i64,
    nbytes: i32,
    typesize: i32,
    blocksize: i32,
) -> Option<Result<[u8; EXTENDED_HEADER_LEN], CError>> {
    init();
    let kind = |k: i32| (code as u64) & ((k as u64) << 56) != 0;
    let make = if kind(sys::BLOSC2_SPECIAL_ZERO) {
        sys::blosc2_chunk_zeros
    } else if kind(sys::BLOSC2_SPECIAL_UNINIT) {
        sys::blosc2_chunk_uninit
    } else if kind(sys::BLOSC2_SPECIAL_NAN) {
        sys::blosc2_chunk_nans
    } else {
        return None;
    };
    // BLOSC2_CPARAMS_DEFAULTS (a static in C's header, not in the bindings).
    let cparams = sys::blosc2_cparams {
        compcode: sys::BLOSC_BLOSCLZ as u8,
        clevel: 5,
        typesize,
        nthreads: 1,
        blocksize,
        splitmode: sys::BLOSC_FORWARD_COMPAT_SPLIT,
        filters: [0, 0, 0, 0, 0, sys::BLOSC_SHUFFLE as u8],
        ..Default::default()
    };
    let mut out = [0u8; EXTENDED_HEADER_LEN];
    // SAFETY: `out` holds EXTENDED_HEADER_LEN writable bytes, the size passed; the cparams
    // value is fully initialised with NULL pointers, as C's defaults have.
    let rc = unsafe {
        make(
            cparams,
            nbytes,
            out.as_mut_ptr() as *mut c_void,
            EXTENDED_HEADER_LEN as i32,
        )
    };
    Some(if rc < 0 {
        Err(CError::Code(i64::from(rc)))
    } else {
        Ok(out)
    })
}
