//! The CLI under faults: every writing command on a full disk (a small tmpfs; needs root,
//! skipped elsewhere), `kill -9` during conversions, and inputs it cannot read (no
//! permission, a FIFO, a device, a directory, a missing path). Each failure is exit code 1
//! with exactly one line on stderr (`b2nd: error: ...`), nothing left behind, and the old
//! target intact.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::noise;
use common::tmpfs::{names, Filler, Tmpfs};

fn b2nd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_b2nd"))
}

/// A `.npy` file of `n` little-endian u32 (noise: incompressible).
fn npy(path: &Path, n: usize) {
    let header = format!("{{'descr': '<u4', 'fortran_order': False, 'shape': ({n},), }}");
    let mut h = header.into_bytes();
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(b' ');
    }
    h.push(b'\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(&h);
    out.extend_from_slice(&noise(n * 4));
    std::fs::write(path, out).unwrap();
}

/// Run `cmd` with a time limit; it must fail with exit code 1 and one stderr line.
fn fails_with_one_line(cmd: &mut Command, what: &str) -> String {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{what}: still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.starts_with("b2nd: error: "), "{what}: {err}");
    err.trim_end().to_string()
}

fn snapshot(p: &Path) -> Option<Vec<u8>> {
    if p.is_dir() {
        let mut all = Vec::new();
        for n in names(p) {
            all.extend_from_slice(n.as_bytes());
            all.extend(snapshot(&p.join(n)).unwrap_or_default());
        }
        Some(all)
    } else {
        std::fs::read(p).ok()
    }
}

