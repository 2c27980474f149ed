//! A frame's header file parsed from byte ranges: the fixed header fields, where the parts
//! are (header, chunk index, trailer) and the chunk index's own header, checked.

#![forbid(unsafe_code)]

use super::*;

/// Bytes of the frame header this crate checks (through the filter pipeline).
pub(super) const HEADER_PREFIX: usize = 80;
/// Where the frame header's filter pipeline starts: its length, then the filter ids.
pub(super) const FILTER_PIPELINE: usize = 70;
/// Bytes at the end of a frame holding the trailer length (c-blosc2's FRAME_TRAILER_MINLEN).
pub(super) const TRAILER_TAIL: usize = 25;

/// The fixed frame-header fields this crate reads: the one place they are parsed (from the
/// first [`HEADER_PREFIX`] bytes of a frame), with their markers, sizes and version checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FrameHeader {
    /// Frame format version (2 ordinary; 3 = variable-size chunks).
    pub(super) version: u8,
    /// Bytes of the header (metalayers included).
    pub(super) header_len: u32,
    /// Bytes of the whole frame (header, chunks, index, trailer).
    pub(super) frame_len: u64,
    /// Uncompressed data size, when recorded.
    pub(super) nbytes: Option<i64>,
    /// Compressed size of the chunks.
    pub(super) cbytes: i64,
    /// How many chunks c-blosc2 derives from the header (`get_header_info`: the
    /// uncompressed size over the chunk size, rounded up; 0 when either is not positive).
    pub(super) nchunks: i64,
}

impl FrameHeader {
    /// Parse and check the fixed part of a frame header: magic, field markers, sizes,
    /// version. `available` is how many bytes exist from the frame start on.
    pub(super) fn parse(h: &[u8], available: u64) -> Result<FrameHeader, Malformed> {
        if h.len() < HEADER_PREFIX {
            return Err(format!("{} bytes, too short for a frame header", h.len()).into());
        }
        if &h[1..10] != b"\xa8b2frame\0" {
            if h.starts_with(b"PK\x03\x04") {
                return Err(
                    "a zip file, not a Blosc2 frame: a python-blosc2 store or table \
                            (`.b2z`): open it with Store::open or Table::open (`b2nd ls`)"
                        .into(),
                );
            }
            return Err("no Blosc2 frame magic (`b2frame`) at the frame start".into());
        }
        if h[10] != 0xd2 || h[15] != 0xcf {
            return Err("malformed frame header".into());
        }
        let be8 = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[at..at + 8]);
            b
        };
        let header_len = u32::from_be_bytes([h[11], h[12], h[13], h[14]]);
        let frame_len = u64::from_be_bytes(be8(16));
        if u64::from(header_len) < HEADER_PREFIX as u64 || u64::from(header_len) > frame_len {
            return Err(format!(
                "header length {header_len} inconsistent with frame length {frame_len}"
            )
            .into());
        }
        if frame_len > available {
            return Err(format!(
                "truncated: the header declares {frame_len} bytes, only {available} are present"
            )
            .into());
        }
        if i64::try_from(frame_len).is_err() {
            return Err("frame length overflows".into());
        }
        let version = h[0x19] & 0x0f;
        if version > 3 {
            return Err(format!("unknown frame format version {version}").into());
        }
        if h[38] != 0xd3 {
            return Err("malformed frame header (compressed size)".into());
        }
        // c-blosc2 2.15 builds its compression context from these filter ids when it opens a
        // frame, and leaks the super-chunk when an id is one it does not define.
        let nfilters = usize::from(h[FILTER_PIPELINE]);
        if let Some(ids) = h.get(FILTER_PIPELINE + 1..FILTER_PIPELINE + 1 + nfilters.min(6)) {
            if let Some(&id) = ids
                .iter()
                .find(|&&id| (5..=31).contains(&id) || (37..=159).contains(&id))
            {
                return Err(format!(
                    "the frame header's filter pipeline holds filter id {id}, which c-blosc2 does not define"
                )
                .into());
            }
        }
        let raw_nbytes = i64::from_be_bytes(be8(30));
        let chunksize = i64::from(i32::from_be_bytes([h[58], h[59], h[60], h[61]]));
        let nchunks = if raw_nbytes > 0 && chunksize > 0 {
            raw_nbytes / chunksize + i64::from(raw_nbytes % chunksize > 0)
        } else {
            0
        };
        Ok(FrameHeader {
            version,
            header_len,
            frame_len,
            nbytes: (h[29] == 0xd3).then_some(raw_nbytes),
            cbytes: i64::from_be_bytes(be8(39)),
            nchunks,
        })
    }

    /// Check what c-blosc2 derives, unchecked, from the header and the frame's last 25 bytes:
    /// the trailer position and the size of the chunk-offsets index between the chunks and
    /// the trailer (a negative size makes it read into a bad buffer). `tail` is the frame's
    /// last [`TRAILER_TAIL`] bytes; `sparse` frames keep their chunks outside the frame.
    /// Returns the offset of the chunk-offsets index (from the frame start) and its length.
    pub(super) fn check_layout(&self, tail: &[u8], sparse: bool) -> Result<(u64, u64), Malformed> {
        let header_len = i64::from(self.header_len);
        let frame_len = self.frame_len as i64; // checked to fit in `parse`
        let mut cbytes = self.cbytes;
        if tail.len() != TRAILER_TAIL || tail[2] != 0xce {
            return Err("malformed frame trailer".into());
        }
        let trailer_len = i64::from(u32::from_be_bytes([tail[3], tail[4], tail[5], tail[6]]));
        let trailer_offset = frame_len - trailer_len;
        if trailer_len > frame_len
            || trailer_offset < header_len
            || trailer_offset + TRAILER_TAIL as i64 > frame_len
        {
            return Err(format!(
                "trailer of {trailer_len} bytes inconsistent with a frame of {frame_len}"
            )
            .into());
        }
        if cbytes < 0 {
            return Err(format!("negative compressed size {cbytes}").into());
        }
        if !sparse && self.nbytes == Some(0) && trailer_offset - header_len == 0 {
            // No data and no room for any: python-blosc2 keeps the compressed size of the
            // chunks a resize to a zero-length dimension dropped. c-blosc2 reads such a frame
            // as empty.
            cbytes = 0;
        }
        let index_len = if sparse {
            trailer_offset - header_len
        } else {
            trailer_offset - header_len - cbytes
        };
        if index_len == 0 && self.nchunks > 0 {
            // c-blosc2 would allocate an empty index and read a chunk header out of it.
            return Err(format!(
                "the header implies {} chunks, but the frame has no chunk index",
                self.nchunks
            )
            .into());
        }
        if index_len != 0 && index_len < 32 {
            return Err(format!(
                "header, chunk data ({cbytes} bytes) and trailer leave {index_len} bytes for the chunk index"
            )
            .into());
        }
        let index_at = if sparse {
            header_len
        } else {
            header_len + cbytes
        };
        Ok((index_at as u64, index_len as u64))
    }
}

