//! [`FrameParts`]: the parts of a frame an in-place change rewrites: the header (its size
//! fields and the content of its fixed-size metalayers), the chunk-offsets index and the
//! trailer (the variable-length metalayers, i.e. user attributes). Parsed from, and written
//! as, the bytes c-blosc2 writes (`blosc/frame.c`: `new_header_frame`,
//! `frame_update_trailer`); anything else is refused by name.

#![forbid(unsafe_code)]

use super::Malformed;

/// Header field offsets (c-blosc2 `frame.h`).
const FRAME_LEN: usize = 16;
const FRAME_NBYTES: usize = 30;
const FRAME_CBYTES: usize = 39;
const FRAME_CHUNKSIZE: usize = 58;
const FRAME_CODECS: usize = 27;
const FRAME_HAS_VLMETALAYERS: usize = 68;
/// The filter pipeline: a fixext16 whose first byte is the number of filters (6), then the
/// filters, the codec id (`udcodec`), the codec meta and the filters' meta.
const FRAME_FILTER_PIPELINE: usize = 70;
/// Where the metalayers section of the header starts (FRAME_HEADER_MINLEN).
const FRAME_METALAYERS: usize = 87;
/// The trailer format version c-blosc2 writes (FRAME_TRAILER_VERSION).
const TRAILER_VERSION: u8 = 1;

/// Index-entry code of a chunk of zeros (bit 63 plus `BLOSC2_SPECIAL_ZERO` in the top byte).
pub(crate) const ZERO_CHUNK_OFFSET: i64 = ((1u64 << 63) | (1u64 << 56)) as i64;

/// The index entry c-blosc2 records for a compressed chunk that is a special chunk (zeros,
/// NaN, uninitialised: stored as a code, no bytes), or `None` for a chunk with data.
pub(crate) fn special_offset(chunk: &[u8]) -> Option<i64> {
    if chunk.len() < 32 || chunk[2] & 0x05 != 0x05 {
        return None;
    }
    match (chunk[31] >> 4) & 0x07 {
        kind @ (1 | 2 | 4) => Some(((1u64 << 63) | (u64::from(kind) << 56)) as i64),
        _ => None,
    }
}

/// The header, and the attributes of the trailer, of one frame.
#[derive(Debug, Clone)]
pub(crate) struct FrameParts {
    /// The whole header (`header_len` bytes).
    pub(crate) header: Vec<u8>,
    /// Each metalayer of the header: name, where its content starts in the header, length.
    metalayers: Vec<(String, usize, usize)>,
    /// The variable-length metalayers (attributes), each as stored: a compressed chunk.
    pub(crate) vlmeta: Vec<(String, Vec<u8>)>,
}

