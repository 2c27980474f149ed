//! Typed reads of what is not a plain number: NumPy strings (`U`, `S`) as Rust strings, and
//! the fields of structured arrays by name, like the hdf5 crate's typed reads.

#![forbid(unsafe_code)]

use crate::array::Array;
use crate::error::{Error, Result};
use crate::model::dtype::{ByteOrder, Dtype, Field};
use crate::model::element::{self, Element};

/// NumPy's rule for fixed-length strings: trailing NULs are padding.
fn trim_nuls(b: &[u8], unit: usize) -> &[u8] {
    let mut end = b.len();
    while end >= unit && b[end - unit..end].iter().all(|&x| x == 0) {
        end -= unit;
    }
    &b[..end]
}

/// Items of a `U{chars}` dtype (UCS-4 code points of byte order `order`) decoded into one
/// UTF-8 buffer: item `i` is `bytes[offsets[i]..offsets[i + 1]]`, trailing NULs dropped as
/// NumPy drops them. A code unit that is no Unicode scalar value is an error naming its item.
pub(crate) fn ucs4_to_utf8(
    chars: usize,
    order: ByteOrder,
    raw: &[u8],
) -> Result<(Vec<u8>, Vec<usize>)> {
    if chars == 0 {
        // NumPy's `U0`: one empty string, if any item.
        let n = usize::from(!raw.is_empty());
        return Ok((Vec::new(), vec![0; n + 1]));
    }
    if matches!(order, ByteOrder::Big) {
        ucs4_items::<true>(chars, raw)
    } else {
        ucs4_items::<false>(chars, raw)
    }
}

/// [`ucs4_to_utf8`] for one byte order (`BIG`: big-endian), fixed at compile time for the
/// per-unit loops.
fn ucs4_items<const BIG: bool>(chars: usize, raw: &[u8]) -> Result<(Vec<u8>, Vec<usize>)> {
    let unit = |c: &[u8]| {
        let c = [c[0], c[1], c[2], c[3]];
        if BIG {
            u32::from_be_bytes(c)
        } else {
            u32::from_le_bytes(c)
        }
    };
    let n = raw.len() / (4 * chars);
    let mut bytes = Vec::with_capacity(n * chars + 16);
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let low = if BIG { 3 } else { 0 };
    let raw = &raw[..n * 4 * chars];
    if all_ascii::<BIG>(raw) {
        ascii_items(chars, raw, low, &mut bytes, &mut offsets);
        return Ok((bytes, offsets));
    }
    let mut utf8 = [0u8; 4];
    for (index, item) in raw.chunks_exact(4 * chars).enumerate() {
        // The units before the trailing NULs, and whether all of them are ASCII.
        let (mut len, mut all) = (0, 0);
        for (k, c) in item.chunks_exact(4).enumerate() {
            let v = unit(c);
            all |= v;
            len = if v != 0 { k + 1 } else { len };
        }
        let units = &item[..4 * len];
        if all < 0x80 {
            // One byte per code unit: its low byte.
            bytes.extend(units.chunks_exact(4).map(|c| c[low]));
        } else {
            for c in units.chunks_exact(4) {
                let v = unit(c);
                let ch = char::from_u32(v).ok_or_else(|| Error::InvalidString {
                    index,
                    reason: format!("{v:#x} is not a Unicode scalar value"),
                })?;
                bytes.extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
            }
        }
        offsets.push(bytes.len());
    }
    Ok((bytes, offsets))
}

/// Whether every UCS-4 code unit of `raw` (`BIG`: big-endian) is below 0x80, 8 bytes at a
/// time.
fn all_ascii<const BIG: bool>(raw: &[u8]) -> bool {
    // Bits that must be clear in two code units read as one little-endian word: the high
    // bit of the low byte and the three other bytes.
    let mask: u64 = if BIG {
        0x80FF_FFFF_80FF_FFFF
    } else {
        0xFFFF_FF80_FFFF_FF80
    };
    let words = raw.chunks_exact(8);
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    let all = words.fold(u64::from_le_bytes(tail), |all, w| {
        all | u64::from_le_bytes(w.try_into().expect("8 bytes"))
    });
    all & mask == 0
}

