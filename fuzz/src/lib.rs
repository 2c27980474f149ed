//! The bodies of b2nd's fuzz targets, one function per target, each taking the fuzzer's
//! bytes. The libFuzzer binaries in `fuzz_targets/` call them; the main crate's
//! `tests/fuzz_corpora.rs` includes this file and replays the committed corpora
//! (`fuzz/seeds/<target>/`) through them on stable Rust, so every `cargo test` re-checks
//! every input the fuzzer kept or found.
//!
//! A target may return early or see errors (hostile inputs are expected to fail); it panics
//! only when b2nd breaks a promise: success with wrong data, a changed file after a refused
//! change, a printed value that does not parse back.

#![forbid(unsafe_code)]

use b2nd::{ArrayBuilder, Codec, Dtype, Filter, SliceItem};
use std::path::Path;

/// Largest declared array a target reads whole (the declared size is checked before any
/// allocation of it; this only keeps each execution fast).
const READ_MAX: u64 = 64 << 20;

/// The same for store members and table columns (smaller: a store holds many).
const STORE_READ_MAX: u64 = 1 << 20;

/// A target's body: the fuzzer's bytes in, a panic on a broken promise.
pub type Target = fn(&[u8]);

/// The targets by name, for the corpus replay.
pub const TARGETS: &[(&str, Target)] = &[
    ("frame_read", frame_read),
    ("slice_read", slice_read),
    ("parsers", parsers),
    ("store_open", store_open),
    ("roundtrip", roundtrip),
    ("sparse_read", sparse_read),
    ("inplace", inplace),
    ("arrow_blocks", arrow_blocks),
];

/// A frame's bytes: open (metadata, attributes), iterate the chunks, read the whole array.
/// Two decode paths are compared: when every chunk decodes through the iterator (whole
/// chunks), the whole read (masked, block by block, in parallel) succeeds and holds the
/// same bytes. (The converse does not hold: a whole read skips blocks that lie wholly in a
/// chunk's padding, which the iterator decodes.)
pub fn frame_read(data: &[u8]) {
    let Ok(a) = b2nd::Array::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = (
        a.shape(),
        a.dtype_str(),
        a.codec_name(),
        a.filter_names(),
        a.attrs(),
    );
    if a.nbytes() > READ_MAX {
        return;
    }
    let whole = a.read_bytes();
    if a.nchunks() > 64 {
        for c in a.iter_chunks().take(64) {
            let _ = c.map(|c| c.data().len());
        }
        return;
    }
    let mut assembled = vec![0u8; a.nbytes() as usize];
    let dims = a.shape().to_vec();
    let isz = a.itemsize();
    for c in a.iter_chunks() {
        let Ok(c) = c else {
            return;
        };
        place(&mut assembled, &dims, isz, c.origin(), c.shape(), c.data());
    }
    let whole = whole.expect("every chunk decodes, but the whole read failed");
    assert!(whole == assembled, "the whole read differs from the chunks");
}