#[test]
#[ignore = "needs root: mounts a tmpfs"]
fn every_writing_command_on_a_full_disk() {
    let fs = Tmpfs::mount_required(1 << 10);
    let dir = fs.path();
    let src = tempfile::tempdir().unwrap();
    let big = src.path().join("big.npy");
    npy(&big, 150_000); // 600 KB of noise
    let small = src.path().join("small.npy");
    npy(&small, 5_000);
    // (what, the target, how to make the old target, the command)
    type Case = (&'static str, PathBuf, Option<Vec<String>>, Vec<String>);
    let s = |p: &Path| p.display().to_string();
    let t_file = dir.join("a.b2nd");
    let t_sparse = dir.join("a.b2nd.d");
    let t_npy = dir.join("out.npy");
    let cases: Vec<Case> = vec![
        (
            "from-npy, new file",
            t_file.clone(),
            None,
            vec!["from-npy".into(), s(&big), s(&t_file)],
        ),
        (
            "from-npy --force over a file",
            t_file.clone(),
            Some(vec!["from-npy".into(), s(&small), s(&t_file)]),
            vec!["from-npy".into(), "--force".into(), s(&big), s(&t_file)],
        ),
        (
            "from-npy --sparse --force over a sparse array",
            t_sparse.clone(),
            Some(vec![
                "from-npy".into(),
                "--sparse".into(),
                s(&small),
                s(&t_sparse),
            ]),
            vec![
                "from-npy".into(),
                "--sparse".into(),
                "--force".into(),
                s(&big),
                s(&t_sparse),
            ],
        ),
        (
            "append",
            t_file.clone(),
            Some(vec!["from-npy".into(), s(&small), s(&t_file)]),
            vec!["append".into(), s(&t_file), s(&big)],
        ),
        (
            "append, sparse",
            t_sparse.clone(),
            Some(vec![
                "from-npy".into(),
                "--sparse".into(),
                s(&small),
                s(&t_sparse),
            ]),
            vec!["append".into(), s(&t_sparse), s(&big)],
        ),
        (
            "resize",
            t_file.clone(),
            Some(vec!["from-npy".into(), s(&small), s(&t_file)]),
            vec!["resize".into(), s(&t_file), "4000000".into()],
        ),
        (
            "to-npy --force over a file",
            t_npy.clone(),
            Some(vec![
                "to-npy".into(),
                s(&src.path().join("small.b2nd")),
                s(&t_npy),
            ]),
            vec![
                "to-npy".into(),
                "--force".into(),
                s(&src.path().join("big.b2nd")),
                s(&t_npy),
            ],
        ),
    ];
    // Inputs for to-npy live off the tmpfs.
    for n in ["small", "big"] {
        let out = b2nd()
            .arg("from-npy")
            .arg(src.path().join(format!("{n}.npy")))
            .arg(src.path().join(format!("{n}.b2nd")))
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let mut report = Vec::new();
    for (what, target, make_old, cmd) in &cases {
        let (mut failed, mut wrote) = (0, 0);
        for free in [0u64, 8 << 10, 64 << 10, 200 << 10, 400 << 10] {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
            if let Some(m) = make_old {
                assert!(b2nd().args(m).output().unwrap().status.success(), "{what}");
            }
            let before = (names(dir), snapshot(target));
            let filler = Filler::leaving(dir, free);
            let out = b2nd().args(cmd).stderr(Stdio::piped()).output().unwrap();
            drop(filler);
            if out.status.success() {
                wrote += 1;
                continue;
            }
            failed += 1;
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what} (free {free}): {err}");
            assert_eq!(err.lines().count(), 1, "{what} (free {free}): {err}");
            assert!(err.starts_with("b2nd: error: "), "{what}: {err}");
            assert_eq!(
                (names(dir), snapshot(target)),
                before,
                "{what} (free {free})"
            );
            if failed == 1 {
                report.push(format!("{what}: {}", err.trim_end()));
            }
        }
        assert!(failed > 0, "{what}: never ran out of space");
        let _ = wrote;
    }
    eprintln!(
        "full disk, first error of each command:\n  {}",
        report.join("\n  ")
    );
}

#[test]
fn inputs_the_cli_cannot_read() {
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.npy");
    npy(&good, 100);
    let arr = d.path().join("a.b2nd");
    assert!(b2nd()
        .arg("from-npy")
        .arg(&good)
        .arg(&arr)
        .status()
        .unwrap()
        .success());
    let mut lines = Vec::new();
    // A FIFO, a device, a directory, a missing path, a path through a file.
    let fifo = d.path().join("pipe.b2nd");
    let made = Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo (coreutils) failed");
    std::fs::create_dir(d.path().join("dir.b2nd")).unwrap();
    let bad = vec![
        PathBuf::from("/dev/zero"),
        d.path().join("dir.b2nd"),
        d.path().join("missing.b2nd"),
        good.join("below.b2nd"),
        fifo,
    ];
    for p in &bad {
        for sub in [
            &["info"][..],
            &["ls"],
            &["to-npy"],
            &["resize"],
            &["append"],
        ] {
            let mut c = b2nd();
            c.args(sub).arg(p);
            match sub[0] {
                "to-npy" => c.arg(d.path().join("o.npy")),
                "resize" => c.arg("5"),
                "append" => c.arg(&good),
                _ => &mut c,
            };
            lines.push(fails_with_one_line(
                &mut c,
                &format!("{sub:?} {}", p.display()),
            ));
        }
    }
    assert!(!d.path().join("o.npy").exists());
    eprintln!("{}", lines.join("\n"));
}

/// A file its reader may not read (mode 000, read by an unprivileged user): one line
/// saying permission is denied.
#[test]
#[ignore = "needs root and setpriv"]
fn an_unreadable_file_is_one_line() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    assert!(root, "needs root: run as root, as .ci/run does");
    let d = tempfile::tempdir().unwrap();
    let good = d.path().join("good.npy");
    npy(&good, 100);
    let locked = d.path().join("locked.b2nd");
    assert!(b2nd()
        .arg("from-npy")
        .arg(&good)
        .arg(&locked)
        .status()
        .unwrap()
        .success());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_b2nd"))
        .arg("info")
        .arg(&locked);
    let line = fails_with_one_line(&mut c, "unreadable file");
    assert!(line.contains("ermission denied"), "{line}");
    eprintln!("{line}");
}

