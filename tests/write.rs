//! Writing: round trips through our reader for every fixture's dtype and shape, geometry,
//! codecs, filters, targets, the streaming writer and attributes; refusals leave nothing.
//!
//! With `B2ND_WRITE_OUT=DIR`, the written files are kept in DIR with `written.json`
//! describing them, for `scripts/check_written.py` (python-blosc2 opens every one).

mod common;

use std::path::{Path, PathBuf};

use b2nd::write::{delete_attrs, set_attrs, ArrayBuilder, Codec, Filter, Target};
use b2nd::{Array, Dtype, Error, Format, Value};
use common::*;
use serde_json::{json, Value as J};

struct Out {
    dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    entries: Vec<J>,
}

impl Out {
    fn new() -> Out {
        match std::env::var_os("B2ND_WRITE_OUT") {
            Some(d) => {
                std::fs::create_dir_all(&d).unwrap();
                Out {
                    dir: PathBuf::from(d),
                    _tmp: None,
                    entries: Vec::new(),
                }
            }
            None => {
                let t = tempfile::tempdir().unwrap();
                Out {
                    dir: t.path().to_path_buf(),
                    _tmp: Some(t),
                    entries: Vec::new(),
                }
            }
        }
    }

    /// Record a written file for the python check.
    #[allow(clippy::too_many_arguments)]
    fn record(&mut self, name: &str, a: &Array, raw: &[u8], meta_hex: String) {
        std::fs::write(self.dir.join(format!("{name}.raw")), raw).unwrap();
        let (slots, metas) = a.filter_slots();
        self.entries.push(json!({
            "name": name,
            "path": Path::new(a.source()).file_name().unwrap().to_string_lossy(),
            "expected": format!("{name}.raw"),
            "format": a.format().name(),
            "shape": a.shape(), "chunks": a.chunks(), "blocks": a.blocks(),
            "dtype": a.dtype_str(), "codec": a.codec_name(), "clevel": a.clevel(),
            "codec_meta": a.codec_meta(),
            "filters": slots, "filters_meta": metas,
            "meta_hex": meta_hex,
            "attrs": a.attrs().unwrap().iter().map(|(k, v)| (k.clone(), attr_json(v))).collect::<serde_json::Map<_, _>>(),
        }));
    }

    /// Record `a` as written, with its raw bytes and the bytes of its `b2nd` metalayer.
    fn record_array(&mut self, name: &str, a: &Array) {
        let raw = a.read_bytes().unwrap();
        // The metalayer bytes as written.
        let mb = a.metalayer("b2nd").expect("a b2nd metalayer");
        self.record(name, a, &raw, hex(&mb));
    }

    fn save(&self, file: &str) {
        if self._tmp.is_none() {
            let j = json!({ "files": self.entries });
            std::fs::write(
                self.dir.join(file),
                serde_json::to_string_pretty(&j).unwrap(),
            )
            .unwrap();
        }
    }
}

/// An attribute value as JSON, the form scripts/check_written.py gives python-blosc2's
/// decoded value: lists as arrays, tuples and sets tagged (sets sorted), bytes and NumPy
/// arrays as tagged hex, complex numbers as `[re, im]`.
fn attr_json(v: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::Nil => J::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!(i),
        Value::UInt(u) => json!(u),
        Value::Float(f) => json!(f),
        Value::Str(s) => json!(s),
        Value::Bytes(b) => json!({ "bytes_hex": hex(b) }),
        Value::Array(a) => J::Array(a.iter().map(attr_json).collect()),
        Value::Tuple(a) => json!({ "tuple": a.iter().map(attr_json).collect::<Vec<_>>() }),
        Value::Set(a) => {
            let mut items: Vec<J> = a.iter().map(attr_json).collect();
            items.sort_by_key(|j| j.to_string());
            json!({ "set": items })
        }
        Value::Map(m) => J::Object(
            m.iter()
                .map(|(k, v)| {
                    let k = match k {
                        Value::Str(s) => s.clone(),
                        other => attr_json(other).to_string(),
                    };
                    (k, attr_json(v))
                })
                .collect(),
        ),
        Value::Complex { re, im } => json!([re, im]),
        Value::NdArray { dtype, shape, data } => {
            json!({ "ndarray": { "dtype": dtype, "shape": shape, "data_hex": hex(data) } })
        }
        Value::Ext { code, data } => json!({ "ext": code, "data_hex": hex(data) }),
        other => panic!("attribute value this test does not record: {other:?}"),
    }
}

/// Attributes of every kind b2nd writes, recorded by value for python-blosc2 to decode
/// (scripts/check_written.py compares each value).
#[test]
fn attributes_for_python() {
    let mut out = Out::new();
    let p = out.dir.join("attrs_every_kind.b2nd");
    let _ = std::fs::remove_file(&p);
    let attrs: Vec<(&str, Value)> = vec![
        ("nil", Value::Nil),
        ("t", Value::Bool(true)),
        ("neg", Value::Int(-1234567890123)),
        ("big", Value::UInt(u64::MAX)),
        ("pi", Value::Float(std::f64::consts::PI)),
        ("unit", Value::Str("m/s²".into())),
        ("raw", Value::Bytes(vec![0, 1, 255])),
        (
            "list",
            Value::Array(vec![Value::Int(1), Value::Str("x".into()), Value::Nil]),
        ),
        (
            "tuple",
            Value::Tuple(vec![Value::Float(0.5), Value::Bool(false)]),
        ),
        (
            "map",
            Value::Map(vec![
                (Value::Str("a".into()), Value::Int(1)),
                (
                    Value::Str("nested".into()),
                    Value::Map(vec![(Value::Str("b".into()), Value::Array(vec![]))]),
                ),
            ]),
        ),
        ("z", Value::Complex { re: 1.5, im: -2.0 }),
        ("set", Value::Set(vec![Value::Int(3), Value::Int(7)])),
        (
            "nd",
            Value::NdArray {
                dtype: "<i4".into(),
                shape: vec![2, 2],
                data: [1i32, -2, 3, 4]
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            },
        ),
    ];
    let mut b = ArrayBuilder::for_type::<f32>(&[3, 4])
        .chunks(&[2, 4])
        .blocks(&[1, 4]);
    for (k, v) in &attrs[..7] {
        b = b.attr(k, v.clone());
    }
    let data: Vec<f32> = (0..12).map(|i| i as f32 / 3.0).collect();
    b.write(Target::File(p.clone()), &data).unwrap();
    // The rest through a later change, and one replaced.
    set_attrs(&p, &attrs[7..]).unwrap();
    set_attrs(&p, &[("unit", Value::Str("km/h".into()))]).unwrap();
    let a = Array::open(&p).unwrap();
    assert_eq!(a.attr_names().len(), attrs.len());
    assert_eq!(a.attr("unit").unwrap(), Some(Value::Str("km/h".into())));
    out.record_array("attrs_every_kind", &a);
    // What python must decode: the values given, not b2nd's reading of them.
    let mut intended: serde_json::Map<String, serde_json::Value> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), attr_json(v)))
        .collect();
    intended.insert("unit".into(), json!("km/h"));
    out.entries.last_mut().unwrap()["attrs"] = serde_json::Value::Object(intended);
    out.save("written-attrs.json");
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Fixtures whose `b2nd` metalayer python-blosc2 did not write as it writes new arrays
/// (crafted bytes, older layouts): b2nd writes today's python-blosc2 bytes for them.
const PYTHON_META_DIFFERS: &[&str] = &[
    // 6 elements and the draft dtype name `int32` (python-blosc2 before 2.0 final)
    "legacy_b2nd_draft6_name",
];

