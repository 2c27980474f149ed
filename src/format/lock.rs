//! c-blosc2 3.2+'s cross-process lock, as python-blosc2 4.14.1 uses it (`Storage(locking=True)`
//! or the `BLOSC_LOCKING` environment variable): a sidecar file `<file>.b2lock` beside a
//! contiguous frame (`<dir>/.b2lock` inside a sparse one), `flock`ed shared by readers and
//! exclusively by writers, holding a little-endian `u64` generation counter at byte 8.
//!
//! Every exclusive acquisition advances the counter by one right after taking the lock
//! (c-blosc2's `frame_lock`), so a python-blosc2 change advances it once (0 -> 2 after two
//! changes); readers compare it with the value they last saw to notice changes, even those
//! that leave the frame's length as it was. A sidecar shorter than 16 bytes reads as 0.

#![forbid(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where the counter lives in the sidecar (c-blosc2's `FRAME_LOCK_SEQ_OFFSET`: past the byte
/// range Windows locks).
const SEQ_OFFSET: u64 = 8;

/// The sidecar of the frame at `path` (a sparse frame: the directory).
pub(crate) fn sidecar_path(path: &Path, sparse: bool) -> PathBuf {
    if sparse {
        path.join(".b2lock")
    } else {
        let mut name = path.as_os_str().to_os_string();
        name.push(".b2lock");
        PathBuf::from(name)
    }
}

/// Whether `BLOSC_LOCKING` asks every handle to lock, read as c-blosc2 reads it
/// (`frame_locking_requested`): set to anything but the empty string or `0`.
pub(crate) fn locking_requested() -> bool {
    std::env::var_os("BLOSC_LOCKING").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Take the writer's lock on `what` (for the array at `path`), waiting up to half a second:
/// a lock can be held briefly by a process another thread of this program is starting
/// (a forked child shares the open file until it executes its program).
pub(crate) fn writer_lock(path: &Path, what: &Path) -> Result<File> {
    let f = File::open(what).map_err(|source| Error::Io {
        path: what.to_path_buf(),
        source,
    })?;
    let mut wait = std::time::Duration::from_micros(200);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(500);
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(f),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    path: path.to_path_buf(),
                })
            }
            Err(std::fs::TryLockError::Error(source)) => {
                return Err(Error::Io {
                    path: what.to_path_buf(),
                    source,
                })
            }
        }
    }
}

/// The open sidecar of one frame.
#[derive(Debug)]
pub(crate) struct FrameLock {
    file: File,
    path: PathBuf,
}

/// A held lock; released on drop. `generation` is the counter after the acquisition (for an
/// exclusive lock: after advancing it).
#[derive(Debug)]
pub(crate) struct Held<'a> {
    lock: &'a FrameLock,
    pub(crate) generation: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.lock.file.unlock();
    }
}

impl FrameLock {
    /// The sidecar of the frame at `path`, when python-blosc2's lock applies to it: it exists,
    /// or `BLOSC_LOCKING` asks for locking (then it is created, as c-blosc2 does; `create`
    /// false makes a missing sidecar mean "no locking" even then, for readers that must not
    /// fail where they cannot write). `None`: nobody locks this frame.
    pub(crate) fn open(path: &Path, sparse: bool, create: bool) -> Result<Option<FrameLock>> {
        let lock_path = sidecar_path(path, sparse);
        let exists = std::fs::symlink_metadata(&lock_path).is_ok();
        if !(exists || (create && locking_requested())) {
            return Ok(None);
        }
        let io = |source| Error::Io {
            path: lock_path.clone(),
            source,
        };
        let opened = OpenOptions::new()
            .read(true)
            .write(true)
            .create(!exists)
            .truncate(false)
            .open(&lock_path);
        let file = match opened {
            Ok(f) => f,
            // A reader without write access still shares the lock (flock needs no write).
            Err(e) if !create && e.kind() == std::io::ErrorKind::PermissionDenied => {
                File::open(&lock_path).map_err(io)?
            }
            Err(e) => return Err(io(e)),
        };
        Ok(Some(FrameLock {
            file,
            path: lock_path,
        }))
    }