/// `kill -9` during `from-npy --force` and `to-npy --force`: the target is the old file or
/// the new one, whole; only hidden temporaries (`.b2nd-*`) may be left beside it.
#[test]
fn kill_9_during_conversions() {
    let d = tempfile::tempdir().unwrap();
    let (small, big) = (d.path().join("small.npy"), d.path().join("big.npy"));
    npy(&small, 1_000);
    npy(&big, 2_000_000);
    let (sb, bb) = (d.path().join("small.b2nd"), d.path().join("big.b2nd"));
    for (n, b) in [(&small, &sb), (&big, &bb)] {
        assert!(b2nd()
            .arg("from-npy")
            .arg(n)
            .arg(b)
            .status()
            .unwrap()
            .success());
    }
    let out = tempfile::tempdir().unwrap();
    // How long each conversion takes here, to spread the kills over it.
    let span = |verb: &str, src: &Path| {
        let t = out
            .path()
            .join(if verb == "to-npy" { "t.npy" } else { "t.b2nd" });
        let t0 = Instant::now();
        assert!(b2nd()
            .args([verb, "--force"])
            .arg(src)
            .arg(&t)
            .status()
            .unwrap()
            .success());
        std::fs::remove_file(&t).unwrap();
        (t0.elapsed().as_micros() as u64).max(1_000)
    };
    let mut spans = [span("from-npy", &big), span("to-npy", &bb)];
    let mut rng = common::xorshift(0x5eed_1234);
    let mut seen = [0usize; 2];
    let (mut killed, mut finished, mut inside) = (0, 0, 0);
    // 40 rounds, and more until enough kills landed inside a write: on a loaded machine the
    // first timing is long, and a conversion that finishes before its kill shortens the next
    // wait.
    let mut rounds = 0;
    while (inside < 12 || rounds < 40) && rounds < 200 {
        let round = rounds;
        rounds += 1;
        let to_npy = round % 2 == 1;
        let target = out.path().join(if to_npy { "t.npy" } else { "t.b2nd" });
        let (old_src, new_src) = if to_npy { (&sb, &bb) } else { (&small, &big) };
        let verb = if to_npy { "to-npy" } else { "from-npy" };
        for e in std::fs::read_dir(out.path()).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                std::fs::remove_dir_all(p).unwrap();
            } else {
                std::fs::remove_file(p).unwrap();
            }
        }
        assert!(b2nd()
            .arg(verb)
            .arg(old_src)
            .arg(&target)
            .status()
            .unwrap()
            .success());
        let old = std::fs::read(&target).unwrap();
        let mut child = b2nd()
            .arg(verb)
            .arg("--force")
            .arg(new_src)
            .arg(&target)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng() % spans[usize::from(to_npy)]));
        let _ = child.kill();
        let status = child.wait().unwrap();
        // The child either died by the kill or finished first (exit 0); anything else is a
        // conversion failing on its own, which would leave the old file and look like a pass.
        match status.signal() {
            Some(9) => killed += 1,
            None if status.success() => {
                finished += 1;
                let s = &mut spans[usize::from(to_npy)];
                *s = (*s * 3 / 4).max(1_000);
            }
            _ => panic!("{verb}: the conversion did not die by the kill: {status}"),
        }
        // A hidden temporary left beside the target: the kill landed inside the write.
        inside += usize::from(names(out.path()).iter().any(|n| n.starts_with(".b2nd-")));
        let now = std::fs::read(&target).unwrap();
        if now == old {
            seen[0] += 1;
        } else {
            // The new contents, whole: what an uninterrupted run writes.
            let check = out
                .path()
                .join(if to_npy { "check.npy" } else { "check.b2nd" });
            let _ = std::fs::remove_file(&check);
            assert!(b2nd()
                .arg(verb)
                .arg(new_src)
                .arg(&check)
                .status()
                .unwrap()
                .success());
            if to_npy {
                assert_eq!(now, std::fs::read(&check).unwrap(), "{verb}: partial");
            } else {
                let a = b2nd::Array::open(&target).expect("a whole array");
                let b = b2nd::Array::open(&check).unwrap();
                assert_eq!(
                    a.read_bytes().unwrap(),
                    b.read_bytes().unwrap(),
                    "{verb}: partial"
                );
            }
            seen[1] += 1;
            let _ = status;
        }
        let left: Vec<String> = names(out.path())
            .into_iter()
            .filter(|n| !n.starts_with(".b2nd-") && !n.starts_with("check."))
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }
    eprintln!(
        "kill -9 during conversions: {rounds} rounds, {} old, {} new; {killed} killed ({inside} \
         inside the write, a temporary left), {finished} finished first",
        seen[0], seen[1]
    );
    // A test that stopped killing writes would run all its rounds without 12 kills inside one.
    assert!(
        inside >= 12,
        "only {inside} of {rounds} kills landed inside a write"
    );
}