/// Readable fixtures with their data, dtype and shape.
fn sources() -> Vec<(String, Array, Vec<u8>)> {
    fixtures()
        .into_iter()
        .filter(|f| f["ok"] == true && f.get("supported").and_then(|s| s.as_bool()).unwrap_or(true))
        .filter(|f| f["format"] == "b2nd")
        .map(|f| {
            let name = f["name"].as_str().unwrap().to_string();
            let a = open_named(&name);
            let raw = a.read_bytes().unwrap();
            (name, a, raw)
        })
        .collect()
}

#[test]
fn round_trip_every_fixture_dtype_and_shape() {
    let mut out = Out::new();
    let mut n = 0;
    let mut meta_compared = 0;
    for (i, (name, src, raw)) in sources().into_iter().enumerate() {
        // Same geometry as the source, and the default geometry; vary codecs and targets.
        let codecs = [Codec::Zstd, Codec::Lz4, Codec::BloscLz, Codec::Lz4hc];
        let mut b = ArrayBuilder::new(src.shape(), src.dtype().clone())
            .codec(codecs[i % 4])
            .clevel((i % 10) as u8);
        if i % 2 == 0 && src.nitems() > 0 {
            b = b.chunks(src.chunks()).blocks(src.blocks());
        }
        let file = out.dir.join(format!("w_{name}.b2nd"));
        let _ = std::fs::remove_file(&file);
        b.clone()
            .write_bytes(Target::File(file.clone()), &raw)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let a = Array::open(&file).unwrap();
        assert_eq!(a.read_bytes().unwrap(), raw, "{name}");
        assert_eq!(a.dtype(), src.dtype(), "{name}");
        assert_eq!(a.dtype_str(), src.dtype().to_numpy_str(), "{name}");
        assert_eq!(a.shape(), src.shape());
        assert_eq!(a.codec_name(), ["zstd", "lz4", "blosclz", "lz4hc"][i % 4]);
        assert_eq!(a.clevel() as usize, i % 10);
        // Metalayer bytes: exactly what python-blosc2 wrote for this geometry and dtype, read
        // from its committed file (not from b2nd's own encoder).
        let ours = b2nd::SChunk::open(&file)
            .unwrap()
            .metalayer("b2nd")
            .unwrap_or_else(|| panic!("{name}: no b2nd metalayer written"));
        if i % 2 == 0 && src.nitems() > 0 {
            let f = fixture(&name);
            let p = data_dir().join(f["path"].as_str().unwrap());
            let py = b2nd::SChunk::open_at(&p, f["offset"].as_u64().unwrap_or(0))
                .unwrap()
                .metalayer("b2nd")
                .unwrap();
            if PYTHON_META_DIFFERS.contains(&name.as_str()) {
                assert_ne!(ours, py, "{name}: listed as differing");
            } else {
                assert_eq!(
                    ours, py,
                    "{name}: metalayer bytes differ from python-blosc2's"
                );
                meta_compared += 1;
            }
        }
        let want = ours;
        if matches!(src.dtype(), Dtype::Unicode { .. }) {
            // python-blosc2's default for strings: SHUFFLE in 4-byte groups.
            assert_eq!(
                a.filter_slots(),
                ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4]),
                "{name}"
            );
        }
        out.record(&format!("w_{name}"), &a, &raw, hex(&want));
        // In memory: the same bytes.
        let mem = b.bytes_to_vec(&raw).unwrap();
        assert_eq!(
            Array::from_bytes(mem).unwrap().read_bytes().unwrap(),
            raw,
            "{name} (memory)"
        );
        n += 1;
    }
    assert!(n > 100, "only {n} fixtures round-tripped");
    assert!(
        meta_compared > 40,
        "only {meta_compared} metalayers compared with python-blosc2's"
    );
    out.save("written.json");
}

fn ramp_f64(n: usize) -> Vec<f64> {
    (0..n).map(|i| (i as f64 * 0.37).sin() * 1000.0).collect()
}

#[test]
fn geometry_codecs_filters_and_sparse() {
    let mut out = Out::new();
    let shapes: &[(&[u64], &[u64], &[u64])] = &[
        (&[], &[], &[]),
        (&[1], &[1], &[1]),
        (&[1000], &[300], &[70]),
        (&[37, 23], &[10, 7], &[3, 5]),
        (&[9, 8, 7], &[4, 8, 3], &[4, 3, 2]),
        (&[5, 4, 3, 2], &[2, 4, 3, 1], &[1, 2, 3, 1]),
        (&[0, 5], &[1, 5], &[1, 5]),
        (
            &[2; 16],
            &[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 2, 2],
            &[1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1, 2, 1],
        ),
        // Blocks that tile a chunk in (2, 2) squares, not rows: the chunk is not C order
        // (b2nd once wrote and read these as if it were; found by the differential test).
        (&[2, 8], &[2, 8], &[2, 2]),
        (&[3, 3, 2, 1, 8], &[1, 3, 2, 1, 8], &[1, 3, 2, 1, 2]),
        (
            &[3, 1, 2, 1, 2, 1, 2, 1, 3],
            &[2, 1, 1, 1, 2, 1, 1, 1, 2],
            &[1, 1, 1, 1, 1, 1, 1, 1, 2],
        ),
    ];
    let pipelines: Vec<Vec<Filter>> = vec![
        vec![],
        vec![Filter::Shuffle],
        vec![Filter::Bitshuffle],
        vec![Filter::Delta],
        vec![Filter::Delta, Filter::Shuffle],
        vec![Filter::TruncPrec(20), Filter::Shuffle],
        vec![Filter::Shuffle, Filter::Bitshuffle],
    ];
    let mut k = 0;
    for (shape, chunks, blocks) in shapes {
        let n: u64 = shape.iter().product();
        let data = ramp_f64(n as usize);
        for (pi, p) in pipelines.iter().enumerate() {
            for sparse in [false, true] {
                k += 1;
                let name = format!("geom_{k}");
                let path = out.dir.join(format!("{name}.b2nd"));
                let _ = std::fs::remove_dir_all(&path);
                let _ = std::fs::remove_file(&path);
                let t = if sparse {
                    Target::Sparse(path.clone())
                } else {
                    Target::File(path.clone())
                };
                ArrayBuilder::for_type::<f64>(shape)
                    .chunks(chunks)
                    .blocks(blocks)
                    .filters(p)
                    .codec([Codec::Zstd, Codec::Lz4, Codec::BloscLz][pi % 3])
                    .clevel(9)
                    .threads(b2nd::Threads::count(1 + k % 3).unwrap())
                    .write(t, &data)
                    .unwrap_or_else(|e| panic!("{shape:?} {p:?}: {e}"));
                let a = Array::open(&path).unwrap();
                assert_eq!(
                    a.storage().name(),
                    if sparse { "sparse" } else { "contiguous" }
                );
                let got: Vec<f64> = a.read().unwrap();
                if p.iter().any(|f| matches!(f, Filter::TruncPrec(_))) {
                    for (g, w) in got.iter().zip(&data) {
                        assert!((g - w).abs() <= w.abs() * 1e-5 + 1e-9, "{g} vs {w}");
                    }
                } else {
                    assert_eq!(got, data, "{shape:?} {p:?} sparse={sparse}");
                }
                let names: Vec<String> = a.filter_names();
                let want: Vec<&str> = p
                    .iter()
                    .map(|f| match f {
                        Filter::Shuffle => "shuffle",
                        Filter::Bitshuffle => "bitshuffle",
                        Filter::Delta => "delta",
                        Filter::TruncPrec(_) => "trunc_prec",
                        Filter::ShuffleBytes(_) => "shuffle",
                        Filter::Bytedelta => "bytedelta",
                        Filter::NdCell(_) => "ndcell",
                        Filter::NdMean(_) => "ndmean",
                        other => panic!("no name for {other:?}"),
                    })
                    .collect();
                assert_eq!(names, want);
                out.record_array(&name, &a);
            }
        }
    }
    out.save("written-geometry.json");
}

