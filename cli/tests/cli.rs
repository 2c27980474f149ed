//! The `b2nd` binary: output formats, exit codes, and no output left behind on errors.

#[path = "../../tests/common/mod.rs"]
mod common;

use std::process::Command;

use common::http::HttpServer;
use common::slice_fixtures as sf;
use common::*;
use serde_json::Value as J;

fn b2nd() -> Command {
    Command::new(env!("CARGO_BIN_EXE_b2nd"))
}

#[test]
fn info_json_has_the_documented_fields() {
    for f in good_contiguous().iter().take(30) {
        let p = data_dir().join(f["path"].as_str().unwrap());
        let out = run_ok(b2nd().arg("info").arg(&p).arg("--json"));
        let j: J = serde_json::from_slice(&out.stdout).unwrap();
        for k in [
            "format",
            "metalayer_version",
            "shape",
            "chunks",
            "blocks",
            "dtype",
            "typesize",
            "nchunks",
            "nbytes",
            "cbytes",
            "codec",
            "clevel",
            "filters",
            "storage",
            "attrs",
        ] {
            assert!(j.get(k).is_some(), "{}: missing {k}", f["name"]);
        }
        assert_eq!(j["dtype"], f["dtype"]);
        assert_eq!(j["shape"], f["shape"]);
        assert_eq!(j["codec"], f["codec"]);
        assert_eq!(j["filters"], f["filters"]);
        let items: u64 = j["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .product();
        assert_eq!(
            j["nbytes"].as_u64().unwrap(),
            items * j["typesize"].as_u64().unwrap()
        );
        // Human output mentions the dtype too.
        let out = b2nd().arg("info").arg(&p).output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains(f["dtype"].as_str().unwrap()));
    }
}

#[test]
fn to_npy_writes_header_and_data() {
    let dir = tempfile::tempdir().unwrap();
    for f in good_contiguous().iter().take(40) {
        let p = data_dir().join(f["path"].as_str().unwrap());
        let out = dir.path().join("o.npy");
        run_ok(b2nd().args(["to-npy", "--force"]).arg(&p).arg(&out));
        let (_, payload) = npy_parts(&std::fs::read(&out).unwrap());
        let want = std::fs::read(data_dir().join(f["expected"].as_str().unwrap())).unwrap();
        assert!(payload == want, "{}: data differs", f["name"]);
    }
}

fn assert_clean(dir: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left behind: {left:?}");
}

#[test]
fn errors_exit_1_with_one_line_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.b2nd");
    std::fs::write(&bad, b"this is not a frame at all, not even close......").unwrap();
    let out = out_dir.path().join("o.npy");
    let r = run_fail(b2nd().args(["to-npy", "--force"]).arg(&bad).arg(&out), 1);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("bad.b2nd"), "{err}");
    assert_clean(out_dir.path());
    // Refused fixtures and unsupported ones fail the same way.
    for f in fixtures() {
        let refused =
            f["ok"] == false || f.get("supported").and_then(|s| s.as_bool()) == Some(false);
        if !refused {
            continue;
        }
        let p = data_dir().join(f["path"].as_str().unwrap());
        let r = b2nd()
            .args(["to-npy", "--force"])
            .arg(&p)
            .arg(&out)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(1), "{}", f["name"]);
        assert_eq!(
            String::from_utf8_lossy(&r.stderr)
                .trim_end()
                .lines()
                .count(),
            1
        );
        assert_clean(out_dir.path());
    }
    // Truncated real file.
    let good = &good_contiguous()[0];
    let bytes = std::fs::read(data_dir().join(good["path"].as_str().unwrap())).unwrap();
    std::fs::write(&bad, &bytes[..bytes.len() - 7]).unwrap();
    run_fail(b2nd().args(["to-npy", "--force"]).arg(&bad).arg(&out), 1);
    assert_clean(out_dir.path());
    // Usage errors exit 2.
    run_fail(b2nd().args(["to-npy", "--force"]), 2);
    run_fail(b2nd().arg("frobnicate"), 2);
}

