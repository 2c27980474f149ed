//! Replays the committed fuzz corpora (`fuzz/seeds/<target>/`: the minimised corpora the
//! fuzzer kept, seeded from the fixtures, plus every input that once crashed, hung or leaked)
//! through the same target bodies the libFuzzer binaries run (`fuzz/src/lib.rs`), on stable
//! Rust and without sanitizers: `cargo test --release` re-checks each input's promises (no
//! panic, slices equal to the whole read, refused in-place changes leave files unchanged,
//! round trips equal); a debug `cargo test` checks every input of five targets and every
//! 4th of the two slow ones.

#[path = "../fuzz/src/lib.rs"]
mod b2nd_fuzz;

use std::path::Path;

#[test]
fn every_committed_fuzz_input_keeps_its_promises() {
    // `B2ND_FUZZ_CORPUS=fuzz/corpus` replays a fuzzer's working corpora instead.
    let root = match std::env::var_os("B2ND_FUZZ_CORPUS") {
        Some(dir) => Path::new(&dir).to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds"),
    };
    let mut counts = Vec::new();
    let mut failures = Vec::new();
    for &(target, run) in b2nd_fuzz::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds for {target}");
        // Debug builds (the README's `cargo test`) replay every 4th input of the two slow
        // targets (about 100 ms and 40 ms an input there); release builds, as CI runs them,
        // replay every input.
        let stride = if cfg!(debug_assertions) && matches!(target, "store_open" | "roundtrip") {
            4
        } else {
            1
        };
        let t0 = std::time::Instant::now();
        for f in files.iter().step_by(stride) {
            let data = std::fs::read(f).unwrap();
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failures.push(f.display().to_string());
            }
        }
        counts.push(format!(
            "{target} {} in {:.1} s",
            files.len() / stride,
            t0.elapsed().as_secs_f64()
        ));
    }
    eprintln!("replayed: {}", counts.join(", "));
    assert!(
        failures.is_empty(),
        "inputs that broke a promise: {failures:#?}"
    );
}

/// The `parsers` seeds alone: pure Rust (no c-blosc2), so this one also runs under Miri
/// (`cargo +nightly miri test --test fuzz_corpora parser_seeds`).
#[test]
fn parser_seeds_keep_their_promises() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/parsers");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        b2nd_fuzz::parsers(&std::fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n > 0);
}
