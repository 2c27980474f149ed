use super::*;

/// The elements of the array at `path` (an i64 vector) and its shape.
fn contents(path: &Path) -> (Vec<u64>, Vec<i64>) {
    let a = crate::Array::open(path).unwrap();
    (a.shape().to_vec(), a.read::<i64>().unwrap())
}

#[test]
fn a_change_between_the_reads_of_an_open_gives_the_new_version_whole() {
    // Version A: 3 chunks. Two later versions, each written over the file (same inode)
    // right after one of the reads an open of A makes, for every one of those reads:
    // B, A with 2 chunks appended in place (a new header, index and trailer in a longer
    // file, as python-blosc2 appends), and C, another array written anew over the
    // truncated file (as python-blosc2's mode "w"), shorter than A. The open must give
    // the new version whole (its chunks, its bytes, its elements), never a mix of A's
    // header and the new index nor a failure from one, and a frame that counts as
    // unchanged until the file changes again.
    use crate::write::{ArrayBuilder, ArrayMut, Target};
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let first: Vec<i64> = (0..30).collect();
    ArrayBuilder::for_type::<i64>(&[30])
        .chunks(&[10])
        .blocks(&[5])
        .write(Target::File(path("a.b2nd")), &first)
        .unwrap();
    std::fs::copy(path("a.b2nd"), path("b.b2nd")).unwrap();
    let more: Vec<i64> = (30..50).collect();
    ArrayMut::open(path("b.b2nd"))
        .unwrap()
        .append(0, &more)
        .unwrap();
    ArrayBuilder::for_type::<i64>(&[7])
        .chunks(&[4])
        .write(Target::File(path("c.b2nd")), &[-1i64; 7])
        .unwrap();
    let old_bytes = std::fs::read(path("a.b2nd")).unwrap();
    let versions = [
        (
            "B",
            5,
            contents(&path("b.b2nd")),
            std::fs::read(path("b.b2nd")).unwrap(),
        ),
        (
            "C",
            2,
            contents(&path("c.b2nd")),
            std::fs::read(path("c.b2nd")).unwrap(),
        ),
    ];
    assert_eq!(versions[0].2, (vec![50], (0..50).collect::<Vec<i64>>()));
    assert_eq!(versions[1].2, (vec![7], vec![-1i64; 7]));
    assert!(versions[0].3.len() > old_bytes.len() && versions[1].3.len() < old_bytes.len());

    // The reads an open of A makes.
    interleave::set(usize::MAX, || {});
    Frame::open(&path("a.b2nd"), 0).unwrap();
    let (reads, _) = interleave::reads();
    assert!(reads >= 2, "an open of A makes {reads} reads");

    for (name, nchunks, want, new_bytes) in versions {
        for k in 1..=reads {
            let p = path(&format!("{name}{k}.b2nd"));
            std::fs::write(&p, &old_bytes).unwrap();
            let (target, bytes) = (p.clone(), new_bytes.clone());
            interleave::set(k, move || {
                // Truncated first when shorter, as a file opened for writing anew is.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .unwrap();
                if (bytes.len() as u64) < f.metadata().unwrap().len() {
                    f.set_len(0).unwrap();
                }
                std::io::Write::write_all(&mut f, &bytes).unwrap();
            });
            let frame = Frame::open(&p, 0)
                .unwrap_or_else(|e| panic!("{name} written after read {k} of {reads}: {e}"));
            let at = format!("{name} written after read {k} of {reads}");
            assert!(interleave::reads().1, "{at}: not written");
            assert!(
                frame.unchanged(),
                "{at}: the frame is not the file's version"
            );
            assert_eq!(frame.offsets().unwrap().len(), nchunks, "{at}");
            assert!(
                frame.contiguous_bytes().unwrap().as_deref() == Some(&new_bytes[..]),
                "{at}: the frame opened is not its bytes"
            );
            interleave::set(usize::MAX, || {});
            assert_eq!(contents(&p), want, "{at}");
        }
    }
}

