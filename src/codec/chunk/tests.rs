use super::*;
use crate::format::chunk::{block_values, BlockValues};

fn header(flags: u8, nbytes: i32, blocksize: i32, cbytes: i32) -> Vec<u8> {
    let mut h = vec![0u8; 32];
    h[0] = 5;
    h[1] = 1;
    h[2] = flags;
    h[3] = 4;
    h[4..8].copy_from_slice(&nbytes.to_le_bytes());
    h[8..12].copy_from_slice(&blocksize.to_le_bytes());
    h[12..16].copy_from_slice(&cbytes.to_le_bytes());
    h
}

/// A chunk's one byte value is read from its header and stream sizes where c-blosc2
/// stored every stream as a run (and SHUFFLE at most moved the bytes), and equals its
/// decoded bytes; anything else, a bit-moving filter included, is `None`; a cut chunk is
/// an error, never a value.
#[test]
fn uniform_bytes_are_read_from_runs_without_decoding() {
    use crate::ffi::{Cctx, CompressParams};
    let compress_with = |compcode: u8, data: &[u8], typesize: i32, filter: u8| {
        let params = CompressParams {
            compcode,
            compcode_meta: 0,
            clevel: 5,
            typesize,
            blocksize: 4096,
            splitmode: 1,
            filters: [0, 0, 0, 0, 0, filter],
            filters_meta: [0; 6],
            nthreads: 1,
        };
        let mut chunk = Vec::new();
        Cctx::new(&params)
            .unwrap()
            .compress(data, &mut chunk)
            .unwrap();
        chunk
    };
    let compress =
        |data: &[u8], typesize: i32, filter: u8| compress_with(5, data, typesize, filter);
    let n = 4096 * 5 + 100; // a short last block
    let one_off_at = |at: usize| {
        let mut v = vec![1u8; n];
        v[at] = 0;
        v
    };
    let one_off = one_off_at(4096 * 3 + 17);
    // The one value of every block, when all blocks agree.
    let uniform_byte = |chunk: &[u8]| {
        let blocks = block_values(chunk).unwrap()?.values;
        let first = blocks[0]?;
        blocks.iter().all(|&b| b == Some(first)).then_some(first)
    };
    for (data, typesize, filter, want) in [
        (vec![1u8; n], 1, filters::SHUFFLE, Some(1)),
        (vec![1u8; n], 4, filters::SHUFFLE, Some(1)),
        (vec![0u8; n], 1, filters::NOFILTER, Some(0)),
        (vec![0xA5u8; n], 4, filters::NOFILTER, Some(0xA5)),
        (one_off, 1, filters::SHUFFLE, None),
        (vec![1u8; n], 4, 2, None), // BITSHUFFLE moves bits
        ((0..n).map(|i| i as u8).collect(), 1, filters::SHUFFLE, None),
        (vec![1u8; 10], 1, filters::SHUFFLE, Some(1)), // too short to compress: as is
    ] {
        let chunk = compress(&data, typesize, filter);
        assert_eq!(
            ChunkHeader::parse(&chunk).unwrap().memcpyed(),
            data.len() == 10
        );
        let got = uniform_byte(&chunk);
        assert_eq!(got, want, "typesize {typesize} filter {filter}");
        if let Some(v) = got {
            let mut out = vec![!v; data.len()];
            let d = Decoder::new(1)
                .decode(&mut chunk.clone(), &mut out, typesize as usize)
                .unwrap();
            if d == Decoded::Zeros {
                out.fill(0);
            }
            assert!(out.iter().all(|&b| b == v), "typesize {typesize} value {v}");
        }
    }
    // Items 1, 2, 3, 4 split into one stream per byte (LZ4): every stream a run, of four
    // values, so no block is one value.
    let items: Vec<u8> = (0..n).map(|i| (i % 4 + 1) as u8).collect();
    let split = block_values(&compress_with(1, &items, 4, filters::SHUFFLE))
        .unwrap()
        .unwrap();
    assert!(split.values.iter().all(Option::is_none));
    let runs = compress(&vec![1u8; n], 1, filters::SHUFFLE);
    for cut in [0, 10, 32, 40, runs.len() - 1] {
        assert!(block_values(&runs[..cut]).is_err(), "cut at {cut}");
    }
    // Per block: runs where stored as runs, `None` for the block holding the odd byte.
    let BlockValues {
        block_bytes: size,
        values: blocks,
    } = block_values(&compress(&one_off_at(4096 * 3 + 17), 1, 1))
        .unwrap()
        .unwrap();
    assert_eq!(size, 4096);
    assert_eq!(blocks, [Some(1), Some(1), Some(1), None, Some(1), Some(1)]);
    // Special chunks: zeros, and a repeated item whose bytes are (or are not) one value.
    let mut zeros = header(0x05, n as i32, 4096, 32);
    zeros[31] = 1 << 4;
    assert_eq!(uniform_byte(&zeros), Some(0));
    let mut value = header(0x05, n as i32, 4096, 36);
    value[31] = 3 << 4;
    value.extend_from_slice(&[9, 9, 9, 9]);
    assert_eq!(uniform_byte(&value), Some(9));
    value[34] = 8;
    assert_eq!(uniform_byte(&value), None);
}

