use super::*;

// ---- forward filters, written from the c-blosc2 3.x semantics documented above ----

fn shuffle_fwd(block: &[u8], w: usize) -> Vec<u8> {
    let mut out = block.to_vec();
    let n = block.len() / w;
    for i in 0..n {
        for j in 0..w {
            out[j * n + i] = block[i * w + j];
        }
    }
    out
}

fn get_bit(buf: &[u8], bit: usize) -> bool {
    buf[bit / 8] >> (bit % 8) & 1 == 1
}

fn bitshuffle_fwd(block: &[u8], e: usize) -> Vec<u8> {
    let mut out = block.to_vec();
    let n = block.len() / e;
    let n8 = n - n % 8;
    for b in &mut out[..n8 * e] {
        *b = 0;
    }
    for i in 0..n8 {
        for j in 0..e {
            for k in 0..8 {
                if get_bit(block, (i * e + j) * 8 + k) {
                    let ob = (8 * j + k) * n8 + i;
                    out[ob / 8] |= 1 << (ob % 8);
                }
            }
        }
    }
    out
}

/// `stage` = block data entering DELTA, `orig0` = original (unfiltered) block 0.
fn delta_fwd(stage: &[u8], first: bool, orig0: &[u8], w: usize) -> Vec<u8> {
    let mut out = stage.to_vec();
    let n = stage.len() / w;
    for i in 0..n {
        for b in 0..w {
            let p = i * w + b;
            out[p] = if first {
                if i == 0 {
                    stage[p]
                } else {
                    stage[p] ^ stage[p - w]
                }
            } else {
                stage[p] ^ orig0[p]
            };
        }
    }
    out
}

fn bytedelta_fwd(block: &[u8], s: usize) -> Vec<u8> {
    let mut out = block.to_vec();
    let l = block.len() / s;
    for c in 0..s {
        for i in 0..l {
            let p = c * l + i;
            let prev = if i == 0 { 0 } else { block[p - 1] };
            out[p] = block[p].wrapping_sub(prev);
        }
    }
    out
}

/// Forward pipeline on a whole chunk (TRUNC_PREC / INT_TRUNC are treated as identity: their
/// forward is lossy and their backward is the identity).
fn pipeline_fwd(
    filters: &[u8; 6],
    meta: &[u8; 6],
    typesize: usize,
    blocksize: usize,
    data: &[u8],
) -> Vec<u8> {
    let cts = c_typesize(typesize);
    let mut out = Vec::with_capacity(data.len());
    let orig0 = &data[..blocksize.min(data.len())];
    for (k, block) in data.chunks(blocksize).enumerate() {
        let mut cur = block.to_vec();
        for slot in 0..6 {
            let m = meta[slot];
            cur = match filters[slot] {
                SHUFFLE => shuffle_fwd(&cur, shuffle_width(m, cts)),
                BITSHUFFLE => bitshuffle_fwd(&cur, cts),
                DELTA => delta_fwd(&cur, k == 0, orig0, delta_width(cts)),
                BYTEDELTA => bytedelta_fwd(&cur, bytedelta_streams(m, typesize)),
                _ => cur,
            };
        }
        out.extend_from_slice(&cur);
    }
    out
}

/// Small deterministic PRNG (xorshift64*), so tests need no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
    }
}

fn undo(filters: [u8; 6], meta: [u8; 6], ts: usize, bs: usize, enc: &[u8]) -> Vec<u8> {
    let mut dec = enc.to_vec();
    let mut scratch = Vec::new();
    undo_chunk(&filters, &meta, ts, bs, &mut dec, &mut scratch).unwrap();
    dec
}