    /// Take the lock shared (waiting for a writer to finish) and read the counter.
    pub(crate) fn shared(&self) -> Result<Held<'_>> {
        self.file.lock_shared().map_err(|e| self.io(e))?;
        // Held from here: an error below unlocks on drop.
        let mut held = Held {
            lock: self,
            generation: 0,
        };
        held.generation = self.read_seq()?;
        Ok(held)
    }

    /// Take the lock exclusively (waiting for readers and writers to finish) and advance the
    /// counter, as every c-blosc2 writer does on acquisition.
    pub(crate) fn exclusive(&self) -> Result<Held<'_>> {
        self.file.lock().map_err(|e| self.io(e))?;
        let mut held = Held {
            lock: self,
            generation: 0,
        };
        held.generation = self.read_seq()?.wrapping_add(1);
        self.write_seq(held.generation)?;
        Ok(held)
    }

    /// The counter, read without taking the lock (what a caller holding it reads).
    pub(crate) fn read_seq(&self) -> Result<u64> {
        let mut b = [0u8; 8];
        let len = self.file.metadata().map_err(|e| self.io(e))?.len();
        if len < SEQ_OFFSET + 8 {
            return Ok(0);
        }
        crate::storage::read_at(&self.file, &mut b, SEQ_OFFSET).ok_or_else(|| {
            self.io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the generation counter could not be read",
            ))
        })?;
        Ok(u64::from_le_bytes(b))
    }

    fn write_seq(&self, seq: u64) -> Result<()> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file
                .write_all_at(&seq.to_le_bytes(), SEQ_OFFSET)
                .map_err(|e| self.io(e))
        }
        #[cfg(windows)]
        {
            use std::os::windows::fs::FileExt;
            let b = seq.to_le_bytes();
            let mut done = 0;
            while done < b.len() {
                done += self
                    .file
                    .seek_write(&b[done..], SEQ_OFFSET + done as u64)
                    .map_err(|e| self.io(e))?;
            }
            Ok(())
        }
        #[cfg(not(any(unix, windows)))]
        {
            let _ = seq;
            Err(self.io(std::io::Error::other("no positioned writes here")))
        }
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_acquisitions_advance_the_counter_shared_ones_read_it() {
        let dir = tempfile::tempdir().unwrap();
        let frame = dir.path().join("a.b2nd");
        std::fs::write(sidecar_path(&frame, false), b"").unwrap();
        let l = FrameLock::open(&frame, false, false).unwrap().unwrap();
        assert_eq!(
            l.shared().unwrap().generation,
            0,
            "a short sidecar reads as 0"
        );
        assert_eq!(l.exclusive().unwrap().generation, 1);
        assert_eq!(l.exclusive().unwrap().generation, 2);
        assert_eq!(l.shared().unwrap().generation, 2);
        let bytes = std::fs::read(sidecar_path(&frame, false)).unwrap();
        assert_eq!(
            bytes.len(),
            16,
            "c-blosc2's layout: 8 bytes, then the counter"
        );
        assert_eq!(&bytes[8..], &2u64.to_le_bytes());
        assert_eq!(&bytes[..8], &[0; 8]);
    }

    #[test]
    fn a_held_lock_excludes_other_descriptors_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let frame = dir.path().join("a.b2nd");
        std::fs::write(sidecar_path(&frame, false), b"").unwrap();
        let a = FrameLock::open(&frame, false, false).unwrap().unwrap();
        let b = FrameLock::open(&frame, false, false).unwrap().unwrap();
        let held = a.exclusive().unwrap();
        assert!(matches!(
            b.file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        let shared = a.shared().unwrap();
        assert!(b.file.try_lock_shared().is_ok(), "shared locks share");
        b.file.unlock().unwrap();
        drop(shared);
        assert!(b.file.try_lock().is_ok(), "dropping releases");
    }

    #[test]
    fn no_sidecar_means_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        let frame = dir.path().join("a.b2nd");
        if !locking_requested() {
            assert!(FrameLock::open(&frame, false, true).unwrap().is_none());
        }
        assert!(FrameLock::open(&frame, false, false).unwrap().is_none());
        assert_eq!(sidecar_path(dir.path(), true), dir.path().join(".b2lock"));
    }
}