/// Check the header of the chunk-offsets index: c-blosc2 reads offsets out of it with
/// `blosc2_getitem`, which "succeeds" without writing anything for an uninitialised special
/// chunk, leaving C to use an uninitialised offset.
pub(super) fn check_index_header(ih: &[u8], nchunks: i64, index_len: u64) -> Result<(), Malformed> {
    if ih.len() < 32 {
        return Err("truncated chunk index".into());
    }
    // c-blosc2 sizes its per-thread buffers from the index chunk's block size before it
    // decodes anything (`blosc2_getitem`): a block size past the index's own size is refused
    // (found by fuzzing: 1.2 and 2 GiB allocations), as is an index whose size is not the
    // 8 bytes per chunk the header implies (what c-blosc2 checks for in-memory frames only).
    let le = |at: usize| {
        i64::from(i32::from_le_bytes([
            ih[at],
            ih[at + 1],
            ih[at + 2],
            ih[at + 3],
        ]))
    };
    let (nbytes, blocksize, cbytes) = (le(4), le(8), le(12));
    if nchunks > 0 && nbytes != nchunks.saturating_mul(8) {
        return Err(format!(
            "the chunk index holds {nbytes} bytes, not 8 for each of the {nchunks} chunks"
        )
        .into());
    }
    if blocksize < 0 || blocksize > nbytes.max(0) {
        return Err(format!(
            "the chunk index declares blocks of {blocksize} bytes in {nbytes} bytes"
        )
        .into());
    }
    if ih[3] != 8 {
        // getitem would write only `typesize` of the 8 offset bytes.
        return Err(format!("the chunk index has items of {} bytes, not 8", ih[3]).into());
    }
    let extended = ih[2] & 0x05 == 0x05;
    let special = if extended { (ih[31] >> 4) & 0x07 } else { 0 };
    if special == 4 {
        return Err("the chunk index is an uninitialised special chunk".into());
    }
    // c-blosc2 reads offsets out of the index with the compressed size its header declares,
    // and copies a memcpyed (or repeated-value) index's bytes without comparing them with
    // that size (found by fuzzing: a heap-buffer-overflow in `_blosc_getitem`). The index
    // must hold what its header declares, and declare what its kind needs.
    let overhead: i64 = if extended { 32 } else { 16 };
    // A compressed index also holds a 4-byte start offset per block, which `_blosc_getitem`
    // reads without comparing them with the declared size either (found by fuzzing: a
    // 61-byte index of 8 blocks, a heap-buffer-overflow reading `bstarts`).
    let nblocks = if blocksize > 0 {
        (nbytes.max(0) + blocksize - 1) / blocksize
    } else {
        i64::from(nbytes > 0)
    };
    let needs = match special {
        0 if ih[2] & 0x02 != 0 => overhead + nbytes.max(0),
        0 => overhead.saturating_add(nblocks.saturating_mul(4)),
        3 => overhead + 8,
        _ => overhead,
    };
    if cbytes < needs || u64::try_from(cbytes).map_or(true, |c| c > index_len) {
        return Err(format!(
            "the chunk index declares {cbytes} compressed bytes; the frame holds \
             {index_len} for it and its kind needs at least {needs}"
        )
        .into());
    }
    if extended && ih[31] & 0x01 != 0 {
        // c-blosc2 never writes one, and its decompression context would keep the
        // dictionary state for every later chunk (see `RustCodec::ZstdDict`).
        return Err("the chunk index claims a compression dictionary".into());
    }
    Ok(())
}