fn roundtrip(filters: [u8; 6], meta: [u8; 6], ts: usize, bs: usize, data: &[u8]) {
    let enc = pipeline_fwd(&filters, &meta, ts, bs, data);
    let dec = undo(filters, meta, ts, bs, &enc);
    assert!(
        dec == data,
        "round trip failed: filters {filters:?} meta {meta:?} typesize {ts} blocksize {bs} \
         nbytes {}",
        data.len()
    );
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const TYPESIZES: [usize; 10] = [1, 2, 3, 4, 5, 8, 12, 16, 24, 400];

/// (block size, number of bytes) pairs for an item size: blocks that are and are not
/// multiples of the item size, a short last block, a chunk smaller than one block.
fn layouts(ts: usize) -> Vec<(usize, usize)> {
    vec![
        (ts * 64, ts * 200),
        (ts * 37, ts * 100),
        (ts * 8 + 3, ts * 50 + 1),
        (100, 1000),
        (96, 1001),
        (4096, 333),
        (7, 61),
        (1, 9),
    ]
}

// ---- names, ids, predicates ----

#[test]
fn ids_match_c_blosc2() {
    assert_eq!(
        [NOFILTER, SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC],
        [0, 1, 2, 3, 4]
    );
    assert_eq!([NDCELL, NDMEAN, BYTEDELTA, INT_TRUNC], [32, 33, 35, 36]);
}

#[test]
fn names() {
    assert_eq!(filter_name(SHUFFLE), "shuffle");
    assert_eq!(filter_name(BITSHUFFLE), "bitshuffle");
    assert_eq!(filter_name(DELTA), "delta");
    assert_eq!(filter_name(TRUNC_PREC), "trunc_prec");
    assert_eq!(filter_name(BYTEDELTA), "bytedelta");
    assert_eq!(filter_name(INT_TRUNC), "int_trunc");
    assert_eq!(filter_name(NDCELL), "ndcell");
    assert_eq!(filter_name(NDMEAN), "ndmean");
    assert_eq!(filter_name(34), "filter 34");
    assert_eq!(filter_name(200), "filter 200");
    let e = UnfilterError::Unsupported { id: 32, meta: 4 };
    assert!(e.to_string().contains("ndcell"));
}

#[test]
fn rust_can_undo_reports_first_unsupported_slot() {
    assert_eq!(rust_can_undo(&[0; 6], &[0; 6]), Ok(()));
    assert_eq!(
        rust_can_undo(&[3, 1, 2, 4, 35, 36], &[0; 6]),
        Err(UnfilterError::Unsupported { id: 3, meta: 0 })
    );
    assert_eq!(rust_can_undo(&[0, 1, 2, 4, 35, 36], &[0; 6]), Ok(()));
    assert_eq!(
        rust_can_undo(&[0, 1, 32, 33, 0, 0], &[0, 0, 4, 5, 0, 0]),
        Ok(()) // NDCELL, NDMEAN (their Pipeline needs the block shape)
    );
    assert_eq!(
        rust_can_undo(&[0, 1, 34, 33, 0, 0], &[0, 0, 4, 5, 0, 0]),
        Err(UnfilterError::Unsupported { id: 34, meta: 4 })
    );
    assert_eq!(
        rust_can_undo(&[0, 0, 0, 0, 1, 34], &[0, 0, 0, 0, 0, 8]),
        Err(UnfilterError::Unsupported { id: 34, meta: 8 })
    );
    for f in [SHUFFLE, BITSHUFFLE, BYTEDELTA, NDCELL] {
        // A DELTA among three filters or more: refused, naming the first DELTA slot.
        for (p, slot) in [
            ([DELTA, f, DELTA, 0, 0, 0], 0),
            ([f, DELTA, DELTA, 0, 0, 0], 1),
            ([f, f, DELTA, 0, 0, 0], 2),
            ([0, f, DELTA, f, 0, 0], 2),
            ([DELTA, DELTA, f, 0, 0, 0], 0),
            ([0, f, TRUNC_PREC, f, 0, DELTA], 5),
        ] {
            let meta = [1, 2, 3, 4, 5, 6];
            assert_eq!(
                rust_can_undo(&p, &meta),
                Err(UnfilterError::Unsupported {
                    id: DELTA,
                    meta: meta[slot]
                }),
                "{p:?}"
            );
        }
        // A DELTA with one other filter (identity filters aside): accepted.
        for p in [
            [0, f, 0, 0, DELTA, 0],
            [0, DELTA, 0, INT_TRUNC, f, 0],
            [DELTA, 0, DELTA, 0, 0, TRUNC_PREC],
        ] {
            assert_eq!(rust_can_undo(&p, &[0; 6]), Ok(()), "{p:?}");
        }
    }
    let mut data = vec![1u8; 16];
    let mut scratch = Vec::new();
    assert_eq!(
        undo_chunk(
            &[0, 0, 0, 0, 0, 33],
            &[0, 0, 0, 0, 0, 2],
            4,
            16,
            &mut data,
            &mut scratch
        ),
        Err(UnfilterError::Unsupported { id: 33, meta: 2 })
    );
}

#[test]
fn c_can_undo_rules() {
    let sh = [0, 0, 0, 0, 0, SHUFFLE];
    assert!(c_can_undo(&sh, &[0; 6], 4));
    assert!(c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 4));
    assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 12));
    assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 4], 400)); // <U100
    assert!(c_can_undo(&sh, &[0, 0, 0, 0, 0, 1], 400)); // width 1 either way
    assert!(c_can_undo(&sh, &[0; 6], 400));
    assert!(!c_can_undo(&sh, &[0, 0, 0, 0, 0, 2], 4));
    assert!(c_can_undo(
        &[0, 0, 0, 0, 0, BITSHUFFLE],
        &[0, 0, 0, 0, 0, 7],
        8
    ));
    assert!(c_can_undo(&[0, 0, 0, 0, DELTA, SHUFFLE], &[0; 6], 8));
    assert!(c_can_undo(&[DELTA, 0, BITSHUFFLE, 0, 0, 0], &[0; 6], 8));
    assert!(c_can_undo(
        &[TRUNC_PREC, DELTA, SHUFFLE, 0, 0, 0],
        &[10, 0, 0, 0, 0, 0],
        8
    ));
    assert!(!c_can_undo(&[0, 0, 0, 0, SHUFFLE, DELTA], &[0; 6], 8));
    assert!(!c_can_undo(
        &[0, 0, 0, 0, SHUFFLE, BYTEDELTA],
        &[0, 0, 0, 0, 0, 8],
        8
    ));
    assert!(!c_can_undo(&[INT_TRUNC, 0, 0, 0, 0, 0], &[0; 6], 8));
    assert!(!c_can_undo(&[NDCELL, 0, 0, 0, 0, 0], &[0; 6], 8));
    assert!(c_can_undo(&[0; 6], &[0; 6], 8));
}