/// A part of a chunk (consecutive whole blocks) decodes straight into its output, equal
/// to those bytes of the whole decoded chunk, for every filter the hook runs and with
/// block threads; the chunk-size destination C asks for is never written; blocks outside
/// the part, DELTA and uncompressed chunks are refused (`None`) or fail, never misread.
#[test]
fn parts_decode_straight_into_their_output() {
    use crate::ffi::{Cctx, CompressParams};
    let (typesize, block, nblocks) = (4usize, 4096usize, 7usize);
    let nbytes = block * nblocks - 100 * typesize; // a short last block
    let data: Vec<u8> = (0..nbytes / 4)
        .flat_map(|i| ((i as u32).wrapping_mul(2654435761) >> 20).to_le_bytes())
        .collect();
    let cases: [([u8; 6], [u8; 6]); 5] = [
        ([0; 6], [0; 6]),
        ([0, 0, 0, 0, 0, filters::SHUFFLE], [0; 6]),
        ([0, 0, 0, 0, 0, 2], [0; 6]), // BITSHUFFLE
        ([0, 0, 0, 0, 4, filters::SHUFFLE], [0, 0, 0, 0, 20, 0]), // TRUNC_PREC first
        ([0, 0, 0, 0, 0, filters::DELTA], [0; 6]),
    ];
    // zstd, items of 4 bytes, blocks of 4 KiB.
    let compress = |filters: [u8; 6], filters_meta: [u8; 6]| {
        let params = CompressParams {
            compcode: 5,
            compcode_meta: 0,
            clevel: 3,
            typesize: typesize as i32,
            blocksize: block as i32,
            splitmode: 1,
            filters,
            filters_meta,
            nthreads: 1,
        };
        let mut chunk = Vec::new();
        Cctx::new(&params)
            .unwrap()
            .compress(&data, &mut chunk)
            .unwrap();
        chunk
    };
    for (filters, meta) in cases {
        for threads in [1, 2] {
            let mut chunk = compress(filters, meta);
            let mut d = Decoder::new(threads);
            let whole = {
                let mut out = vec![0u8; nbytes];
                d.decode(&mut chunk.clone(), &mut out, typesize).unwrap();
                out
            };
            if filters[4] == 4 {
                // TRUNC_PREC kept 20 of the 23 mantissa bits.
                let cut: Vec<u8> = data
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| if i % 4 == 0 { b & !7 } else { b })
                    .collect();
                assert_eq!(whole, cut);
            } else {
                assert_eq!(whole, data, "{filters:?}");
            }
            for (first, n) in [(0, 1), (2, 3), (1, 5), (0, 6)] {
                let mut scratch = vec![0xABu8; nbytes];
                let mut out = vec![0u8; n * block];
                part(
                    &mut d,
                    &mut chunk,
                    &mut scratch,
                    typesize,
                    block,
                    first,
                    &mut out,
                )
                .unwrap();
                assert_eq!(
                    out,
                    whole[first * block..(first + n) * block],
                    "{filters:?}"
                );
                // DELTA parts are decoded another way (into the scratch, then copied).
                assert_eq!(
                    scratch.iter().all(|&b| b == 0xAB),
                    !filters.contains(&filters::DELTA),
                    "C wrote its destination: {filters:?}"
                );
            }
            // Not whole blocks, or past the last whole block: another way, same bytes.
            let mut scratch = vec![0u8; nbytes];
            let mut out = vec![0u8; block + 1];
            part(
                &mut d,
                &mut chunk,
                &mut scratch,
                typesize,
                block,
                0,
                &mut out,
            )
            .unwrap();
            assert_eq!(out, whole[..block + 1]);
            let mut out = vec![0u8; nbytes - 5 * block];
            part(
                &mut d,
                &mut chunk,
                &mut scratch,
                typesize,
                block,
                5,
                &mut out,
            )
            .unwrap();
            assert_eq!(out, whole[5 * block..]);
            // The chunk was left as it was (filter bytes put back).
            let mut again = vec![0u8; nbytes];
            d.decode(&mut chunk, &mut again, typesize).unwrap();
            assert_eq!(again, whole);
        }
    }
    // A corrupt block inside the part fails; outside the part it is never read.
    let mut chunk = compress([0, 0, 0, 0, 0, filters::SHUFFLE], [0; 6]);
    let bstart = |j: usize| {
        let at = EXTENDED_HEADER_LEN + 4 * j;
        u32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize
    };
    let (b3, b4) = (bstart(3), bstart(4));
    for b in &mut chunk[b3 + 8..b4] {
        *b ^= 0x5A;
    }
    let mut d = Decoder::new(1);
    let mut scratch = vec![0u8; nbytes];
    let mut out = vec![0u8; 2 * block];
    assert!(part(&mut d, &mut chunk, &mut scratch, 4, block, 2, &mut out).is_err());
    let mut out = vec![0u8; 3 * block];
    part(&mut d, &mut chunk, &mut scratch, 4, block, 0, &mut out).unwrap();
    assert_eq!(out, data[..3 * block]);
}

