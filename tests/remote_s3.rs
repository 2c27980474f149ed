//! Arrays read from S3 by byte ranges (feature `remote`) from an S3 server started here on
//! 127.0.0.1: `s3s` over a directory in this process (signatures checked), and moto's
//! server as a second, independent one (`needs moto`: `B2ND_MOTO_SERVER`, which `.ci/run`
//! installs from PyPI). Every readable contiguous fixture (whole, by a slice, as a
//! super-chunk), the sparse frames, and the stores and tables (`.b2z`, `.b2e`, `.b2d`),
//! uploaded, read the same as from their files; a missing key says "not found".

#![cfg(feature = "remote")]

use b2nd::Array;

mod common;
use common::http::{Moto, S3Server, S3};

/// The tests of this binary set the AWS variables of the process: one at a time.
static ENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn fixtures_read_from_s3_as_from_their_files() {
    let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
    fixtures_from_s3(&S3::start(), "s3s");
}

#[test]
#[ignore = "needs moto"]
fn fixtures_read_from_moto_as_from_their_files() {
    let _env = ENV.lock().unwrap_or_else(|p| p.into_inner());
    fixtures_from_s3(&Moto::start(), "moto");
}

fn fixtures_from_s3(s3: &dyn S3Server, name: &str) {
    // The tests of this binary take turns (`ENV`).
    s3.use_from_env();
    s3.bucket("fixtures");
    let root = common::data_dir();
    let mut n = 0;
    let mut sliced = 0;
    for f in common::good_contiguous() {
        let rel = f["path"].as_str().unwrap();
        let local = Array::open(root.join(rel)).unwrap();
        let Ok(want) = local.read_bytes() else {
            continue;
        };
        s3.put("fixtures", rel, &std::fs::read(root.join(rel)).unwrap());
        let url = format!("s3://fixtures/{rel}");
        let remote = Array::open_url(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(remote.read_bytes().unwrap(), want, "{url}");
        if local.ndim() > 0 && local.shape()[0] > 2 {
            let s: b2nd::Slice = "1:-1".parse().unwrap();
            assert_eq!(
                remote.read_slice_bytes(&s).unwrap(),
                local.read_slice_bytes(&s).unwrap(),
                "{url}: slice 1:-1"
            );
            sliced += 1;
        }
        // As a super-chunk: the same bytes, or the same refusal (ZFP needs the blocks'
        // shape, which a super-chunk does not know).
        let sc = b2nd::SChunk::open_url(&url).unwrap().read_bytes();
        match (sc, b2nd::SChunk::open(root.join(rel)).unwrap().read_bytes()) {
            (Ok(r), Ok(l)) => assert_eq!(r, l, "{url}: as a super-chunk"),
            (Err(r), Err(l)) => assert_eq!(
                r.to_string(),
                l.to_string()
                    .replace(&root.join(rel).display().to_string(), &url),
                "{url}"
            ),
            (r, l) => panic!("{url}: {:?} vs {:?}", r.map(|_| ()), l.map(|_| ())),
        }
        assert_eq!(
            remote.attrs().unwrap(),
            local.attrs().unwrap(),
            "{url}: attributes"
        );
        n += 1;
    }
    assert!(n >= 150, "only {n} fixtures read from S3");
    eprintln!(
        "remote: {n} fixtures read from S3 ({name}) equal to their files, whole, by a slice \
         ({sliced}) and as super-chunks"
    );
    let missing = Array::open_url("s3://fixtures/no/such.b2nd").unwrap_err();
    assert!(missing.to_string().contains("not found"), "{missing}");

    // Sparse frames, by their prefix.
    let mut sparse = 0;
    for f in common::fixtures() {
        if f["ok"] != true || f["storage"] != "sparse" || f["offset"].as_u64().unwrap_or(0) != 0 {
            continue;
        }
        let rel = f["path"].as_str().unwrap();
        for e in std::fs::read_dir(root.join(rel)).unwrap() {
            let e = e.unwrap();
            let file = e.file_name().into_string().unwrap();
            s3.put(
                "fixtures",
                &format!("{rel}/{file}"),
                &std::fs::read(e.path()).unwrap(),
            );
        }
        let local = Array::open(root.join(rel)).unwrap();
        let url = format!("s3://fixtures/{rel}");
        let remote = Array::open_url(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        match local.read_bytes() {
            Ok(want) => assert_eq!(remote.read_bytes().unwrap(), want, "{url}"),
            Err(_) => assert!(remote.read_bytes().is_err(), "{url}"),
        }
        sparse += 1;
    }
    assert!(sparse >= 5, "only {sparse} sparse frames");

    // Stores and tables in one object each.
    let (mut stores, mut members) = (0, 0);
    for rel in common::same::one_object_stores() {
        s3.put("fixtures", &rel, &std::fs::read(root.join(&rel)).unwrap());
        let url = format!("s3://fixtures/{rel}");
        let local = b2nd::Store::open(root.join(&rel)).unwrap();
        let remote = b2nd::Store::open_url(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        members += common::same::stores(&local, &remote, &url);
        stores += 1;
    }
    assert!(
        stores >= 7 && members >= 50,
        "{stores} stores, {members} members"
    );

    // .b2d directories, by their prefix (S3 lists them).
    for rel in common::same::directory_stores() {
        for f in common::same::files_under(&root.join(&rel)) {
            s3.put(
                "fixtures",
                &format!("{rel}/{f}"),
                &std::fs::read(root.join(&rel).join(&f)).unwrap(),
            );
        }
        let url = format!("s3://fixtures/{rel}");
        let local = b2nd::Store::open(root.join(&rel)).unwrap();
        let remote = b2nd::Store::open_url(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        members += common::same::stores(&local, &remote, &url);
        if local.kind() == b2nd::StoreKind::TreeStore && local.contains("/_meta") {
            let t = b2nd::Table::open_url(&url).unwrap();
            common::same::tables(&b2nd::Table::open(root.join(&rel)).unwrap(), &t, &url);
        }
        stores += 1;
    }
    assert!(stores >= 10, "{stores} stores");
    eprintln!(
        "remote: {sparse} sparse frames, {stores} stores ({members} members) read from S3 equal \
         to their files"
    );
}
