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
    a.write_region(&b2nd::Region::new([15], [1]), &[7i32])
        .unwrap_err(); // wrong rank
    a.write_region(&b2nd::Region::new([15, 15], [1, 1]), &[7i32])
        .unwrap();
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
    a.write_region(&b2nd::Region::new([0, 0], [20, 6]), &vec![5i32; 120])
        .unwrap();
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
    a.write_region(&b2nd::Region::new([5], [1]), &[60i32])
        .unwrap();
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

/// Arrays of many dtypes, codecs and filters, contiguous and sparse, changed in place by
/// random region writes, resizes, appends and attribute edits. Values are checked against
/// the model (`<i4`) or against what was written (raw bytes); with `B2ND_INPLACE_OUT` each
/// result is kept with its expected bytes and metadata for python-blosc2
/// (`scripts/check_inplace_written.py`).
#[test]
fn changed_arrays_for_python() {
    let out = std::env::var("B2ND_INPLACE_OUT")
        .ok()
        .map(std::path::PathBuf::from);
    let dir = tempfile::tempdir().unwrap();
    let root = out.clone().unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&root).unwrap();
    let dtypes = [
        "<i4",
        "<f8",
        "|u1",
        "|b1",
        "<U3",
        "|S5",
        ">i8",
        "[('a', '<i2'), ('b', '<f8')]",
        "|S300",
    ];
    let codecs = [
        Codec::Zstd,
        Codec::Lz4,
        Codec::BloscLz,
        Codec::Zlib,
        Codec::Lz4hc,
    ];
    let mut rng = Rng::new(77);
    let mut manifest = Vec::new();
    for (case, dt) in dtypes.iter().enumerate() {
        for sparse in [false, true] {
            let dtype = b2nd::Dtype::parse(dt).unwrap();
            let isz = dtype.itemsize();
            let shape = [7 + rng.below(9), 3 + rng.below(5)];
            let chunks = [1 + rng.below(6), 1 + rng.below(4)];
            let blocks = [1 + rng.below(chunks[0]), 1 + rng.below(chunks[1])];
            let codec = codecs[(case + sparse as usize) % codecs.len()];
            let filters = if codec == Codec::Zlib || (isz > 1 && case % 2 == 0) {
                vec![Filter::Shuffle]
            } else if case % 3 == 0 {
                vec![]
            } else {
                vec![Filter::Bitshuffle]
            };
            let name = format!(
                "inplace_{case}_{}{}",
                if sparse { "s" } else { "c" },
                if sparse { ".b2nd.d" } else { ".b2nd" }
            );
            let path = root.join(&name);
            let n = (shape[0] * shape[1]) as usize;
            let mut bytes: Vec<u8> = (0..n * isz).map(|_| rng.below(256) as u8).collect();
            let target = if sparse {
                b2nd::Target::Sparse(path.clone())
            } else {
                b2nd::Target::File(path.clone())
            };
            ArrayBuilder::new(&shape, dtype.clone())
                .chunks(&chunks)
                .blocks(&blocks)
                .codec(codec)
                .clevel(1 + rng.below(9) as u8)
                .filters(&filters)
                .overwrite(true)
                .write_bytes(target, &bytes)
                .unwrap();
            let mut cur = shape.to_vec();
            let mut a = ArrayMut::open(&path).unwrap();
            // A region write (bytes model: C order over `cur`).
            let start = [rng.below(cur[0]), rng.below(cur[1])];
            let rs = [
                1 + rng.below(cur[0] - start[0]),
                1 + rng.below(cur[1] - start[1]),
            ];
            let w: Vec<u8> = (0..(rs[0] * rs[1]) as usize * isz)
                .map(|_| rng.below(256) as u8)
                .collect();
            a.write_region_bytes(&b2nd::Region::new(start, rs), &w)
                .unwrap();
            for r in 0..rs[0] as usize {
                let at = ((start[0] as usize + r) * cur[1] as usize + start[1] as usize) * isz;
                let len = rs[1] as usize * isz;
                bytes[at..at + len].copy_from_slice(&w[r * len..(r + 1) * len]);
            }
            // Grow the columns (zeros), append rows, shrink the rows.
            let grow = cur[1] + 2;
            a.resize(&[cur[0], grow]).unwrap();
            let mut g = vec![0u8; (cur[0] * grow) as usize * isz];
            for r in 0..cur[0] as usize {
                let old = cur[1] as usize * isz;
                g[r * grow as usize * isz..r * grow as usize * isz + old]
                    .copy_from_slice(&bytes[r * old..(r + 1) * old]);
            }
            bytes = g;
            cur[1] = grow;
            let extra: Vec<u8> = (0..(2 * cur[1]) as usize * isz)
                .map(|_| rng.below(256) as u8)
                .collect();
            a.append_bytes(0, &extra).unwrap();
            bytes.extend_from_slice(&extra);
            cur[0] += 2;
            cur[0] -= 1;
            a.resize(&cur).unwrap();
            bytes.truncate((cur[0] * cur[1]) as usize * isz);
            a.set_attrs(&[
                ("unit", Value::Str("m/s".into())),
                ("n", Value::Int(case as i64)),
            ])
            .unwrap();
            a.delete_attr("n").unwrap();
            a.set_attr("scale", &Value::Float(0.5)).unwrap();
            drop(a);
            // The attribute edits that need no ArrayMut publish the same way.
            b2nd::write::set_attrs(
                &path,
                &[("by", Value::Str("set_attrs".into())), ("t", Value::Int(1))],
            )
            .unwrap();
            b2nd::write::delete_attrs(&path, &["t"]).unwrap();
            let got = Array::open(&path).unwrap();
            assert_eq!(got.shape(), &cur[..], "{name}");
            assert_eq!(got.read_bytes().unwrap(), bytes, "{name}");
            let mut npy = b2nd::npy::header(&dtype, &cur);
            npy.extend_from_slice(&bytes);
            std::fs::write(root.join(format!("{name}.npy")), npy).unwrap();
            manifest.push(serde_json::json!({
                "path": name,
                "expected": format!("{name}.npy"),
                "shape": cur,
                "codec": codec.name(),
                "clevel": got.clevel(),
                "filters": got.filter_names(),
                "attrs": {"unit": "m/s", "scale": 0.5, "by": "set_attrs"},
            }));
        }
    }
    std::fs::write(
        root.join("inplace.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

/// Arrays python-blosc2 changed in place (`__setitem__`, `resize`, `append`, attribute
/// edits; `scripts/gen_inplace_fixtures.py`, regenerated live by CI through
/// `B2ND_INPLACE_FIXTURES`): b2nd reads what python reads after its changes, and changes
/// them further itself.
#[test]
fn reads_and_continues_what_python_changed() {
    let dir = std::env::var("B2ND_INPLACE_FIXTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| common::data_dir().join("inplace"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("inplace.json")).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut n = 0;
    for f in manifest.as_array().unwrap() {
        let name = f["path"].as_str().unwrap();
        let path = dir.join(name);
        let npy = std::fs::read(dir.join(f["expected"].as_str().unwrap())).unwrap();
        let h = b2nd::npy::parse_header(&npy).unwrap();
        let want = &npy[h.data_offset..];
        let a = Array::open(&path).unwrap();
        let shape: Vec<u64> = f["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert_eq!(a.shape(), &shape[..], "{name}");
        assert_eq!(a.read_bytes().unwrap(), want, "{name}");
        for (k, v) in f["attrs"].as_object().unwrap() {
            let got = a
                .attr(k)
                .unwrap()
                .unwrap_or_else(|| panic!("{name}: no attribute {k}"));
            assert_eq!(common::to_json(&got), *v, "{name}: attribute {k}");
        }
        // b2nd continues: one more row along axis 0, then a value written into it.
        let copy = tmp.path().join(name);
        if path.is_dir() {
            std::fs::create_dir(&copy).unwrap();
            for e in std::fs::read_dir(&path).unwrap() {
                let e = e.unwrap();
                std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
            }
        } else {
            std::fs::copy(&path, &copy).unwrap();
        }
        let mut m = ArrayMut::open(&copy).unwrap();
        let mut grown = shape.clone();
        grown[0] += 1;
        m.resize(&grown).unwrap();
        let row: u64 = shape[1..].iter().product();
        let isz = a.itemsize();
        let mut start = vec![0; shape.len()];
        start[0] = shape[0];
        let mut rshape = shape.clone();
        rshape[0] = 1;
        m.write_region_bytes(
            &b2nd::Region::new(start.clone(), rshape.clone()),
            &vec![0x11; row as usize * isz],
        )
        .unwrap();
        drop(m);
        let got = Array::open(&copy).unwrap().read_bytes().unwrap();
        assert_eq!(&got[..want.len()], want, "{name}: continued");
        assert!(
            got[want.len()..].iter().all(|&b| b == 0x11),
            "{name}: continued"
        );
        n += 1;
    }
    assert!(n >= 6);
}

/// python-blosc2's optional lock (`.b2lock` sidecar, `Storage(locking=True)`): a change waits
/// while another process (here: another handle) holds it, and goes on once it is released.
#[test]
fn waits_for_python_blosc2s_lock() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(8);
    let (path, _) = create(
        dir.path(),
        false,
        [&[10], &[4], &[2]],
        Codec::Lz4,
        &[Filter::Shuffle],
        &mut rng,
    );
    let sidecar = dir.path().join("a.b2nd.b2lock");
    let held = std::fs::File::create(&sidecar).unwrap();
    held.lock_shared().unwrap(); // a python-blosc2 reader with locking on
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.clone();
    let t = std::thread::spawn(move || {
        let mut a = ArrayMut::open(&p).unwrap();
        a.write_region(&b2nd::Region::new([0], [1]), &[5i32])
            .unwrap();
        tx.send(()).unwrap();
    });
    assert!(
        rx.recv_timeout(std::time::Duration::from_millis(300))
            .is_err(),
        "did not wait for the lock"
    );
    held.unlock().unwrap();
    rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
    t.join().unwrap();
    assert_eq!(Array::open(&path).unwrap().read::<i32>().unwrap()[0], 5);
}

/// Legacy `caterva` arrays, 0-d arrays and (feature `ndarray`) ndarray views change too.
#[test]
fn caterva_zero_dim_and_ndarray_views() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cat.b2nd");
    ArrayBuilder::for_type::<u16>(&[5, 3])
        .chunks(&[2, 2])
        .blocks(&[1, 2])
        .format(b2nd::Format::Caterva)
        .write(
            b2nd::Target::File(p.clone()),
            &(0..15u16).collect::<Vec<_>>(),
        )
        .unwrap();
    let mut a = ArrayMut::open(&p).unwrap();
    a.resize(&[6, 4]).unwrap();
    a.write_region_bytes(&b2nd::Region::new([5, 3], [1, 1]), &[9, 9])
        .unwrap();
    drop(a);
    let a = Array::open(&p).unwrap();
    assert_eq!(
        (a.format(), a.shape()),
        (b2nd::Format::Caterva, &[6u64, 4][..])
    );
    let v = a.read_bytes().unwrap();
    assert_eq!(&v[..6], &[0, 0, 1, 0, 2, 0]);
    assert_eq!(&v[46..], &[9, 9]);

    let p0 = dir.path().join("zero.b2nd");
    ArrayBuilder::for_type::<f64>(&[])
        .write(b2nd::Target::File(p0.clone()), &[1.5])
        .unwrap();
    let mut a = ArrayMut::open(&p0).unwrap();
    a.write_region(&b2nd::Region::new([], []), &[2.5f64])
        .unwrap();
    assert!(a.append(0, &[1.0f64]).is_err());
    a.resize(&[]).unwrap();
    drop(a);
    assert_eq!(Array::open(&p0).unwrap().read::<f64>().unwrap(), vec![2.5]);

    #[cfg(feature = "ndarray")]
    {
        let pn = dir.path().join("nd.b2nd");
        ArrayBuilder::for_type::<i32>(&[4, 4])
            .write(b2nd::Target::File(pn.clone()), &[0i32; 16])
            .unwrap();
        let view = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as i32);
        let mut a = ArrayMut::open(&pn).unwrap();
        a.write_ndarray(&[1, 1], &view.t().slice(ndarray::s![.., ..2]).t())
            .unwrap();
        drop(a);
        let v: Vec<i32> = Array::open(&pn).unwrap().read().unwrap();
        assert_eq!(&v[4..8], &[0, 0, 1, 2]);
        assert_eq!(&v[8..12], &[0, 10, 11, 12]);
    }
}

/// Every committed fixture, good or hostile, opened for changes and changed: an error or a
/// result that reads back, never a panic; a good array's contents survive an attribute edit.
#[test]
fn every_fixture_changes_or_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let mut changed = 0;
    let mut refused = 0;
    for e in std::fs::read_dir(common::data_dir()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".b2nd") || e.path().is_dir() {
            continue;
        }
        let copy = tmp.path().join(&name);
        std::fs::copy(e.path(), &copy).unwrap();
        let before = Array::open(&copy).and_then(|a| a.read_bytes());
        let readable = before.is_ok();
        let mut a = match ArrayMut::open(&copy) {
            Ok(a) => a,
            Err(_) => {
                refused += 1;
                continue;
            }
        };
        match a.set_attr("touched", &Value::Bool(true)) {
            Ok(()) => {
                drop(a);
                let after = Array::open(&copy).unwrap();
                assert_eq!(
                    after.attr("touched").unwrap(),
                    Some(Value::Bool(true)),
                    "{name}"
                );
                if let Ok(b) = &before {
                    assert_eq!(&after.read_bytes().unwrap(), b, "{name}: contents changed");
                }
                changed += 1;
            }
            Err(_) => refused += 1,
        }
        // A resize to the same shape and a one-row grow: an error or a readable result.
        if let Ok(mut a) = ArrayMut::open(&copy) {
            let mut shape = a.array().shape().to_vec();
            if let Some(s0) = shape.first_mut() {
                *s0 += 1;
                if a.resize(&shape).is_ok() && readable {
                    drop(a);
                    let grown = Array::open(&copy).unwrap().read_bytes().unwrap();
                    let old = before.as_ref().unwrap();
                    // The old rows come first (the first axis grew), zeros after.
                    assert_eq!(&grown[..old.len()], &old[..], "{name}: grown");
                    assert!(grown[old.len()..].iter().all(|&b| b == 0), "{name}: grown");
                }
            }
        }
    }
    eprintln!("{changed} fixtures changed, {refused} refused");
    assert!(changed > 100, "{changed}");
}