#[test]
fn bad_arguments() {
    let mut scratch = Vec::new();
    let mut data = vec![0u8; 8];
    let sh = [0, 0, 0, 0, 0, SHUFFLE];
    assert!(matches!(
        undo_chunk(&sh, &[0; 6], 0, 8, &mut data, &mut scratch),
        Err(UnfilterError::Corrupt(_))
    ));
    assert!(matches!(
        undo_chunk(&sh, &[0; 6], 4, 0, &mut data, &mut scratch),
        Err(UnfilterError::Corrupt(_))
    ));
    // Nothing to do: fine whatever the sizes.
    assert_eq!(
        undo_chunk(&[0; 6], &[0; 6], 0, 0, &mut data, &mut scratch),
        Ok(())
    );
    assert_eq!(
        undo_chunk(&sh, &[0; 6], 4, 8, &mut [], &mut scratch),
        Ok(())
    );
}

// ---- hand-computed vectors ----

#[test]
fn shuffle_known_vectors() {
    // Two items of typesize 4.
    let data = [0xa0, 0xa1, 0xa2, 0xa3, 0xb0, 0xb1, 0xb2, 0xb3];
    let enc = [0xa0, 0xb0, 0xa1, 0xb1, 0xa2, 0xb2, 0xa3, 0xb3];
    assert_eq!(
        pipeline_fwd(&[SHUFFLE, 0, 0, 0, 0, 0], &[0; 6], 4, 8, &data),
        enc
    );
    assert_eq!(undo([SHUFFLE, 0, 0, 0, 0, 0], [0; 6], 4, 8, &enc), data);
    // Same bytes as typesize 8 with meta 4: groups of 4 bytes regardless of typesize.
    assert_eq!(
        undo([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 4], 8, 8, &enc),
        data
    );
    // Trailing bytes (block of 10, width 4): the last 2 bytes are not shuffled.
    let data: Vec<u8> = (0..10).collect();
    let enc = [0, 4, 1, 5, 2, 6, 3, 7, 8, 9];
    assert_eq!(
        undo([SHUFFLE, 0, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0], 2, 10, &enc),
        data
    );
    // Two blocks of 6 bytes, typesize 3; a 4-byte last block.
    let data: Vec<u8> = (0..16).collect();
    let enc = [0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11, 12, 13, 14, 15];
    assert_eq!(undo([SHUFFLE, 0, 0, 0, 0, 0], [0; 6], 3, 6, &enc), data);
}

