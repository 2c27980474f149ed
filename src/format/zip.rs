//! The zip container of a `.b2z` store (PKWARE's APPNOTE 6.3): which members it holds and
//! where each member's bytes lie, and writing one.
//!
//! A `.b2z` is read in place: python-blosc2 opens each member as a frame at the offset of its
//! data, so its members are *stored* (method 0), never compressed, and this reader finds, for
//! each member, that offset (local header offset + 30 + name length + extra length). Only what
//! such a file needs is accepted: one disk, no encryption, names that are relative paths
//! without `.` or `..` parts, no duplicate names, members inside the file and apart from each
//! other and from the central directory. ZIP64 records (archives or members over 4 GiB, more
//! than 65535 members) are read and written.

#![forbid(unsafe_code)]

use super::Malformed;
use crate::storage::RangeRead;

const EOCD_SIG: u32 = 0x0605_4b50;
const EOCD64_LOCATOR_SIG: u32 = 0x0706_4b50;
const EOCD64_SIG: u32 = 0x0606_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const LOCAL_SIG: u32 = 0x0403_4b50;
const EOCD_LEN: u64 = 22;
const EOCD64_LOCATOR_LEN: u64 = 20;
const EOCD64_LEN: u64 = 56;
const CENTRAL_LEN: usize = 46;
const LOCAL_LEN: u64 = 30;
/// Zip64 extended information extra field.
const ZIP64_EXTRA: u16 = 0x0001;
/// General purpose flag: the name is UTF-8.
const FLAG_UTF8: u16 = 1 << 11;
/// General purpose flags: encryption (bit 0) and strong encryption (bit 6).
const FLAG_ENCRYPTED: u16 = 1 | (1 << 6);

/// One member of a zip file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ZipEntry {
    /// The member's name: a relative path with `/` separators.
    pub name: String,
    /// Where the member's (stored) bytes start in the file.
    pub data_offset: u64,
    /// Bytes of the member as stored.
    pub size: u64,
    /// Stored (method 0); anything else is compressed and cannot be read in place.
    pub stored: bool,
}

/// The members of a zip file, in central-directory order (directory entries left out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ZipIndex {
    pub entries: Vec<ZipEntry>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Where the central directory is and how many entries it holds.
struct Directory {
    offset: u64,
    size: u64,
    entries: u64,
    /// Where the end records start (nothing of a member may lie at or after it).
    end: u64,
}

fn read(src: &dyn RangeRead, pos: u64, len: usize, what: &str) -> Result<Vec<u8>, Malformed> {
    src.read_range(pos, len).map_err(|_| {
        Malformed(format!(
            "{what} at byte {pos} runs past the end of the file"
        ))
    })
}