/// Lossy pipelines (ZFP here): a change that would re-encode decoded values is refused by
/// name and changes nothing; chunks made wholly of new data, and attribute edits, go through.
#[test]
fn lossy_arrays_refuse_re_encoding_old_values() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("z.b2nd");
    let data: Vec<f32> = (0..64 * 6).map(|i| (i as f32 * 0.37).sin()).collect();
    ArrayBuilder::for_type::<f32>(&[64, 6])
        .chunks(&[16, 6])
        .blocks(&[8, 6])
        .codec(Codec::ZfpRate(50))
        .filters(&[])
        .write(b2nd::Target::File(p.clone()), &data)
        .unwrap();
    let before = std::fs::read(&p).unwrap();
    let values = Array::open(&p).unwrap().read::<f32>().unwrap();
    let mut a = ArrayMut::open(&p).unwrap();
    let e = a
        .write_region(&b2nd::Region::new([3, 0], [2, 6]), &[1f32; 12])
        .unwrap_err();
    assert!(e.to_string().contains("lossy"), "{e}");
    let e = a.resize(&[60, 6]).unwrap_err(); // re-cuts the last chunk row
    assert!(e.to_string().contains("lossy"), "{e}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // Whole chunks of new data, growth along chunk boundaries, attributes: fine.
    a.write_region(&b2nd::Region::new([16, 0], [16, 6]), &[2f32; 96])
        .unwrap();
    a.append(0, &[3f32; 96]).unwrap();
    a.set_attr("k", &Value::Int(1)).unwrap();
    let got = a.array().read::<f32>().unwrap();
    assert_eq!(&got[..96], &values[..96]);
    assert_eq!(&got[192..384], &values[192..384]);
    assert_eq!(a.array().shape(), &[80, 6]);
}