/// A big-endian cursor over `bytes` for the msgpack-like layouts here.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!("{} truncated at byte {}", self.what, self.at).into());
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn byte(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn expect(&mut self, want: u8) -> Result<(), Malformed> {
        let at = self.at;
        let got = self.byte()?;
        if got != want {
            return Err(format!(
                "{}: byte {at} is {got:#04x}, expected {want:#04x}",
                self.what
            )
            .into());
        }
        Ok(())
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A map of `name -> int32 offset` entries as c-blosc2 writes them (fixstr names).
    fn offsets_map(&mut self) -> Result<Vec<(String, usize)>, Malformed> {
        self.expect(0xde)?;
        let n = self.u16()?;
        let mut out = Vec::with_capacity(usize::from(n).min(1024));
        for _ in 0..n {
            let m = self.byte()?;
            if m & 0xe0 != 0xa0 {
                return Err(format!("{}: a name is not a short string", self.what).into());
            }
            let name = self.take(usize::from(m & 0x1f))?;
            let name = std::str::from_utf8(name)
                .map_err(|_| Malformed(format!("{}: a name is not UTF-8", self.what)))?;
            self.expect(0xd2)?;
            let off = self.u32()?;
            out.push((name.to_string(), off as usize));
        }
        Ok(out)
    }
}

/// The frame length a header records (`None`: the field's marker is not there).
pub(crate) fn header_frame_len(header: &[u8]) -> Option<u64> {
    (header.get(FRAME_LEN - 1) == Some(&0xcf))
        .then(|| {
            Some(u64::from_be_bytes(
                header.get(FRAME_LEN..FRAME_LEN + 8)?.try_into().ok()?,
            ))
        })
        .flatten()
}

impl FrameParts {
    /// Parse the `header` (all `header_len` bytes) and the `trailer` (from its start to the
    /// frame's end) of a frame.
    pub(crate) fn parse(header: Vec<u8>, trailer: &[u8]) -> Result<FrameParts, Malformed> {
        let mut c = Cursor {
            bytes: &header,
            at: FRAME_METALAYERS,
            what: "frame header metalayers",
        };
        if header.len() < FRAME_METALAYERS {
            return Err("frame header shorter than its fixed part".into());
        }
        for (at, want) in [
            (FRAME_NBYTES - 1, 0xd3),
            (FRAME_CBYTES - 1, 0xd3),
            (FRAME_LEN - 1, 0xcf),
        ] {
            if header[at] != want {
                return Err(format!("frame header byte {at} is not {want:#04x}").into());
            }
        }
        if !matches!(header[FRAME_HAS_VLMETALAYERS], 0xc2 | 0xc3) {
            return Err("frame header: the attributes flag is not a boolean".into());
        }
        c.expect(0x93)?;
        c.expect(0xcd)?;
        c.u16()?;
        let index = c.offsets_map()?;
        c.expect(0xdc)?;
        if usize::from(c.u16()?) != index.len() {
            return Err("frame header: metalayer index and values differ in number".into());
        }
        let mut metalayers = Vec::with_capacity(index.len());
        for (name, off) in index {
            c.at = off;
            c.expect(0xc6)?;
            let len = c.u32()? as usize;
            c.take(len)?;
            metalayers.push((name, off + 5, len));
        }

        let mut t = Cursor {
            bytes: trailer,
            at: 0,
            what: "frame trailer",
        };
        t.expect(0x94)?;
        let version = t.byte()?;
        if version != TRAILER_VERSION {
            return Err(format!("frame trailer version {version} is not understood").into());
        }
        t.expect(0x93)?;
        t.expect(0xcd)?;
        t.u16()?;
        let index = t.offsets_map()?;
        t.expect(0xdc)?;
        if usize::from(t.u16()?) != index.len() {
            return Err("frame trailer: attribute index and values differ in number".into());
        }
        let mut vlmeta = Vec::with_capacity(index.len());
        for (name, off) in index {
            t.at = off;
            t.expect(0xc6)?;
            let len = t.u32()? as usize;
            vlmeta.push((name, t.take(len)?.to_vec()));
        }
        Ok(FrameParts {
            header,
            metalayers,
            vlmeta,
        })
    }

    /// The decoded bytes of all chunks the header records.
    pub(crate) fn nbytes(&self) -> i64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.header[FRAME_NBYTES..FRAME_NBYTES + 8]);
        i64::from_be_bytes(b)
    }

    /// Names and contents of the header's metalayers, in stored order.
    pub(crate) fn metalayers(&self) -> Vec<(String, Vec<u8>)> {
        self.metalayers
            .iter()
            .map(|(n, at, len)| (n.clone(), self.header[*at..at + len].to_vec()))
            .collect()
    }

    /// How many metalayers the header holds.
    pub(crate) fn metalayer_count(&self) -> usize {
        self.metalayers.len()
    }

    /// The content of the header's metalayer `name`.
    pub(crate) fn metalayer(&self, name: &str) -> Option<&[u8]> {
        self.metalayers
            .iter()
            .find(|(n, ..)| n == name)
            .map(|&(_, at, len)| &self.header[at..at + len])
    }

    /// The header with new size fields, the attributes flag, and metalayer `meta.0`'s
    /// content replaced by `meta.1` (which must have the same length: metalayers have a fixed
    /// size once written).
    pub(crate) fn new_header(
        &self,
        frame_len: u64,
        nbytes: i64,
        cbytes: i64,
        meta: Option<(&str, &[u8])>,
        has_vlmeta: bool,
        chunksize: Option<i32>,
    ) -> Result<Vec<u8>, Malformed> {
        let mut h = self.header.clone();
        if let Some(cs) = chunksize {
            // A frame that never held a chunk records 0 (readers derive the chunk count
            // from nbytes / chunksize).
            if h[FRAME_CHUNKSIZE - 1] != 0xd2 {
                return Err("frame header: malformed chunk size field".into());
            }
            h[FRAME_CHUNKSIZE..FRAME_CHUNKSIZE + 4].copy_from_slice(&cs.to_be_bytes());
        }
        h[FRAME_LEN..FRAME_LEN + 8].copy_from_slice(&frame_len.to_be_bytes());
        h[FRAME_NBYTES..FRAME_NBYTES + 8].copy_from_slice(&nbytes.to_be_bytes());
        h[FRAME_CBYTES..FRAME_CBYTES + 8].copy_from_slice(&cbytes.to_be_bytes());
        h[FRAME_HAS_VLMETALAYERS] = if has_vlmeta { 0xc3 } else { 0xc2 };
        if let Some((name, content)) = meta {
            let Some(&(_, at, len)) = self.metalayers.iter().find(|(n, ..)| n == name) else {
                return Err(format!("the frame has no `{name}` metalayer").into());
            };
            if len != content.len() {
                return Err(format!(
                    "the `{name}` metalayer has {len} bytes, its new content {}",
                    content.len()
                )
                .into());
            }
            h[at..at + len].copy_from_slice(content);
        }
        Ok(h)
    }
}