/// Find the end of central directory record (and its ZIP64 form).
fn find_directory(src: &dyn RangeRead, len: u64) -> Result<Directory, Malformed> {
    if len < EOCD_LEN {
        return Err("too short to be a zip file".into());
    }
    // The record is the last 22 bytes plus a comment of at most 65535 bytes.
    let tail_len = len.min(EOCD_LEN + 0xFFFF);
    let tail = read(
        src,
        len - tail_len,
        tail_len as usize,
        "the end of the file",
    )?;
    let at = (0..=tail.len() - EOCD_LEN as usize)
        .rev()
        .find(|&i| {
            u32_at(&tail, i) == EOCD_SIG
                && i + EOCD_LEN as usize + usize::from(u16_at(&tail, i + 20)) == tail.len()
        })
        .ok_or("no end of central directory record: not a zip file (or a truncated one)")?;
    let e = &tail[at..];
    let eocd_pos = len - tail_len + at as u64;
    let (disk, cd_disk) = (u16_at(e, 4), u16_at(e, 6));
    let (on_disk, total) = (u16_at(e, 8), u16_at(e, 10));
    let (size, offset) = (u32_at(e, 12), u32_at(e, 16));
    let zip64 = total == 0xFFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF;
    if !zip64 {
        if disk != 0 || cd_disk != 0 || on_disk != total {
            return Err("a multi-disk zip file".into());
        }
        return Ok(Directory {
            offset: u64::from(offset),
            size: u64::from(size),
            entries: u64::from(total),
            end: eocd_pos,
        });
    }
    let loc_pos = eocd_pos
        .checked_sub(EOCD64_LOCATOR_LEN)
        .ok_or("ZIP64 end record without its locator")?;
    let loc = read(
        src,
        loc_pos,
        EOCD64_LOCATOR_LEN as usize,
        "the ZIP64 locator",
    )?;
    if u32_at(&loc, 0) != EOCD64_LOCATOR_SIG {
        return Err("ZIP64 end record without its locator".into());
    }
    if u32_at(&loc, 4) != 0 || u32_at(&loc, 16) > 1 {
        return Err("a multi-disk zip file".into());
    }
    let rec_pos = u64_at(&loc, 8);
    if rec_pos.checked_add(EOCD64_LEN).is_none_or(|e| e > loc_pos) {
        return Err("the ZIP64 end record lies outside the file".into());
    }
    let r = read(src, rec_pos, EOCD64_LEN as usize, "the ZIP64 end record")?;
    if u32_at(&r, 0) != EOCD64_SIG {
        return Err("bad ZIP64 end record signature".into());
    }
    if u32_at(&r, 16) != 0 || u32_at(&r, 20) != 0 || u64_at(&r, 24) != u64_at(&r, 32) {
        return Err("a multi-disk zip file".into());
    }
    Ok(Directory {
        offset: u64_at(&r, 48),
        size: u64_at(&r, 40),
        entries: u64_at(&r, 32),
        end: rec_pos,
    })
}

/// The bytes of a frame's last part a store reads when it opens a member: its chunk index
/// and trailer, which python-blosc2's members keep in their last few KiB.
const MEMBER_TAIL: u64 = 64 << 10;

/// The ranges of a `len`-byte zip file a store reads when it opens each member (local
/// header offset, data start and end as the central directory gives them): the local header
/// through the frame reader's first read, and the member's last [`MEMBER_TAIL`] bytes.
fn member_ends(members: impl Iterator<Item = (u64, u64, u64)>, len: u64) -> Vec<(u64, usize)> {
    let mut out = Vec::new();
    for (local, start, end) in members {
        let head_end = start.saturating_add(super::FRAME_HEADER_GUESS).min(len);
        if local < head_end {
            out.push((local, (head_end - local) as usize));
        }
        let (from, to) = (end.saturating_sub(MEMBER_TAIL).max(head_end), end.min(len));
        if from < to {
            out.push((from, (to - from) as usize));
        }
    }
    out
}

