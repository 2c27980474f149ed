//! Remote reads when the server misbehaves (feature `remote`): a fault-injecting proxy of
//! this crate's tests (tests/common/proxy.rs) in front of a file server on 127.0.0.1. 503s
//! are retried; a server that keeps failing, hangs or dies ends the read with one error
//! within the configured time; a body cut short is an error, never short data; an object
//! replaced after it was opened is an error, never a mix of two versions; sparse frames are
//! read by their prefix URL.

#![cfg(feature = "remote")]

use std::time::{Duration, Instant};

use b2nd::{Array, RemoteOptions};

mod common;
use common::http::{FileServer, HttpServer};
use common::proxy::{Fault, Proxy};

/// A file server of a copy of some fixtures (the test replaces files in it).
fn server() -> (FileServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let data = common::data_dir();
    for f in common::fixtures() {
        let rel = f["path"].as_str().unwrap();
        let src = data.join(rel);
        if src.is_file() && !rel.contains('/') {
            std::fs::copy(&src, dir.path().join(rel)).unwrap();
        }
    }
    // An array larger than what opening fetches (8 KiB), so reads go to the server: 256K
    // noisy f8 items in chunks of 16K.
    let mut next = common::xorshift(7);
    let noise: Vec<u8> = (0..1u64 << 18)
        .flat_map(|_| (next() as f64 / 3.0).to_le_bytes())
        .collect();
    b2nd::ArrayBuilder::new(&[1 << 18], b2nd::dtype::Dtype::parse("<f8").unwrap())
        .chunks(&[1 << 14])
        .write_bytes(b2nd::Target::File(dir.path().join(NAME)), &noise)
        .unwrap();
    (FileServer::start(dir.path()), dir)
}

/// Quick options for fault tests: 1 s per request, 2 retries within 3 s.
fn quick() -> RemoteOptions {
    RemoteOptions::new()
        .timeout(Duration::from_secs(1))
        .connect_timeout(Duration::from_secs(1))
        .retries(2)
        .retry_timeout(Duration::from_secs(3))
}

/// The array the fault tests read (written by [`server`]).
const NAME: &str = "noise.b2nd";

#[test]
fn transient_errors_are_retried_and_lasting_ones_end_the_read() {
    let (server, _dir) = server();
    let proxy = Proxy::start(server.port());
    let want = Array::open(_dir.path().join(NAME))
        .unwrap()
        .read_bytes()
        .unwrap();

    // Two 503s, then the server recovers: the open and the read succeed.
    proxy.set(Fault::Unavailable(2));
    let a = Array::open_url_with(&proxy.url(NAME), &quick()).unwrap();
    assert_eq!(a.read_bytes().unwrap(), want);
    let (requests, _) = proxy.counts();
    assert!(
        requests >= 4,
        "{requests} requests: the 503s were not retried"
    );

    // 503 for good: an error naming the URL and the status, after the retries (on an array
    // opened before, whose chunks no read has fetched yet: `a` keeps those it read).
    let b = Array::open_url_with(&proxy.url(NAME), &quick()).unwrap();
    proxy.set(Fault::AlwaysUnavailable);
    proxy.reset();
    let t0 = Instant::now();
    let e = b.read_bytes().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains(&proxy.url(NAME)) && e.contains("503"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    // Opening asks twice at once (the first 8 KiB and the last 64 KiB): one try and two
    // retries each.
    proxy.reset();
    let e = Array::open_url_with(&proxy.url(NAME), &quick()).unwrap_err();
    assert!(e.to_string().contains("503"), "{e}");
    assert_eq!(proxy.counts().0, 6, "one try and two retries, twice");

    // No retries asked: one request each.
    proxy.reset();
    let none = Array::open_url_with(&proxy.url(NAME), &quick().retries(0)).unwrap_err();
    assert!(none.to_string().contains("503"), "{none}");
    assert_eq!(proxy.counts().0, 2);
}

#[test]
fn short_bodies_hangs_and_dead_servers_are_errors_in_bounded_time() {
    let (server, _dir) = server();
    let proxy = Proxy::start(server.port());
    let a = Array::open_url_with(&proxy.url(NAME), &quick()).unwrap();

    // Every ranged body cut in half: an error, never short data.
    proxy.set(Fault::Truncate);
    let e = a.read_bytes().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains(&proxy.url(NAME)), "{e}");
    eprintln!("remote_faults: short body: {e}");

    // A server that accepts and never answers: the timeout ends it.
    proxy.set(Fault::Hang);
    let t0 = Instant::now();
    let e = a.read_bytes().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains(&proxy.url(NAME)), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    eprintln!("remote_faults: hung server after {:?}: {e}", t0.elapsed());

    // A server that dies: connections closed, then refused.
    proxy.kill();
    let t0 = Instant::now();
    let e = a.read_bytes().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains(&proxy.url(NAME)), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    eprintln!("remote_faults: dead server after {:?}: {e}", t0.elapsed());
}