#[test]
fn byte_group_shuffle_as_python_writes_it() {
    // SHUFFLE with a group width other than the item size is done in Rust (c-blosc2 2.15
    // shuffles by item size); python-blosc2 must read the same values back.
    let mut out = Out::new();
    let noise = common::noise;
    let text: Vec<u8> = (0..5000u32)
        .flat_map(|i| {
            let s = format!("id-{:05}", i * 7);
            let mut b: Vec<u8> = s.chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
            b.resize(7 * 4, 0);
            b
        })
        .collect();
    let ramp: Vec<u8> = (0..3000u64).flat_map(|i| (i * 3).to_le_bytes()).collect();
    let small: Vec<u8> = (0..4000u16).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let floats: Vec<u8> = (0..20000u32)
        .flat_map(|i| ((i as f32 * 0.01).sin() * 100.0).to_le_bytes())
        .collect();
    type Case<'a> = (&'a str, &'a str, Vec<u8>, Option<Vec<Filter>>, bool);
    let one = |f: Filter| Some(vec![f]);
    let cases: Vec<Case> = vec![
        // (name, dtype, data, filters (None = default), sparse)
        ("bs_u7_default", "<U7", text.clone(), None, false),
        (
            "bs_u7_sparse",
            "<U7",
            text,
            one(Filter::ShuffleBytes(4)),
            true,
        ),
        (
            "bs_f8_by2",
            "<u8",
            ramp,
            one(Filter::ShuffleBytes(2)),
            false,
        ),
        (
            "bs_u2_by8",
            "<u2",
            small,
            one(Filter::ShuffleBytes(8)),
            false,
        ),
        // Incompressible: c-blosc2 stores chunks uncompressed, unfiltered.
        (
            "bs_noise_by2",
            "<u4",
            noise(40000),
            one(Filter::ShuffleBytes(2)),
            false,
        ),
        // Width equal to the item size: plain c-blosc2 shuffle, meta recorded.
        (
            "bs_u4_by4",
            "<u4",
            noise(400),
            one(Filter::ShuffleBytes(4)),
            false,
        ),
        // python-blosc2's [SHUFFLE, BYTEDELTA] for floats, and variants.
        (
            "bd_f4",
            "<f4",
            floats.clone(),
            Some(vec![Filter::Shuffle, Filter::Bytedelta]),
            false,
        ),
        (
            "bd_f4_sparse",
            "<f4",
            floats.clone(),
            Some(vec![Filter::Shuffle, Filter::Bytedelta]),
            true,
        ),
        (
            "bd_f4_by2",
            "<f4",
            floats.clone(),
            Some(vec![Filter::ShuffleBytes(2), Filter::Bytedelta]),
            false,
        ),
        ("bd_f4_alone", "<f4", floats, one(Filter::Bytedelta), false),
        // A byte-group SHUFFLE before a BITSHUFFLE: both done in Rust.
        (
            "bits_after_by2_u8",
            "<u8",
            (0..3000u64)
                .flat_map(|i| (i * 5 / 7).to_le_bytes())
                .collect(),
            Some(vec![Filter::ShuffleBytes(2), Filter::Bitshuffle]),
            false,
        ),
    ];
    for (name, dt, data, filters, sparse) in cases {
        let dtype = Dtype::parse(dt).unwrap();
        let isz = dtype.itemsize() as u8;
        let n = (data.len() / dtype.itemsize()) as u64;
        let path = out.dir.join(format!("{name}.b2nd"));
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        let mut b = ArrayBuilder::new(&[n], dtype.clone())
            .chunks(&[n.div_ceil(3)])
            .blocks(&[n.div_ceil(3).div_ceil(4)])
            .threads(b2nd::Threads::count(2).unwrap());
        if let Some(f) = &filters {
            b = b.filters(f);
        }
        let t = if sparse {
            Target::Sparse(path.clone())
        } else {
            Target::File(path.clone())
        };
        b.write_bytes(t, &data)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let a = Array::open(&path).unwrap();
        assert_eq!(a.read_bytes().unwrap(), data, "{name}");
        // The default sits in python-blosc2's slot 5; explicit filters fill slots from 0.
        let want = match &filters {
            None => ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4]),
            Some(fs) => {
                let (mut ids, mut metas) = ([0u8; 6], [0u8; 6]);
                for (i, f) in fs.iter().enumerate() {
                    (ids[i], metas[i]) = match f {
                        Filter::Shuffle => (1, 0),
                        Filter::ShuffleBytes(w) => (1, *w),
                        Filter::Bytedelta => (35, isz),
                        Filter::Bitshuffle => (2, 0),
                        _ => unreachable!(),
                    };
                }
                (ids, metas)
            }
        };
        assert_eq!(a.filter_slots(), want, "{name}");
        // The metalayer bytes as written.
        let mb = a.metalayer("b2nd").expect("a b2nd metalayer");
        out.record(name, &a, &data, hex(&mb));
    }
    // Done in Rust, they combine only with shuffles and BITSHUFFLE.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.b2nd");
    for fs in [
        vec![Filter::ShuffleBytes(2), Filter::Delta],
        vec![Filter::Delta, Filter::Bytedelta],
    ] {
        assert!(ArrayBuilder::for_type::<f64>(&[10])
            .filters(&fs)
            .write(Target::File(p.clone()), &[0.5; 10])
            .is_err());
        assert!(!p.exists());
    }
    assert_eq!("bytedelta".parse::<Filter>().unwrap(), Filter::Bytedelta);
    assert_eq!(
        "shuffle:4".parse::<Filter>().unwrap(),
        Filter::ShuffleBytes(4)
    );
    assert!("shuffle:0".parse::<Filter>().is_err());
    out.save("written-shuffle.json");
}

