//! Opening many arrays starts no threads of their own: reads share rayon's global pool
//! unless the caller hands them a pool.

mod common;

use b2nd::{Array, Threads};
use common::*;

/// The process's thread count (Linux).
fn threads_now() -> Option<usize> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Runs in a child process of its own (this test binary, only this test): other tests of the
/// binary start and end threads of their own meanwhile, which made the count flaky in CI.
#[test]
fn two_hundred_open_arrays_share_one_pool() {
    if std::env::var_os("B2ND_THREADS_CHILD").is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "two_hundred_open_arrays_share_one_pool",
                "--test-threads=1",
                "--nocapture",
            ])
            .env("B2ND_THREADS_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "child: {}\n{text}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let path = data_dir().join("slices/d3_be_i2.b2nd"); // several chunks: reads go parallel
    let want = Array::open(&path).unwrap().read_bytes().unwrap();
    let global = rayon::current_num_threads();
    let before = threads_now().expect("/proc/self/status: this test counts threads on Linux");
    let arrays: Vec<Array> = (0..200).map(|_| Array::open(&path).unwrap()).collect();
    for a in &arrays {
        assert_eq!(a.read_bytes().unwrap(), want);
        assert_eq!(a.threads(), global);
    }
    let after = threads_now().unwrap();
    assert!(
        after <= before + global + 2,
        "{before} threads before, {after} with 200 arrays open (global pool: {global})"
    );
    // A caller's pool is used as given, and can be shared.
    let pool = std::sync::Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap(),
    );
    let shared: Vec<Array> = (0..50)
        .map(|_| {
            Array::open(&path)
                .unwrap()
                .with_threads(Threads::Pool(pool.clone()))
        })
        .collect();
    for a in &shared {
        assert_eq!(a.threads(), 3);
        assert_eq!(a.read_bytes().unwrap(), want);
    }
    let with_pool = threads_now().unwrap();
    assert!(
        with_pool <= after + 3 + 2,
        "{after} threads before the caller's pool of 3, {with_pool} with it"
    );
    assert_eq!(
        Array::open(&path)
            .unwrap()
            .with_threads(Threads::Single)
            .threads(),
        1
    );
}

/// Chunks too small to compress are stored as they are (memcpyed) but keep their filter
/// bytes: with block threads, a DELTA chunk must not have DELTA undone again (an in-place
/// append with two threads once re-encoded such a chunk with a wrong item).
#[test]
fn memcpyed_delta_chunks_read_right_with_block_threads() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("a.b2nd");
    let v: Vec<i32> = vec![730, 366, -799, -383, -601, 421, 356];
    b2nd::ArrayBuilder::for_type::<i32>(&[7])
        .chunks(&[5])
        .blocks(&[2])
        .filters(&[b2nd::Filter::Delta])
        .write(b2nd::Target::File(p.clone()), &v)
        .unwrap();
    let two = b2nd::Threads::count(2).unwrap();
    let a = Array::open(&p).unwrap().with_threads(two.clone());
    let chunks: Vec<u8> = a
        .iter_chunks()
        .flat_map(|c| c.unwrap().data().to_vec())
        .collect();
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(chunks, bytes);
    let mut m = b2nd::ArrayMut::open(&p).unwrap().with_threads(two);
    m.append(0, &[1i32, 2, 3]).unwrap();
    drop(m);
    let got = Array::open(&p).unwrap().read::<i32>().unwrap();
    assert_eq!(got, [730, 366, -799, -383, -601, 421, 356, 1, 2, 3]);
}