/// A journal record at a file's end that the header matches in no way (left past the frame
/// by an interrupted change, then the header changed by a writer that does not know
/// records) is never applied: readers read the file as it is, a writer's open leaves it as
/// it is, and the next change goes on from the current header.
#[test]
#[cfg_attr(
    not(debug_assertions),
    ignore = "needs a debug build: the crash hook exists in debug builds only"
)]
fn a_record_the_header_does_not_match_is_never_applied() {
    if !cfg!(debug_assertions) {
        panic!("needs a debug build: the crash hook exists in debug builds only");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(4);
    let (a_path, ma) = create(
        dir.path(),
        false,
        [&[12, 3], &[4, 3], &[2, 3]],
        Codec::Zstd,
        &[Filter::Shuffle],
        &mut rng,
    );
    // A real record: a writer stopped right before its header write.
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "journal_child_entry", "--nocapture"])
        .env("B2ND_JOURNAL_CHILD", &a_path)
        .env("B2ND_TEST_CRASH_AT", "header")
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(87));
    let mut bytes = std::fs::read(&a_path).unwrap();
    assert!(bytes.ends_with(b"B2NDJEND"));
    // Another writer's header: the compression threads field (63..65, ignored by readers)
    // set to a value neither copy has.
    assert_eq!(bytes[62], 0xd1);
    bytes[63..65].copy_from_slice(&7i16.to_be_bytes());
    std::fs::write(&a_path, &bytes).unwrap();
    check(&a_path, &ma);
    drop(ArrayMut::open(&a_path).unwrap());
    assert_eq!(std::fs::read(&a_path).unwrap(), bytes);
    check(&a_path, &ma);
    // The next change starts from the current header and cuts the stale record off.
    let mut a = ArrayMut::open(&a_path).unwrap();
    a.write_region(&b2nd::Region::new([1, 1], [1, 1]), &[-5i32])
        .unwrap();
    drop(a);
    let mut m = ma.clone();
    m.data[4] = -5;
    check(&a_path, &m);
    assert!(!std::fs::read(&a_path).unwrap().ends_with(b"B2NDJEND"));
}

