//! A small tmpfs for full-disk tests (needs root: the tests that mount one are
//! `#[ignore = "needs root: mounts a tmpfs"]`, run by `.ci/run`).

use std::path::Path;
use std::process::Command;

/// A tmpfs of `kib` KiB, unmounted on drop.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(kib: u32) -> Result<Tmpfs, String> {
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

    /// A tmpfs; panics, saying why, where none can be mounted (a test that runs must run
    /// what it names).
    pub fn mount_required(kib: u32) -> Tmpfs {
        Tmpfs::mount(kib).unwrap_or_else(|why| {
            panic!("needs root: cannot mount a tmpfs ({why}); run as root, as .ci/run does")
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a child process of a parallel test may still hold a file of it open.
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// The names in `dir`, sorted, without a [`Filler`]'s file.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != FILLER)
        .collect();
    v.sort();
    v
}

/// The name of a [`Filler`]'s file.
const FILLER: &str = "zz-filler";

/// A file filling a file system up to `free` bytes of free space (rounded by the file
/// system's pages); removed on drop.
pub struct Filler(std::path::PathBuf);

impl Filler {
    /// Fill the file system holding `dir` completely, then give back `free` bytes.
    pub fn leaving(dir: &Path, free: u64) -> Filler {
        use std::io::Write;
        let path = dir.join(FILLER);
        let mut f = std::fs::File::create(&path).unwrap();
        let block = vec![0x5au8; 64 << 10];
        let mut len = 0u64;
        loop {
            match f.write(&block) {
                Ok(0) | Err(_) => break,
                Ok(n) => len += n as u64,
            }
        }
        // Small writes for the last partial block.
        while let Ok(n) = f.write(&block[..512]) {
            if n == 0 {
                break;
            }
            len += n as u64;
        }
        f.set_len(len.saturating_sub(free)).unwrap();
        f.sync_all().unwrap();
        Filler(path)
    }
}

impl Drop for Filler {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
