//! A full disk loses nothing: writes of arrays, stores and tables into a small tmpfs fail
//! with an error, leave no partial file behind, and leave an existing target as it was.
//! Needs root to mount the tmpfs; elsewhere the test says it was skipped and why.

use std::path::PathBuf;

use b2nd::{ArrayBuilder, Codec, StoreBuilder, StoreKind, TableBuilder, Target};

mod common;
use common::noise;

use common::tmpfs::{names, Tmpfs};

#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn a_full_disk_loses_nothing() {
    let fs = Tmpfs::mount_required(512);
    let dir: PathBuf = fs.path().to_path_buf();
    let big = noise(4 << 20);
    let array = |n: usize| ArrayBuilder::for_type::<u8>(&[n as u64]).codec(Codec::Lz4);
    // An existing small array stays as it was when its replacement does not fit.
    let keep = dir.join("keep.b2nd");
    array(1000)
        .write(Target::File(keep.clone()), &big[..1000])
        .unwrap();
    let before = std::fs::read(&keep).unwrap();
    let e = array(big.len())
        .overwrite(true)
        .write(Target::File(keep.clone()), &big)
        .unwrap_err();
    eprintln!("array: {e}");
    assert_eq!(std::fs::read(&keep).unwrap(), before);
    assert!(b2nd::Array::open(&keep).unwrap().read::<u8>().unwrap() == big[..1000]);
    // A sparse array, a store and a table that do not fit: errors, nothing left behind.
    assert!(array(big.len())
        .write(Target::Sparse(dir.join("sparse")), &big)
        .is_err());
    let frame = array(big.len()).to_vec(&big).unwrap();
    for name in ["s.b2z", "s.b2d"] {
        let mut s = StoreBuilder::new(StoreKind::TreeStore);
        s.insert("/big", frame.clone()).unwrap();
        assert!(s.write(dir.join(name)).is_err(), "{name}");
    }
    let col: Vec<u64> = big
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let t = TableBuilder::new().column("x", &col).unwrap();
    assert!(t.write(dir.join("t.b2z")).is_err());
    assert_eq!(
        names(&dir),
        ["keep.b2nd"],
        "only the untouched file remains"
    );
}

/// In-place changes that do not fit: an error, the old contents intact (read back equal),
/// no journal and no temporary left, and the file's length back where it was.
#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn a_full_disk_keeps_arrays_changed_in_place() {
    let fs = Tmpfs::mount_required(512);
    let dir: PathBuf = fs.path().to_path_buf();
    let big = noise(2 << 20);
    for sparse in [false, true] {
        let path = dir.join(if sparse { "s.b2nd.d" } else { "c.b2nd" });
        let target = if sparse {
            Target::Sparse(path.clone())
        } else {
            Target::File(path.clone())
        };
        ArrayBuilder::for_type::<u8>(&[20_000])
            .chunks(&[4096])
            .codec(Codec::Lz4)
            .write(target, &big[..20_000])
            .unwrap();
        let names_before = names(&dir);
        let len_before = std::fs::metadata(&path).unwrap().len();
        let mut a = b2nd::ArrayMut::open(&path).unwrap();
        // 2 MiB of noise does not fit in what is left of 512 KiB.
        let e = a.append(0, &big).unwrap_err();
        eprintln!("in-place append (sparse {sparse}): {e}");
        let e = a.write_region(&b2nd::Region::new([0], [20_000]), &big[1..20_001]);
        let wrote = e.is_ok();
        drop(a);
        let got = b2nd::Array::open(&path).unwrap().read::<u8>().unwrap();
        if wrote {
            assert_eq!(got, big[1..20_001]);
        } else {
            assert_eq!(got, big[..20_000]);
        }
        if !sparse {
            assert!(!wrote || std::fs::metadata(&path).unwrap().len() >= len_before);
            if !wrote {
                assert_eq!(std::fs::metadata(&path).unwrap().len(), len_before);
            }
        }
        let after = names(&dir);
        assert_eq!(after, names_before, "nothing left behind (sparse {sparse})");
        // Still usable: a small change fits.
        let mut a = b2nd::ArrayMut::open(&path).unwrap();
        a.set_attr("ok", &b2nd::Value::Bool(true)).unwrap();
        drop(a);
        if sparse {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
}