impl ZipIndex {
    /// Read the central directory of the `len`-byte zip file `src` and the local header of
    /// every member, checking everything the module docs list.
    pub(crate) fn read(src: &dyn RangeRead, len: u64) -> Result<ZipIndex, Malformed> {
        let dir = find_directory(src, len)?;
        dir.offset
            .checked_add(dir.size)
            .filter(|&e| e <= dir.end)
            .ok_or("the central directory lies outside the file")?;
        // Each entry takes at least 46 bytes: the count cannot exceed what the size allows.
        if dir.entries > dir.size / CENTRAL_LEN as u64 {
            return Err(Malformed(format!(
                "{} entries cannot fit in a central directory of {} bytes",
                dir.entries, dir.size
            )));
        }
        let cd = read(src, dir.offset, dir.size as usize, "the central directory")?;
        // First the central directory's entries, then every member's local header: those
        // reads (and the frame headers and trailers a store reads next) are asked of the
        // source in one batch, which a remote source fetches concurrently.
        struct Central {
            name: String,
            raw_name: Vec<u8>,
            offset: u64,
            csize: u64,
            stored: bool,
            extra: u64,
        }
        let mut centrals: Vec<Central> = Vec::new();
        let mut names = std::collections::HashSet::new();
        let mut at = 0usize;
        for i in 0..dir.entries {
            let h = cd
                .get(at..at + CENTRAL_LEN)
                .ok_or_else(|| Malformed(format!("central directory entry {i} is truncated")))?;
            if u32_at(h, 0) != CENTRAL_SIG {
                return Err(Malformed(format!(
                    "central directory entry {i}: bad signature"
                )));
            }
            let flags = u16_at(h, 8);
            let method = u16_at(h, 10);
            let (n, e, c) = (
                usize::from(u16_at(h, 28)),
                usize::from(u16_at(h, 30)),
                usize::from(u16_at(h, 32)),
            );
            let rest = cd
                .get(at + CENTRAL_LEN..at + CENTRAL_LEN + n + e + c)
                .ok_or_else(|| Malformed(format!("central directory entry {i} is truncated")))?;
            let (raw_name, extra) = (&rest[..n], &rest[n..n + e]);
            let name = entry_name(raw_name, flags & FLAG_UTF8 != 0)
                .map_err(|why| Malformed(format!("central directory entry {i}: {why}")))?;
            let what = |why: &str| Malformed(format!("member {name:?}: {why}"));
            if flags & FLAG_ENCRYPTED != 0 {
                return Err(what("encrypted"));
            }
            let (mut csize, mut usize_, mut offset) = (
                u64::from(u32_at(h, 20)),
                u64::from(u32_at(h, 24)),
                u64::from(u32_at(h, 42)),
            );
            let mut disk = u32::from(u16_at(h, 34));
            zip64_fields(extra, &mut usize_, &mut csize, &mut offset, &mut disk)
                .map_err(|why| what(&why.0))?;
            if disk != 0 {
                return Err(what("on another disk of a multi-disk zip file"));
            }
            at += CENTRAL_LEN + n + e + c;
            if name.ends_with('/') {
                // A directory entry: no data.
                continue;
            }
            check_name(&name).map_err(|why| what(&why.0))?;
            if !names.insert(name.clone()) {
                return Err(what("occurs twice"));
            }
            let stored = method == 0;
            if stored && csize != usize_ {
                return Err(what("stored with a size different from its length"));
            }
            centrals.push(Central {
                name,
                raw_name: raw_name.to_vec(),
                offset,
                csize,
                stored,
                extra: e as u64,
            });
        }
        src.prefetch(&member_ends(
            centrals.iter().map(|c| {
                let start = c
                    .offset
                    .saturating_add(LOCAL_LEN + c.raw_name.len() as u64 + c.extra);
                (c.offset, start, start.saturating_add(c.csize))
            }),
            len,
        ));
        let mut entries: Vec<ZipEntry> = Vec::with_capacity(centrals.len());
        let mut spans: Vec<(u64, u64, usize)> = Vec::new();
        for Central {
            name,
            raw_name,
            offset,
            csize,
            stored,
            ..
        } in centrals
        {
            let n = raw_name.len();
            let what = |why: &str| Malformed(format!("member {name:?}: {why}"));
            let local =
                read(src, offset, LOCAL_LEN as usize, "a local header").map_err(|m| what(&m.0))?;
            if u32_at(&local, 0) != LOCAL_SIG {
                return Err(what("bad local header signature"));
            }
            let (ln, le) = (u64::from(u16_at(&local, 26)), u64::from(u16_at(&local, 28)));
            if ln != n as u64 {
                return Err(what("local and central names differ"));
            }
            let local_name =
                read(src, offset + LOCAL_LEN, n, "a local name").map_err(|m| what(&m.0))?;
            if local_name != raw_name {
                return Err(what("local and central names differ"));
            }
            let data_offset = offset + LOCAL_LEN + ln + le;
            let data_end = data_offset
                .checked_add(csize)
                .filter(|&e| e <= dir.offset)
                .ok_or_else(|| what("its bytes run into the central directory or past the file"))?;
            spans.push((offset, data_end, entries.len()));
            entries.push(ZipEntry {
                name,
                data_offset,
                size: csize,
                stored,
            });
        }
        if at != cd.len() {
            return Err(Malformed(format!(
                "the central directory holds {} bytes after its {} entries",
                cd.len() - at,
                dir.entries
            )));
        }
        spans.sort_unstable();
        for w in spans.windows(2) {
            if w[1].0 < w[0].1 {
                return Err(Malformed(format!(
                    "members {:?} and {:?} overlap",
                    entries[w[0].2].name, entries[w[1].2].name
                )));
            }
        }
        Ok(ZipIndex { entries })
    }

