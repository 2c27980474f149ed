//! Decompression contexts: [`Dctx`], and [`HookedDctx`] whose blocks a Rust [`BlockHook`]
//! finishes (c-blosc2's postfilter).

use std::os::raw::c_void;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use blosc2_src as sys;

use super::error::c_size;
use super::{init, CError};

/// Work c-blosc2 hands back to Rust for every block it decodes with a [`HookedDctx`].
///
/// Called from c-blosc2's block threads, possibly several at once, hence `Sync`.
pub(crate) trait BlockHook: Sync {
    /// Finish one block: `input` holds the block as the codec produced it (the hook may use it
    /// as working memory), `output` is where the block's final bytes go (the same length, or
    /// `1 / shrink` of it for [`HookedDctx::decompress_part`]'s `shrink`; the last block of a
    /// chunk may be shorter than the others). `false` fails the decompression.
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
    /// Declared before `state`: the context (which points to the state) is freed first.
    dctx: Dctx,
    /// The hook and the current redirection, allocated with `Box::leak`; C holds this pointer
    /// as `user_data`.
    state: NonNull<HookState<H>>,
}

/// What the trampoline reads: the hook, and while [`HookedDctx::decompress_part`] runs, the
/// part of the output blocks go to instead of C's destination (null target otherwise).
struct HookState<H> {
    hook: H,
    target: AtomicPtr<u8>,
    target_len: AtomicUsize,
    /// The chunk offset (bytes) of the target's first byte.
    target_first: AtomicUsize,
    /// How many bytes of a block make one byte of the target (1: the block's own bytes).
    target_shrink: AtomicUsize,
}

// SAFETY: the context has no thread affinity and is only used through `&mut self`; the hook
// is owned (like a `Box<H>`) and `H: Send` lets it move along.
unsafe impl<H: BlockHook + Send> Send for HookedDctx<H> {}

impl<H: BlockHook> HookedDctx<H> {
    /// A context with `nthreads` block-level threads calling `hook` for every block.
    pub(crate) fn new(nthreads: usize, hook: H) -> HookedDctx<H> {
        let state = NonNull::from(Box::leak(Box::new(HookState {
            hook,
            target: AtomicPtr::new(std::ptr::null_mut()),
            target_len: AtomicUsize::new(0),
            target_first: AtomicUsize::new(0),
            target_shrink: AtomicUsize::new(1),
        })));
        let mut params = sys::blosc2_postfilter_params {
            user_data: state.as_ptr() as *mut c_void,
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
        HookedDctx { dctx, state }
    }

    /// The hook, to update between decompressions.
    pub(crate) fn hook_mut(&mut self) -> &mut H {
        // SAFETY: `state` is a live allocation owned by `self`; C only reads it during the
        // decompress calls, which borrow `self` mutably, so this borrow is unique.
        unsafe { &mut self.state.as_mut().hook }
    }

    /// Decode only some consecutive blocks of chunk `src` straight into `target`: the block
    /// at chunk offset `o` (bytes) of `len` bytes is finished by the hook into the `len /
    /// shrink` bytes at `target[(o - first) / shrink..]`, never into `dst` (`shrink` 1: the
    /// block's own bytes; more: a projection the hook makes, such as one byte of each code
    /// unit). `maskout` (one entry per block, as for [`Dctx::decompress_masked`]) must skip
    /// every block outside `target`: a block that does not fit in it, or whose offset or
    /// length `shrink` does not divide, fails the call.
    ///
    /// `dst` must still be the chunk's whole decoded size (c-blosc2 checks it), but for the
    /// chunks a hooked context is for, C decodes each block into its own buffer and leaves
    /// `dst` unwritten, so a freshly allocated `dst` costs no page faults. Returns C's count
    /// (the whole chunk's size).
    pub(crate) fn decompress_part(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        maskout: &[bool],
        target: &mut [u8],
        first: usize,
        shrink: usize,
    ) -> Result<usize, CError> {
        /// Clears the redirection however the call ends.
        struct Reset<'a>(&'a AtomicPtr<u8>);
        impl Drop for Reset<'_> {
            fn drop(&mut self) {
                self.0.store(std::ptr::null_mut(), Ordering::Release);
            }
        }
        // SAFETY: `state` is a live allocation owned by `self`, shared only with the C threads
        // of this context's calls; the fields used here are atomics.
        let state = unsafe { self.state.as_ref() };
        state.target_len.store(target.len(), Ordering::Relaxed);
        state.target_first.store(first, Ordering::Relaxed);
        state.target_shrink.store(shrink.max(1), Ordering::Relaxed);
        state.target.store(target.as_mut_ptr(), Ordering::Release);
        let _reset = Reset(&state.target);
        self.dctx.decompress_masked(src, dst, maskout)
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
        // SAFETY: `state` came from `Box::leak` in `new` and is freed exactly once, here.
        drop(unsafe { Box::from_raw(self.state.as_ptr()) });
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
    // SAFETY: `user_data` is the state pointer `HookedDctx::new` stored; the state outlives
    // the context and is only read (shared) while C decompresses.
    let state = unsafe { &*(p.user_data as *const HookState<H>) };
    let target = state.target.load(Ordering::Acquire);
    // SAFETY: for chunks without filters (the only ones given to a HookedDctx; memcpyed and
    // special chunks never are) `input` is this thread's private block buffer `tmp`, a
    // writable malloc'ed buffer of at least `blocksize` bytes holding the decoded block, that C
    // does not read again for this block.
    let input = unsafe { std::slice::from_raw_parts_mut(p.input as *mut u8, len) };
    let output = if target.is_null() {
        // SAFETY: `output` is `dest + nblock * blocksize`, the block's `size` bytes inside the
        // caller's destination, which C itself would have written and which no other thread
        // touches (blocks are disjoint).
        unsafe { std::slice::from_raw_parts_mut(p.output, len) }
    } else {
        let (first, tlen, shrink) = (
            state.target_first.load(Ordering::Relaxed),
            state.target_len.load(Ordering::Relaxed),
            state.target_shrink.load(Ordering::Relaxed).max(1),
        );
        if !len.is_multiple_of(shrink) {
            return -1;
        }
        let out_len = len / shrink;
        let Some(at) = usize::try_from(p.offset)
            .ok()
            .and_then(|o| o.checked_sub(first))
            .filter(|&at| at.is_multiple_of(shrink))
            .map(|at| at / shrink)
            .filter(|&at| at.checked_add(out_len).is_some_and(|end| end <= tlen))
        else {
            return -1;
        };
        // SAFETY: `target` is the `&mut [u8]` of `tlen` bytes that `decompress_part` holds
        // exclusively for the whole C call (reset to null before it returns); `at + out_len
        // <= tlen` was checked; each block has its own chunk offset, a multiple of `shrink`
        // from `first`, and blocks do not overlap, so the ranges `[(o - first) / shrink,
        // + len / shrink)` the blocks C's threads finish at once are disjoint too.
        unsafe { std::slice::from_raw_parts_mut(target.add(at), out_len) }
    };
    let hook = &state.hook;
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        hook.finish_block(input, output)
    })) {
        Ok(true) => 0,
        _ => -1,
    }
}