#[test]
fn zero_chunks_are_special_and_caterva_flavour_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = vec![0i32; 100];
    data[95] = 7;
    let p = dir.path().join("z.b2nd");
    ArrayBuilder::for_type::<i32>(&[100])
        .chunks(&[10])
        .blocks(&[5])
        .write(Target::File(p.clone()), &data)
        .unwrap();
    let a = Array::open(&p).unwrap();
    assert_eq!(a.read::<i32>().unwrap(), data);
    // Nine zero-special chunks take no data bytes: far smaller than ten compressed chunks.
    assert!(a.cbytes() < 200, "cbytes {}", a.cbytes());
    let c = dir.path().join("c.b2nd");
    ArrayBuilder::for_type::<i32>(&[100])
        .format(Format::Caterva)
        .write(Target::File(c.clone()), &data)
        .unwrap();
    let a = Array::open(&c).unwrap();
    assert_eq!(a.format(), Format::Caterva);
    assert_eq!(a.dtype_str(), "|S4");
    assert_eq!(
        a.read_bytes().unwrap(),
        bytemuck::cast_slice::<i32, u8>(&data)
    );
}

#[test]
fn streaming_writer_in_odd_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.b2nd");
    let shape = [101u64, 13, 7];
    let n = shape.iter().product::<u64>() as usize;
    let data: Vec<u16> = (0..n).map(|i| (i * 7 % 65521) as u16).collect();
    let bytes: &[u8] = bytemuck::cast_slice(&data);
    let mut w = ArrayBuilder::for_type::<u16>(&shape)
        .chunks(&[10, 13, 4])
        .blocks(&[3, 5, 4])
        .create(Target::File(p.clone()))
        .unwrap();
    let mut pos = 0;
    let mut step = 1;
    while pos < bytes.len() {
        let e = (pos + step).min(bytes.len());
        w.push(&bytes[pos..e]).unwrap();
        pos = e;
        step = step * 3 % 4097 + 1;
    }
    assert!(matches!(w.push(&[0]), Err(Error::InvalidArgument(_))));
    w.finish().unwrap();
    assert_eq!(Array::open(&p).unwrap().read::<u16>().unwrap(), data);
    // Finishing early is an error and leaves nothing.
    let q = dir.path().join("short.b2nd");
    let mut w = ArrayBuilder::for_type::<u16>(&shape)
        .create(Target::File(q.clone()))
        .unwrap();
    w.push(&bytes[..1000]).unwrap();
    assert!(w.finish().is_err());
    assert!(!q.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "temporary files left"
    );
}

#[test]
fn attributes_new_and_existing_files() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a.b2nd");
    ArrayBuilder::for_type::<u8>(&[4])
        .attr("unit", Value::Str("m".into()))
        .attr("scale", Value::Float(0.5))
        .attr(
            "t",
            Value::Tuple(vec![Value::Int(1), Value::Str("x".into())]),
        )
        .write(Target::File(p.clone()), &[1u8, 2, 3, 4])
        .unwrap();
    let a = Array::open(&p).unwrap();
    assert_eq!(a.attr("unit").unwrap(), Some(Value::Str("m".into())));
    assert_eq!(a.attr("scale").unwrap(), Some(Value::Float(0.5)));
    drop(a);
    set_attrs(
        &p,
        &[("unit", Value::Str("km".into())), ("n", Value::Int(3))],
    )
    .unwrap();
    delete_attrs(&p, &["scale"]).unwrap();
    let a = Array::open(&p).unwrap();
    assert_eq!(a.attr("unit").unwrap(), Some(Value::Str("km".into())));
    assert_eq!(a.attr("n").unwrap(), Some(Value::Int(3)));
    assert_eq!(a.attr("scale").unwrap(), None);
    assert_eq!(a.read::<u8>().unwrap(), vec![1, 2, 3, 4]);
    assert!(delete_attrs(&p, &["nope"]).is_err());
    // Sparse frames too.
    let s = dir.path().join("s.b2nd");
    ArrayBuilder::for_type::<u8>(&[40])
        .chunks(&[10])
        .blocks(&[5])
        .write(Target::Sparse(s.clone()), &[9u8; 40])
        .unwrap();
    set_attrs(&s, &[("k", Value::Bool(true))]).unwrap();
    let a = Array::open(&s).unwrap();
    assert_eq!(a.attr("k").unwrap(), Some(Value::Bool(true)));
    assert_eq!(a.read::<u8>().unwrap(), vec![9u8; 40]);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
}

#[test]
fn bad_options_are_refused_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.b2nd");
    let t = || Target::File(p.clone());
    let d = vec![0f32; 100];
    let b = || ArrayBuilder::for_type::<f32>(&[10, 10]);
    let cases: Vec<(&str, b2nd::Result<()>)> = vec![
        ("rank", b().chunks(&[5]).write(t(), &d)),
        ("zero chunk", b().chunks(&[0, 5]).write(t(), &d)),
        (
            "zero block",
            b().chunks(&[5, 5]).blocks(&[0, 5]).write(t(), &d),
        ),
        (
            "block > chunk",
            b().chunks(&[5, 5]).blocks(&[6, 5]).write(t(), &d),
        ),
        ("clevel", b().clevel(10).write(t(), &d)),
        (
            "delta second",
            b().filters(&[Filter::Shuffle, Filter::Delta])
                .write(t(), &d),
        ),
        (
            "trunc on ints",
            ArrayBuilder::for_type::<i32>(&[3])
                .filters(&[Filter::TruncPrec(3)])
                .write(t(), &[1, 2, 3]),
        ),
        ("too few bytes", b().write_bytes(t(), &[0u8; 10])),
        ("wrong type", b().write(t(), &[0f64; 100])),
    ];
    for (what, r) in cases {
        assert!(r.is_err(), "{what} accepted");
        assert!(!p.exists(), "{what} left a file");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert!("snappy".parse::<Codec>().is_err());
    assert!("nofilter".parse::<Filter>().is_err());
    // Existing targets are kept unless overwrite is asked for.
    std::fs::write(&p, b"keep me").unwrap();
    assert!(matches!(
        b().write(t(), &d),
        Err(Error::TargetExists { .. })
    ));
    assert_eq!(std::fs::read(&p).unwrap(), b"keep me");
    b().overwrite(true).write(t(), &d).unwrap();
    assert_eq!(Array::open(&p).unwrap().read::<f32>().unwrap(), d);
}