#[test]
fn from_npy_round_trips_and_refuses_bad_options() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for f in good_contiguous()
        .iter()
        .filter(|f| f["format"] == "b2nd")
        .take(60)
    {
        let p = data_dir().join(f["path"].as_str().unwrap());
        let npy = dir.path().join("a.npy");
        let out = dir.path().join("a.b2nd");
        assert!(b2nd()
            .args(["to-npy", "--force"])
            .arg(&p)
            .arg(&npy)
            .status()
            .unwrap()
            .success());
        run_ok(b2nd().arg("from-npy").arg(&npy).arg(&out).arg("--force"));
        let a = b2nd::Array::open(&out).unwrap();
        let want = std::fs::read(data_dir().join(f["expected"].as_str().unwrap())).unwrap();
        assert_eq!(a.read_bytes().unwrap(), want, "{}", f["name"]);
        n += 1;
    }
    assert!(n >= 40);
    // Options land in the file.
    let npy = dir.path().join("a.npy");
    let src = data_dir().join("ref_7x5_i4.b2nd");
    assert!(b2nd()
        .args(["to-npy", "--force"])
        .arg(&src)
        .arg(&npy)
        .status()
        .unwrap()
        .success());
    let out = dir.path().join("o.b2nd");
    run_ok(b2nd().args(["from-npy"]).arg(&npy).arg(&out).args([
        "--chunks",
        "4,5",
        "--blocks",
        "3,2",
        "--codec",
        "lz4",
        "--clevel",
        "7",
        "--filters",
        "delta,shuffle",
    ]));
    let a = b2nd::Array::open(&out).unwrap();
    assert_eq!((a.chunks(), a.blocks()), (&[4u64, 5][..], &[3u64, 2][..]));
    assert_eq!(
        (a.codec_name(), a.clevel(), a.filter_names()),
        (
            "lz4".to_string(),
            7,
            vec!["delta".to_string(), "shuffle".to_string()]
        )
    );
    let s = dir.path().join("s.b2nd");
    run_ok(b2nd().arg("from-npy").arg(&npy).arg(&s).args([
        "--sparse",
        "--meta",
        "caterva",
        "--filters",
        "none",
    ]));
    let a = b2nd::Array::open(&s).unwrap();
    assert_eq!(
        (a.storage().name(), a.format().name()),
        ("sparse", "caterva")
    );
    assert!(a.filter_names().is_empty());
    // Bad options: exit 1, one line, nothing written.
    let bad = dir.path().join("bad.b2nd");
    for args in [
        vec!["--chunks", "4"],
        vec!["--chunks", "0,5"],
        vec!["--chunks", "4,-5"],
        vec!["--chunks", "4,5", "--blocks", "5,5"],
        vec!["--codec", "snappy"],
        vec!["--codec", "zlib", "--filters", "delta"],
        vec!["--filters", "ndcell"],
        vec!["--filters", "delta,bytedelta"],
        vec!["--meta", "zarr"],
    ] {
        let r = b2nd()
            .arg("from-npy")
            .arg(&npy)
            .arg(&bad)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&r.stderr)
                .trim_end()
                .lines()
                .count(),
            1,
            "{args:?}"
        );
        assert!(!bad.exists(), "{args:?} left output");
    }
    // A clevel out of range is a usage error (exit 2), nothing written.
    run_fail(
        b2nd()
            .arg("from-npy")
            .arg(&npy)
            .arg(&bad)
            .args(["--clevel", "12"]),
        2,
    );
    assert!(!bad.exists());
    // A file that is not .npy is named as such.
    let r = run_fail(b2nd().arg("from-npy").arg(&src).arg(&bad), 1);
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("not a .npy file"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    // An existing OUT is refused unless --force, by both conversions; both create files
    // the same way (0666 less the umask).
    let r = run_fail(b2nd().arg("from-npy").arg(&npy).arg(&out), 1);
    assert!(String::from_utf8_lossy(&r.stderr).contains("--force"));
    let r = run_fail(b2nd().arg("to-npy").arg(&out).arg(&npy), 1);
    assert!(String::from_utf8_lossy(&r.stderr).contains("--force"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let fresh = dir.path().join("fresh.npy");
        assert!(b2nd()
            .arg("to-npy")
            .arg(&out)
            .arg(&fresh)
            .status()
            .unwrap()
            .success());
        assert_eq!(mode(&fresh), mode(&out), "to-npy and from-npy file modes");
    }
    // A truncated .npy is refused and leaves nothing.
    let bytes = std::fs::read(&npy).unwrap();
    std::fs::write(&npy, &bytes[..bytes.len() - 3]).unwrap();
    run_fail(b2nd().arg("from-npy").arg(&npy).arg(&bad), 1);
    assert!(!bad.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[cfg(unix)]
#[test]
fn to_npy_to_a_device_writes_through_it() {
    // /dev/null must stay a device: never replaced by a renamed temporary file.
    let p = data_dir().join("ref_7x5_i4.b2nd");
    run_ok(b2nd().args(["to-npy", "--force"]).arg(&p).arg("/dev/null"));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

// ---- slices on the command line (the slice fixtures) ----

/// Split a .npy file into (header dict text, payload).
fn npy_parts(bytes: &[u8]) -> (String, Vec<u8>) {
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let hlen = if bytes[6] == 1 {
        10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize
    } else {
        12 + u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
    };
    assert_eq!(hlen % 64, 0);
    (
        String::from_utf8_lossy(&bytes[..hlen]).into_owned(),
        bytes[hlen..].to_vec(),
    )
}

fn shape_repr(shape: &[u64]) -> String {
    match shape.len() {
        0 => "()".into(),
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[test]
fn cli_to_npy_slice_to_file_and_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for f in sf::fixtures() {
        for c in f.cases.iter().filter(|c| c.get("hex").is_some()).step_by(7) {
            let spec = c["spec"].as_str().unwrap();
            let want = sf::unhex(c["hex"].as_str().unwrap());
            let shape = sf::u64s(&c["shape"]);
            let out = dir.path().join("o.npy");
            let r = b2nd()
                .args(["to-npy", "--force"])
                .arg(&f.path)
                .arg(&out)
                .arg("--slice")
                .arg(spec)
                .output()
                .unwrap();
            let what = format!("{} [{spec}]", f.name);
            assert!(
                r.status.success(),
                "{what}: {}",
                String::from_utf8_lossy(&r.stderr)
            );
            let (header, data) = npy_parts(&std::fs::read(&out).unwrap());
            assert!(data == want, "{what}: data differs");
            assert!(
                header.contains(&format!("'shape': {}", shape_repr(&shape))),
                "{what}: {header}"
            );
            // The same to standard output.
            let r = b2nd()
                .args(["to-npy", "--force"])
                .arg(&f.path)
                .arg("-")
                .arg(format!("--slice={spec}"))
                .arg("--threads")
                .arg("2")
                .output()
                .unwrap();
            assert!(r.status.success(), "{what}");
            assert_eq!(
                npy_parts(&r.stdout),
                (header, want),
                "{what}: stdout differs"
            );
            n += 1;
        }
    }
    assert!(n >= 30);
    // Without --slice: the whole array, to stdout too.
    for f in sf::fixtures() {
        let r = b2nd()
            .args(["to-npy", "--force"])
            .arg(&f.path)
            .arg("-")
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", f.name);
        let (header, data) = npy_parts(&r.stdout);
        assert!(data == f.raw, "{}", f.name);
        assert!(header.contains(&format!("'shape': {}", shape_repr(&f.shape))));
    }
    // A negative index right after --slice is a value, not an option.
    let f = &sf::fixtures()[0];
    let r = b2nd()
        .args(["to-npy", "--force"])
        .arg(&f.path)
        .arg("-")
        .arg("--slice")
        .arg("-1")
        .output()
        .unwrap();
    assert!(r.status.success());
    let (header, data) = npy_parts(&r.stdout);
    assert!(header.contains("'shape': ()"));
    assert_eq!(data, f.raw[f.raw.len() - 4..]);
}

#[test]
fn cli_bad_slices_exit_1_with_one_line_and_no_output() {
    let out_dir = tempfile::tempdir().unwrap();
    let f = sf::fixture_dir().join("d3_be_i2.b2nd");
    let out = out_dir.path().join("o.npy");
    for (spec, says) in [
        ("::0", "step"),
        ("1:5:0", "step"),
        ("::-1", "negative"),
        ("5:1:-1", "negative"),
        ("abc", "item 1"),
        ("1,,2", "item 2"),
        ("1:2:3:4", "item 1"),
        ("9", "out of bounds"),
        ("0,-12", "out of bounds"),
        (":,:,:,:", "too many"),
    ] {
        for target in [out.as_os_str(), "-".as_ref()] {
            let r = b2nd()
                .args(["to-npy", "--force"])
                .arg(&f)
                .arg(target)
                .arg("--slice")
                .arg(spec)
                .output()
                .unwrap();
            assert_eq!(r.status.code(), Some(1), "{spec}");
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(err.trim_end().lines().count(), 1, "{spec}: {err}");
            assert!(err.contains(says), "{spec}: {err}");
            assert!(r.stdout.is_empty(), "{spec}: wrote to stdout");
            let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().collect();
            assert!(left.is_empty(), "{spec}: files left behind");
        }
    }
    // A usage error (missing value) exits 2.
    run_fail(
        b2nd()
            .args(["to-npy", "--force"])
            .arg(&f)
            .arg(&out)
            .arg("--slice"),
        2,
    );
}

#[cfg(unix)]
#[test]
fn cli_writes_into_a_fifo_in_place() {
    // A target that is not a regular file (a FIFO here, /dev/null in practice) is written
    // in place: renaming a temporary file over it would replace it.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.npy");
    let ok = Command::new("mkfifo").arg(&fifo).status();
    assert!(ok.is_ok_and(|s| s.success()), "mkfifo (coreutils) failed");
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let f = sf::fixture_dir().join("d1_i4.b2nd");
    run_ok(
        b2nd()
            .args(["to-npy", "--force"])
            .arg(&f)
            .arg(&fifo)
            .arg("--slice")
            .arg("10:14"),
    );
    let (header, data) = npy_parts(&reader.join().unwrap());
    assert!(header.contains("'shape': (4,)"));
    let raw = std::fs::read(f.with_extension("raw")).unwrap();
    assert_eq!(data, raw[40..56]);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_closed_pipe_ends_to_npy_quietly() {
    // `b2nd to-npy FILE - | head -c 100`: the reader leaves early; that is no error.
    use std::io::Read;
    use std::process::Stdio;
    let f = data_dir().join("slices/zfp_rate_f8_3d.b2nd"); // 155 KB decoded: over a pipe buffer
    let mut child = b2nd()
        .arg("to-npy")
        .arg(&f)
        .arg("-")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 100];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap(); // then dropped: closed
    let out = child.wait_with_output().unwrap();
    assert_eq!(&head[..6], b"\x93NUMPY");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Run `cmd`, which must exit with `code`; its output.
fn run_fail(cmd: &mut Command, code: i32) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Run `cmd`, which must succeed; its output.
fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stores() -> std::path::PathBuf {
    data_dir().join("stores")
}

#[test]
fn ls_json_lists_what_python_lists() {
    for name in [
        "dict_ext.b2z",
        "dict_ext.b2d",
        "tree_ext.b2z",
        "tree_emb.b2z",
        "tree_ext.b2d",
        "tree_objects.b2z",
        "embed.b2e",
    ] {
        let want: J = serde_json::from_str(
            &std::fs::read_to_string(stores().join(format!("{name}.json"))).unwrap(),
        )
        .unwrap();
        let out = run_ok(b2nd().args(["ls", "--json"]).arg(stores().join(name)));
        let j: J = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(j["kind"], want["kind"], "{name}");
        let members = j["members"].as_array().unwrap();
        let keys: Vec<&J> = members.iter().map(|m| &m["key"]).collect();
        assert_eq!(
            keys,
            want["keys"].as_array().unwrap().iter().collect::<Vec<_>>(),
            "{name}"
        );
        for m in members {
            let w = &want["members"][m["key"].as_str().unwrap()];
            assert_eq!(m["kind"], w["kind"], "{name} {}", m["key"]);
            if m["kind"] == "ndarray" {
                assert_eq!(m["shape"], w["shape"], "{name} {}", m["key"]);
                assert_eq!(m["dtype"], w["dtype"], "{name} {}", m["key"]);
            } else {
                assert!(m.get("shape").is_none());
            }
        }
        // The text listing names every key.
        let out = b2nd().arg("ls").arg(stores().join(name)).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for k in want["keys"].as_array().unwrap() {
            assert!(text.contains(k.as_str().unwrap()), "{name}: {text}");
        }
    }
}

#[test]
fn info_and_to_npy_take_a_store_key() {
    let store = stores().join("dict_ext.b2z");
    // Without --key, info says what the store is and points to ls.
    let out = b2nd().arg("info").arg(&store).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("dictstore") && text.contains("b2nd ls"),
        "{text}"
    );
    let out = b2nd()
        .args(["info", "--json"])
        .arg(&store)
        .output()
        .unwrap();
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["kind"].as_str(), j["n_keys"].as_u64()),
        (Some("dictstore"), Some(6))
    );
    // With --key, the member.
    let out = b2nd()
        .args(["info", "--json", "--key", "/dir1/big"])
        .arg(&store)
        .output()
        .unwrap();
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["shape"], serde_json::json!([40, 50]));
    let out = b2nd()
        .args(["info", "--json", "--key", "/dir1/sc"])
        .arg(&store)
        .output()
        .unwrap();
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["kind"].as_str(), j["nbytes"].as_u64()),
        (Some("schunk"), Some(768))
    );
    assert_eq!(j["attrs"]["note"], "raw");
    // to-npy of a member (the embedded one python-blosc2 cannot read back), and a slice.
    let tmp = tempfile::tempdir().unwrap();
    let npy = tmp.path().join("w.npy");
    run_ok(
        b2nd()
            .args(["to-npy", "--key", "/wide"])
            .arg(&store)
            .arg(&npy),
    );
    let bytes = std::fs::read(&npy).unwrap();
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(stores().join("dict_ext.b2z.json")).unwrap())
            .unwrap();
    let hex: String = bytes[bytes.len() - 800..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hex, want["members"]["/wide"]["hex"]);
    let out = b2nd()
        .args([
            "to-npy",
            "--force",
            "--key",
            "/dir1/big",
            "--slice",
            "1:3,4",
        ])
        .arg(&store)
        .arg(&npy)
        .output()
        .unwrap();
    assert!(out.status.success());
    let bytes = std::fs::read(&npy).unwrap();
    let tail: Vec<f64> = bytes[bytes.len() - 16..]
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(tail, [54.0, 104.0]);
    // A missing key or a hostile store: exit 1, one line, nothing written.
    let gone = tmp.path().join("gone.npy");
    for (store, key) in [
        (stores().join("dict_ext.b2z"), "/nope"),
        (stores().join("bad/escaping.b2z"), "/small"),
    ] {
        let out = run_fail(
            b2nd().args(["to-npy", "--key", key]).arg(&store).arg(&gone),
            1,
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
        assert!(!gone.exists());
    }
}