/// The compression settings a frame's header records for its chunks (c-blosc2 `frame.h`:
/// the codecs byte and the filter pipeline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrameCodec {
    pub(crate) compcode: u8,
    pub(crate) compcode_meta: u8,
    pub(crate) clevel: u8,
    pub(crate) filters: [u8; 6],
    pub(crate) filters_meta: [u8; 6],
}

impl FrameParts {
    /// The compression settings the header records.
    pub(crate) fn codec(&self) -> Result<FrameCodec, Malformed> {
        let h = &self.header;
        let p = FRAME_FILTER_PIPELINE;
        if h.len() < FRAME_METALAYERS || h[p - 1] != 0xd8 || h[p] != 6 {
            return Err("frame header: malformed filter pipeline".into());
        }
        let codecs = h[FRAME_CODECS];
        // A codec id past the nibble's range is recorded in the pipeline's `udcodec`.
        let compcode = match codecs & 0x0f {
            n if n < 6 => n,
            _ => h[p + 7],
        };
        let six = |at: usize| -> [u8; 6] { h[at..at + 6].try_into().unwrap_or([0; 6]) };
        Ok(FrameCodec {
            compcode,
            compcode_meta: h[p + 8],
            clevel: codecs >> 4,
            filters: six(p + 1),
            filters_meta: six(p + 9),
        })
    }
}

/// A frame trailer holding `vlmeta` (name, stored value) as c-blosc2 writes it.
pub(crate) fn trailer_bytes(vlmeta: &[(String, Vec<u8>)]) -> Result<Vec<u8>, Malformed> {
    if vlmeta.len() > usize::from(u16::MAX) {
        return Err("too many attributes".into());
    }
    let mut t = vec![0x94, TRAILER_VERSION, 0x93, 0xcd, 0, 0, 0xde];
    t.extend_from_slice(&(vlmeta.len() as u16).to_be_bytes());
    let mut slots = Vec::with_capacity(vlmeta.len());
    for (name, _) in vlmeta {
        if name.len() >= 32 {
            return Err(format!("attribute name `{name}` longer than 31 bytes").into());
        }
        t.push(0xa0 + name.len() as u8);
        t.extend_from_slice(name.as_bytes());
        t.push(0xd2);
        slots.push(t.len());
        t.extend_from_slice(&[0; 4]);
    }
    // The map's size counts from the uint16 size field itself (byte 3 on).
    let map_size =
        u16::try_from(t.len() - 3).map_err(|_| Malformed("attribute index too large".into()))?;
    t[4..6].copy_from_slice(&map_size.to_be_bytes());
    t.push(0xdc);
    t.extend_from_slice(&(vlmeta.len() as u16).to_be_bytes());
    for ((_, value), slot) in vlmeta.iter().zip(slots) {
        let at = u32::try_from(t.len()).map_err(|_| Malformed("attributes too large".into()))?;
        t[slot..slot + 4].copy_from_slice(&at.to_be_bytes());
        let len =
            u32::try_from(value.len()).map_err(|_| Malformed("attribute too large".into()))?;
        t.push(0xc6);
        t.extend_from_slice(&len.to_be_bytes());
        t.extend_from_slice(value);
    }
    let total = u32::try_from(t.len() + 23).map_err(|_| Malformed("trailer too large".into()))?;
    t.push(0xce);
    t.extend_from_slice(&total.to_be_bytes());
    t.extend_from_slice(&[0xd8, 0]);
    t.extend_from_slice(&[0; 16]);
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trailer_roundtrip() {
        let v = vec![("a".to_string(), vec![1, 2, 3]), ("bb".into(), vec![])];
        let t = trailer_bytes(&v).unwrap();
        assert_eq!(
            t.len() as u32,
            u32::from_be_bytes([
                t[t.len() - 22],
                t[t.len() - 21],
                t[t.len() - 20],
                t[t.len() - 19]
            ])
        );
        let mut header = vec![0u8; FRAME_METALAYERS];
        header[FRAME_NBYTES - 1] = 0xd3;
        header[FRAME_CBYTES - 1] = 0xd3;
        header[FRAME_LEN - 1] = 0xcf;
        header[FRAME_HAS_VLMETALAYERS] = 0xc3;
        header.extend_from_slice(&[0x93, 0xcd, 0, 5, 0xde, 0, 0, 0xdc, 0, 0]);
        let p = FrameParts::parse(header, &t).unwrap();
        assert_eq!(p.vlmeta, v);
        for cut in 0..t.len() - 23 {
            assert!(
                FrameParts::parse(p.header.clone(), &t[..cut]).is_err(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn special_offsets() {
        let mut c = [0u8; 32];
        c[2] = 0x05;
        c[31] = 0x10;
        assert_eq!(special_offset(&c), Some(ZERO_CHUNK_OFFSET));
        c[31] = 0x30; // repeated value: stored with its bytes
        assert_eq!(special_offset(&c), None);
    }
}