/// Copy a C-order box (`origin`, `shape`, items of `isz` bytes) into the C-order array
/// `out` of shape `dims`.
fn place(out: &mut [u8], dims: &[u64], isz: usize, origin: &[u64], shape: &[u64], data: &[u8]) {
    let n: u64 = shape.iter().product();
    if n == 0 {
        return;
    }
    let nd = dims.len();
    let row = if nd == 0 { 1 } else { shape[nd - 1] as usize } * isz;
    let mut idx = vec![0u64; nd];
    for r in data.chunks(row.max(1)) {
        let mut flat = 0u64;
        for k in 0..nd {
            flat = flat * dims[k] + origin[k] + idx[k];
        }
        let o = flat as usize * isz;
        out[o..o + r.len()].copy_from_slice(r);
        // Next row: every dimension but the last.
        let mut k = nd.saturating_sub(1);
        while k > 0 {
            k -= 1;
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// 16 bytes choosing a NumPy basic-indexing selection (per dimension an index or a
/// start:stop:step range), then a frame: the slice has the selection's shape, and its
/// items are the ones a whole read holds at the selected positions.
pub fn slice_read(data: &[u8]) {
    if data.len() < 17 {
        return;
    }
    let (sel, frame) = data.split_at(16);
    let Ok(a) = b2nd::Array::from_bytes(frame.to_vec()) else {
        return;
    };
    if a.nbytes() > READ_MAX {
        return;
    }
    let items: Vec<SliceItem> = sel
        .chunks(4)
        .take(a.ndim())
        .map(|b| {
            let v = |x: u8| i64::from(x as i8);
            if b[0] & 1 == 0 {
                SliceItem::Index(v(b[1]))
            } else {
                SliceItem::Range {
                    start: (b[0] & 2 != 0).then(|| v(b[1])),
                    stop: (b[0] & 4 != 0).then(|| v(b[2])),
                    step: u64::from(b[3] % 8),
                }
            }
        })
        .collect();
    let Ok(v) = a.read_slice_bytes(&items) else {
        return;
    };
    let shape = a
        .slice_shape(&items)
        .expect("a selection that read has a shape");
    let n: u64 = shape.iter().product();
    let isz = a.itemsize();
    assert_eq!(v.len() as u64, n * isz as u64);
    // An array without items (a 0 in its shape) may declare any other extent: nothing to
    // compare, and the positions below would be that long (found by fuzzing: a harness
    // "capacity overflow" for a shape with a zero and a 2^60 extent).
    if a.nbytes() == 0 {
        assert!(v.is_empty(), "a selection of an empty array has items");
        return;
    }
    // The same items through the whole read (when it succeeds): selected positions, C order.
    let Ok(whole) = a.read_bytes() else {
        return;
    };
    let dims = a.shape().to_vec();
    let mut expected = Vec::with_capacity(v.len());
    let picks: Vec<Vec<u64>> = items
        .iter()
        .chain(std::iter::repeat(&SliceItem::ALL))
        .zip(&dims)
        .map(|(it, &d)| positions(it, d))
        .collect();
    gather(&whole, &dims, &picks, isz, 0, 0, &mut expected);
    assert_eq!(
        v, expected,
        "slice differs from the whole read at the selected items"
    );
}

/// Append to `out` the items of `whole` (C order, shape `dims`, items of `isz` bytes) at
/// the positions `picks` selects per dimension, from dimension `k` on (`flat`: the flat
/// index of the dimensions before `k`).
fn gather(
    whole: &[u8],
    dims: &[u64],
    picks: &[Vec<u64>],
    isz: usize,
    k: usize,
    flat: u64,
    out: &mut Vec<u8>,
) {
    if k == dims.len() {
        let o = flat as usize * isz;
        out.extend_from_slice(&whole[o..o + isz]);
        return;
    }
    for &p in &picks[k] {
        gather(whole, dims, picks, isz, k + 1, flat * dims[k] + p, out);
    }
}

/// The positions one selection item picks along a dimension of `d` (NumPy rules; the item
/// is known to be valid, as the slice read accepted it).
fn positions(it: &SliceItem, d: u64) -> Vec<u64> {
    let d = d as i64;
    match *it {
        SliceItem::Index(i) => vec![if i < 0 { i + d } else { i } as u64],
        SliceItem::Range { start, stop, step } => {
            let step = step.max(1) as i64;
            let clamp = |x: Option<i64>, default: i64| match x {
                None => default,
                Some(x) if x < 0 => (x + d).max(0),
                Some(x) => x.min(d),
            };
            let (s, e) = (clamp(start, 0), clamp(stop, d));
            (s..e.max(s))
                .step_by(step as usize)
                .map(|x| x as u64)
                .collect()
        }
        _ => panic!("a selection item the harness does not know"),
    }
}

/// The text and byte parsers of the model and format layers: the first byte picks one.
pub fn parsers(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 5 {
        0 => {
            let _ = b2nd::__fuzz::parse_metalayer(b2nd::Format::B2nd, rest);
        }
        1 => {
            let _ = b2nd::__fuzz::parse_metalayer(b2nd::Format::Caterva, rest);
        }
        2 => {
            if let Ok(s) = std::str::from_utf8(rest) {
                if let Ok(d) = Dtype::parse(s) {
                    // What a dtype prints parses back to the same dtype.
                    let again = Dtype::parse(&d.to_numpy_str()).expect("printed dtype parses");
                    assert_eq!(again, d);
                }
            }
        }
        3 => {
            if let Ok(v) = b2nd::Value::decode(rest) {
                // What decodes encodes and decodes to the same value (compared encoded:
                // NaN is not equal to itself).
                let bytes = v.encode();
                let again = b2nd::Value::decode(&bytes).expect("encoded value decodes");
                assert_eq!(again.encode(), bytes);
            }
        }
        _ => {
            let _ = b2nd::npy::parse_header(rest);
        }
    }
}

/// A store file (`.b2z` zip, `.b2e` embed store) or a CTable `.b2z`: open, list, and read
/// every member and column it names. The first byte picks the file name's extension.
pub fn store_open(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(if which & 1 == 0 { "s.b2z" } else { "s.b2e" });
    std::fs::write(&path, rest).unwrap();
    if let Ok(s) = b2nd::Store::open(&path) {
        for key in s.keys().into_iter().take(32) {
            let _ = s.member_kind(&key);
            if let Ok(a) = s.open_array(&key) {
                if a.nbytes() <= STORE_READ_MAX {
                    let _ = a.read_bytes();
                }
            }
            if let Ok(sc) = s.open_schunk(&key) {
                if sc.nbytes() <= STORE_READ_MAX {
                    let _ = sc.read_objects();
                }
            }
        }
        for g in s.groups().into_iter().take(8) {
            let _ = s.group_attrs(&g);
        }
    }
    if which & 1 == 0 {
        if let Ok(t) = b2nd::Table::open(&path) {
            for c in t.columns().iter().take(16) {
                let _ = t.read_column_bytes(c.name());
                let _ = t.read_validity(c.name());
                #[cfg(feature = "arrow")]
                if t.n_rows() <= 4096 {
                    if let Ok(a) = t.rows_to_arrow(c.name(), 0..t.n_rows()) {
                        use arrow_array::Array as _;
                        assert_eq!(a.len() as u64, t.n_rows(), "{}", c.name());
                    }
                }
            }
        }
    }
}

/// Write then read: the first 12 bytes choose the shape, chunks, blocks, dtype, codec,
/// level and filters, the rest is the data; whatever the builder accepts must read back
/// equal (lossless codecs and filters only), in memory.
pub fn roundtrip(data: &[u8]) {
    if data.len() < 12 {
        return;
    }
    let (p, body) = data.split_at(12);
    let nd = usize::from(p[0] % 4);
    let shape: Vec<u64> = (0..nd).map(|i| u64::from(p[1 + i] % 9)).collect();
    let chunks: Vec<u64> = (0..nd).map(|i| 1 + u64::from(p[4 + i] % 6)).collect();
    let blocks: Vec<u64> = (0..nd)
        .map(|i| 1 + u64::from(p[7 + i]) % chunks[i])
        .collect();
    let dtypes = [
        "<i4",
        "<f8",
        "|u1",
        ">i2",
        "<U2",
        "|S3",
        "|b1",
        "[('a', '<i2'), ('b', '|u1')]",
    ];
    let dtype = Dtype::parse(dtypes[usize::from(p[10] % 8)]).unwrap();
    let codecs = [
        Codec::Zstd,
        Codec::Lz4,
        Codec::BloscLz,
        Codec::Lz4hc,
        Codec::Zlib,
    ];
    let codec = codecs[usize::from(p[11] % 5)];
    let filters = match p[11] / 5 % 5 {
        0 => vec![],
        1 => vec![Filter::Shuffle],
        2 => vec![Filter::Bitshuffle],
        3 => vec![Filter::Shuffle, Filter::Bytedelta],
        _ => vec![Filter::Delta],
    };
    let n: u64 = shape.iter().product();
    let need = n as usize * dtype.itemsize();
    let mut bytes = body.to_vec();
    bytes.resize(need, 0);
    let b = ArrayBuilder::new(&shape, dtype)
        .chunks(&chunks)
        .blocks(&blocks)
        .codec(codec)
        .clevel(p[11] % 10)
        .filters(&filters);
    let Ok(frame) = b.bytes_to_vec(&bytes) else {
        return;
    };
    let a = b2nd::Array::from_bytes(frame).expect("what b2nd writes, it opens");
    assert_eq!(a.read_bytes().expect("and reads"), bytes);
}

/// Split `data` into length-prefixed parts (u32 little-endian length, then the bytes; a
/// short last part takes what is left).
fn parts(mut data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while data.len() >= 4 && out.len() < 16 {
        let n = u32::from_le_bytes(data[..4].try_into().unwrap()) as usize;
        let n = n.min(data.len() - 4);
        out.push(&data[4..4 + n]);
        data = &data[4 + n..];
    }
    out
}

/// A sparse frame (a directory): the first part is `chunks.b2frame`, part `i + 1` the
/// chunk file of id `i` (`{i:08X}.chunk`). Open, iterate chunks, read whole.
pub fn sparse_read(data: &[u8]) {
    let p = parts(data);
    let Some((index, chunks)) = p.split_first() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("a.b2nd");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("chunks.b2frame"), index).unwrap();
    for (i, c) in chunks.iter().enumerate() {
        std::fs::write(root.join(format!("{i:08X}.chunk")), c).unwrap();
    }
    let Ok(a) = b2nd::Array::open(&root) else {
        return;
    };
    let _ = (a.shape(), a.attrs());
    if a.nbytes() > READ_MAX {
        return;
    }
    for c in a.iter_chunks().take(64) {
        let _ = c.map(|c| c.data().len());
    }
    let _ = a.read_bytes();
}

/// Filters and codecs whose decoded values need not equal what was written.
fn lossy(a: &b2nd::Array) -> bool {
    a.codec_name().contains("zfp")
        || a.filter_names()
            .iter()
            .any(|f| f.contains("trunc") || f.contains("ndmean"))
}

/// An in-place change of a frame file: the first 8 bytes choose the change (a region
/// write, a resize, an attribute edit), the rest is the frame. A refused change leaves the
/// file byte-identical; an accepted one reads back with the new shape, the written items,
/// and the old items elsewhere.
pub fn inplace(data: &[u8]) {
    if data.len() < 9 {
        return;
    }
    let (op, frame) = data.split_at(8);
    let Ok(old) = b2nd::Array::from_bytes(frame.to_vec()) else {
        return;
    };
    if old.nbytes() > READ_MAX / 16 || old.ndim() == 0 {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.b2nd");
    std::fs::write(&path, frame).unwrap();
    let shape = old.shape().to_vec();
    let before = old.read_bytes().ok();
    let isz = old.itemsize();
    let Ok(mut m) = b2nd::ArrayMut::open(&path) else {
        assert_unchanged(&path, frame);
        return;
    };
    match op[0] % 3 {
        0 => {
            // A region: per dimension a start and a length inside the shape.
            let (start, len): (Vec<u64>, Vec<u64>) = shape
                .iter()
                .enumerate()
                .map(|(k, &d)| {
                    let s = if d == 0 {
                        0
                    } else {
                        u64::from(op[1 + k % 7]) % d
                    };
                    (s, (d - s).min(1 + u64::from(op[(2 + k) % 8] % 4)))
                })
                .unzip();
            let n: u64 = len.iter().product();
            let bytes: Vec<u8> = (0..n as usize * isz).map(|i| op[i % 8] ^ i as u8).collect();
            if m.write_region_bytes(&b2nd::Region::new(start.clone(), len.clone()), &bytes)
                .is_err()
            {
                drop(m);
                assert_unchanged(&path, frame);
                return;
            }
            drop(m);
            let a = b2nd::Array::open(&path).expect("a changed array opens");
            assert_eq!(a.shape(), &shape[..]);
            if lossy(&a) {
                return;
            }
            let got = a
                .read_slice_bytes(&region(&start, &len))
                .expect("the written region reads");
            assert_eq!(got, bytes, "written region differs");
        }
        1 => {
            // A resize: each dimension grows or shrinks by up to 3.
            let new: Vec<u64> = shape
                .iter()
                .enumerate()
                .map(|(k, &d)| {
                    (d + u64::from(op[1 + k % 7] % 4))
                        .saturating_sub(u64::from(op[(2 + k) % 8] % 4))
                })
                .collect();
            if m.resize(&new).is_err() {
                drop(m);
                assert_unchanged(&path, frame);
                return;
            }
            drop(m);
            let a = b2nd::Array::open(&path).expect("a resized array opens");
            assert_eq!(a.shape(), &new[..]);
            let common: Vec<u64> = shape.iter().zip(&new).map(|(a, b)| *a.min(b)).collect();
            if let (Some(_), false) = (&before, lossy(&a)) {
                if let Ok(got) = a.read_slice_bytes(&region(&vec![0; common.len()], &common)) {
                    let want = old
                        .read_slice_bytes(&region(&vec![0; common.len()], &common))
                        .unwrap();
                    assert_eq!(got, want, "items kept by a resize changed");
                }
            }
        }
        _ => {
            let value = b2nd::Value::Int(i64::from(op[1]));
            let name = ["k", "a", "shape", ""][usize::from(op[2] % 4)];
            if m.set_attr(name, &value).is_err() {
                drop(m);
                assert_unchanged(&path, frame);
                return;
            }
            drop(m);
            let a = b2nd::Array::open(&path).expect("an array with a new attribute opens");
            assert_eq!(a.attr(name).ok().flatten(), Some(value));
            if let (Some(b), Ok(now)) = (&before, a.read_bytes()) {
                assert_eq!(&now, b, "an attribute edit changed the data");
            }
        }
    }
}

/// The selection of the box at `start` of shape `len`.
fn region(start: &[u64], len: &[u64]) -> Vec<SliceItem> {
    start
        .iter()
        .zip(len)
        .map(|(&s, &l)| SliceItem::Range {
            start: Some(s as i64),
            stop: Some((s + l) as i64),
            step: 1,
        })
        .collect()
}

fn assert_unchanged(path: &Path, frame: &[u8]) {
    let now = std::fs::read(path).expect("the file is still there");
    assert!(now == frame, "a refused change modified the file");
}

/// An Arrow-serialized BatchArray's bytes: a u16 (LE) length of the metalayer's
/// `arrow_schema`, the schema, then a block. The schema is parsed and the block read as an IPC
/// stream, alone and after the schema (the older bare record-batch blocks), its items
/// converted (without feature `arrow`: nothing).
pub fn arrow_blocks(data: &[u8]) {
    #[cfg(feature = "arrow")]
    {
        let Some((len, rest)) = data.split_first_chunk::<2>() else {
            return;
        };
        let (schema, block) = rest.split_at(usize::from(u16::from_le_bytes(*len)).min(rest.len()));
        // b2nd turns arrow-ipc's own panics into errors with `catch_unwind`; libfuzzer-sys's
        // panic hook aborts on any panic, caught or not, so a silent hook stands for the
        // calls (a panic b2nd does not catch still unwinds out of the target: a crash).
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let _ = b2nd::__fuzz::arrow_schema(schema);
        let alone = b2nd::__fuzz::arrow_block(block, None);
        let with_schema = b2nd::__fuzz::arrow_block(block, Some(schema));
        std::panic::set_hook(hook);
        // A block that is a whole stream is read as one, whatever the schema.
        if let Ok(n) = alone {
            assert_eq!(
                with_schema,
                Ok(n),
                "a stream read otherwise with a schema beside it"
            );
        }
    }
    #[cfg(not(feature = "arrow"))]
    let _ = data;
}