#[test]
fn tables_list_and_convert_columns() {
    let tables = data_dir().join("tables");
    let want: J =
        serde_json::from_str(&std::fs::read_to_string(tables.join("basic.b2z.json")).unwrap())
            .unwrap();
    let out = run_ok(b2nd().args(["ls", "--json"]).arg(tables.join("basic.b2z")));
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["kind"], "ctable");
    assert_eq!(j["n_rows"], want["n_rows"]);
    let cols = j["columns"].as_array().unwrap();
    assert_eq!(cols.len(), want["columns"].as_array().unwrap().len());
    for c in cols {
        let name = c["name"].as_str().unwrap();
        let w = &want["values"][name];
        match (c.get("dtype"), c.get("kind")) {
            (Some(d), None) => assert_eq!(d, &w["dtype"], "{name}"),
            (None, Some(k)) => {
                assert!(["utf8", "dictionary", "list"].contains(&k.as_str().unwrap()))
            }
            _ => panic!("{name}: {c}"),
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let npy = tmp.path().join("c.npy");
    for name in ["id", "score", "name", "sent", "vec", "when"] {
        run_ok(
            b2nd()
                .args(["to-npy", "--force", "--column", name])
                .arg(tables.join("basic.b2d"))
                .arg(&npy),
        );
        let bytes = std::fs::read(&npy).unwrap();
        let hex = want["values"][name]["hex"].as_str().unwrap();
        let data: String = bytes[bytes.len() - hex.len() / 2..]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(data, hex, "{name}");
    }
    // A column kind this version does not decode: exit 1, named, nothing written.
    let gone = tmp.path().join("gone.npy");
    let out = run_fail(
        b2nd()
            .args(["to-npy", "--column", "tag"])
            .arg(tables.join("basic.b2z"))
            .arg(&gone),
        1,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("dictionary"));
    assert!(!gone.exists());
}

#[test]
fn append_and_resize_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let src = data_dir().join("ref_7x5_i4.b2nd");
    let arr = dir.path().join("a.b2nd");
    std::fs::copy(&src, &arr).unwrap();
    let before: Vec<i32> = b2nd::Array::open(&arr).unwrap().read().unwrap();
    // The array itself as .npy: 7 more rows along axis 0.
    let npy = dir.path().join("a.npy");
    run_ok(b2nd().arg("to-npy").arg(&arr).arg(&npy));
    run_ok(b2nd().arg("append").arg(&arr).arg(&npy));
    let a = b2nd::Array::open(&arr).unwrap();
    assert_eq!(a.shape(), &[14, 5]);
    let v: Vec<i32> = a.read().unwrap();
    assert_eq!(&v[..35], &before[..]);
    assert_eq!(&v[35..], &before[..]);
    // Along axis 1 the shape must match in the other dimensions.
    let out = run_fail(
        b2nd()
            .arg("append")
            .arg(&arr)
            .arg(&npy)
            .args(["--axis", "1"]),
        1,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not extend"));
    run_ok(b2nd().arg("resize").arg(&arr).arg("3,6"));
    let a = b2nd::Array::open(&arr).unwrap();
    assert_eq!(a.shape(), &[3, 6]);
    let v: Vec<i32> = a.read().unwrap();
    for r in 0..3 {
        assert_eq!(&v[r * 6..r * 6 + 5], &before[r * 5..r * 5 + 5]);
        assert_eq!(v[r * 6 + 5], 0);
    }
    let out = run_fail(b2nd().arg("resize").arg(&arr).arg("3"), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("dimensions"));
    let out = run_fail(b2nd().arg("resize").arg(&arr).arg("3,x"), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a size"));
    // A dtype mismatch is refused before anything changes.
    let f8 = dir.path().join("f.npy");
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let mut h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 6), }".to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(&[0u8; 48]);
    std::fs::write(&f8, bytes).unwrap();
    let out = run_fail(b2nd().arg("append").arg(&arr).arg(&f8), 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("dtype"));
    assert_eq!(b2nd::Array::open(&arr).unwrap().shape(), &[3, 6]);
}