#[test]
fn bitshuffle_known_vectors() {
    // 8 one-byte elements: element i = 1 << i gives the 8x8 identity, which is its own
    // transpose.
    let data: Vec<u8> = (0..8).map(|i| 1u8 << i).collect();
    assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 8, &data), data);
    // 8 elements all 0x01: bit plane 0 is all ones, the others zero.
    let enc = [0xff, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 8, &enc),
        vec![1u8; 8]
    );
    // Typesize 2, 8 elements all 0x8001: planes 0 (byte 0 bit 0) and 15 (byte 1 bit 7).
    let mut enc = vec![0u8; 16];
    enc[0] = 0xff;
    enc[15] = 0xff;
    let data: Vec<u8> = [0x01u8, 0x80].repeat(8);
    assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 2, 16, &enc), data);
    // 9 elements: the 9th is copied.
    let mut enc9 = vec![0xff, 0, 0, 0, 0, 0, 0, 0, 0x5a];
    let dec = undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 9, &enc9);
    assert_eq!(dec, [1, 1, 1, 1, 1, 1, 1, 1, 0x5a]);
    enc9.truncate(7); // fewer than 8 elements: nothing moves
    assert_eq!(undo([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 1, 7, &enc9), enc9);
}

#[test]
fn delta_known_vectors() {
    // typesize 2, two blocks of 4 bytes (2 items each).
    // block 0 items 0x0102, 0x0304 -> 0x0102, 0x0304^0x0102 = 0x0206
    // block 1 items 0x1111, 0x2222 -> XOR with original block 0 bytes.
    let data = [0x02, 0x01, 0x04, 0x03, 0x11, 0x11, 0x22, 0x22];
    let enc = [0x02, 0x01, 0x06, 0x02, 0x13, 0x10, 0x26, 0x21];
    assert_eq!(
        pipeline_fwd(&[DELTA, 0, 0, 0, 0, 0], &[0; 6], 2, 4, &data),
        enc
    );
    assert_eq!(undo([DELTA, 0, 0, 0, 0, 0], [0; 6], 2, 4, &enc), data);
    // typesize 12 works on single bytes, typesize 16 on 8-byte words.
    assert_eq!(delta_width(12), 1);
    assert_eq!(delta_width(16), 8);
    assert_eq!(delta_width(24), 8);
    assert_eq!(delta_width(c_typesize(400)), 1);
    assert_eq!(delta_width(3), 1);
}

#[test]
fn bytedelta_known_vectors() {
    // 3 streams of 3 bytes plus a 1-byte tail.
    let data = [10, 12, 11, 0, 255, 1, 7, 7, 7, 99];
    let enc = [10, 2, 255, 0, 255, 2, 7, 0, 0, 99];
    assert_eq!(
        pipeline_fwd(
            &[BYTEDELTA, 0, 0, 0, 0, 0],
            &[3, 0, 0, 0, 0, 0],
            1,
            10,
            &data
        ),
        enc
    );
    assert_eq!(
        undo([BYTEDELTA, 0, 0, 0, 0, 0], [3, 0, 0, 0, 0, 0], 1, 10, &enc),
        data
    );
    // meta 0 means the real item size (here 3).
    assert_eq!(undo([BYTEDELTA, 0, 0, 0, 0, 0], [0; 6], 3, 10, &enc), data);
}

#[test]
fn trunc_filters_are_identity_backward() {
    let mut rng = Rng(7);
    let data = rng.bytes(1000);
    for f in [TRUNC_PREC, INT_TRUNC] {
        assert_eq!(
            undo([0, 0, 0, 0, 0, f], [0, 0, 0, 0, 0, 5], 4, 256, &data),
            data
        );
    }
    // ...and they do not disturb the filters around them.
    roundtrip(
        [DELTA, TRUNC_PREC, INT_TRUNC, SHUFFLE, 0, 0],
        [0, 3, 7, 0, 0, 0],
        8,
        512,
        &data[..992],
    );
}

