//! Every fixture written by python-blosc2 4.14.1 (scripts/gen_fixtures.py) and caterva 0.7.3
//! (scripts/gen_caterva_fixtures.py) reads bit-exact with the metadata python reported, or is
//! refused with the expected kind of error.
//!
//! By default the committed fixtures in `tests/data` are used; `B2ND_FIXTURES=DIR` points the
//! same checks at a freshly generated directory (the live interop run in `.ci/run`).

use std::path::{Path, PathBuf};

use b2nd::{Array, Error};
use serde_json::Value as J;

fn fixture_dir() -> PathBuf {
    match std::env::var_os("B2ND_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"),
    }
}

fn manifests() -> Vec<(PathBuf, J)> {
    let dir = fixture_dir();
    let mut out = Vec::new();
    for name in ["manifest.json", "manifest-caterva.json"] {
        let p = dir.join(name);
        if let Ok(s) = std::fs::read_to_string(&p) {
            let m: J = serde_json::from_str(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            for f in m["fixtures"].as_array().expect("fixtures array") {
                out.push((dir.clone(), f.clone()));
            }
        }
    }
    assert!(!out.is_empty(), "no fixtures found in {}", dir.display());
    out
}

fn open(dir: &Path, f: &J) -> b2nd::Result<Array> {
    let path = dir.join(f["path"].as_str().unwrap());
    match f["offset"].as_u64().unwrap_or(0) {
        0 => Array::open(&path),
        off => Array::open_at(&path, off),
    }
}

fn u64s(v: &J) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

fn error_kind(e: &Error) -> &'static str {
    match e {
        Error::NotNdArray { .. } => "not_nd_array",
        Error::NoData { .. } => "no_data",
        Error::Metalayer { .. } => "bad_metalayer",
        Error::Geometry { reason, .. } if reason.contains("itemsize") => "dtype_mismatch",
        Error::Geometry { .. } => "geometry_mismatch",
        Error::Dtype(_) => "bad_dtype",
        Error::Unsupported { what: "codec", .. } => "unsupported_codec",
        Error::Unsupported {
            what: "codec feature",
            ..
        } => "unsupported_codec",
        Error::Unsupported { what: "filter", .. } => "unsupported_filter",
        Error::Unsupported { .. } => "unsupported",
        Error::Frame { .. } => "bad_frame",
        Error::Chunk { .. } => "bad_chunk",
        _ => "other",
    }
}

/// Check one readable fixture; returns a description of the first mismatch.
fn check_ok(dir: &Path, f: &J) -> Result<(), String> {
    let a = open(dir, f).map_err(|e| format!("open failed: {e}"))?;
    let eq = |what: &str, got: String, want: String| {
        if got == want {
            Ok(())
        } else {
            Err(format!("{what}: got {got}, want {want}"))
        }
    };
    eq(
        "format",
        a.format().name().into(),
        f["format"].as_str().unwrap().into(),
    )?;
    eq(
        "metalayer_version",
        a.metalayer_version().to_string(),
        f["metalayer_version"].to_string(),
    )?;
    eq(
        "shape",
        format!("{:?}", a.shape()),
        format!("{:?}", u64s(&f["shape"])),
    )?;
    eq(
        "chunks",
        format!("{:?}", a.chunks()),
        format!("{:?}", u64s(&f["chunks"])),
    )?;
    let blocks = if f.get("effective_blocks").is_some() {
        &f["effective_blocks"]
    } else {
        &f["blocks"]
    };
    eq(
        "blocks",
        format!("{:?}", a.blocks()),
        format!("{:?}", u64s(blocks)),
    )?;
    eq("dtype", a.dtype_str(), f["dtype"].as_str().unwrap().into())?;
    eq(
        "typesize",
        a.itemsize().to_string(),
        f["typesize"].to_string(),
    )?;
    eq("nchunks", a.nchunks().to_string(), f["nchunks"].to_string())?;
    eq("codec", a.codec_name(), f["codec"].as_str().unwrap().into())?;
    eq("clevel", a.clevel().to_string(), f["clevel"].to_string())?;
    let filters: Vec<String> = f["filters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    eq(
        "filters",
        format!("{:?}", a.filter_names()),
        format!("{filters:?}"),
    )?;
    eq(
        "codec_meta",
        a.codec_meta().to_string(),
        f["codec_meta"].to_string(),
    )?;
    eq(
        "filters_meta",
        format!("{:?}", a.filter_slots().1),
        format!("{:?}", u64s(&f["filters_meta"])),
    )?;
    // What the generator read from the file's bytes (every fixture records it).
    let kinds: Vec<&str> = (0..a.nchunks())
        .map(|i| a.chunk_kind(i).map(|k| k.name()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("chunk kinds: {e}"))?;
    let want: Vec<&str> = f["chunk_kinds"]
        .as_array()
        .ok_or("the manifest records no chunk_kinds")?
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    eq("chunk_kinds", format!("{kinds:?}"), format!("{want:?}"))?;
    eq(
        "storage",
        a.storage().name().into(),
        f["storage"].as_str().unwrap().into(),
    )?;
    if let Some(names) = f.get("attr_names").and_then(|n| n.as_array()) {
        let mut want: Vec<String> = names
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        want.sort();
        let mut got = a.attr_names();
        got.sort();
        eq("attr_names", format!("{got:?}"), format!("{want:?}"))?;
        for n in &got {
            a.attr(n).map_err(|e| format!("attr {n}: {e}"))?;
        }
    }
    let supported = f.get("supported").and_then(|s| s.as_bool()).unwrap_or(true);
    let read = a.read_bytes();
    if !supported {
        return match read {
            Ok(_) => Err("unsupported fixture decoded without error".into()),
            Err(e) => eq(
                "error kind",
                error_kind(&e).into(),
                f["error"].as_str().unwrap().into(),
            ),
        };
    }
    let got = read.map_err(|e| format!("read failed: {e}"))?;
    let want =
        std::fs::read(dir.join(f["expected"].as_str().unwrap())).map_err(|e| e.to_string())?;
    if got != want {
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        return Err(format!(
            "data differs: {} bytes vs {} expected, first difference at byte {first:?}",
            got.len(),
            want.len()
        ));
    }
    // The same through one thread and through a single full box read.
    let one = open(dir, f)
        .unwrap()
        .with_threads(b2nd::Threads::count(1).unwrap())
        .read_bytes()
        .map_err(|e| e.to_string())?;
    if one != want {
        return Err("single-threaded read differs".into());
    }
    Ok(())
}

#[test]
fn every_fixture_reads_or_is_refused_as_expected() {
    let mut failures = Vec::new();
    let mut n_ok = 0;
    let mut n_err = 0;
    for (dir, f) in manifests() {
        let name = f["name"].as_str().unwrap().to_string();
        if f["ok"].as_bool().unwrap() {
            n_ok += 1;
            if let Err(e) = check_ok(&dir, &f) {
                failures.push(format!("{name}: {e}"));
            }
        } else {
            n_err += 1;
            let want = f["error"].as_str().unwrap();
            match open(&dir, &f).and_then(|a| a.read_bytes()) {
                Ok(_) => failures.push(format!("{name}: accepted, expected error {want}")),
                Err(e) => {
                    let got = error_kind(&e);
                    if got != want {
                        failures.push(format!("{name}: error kind {got} ({e}), expected {want}"));
                    }
                    let msg = e.to_string();
                    assert!(
                        !msg.is_empty() && !msg.contains('\n'),
                        "{name}: error message {msg:?}"
                    );
                }
            }
        }
    }
    eprintln!("{n_ok} readable fixtures, {n_err} refused fixtures checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