#[test]
fn structured_and_string_dtypes_from_strings() {
    let dir = tempfile::tempdir().unwrap();
    for (i, dt) in [
        "[('a', '<i4'), ('b', '<f8'), ('c', 'S3')]",
        "<U5",
        "|S7",
        ">i8",
        "<M8[ns]",
        "('<i4', (2, 2))",
    ]
    .iter()
    .enumerate()
    {
        let dtype = Dtype::parse(dt).unwrap();
        let n = 23usize;
        let raw: Vec<u8> = (0..n * dtype.itemsize())
            .map(|j| (j * 31 % 251) as u8)
            .collect();
        let p = dir.path().join(format!("d{i}.b2nd"));
        ArrayBuilder::with_dtype_str(&[n as u64], dt)
            .unwrap()
            .chunks(&[10])
            .blocks(&[4])
            .write_bytes(Target::File(p.clone()), &raw)
            .unwrap();
        let a = Array::open(&p).unwrap();
        assert_eq!(a.dtype_str(), *dt);
        assert_eq!(a.read_bytes().unwrap(), raw);
    }
}

#[test]
fn streaming_whole_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let shape = [23u64, 17];
    let data: Vec<i64> = (0..23 * 17).map(|i| i * i - 100).collect();
    let src = dir.path().join("src.b2nd");
    let b = ArrayBuilder::for_type::<i64>(&shape)
        .chunks(&[10, 6])
        .blocks(&[4, 5]);
    b.clone().write(Target::File(src.clone()), &data).unwrap();
    let g = Array::open(&src).unwrap().geometry().clone();
    let dst = dir.path().join("dst.b2nd");
    let mut w = b.create(Target::File(dst.clone())).unwrap();
    for c in 0..g.nchunks() {
        let region = g.chunk_region(c);
        let (o, e) = (region.start(), region.shape());
        let mut part = Vec::new();
        for r in o[0]..o[0] + e[0] {
            for k in o[1]..o[1] + e[1] {
                part.extend_from_slice(&data[(r * 17 + k) as usize].to_ne_bytes());
            }
        }
        w.push_chunk(&part).unwrap();
    }
    assert!(w.push_chunk(&[0u8; 8]).is_err());
    w.finish().unwrap();
    assert_eq!(Array::open(&dst).unwrap().read::<i64>().unwrap(), data);
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_views_with_any_strides() {
    use ndarray::{s, Array2};
    let dir = tempfile::tempdir().unwrap();
    let a = Array2::from_shape_fn((40, 30), |(i, j)| (i * 100 + j) as f32);
    // A transposed, stepped view: non-standard strides.
    let v = a.slice(s![..;2, 1..;3]).reversed_axes();
    let p = dir.path().join("v.b2nd");
    ArrayBuilder::for_type::<f32>(&[v.shape()[0] as u64, v.shape()[1] as u64])
        .write_ndarray(Target::File(p.clone()), &v)
        .unwrap();
    let back = Array::open(&p).unwrap().read_ndarray::<f32>().unwrap();
    assert_eq!(back.into_dimensionality::<ndarray::Ix2>().unwrap(), v);
}

#[test]
fn large_scattered_blocks_read_back() {
    // Chunks that do not span whole rows are scattered into the output block by block
    // (blocks of 64 KiB and more), each while it is in cache; check every value, for
    // c-blosc2's filters and for a filter undone in Rust, for whole reads and boxes.
    let dir = tempfile::tempdir().unwrap();
    let shape = [20u64, 300, 100];
    let n = shape.iter().product::<u64>() as u32;
    let data: Vec<u32> = (0..n)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 12)
        .collect();
    for (k, f) in [Filter::Shuffle, Filter::ShuffleBytes(2)]
        .into_iter()
        .enumerate()
    {
        let p = dir.path().join(format!("s{k}.b2nd"));
        ArrayBuilder::for_type::<u32>(&shape)
            .chunks(&[8, 128, 64])
            .blocks(&[4, 64, 64])
            .filters(&[f])
            .threads(b2nd::Threads::count(2).unwrap())
            .write(Target::File(p.clone()), &data)
            .unwrap();
        for threads in [1, 2, 3] {
            let a = Array::open(&p)
                .unwrap()
                .with_threads(b2nd::Threads::count(threads).unwrap());
            assert_eq!(a.read::<u32>().unwrap(), data, "{f:?} threads {threads}");
            let (start, len) = ([3u64, 100, 10], [9u64, 150, 80]);
            let s: b2nd::Slice = "3:12,100:250,10:90".parse().unwrap();
            let b = a.read_slice_bytes(&s).unwrap();
            let mut want = Vec::new();
            for i in start[0]..start[0] + len[0] {
                for j in start[1]..start[1] + len[1] {
                    for l in start[2]..start[2] + len[2] {
                        let v = data[((i * 300 + j) * 100 + l) as usize];
                        want.extend_from_slice(&v.to_le_bytes());
                    }
                }
            }
            assert_eq!(b, want, "{f:?} box, threads {threads}");
        }
    }
}

