//! LZ4 from the LZ4 compiled into c-blosc2's static library: decoding with an external
//! dictionary, and encoding with an acceleration of the caller's.

/// Encode `src` as one LZ4 block with `acceleration` (LZ4's `LZ4_compress_fast`), appended
/// to `dst`, at most `max` bytes (its capacity grown as needed, nothing zeroed first): the
/// number of bytes appended, or `None` (and `dst` unchanged) when the result would be
/// longer (or a size does not fit LZ4's `int`).
pub(crate) fn lz4_compress_append(
    src: &[u8],
    dst: &mut Vec<u8>,
    max: usize,
    acceleration: i32,
) -> Option<usize> {
    dst.reserve(max);
    let len = dst.len();
    // SAFETY: `reserve` left at least `max` bytes of capacity after `len`; LZ4 writes at
    // most that many there and reads none of them.
    let n = lz4_compress_raw(src, unsafe { dst.as_mut_ptr().add(len) }, max, acceleration)?;
    // SAFETY: on success LZ4 initialised the `n <= max` bytes after `len`.
    unsafe { dst.set_len(len + n) };
    Some(n)
}

/// `LZ4_compress_fast` of `src` into the `cap` writable bytes at `dst`.
fn lz4_compress_raw(src: &[u8], dst: *mut u8, cap: usize, acceleration: i32) -> Option<usize> {
    let n = |len: usize| std::os::raw::c_int::try_from(len).ok();
    let (src_len, dst_len) = (n(src.len())?, n(cap)?);
    // SAFETY: `src` is a live slice passed with its length and `dst` has `cap` writable
    // bytes (both callers' guarantee); LZ4 reads at most `src_size` bytes of `src`, writes at
    // most `dst_capacity` bytes of `dst` (returning 0 when the result would not fit),
    // allocates its state on the stack and keeps no pointer after returning (lz4.h).
    let r = unsafe {
        LZ4_compress_fast(
            src.as_ptr().cast(),
            dst.cast(),
            src_len,
            dst_len,
            acceleration,
        )
    };
    usize::try_from(r).ok().filter(|&r| r > 0)
}

/// Decode one LZ4 block `src` into `dst` with the external dictionary `dict` (LZ4's
/// `LZ4_decompress_safe_usingDict`): the number of bytes written, or `None` when the input is
/// malformed or a size does not fit LZ4's `int`.
pub(crate) fn lz4_decompress_with_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Option<usize> {
    let n = |len: usize| std::os::raw::c_int::try_from(len).ok();
    let (src_len, dst_len, dict_len) = (n(src.len())?, n(dst.len())?, n(dict.len())?);
    // SAFETY: each pointer comes from a live slice and is passed with that slice's length;
    // LZ4's `_safe_` decoders never read past `src + compressed_size` or `dict + dict_size`,
    // nor write past `dst + dst_capacity`, whatever the input bytes (lz4.h), and keep no
    // pointer after returning.
    let r = unsafe {
        LZ4_decompress_safe_usingDict(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            src_len,
            dst_len,
            dict.as_ptr().cast(),
            dict_len,
        )
    };
    usize::try_from(r).ok()
}

extern "C" {
    // LZ4 (lz4.h): the encoder c-blosc2 calls for LZ4 chunks.
    fn LZ4_compress_fast(
        src: *const std::os::raw::c_char,
        dst: *mut std::os::raw::c_char,
        src_size: std::os::raw::c_int,
        dst_capacity: std::os::raw::c_int,
        acceleration: std::os::raw::c_int,
    ) -> std::os::raw::c_int;
    // LZ4 (lz4.h), compiled into the same static library: the function c-blosc2 3.x's
    // `lz4_wrap_decompress` calls for chunks with a dictionary.
    fn LZ4_decompress_safe_usingDict(
        src: *const std::os::raw::c_char,
        dst: *mut std::os::raw::c_char,
        compressed_size: std::os::raw::c_int,
        dst_capacity: std::os::raw::c_int,
        dict_start: *const std::os::raw::c_char,
        dict_size: std::os::raw::c_int,
    ) -> std::os::raw::c_int;
}