/// ASCII items of `chars` UCS-4 units each (`low`: the index of a unit's low byte) appended
/// to `bytes` one byte per unit, trailing NULs cut, each item's end pushed to `offsets`.
fn ascii_items(
    chars: usize,
    raw: &[u8],
    low: usize,
    bytes: &mut Vec<u8>,
    offsets: &mut Vec<usize>,
) {
    let n = raw.len() / (4 * chars);
    // Every unit's low byte, in one pass, padded for the 16-byte copies below.
    let mut lows = Vec::with_capacity(n * chars + 16);
    lows.extend(raw.chunks_exact(4).map(|c| c[low]));
    lows.resize(n * chars + 16, 0);
    if chars <= 16 {
        // Each item copied as 16 bytes (the next item's copy overwrites what is past its
        // end); its length from the last nonzero byte of its `chars`.
        let mask = if chars == 16 {
            u128::MAX
        } else {
            (1u128 << (8 * chars)) - 1
        };
        let start = bytes.len();
        bytes.resize(start + n * chars + 16, 0);
        let mut w = start;
        for i in 0..n {
            let v: [u8; 16] = lows[i * chars..i * chars + 16]
                .try_into()
                .expect("16 bytes");
            bytes[w..w + 16].copy_from_slice(&v);
            let bits = 128 - (u128::from_le_bytes(v) & mask).leading_zeros() as usize;
            w += bits.div_ceil(8);
            offsets.push(w);
        }
        bytes.truncate(w);
    } else {
        for item in lows[..n * chars].chunks_exact(chars) {
            let len = item.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
            bytes.extend_from_slice(&item[..len]);
            offsets.push(bytes.len());
        }
    }
}

/// Decode items of a `U` or `S` dtype (`S` must be UTF-8) from their raw bytes.
pub(crate) fn strings(dtype: &Dtype, raw: &[u8], requested: &'static str) -> Result<Vec<String>> {
    match dtype {
        Dtype::Unicode { chars, order } => {
            let (bytes, offsets) = ucs4_to_utf8(*chars, *order, raw)?;
            Ok(offsets
                .windows(2)
                .map(|w| {
                    // Whole characters were written between two offsets.
                    String::from_utf8_lossy(&bytes[w[0]..w[1]]).into_owned()
                })
                .collect())
        }
        Dtype::Bytes { len } => byte_strings(*len, raw)
            .into_iter()
            .enumerate()
            .map(|(index, b)| {
                String::from_utf8(b).map_err(|e| Error::InvalidString {
                    index,
                    reason: format!("not UTF-8 ({e}); read it with read_byte_strings"),
                })
            })
            .collect(),
        other => Err(Error::TypeMismatch {
            dtype: other.to_numpy_str(),
            requested,
        }),
    }
}

/// Items of an `S{len}` dtype, trailing NULs trimmed.
fn byte_strings(len: usize, raw: &[u8]) -> Vec<Vec<u8>> {
    if len == 0 {
        return Vec::new();
    }
    raw.chunks_exact(len)
        .map(|item| trim_nuls(item, 1).to_vec())
        .collect()
}

impl Array {
    /// A `U` (or UTF-8 `S`) array as strings, in C order, trailing NULs dropped as NumPy
    /// does.
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/dtype_le_U3.b2nd")?;
    /// let s: Vec<String> = a.read_strings()?;
    /// assert_eq!(s.len() as u64, a.nitems());
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    pub fn read_strings(&self) -> Result<Vec<String>> {
        strings(self.dtype(), &self.read_bytes()?, "String")
    }

    /// An `S` array as byte strings, in C order, trailing NULs dropped as NumPy does.
    pub fn read_byte_strings(&self) -> Result<Vec<Vec<u8>>> {
        match self.dtype() {
            Dtype::Bytes { len } => Ok(byte_strings(*len, &self.read_bytes()?)),
            other => Err(Error::TypeMismatch {
                dtype: other.to_numpy_str(),
                requested: "Vec<u8>",
            }),
        }
    }

    /// The field `name` of a structured array, and its items' bytes gathered in C order.
    pub fn read_field_bytes(&self, name: &str) -> Result<(Dtype, Vec<u8>)> {
        let field = self.field(name)?.clone();
        let size = field.dtype.itemsize();
        if field
            .offset
            .checked_add(size)
            .is_none_or(|end| end > self.itemsize())
        {
            return Err(Error::Geometry {
                source_name: self.source().to_string(),
                reason: format!(
                    "field {name:?} lies outside the {}-byte item",
                    self.itemsize()
                ),
            });
        }
        let raw = self.read_bytes()?;
        let mut out = Vec::with_capacity((self.nitems() as usize).saturating_mul(size));
        for item in raw.chunks_exact(self.itemsize().max(1)) {
            out.extend_from_slice(&item[field.offset..field.offset + size]);
        }
        Ok((field.dtype, out))
    }

    /// The field `name` of a structured array as `T` (checked against the field's dtype).
    ///
    /// ```
    /// let a = b2nd::Array::open("tests/data/dtype_struct_list.b2nd")?; // a: <i4, b: <f8, c: S3
    /// let a_values: Vec<i32> = a.read_field("a")?;
    /// let c_values: Vec<Vec<u8>> = a.read_field_byte_strings("c")?; // read_field_strings: UTF-8
    /// assert_eq!(a_values.len(), c_values.len());
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    ///
    /// A subarray field (`('a', '<i4', (2, 3))`) gives its items' values in C order: 6 per
    /// item there.
    pub fn read_field<T: Element + Default>(&self, name: &str) -> Result<Vec<T>> {
        let mut base = &self.field(name)?.dtype;
        while let Dtype::SubArray { base: b, .. } = base {
            base = b;
        }
        element::check::<T>(base)?;
        let base = base.clone();
        let (_, bytes) = self.read_field_bytes(name)?;
        let mut out = vec![T::default(); bytes.len() / base.itemsize().max(1)];
        T::fill_from_bytes(&mut out, &base, &mut |buf| {
            buf.copy_from_slice(&bytes);
            Ok(())
        })?;
        Ok(out)
    }

