//! Arrays, stores and tables read over HTTP by byte ranges (feature `remote`) from a server
//! started here on 127.0.0.1 serving the committed fixtures: tower-http's `ServeDir` in
//! this process (plain and TLS), and nginx as a second, independent server (the tests
//! marked `needs nginx`, which `.ci/run` runs). Every readable contiguous fixture reads the
//! same remotely as from its file, whole and by a slice; a missing object says "not found".

#![cfg(feature = "remote")]

use b2nd::{Array, RemoteOptions};

mod common;
use common::http::{FileServer, HttpServer, Nginx};

#[test]
fn fixtures_read_over_http_as_from_their_files() {
    fixtures_over_http(&FileServer::start(&common::data_dir()));
}

#[test]
#[ignore = "needs nginx"]
fn fixtures_read_from_nginx_as_from_their_files() {
    fixtures_over_http(&Nginx::start(&common::data_dir()));
}

fn fixtures_over_http(server: &dyn HttpServer) {
    let root = common::data_dir();
    let mut n = 0;
    let mut sliced = 0;
    for f in common::good_contiguous() {
        let rel = f["path"].as_str().unwrap();
        let local = Array::open(root.join(rel)).unwrap();
        let remote = Array::open_url(&server.url(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(remote.shape(), local.shape(), "{rel}");
        assert_eq!(remote.dtype(), local.dtype(), "{rel}");
        assert_eq!(
            remote.attrs().unwrap(),
            local.attrs().unwrap(),
            "{rel}: attributes"
        );
        match local.read_bytes() {
            Ok(want) => assert_eq!(remote.read_bytes().unwrap(), want, "{rel}: whole read"),
            Err(e) => {
                // Refused locally (a pipeline b2nd refuses by name): refused remotely too.
                let got = remote.read_bytes().unwrap_err();
                assert_eq!(
                    got.to_string(),
                    e.to_string()
                        .replace(&root.join(rel).display().to_string(), &server.url(rel),),
                    "{rel}"
                );
                continue;
            }
        }
        if local.ndim() > 0 && local.shape()[0] > 2 {
            let s: b2nd::Slice = "1:-1".parse().unwrap();
            assert_eq!(
                remote.read_slice_bytes(&s).unwrap(),
                local.read_slice_bytes(&s).unwrap(),
                "{rel}: slice 1:-1"
            );
            sliced += 1;
        }
        // Chunk by chunk, and as typed values where the dtype is a plain number.
        let chunks = |a: &Array| a.iter_chunks().collect::<b2nd::Result<Vec<_>>>().unwrap();
        assert_eq!(chunks(&remote), chunks(&local), "{rel}: chunks");
        if local.dtype().to_string() == "<f8" {
            let bits = |a: &Array| -> Vec<u64> {
                a.read::<f64>()
                    .unwrap()
                    .iter()
                    .map(|v| v.to_bits())
                    .collect()
            };
            assert_eq!(bits(&remote), bits(&local), "{rel}: typed");
        }
        n += 1;
    }
    assert!(n >= 100, "only {n} fixtures read over HTTP");
    eprintln!("remote: {n} fixtures read over HTTP equal to their files, {sliced} slices");
    let missing = Array::open_url(&server.url("no/such.b2nd")).unwrap_err();
    assert!(missing.to_string().contains("not found"), "{missing}");
    let bad = Array::open_url("ftp://127.0.0.1/x.b2nd").unwrap_err();
    assert!(bad.to_string().contains("ftp"), "{bad}");
}

#[test]
fn stores_and_tables_read_over_http_as_from_their_files() {
    stores_over_http(&FileServer::start(&common::data_dir()));
}

#[test]
#[ignore = "needs nginx"]
fn stores_and_tables_read_from_nginx_as_from_their_files() {
    stores_over_http(&Nginx::start(&common::data_dir()));
}

fn stores_over_http(server: &dyn HttpServer) {
    let root = common::data_dir();
    let (mut stores, mut members) = (0, 0);
    for rel in common::same::one_object_stores() {
        let local = b2nd::Store::open(root.join(&rel)).unwrap();
        let remote =
            b2nd::Store::open_url(&server.url(&rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        members += common::same::stores(&local, &remote, &rel);
        if local.kind() == b2nd::StoreKind::TreeStore && local.contains("/_meta") {
            let t = b2nd::Table::open_url(&server.url(&rel));
            match b2nd::Table::open(root.join(&rel)) {
                Ok(local) => common::same::tables(&local, &t.unwrap(), &rel),
                // A crafted table refused from its file is refused over HTTP, for the reason.
                Err(e) => {
                    let (e, r) = (e.to_string(), t.unwrap_err().to_string());
                    let why = |m: &str| m.split_once(": ").map(|x| x.1.to_string());
                    assert_eq!(why(&e), why(&r), "{rel}");
                }
            }
        }
        stores += 1;
    }
    assert!(
        stores >= 7 && members >= 50,
        "{stores} stores, {members} members"
    );
    eprintln!("remote: {stores} stores and tables read over HTTP, {members} members equal");
    // A .b2d needs a listing, which a plain HTTP server does not give: refused, saying so.
    let e = b2nd::Store::open_url(&server.url("stores/dict_ext.b2d")).unwrap_err();
    assert!(
        e.to_string().contains("stores/dict_ext.b2d") && e.to_string().contains("list"),
        "{e}"
    );
    eprintln!("remote: a .b2d over HTTP: {e}");
}

#[test]
fn gs_az_and_file_urls_read_as_the_files() {
    let root = common::data_dir();
    let server = FileServer::start(&root);
    // object_store's GCS and Azure clients read an object by HEAD and ranged GETs of
    // BASE/BUCKET/KEY; a file server of the data directory answers those requests (unsigned:
    // skip_signature), so the gs:// and az:// paths run against a real server here. No GCS
    // or Azure emulator is installed: their authentication is not tested.
    let base = format!("http://127.0.0.1:{}", server.port());
    let gs = RemoteOptions::new()
        .setting("google_base_url", &base)
        .setting("google_skip_signature", "true")
        .setting("allow_http", "true");
    let az = RemoteOptions::new()
        .setting("azure_storage_endpoint", &base)
        .setting("azure_storage_account_name", "b2nd")
        .setting("azure_skip_signature", "true")
        .setting("allow_http", "true");
    let file = RemoteOptions::new();
    let mut n = 0;
    for f in common::good_contiguous().into_iter().step_by(5) {
        let rel = f["path"].as_str().unwrap();
        if rel.contains('/') {
            continue;
        }
        let want = Array::open(root.join(rel)).unwrap().read_bytes();
        let Ok(want) = want else { continue };
        let url = format!("file://{}", root.join(rel).display());
        let a = Array::open_url_with(&url, &file).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(a.read_bytes().unwrap(), want, "{url}");
        n += 1;
    }
    assert!(n >= 20, "{n} fixtures by file://");
    let mut stores = 0;
    for rel in common::same::one_object_stores() {
        let (bucket, key) = rel.split_once('/').unwrap();
        let local = b2nd::Store::open(root.join(&rel)).unwrap();
        for (url, o) in [
            (format!("gs://{bucket}/{key}"), &gs),
            (format!("az://{bucket}/{key}"), &az),
            (format!("file://{}", root.join(&rel).display()), &file),
        ] {
            let remote =
                b2nd::Store::open_url_with(&url, o).unwrap_or_else(|e| panic!("{url}: {e}"));
            common::same::stores(&local, &remote, &url);
        }
        stores += 1;
    }
    // A .b2d through file:// (the local file system store lists).
    for rel in common::same::directory_stores() {
        let url = format!("file://{}", root.join(&rel).display());
        let remote = b2nd::Store::open_url_with(&url, &file).unwrap();
        common::same::stores(&b2nd::Store::open(root.join(&rel)).unwrap(), &remote, &url);
        stores += 1;
    }
    assert!(stores >= 10, "{stores} stores");
    eprintln!("remote: {n} arrays by file://, {stores} stores by gs://, az:// and file://");
}

#[test]
fn async_calls_run_inside_an_engines_runtime() {
    let root = common::data_dir();
    let server = FileServer::start(&root);
    // A multi-thread Tokio runtime, as DataFusion runs: b2nd's calls go to its blocking
    // pool (b2nd's own runtime is never entered from an async context), several at once.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let names: Vec<String> = common::good_contiguous()
        .iter()
        .step_by(7)
        .map(|f| f["path"].as_str().unwrap().to_string())
        .filter(|rel| !rel.contains('/'))
        .collect();
    let got = rt.block_on(async {
        let mut tasks = Vec::new();
        for rel in &names {
            let url = server.url(rel);
            tasks.push(tokio::spawn(async move {
                let a =
                    std::sync::Arc::new(Array::open_url_async(&url, RemoteOptions::new()).await?);
                a.read_bytes_async().await
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    let mut n = 0;
    for (rel, got) in names.iter().zip(got) {
        match Array::open(root.join(rel)).unwrap().read_bytes() {
            Ok(want) => {
                assert_eq!(got.unwrap(), want, "{rel}");
                n += 1;
            }
            Err(_) => assert!(got.is_err(), "{rel}"),
        }
    }
    assert!(n >= 15, "{n} arrays read by async calls");
    let t = rt
        .block_on(b2nd::Table::open_url_async(
            &server.url("tables/basic.b2z"),
            RemoteOptions::new(),
        ))
        .unwrap();
    let t = std::sync::Arc::new(t);
    let col = rt.block_on(t.read_column_bytes_async("id")).unwrap();
    let local = b2nd::Table::open(root.join("tables/basic.b2z")).unwrap();
    assert_eq!(col, local.read_column_bytes("id").unwrap());
    eprintln!("remote: {n} arrays and a table column read by async calls in a Tokio runtime");
}

#[test]
fn https_with_a_private_ca() {
    let root = common::data_dir();
    let (server, ca) = FileServer::start_tls(&root);
    let url = server.https_url("f8_2d_ragged.b2nd");
    // Not trusted by the platform: refused, naming the URL and the certificate.
    let e = Array::open_url(&url).unwrap_err().to_string();
    assert!(e.contains(&url) && e.contains("certificate"), "{e}");
    // Trusted with the CA: every contiguous fixture reads as its file over TLS.
    let o = RemoteOptions::new().root_certificate(ca);
    let mut n = 0;
    for f in common::good_contiguous().into_iter().step_by(4) {
        let rel = f["path"].as_str().unwrap();
        let Ok(want) = Array::open(root.join(rel)).unwrap().read_bytes() else {
            continue;
        };
        let url = server.https_url(rel);
        let a = Array::open_url_with(&url, &o).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(a.read_bytes().unwrap(), want, "{url}");
        n += 1;
    }
    let store = server.https_url("tables/basic.b2z");
    common::same::stores(
        &b2nd::Store::open(root.join("tables/basic.b2z")).unwrap(),
        &b2nd::Store::open_url_with(&store, &o).unwrap(),
        &store,
    );
    assert!(n >= 30, "{n} fixtures over https");
    eprintln!("remote: {n} fixtures and a table over https (private CA); untrusted: {e}");
}

/// The synchronous remote calls work inside a caller's Tokio runtime, current-thread and
/// multi-thread alike (no "cannot start a runtime from within a runtime" panic), with a
/// `file://` URL (the same object_store path as the network schemes, no server needed).
#[test]
fn sync_remote_reads_inside_a_tokio_runtime() {
    let root = common::data_dir();
    let path = root.join("f8_2d_ragged.b2nd");
    let want = Array::open(&path).unwrap().read_bytes().unwrap();
    let url = format!("file://{}", path.display());
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for rt in [&current, &multi] {
        let got = rt.block_on(async {
            let a = Array::open_url(&url).unwrap();
            a.read_bytes().unwrap()
        });
        assert_eq!(got, want);
        // And from a task on the runtime's workers.
        let u = url.clone();
        let got = rt
            .block_on(rt.spawn(async move { Array::open_url(&u).unwrap().read_bytes().unwrap() }))
            .unwrap();
        assert_eq!(got, want);
    }
}