#[test]
fn zlib_encoded_in_rust_as_python_reads_it() {
    // The linked c-blosc2 2.15 has no zlib: chunks are encoded in Rust (one stream per block,
    // zero blocks as runs, incompressible chunks stored as is). CI has python-blosc2 read
    // every file back (check_written.py).
    let mut out = Out::new();
    let ramp: Vec<i32> = (0..40_000).map(|i| (i / 7) % 977).collect();
    let noise: Vec<i32> = {
        let mut x = 0x2545_f491u32;
        (0..5_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as i32
            })
            .collect()
    };
    let mut zeros_then_ramp = vec![0i32; 20_000];
    zeros_then_ramp[15_000..]
        .iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = i as i32);
    type Case<'a> = (&'a str, &'a [i32], &'a [u64], &'a [u64], Vec<Filter>, u8);
    let cases: Vec<Case> = vec![
        (
            "zlib_ramp_shuffle",
            &ramp,
            &[200, 200],
            &[50, 64],
            vec![Filter::Shuffle],
            6,
        ),
        (
            "zlib_ramp_nofilter_c1",
            &ramp,
            &[200, 200],
            &[30, 200],
            vec![],
            1,
        ),
        (
            "zlib_ramp_bytedelta",
            &ramp,
            &[200, 200],
            &[64, 64],
            vec![Filter::Shuffle, Filter::Bytedelta],
            9,
        ),
        (
            "zlib_noise",
            &noise,
            &[5_000],
            &[1_000],
            vec![Filter::Shuffle],
            5,
        ),
        (
            "zlib_bitshuffle",
            &ramp,
            &[200, 200],
            &[50, 64],
            vec![Filter::Bitshuffle],
            5,
        ),
        (
            "zlib_shuffle_bitshuffle",
            &noise,
            &[5_000],
            &[1_000],
            vec![Filter::Shuffle, Filter::Bitshuffle],
            5,
        ),
        (
            "zlib_zero_blocks",
            &zeros_then_ramp,
            &[20_000],
            &[2_500],
            vec![Filter::ShuffleBytes(2)],
            3,
        ),
    ];
    for (name, data, shape, blocks, filters, clevel) in cases {
        let path = out.dir.join(format!("{name}.b2nd"));
        let _ = std::fs::remove_file(&path);
        let chunks: Vec<u64> = blocks.iter().map(|&b| b * 2).collect();
        ArrayBuilder::for_type::<i32>(shape)
            .chunks(&chunks)
            .blocks(blocks)
            .codec(Codec::Zlib)
            .clevel(clevel)
            .filters(&filters)
            .write(Target::File(path.clone()), data)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let a = Array::open(&path).unwrap();
        assert_eq!(a.read::<i32>().unwrap(), data, "{name}");
        assert_eq!(a.codec_name(), "zlib", "{name}");
        // Slices go through the same per-block decoding.
        let s: b2nd::Slice = "3:".parse().unwrap();
        let v = a.read_slice::<i32>(&s).unwrap();
        assert_eq!(
            v[..],
            data[3 * shape[1..].iter().product::<u64>() as usize..],
            "{name}"
        );
        out.record_array(name, &a);
    }
    // Filters zlib arrays cannot take (done by c-blosc2 only) are refused, leaving nothing.
    for f in [Filter::Delta, Filter::TruncPrec(10)] {
        let path = out.dir.join("zlib_refused.b2nd");
        let r = ArrayBuilder::for_type::<i32>(&[100])
            .codec(Codec::Zlib)
            .filters(&[f])
            .write(Target::File(path.clone()), &ramp[..100]);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{f:?}: {r:?}");
        assert!(!path.exists());
    }
    out.save("written-zlib.json");
}

#[test]
fn pipelines_readers_cannot_undo_are_not_written() {
    // A DELTA among three filters or more does not round-trip in python-blosc2 (nor is it
    // read by b2nd): refused before anything is written.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.b2nd");
    let data: Vec<i32> = (0..1000).collect();
    let r = ArrayBuilder::for_type::<i32>(&[1000])
        .filters(&[Filter::Delta, Filter::Shuffle, Filter::Bitshuffle])
        .write(Target::File(path.clone()), &data);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    assert!(!path.exists());
    ArrayBuilder::for_type::<i32>(&[1000])
        .filters(&[Filter::Delta, Filter::Shuffle])
        .write(Target::File(path.clone()), &data)
        .unwrap();
    assert_eq!(Array::open(&path).unwrap().read::<i32>().unwrap(), data);
}