    /// A `U` (or UTF-8 `S`) field of a structured array as strings.
    pub fn read_field_strings(&self, name: &str) -> Result<Vec<String>> {
        let (dtype, bytes) = self.read_field_bytes(name)?;
        strings(&dtype, &bytes, "String")
    }

    /// An `S` field of a structured array as byte strings.
    pub fn read_field_byte_strings(&self, name: &str) -> Result<Vec<Vec<u8>>> {
        match self.read_field_bytes(name)? {
            (Dtype::Bytes { len }, bytes) => Ok(byte_strings(len, &bytes)),
            (other, _) => Err(Error::TypeMismatch {
                dtype: other.to_numpy_str(),
                requested: "Vec<u8>",
            }),
        }
    }

    fn field(&self, name: &str) -> Result<&Field> {
        match self.dtype() {
            Dtype::Struct(s) => s.field(name).ok_or_else(|| Error::NoField {
                name: name.to_string(),
                fields: s
                    .fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
            other => Err(Error::NoField {
                name: name.to_string(),
                fields: format!("none: the dtype {} is not structured", other.to_numpy_str()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ucs4(items: &[&str], chars: usize, big: bool) -> Vec<u8> {
        let mut raw = Vec::new();
        for s in items {
            let mut cps: Vec<u32> = s.chars().map(u32::from).collect();
            cps.resize(chars, 0);
            for c in cps {
                raw.extend(if big {
                    c.to_be_bytes()
                } else {
                    c.to_le_bytes()
                });
            }
        }
        raw
    }

    #[test]
    fn code_points_become_one_utf8_buffer() {
        let items = ["abc", "", "héllo", "日本", "a\0b"];
        for big in [false, true] {
            let order = if big {
                ByteOrder::Big
            } else {
                ByteOrder::Little
            };
            let (bytes, offsets) = ucs4_to_utf8(5, order, &ucs4(&items, 5, big)).unwrap();
            let got: Vec<&str> = offsets
                .windows(2)
                .map(|w| std::str::from_utf8(&bytes[w[0]..w[1]]).unwrap())
                .collect();
            // An inner NUL stays; trailing ones are padding.
            assert_eq!(got, items);
        }
        let mut bad = ucs4(&["ab"], 2, false);
        bad[4..8].copy_from_slice(&0xD800u32.to_le_bytes());
        let e = ucs4_to_utf8(2, ByteOrder::Little, &bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("0xd800 is not a Unicode scalar value"), "{e}");
    }

    #[test]
    fn ascii_items_at_every_width_equal_their_strings() {
        // The all-ASCII path (16-byte copies up to 16 units, by item beyond), against the
        // strings themselves: widths around 16, NULs inside and at the end, empty items,
        // both byte orders, and with one non-ASCII item (the general path) for comparison.
        let pool = [
            "",
            "a",
            "ab\0c",
            "\0x",
            "abcdefghijklmnop",
            "0123456789abcdefghij",
            "z",
        ];
        for chars in 1..=20 {
            let items: Vec<String> = (0..23)
                .map(|i| {
                    pool[(i * 5 + chars) % pool.len()]
                        .chars()
                        .take(chars)
                        .collect()
                })
                .map(|s: String| s.trim_end_matches('\0').to_string())
                .collect();
            for big in [false, true] {
                let order = if big {
                    ByteOrder::Big
                } else {
                    ByteOrder::Little
                };
                for non_ascii in [false, true] {
                    let mut items = items.clone();
                    if non_ascii {
                        items[7] = "é".into();
                    }
                    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
                    let (bytes, offsets) =
                        ucs4_to_utf8(chars, order, &ucs4(&refs, chars, big)).unwrap();
                    let got: Vec<&str> = offsets
                        .windows(2)
                        .map(|w| std::str::from_utf8(&bytes[w[0]..w[1]]).unwrap())
                        .collect();
                    assert_eq!(got, refs, "{chars} chars, big {big}");
                    assert_eq!(bytes.len(), *offsets.last().unwrap());
                }
            }
        }
        // A unit with its high byte set is not ASCII, whatever its low byte.
        let mut odd = ucs4(&["ab"], 2, false);
        odd[7] = 0x01;
        assert!(ucs4_to_utf8(2, ByteOrder::Little, &odd).is_err());
    }
}
