//! Write then read: the first bytes choose the shape, chunks, blocks, dtype, codec, level
//! and filters, the rest is the data; whatever the builder accepts must read back equal
//! (lossless codecs and filters only), in memory.
#![no_main]
use b2nd::{ArrayBuilder, Codec, Dtype, Filter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
    let dtypes = ["<i4", "<f8", "|u1", ">i2", "<U2", "|S3", "|b1", "[('a', '<i2'), ('b', '|u1')]"];
    let dtype = Dtype::parse(dtypes[usize::from(p[10] % 8)]).unwrap();
    let codecs = [Codec::Zstd, Codec::Lz4, Codec::BloscLz, Codec::Lz4hc, Codec::Zlib];
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
});