#[test]
fn compact_drops_a_tables_deleted_rows_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let tables = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/tables");
    let t = dir.path().join("mutable.b2d");
    copy_tree(&tables.join("mutable.b2d"), &t);
    let before = b2nd::Table::open(&t).unwrap();
    let ids: Vec<Option<i64>> = before.read_column_opt("id").unwrap();
    assert_eq!((before.n_rows(), before.physical_rows()), (7, 8));
    let out = run_ok(b2nd().arg("compact").arg(&t));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let after = b2nd::Table::open(&t).unwrap();
    assert_eq!(after.read_column_opt::<i64>("id").unwrap(), ids);
    assert_eq!((after.n_rows(), after.physical_rows()), (7, 7));
    // No gap left: nothing to drop, nothing changed.
    let files = snapshot(&t);
    let out = run_ok(b2nd().arg("compact").arg(&t));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\n");
    assert!(snapshot(&t) == files);
    // Not a table: one line, exit 1.
    let out = run_fail(b2nd().arg("compact").arg(dir.path().join("none.b2d")), 1);
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// A `.npy` file of `descr` and `shape` holding `data`.
fn npy(path: &std::path::Path, descr: &str, shape: &str, data: &[u8]) {
    npy_in_order(path, descr, shape, "False", data)
}