#[test]
fn ndcell_and_ndmean_as_python_reads_them() {
    // Cell filters are done in Rust (c-blosc2 2.15 has no plugins); CI has python-blosc2 read
    // every file back (check_written.py), and has it write the NDMEAN array itself from the
    // same values: its read of its own file must equal its read of b2nd's, bit for bit.
    let mut out = Out::new();
    let ints: Vec<i32> = (0..30 * 41).map(|i| (i * 7) % 977).collect();
    let smooth: Vec<f64> = (0..24 * 24 * 6)
        .map(|i| (i as f64 * 0.01).sin() * 50.0)
        .collect();
    let cases: Vec<(&str, Vec<Filter>, Codec)> = vec![
        (
            "ndcell4_shuffle",
            vec![Filter::NdCell(4), Filter::Shuffle],
            Codec::Zstd,
        ),
        ("ndcell3_ragged_zlib", vec![Filter::NdCell(3)], Codec::Zlib),
        ("ndcell1_lz4", vec![Filter::NdCell(1)], Codec::Lz4),
    ];
    for (name, filters, codec) in cases {
        let path = out.dir.join(format!("{name}.b2nd"));
        let _ = std::fs::remove_file(&path);
        let blocks: &[u64] = if name.contains("ragged") {
            &[7, 13]
        } else {
            &[8, 16]
        };
        ArrayBuilder::for_type::<i32>(&[30, 41])
            .chunks(&[16, 32])
            .blocks(blocks)
            .codec(codec)
            .filters(&filters)
            .write(Target::File(path.clone()), &ints)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let a = Array::open(&path).unwrap();
        assert_eq!(a.read::<i32>().unwrap(), ints, "{name}");
        out.record_array(name, &a);
    }
    // NDMEAN (lossy): every item of a 3x3x3 cell is the cell's mean.
    let path = out.dir.join("ndmean3_f8.b2nd");
    let _ = std::fs::remove_file(&path);
    ArrayBuilder::for_type::<f64>(&[24, 24, 6])
        .chunks(&[12, 12, 6])
        .blocks(&[6, 6, 3])
        .filters(&[Filter::NdMean(3)])
        .write(Target::File(path.clone()), &smooth)
        .unwrap();
    let a = Array::open(&path).unwrap();
    let got: Vec<f64> = a.read().unwrap();
    let cell = |i: usize, j: usize, k: usize| got[(i * 24 + j) * 6 + k];
    assert_eq!(cell(0, 0, 0), cell(2, 2, 2));
    let mean: f64 = (0..3)
        .flat_map(|i| (0..3).flat_map(move |j| (0..3).map(move |k| (i, j, k))))
        .map(|(i, j, k)| smooth[(i * 24 + j) * 6 + k])
        .sum::<f64>()
        / 27.0;
    assert!(
        (cell(1, 1, 1) - mean).abs() < 1e-9,
        "{} vs {mean}",
        cell(1, 1, 1)
    );
    out.record_array("ndmean3_f8", &a);
    // The values given, for check_written.py to have python-blosc2 write them itself with the
    // same filters and geometry: its read of its own file must equal its read of b2nd's.
    std::fs::write(
        out.dir.join("ndmean3_f8.source.raw"),
        smooth
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    out.entries.last_mut().unwrap()["source"] = json!("ndmean3_f8.source.raw");
    // NDMEAN on integers, and cells the plugin cannot lay out, are refused, leaving nothing.
    let bad = out.dir.join("bad_cells.b2nd");
    let r = ArrayBuilder::for_type::<i32>(&[30, 41])
        .filters(&[Filter::NdMean(2)])
        .write(Target::File(bad.clone()), &ints);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let r = ArrayBuilder::for_type::<i32>(&[30, 41])
        .chunks(&[16, 32])
        .blocks(&[2, 2])
        .filters(&[Filter::NdCell(3)])
        .write(Target::File(bad.clone()), &ints);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    assert!(!bad.exists());
    out.save("written-cells.json");
}

/// The largest error a ZFP mode allows for these values in `ndim` dimensions. Accuracy mode
/// (meta = decimal exponent, c-blosc2's blosc2-zfp.c: tolerance `10^meta`): zfp guarantees the
/// tolerance. Precision `p` (meta + 5, 7, 9, 11 by dimension) and rate `r` bits per value
/// (meta % of the item's bits) bound the error relative to the largest magnitude of a block,
/// `2^emax`: `2^(emax + 2 ndim + 1 - p)` and `2^(emax + ndim + 3 - r)` (zfp's error analysis:
/// the transform gains at most 2 bits per dimension; the rate's bit planes are shared by the
/// 4^ndim values of a block). Measured here: accuracy 0.0091 (bound 0.1), precision 1.5e-4
/// (2.4e-4), rate f8 0.0058 (0.027), f4 3.8 (21.1).
fn zfp_error_bound(codec: Codec, values: &[f64], ndim: usize, is_f4: bool) -> f64 {
    let emax = values
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .log2()
        .ceil();
    let d = ndim as f64;
    match codec {
        Codec::ZfpAccuracy(e) => 10f64.powi(i32::from(e)),
        Codec::ZfpPrecision(m) => {
            let p = f64::from(m) + 3.0 + 2.0 * d;
            2f64.powf(emax + 2.0 * d + 1.0 - p)
        }
        Codec::ZfpRate(pct) => {
            let r = f64::from(pct) / 100.0 * if is_f4 { 32.0 } else { 64.0 };
            2f64.powf(emax + d + 3.0 - r)
        }
        other => panic!("not a ZFP codec: {other:?}"),
    }
}

#[test]
fn zfp_as_python_reads_it() {
    // ZFP is encoded in Rust; its chunks were checked byte-identical to python-blosc2's own for
    // the same data (scripts/diff_test.py), and CI has python-blosc2 read these back.
    let mut out = Out::new();
    let f8: Vec<f64> = (0..9 * 10 * 11)
        .map(|i| (i as f64 * 0.013).sin() * 1e3 + (i % 7) as f64)
        .collect();
    let f4: Vec<f32> = f8.iter().map(|&v| v as f32).collect();
    type Case = (&'static str, Codec, Vec<u64>, Vec<u64>, Vec<u64>);
    let cases: Vec<Case> = vec![
        (
            "zfp_acc_3d",
            Codec::ZfpAccuracy(-1),
            vec![9, 10, 11],
            vec![5, 6, 11],
            vec![5, 6, 7],
        ),
        (
            "zfp_prec_2d",
            Codec::ZfpPrecision(20),
            vec![90, 11],
            vec![40, 11],
            vec![9, 11],
        ),
        (
            "zfp_rate_1d",
            Codec::ZfpRate(30),
            vec![990],
            vec![400],
            vec![100],
        ),
        (
            "zfp_rate_4d",
            Codec::ZfpRate(50),
            vec![9, 10, 11, 1],
            vec![9, 10, 11, 1],
            vec![4, 5, 6, 4],
        ),
    ];
    for (name, codec, shape, chunks, blocks) in cases {
        if name.ends_with("4d") {
            // blocks may not exceed chunks: a last dimension of 1 cannot hold 4.
            let r = ArrayBuilder::for_type::<f64>(&shape)
                .chunks(&chunks)
                .blocks(&blocks)
                .codec(codec)
                .to_vec(&f8);
            assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
            continue;
        }
        for (t, is_f4) in [("f8", false), ("f4", true)] {
            let name = format!("{name}_{t}");
            let path = out.dir.join(format!("{name}.b2nd"));
            let _ = std::fs::remove_file(&path);
            let b = if is_f4 {
                ArrayBuilder::for_type::<f32>(&shape)
            } else {
                ArrayBuilder::for_type::<f64>(&shape)
            }
            .chunks(&chunks)
            .blocks(&blocks)
            .codec(codec);
            if is_f4 {
                b.write(Target::File(path.clone()), &f4)
            } else {
                b.write(Target::File(path.clone()), &f8)
            }
            .unwrap_or_else(|e| panic!("{name}: {e}"));
            let a = Array::open(&path).unwrap();
            assert_eq!(a.codec_name(), codec_name(codec), "{name}");
            assert!(
                a.filter_names().is_empty(),
                "{name}: {:?}",
                a.filter_names()
            );
            // Lossy within the mode's bound. The values written (f4 items: the f32 values).
            let got: Vec<f64> = if is_f4 {
                a.read::<f32>()
                    .unwrap()
                    .iter()
                    .map(|&v| f64::from(v))
                    .collect()
            } else {
                a.read::<f64>().unwrap()
            };
            let written: Vec<f64> = if is_f4 {
                f4.iter().map(|&v| f64::from(v)).collect()
            } else {
                f8.clone()
            };
            let err = got
                .iter()
                .zip(&written)
                .map(|(g, w)| (g - w).abs())
                .fold(0.0, f64::max);
            assert!(
                err > 0.0 || matches!(codec, Codec::ZfpPrecision(_)),
                "{name}: lossless?"
            );
            let bound = zfp_error_bound(codec, &written, shape.len(), is_f4);
            assert!(err <= bound, "{name}: error {err} over the bound {bound}");
            assert!(
                a.cbytes() < (f8.len() * if is_f4 { 4 } else { 8 }) as u64,
                "{name}"
            );
            out.record_array(&name, &a);
        }
    }
    // What blosc2-zfp cannot code is refused, leaving nothing: integers, big-endian floats,
    // filters, blocks under 4, 5 dimensions, a rate over 100 %, NaN.
    let bad = out.dir.join("bad_zfp.b2nd");
    let ints: Vec<i32> = (0..64).collect();
    let r = ArrayBuilder::for_type::<i32>(&[8, 8])
        .blocks(&[4, 4])
        .codec(Codec::ZfpRate(50))
        .write(Target::File(bad.clone()), &ints);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let small = vec![1.0f64; 64];
    for (codec, blocks, filters) in [
        (Codec::ZfpRate(50), vec![2u64, 4], vec![]),
        (Codec::ZfpRate(101), vec![4, 4], vec![]),
        (Codec::ZfpAccuracy(-2), vec![4, 4], vec![Filter::Shuffle]),
    ] {
        let r = ArrayBuilder::for_type::<f64>(&[8, 8])
            .chunks(&[8, 8])
            .blocks(&blocks)
            .codec(codec)
            .filters(&filters)
            .write(Target::File(bad.clone()), &small);
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "{codec:?}: {r:?}"
        );
    }
    let r = ArrayBuilder::for_type::<f64>(&[4, 4, 4, 4, 4])
        .blocks(&[4, 4, 4, 4, 4])
        .codec(Codec::ZfpPrecision(10))
        .write(Target::File(bad.clone()), &vec![1.0f64; 1024]);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    let mut nan = small.clone();
    nan[9] = f64::NAN;
    let r = ArrayBuilder::for_type::<f64>(&[8, 8])
        .blocks(&[4, 4])
        .codec(Codec::ZfpPrecision(10))
        .write(Target::File(bad.clone()), &nan);
    assert!(r.is_err(), "{r:?}");
    assert!(!bad.exists());
    out.save("written-zfp.json");
}

fn codec_name(c: Codec) -> &'static str {
    match c {
        Codec::ZfpAccuracy(_) => "zfp_acc",
        Codec::ZfpPrecision(_) => "zfp_prec",
        Codec::ZfpRate(_) => "zfp_rate",
        _ => "other",
    }
}