/// With fewer chunks than threads, each thread decodes its share of a chunk's blocks
/// straight into the output: every filter and codec, a padded last block row, a region
/// of rows, and 1 to 3 threads read the same values.
#[test]
fn one_chunk_read_by_several_threads() {
    use b2nd::{ArrayBuilder, Codec, Filter, Target};
    let d = tempfile::tempdir().unwrap();
    let (rows, cols) = (203u64, 96u64); // blocks of 8 rows: the last is padded
    let v: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 2654435761) % 100_003) as f32 * 0.25)
        .collect();
    let cases: Vec<(Codec, Vec<Filter>)> = vec![
        (Codec::Zstd, vec![Filter::Shuffle]),
        (Codec::Lz4, vec![]),
        (Codec::Zstd, vec![Filter::Bitshuffle]),
        (
            Codec::Zstd,
            vec![Filter::ShuffleBytes(2), Filter::Bytedelta],
        ),
        (Codec::Zstd, vec![Filter::Delta, Filter::Shuffle]),
        (Codec::Zlib, vec![Filter::Shuffle]),
    ];
    for (i, (codec, filters)) in cases.into_iter().enumerate() {
        let p = d.path().join(format!("one{i}.b2nd"));
        ArrayBuilder::for_type::<f32>(&[rows, cols])
            .chunks(&[rows, cols])
            .blocks(&[8, cols])
            .codec(codec)
            .filters(&filters)
            .write(Target::File(p.clone()), &v)
            .unwrap();
        for t in 1..=3 {
            let a = Array::open(&p)
                .unwrap()
                .with_threads(Threads::count(t).unwrap());
            assert_eq!(a.read::<f32>().unwrap(), v, "case {i}, {t} threads");
            let part: Vec<f32> = a
                .read_slice(&[b2nd::SliceItem::Range {
                    start: Some(16),
                    stop: Some(200),
                    step: 1,
                }])
                .unwrap();
            assert_eq!(
                part,
                v[16 * 96..200 * 96],
                "case {i}, {t} threads, rows 16..200"
            );
        }
    }
}

/// A region that touches few blocks of a chunk reads only those blocks' bytes from disk
/// (contiguous and sparse frames) and decodes them with the same mask, on every decode path
/// (block by block, block threads, DELTA's block 0, a Rust codec): the values equal the data.
#[test]
fn regions_touching_few_blocks_read_only_those() {
    use b2nd::{ArrayBuilder, Codec, Filter, SliceItem, Target};
    let d = tempfile::tempdir().unwrap();
    let (rows, cols) = (128u64, 4096u64); // blocks of 8 rows: 128 KiB, 16 per chunk
    let v: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 2654435761) % 1_000_003) as f32 * 0.5)
        .collect();
    let cases: Vec<(Codec, Vec<Filter>)> = vec![
        (Codec::Zstd, vec![Filter::Shuffle]),
        (Codec::Lz4, vec![]),
        (Codec::Zstd, vec![Filter::Delta]),
        (
            Codec::Zstd,
            vec![Filter::ShuffleBytes(2), Filter::Bytedelta],
        ),
        (Codec::Zlib, vec![Filter::Shuffle]),
    ];
    for (i, (codec, filters)) in cases.into_iter().enumerate() {
        for sparse in [false, true] {
            let p = d.path().join(format!("few{i}{sparse}.b2nd"));
            let target = if sparse {
                Target::Sparse(p.clone())
            } else {
                Target::File(p.clone())
            };
            ArrayBuilder::for_type::<f32>(&[rows, cols])
                .chunks(&[64, cols])
                .blocks(&[8, cols])
                .codec(codec)
                .filters(&filters)
                .write(target, &v)
                .unwrap();
            for t in 1..=2 {
                let a = Array::open(&p)
                    .unwrap()
                    .with_threads(Threads::count(t).unwrap());
                // Rows 70..90 (blocks 0..3 of chunk 1), columns 100..3000.
                let got: Vec<f32> = a
                    .read_slice(&[
                        SliceItem::Range {
                            start: Some(70),
                            stop: Some(90),
                            step: 1,
                        },
                        SliceItem::Range {
                            start: Some(100),
                            stop: Some(3000),
                            step: 1,
                        },
                    ])
                    .unwrap();
                let want: Vec<f32> = (70..90)
                    .flat_map(|r| v[r * 4096 + 100..r * 4096 + 3000].to_vec())
                    .collect();
                assert_eq!(got, want, "case {i}, sparse {sparse}, {t} threads");
            }
        }
    }
}