/// A `.npy` file of `descr` and `shape` holding `data`, in Fortran order when `fortran` is
/// `"True"`.
fn npy_in_order(path: &std::path::Path, descr: &str, shape: &str, fortran: &str, data: &[u8]) {
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn write_puts_a_npy_array_into_a_slice_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let arr = dir.path().join("a.b2nd");
    std::fs::copy(data_dir().join("ref_7x5_i4.b2nd"), &arr).unwrap();
    let before: Vec<i32> = b2nd::Array::open(&arr).unwrap().read().unwrap();
    let le = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();

    // A 2x3 block at rows 1-2, columns 2-4.
    let block = dir.path().join("block.npy");
    npy(&block, "<i4", "(2, 3)", &le(&[-1, -2, -3, -4, -5, -6]));
    run_ok(
        b2nd()
            .arg("write")
            .arg(&arr)
            .arg(&block)
            .args(["--slice", "1:3,2:"]),
    );
    let mut want = before.clone();
    for (k, (r, c)) in [(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4)]
        .iter()
        .enumerate()
    {
        want[r * 5 + c] = -(k as i32) - 1;
    }
    assert_eq!(
        b2nd::Array::open(&arr).unwrap().read::<i32>().unwrap(),
        want
    );

    // An integer index drops its dimension: a row of 5 into the last row.
    let row = dir.path().join("row.npy");
    npy(&row, "<i4", "(5,)", &le(&[9; 5]));
    run_ok(
        b2nd()
            .arg("write")
            .arg(&arr)
            .arg(&row)
            .args(["--slice", "-1"]),
    );
    want[30..].copy_from_slice(&[9; 5]);
    // A 0-d array into one item.
    let one = dir.path().join("one.npy");
    npy(&one, "<i4", "()", &le(&[77]));
    run_ok(
        b2nd()
            .arg("write")
            .arg(&arr)
            .arg(&one)
            .args(["--slice", "0,0"]),
    );
    want[0] = 77;
    assert_eq!(
        b2nd::Array::open(&arr).unwrap().read::<i32>().unwrap(),
        want
    );
    let bytes = std::fs::read(&arr).unwrap();

    // Refusals: one line, exit 1, the array untouched.
    let f8 = dir.path().join("f8.npy");
    npy(&f8, "<f8", "(5,)", &[0u8; 40]);
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec![f8.clone().into(), "--slice".into(), "0".into()],
            "dtype",
        ),
        (
            vec![row.clone().into(), "--slice".into(), "0:2".into()],
            "shape",
        ),
        (
            vec![row.clone().into(), "--slice".into(), "7".into()],
            "out of bounds",
        ),
        (
            vec![row.clone().into(), "--slice".into(), "0,::2".into()],
            "step",
        ),
        (
            vec![row.clone().into(), "--slice".into(), "0,0,0".into()],
            "too many",
        ),
        (
            vec![row.clone().into(), "--slice".into(), "x".into()],
            "--slice",
        ),
        (
            vec![
                dir.path().join("missing.npy").into(),
                "--slice".into(),
                "0".into(),
            ],
            "missing.npy",
        ),
    ];
    for (args, says) in cases {
        let out = run_fail(b2nd().arg("write").arg(&arr).args(&args), 1);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(
            std::fs::read(&arr).unwrap(),
            bytes,
            "{args:?} changed the array"
        );
    }
    // Usage errors exit 2.
    run_fail(b2nd().arg("write").arg(&arr).arg(&row), 2);
    assert_eq!(std::fs::read(&arr).unwrap(), bytes);
}