// Filtered (codec-decoded) bytes of chunks written by python-blosc2 4.14.1 / c-blosc2 3.3.5
// (LZ4, no split), obtained by compressing `c_sample()` with the filters, clearing the
// header's filter bytes and decompressing:
//   data = (numpy.arange(64, dtype='<u4') * 3 + 1000).tobytes()
//   blosc2.compress2(data, cparams=blosc2.CParams(codec=LZ4, clevel=9, filters=..,
//       filters_meta=.., typesize=.., blocksize=.., splitmode=NEVER_SPLIT))
fn c_sample() -> Vec<u8> {
    (0..64u32)
        .flat_map(|i| (1000 + 3 * i).to_le_bytes())
        .collect()
}

/// filters, filters_meta, typesize, blocksize, filtered bytes (hex).
type Case = ([u8; 6], [u8; 6], usize, usize, &'static str);

#[test]
fn c_blosc2_3_vectors() {
    let data = c_sample();
    #[rustfmt::skip]
    let cases: [Case; 10] = [
        ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0], 4, 64, "
         e8ebeef1f4f7fafd000306090c0f12150303030303030303040404040404040400000000000000000000000000000000
         00000000000000000000000000000000181b1e2124272a2d303336393c3f424504040404040404040404040404040404
         0000000000000000000000000000000000000000000000000000000000000000484b4e5154575a5d606366696c6f7275
         040404040404040404040404040404040000000000000000000000000000000000000000000000000000000000000000
         787b7e8184878a8d909396999c9fa2a50404040404040404040404040404040400000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4], 12, 96, "
         e8ebeef1f4f7fafd000306090c0f1215181b1e2124272a2d030303030303030304040404040404040404040404040404
         000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         303336393c3f4245484b4e5154575a5d606366696c6f7275040404040404040404040404040404040404040404040404
         000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         787b7e8184878a8d909396999c9fa2a50404040404040404040404040404040400000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 4], 20, 80, "
         e8ebeef1f4f7fafd000306090c0f1215181b1e2103030303030303030404040404040404040404040000000000000000
         000000000000000000000000000000000000000000000000000000000000000024272a2d303336393c3f4245484b4e51
         54575a5d0404040404040404040404040404040404040404000000000000000000000000000000000000000000000000
         00000000000000000000000000000000606366696c6f7275787b7e8184878a8d90939699040404040404040404040404
         040404040404040400000000000000000000000000000000000000000000000000000000000000000000000000000000
         9c9fa2a5040404040000000000000000",
        ),
        ([0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 2], 8, 64, "
         e800eb00ee00f100f400f700fa00fd0000000300060009000c000f001200150003000300030003000300030003000300
         0400040004000400040004000400040018001b001e002100240027002a002d0030003300360039003c003f0042004500
         040004000400040004000400040004000400040004000400040004000400040048004b004e005100540057005a005d00
         60006300660069006c006f00720075000400040004000400040004000400040004000400040004000400040004000400
         78007b007e008100840087008a008d0090009300960099009c009f00a200a50004000400040004000400040004000400
         04000400040004000400040004000400",
        ),
        ([0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0], 4, 64, "
         aaaa6666b4b4c738f8c0ff00ff00ff00ff00ff0000ff0000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000aaaa6666b4b4c738073ff83f00c0000000000000ffff00000000000000000000
         0000000000000000000000000000000000000000000000000000000000000000aaaa6666b4b4c738f8c000ffffff0000
         00000000ffff000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         aaaa6666b4b4c738073f07c00700f8ff00000000ffff0000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([0, 0, 0, 0, 0, 2], [0, 0, 0, 0, 0, 0], 2, 256, "
         444444444444444444444444444444441414141414141414141414141414141410451045104510451045104510451045
         155040051550400515504005155040054055005015005505405500501500550555550000405555050000555515000050
         555500000000005055555555150000005555000000000000000000004055555555550000000000000000000000000000
         555500000000000000000000000000000000555555555555555555555555555500000000000000000000000000000000
         000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([3, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], 4, 64, "
         e803000003000000050000001f00000005000000030000000d00000007000000fd07000003000000050000000f000000
         05000000030000001d00000007000000f0070000f0070000f0070000d0070000d0070000d0070000d0070000d0070000
         3000000030000000300000003000000030000000300000005000000050000000a0070000a0070000a0070000a0070000
         a0070000a0070000a0070000a00700006000000060000000600000006000000060000000600000006000000060000000
         900700009007000090070000700700007007000070070000700700007007000090000000900000009000000090000000
         9000000090000000b0000000b0000000",
        ),
        ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 0, 8], 8, 128, "
         e80606060606060606060606060606060300000001000000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000eb06060606060606060606060606060603000000010000000000000000000000
         000000000000000000000000000000000000000000000000000000000000000048060606060606060606060606060606
         040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         4b0606060606060606060606060606060400000000000000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([0, 0, 0, 0, 1, 35], [0, 0, 0, 0, 4, 4], 12, 96, "
         e80303030303030303030303030303030303030303030303030000000000000001000000000000000000000000000000
         000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         300303030303030303030303030303030303030303030303040000000000000000000000000000000000000000000000
         000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
         780303030303030303030303030303030400000000000000000000000000000000000000000000000000000000000000
         00000000000000000000000000000000",
        ),
        ([0, 0, 0, 3, 1, 0], [0, 0, 0, 0, 0, 0], 8, 64, "
         e8061a0efa060a1e030000000700000000000000000000000000000000000000eb1a060afe0a061a0300000007000000
         00000000000000000000000000000000f0f0d0d030303050070707070000000000000000000000000000000000000000
         f0d0d0d030303050070707070000000000000000000000000000000000000000a0a0a0a0606060600707070700000000
         00000000000000000000000000000000a0a0a0a060606060070707070000000000000000000000000000000000000000
         90907070909090b007070707000000000000000000000000000000000000000090707070909090b00707070700000000
         00000000000000000000000000000000",
        ),
    ];
    for (filters, meta, ts, bs, enc) in cases {
        let enc = hex(enc);
        assert_eq!(enc.len(), data.len());
        assert_eq!(
            pipeline_fwd(&filters, &meta, ts, bs, &data),
            enc,
            "forward {filters:?} {meta:?} ts {ts}"
        );
        assert_eq!(
            undo(filters, meta, ts, bs, &enc),
            data,
            "undo {filters:?} {meta:?} ts {ts}"
        );
    }
}

