//! Decompression contexts: [`Dctx`], and [`HookedDctx`] whose blocks a Rust [`BlockHook`]
//! finishes (c-blosc2's postfilter).

use std::os::raw::c_void;
use std::ptr::NonNull;

use blosc2_src as sys;

use super::error::c_size;
use super::{init, CError};

/// Work c-blosc2 hands back to Rust for every block it decodes with a [`HookedDctx`].
///
/// Called from c-blosc2's block threads, possibly several at once, hence `Sync`.
pub(crate) trait BlockHook: Sync {
    /// Finish one block: `input` holds the block as the codec produced it (the hook may use it
    /// as working memory), `output` is where the block's final bytes go (same length; the last
    /// block of a chunk may be shorter than the others). `false` fails the decompression.
    fn finish_block(&self, input: &mut [u8], output: &mut [u8]) -> bool;
}

/// A c-blosc2 decompression context (one per thread); `None` when c-blosc2 could not allocate
/// it, and then every call fails with [`NO_CONTEXT`] instead of a panic.
pub(crate) struct Dctx(Option<NonNull<sys::blosc2_context>>);

// SAFETY: a context has no thread affinity; `decompress` takes `&mut self`, so it is never
// used by two threads at once.
unsafe impl Send for Dctx {}

/// The error of a call on a context c-blosc2 could not allocate.
const NO_CONTEXT: CError = CError::Null("could not allocate a decompression context");

impl Dctx {
    /// A context decoding each chunk with `nthreads` block-level threads.
    pub(crate) fn new(nthreads: usize) -> Dctx {
        Dctx::with_params(sys::blosc2_dparams {
            nthreads: c_nthreads(nthreads),
            ..Default::default()
        })
    }

    fn with_params(dparams: sys::blosc2_dparams) -> Dctx {
        init();
        // SAFETY: dparams is a fully initialised value (its postparams, if any, point to a
        // live struct that C copies); a NULL return is checked.
        let ptr = unsafe { sys::blosc2_create_dctx(dparams) };
        Dctx(NonNull::new(ptr))
    }

    /// How many block threads the context really uses: c-blosc2 2.15 takes `BLOSC_NTHREADS`
    /// from the environment over the number asked for (`blosc2_create_dctx`).
    pub(crate) fn threads(&self) -> usize {
        let Ok(ctx) = self.ptr() else {
            return 1;
        };
        let mut d = sys::blosc2_dparams::default();
        // SAFETY: `ctx` is a live context owned by this handle; `d` is a valid out struct
        // that blosc2_ctx_get_dparams fills (nthreads, schunk, postfilter, postparams) and
        // nothing else writes. The pointers it copies into `d` are not used.
        let rc = unsafe { sys::blosc2_ctx_get_dparams(ctx, &mut d) };
        if rc < 0 {
            return 1;
        }
        usize::try_from(d.nthreads).unwrap_or(1).max(1)
    }

    /// The context, or the allocation failure.
    fn ptr(&self) -> Result<*mut sys::blosc2_context, CError> {
        self.0.map(|p| p.as_ptr()).ok_or(NO_CONTEXT)
    }

    /// Decompress the chunk `src` into `dst`; returns the number of bytes written.
    ///
    /// The caller must have validated `src`'s header (lengths, codec) first: c-blosc2 is
    /// memory safe on its output (it never writes more than `dst.len()`) and checks `srcsize`.
    pub(crate) fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<usize, CError> {
        let ctx = self.ptr()?;
        let srcsize = c_size(src.len())?;
        let dstsize = c_size(dst.len())?;
        // SAFETY: context valid and exclusively borrowed; src/dst are valid, non-overlapping
        // (distinct Rust borrows) for the given lengths; C writes at most `dstsize` bytes.
        let rc = unsafe {
            sys::blosc2_decompress_ctx(
                ctx,
                src.as_ptr() as *const c_void,
                srcsize,
                dst.as_mut_ptr() as *mut c_void,
                dstsize,
            )
        };
        usize::try_from(rc).map_err(|_| CError::Code(i64::from(rc)))
    }

    /// Like [`Dctx::decompress`], but blocks whose `maskout` entry is `true` are skipped:
    /// c-blosc2 neither decodes nor writes them, so their bytes in `dst` are left as they were
    /// (c-blosc2 still counts them in the returned length). `maskout` must hold exactly one
    /// entry per Blosc block of `src` (`ceil(nbytes / blocksize)` from its validated header),
    /// else c-blosc2 refuses the chunk. The mask applies to this one call only.
    ///
    /// Skipping block 0 of a chunk with a DELTA filter is the caller's mistake to avoid:
    /// other blocks are decoded against block 0 (and c-blosc2's threads wait for it).
    pub(crate) fn decompress_masked(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        maskout: &[bool],
    ) -> Result<usize, CError> {
        let ctx = self.ptr()?;
        let nblocks = c_size(maskout.len())?;
        // The size checks `decompress` makes come first: once the mask is set, the C call
        // that consumes it must happen.
        c_size(src.len())?;
        c_size(dst.len())?;
        // c-blosc2 copies the mask (`malloc` + `memcpy`), so a shared slice is enough; it
        // only reads it, even though the binding asks for `*mut`.
        let mask = maskout.as_ptr() as *mut bool;
        // SAFETY: context valid and exclusively borrowed; `mask` points to `nblocks` readable
        // `bool`s (Rust's `bool` is C's `_Bool`: one byte, 0 or 1) which C copies before
        // returning and never writes.
        let rc = unsafe { sys::blosc2_set_maskout(ctx, mask, nblocks) };
        if rc < 0 {
            return Err(CError::Code(i64::from(rc)));
        }
        // blosc2_decompress_ctx consumes the mask whatever the outcome (C frees it and resets
        // it to NULL after the call).
        self.decompress(src, dst)
    }
}