#[test]
fn fortran_order_inputs_are_read_in_c_order() {
    let dir = tempfile::tempdir().unwrap();
    let le = |v: &[i32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    // The 2x3 array [[0, 1, 2], [3, 4, 5]] stored column by column.
    let f = dir.path().join("f.npy");
    npy_in_order(&f, "<i4", "(2, 3)", "True", &le(&[0, 3, 1, 4, 2, 5]));
    let arr = dir.path().join("f.b2nd");
    run_ok(b2nd().arg("from-npy").arg(&f).arg(&arr));
    let a = b2nd::Array::open(&arr).unwrap();
    assert_eq!(a.shape(), &[2, 3]);
    assert_eq!(a.read::<i32>().unwrap(), vec![0, 1, 2, 3, 4, 5]);
    // Written into a slice: [[-1, -2], [-3, -4]] at columns 1-2, stored column by column.
    let block = dir.path().join("block.npy");
    npy_in_order(&block, "<i4", "(2, 2)", "True", &le(&[-1, -3, -2, -4]));
    run_ok(
        b2nd()
            .arg("write")
            .arg(&arr)
            .arg(&block)
            .arg("--slice")
            .arg(":,1:3"),
    );
    let a = b2nd::Array::open(&arr).unwrap();
    assert_eq!(a.read::<i32>().unwrap(), vec![0, -1, -2, 3, -3, -4]);
}

#[test]
fn info_and_to_npy_read_urls() {
    urls_read(&common::http::FileServer::start(&data_dir()));
}

#[test]
#[ignore = "needs nginx"]
fn info_and_to_npy_read_urls_from_nginx() {
    urls_read(&common::http::Nginx::start(&data_dir()));
}

fn urls_read(server: &dyn common::http::HttpServer) {
    let root = data_dir();
    let dir = tempfile::tempdir().unwrap();
    let rel = "ref_7x5_i4.b2nd";
    let url = server.url(rel);
    let out = run_ok(b2nd().args(["info", "--json"]).arg(&url));
    let remote: J = serde_json::from_slice(&out.stdout).unwrap();
    let out = run_ok(b2nd().args(["info", "--json"]).arg(root.join(rel)));
    let local: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(remote["shape"], local["shape"]);
    assert_eq!(remote["dtype"], local["dtype"]);
    let (a, b) = (dir.path().join("a.npy"), dir.path().join("b.npy"));
    run_ok(
        b2nd()
            .arg("to-npy")
            .arg(&url)
            .arg(&a)
            .args(["--slice", "1:5, 2:"]),
    );
    run_ok(
        b2nd()
            .arg("to-npy")
            .arg(root.join(rel))
            .arg(&b)
            .args(["--slice", "1:5, 2:"]),
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // A missing object: one line, exit 1, nothing written.
    let c = dir.path().join("c.npy");
    let out = run_fail(
        b2nd().arg("to-npy").arg(server.url("missing.b2nd")).arg(&c),
        1,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not found") && err.lines().count() == 1,
        "{err}"
    );
    assert!(!c.exists());
    // Stores and tables by URL: ls, info, to-npy --key and --column as from the files.
    for (rel, args) in [
        ("stores/tree_ext.b2z", vec!["ls", "--json"]),
        ("tables/basic.b2z", vec!["ls", "--json"]),
        ("stores/embed.b2e", vec!["info", "--json"]),
    ] {
        let r = run_ok(b2nd().args(&args).arg(server.url(rel)));
        let l = run_ok(b2nd().args(&args).arg(root.join(rel)));
        let (r, l) = (
            String::from_utf8_lossy(&r.stdout).replace(&server.url(rel), "SRC"),
            String::from_utf8_lossy(&l.stdout)
                .replace(&root.join(rel).display().to_string(), "SRC"),
        );
        assert_eq!(r, l, "{rel} {args:?}");
    }
    for (rel, extra) in [
        ("stores/tree_ext.b2z", ["--key", "/a/y"]),
        ("tables/basic.b2z", ["--column", "score"]),
    ] {
        let (a, b) = (dir.path().join("ra.npy"), dir.path().join("rb.npy"));
        run_ok(
            b2nd()
                .arg("to-npy")
                .arg(server.url(rel))
                .arg(&a)
                .args(extra)
                .arg("--force"),
        );
        run_ok(
            b2nd()
                .arg("to-npy")
                .arg(root.join(rel))
                .arg(&b)
                .args(extra)
                .arg("--force"),
        );
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{rel}"
        );
    }
}

#[test]
fn url_reads_end_with_one_line_when_the_server_fails() {
    let root = data_dir();
    let server = common::http::FileServer::start(&root);
    let proxy = common::proxy::Proxy::start(server.port());
    let dir = tempfile::tempdir().unwrap();
    let url = proxy.url("f8_2d_ragged.b2nd");
    let out = dir.path().join("out.npy");
    let quick = ["--timeout", "1", "--retries", "1", "--threads", "2"];
    // The whole read through the proxy: works, in at most 2 requests in flight.
    run_ok(b2nd().arg("to-npy").arg(&url).arg(&out).args(quick));
    assert!(out.is_file());
    std::fs::remove_file(&out).unwrap();
    for (fault, what) in [
        (common::proxy::Fault::Hang, "a server that never answers"),
        (common::proxy::Fault::Truncate, "bodies cut short"),
        (common::proxy::Fault::AlwaysUnavailable, "503 for good"),
    ] {
        proxy.set(fault);
        let t0 = std::time::Instant::now();
        let o = run_fail(b2nd().arg("to-npy").arg(&url).arg(&out).args(quick), 1);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.lines().count() == 1 && err.contains(&url),
            "{what}: {err}"
        );
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "{what}: {:?}",
            t0.elapsed()
        );
        assert!(!out.exists(), "{what}: output left behind");
    }
    proxy.kill();
    let o = run_fail(
        b2nd()
            .arg("info")
            .arg(&url)
            .args(["--timeout", "1", "--retries", "0"]),
        1,
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    // A bad --timeout is a usage error.
    run_fail(b2nd().arg("info").arg(&url).args(["--timeout", "-1"]), 2);
}