    /// The member named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&ZipEntry> {
        self.entries.iter().find(|e| e.name == name)
    }
}

/// A member name: UTF-8 when flagged, else CP437, of which only ASCII is accepted here.
fn entry_name(raw: &[u8], utf8: bool) -> Result<String, Malformed> {
    if utf8 || raw.is_ascii() {
        String::from_utf8(raw.to_vec()).map_err(|_| "a name that is not valid UTF-8".into())
    } else {
        Err("a non-ASCII name not flagged as UTF-8 (CP437)".into())
    }
}

/// A member name must be a relative path of plain parts.
fn check_name(name: &str) -> Result<(), Malformed> {
    if name.is_empty() {
        return Err("an empty name".into());
    }
    // A backslash is an ordinary character here (python-blosc2 writes member names such as
    // `_indexes/50%\\/x/...` for escaped column names); members are read in place, never
    // extracted, so it cannot act as a separator.
    if name.starts_with('/') || name.contains('\0') {
        return Err("not a relative path".into());
    }
    if name
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Err("a name with an empty, `.` or `..` part".into());
    }
    if name.as_bytes().get(1) == Some(&b':') {
        return Err("a name with a drive letter".into());
    }
    Ok(())
}

/// Apply a central entry's ZIP64 extra field to the fields saturated at their 32-bit (or
/// 16-bit) maximum, in the APPNOTE's order.
fn zip64_fields(
    mut extra: &[u8],
    usize_: &mut u64,
    csize: &mut u64,
    offset: &mut u64,
    disk: &mut u32,
) -> Result<(), Malformed> {
    while extra.len() >= 4 {
        let (id, len) = (u16_at(extra, 0), usize::from(u16_at(extra, 2)));
        let body = extra
            .get(4..4 + len)
            .ok_or("an extra field runs past its entry")?;
        if id == ZIP64_EXTRA {
            let mut b = body;
            let mut take8 = |v: &mut u64| -> Result<(), Malformed> {
                if *v == 0xFFFF_FFFF {
                    if b.len() < 8 {
                        return Err("a short ZIP64 extra field".into());
                    }
                    *v = u64_at(b, 0);
                    b = &b[8..];
                }
                Ok(())
            };
            take8(usize_)?;
            take8(csize)?;
            take8(offset)?;
            if *disk == 0xFFFF {
                if b.len() < 4 {
                    return Err("a short ZIP64 extra field".into());
                }
                *disk = u32_at(b, 0);
            }
        }
        extra = &extra[4 + len..];
    }
    Ok(())
}

