//! Single-stream decoders (and a Zstandard encoder) of the codec libraries compiled into
//! c-blosc2's static library (LZ4, Zstandard, BloscLZ), for the variable-length-block chunks
//! the linked c-blosc2 2.15 cannot handle itself. Each decoder writes at most `dst.len()` bytes and returns how many it wrote,
//! or `None` when the input is malformed or a size does not fit the library's types.

use std::os::raw::{c_int, c_void};

extern "C" {
    fn ZSTD_createDCtx() -> *mut c_void;
    fn ZSTD_freeDCtx(dctx: *mut c_void) -> usize;
    fn ZSTD_decompress_usingDict(
        dctx: *mut c_void,
        dst: *mut c_void,
        dst_capacity: usize,
        src: *const c_void,
        src_size: usize,
        dict: *const c_void,
        dict_size: usize,
    ) -> usize;
    fn ZSTD_isError(code: usize) -> u32;
    fn ZSTD_compressBound(src_size: usize) -> usize;
    fn ZSTD_compress(
        dst: *mut c_void,
        dst_capacity: usize,
        src: *const c_void,
        src_size: usize,
        level: c_int,
    ) -> usize;
    fn blosclz_decompress(
        input: *const c_void,
        length: c_int,
        output: *mut c_void,
        maxout: c_int,
    ) -> c_int;
}

/// Decode one Zstandard frame `src` into `dst`, with the raw-content or trained dictionary
/// `dict` (empty: none).
pub(crate) fn zstd_decompress(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Option<usize> {
    // SAFETY: ZSTD_createDCtx has no preconditions; NULL is checked.
    let ctx = unsafe { ZSTD_createDCtx() };
    if ctx.is_null() {
        return None;
    }
    // SAFETY: `ctx` is a live context used by this call only; each pointer comes from a live
    // slice passed with that slice's length; zstd reads at most `src_size` / `dict_size`
    // bytes, writes at most `dst_capacity`, and keeps no pointer after returning.
    let n = unsafe {
        ZSTD_decompress_usingDict(
            ctx,
            dst.as_mut_ptr().cast(),
            dst.len(),
            src.as_ptr().cast(),
            src.len(),
            dict.as_ptr().cast(),
            dict.len(),
        )
    };
    // SAFETY: `ctx` came from ZSTD_createDCtx and is freed exactly once; `n` is a plain value.
    let failed = unsafe {
        ZSTD_freeDCtx(ctx);
        ZSTD_isError(n) != 0
    };
    (!failed).then_some(n)
}

/// Encode `src` as one Zstandard frame at `level`, or `None` when zstd reports an error.
pub(crate) fn zstd_compress(src: &[u8], level: i32) -> Option<Vec<u8>> {
    // SAFETY: ZSTD_compressBound is a pure size computation.
    let cap = unsafe { ZSTD_compressBound(src.len()) };
    // SAFETY: a plain value check.
    if unsafe { ZSTD_isError(cap) } != 0 {
        return None;
    }
    let mut dst = vec![0u8; cap];
    // SAFETY: both pointers come from live slices passed with their lengths; zstd reads at
    // most `src_size` bytes, writes at most `dst_capacity` and keeps no pointer after
    // returning.
    let n = unsafe {
        ZSTD_compress(
            dst.as_mut_ptr().cast(),
            dst.len(),
            src.as_ptr().cast(),
            src.len(),
            level,
        )
    };
    // SAFETY: `n` is a plain value.
    if unsafe { ZSTD_isError(n) } != 0 {
        return None;
    }
    dst.truncate(n);
    Some(dst)
}

/// Decode one BloscLZ stream `src` into `dst`.
pub(crate) fn blosclz_decompress_into(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let (len, max) = (
        c_int::try_from(src.len()).ok()?,
        c_int::try_from(dst.len()).ok()?,
    );
    // SAFETY: both pointers come from live slices passed with their lengths; BloscLZ's
    // decoder checks every read against `length` and every write against `maxout`
    // (blosclz.c, "safe" decoding) and keeps no pointer after returning.
    let r = unsafe { blosclz_decompress(src.as_ptr().cast(), len, dst.as_mut_ptr().cast(), max) };
    usize::try_from(r).ok().filter(|&n| n > 0 || src.is_empty())
}