#[test]
fn empty_and_tiny_objects_are_not_frames() {
    let (server, dir) = server();
    // No range fits an empty object: asked by HEAD instead, then refused as a frame.
    std::fs::write(dir.path().join("empty.b2nd"), b"").unwrap();
    std::fs::write(dir.path().join("tiny.b2nd"), b"b2").unwrap();
    for name in ["empty.b2nd", "tiny.b2nd"] {
        let e = Array::open_url_with(&server.url(name), &quick())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&server.url(name)) && e.contains("frame"), "{e}");
    }
}

#[test]
fn an_object_replaced_after_opening_is_an_error() {
    let (server, dir) = server();
    let path = dir.path().join(NAME);
    // Without a chunk cache (with one, a second whole read takes the chunks the first one
    // fetched: the version opened, not a mix).
    let a = Array::open_url_with(&server.url(NAME), &quick().chunk_cache(0)).unwrap();
    let want = a.read_bytes().unwrap();
    // Same size, other bytes, a later modification time (server's ETag is size and mtime).
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::thread::sleep(Duration::from_millis(1100));
    let tmp = dir.path().join("replacement");
    std::fs::write(&tmp, &bytes).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let e = a.read_bytes().map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("changed"), "{e}");
    eprintln!("remote_faults: replaced object: {e}");
    // Opened again, it is the new version.
    let b = Array::open_url_with(&server.url(NAME), &quick()).unwrap();
    assert_eq!(
        b.read_bytes().unwrap(),
        want,
        "the data chunks were not touched"
    );
}