#[cfg(feature = "sql")]
#[test]
fn sql_over_tables_and_arrays_in_every_format() {
    let t = format!("t={}", data_dir().join("tables/basic.b2z").display());
    let q = "SELECT id, tag FROM t WHERE id >= 6 ORDER BY id";
    let out = run_ok(b2nd().args(["sql", q, "--table", &t]));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("| id | tag |"), "{text}");
    assert!(
        text.contains("| 6  | a   |") && text.contains("| 7  | b   |"),
        "{text}"
    );
    let out = run_ok(b2nd().args(["sql", q, "--table", &t, "--format", "csv"]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "id,tag\n6,a\n7,b\n");
    let out = run_ok(b2nd().args(["sql", q, "--table", &t, "--format", "json"]));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"id\":6,\"tag\":\"a\"}\n{\"id\":7,\"tag\":\"b\"}\n"
    );
    // An array: one row per element.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.b2nd");
    b2nd::ArrayBuilder::for_type::<i32>(&[3, 4])
        .write(
            b2nd::Target::File(p.clone()),
            &(0..12).collect::<Vec<i32>>(),
        )
        .unwrap();
    let a = format!("a={}", p.display());
    let out = run_ok(b2nd().args([
        "sql",
        "SELECT sum(value) AS s, max(i1) AS m FROM a WHERE i0 = 1",
        "--array",
        &a,
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "s,m\n22,3\n");
    // `--table` takes an array too (and a store member).
    let out = run_ok(b2nd().args([
        "sql",
        "SELECT sum(value) AS s FROM a WHERE i0 = 1",
        "--table",
        &a,
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "s\n22\n");
    let member = format!(
        "m={}#/a/b/x",
        data_dir().join("stores/tree_ext.b2z").display()
    );
    let out = run_ok(b2nd().args([
        "sql",
        "SELECT sum(value) AS s FROM m",
        "--table",
        &member,
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "s\n10\n");
}

/// A query may start with a `--` comment, come from a file or standard input, and go to a
/// file in the format its extension names, streamed; an error leaves no file.
#[cfg(feature = "sql")]
#[test]
fn sql_queries_from_files_and_results_to_files() {
    use std::io::Write;
    let t = format!("t={}", data_dir().join("tables/basic.b2z").display());
    let q = "-- the last two ids\nSELECT id, tag FROM t WHERE id >= 6 ORDER BY id";
    let csv = "id,tag\n6,a\n7,b\n";
    let out = run_ok(b2nd().args(["sql", q, "--table", &t, "--format", "csv"]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), csv);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.sql");
    std::fs::write(&file, q).unwrap();
    let f = file.to_str().unwrap();
    let out = run_ok(b2nd().args(["sql", "-f", f, "--table", &t, "--format", "csv"]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), csv);
    let mut child = b2nd()
        .args(["sql", "--file", "-", "--table", &t, "--format", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(q.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), csv);
    // To files, by extension: nothing on standard output.
    let write = |name: &str| {
        let p = dir.path().join(name);
        let out = run_ok(b2nd().args(["sql", q, "--table", &t, "-o", p.to_str().unwrap()]));
        assert!(out.stdout.is_empty(), "{name}");
        std::fs::read(&p).unwrap()
    };
    assert_eq!(write("r.csv"), csv.as_bytes());
    assert_eq!(
        write("r.jsonl"),
        b"{\"id\":6,\"tag\":\"a\"}\n{\"id\":7,\"tag\":\"b\"}\n"
    );
    let parquet = write("r.parquet");
    assert!(parquet.starts_with(b"PAR1") && parquet.ends_with(b"PAR1"));
    // The footer names the columns.
    assert!(parquet.windows(3).any(|w| w == b"tag"));
    let ipc = write("r.arrow");
    assert!(ipc.starts_with(b"ARROW1") && ipc.ends_with(b"ARROW1"));
    // DataFusion's COPY writes too, printing its row count.
    let copied = dir.path().join("c.csv");
    let copy = format!(
        "COPY (SELECT id, tag FROM t WHERE id >= 6 ORDER BY id) TO '{}'",
        copied.display()
    );
    let out = run_ok(b2nd().args(["sql", &copy, "--table", &t, "--format", "csv"]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "count\n2\n");
    assert_eq!(std::fs::read_to_string(&copied).unwrap(), csv);
    // An unknown extension is refused before the query runs, a failing query leaves no
    // file, and neither leaves a temporary one.
    let bad = dir.path().join("r.xlsx");
    run_fail(
        b2nd().args(["sql", q, "--table", &t, "-o", bad.to_str().unwrap()]),
        1,
    );
    let failed = dir.path().join("failed.csv");
    run_fail(
        b2nd().args([
            "sql",
            // Fails as it runs (a division by zero), after the output was begun.
            "SELECT id / (id - id) FROM t",
            "--table",
            &t,
            "-o",
            failed.to_str().unwrap(),
        ]),
        1,
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["c.csv", "q.sql", "r.arrow", "r.csv", "r.jsonl", "r.parquet"],
        "{left:?}"
    );
    // A query and a file together, or neither, is a usage error.
    run_fail(b2nd().args(["sql", q, "-f", f, "--table", &t]), 2);
    run_fail(b2nd().args(["sql", "--table", &t]), 2);
}

#[cfg(feature = "sql")]
#[test]
fn sql_errors_are_one_line_exit_1_and_usage_errors_exit_2() {
    let t = format!("t={}", data_dir().join("tables/basic.b2z").display());
    for (args, code) in [
        (vec!["sql", "SELECT nope FROM t", "--table", &t], 1),
        (vec!["sql", "SELECT * FROM missing", "--table", &t], 1),
        (vec!["sql", "SELEC 1", "--table", &t], 1),
        (
            vec!["sql", "SELECT * FROM t", "--table", "t=/no/such.b2z"],
            1,
        ),
        (vec!["sql", "SELECT 1", "--table", "t"], 2),
        (vec!["sql", "SELECT 1", "--format", "xml"], 2),
    ] {
        let out = b2nd().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        if code == 1 {
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(err.starts_with("b2nd: error: "), "{err}");
        }
    }
}

/// `b2nd sql --write` changes a table (the count printed); without `--write` the same
/// statement is one error line and the table keeps every byte; a bad value changes nothing.
#[cfg(feature = "sql")]
#[test]
fn sql_changes_tables_only_with_write() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.b2d");
    b2nd::TableBuilder::new()
        .column("id", &[1i64, 2, 3])
        .unwrap()
        .write(&p)
        .unwrap();
    let t = format!("t={}", p.display());
    let bytes = || {
        let mut b = std::fs::read(p.join("_valid_rows.b2nd")).unwrap();
        b.extend(std::fs::read(p.join("_cols/id.b2nd")).unwrap());
        b
    };
    let before = bytes();
    for q in [
        "INSERT INTO t VALUES (4)",
        "DELETE FROM t WHERE id = 1",
        "UPDATE t SET id = 7 WHERE id = 1",
        "TRUNCATE TABLE t",
    ] {
        let out = b2nd().args(["sql", q, "--table", &t]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{q}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{q}: {err}");
        assert!(
            err.contains("opened read-only") && err.contains("--write"),
            "{err}"
        );
        assert_eq!(bytes(), before, "{q}");
    }
    let out = run_ok(b2nd().args([
        "sql",
        "INSERT INTO t VALUES (4), (5)",
        "--table",
        &t,
        "--write",
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "count\n2\n");
    let out = run_ok(b2nd().args([
        "sql",
        "DELETE FROM t WHERE id % 2 = 0",
        "--table",
        &t,
        "--write",
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "count\n2\n");
    let ids: Vec<i64> = b2nd::Table::open(&p).unwrap().read_column("id").unwrap();
    assert_eq!(ids, [1, 3, 5]);
    let out = run_ok(b2nd().args([
        "sql",
        "UPDATE t SET id = id * 10 WHERE id > 1",
        "--table",
        &t,
        "--write",
        "--format",
        "csv",
    ]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "count\n2\n");
    let ids: Vec<i64> = b2nd::Table::open(&p).unwrap().read_column("id").unwrap();
    assert_eq!(ids, [1, 30, 50]);
    let before = bytes();
    let out = b2nd()
        .args([
            "sql",
            "INSERT INTO t VALUES (NULL)",
            "--table",
            &t,
            "--write",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("not nullable") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(bytes(), before);
}

#[cfg(not(feature = "sql"))]
#[test]
fn sql_without_the_feature_says_how_to_get_it() {
    let out = b2nd().args(["sql", "SELECT 1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--features sql"), "{err}");
}

/// `info` says a save_tensor frame is one (kind, read only), and `to-npy` writes its items.
#[test]
fn info_and_to_npy_on_a_save_tensor_frame() {
    let p = data_dir().join("tensor_i4_2x3x4.b2frame");
    let out = run_ok(b2nd().arg("info").arg(&p));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("save_tensor frame of a numpy tensor") && text.contains("2 x 3 x 4"),
        "{text}"
    );
    let out = run_ok(b2nd().arg("info").arg(&p).arg("--json"));
    let j: J = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (j["format"].as_str(), j["tensor_kind"].as_str()),
        (Some("tensor"), Some("numpy"))
    );
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("t.npy");
    run_ok(b2nd().arg("to-npy").arg(&p).arg(&npy));
    let bytes = std::fs::read(&npy).unwrap();
    let want: Vec<u8> = (0..24i32).flat_map(|i| i.to_le_bytes()).collect();
    assert!(bytes.ends_with(&want));
    let header = String::from_utf8_lossy(&bytes[..bytes.len() - want.len()]);
    assert!(
        header.contains("'shape': (2, 3, 4)") && header.contains("<i4"),
        "{header}"
    );
}