#[test]
fn header_checks() {
    let mut h = vec![0u8; HEADER_PREFIX];
    h[0] = 0x9e;
    h[1..10].copy_from_slice(b"\xa8b2frame\0");
    h[10] = 0xd2;
    h[11..15].copy_from_slice(&0xa5u32.to_be_bytes());
    h[15] = 0xcf;
    h[16..24].copy_from_slice(&625u64.to_be_bytes());
    h[0x19] = 0x12;
    h[38] = 0xd3;
    h[39..47].copy_from_slice(&328i64.to_be_bytes());
    let header = FrameHeader::parse(&h, 625).unwrap();
    assert_eq!(
        (header.header_len, header.frame_len, header.cbytes),
        (0xa5, 625, 328)
    );
    // Filter ids c-blosc2 2.15 does not define (found by fuzzing: C leaks on them).
    for (id, ok) in [
        (1u8, true),
        (4, true),
        (5, false),
        (31, false),
        (35, true),
        (36, true),
        (37, false),
        (159, false),
        (160, true),
    ] {
        let mut bad = h.clone();
        bad[FILTER_PIPELINE] = 6;
        bad[FILTER_PIPELINE + 3] = id;
        assert_eq!(FrameHeader::parse(&bad, 625).is_ok(), ok, "filter id {id}");
    }
    let check_layout = |h: &[u8], tail: &[u8], sparse| {
        FrameHeader::parse(h, 625)
            .unwrap()
            .check_layout(tail, sparse)
    };
    let check_header = |h: &[u8], available| {
        FrameHeader::parse(h, available)
            .map(|f| f.version)
            .map_err(|e| e.0)
    };
    // Trailer of 84 bytes: index = 625 - 84 - 0xa5 - 328 = 48 bytes.
    let mut tail = [0u8; 25];
    tail[2] = 0xce;
    tail[3..7].copy_from_slice(&84u32.to_be_bytes());
    assert_eq!(check_layout(&h, &tail, false), Ok((0xa5 + 328, 48)));
    h[38] = 0xd2;
    assert!(check_header(&h, 625)
        .unwrap_err()
        .contains("compressed size"));
    h[38] = 0xd3;
    h[39..47].copy_from_slice(&360i64.to_be_bytes()); // index would be 16 bytes
    assert!(check_layout(&h, &tail, false).is_err());
    h[39..47].copy_from_slice(&400i64.to_be_bytes()); // negative index
    assert!(check_layout(&h, &tail, false).is_err());
    h[39..47].copy_from_slice(&328i64.to_be_bytes());
    tail[2] = 0xcf;
    assert!(check_layout(&h, &tail, false).is_err());
    let mut ih = [0u8; 32];
    ih[2] = 0x05;
    ih[3] = 8;
    ih[12..16].copy_from_slice(&32i32.to_le_bytes());
    assert!(check_index_header(&ih, 0, 32).is_ok());
    // 3 chunks: 24 bytes of offsets, blocks no larger than that.
    ih[4..8].copy_from_slice(&24i32.to_le_bytes());
    ih[8..12].copy_from_slice(&24i32.to_le_bytes());
    ih[12..16].copy_from_slice(&40i32.to_le_bytes());
    assert!(check_index_header(&ih, 3, 40).is_ok());
    assert!(check_index_header(&ih, 4, 40).is_err());
    // More compressed bytes than the frame holds for the index.
    assert!(check_index_header(&ih, 3, 39)
        .unwrap_err()
        .0
        .contains("declares 40 compressed bytes"));
    // A memcpyed index must hold all its bytes after the header.
    ih[2] |= 0x02;
    assert!(check_index_header(&ih, 3, 40).is_err());
    ih[12..16].copy_from_slice(&56i32.to_le_bytes());
    assert!(check_index_header(&ih, 3, 56).is_ok());
    ih[2] &= !0x02;
    ih[8..12].copy_from_slice(&(1i32 << 30).to_le_bytes());
    assert!(check_index_header(&ih, 3, 56).is_err());
    ih[8..12].copy_from_slice(&24i32.to_le_bytes());
    ih[31] = 4 << 4;
    assert!(check_index_header(&ih, 3, 56).is_err());
    // A repeated-value index holds its one value.
    ih[31] = 3 << 4;
    ih[12..16].copy_from_slice(&36i32.to_le_bytes());
    assert!(check_index_header(&ih, 3, 36).is_err());
    ih[12..16].copy_from_slice(&40i32.to_le_bytes());
    assert!(check_index_header(&ih, 3, 40).is_ok());
    assert!(check_header(&h, 624).unwrap_err().contains("truncated"));
    assert!(check_header(&h[..10], 625).is_err());
    let mut v3 = h.clone();
    v3[0x19] = 0x13;
    assert_eq!(check_header(&v3, 625), Ok(3));
    v3[0x19] = 0x14;
    assert!(check_header(&v3, 625).unwrap_err().contains("version 4"));
    let mut bad = h.clone();
    bad[3] = b'x';
    assert!(check_header(&bad, 625).unwrap_err().contains("magic"));
}
