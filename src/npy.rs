//! Writing NumPy `.npy` headers for raw C-order data of any dtype this crate reads.

use crate::dtype::Dtype;

/// The `.npy` header (magic, version, length, dict, padding) for a C-order array of `dtype`
/// and `shape`, laid out as NumPy writes it (total header length a multiple of 64).
///
/// A top-level subarray dtype such as `('<i4', (2, 2))` is expanded the way NumPy does: its
/// base becomes the descr and its shape is appended to `shape`.
///
/// ```
/// let h = b2nd::npy::header(&b2nd::Dtype::parse("<f8").unwrap(), &[2, 3]);
/// assert_eq!(h.len() % 64, 0);
/// assert!(String::from_utf8_lossy(&h).contains("'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }"));
/// ```
pub fn header(dtype: &Dtype, shape: &[u64]) -> Vec<u8> {
    let (descr, extra) = dtype.npy_descr();
    let dims: Vec<String> = shape
        .iter()
        .map(|d| d.to_string())
        .chain(extra.iter().map(|d| d.to_string()))
        .collect();
    let shape_repr = match dims.len() {
        0 => "()".to_string(),
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape_repr}, }}");
    let utf8 = !dict.is_ascii();
    // Version 1 has a u16 length; 2 a u32; 3 is 2 with a UTF-8 dict.
    let (major, len_bytes) = if utf8 {
        (3u8, 4usize)
    } else if dict.len() + 1 + 10 < 65536 {
        (1, 2)
    } else {
        (2, 4)
    };
    let pre = 6 + 2 + len_bytes;
    let total = (pre + dict.len() + 1).div_ceil(64) * 64;
    let hlen = total - pre;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"\x93NUMPY");
    out.push(major);
    out.push(0);
    if len_bytes == 2 {
        out.extend_from_slice(&(hlen as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(hlen as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}