/// Decode the bytes of `chunk` from block `first` on into `out` through the one entry:
/// one run, its blocks touched, everything fetched.
fn part(
    d: &mut Decoder,
    chunk: &mut [u8],
    scratch: &mut [u8],
    typesize: usize,
    block: usize,
    first: usize,
    out: &mut [u8],
) -> Result<Decoded, ChunkError> {
    let nblocks = scratch.len().div_ceil(block);
    let last = (first * block + out.len()).div_ceil(block);
    let touched: Vec<bool> = (0..nblocks).map(|j| j >= first && j < last).collect();
    let runs = [(first * block, 0, out.len())];
    d.decode_into(
        chunk,
        typesize,
        Target::Runs(Runs {
            decoded: scratch,
            runs: &runs,
            out,
            touched: &touched,
            block_bytes: block,
            partial: false,
        }),
    )
}

#[test]
fn stored_as_is_chunks_with_a_dictionary_flag_are_copied() {
    // Stored-as-is LZ4 chunks flagged with a dictionary, as python-blosc2 4.14.1 writes
    // them: the first data bytes hold a valid-looking dictionary size where C looks for
    // one, or not. C 2.15 built a dictionary from the first, freed it on the second and
    // failed, and freed it again when the decoder was dropped ("double free or
    // corruption"); c-blosc2 3.x reads the first and refuses the second. The data of both
    // is the bytes after the header, copied in Rust.
    let chunk = |dict_size: i32| {
        let mut c = header(0x05 | 0x02 | (1 << 5), 400, 100, 432);
        c[31] = 0x01;
        c.resize(432, 7);
        c[32..36].copy_from_slice(&dict_size.to_le_bytes());
        c
    };
    let p = ChunkHeader::parse(&chunk(100)).unwrap();
    assert!(matches!(plan(&p, 400, 4, 432), Ok(Path::Copy)));
    let mut d = Decoder::new(1);
    let mut out = vec![0u8; 400];
    for size in [100, 100, 0, -1, 100] {
        let mut c = chunk(size);
        d.decode(&mut c, &mut out, 4).unwrap();
        assert_eq!(out, c[32..]);
    }
    drop(d);
    // One whose compressed size is not its data's plus the header's is refused, as C does.
    let mut short = chunk(100);
    short.truncate(431);
    short[12..16].copy_from_slice(&431u32.to_le_bytes());
    let p = ChunkHeader::parse(&short).unwrap();
    assert!(matches!(plan(&p, 400, 4, 431), Err(ChunkError::Corrupt(_))));
    // A special chunk flagged with a dictionary still never reaches C.
    let mut nan = header(0x05 | (1 << 5), 400, 100, 32);
    nan[31] = 0x01 | (2 << 4);
    let p = ChunkHeader::parse(&nan).unwrap();
    match plan(&p, 400, 4, 32) {
        Err(ChunkError::Unsupported("chunk format", why)) => {
            assert!(why.contains("dictionary"), "{why}")
        }
        other => panic!("planned: {:?}", other.err()),
    }
}