/// c-blosc2 2.15 reads BLOSC_* environment variables when it creates a context and lets
/// them override what b2nd asks for: a write under BLOSC_COMPRESSOR (or CLEVEL, SHUFFLE,
/// DELTA, TYPESIZE, BLOCKSIZE, SPLITMODE) is refused with one line instead of silently
/// writing other parameters; under BLOSC_NTHREADS, reads of DELTA chunks stay correct and
/// a DELTA chunk with a corrupt first block fails instead of hanging.
#[test]
fn blosc_environment_variables() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("in.npy");
    npy(&input, 10_000);
    for (var, value) in [
        ("BLOSC_COMPRESSOR", "lz4"),
        ("BLOSC_CLEVEL", "1"),
        ("BLOSC_SHUFFLE", "BITSHUFFLE"),
        ("BLOSC_DELTA", "1"),
        ("BLOSC_TYPESIZE", "2"),
        ("BLOSC_BLOCKSIZE", "4096"),
        ("BLOSC_SPLITMODE", "ALWAYS"),
    ] {
        let out = d.path().join("out.b2nd");
        let line = fails_with_one_line(
            b2nd().env(var, value).arg("from-npy").arg(&input).arg(&out),
            var,
        );
        assert!(line.contains("BLOSC_"), "{var}: {line}");
        assert!(!out.exists(), "{var}");
    }
    // Reads under BLOSC_NTHREADS: DELTA fixtures equal their raw data, chunk by chunk too.
    let data = common::data_dir();
    for name in [
        "delta_then_bitshuffle_i4",
        "filt_delta_i4",
        "filt_delta_shuffle_i4",
        "filt_shuffle_delta_i4",
        "cat_3d_i2",
    ] {
        let out = d.path().join(format!("{name}.npy"));
        let st = b2nd()
            .env("BLOSC_NTHREADS", "4")
            .args(["to-npy", "--threads", "1"])
            .arg(data.join(format!("{name}.b2nd")))
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "{name}");
        let npy_bytes = std::fs::read(&out).unwrap();
        let raw = std::fs::read(data.join(format!("{name}.raw"))).unwrap();
        assert!(npy_bytes.ends_with(&raw), "{name}: values differ");
    }
    let bad = data.join("fuzz/delta_block0_corrupt_hang.b2nd");
    for _ in 0..20 {
        fails_with_one_line(
            b2nd()
                .env("BLOSC_NTHREADS", "4")
                .args(["to-npy", "--threads", "1"])
                .arg(&bad)
                .arg(d.path().join("bad.npy")),
            "corrupt DELTA chunk under BLOSC_NTHREADS",
        );
    }
}