impl Drop for Dctx {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            // SAFETY: valid context owned by this handle, freed exactly once.
            unsafe { sys::blosc2_free_ctx(p.as_ptr()) }
        }
    }
}

fn c_nthreads(nthreads: usize) -> i16 {
    i16::try_from(nthreads.clamp(1, 256)).unwrap_or(1)
}

/// A decompression context whose blocks are finished by a Rust [`BlockHook`] (c-blosc2's
/// postfilter): C decodes each block's codec into its own per-thread buffer and the hook
/// writes the block's final bytes into the output, while the block is still in cache.
///
/// Only for chunks whose header carries no filters C would run (the caller clears them) and
/// that are neither memcpyed nor special: for those C hands the hook the stored bytes.
pub(crate) struct HookedDctx<H: BlockHook> {
    /// Declared before `hook`: the context (which points to the hook) is freed first.
    dctx: Dctx,
    /// The hook, allocated with `Box::into_raw`; C holds this pointer as `user_data`.
    hook: NonNull<H>,
}

// SAFETY: the context has no thread affinity and is only used through `&mut self`; the hook
// is owned (like a `Box<H>`) and `H: Send` lets it move along.
unsafe impl<H: BlockHook + Send> Send for HookedDctx<H> {}

impl<H: BlockHook> HookedDctx<H> {
    /// A context with `nthreads` block-level threads calling `hook` for every block.
    pub(crate) fn new(nthreads: usize, hook: H) -> HookedDctx<H> {
        let hook = NonNull::from(Box::leak(Box::new(hook)));
        let mut params = sys::blosc2_postfilter_params {
            user_data: hook.as_ptr() as *mut c_void,
            input: std::ptr::null(),
            output: std::ptr::null_mut(),
            size: 0,
            typesize: 0,
            offset: 0,
            nchunk: 0,
            nblock: 0,
            tid: 0,
            ttmp: std::ptr::null_mut(),
            ttmp_nbytes: 0,
            ctx: std::ptr::null_mut(),
        };
        let dctx = Dctx::with_params(sys::blosc2_dparams {
            nthreads: c_nthreads(nthreads),
            schunk: std::ptr::null_mut(),
            postfilter: Some(hook_trampoline::<H>),
            // C copies the struct while creating the context.
            postparams: &mut params,
        });
        HookedDctx { dctx, hook }
    }

    /// The hook, to update between decompressions.
    pub(crate) fn hook_mut(&mut self) -> &mut H {
        // SAFETY: `hook` is a live allocation owned by `self`; C only reads it during the
        // decompress calls below, which borrow `self` mutably, so this borrow is unique.
        unsafe { self.hook.as_mut() }
    }

    /// The context to decompress with: each block it decodes is finished by the hook
    /// (blocks a mask skips are neither decoded nor handed to it).
    pub(crate) fn context(&mut self) -> &mut Dctx {
        &mut self.dctx
    }
}

impl<H: BlockHook> Drop for HookedDctx<H> {
    fn drop(&mut self) {
        // `dctx` (the context) is dropped after this body; C never calls the hook outside a
        // decompress call, so freeing the hook first is fine.
        // SAFETY: `hook` came from `Box::leak` in `new` and is freed exactly once, here.
        drop(unsafe { Box::from_raw(self.hook.as_ptr()) });
    }
}

/// The postfilter c-blosc2 calls for each decoded block of a [`HookedDctx`].
///
/// # Safety
/// Called by c-blosc2 only, with the parameters `pipeline_backward` / `blosc_d` build.
unsafe extern "C" fn hook_trampoline<H: BlockHook>(
    p: *mut sys::blosc2_postfilter_params,
) -> std::os::raw::c_int {
    if p.is_null() {
        return -1;
    }
    // SAFETY: C passes a pointer to a parameter struct on its stack, valid for this call.
    let p = unsafe { &*p };
    let Ok(len) = usize::try_from(p.size) else {
        return -1;
    };
    if p.user_data.is_null() || p.input.is_null() || p.output.is_null() {
        return -1;
    }
    // SAFETY: `user_data` is the hook pointer `HookedDctx::new` stored; the hook outlives the
    // context and is only read (shared) while C decompresses.
    let hook = unsafe { &*(p.user_data as *const H) };
    // SAFETY: for chunks without filters (the only ones given to a HookedDctx; memcpyed and
    // special chunks never are) `input` is this thread's private block buffer `tmp`, a
    // writable malloc'ed buffer of at least `blocksize` bytes holding the decoded block, that C
    // does not read again for this block; `output` is `dest + nblock * blocksize`, the
    // block's `size` bytes inside the caller's destination, which C itself would have written
    // and which no other thread touches (blocks are disjoint).
    let (input, output) = unsafe {
        (
            std::slice::from_raw_parts_mut(p.input as *mut u8, len),
            std::slice::from_raw_parts_mut(p.output, len),
        )
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hook.finish_block(input, output)
    })) {
        Ok(true) => 0,
        _ => -1,
    }
}
