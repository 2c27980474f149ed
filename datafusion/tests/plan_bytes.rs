//! Replays the `plan_bytes` fuzz target's committed seeds (`fuzz/seeds/plan_bytes/`) and
//! the good encodings its module makes (`seeds()`), each also with every third byte changed
//! (0, 0xff, +1) and truncated there, through the same body the libFuzzer binary runs
//! (`fuzz/src/plan.rs`): plan bytes decode to errors or plans, never a panic.
//! `B2ND_WRITE_PLAN_SEEDS=DIR` writes the good encodings to DIR (the committed seeds).

#[path = "../../fuzz/src/plan.rs"]
mod plan;

use std::path::Path;

#[test]
fn plan_bytes_seeds_and_their_mutations_keep_the_promises() {
    let made = plan::seeds();
    // Every kind: scans, the table, whole physical and logical plans.
    for mode in 0..4u8 {
        assert!(made.iter().any(|s| s[0] == mode), "no seed of kind {mode}");
    }
    if let Some(dir) = std::env::var_os("B2ND_WRITE_PLAN_SEEDS") {
        for (i, s) in made.iter().enumerate() {
            std::fs::write(Path::new(&dir).join(format!("seed-{i:02}")), s).unwrap();
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/plan_bytes");
    let mut committed: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| std::fs::read(e.unwrap().path()).unwrap())
        .collect();
    assert!(
        !committed.is_empty(),
        "no committed seeds in {}",
        dir.display()
    );
    committed.sort();
    use plan::Outcome;
    // Good encodings decode; the scans of every row and the table answer the fixture's rows
    // (a body that refused everything, or never ran a scan, would pass the rest unseen).
    let outcomes: Vec<Outcome> = made.iter().map(|s| plan::plan_bytes(s)).collect();
    assert!(
        outcomes.iter().all(|o| matches!(o, Outcome::Decoded(_))),
        "{outcomes:?}"
    );
    let full = Outcome::Decoded(Some(plan::FIXTURE_ROWS));
    let (scans, tables) = made.iter().zip(&outcomes).fold((0, 0), |(a, b), (s, o)| {
        (
            a + usize::from(s[0] == 0 && *o == full),
            b + usize::from(s[0] == 1 && *o == full),
        )
    });
    assert!(scans >= 1 && tables == 1, "{outcomes:?}");
    assert!(
        outcomes.contains(&Outcome::Decoded(Some(7))),
        "the LIMIT 7 scan: {outcomes:?}"
    );
    let mut runs = made.len();
    let mut refused = 0;
    for s in &committed {
        refused += usize::from(plan::plan_bytes(s) == Outcome::Refused);
        runs += 1;
    }
    // Every third byte (`hostile_scan_encodings_are_errors` in sql.rs changes every byte of
    // a scan's and a table's encoding).
    for s in &made {
        let stride = 3;
        for i in (1..s.len()).step_by(stride) {
            for v in [0u8, 0xff, s[i].wrapping_add(1)] {
                let mut b = s.clone();
                b[i] = v;
                refused += usize::from(plan::plan_bytes(&b) == Outcome::Refused);
                runs += 1;
            }
            refused += usize::from(plan::plan_bytes(&s[..i]) == Outcome::Refused);
            runs += 1;
        }
    }
    eprintln!(
        "plan_bytes: {} committed seeds, {} made, {runs} inputs run, {refused} refused",
        committed.len(),
        made.len()
    );
    // Truncations alone refuse most mutated inputs.
    assert!(refused > runs / 4, "{refused} of {runs} refused");
}