#[test]
fn like_push_items_and_in_memory_frames() {
    // ArrayBuilder::like copies geometry, dtype, codec and filters of python-blosc2's files;
    // the copy reads back equal.
    let mut copied = 0;
    for f in good_contiguous().iter().take(60) {
        let a = Array::open(data_dir().join(f["path"].as_str().unwrap())).unwrap();
        let raw = a.read_bytes().unwrap();
        let frame = match ArrayBuilder::like(&a).bytes_to_vec(&raw) {
            Ok(fr) => fr,
            Err(Error::InvalidArgument(_)) => continue, // e.g. a pipeline this crate refuses to write
            Err(e) => panic!("{}: {e}", f["name"]),
        };
        let b = Array::from_bytes(frame).unwrap();
        assert_eq!(b.read_bytes().unwrap(), raw, "{}", f["name"]);
        assert_eq!(
            (b.shape(), b.chunks(), b.blocks(), b.dtype()),
            (a.shape(), a.chunks(), a.blocks(), a.dtype()),
            "{}",
            f["name"]
        );
        if a.codec_name() != "zlib" || b.codec_name() == "zlib" {
            assert_eq!(b.codec_name(), a.codec_name(), "{}", f["name"]);
        }
        copied += 1;
    }
    assert!(copied >= 40, "{copied}");
    // Typed pushes, checked against the dtype; memory and file targets finish their own way.
    let mut w = ArrayBuilder::for_type::<i16>(&[6])
        .chunks(&[4])
        .create(Target::Memory)
        .unwrap();
    assert!(matches!(
        w.push_items(&[1i32]),
        Err(Error::TypeMismatch { .. })
    ));
    w.push_items(&[1i16, 2, 3]).unwrap();
    w.push_items(&[4i16, 5, 6]).unwrap();
    let a = Array::from_bytes(w.finish_to_vec().unwrap()).unwrap();
    assert_eq!(a.read::<i16>().unwrap(), [1, 2, 3, 4, 5, 6]);
    let mut w = ArrayBuilder::for_type::<i16>(&[1])
        .create(Target::Memory)
        .unwrap();
    w.push_items(&[7i16]).unwrap();
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f.b2nd");
    let mut w = ArrayBuilder::for_type::<i16>(&[1])
        .create(Target::File(p.clone()))
        .unwrap();
    w.push_items(&[7i16]).unwrap();
    assert!(matches!(w.finish_to_vec(), Err(Error::InvalidArgument(_))));
    assert!(!p.exists());
}

/// Arrays large enough for the appending thread (2 threads, 16 MiB or more, several slabs):
/// pushed in pieces that do not match the slabs, the frame is the one a single thread
/// writes, byte for byte (LZ4 here: b2nd lays its blocks out in order whatever the threads),
/// and reads back equal, in memory, as a file and as a sparse frame.
#[test]
fn the_appending_thread_writes_what_one_thread_writes() {
    let (rows, cols) = (48u64, 65_536u64); // 24 MiB of <f8, 12 slabs of one 2 MiB chunk
    let data: Vec<f64> = (0..rows * cols)
        .map(|i| ((i % 977) as f64).sin() * 100.0 + (i / 4096) as f64)
        .collect();
    let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
    let builder = |threads: b2nd::Threads| {
        ArrayBuilder::new(&[rows, cols], Dtype::parse("<f8").unwrap())
            .chunks(&[4, cols])
            .blocks(&[1, 8192])
            .codec(Codec::Lz4)
            .threads(threads)
    };
    let push = |mut w: b2nd::write::Writer| {
        for piece in bytes.chunks(3_000_017) {
            w.push(piece).unwrap();
        }
        w
    };
    let one = push(
        builder(b2nd::Threads::Single)
            .create(Target::Memory)
            .unwrap(),
    )
    .finish_to_vec()
    .unwrap();
    let two = push(
        builder(b2nd::Threads::count(2).unwrap())
            .create(Target::Memory)
            .unwrap(),
    )
    .finish_to_vec()
    .unwrap();
    assert!(one == two, "2 threads wrote another frame than 1");
    assert_eq!(Array::from_bytes(two).unwrap().read_bytes().unwrap(), bytes);
    let dir = tempfile::tempdir().unwrap();
    for sparse in [false, true] {
        let path = dir
            .path()
            .join(if sparse { "big_sparse" } else { "big.b2nd" });
        let t = if sparse {
            Target::Sparse(path.clone())
        } else {
            Target::File(path.clone())
        };
        push(builder(b2nd::Threads::count(2).unwrap()).create(t).unwrap())
            .finish()
            .unwrap();
        assert_eq!(
            Array::open(&path).unwrap().read_bytes().unwrap(),
            bytes,
            "{path:?}"
        );
    }
}

/// A write left in the page cache (`Durability::Process`) publishes the same frame as a
/// synced one (`Durability::Disk`): contiguous and sparse, of many MiB (a synced write sends
/// them to the disk MiB by MiB from a thread of its own), new and over an existing target.
#[test]
fn writes_of_either_durability_publish_the_same_frame() {
    let n = 3 << 20; // 12 MiB of <u4
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for sparse in [false, true] {
        let mut frames = Vec::new();
        for durability in [b2nd::Durability::Disk, b2nd::Durability::Process] {
            let path = dir.path().join(format!("{sparse}-{durability:?}"));
            let target = || {
                if sparse {
                    Target::Sparse(path.clone())
                } else {
                    Target::File(path.clone())
                }
            };
            let builder = || {
                ArrayBuilder::for_type::<u32>(&[n as u64])
                    .chunks(&[1 << 20])
                    .blocks(&[1 << 16])
                    .codec(Codec::Lz4)
                    .durability(durability)
            };
            builder()
                .write(target(), &data[..1000].repeat(n / 1000 + 1)[..n])
                .unwrap();
            builder().overwrite(true).write(target(), &data).unwrap();
            let a = Array::open(&path).unwrap();
            assert_eq!(a.read::<u32>().unwrap(), data, "{path:?}");
            frames.push(if sparse {
                let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&path)
                    .unwrap()
                    .map(|e| {
                        let e = e.unwrap();
                        let name = e.file_name().to_string_lossy().into_owned();
                        (name, std::fs::read(e.path()).unwrap())
                    })
                    .collect();
                files.sort();
                files
            } else {
                vec![(String::new(), std::fs::read(&path).unwrap())]
            });
        }
        assert!(frames[0] == frames[1], "sparse {sparse}: other bytes");
    }
    // Nothing but the four targets is left (no staging directory).
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["false-Disk", "false-Process", "true-Disk", "true-Process"]
    );
}