/// CRC-32 (IEEE 802.3, the zip checksum) of `data`.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    const fn table() -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    const TABLE: [u32; 256] = table();
    !data.iter().fold(!0u32, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

/// Writes a zip of stored members (what a `.b2z` is) into a byte sink, member by member,
/// then the central directory. Members and offsets over 4 GiB are refused (ZIP64 is read,
/// not written).
pub(crate) struct ZipWriter<W: std::io::Write> {
    out: W,
    at: u64,
    central: Vec<u8>,
    count: u64,
}

impl<W: std::io::Write> ZipWriter<W> {
    pub(crate) fn new(out: W) -> ZipWriter<W> {
        ZipWriter {
            out,
            at: 0,
            central: Vec::new(),
            count: 0,
        }
    }

    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.out.write_all(b)?;
        self.at += b.len() as u64;
        Ok(())
    }

    /// Add member `name` (a checked relative path) holding `data`, stored.
    pub(crate) fn add(&mut self, name: &str, data: &[u8]) -> std::io::Result<()> {
        let too_big = || std::io::Error::other("a zip member or offset over 4 GiB");
        check_name(name).map_err(std::io::Error::other)?;
        let size = u32::try_from(data.len()).map_err(|_| too_big())?;
        let offset = u32::try_from(self.at).map_err(|_| too_big())?;
        let n = u16::try_from(name.len()).map_err(|_| too_big())?;
        let crc = crc32(data);
        // Version 2.0, UTF-8 names (bit 11), stored, DOS time 1980-01-01 00:00.
        let flags: u16 = if name.is_ascii() { 0 } else { FLAG_UTF8 };
        let (time, date): (u16, u16) = (0, (1 << 5) | 1);
        let mut local = Vec::with_capacity(30 + name.len());
        local.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        for v in [20u16, flags, 0, time, date] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, size, size] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        local.extend_from_slice(&n.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        self.put(&local)?;
        self.put(data)?;
        let c = &mut self.central;
        c.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        for v in [20u16, 20, flags, 0, time, date] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, size, size] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        for v in [n, 0, 0, 0, 0] {
            c.extend_from_slice(&v.to_le_bytes());
        }
        c.extend_from_slice(&0u32.to_le_bytes()); // external attributes
        c.extend_from_slice(&offset.to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        self.count += 1;
        Ok(())
    }

    /// Write the central directory and the end record; the sink, flushed.
    pub(crate) fn finish(mut self) -> std::io::Result<W> {
        let too_big = || std::io::Error::other("a zip over 4 GiB or 65535 members");
        let cd_at = u32::try_from(self.at).map_err(|_| too_big())?;
        let cd_len = u32::try_from(self.central.len()).map_err(|_| too_big())?;
        let count = u16::try_from(self.count).map_err(|_| too_big())?;
        let central = std::mem::take(&mut self.central);
        self.put(&central)?;
        let mut end = Vec::with_capacity(22);
        end.extend_from_slice(&EOCD_SIG.to_le_bytes());
        for v in [0u16, 0, count, count] {
            end.extend_from_slice(&v.to_le_bytes());
        }
        end.extend_from_slice(&cd_len.to_le_bytes());
        end.extend_from_slice(&cd_at.to_le_bytes());
        end.extend_from_slice(&0u16.to_le_bytes());
        self.put(&end)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn written_zips_read_back() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let mut w = ZipWriter::new(Vec::new());
        w.add("embed.b2e", b"abc").unwrap();
        w.add("dir1/big.b2nd", &[7u8; 1000]).unwrap();
        let bytes = w.finish().unwrap();
        let index = ZipIndex::read(
            &crate::storage::Memory::new(bytes.clone()),
            bytes.len() as u64,
        )
        .unwrap();
        assert_eq!(index.entries.len(), 2);
        let e = index.get("dir1/big.b2nd").unwrap();
        assert!(e.stored && e.size == 1000);
        assert_eq!(&bytes[e.data_offset as usize..][..1000], &[7u8; 1000][..]);
        let mut w = ZipWriter::new(Vec::new());
        assert!(w.add("../x", b"").is_err());
    }

    use super::*;

    #[test]
    fn names_must_be_plain_relative_paths() {
        for bad in ["", "/a", "a/../b", "..", "a//b", "./a", "C:x", "a/", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in [
            "embed.b2e",
            "dir1/big.b2nd",
            "_cols/a%2Fb.b2nd",
            "_indexes/50%\\/x/s.b2nd",
        ] {
            assert!(check_name(good).is_ok(), "{good:?}");
        }
    }
}
