//! A full disk loses nothing: writes of arrays, stores and tables into a small tmpfs fail
//! with an error, leave no partial file behind, and leave an existing target as it was.
//! Needs root to mount the tmpfs; elsewhere the test says it was skipped and why.

use std::path::{Path, PathBuf};
use std::process::Command;

use b2nd::{ArrayBuilder, Codec, StoreBuilder, StoreKind, TableBuilder, Target};

mod common;
use common::noise;

/// A tmpfs of `kib` KiB, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(kib: u32) -> Result<Tmpfs, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
        }
        Ok(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_full_disk_loses_nothing() {
    let fs = match Tmpfs::mount(512) {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("skipped: cannot mount a tmpfs here ({why})");
            return;
        }
    };
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