// ---- randomized round trips ----

#[test]
fn roundtrip_single_filters() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for ts in TYPESIZES {
        for (bs, nbytes) in layouts(ts) {
            let data = rng.bytes(nbytes);
            for m in [0u8, 1, 2, 3, 4, 5, 8, 16] {
                roundtrip([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, m], ts, bs, &data);
                roundtrip(
                    [BYTEDELTA, 0, 0, 0, 0, 0],
                    [m, 0, 0, 0, 0, 0],
                    ts,
                    bs,
                    &data,
                );
            }
            roundtrip([0, 0, 0, 0, 0, BITSHUFFLE], [0; 6], ts, bs, &data);
            roundtrip([DELTA, 0, 0, 0, 0, 0], [0; 6], ts, bs, &data);
        }
    }
}

#[test]
fn forward_pipeline_matches_reference_encoder() {
    let mut rng = Rng(11);
    let cases: [([u8; 6], [u8; 6], usize); 5] = [
        ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 4], 64),
        ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0], 4),
        ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [0, 8, 0, 0, 0, 0], 8),
        ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [2, 4, 0, 0, 0, 0], 4),
        ([BYTEDELTA, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0], 2),
    ];
    for (f, m, ts) in cases {
        let fwd = ForwardPipeline::new(&f, &m, ts, &[])
            .unwrap()
            .expect("needs Rust");
        for (bs, len) in [(256, 1000), (64 * ts, 64 * ts * 3 + 5)] {
            let data = rng.bytes(len);
            let want = pipeline_fwd(&f, &m, ts, bs, &data);
            let mut got = vec![0u8; len];
            let mut scratch = Vec::new();
            for (b, o) in data.chunks(bs).zip(got.chunks_mut(bs)) {
                fwd.apply_block(b, o, &mut scratch).unwrap();
            }
            assert_eq!(got, want, "{f:?} {m:?} ts {ts} bs {bs}");
            assert_eq!(undo(f, m, ts, bs, &got), data);
        }
    }
    // What c-blosc2 2.15 encodes as 3.x does runs in Rust only where Rust is faster:
    // with AVX2, shuffles of vector widths and BITSHUFFLE; never DELTA or odd widths.
    let avx2 = kernels::Isa::best() == kernels::Isa::Avx2;
    for (f, m, ts) in [
        ([0, 0, 0, 0, 0, SHUFFLE], [0; 6], 8),
        ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 8], 8),
        ([BITSHUFFLE, 0, 0, 0, 0, 0], [0; 6], 4),
        ([0, 0, 0, 0, SHUFFLE, BITSHUFFLE], [0; 6], 2),
    ] {
        let p = ForwardPipeline::new(&f, &m, ts, &[]).unwrap();
        assert_eq!(p.is_some(), avx2, "{f:?} {m:?} {ts}");
    }
    for (f, ts) in [
        ([0, 0, 0, 0, 0, SHUFFLE], 3),
        ([BITSHUFFLE, 0, 0, 0, 0, 0], 12),
        ([DELTA, 0, 0, 0, 0, SHUFFLE], 8),
        ([0, 0, 0, 0, SHUFFLE, TRUNC_PREC], 8),
        ([0; 6], 8),
    ] {
        assert_eq!(
            ForwardPipeline::new(&f, &[0; 6], ts, &[]),
            Ok(None),
            "{f:?} {ts}"
        );
    }
    assert!(
        ForwardPipeline::new(&[DELTA, BYTEDELTA, 0, 0, 0, 0], &[0, 4, 0, 0, 0, 0], 4, &[]).is_err()
    );
}

