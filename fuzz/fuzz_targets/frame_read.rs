//! A frame's bytes: open (metadata, attributes), iterate the chunks, read the whole array.
//! Any outcome but a panic, an abort or a sanitizer report is fine; reads of arrays over
//! 64 MiB are skipped (the declared size is checked before any allocation of it).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(a) = b2nd::Array::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = (a.shape(), a.dtype_str(), a.codec_name(), a.filter_names(), a.attrs());
    if a.nbytes() > 64 << 20 {
        return;
    }
    for c in a.iter_chunks().take(64) {
        let _ = c.map(|c| c.data().len());
    }
    let _ = a.read_bytes();
});