/// Where the parts of a contiguous frame are, from its start (checked against the frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Bytes of the header; chunk offsets count from here.
    pub header_len: u64,
    /// Where the chunk-offsets index (a Blosc2 chunk of `int64`s) starts.
    pub index_at: u64,
    /// Its length (0: no chunks).
    pub index_len: u64,
}

/// The frame type byte of the header (c-blosc2 `FRAME_TYPE`): 0 contiguous, 1 a directory.
pub(super) const FRAME_TYPE: usize = 26;
/// The fewest header bytes c-blosc2 reads (`FRAME_HEADER_MINLEN`).
pub(super) const HEADER_MINLEN: u64 = 87;

/// The most bytes read at once for the index and trailer where the header says they start.
pub(super) const TAIL_GUESS: u64 = 4 << 20;
/// The most fixed metalayers a frame holds (`BLOSC2_MAX_METALAYERS`).
pub(super) const MAX_METALAYERS: usize = 16;
/// The largest chunk-offsets index decoded (128 M chunks, 1 GiB of offsets).
pub(super) const MAX_OFFSETS: i64 = 1 << 27;

/// Everything a frame's header file says, read from it by ranges: the fixed header fields,
/// where the parts are, the header (metalayers) and trailer (attributes), the compressed
/// chunk index and the super-chunk parameters c-blosc2 derives (`get_header_info`).
pub(super) struct Parsed {
    pub(super) header: FrameHeader,
    pub(super) layout: Layout,
    pub(super) parts: FrameParts,
    pub(super) index: Vec<u8>,
    pub(super) params: FrameParams,
}