/// The stale-record test's child: one change, stopped by the crash hook.
#[test]
fn journal_child_entry() {
    if let Ok(p) = std::env::var("B2ND_JOURNAL_CHILD") {
        let mut a = ArrayMut::open(&p).unwrap();
        a.write_region(&b2nd::Region::new([0, 0], [1, 1]), &[42i32])
            .unwrap();
    }
}

#[test]
fn changes_keep_the_files_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // An array without chunks (its changes rewrite the file) and one with chunks, contiguous
    // and sparse (their index is rewritten): each keeps the mode it had.
    let empty = dir.path().join("empty.b2nd");
    ArrayBuilder::for_type::<u8>(&[0])
        .write::<u8>(b2nd::Target::File(empty.clone()), &[])
        .unwrap();
    let full = dir.path().join("full.b2nd");
    ArrayBuilder::for_type::<u8>(&[100])
        .write(b2nd::Target::File(full.clone()), &[1u8; 100])
        .unwrap();
    let sparse = dir.path().join("sparse.b2nd");
    ArrayBuilder::for_type::<u8>(&[100])
        .write(b2nd::Target::Sparse(sparse.clone()), &[1u8; 100])
        .unwrap();
    let index = sparse.join("chunks.b2frame");
    for (f, mode) in [(&empty, 0o640), (&full, 0o604), (&index, 0o644)] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(mode)).unwrap();
        let target = if f == &index { &sparse } else { f };
        b2nd::write::set_attrs(target, &[("unit", Value::Str("m".into()))]).unwrap();
        let mut a = ArrayMut::open(target).unwrap();
        a.resize(&[50]).unwrap();
        drop(a);
        let now = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
        assert_eq!(now, mode, "{}", f.display());
    }
}
