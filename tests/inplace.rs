//! In-place changes (`ArrayMut`): region writes, resizes, appends and attribute edits on
//! contiguous files and sparse directories, checked against an in-memory model after every
//! operation; locking, old readers, compaction, store members.

mod common;

use b2nd::{Array, ArrayBuilder, ArrayMut, Codec, Error, Filter, Value};
use common::inplace_model::*;
use std::path::Path;

#[test]
fn random_operations_match_the_model() {
    let seed: u64 = std::env::var("B2ND_INPLACE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(12345);
    let mut rng = Rng::new(seed);
    let codecs = [Codec::Zstd, Codec::Lz4, Codec::BloscLz];
    for case in 0..24 {
        let dir = tempfile::tempdir().unwrap();
        let nd = 1 + rng.below(3) as usize;
        let shape: Vec<u64> = (0..nd).map(|_| rng.below(12)).collect();
        let chunks: Vec<u64> = (0..nd).map(|_| 1 + rng.below(6)).collect();
        let blocks: Vec<u64> = chunks.iter().map(|&c| 1 + rng.below(c)).collect();
        let sparse = case % 3 == 2;
        let codec = codecs[case % 3];
        let filters = if case % 4 == 3 {
            vec![Filter::Delta]
        } else if case % 2 == 0 {
            vec![Filter::Shuffle]
        } else {
            vec![Filter::Shuffle, Filter::Bytedelta]
        };
        let (path, mut m) = create(
            dir.path(),
            sparse,
            [&shape, &chunks, &blocks],
            codec,
            &filters,
            &mut rng,
        );
        eprintln!(
            "case {case}: shape {shape:?} chunks {chunks:?} blocks {blocks:?} sparse {sparse}"
        );
        let mut a = ArrayMut::open(&path).unwrap();
        for step in 0..12 {
            eprintln!("  step {step}");
            let op = Op::random(&m, &mut rng);
            op.apply(&mut a).unwrap();
            op.apply_model(&mut m);
            let what = format!("{op:?}");
            let ctx = format!("seed {seed} case {case} step {step}: {what} (chunks {chunks:?} blocks {blocks:?} sparse {sparse})");
            assert_eq!(a.array().shape(), &m.shape[..], "{ctx}");
            assert_eq!(a.array().read::<i32>().unwrap(), m.data, "{ctx}");
        }
        drop(a);
        check(&path, &m);
        // Compaction keeps the contents and drops the dead space.
        let before = dir_size(&path);
        let mut a = ArrayMut::open(&path).unwrap();
        a.compact().unwrap();
        drop(a);
        check(&path, &m);
        assert!(dir_size(&path) <= before);
    }
}

fn dir_size(p: &Path) -> u64 {
    if p.is_dir() {
        std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    } else {
        std::fs::metadata(p).unwrap().len()
    }
}

#[test]
fn untouched_chunks_are_not_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(1);
    let (path, mut m) = create(
        dir.path(),
        false,
        [&[100, 100], &[10, 10], &[5, 10]],
        Codec::Zstd,
        &[Filter::Shuffle],
        &mut rng,
    );
    let size = dir_size(&path);
    let mut a = ArrayMut::open(&path).unwrap();
    a.write_region(&[15], &[1], &[7i32]).unwrap_err(); // wrong rank
    a.write_region(&[15, 15], &[1, 1], &[7i32]).unwrap();
    m.write(&[15, 15], &[1, 1], &[7]);
    let grown = dir_size(&path) - size;
    // One chunk (of 100), a new index and trailer: far less than the whole array again.
    assert!(grown * 20 < size, "grew {grown} of {size}");
    drop(a);
    check(&path, &m);
}

#[test]
fn one_writer_and_old_readers_keep_their_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(2);
    let (path, m0) = create(
        dir.path(),
        false,
        [&[20, 6], &[4, 6], &[2, 3]],
        Codec::Lz4,
        &[Filter::Shuffle],
        &mut rng,
    );
    let old = Array::open(&path).unwrap();
    let mut a = ArrayMut::open(&path).unwrap();
    assert!(matches!(ArrayMut::open(&path), Err(Error::Locked { .. })));
    a.write_region(&[0, 0], &[20, 6], &vec![5i32; 120]).unwrap();
    a.resize(&[30, 6]).unwrap();
    a.set_attr("unit", &Value::Str("m".into())).unwrap();
    // The reader opened before keeps its metadata, and its reads fail clearly rather than
    // mix versions (c-blosc2 reads the index from the path at every fetch).
    assert_eq!(old.shape(), &[20, 6]);
    let _ = m0;
    match old.read::<i32>() {
        Err(Error::Frame { reason, .. }) => assert!(reason.contains("changed"), "{reason}"),
        other => panic!("{other:?}"),
    }
    drop(a);
    let now = Array::open(&path).unwrap();
    assert_eq!(now.shape(), &[30, 6]);
    assert_eq!(now.attr("unit").unwrap(), Some(Value::Str("m".into())));
    // The lock is released with the ArrayMut.
    let mut a = ArrayMut::open(&path).unwrap();
    a.delete_attr("unit").unwrap();
    assert!(a.delete_attr("unit").is_err());
    assert_eq!(a.array().attr("unit").unwrap(), None);
}

#[test]
fn shrink_to_empty_and_grow_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(3);
    for sparse in [false, true] {
        let sub = dir.path().join(format!("s{sparse}"));
        std::fs::create_dir(&sub).unwrap();
        let (path, mut m) = create(
            &sub,
            sparse,
            [&[9, 4], &[4, 4], &[2, 2]],
            Codec::Zstd,
            &[Filter::Shuffle],
            &mut rng,
        );
        let mut a = ArrayMut::open(&path).unwrap();
        a.set_attr("k", &Value::Bool(true)).unwrap();
        a.resize(&[0, 4]).unwrap();
        m.resize(&[0, 4]);
        drop(a);
        check(&path, &m);
        let mut a = ArrayMut::open(&path).unwrap();
        a.append(0, &[1i32, 2, 3, 4]).unwrap();
        m.resize(&[1, 4]);
        m.write(&[0, 0], &[1, 4], &[1, 2, 3, 4]);
        assert_eq!(a.array().attr("k").unwrap(), Some(Value::Bool(true)));
        drop(a);
        check(&path, &m);
    }
}

#[test]
fn store_members_of_directory_stores() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.b2d");
    let mut b = b2nd::StoreBuilder::new(b2nd::StoreKind::TreeStore).threshold(Some(0));
    let frame = ArrayBuilder::for_type::<i32>(&[6])
        .chunks(&[4])
        .blocks(&[2])
        .to_vec(&[1i32, 2, 3, 4, 5, 6])
        .unwrap();
    b.insert("/g/x", frame).unwrap();
    b.write(&store).unwrap();
    let mut a = ArrayMut::open_in_store(&store, "/g/x").unwrap();
    a.write_region(&[5], &[1], &[60i32]).unwrap();
    drop(a);
    assert_eq!(
        Array::open(store.join("g/x.b2nd"))
            .unwrap()
            .read::<i32>()
            .unwrap(),
        vec![1, 2, 3, 4, 5, 60]
    );
    assert!(matches!(
        ArrayMut::open_in_store(&store, "/nope"),
        Err(Error::KeyNotFound { .. })
    ));
    assert!(ArrayMut::open_in_store(&store, "x/../y").is_err());
}