impl Parsed {
    /// Parse the frame at the start of `src` (the frame, or a sparse frame's
    /// `chunks.b2frame`): the header's fixed part and the trailer length first, then the
    /// header, index and trailer in one vectored read. Every size is checked against `src`'s
    /// size before anything is allocated for it.
    pub(super) fn read(src: &dyn RangeRead, sparse: bool, source: &str) -> Result<Parsed> {
        let bad = |e: Malformed| Error::Frame {
            source_name: source.to_string(),
            reason: e.0,
        };
        let size = src.size()?;
        // The first 8 KiB hold the header of most frames (metalayers included): one request
        // for a remote source, as python-blosc2's reader makes.
        let prefix = src.read_range(0, crate::format::FRAME_HEADER_GUESS.min(size) as usize)?;
        let header = FrameHeader::parse(&prefix, size).map_err(bad)?;
        if prefix.len() < HEADER_MINLEN as usize {
            return Err(bad("frame header shorter than its fixed part".into()));
        }
        let want_type = u8::from(sparse);
        if prefix[FRAME_TYPE] != want_type {
            return Err(bad(format!(
                "the header's frame type is {} where a {} frame has {want_type}",
                prefix[FRAME_TYPE],
                if sparse { "sparse" } else { "contiguous" }
            )
            .into()));
        }
        // Where the header says the index starts (after the chunks of a contiguous frame):
        // index and trailer are read in one request when they are no larger than
        // TAIL_GUESS, and kept when the trailer confirms where the index is.
        let guess = if sparse {
            Some(u64::from(header.header_len))
        } else {
            u64::try_from(header.cbytes)
                .ok()
                .and_then(|c| c.checked_add(u64::from(header.header_len)))
        }
        .filter(|&at| at < header.frame_len && header.frame_len - at <= TAIL_GUESS);
        let guessed = match guess {
            Some(at) => Some((at, src.read_range(at, (header.frame_len - at) as usize)?)),
            None => None,
        };
        let tail = match &guessed {
            Some((_, b)) if b.len() >= TRAILER_TAIL => b[b.len() - TRAILER_TAIL..].to_vec(),
            _ if header.frame_len >= TRAILER_TAIL as u64 => {
                src.read_range(header.frame_len - TRAILER_TAIL as u64, TRAILER_TAIL)?
            }
            _ => Vec::new(),
        };
        let (index_at, index_len) = header.check_layout(&tail, sparse).map_err(bad)?;
        let trailer_at = index_at + index_len;
        // All three lie inside the frame, which lies inside `src` (checked above).
        let head_len = header.header_len as usize;
        let mut head = vec![0u8; head_len];
        let mut index = vec![0u8; index_len as usize];
        let mut trailer = vec![0u8; (header.frame_len - trailer_at) as usize];
        match guessed {
            Some((at, bytes)) if at == index_at && head_len <= prefix.len() => {
                head.copy_from_slice(&prefix[..head_len]);
                let (i, t) = bytes.split_at(index_len as usize);
                index.copy_from_slice(i);
                trailer.copy_from_slice(t);
            }
            _ => src.read_vectored_at(&mut [
                (0, &mut head[..]),
                (index_at, &mut index[..]),
                (trailer_at, &mut trailer[..]),
            ])?,
        }
        if index_len > 0 {
            check_index_header(&index, header.nchunks, index_len).map_err(bad)?;
        }
        let parts = FrameParts::parse(head, &trailer).map_err(bad)?;
        if parts.metalayer_count() > MAX_METALAYERS {
            return Err(bad(format!(
                "{} metalayers, more than the {MAX_METALAYERS} a frame holds",
                parts.metalayer_count()
            )
            .into()));
        }
        let params = header.params(&parts.header, !sparse).map_err(bad)?;
        Ok(Parsed {
            header,
            layout: Layout {
                header_len: u64::from(header.header_len),
                index_at,
                index_len,
            },
            parts,
            index,
            params,
        })
    }
}

impl FrameHeader {
    /// The super-chunk parameters c-blosc2 2.15 reads from the whole `header`
    /// (`get_header_info`), with its checks.
    pub(super) fn params(&self, h: &[u8], contiguous: bool) -> Result<FrameParams, Malformed> {
        let be4 = |at: usize| i32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let be8 = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[at..at + 8]);
            i64::from_be_bytes(b)
        };
        let typesize = be4(48);
        if typesize <= 0 {
            return Err(format!("the header's typesize is {typesize}").into());
        }
        let (nbytes, chunksize) = (be8(30), be4(58));
        if nbytes > 0
            && chunksize > 0
            && nbytes % i64::from(chunksize) > 0
            && nbytes / i64::from(chunksize) == i64::from(i32::MAX)
        {
            return Err("more chunks than a frame holds".into());
        }
        let codecs = h[27];
        let compcode = match codecs & 0x0f {
            6 => h[77], // BLOSC_UDCODEC_FORMAT: the id is in its own byte
            c => c,
        };
        let nfilters = usize::from(h[FILTER_PIPELINE]);
        if nfilters > 6 {
            return Err(format!("{nfilters} filters in the frame header, at most 6 exist").into());
        }
        let mut filters = [0u8; 6];
        let mut filters_meta = [0u8; 6];
        filters[..nfilters].copy_from_slice(&h[FILTER_PIPELINE + 1..][..nfilters]);
        filters_meta[..nfilters].copy_from_slice(&h[FILTER_PIPELINE + 9..][..nfilters]);
        Ok(FrameParams {
            compcode,
            compcode_meta: h[78],
            clevel: codecs >> 4,
            // What C leaves there: the whole flags byte plus one.
            splitmode: h[28].wrapping_add(1),
            typesize,
            blocksize: be4(53),
            chunksize,
            filters,
            filters_meta,
            nchunks: self.nchunks,
            nbytes,
            cbytes: self.cbytes,
            contiguous,
        })
    }
}