#[test]
fn sparse_frames_read_by_their_prefix_url() {
    let server = FileServer::start(&common::data_dir());
    let mut n = 0;
    for f in common::fixtures() {
        if f["ok"] != true || f["storage"] != "sparse" || f["offset"].as_u64().unwrap_or(0) != 0 {
            continue;
        }
        let rel = f["path"].as_str().unwrap();
        let local = Array::open(common::data_dir().join(rel)).unwrap();
        let remote = Array::open_url(&server.url(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(remote.shape(), local.shape(), "{rel}");
        match local.read_bytes() {
            Ok(want) => assert_eq!(remote.read_bytes().unwrap(), want, "{rel}"),
            Err(e) => assert!(remote.read_bytes().is_err(), "{rel}: refused locally: {e}"),
        }
        n += 1;
    }
    assert!(n >= 5, "only {n} sparse fixtures");
    eprintln!("remote_faults: {n} sparse frames read over HTTP equal to their directories");
}

#[test]
fn a_small_slice_costs_five_requests_and_about_one_block() {
    let (server, dir) = server();
    // 4M u4 items: 4 chunks of 1M, blocks of 16 384 items (64 KiB before compression).
    let n = 4u64 << 20;
    let data: Vec<u8> = (0..n as u32)
        .flat_map(|i| (i.wrapping_mul(2_654_435_761) >> 8).to_le_bytes())
        .collect();
    b2nd::ArrayBuilder::new(&[n], b2nd::dtype::Dtype::parse("<u4").unwrap())
        .chunks(&[1 << 20])
        .blocks(&[16_384])
        .write_bytes(b2nd::Target::File(dir.path().join("big.b2nd")), &data)
        .unwrap();
    let file_len = std::fs::metadata(dir.path().join("big.b2nd"))
        .unwrap()
        .len();
    let proxy = Proxy::start(server.port());
    let a = Array::open_url(&proxy.url("big.b2nd")).unwrap();
    let (open_requests, open_bytes) = proxy.counts();
    proxy.reset();
    let s: b2nd::Slice = "2500000:2500010".parse().unwrap();
    let k = 2_500_000 * 4;
    assert_eq!(a.read_slice_bytes(&s).unwrap(), data[k..k + 40]);
    let (requests, bytes) = proxy.counts();
    eprintln!(
        "remote_faults: open {open_requests} requests {open_bytes} bytes; 10-item slice \
         {requests} requests {bytes} bytes (file {file_len} bytes)"
    );
    // Open: the first 8 KiB (size and version with them) and, at the same time, the last
    // 64 KiB (index and trailer): one round trip. Slice: the
    // chunk's header and block offsets, then the block (python-blosc2's RemoteArray: the
    // same 4, scripts/bench_remote.py).
    assert!(open_requests <= 2, "{open_requests} requests to open");
    assert!(requests <= 2, "{requests} requests for a 10-item slice");
    assert!(
        bytes < 2 * 65_536 + 4096,
        "{bytes} bytes for a 10-item slice"
    );

    // A whole read, two threads cutting each chunk in two: each chunk fetched once, in one
    // request, ahead of the decoding.
    for threads in [1, 2] {
        let a = Array::open_url(&proxy.url("big.b2nd"))
            .unwrap()
            .with_threads(b2nd::Threads::count(threads).unwrap());
        proxy.reset();
        assert_eq!(a.read_bytes().unwrap(), data);
        let (requests, bytes) = proxy.counts();
        eprintln!(
            "remote_faults: whole read, {threads} threads: {requests} requests {bytes} bytes"
        );
        assert!(requests <= 4, "{requests} requests for 4 chunks");
        assert!(bytes <= file_len, "{bytes} bytes of a {file_len}-byte file");
    }
}

#[test]
fn a_table_opens_in_two_round_trips_and_fetches_its_file_about_once() {
    let (server, dir) = server();
    // 4 columns of 1M noisy rows (several chunks each) in a .b2z, as a table has them.
    let n = 1usize << 20;
    let mut next = common::xorshift(11);
    let a: Vec<i64> = (0..n).map(|_| next() as i64).collect();
    let b: Vec<f64> = (0..n).map(|_| next() as f64 / 7.0).collect();
    let c: Vec<i32> = (0..n).map(|_| (next() % 1000) as i32).collect();
    let d: Vec<i8> = (0..n).map(|_| (next() % 10) as i8).collect();
    let path = dir.path().join("t.b2z");
    b2nd::TableBuilder::new()
        .column("a", &a)
        .unwrap()
        .column("b", &b)
        .unwrap()
        .column("c", &c)
        .unwrap()
        .column("d", &d)
        .unwrap()
        .write(&path)
        .unwrap();
    let file_len = std::fs::metadata(&path).unwrap().len();
    let chunks: u64 = ["a", "b", "c", "d"]
        .iter()
        .map(|k| {
            let t = b2nd::Table::open(&path).unwrap();
            let a = t.column_array(k).unwrap();
            a.nchunks()
        })
        .sum();
    let proxy = Proxy::start(server.port());
    let t = b2nd::Table::open_url(&proxy.url("t.b2z")).unwrap();
    let (open_requests, open_bytes) = proxy.counts();
    proxy.reset();
    for k in ["a", "b", "c", "d"] {
        for part in 0..4u64 {
            let rows = part * n as u64 / 4..(part + 1) * n as u64 / 4;
            t.read_rows_bytes(k, rows).unwrap();
        }
    }
    let (requests, bytes) = proxy.counts();
    assert_eq!(t.read_rows::<i32>("c", 5..8).unwrap(), c[5..8]);
    eprintln!(
        "remote_faults: table open {open_requests} requests {open_bytes} bytes; every column \
         in 4 parts {requests} requests {bytes} bytes ({chunks} chunks, file {file_len} bytes)"
    );
    // Open: the first 8 KiB and the last 64 KiB (the zip directory) at once, then the local
    // headers, frame headers and trailers of all 7 members asked at once (coalesced,
    // concurrent): 2 round trips, however many members (38 requests one after another
    // before).
    assert!(open_requests <= 8, "{open_requests} requests to open");
    assert!(open_bytes < 2 * 65_536 * 7, "{open_bytes} bytes to open");
    // Reads: the columns' arrays stay open in the table, and a part of a chunk that covers
    // half of it or more fetches it whole for the next parts: nothing is fetched twice.
    // (Parts of less than half a chunk fetch their blocks: up to 4 requests a chunk.)
    assert!(
        requests <= 4 * chunks,
        "{requests} requests for {chunks} chunks"
    );
    // Measured: 12 requests, 17 342 213 bytes of 17 348 345 (68 requests, 32 954 391 bytes
    // before). Some runs fetch 170 KB more with the same 12 requests (3 of 6 runs alone),
    // 511 KB once in CI. The cause: the table is written with threads, and
    // blocks are stored in the order they finish compressing, so two neighbouring blocks of
    // column `c` (85 KB each) may be stored swapped. When the swap straddles two parts (say
    // block 7 stored after block 8), each part's blocks, coalesced into one range, take in
    // the other part's block lying between them: 2 blocks more per such boundary (seen with
    // `B2ND_PROXY_LOG=1 ... --nocapture` and the chunk's block starts; coalescing across
    // a one-block gap saves a request, by design). Each of column `c`'s 3 part boundaries
    // with such a swap adds 170 KB: CI's 511 KB was all three (2.9 %), hence 5 %. A chunk
    // fetched twice would add 2.9 MB (17 %) or more.
    assert!(
        bytes <= file_len + file_len / 20,
        "{bytes} bytes of a {file_len}-byte file"
    );
}