#[test]
fn roundtrip_combinations() {
    let combos: [([u8; 6], [u8; 6]); 14] = [
        ([0, 0, 0, 0, SHUFFLE, BYTEDELTA], [0; 6]),
        ([0, 0, 0, 0, SHUFFLE, BYTEDELTA], [0, 0, 0, 0, 4, 4]),
        ([0, 0, 0, 0, BITSHUFFLE, BYTEDELTA], [0, 0, 0, 0, 0, 3]),
        ([0, 0, 0, DELTA, SHUFFLE, 0], [0; 6]),
        ([0, 0, 0, DELTA, SHUFFLE, 0], [0, 0, 0, 0, 4, 0]),
        ([0, 0, 0, 0, SHUFFLE, DELTA], [0, 0, 0, 0, 2, 0]),
        ([0, 0, 0, 0, BITSHUFFLE, DELTA], [0; 6]),
        ([DELTA, BITSHUFFLE, 0, 0, 0, 0], [0; 6]),
        ([SHUFFLE, SHUFFLE, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0]),
        ([SHUFFLE, BITSHUFFLE, 0, 0, 0, 0], [0; 6]),
        ([DELTA, BYTEDELTA, 0, 0, 0, 0], [0, 4, 0, 0, 0, 0]),
        (
            [0, 0, 0, SHUFFLE, BYTEDELTA, BITSHUFFLE],
            [0, 0, 0, 4, 0, 0],
        ),
        ([DELTA, DELTA, 0, 0, 0, 0], [0; 6]),
        (
            [DELTA, TRUNC_PREC, SHUFFLE, INT_TRUNC, 0, 0],
            [0, 9, 2, 9, 5, 0],
        ),
    ];
    let mut rng = Rng(42);
    for ts in TYPESIZES {
        for (bs, nbytes) in layouts(ts) {
            // Half random, half smooth data.
            let mut data = rng.bytes(nbytes);
            for (i, b) in data.iter_mut().enumerate().skip(nbytes / 2) {
                *b = (i / 5) as u8;
            }
            for (filters, meta) in combos {
                roundtrip(filters, meta, ts, bs, &data);
            }
        }
    }
}

#[test]
fn scratch_is_reused_and_blocks_are_independent_except_delta() {
    // Undoing a chunk equals undoing each block separately (no DELTA).
    let mut rng = Rng(3);
    let (ts, bs) = (8, 256);
    let data = rng.bytes(1000);
    let filters = [0, 0, 0, 0, SHUFFLE, BYTEDELTA];
    let meta = [0, 0, 0, 0, 0, 8];
    let enc = pipeline_fwd(&filters, &meta, ts, bs, &data);
    let whole = undo(filters, meta, ts, bs, &enc);
    let mut scratch = vec![0xee; 3]; // junk content must not matter
    let mut parts = Vec::new();
    for block in enc.chunks(bs) {
        let mut b = block.to_vec();
        undo_chunk(&filters, &meta, ts, bs, &mut b, &mut scratch).unwrap();
        parts.extend(b);
    }
    assert_eq!(whole, data);
    assert_eq!(parts, data);
}