/// `h` (its sizes made `nbytes` decoded, 80 compressed) plans the Rust-filters path.
fn assert_rust_filters(h: &ChunkHeader, typesize: usize, nbytes: usize) {
    let mut h = h.clone();
    h.nbytes = nbytes;
    h.blocksize = nbytes / 4;
    match plan(&h, nbytes, typesize, 80) {
        Ok(Path::RustFilters) => {}
        other => panic!("typesize {typesize}: {:?}", other.map(|_| ()).err()),
    }
}

#[test]
fn plans() {
    // zstd (format 4), extended header, shuffle.
    let mut h = header(0x05 | (4 << 5), 400, 100, 80);
    h[21] = filters::SHUFFLE;
    let p = ChunkHeader::parse(&h).unwrap();
    // C unshuffles with SSE2; Rust when this CPU has AVX2.
    if kernels::Isa::best() == kernels::Isa::Avx2 {
        assert!(matches!(plan(&p, 400, 4, 80), Ok(Path::RustFilters)));
    } else {
        assert!(matches!(plan(&p, 400, 4, 80), Ok(Path::C)));
    }
    // BITSHUFFLE, alone or after SHUFFLE, likewise; DELTA stays with C.
    for (slots, rust) in [
        ([0, 0, 0, 0, 0, filters::BITSHUFFLE], true),
        ([filters::SHUFFLE, filters::BITSHUFFLE, 0, 0, 0, 0], true),
        ([filters::DELTA, 0, 0, 0, 0, 0], false),
    ] {
        let mut b = h.clone();
        b[16..22].copy_from_slice(&slots);
        let b = ChunkHeader::parse(&b).unwrap();
        let want_rust = rust && kernels::Isa::best() == kernels::Isa::Avx2;
        match plan(&b, 400, 4, 80) {
            Ok(Path::RustFilters) => assert!(want_rust, "{slots:?}"),
            Ok(Path::C) => assert!(!want_rust, "{slots:?}"),
            _ => panic!("{slots:?}"),
        }
    }
    // A shuffle of 1-byte groups (bools; items over 255 bytes) moves nothing: Rust,
    // which copies, on every instruction set, not C's byte-at-a-time unshuffle.
    for (typesize, meta) in [(1, 0), (1, 1), (400, 0), (8, 1)] {
        let mut b = h.clone();
        b[3] = filters::c_typesize(typesize) as u8;
        b[21] = filters::SHUFFLE;
        b[29] = meta;
        let b = ChunkHeader::parse(&b).unwrap();
        let nbytes = 400 * typesize;
        assert_rust_filters(&b, typesize, nbytes);
    }
    // Codecs registered since c-blosc2 2.15 are refused by name, with their plugin.
    let mut j = header(0x05 | (6 << 5), 400, 100, 80);
    j[22] = 39;
    match plan(&ChunkHeader::parse(&j).unwrap(), 400, 4, 80) {
        Err(e @ ChunkError::Unsupported(..)) => {
            let m = e.to_string();
            assert!(m.contains("J2K (id 39") && m.contains("blosc2-j2k"), "{m}");
        }
        _ => panic!("codec 39 must be refused"),
    }
    assert!(matches!(plan(&p, 404, 4, 80), Err(ChunkError::Corrupt(_))));
    assert!(matches!(plan(&p, 400, 4, 81), Err(ChunkError::Corrupt(_))));
    // zlib: decoded in Rust; lz4 with a dictionary too, lz4 without one by C.
    let z = ChunkHeader::parse(&header(0x05 | (3 << 5), 400, 100, 80)).unwrap();
    assert!(matches!(
        plan(&z, 400, 4, 80),
        Ok(Path::Rust(RustCodec::Zlib))
    ));
    let mut l = header(0x05 | (1 << 5), 400, 100, 80);
    assert!(matches!(
        plan(&ChunkHeader::parse(&l).unwrap(), 400, 4, 80),
        Ok(Path::C)
    ));
    l[31] = 0x01;
    assert!(matches!(
        plan(&ChunkHeader::parse(&l).unwrap(), 400, 4, 80),
        Ok(Path::Rust(RustCodec::Lz4))
    ));
    // The header typesize byte must be the one c-blosc2 records for the items.
    assert!(matches!(plan(&p, 400, 8, 80), Err(ChunkError::Corrupt(_))));
    // user codecs ndlz (cell side in the codec meta) and zfp: Rust; others refused by name.
    let mut u = header(0x05 | (6 << 5), 400, 100, 80);
    u[22] = 32;
    u[23] = 8;
    let nd = ChunkHeader::parse(&u).unwrap();
    assert!(matches!(
        plan(&nd, 400, 4, 80),
        Ok(Path::Rust(RustCodec::Ndlz(8)))
    ));
    u[22] = 34;
    let z = ChunkHeader::parse(&u).unwrap();
    assert!(matches!(
        plan(&z, 400, 4, 80),
        Ok(Path::Rust(RustCodec::Zfp(
            crate::codec::zfp::Mode::Precision,
            8
        )))
    ));
    u[22] = 36;
    let o = ChunkHeader::parse(&u).unwrap();
    assert_eq!(
        plan(&o, 400, 4, 80).err(),
        Some(ChunkError::Unsupported(
            "codec",
            "OPENHTJ2K (id 36, written by the python plugin `blosc2-openhtj2k`)".into()
        ))
    );
    // zero special: no decoding.
    let mut s = header(0x05, 400, 400, 32);
    s[31] = 1 << 4;
    let s = ChunkHeader::parse(&s).unwrap();
    assert!(matches!(plan(&s, 400, 4, 32), Ok(Path::Zeros)));
    // VL blocks version
    let mut v = header(0x05 | (4 << 5), 400, 100, 80);
    v[0] = 6;
    assert!(matches!(
        plan(&ChunkHeader::parse(&v).unwrap(), 400, 4, 80),
        Err(ChunkError::Unsupported("chunk format", _))
    ));
    assert!(ChunkHeader::parse(&h[..10]).is_err());
    assert!(ChunkHeader::parse(&h[..20]).is_err());
}
