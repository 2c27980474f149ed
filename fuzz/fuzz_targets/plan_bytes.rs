//! libFuzzer entry for `plan::plan_bytes` (feature `plan`; the body, documented in
//! `fuzz/src/plan.rs`, is shared with the seed replay in `datafusion/tests/plan_bytes.rs`).
#![no_main]

#[path = "../src/plan.rs"]
#[allow(dead_code)]
mod plan;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    plan::plan_bytes(data);
});
