//! libFuzzer entry for `b2nd_fuzz::arrow_blocks` (the body, documented there, is shared with
//! the corpus replay in the main crate's `tests/fuzz_corpora.rs`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| b2nd_fuzz::arrow_blocks(data));
