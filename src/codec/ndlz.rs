//! The NDLZ codec (c-blosc2 plugin, codec id 32): a Lempel-Ziv over the 2-D cells of a block.
//!
//! Written from c-blosc2's definition (`plugins/codecs/ndlz/ndlz4x4.c`, `ndlz8x8.c`,
//! `ndlz_decompress`): the codec meta is the cell side, 4 or 8. A stream starts with `ndim`
//! (must be 2) and the block shape as two little-endian `i32`; then, for each cell in C order
//! over the cell grid (edge cells cut short by the block), a token says where the cell's bytes
//! come from: literally from the stream, a whole earlier cell of the stream, one repeated byte,
//! or earlier rows of the stream plus literal rows. Cells are written row by row into the
//! C-order block, `cut rows x cut columns` bytes taken in order from the cell's source. Items are
//! bytes (NDLZ is for typesize 1). Every back-reference is checked to lie inside the stream,
//! and the cells must end exactly at the block's last byte, as in C.

#![forbid(unsafe_code)]

use crate::codec::error::ChunkError;

/// Where a cell's bytes are read from.
enum Source {
    /// At this offset of the stream.
    Stream(usize),
    /// The scratch cell.
    Local,
    /// A cell of one repeated byte.
    Repeat,
}

/// Decode one NDLZ stream with cells of side `cell` (4 or 8) into `out`; the number of bytes
/// the stream's block holds.
pub(crate) fn decode(input: &[u8], out: &mut [u8], cell: usize) -> Result<usize, ChunkError> {
    if cell != 4 && cell != 8 {
        return Err(format!("NDLZ cell side {cell} (4 and 8 are defined)").into());
    }
    if input.len() < 9 {
        return Err("NDLZ stream shorter than its header".into());
    }
    if input[0] != 2 {
        return Err(format!("NDLZ stream of {} dimensions (only 2 exist)", input[0]).into());
    }
    let dim =
        |at: usize| i32::from_le_bytes([input[at], input[at + 1], input[at + 2], input[at + 3]]);
    let (b0, b1) = match (usize::try_from(dim(1)), usize::try_from(dim(5))) {
        (Ok(a), Ok(b)) => (a, b),
        _ => return Err("NDLZ negative block shape".into()),
    };
    let items = b0
        .checked_mul(b1)
        .filter(|&n| n <= out.len())
        .ok_or_else(|| {
            format!(
                "NDLZ block {b0}x{b1} larger than the {} bytes expected",
                out.len()
            )
        })?;
    out[..items].fill(0);
    if items == 0 {
        // No cells (a zero dimension): nothing to walk, however long the other one claims to be.
        return Ok(0);
    }
    let stream = Stream(input);
    let (grid0, grid1) = (b0.div_ceil(cell), b1.div_ceil(cell));
    let cut = |b: usize| {
        if b.is_multiple_of(cell) {
            cell
        } else {
            b % cell
        }
    };
    let mut local = vec![0u8; cell * cell];
    let mut repeat = vec![0u8; cell * cell];
    let mut ip = 9usize;
    let (mut ind, mut pad1) = (0usize, 0usize);
    for i0 in 0..grid0 {
        for i1 in 0..grid1 {
            if ip > input.len() {
                return Err("NDLZ stream ends inside its cells".into());
            }
            let pad0 = if i0 == grid0 - 1 { cut(b0) } else { cell };
            pad1 = if i1 == grid1 - 1 { cut(b1) } else { cell };
            let cur = ip as i64;
            let token = input[stream.range(cur, 1)?];
            ip += 1;
            let source = match token {
                0 => {
                    let at = stream.range(cur + 1, pad0 * pad1)?;
                    ip += pad0 * pad1;
                    Source::Stream(at)
                }
                0xC0 => {
                    stream.range(cur + 1, 2)?;
                    let offset = i64::from(stream.u16_at(ip));
                    ip += 2;
                    Source::Stream(stream.range(cur - offset, pad0 * pad1)?)
                }
                0x40 => {
                    repeat.fill(input[stream.range(cur + 1, 1)?]);
                    ip += 1;
                    Source::Repeat
                }
                _ if cell == 4 => {
                    ip = rows4(&stream, token, cur, &mut local)?;
                    Source::Local
                }
                _ => {
                    ip = rows8(&stream, token, cur, &mut local)?;
                    Source::Local
                }
            };
            let buf: &[u8] = match source {
                Source::Stream(at) => &input[at..at + pad0 * pad1],
                Source::Local => &local,
                Source::Repeat => &repeat,
            };
            let origin = i0 * cell * b1 + i1 * cell;
            for r in 0..pad0 {
                ind = origin + r * b1;
                let row = buf
                    .get(r * pad1..(r + 1) * pad1)
                    .ok_or("NDLZ cell shorter than its rows")?;
                out.get_mut(ind..ind + pad1)
                    .ok_or("NDLZ cell outside the block")?
                    .copy_from_slice(row);
            }
        }
    }
    ind += pad1;
    if ind != items {
        return Err(format!("NDLZ cells end at byte {ind}, the block holds {items}").into());
    }
    Ok(ind)
}

/// An NDLZ block's stream, with the checked reads its tokens make.
struct Stream<'a>(&'a [u8]);

impl Stream<'_> {
    /// The start of `len` bytes at `pos`, if they lie inside the stream.
    fn range(&self, pos: i64, len: usize) -> Result<usize, ChunkError> {
        match usize::try_from(pos) {
            Ok(p) if p.checked_add(len).is_some_and(|e| e <= self.0.len()) => Ok(p),
            _ => Err("NDLZ reference outside the stream".into()),
        }
    }

    /// The little-endian `u16` at `at` (checked by a `range` call first).
    fn u16_at(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.0[at], self.0[at + 1]])
    }
}

/// The row-match tokens of 4x4 cells: rows copied from earlier in the stream, the others
/// literal. Fills `local`; returns the stream position after the cell.
fn rows4(stream: &Stream<'_>, token: u8, cur: i64, local: &mut [u8]) -> Result<usize, ChunkError> {
    let input = stream.0;
    let mut ip = cur as usize + 1;
    // Row `row` of the cell, literally from the stream at `ip`.
    let literal_row = |local: &mut [u8], row: usize, ip: &mut usize| -> Result<(), ChunkError> {
        let at = stream.range(*ip as i64, 4)?;
        local[row * 4..row * 4 + 4].copy_from_slice(&input[at..at + 4]);
        *ip += 4;
        Ok(())
    };
    if token >= 224 {
        // Three rows match.
        stream.range(cur + 1, 2)?;
        let offset = i64::from(stream.u16_at(ip).wrapping_add(3));
        ip += 2;
        let t = token >> 3;
        let (i, j, k) = match t {
            28 => (1, 2, 3),
            _ if t < 30 => (0, 1, 2),
            30 => (0, 1, 3),
            _ => (0, 2, 3),
        };
        let at = stream.range(cur + 3 - offset, 12)?;
        let rf = &input[at..at + 12];
        for (n, row) in [i, j, k].into_iter().enumerate() {
            local[row * 4..row * 4 + 4].copy_from_slice(&rf[n * 4..n * 4 + 4]);
        }
        if let Some(l) = (0..4).find(|l| ![i, j, k].contains(l)) {
            literal_row(local, l, &mut ip)?;
        }
        Ok(ip)
    } else if (128..=191).contains(&token) {
        // A pair of rows matches.
        stream.range(cur + 1, 2)?;
        let offset = i64::from(stream.u16_at(ip).wrapping_add(3));
        ip += 2;
        let (i, j) = if token == 128 {
            (2usize, 3usize)
        } else {
            let t = usize::from(token - 128);
            (t >> 5, (t >> 3) - ((t >> 5) << 2))
        };
        let at = stream.range(cur + 3 - offset, 8)?;
        local[i * 4..i * 4 + 4].copy_from_slice(&input[at..at + 4]);
        local[j * 4..j * 4 + 4].copy_from_slice(&input[at + 4..at + 8]);
        for k in (0..4).filter(|&k| k != i && k != j) {
            literal_row(local, k, &mut ip)?;
        }
        Ok(ip)
    } else if (40..=63).contains(&token) {
        // Two pairs of rows match.
        stream.range(cur + 1, 2)?;
        let offset1 = i64::from(stream.u16_at(ip).wrapping_add(5));
        ip += 2;
        stream.range(cur + 3, 2)?;
        let offset2 = i64::from(stream.u16_at(ip).wrapping_add(5));
        ip += 2;
        let j = usize::from((token - 32) >> 3);
        let mut rest = (1..4).filter(|&k| k != j);
        let (l, m) = (rest.next().unwrap_or(0), rest.next().unwrap_or(0));
        let a = stream.range(cur + 5 - offset1, 8)?;
        local[0..4].copy_from_slice(&input[a..a + 4]);
        local[j * 4..j * 4 + 4].copy_from_slice(&input[a + 4..a + 8]);
        let b = stream.range(cur + 5 - offset2, 8)?;
        local[l * 4..l * 4 + 4].copy_from_slice(&input[b..b + 4]);
        local[m * 4..m * 4 + 4].copy_from_slice(&input[b + 4..b + 8]);
        Ok(ip)
    } else {
        Err(format!("NDLZ invalid token {token}").into())
    }
}

/// The row-match tokens of 8x8 cells (`token >> 3` 21: three rows, 17: two rows, starting at
/// row `token & 7`). Fills `local`; returns the stream position after the cell.
fn rows8(stream: &Stream<'_>, token: u8, cur: i64, local: &mut [u8]) -> Result<usize, ChunkError> {
    let input = stream.0;
    let nrows = match token >> 3 {
        21 => 3,
        17 => 2,
        _ => return Err(format!("NDLZ invalid token {token}").into()),
    };
    let row = usize::from(token & 7);
    if row + nrows > 8 {
        return Err(format!("NDLZ row match at row {row} outside the cell").into());
    }
    stream.range(cur + 1, 2)?;
    let offset = i64::from(stream.u16_at(cur as usize + 1));
    let mut ip = cur as usize + 3;
    let at = stream.range(cur - offset, nrows * 8)?;
    local[row * 8..(row + nrows) * 8].copy_from_slice(&input[at..at + nrows * 8]);
    for l in (0..8).filter(|&l| l < row || l >= row + nrows) {
        let a = stream.range(ip as i64, 8)?;
        local[l * 8..l * 8 + 8].copy_from_slice(&input[a..a + 8]);
        ip += 8;
    }
    Ok(ip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(b0: i32, b1: i32) -> Vec<u8> {
        let mut h = vec![2u8];
        h.extend_from_slice(&b0.to_le_bytes());
        h.extend_from_slice(&b1.to_le_bytes());
        h
    }

    #[test]
    fn literal_repeat_and_cell_match() {
        // 4x8 block: cell (0,0) literal, cell (0,1) a match of cell (0,0) (offset back to its
        // bytes), then done.
        let mut s = header(4, 8);
        s.push(0);
        s.extend(0u8..16);
        let cell0 = 10i64; // stream offset of cell 0's bytes
        let cur = s.len() as i64;
        s.push(0xC0);
        s.extend_from_slice(&((cur - cell0) as u16).to_le_bytes());
        let mut out = vec![0u8; 32];
        assert_eq!(decode(&s, &mut out, 4), Ok(32));
        for r in 0..4 {
            let want: Vec<u8> = (r * 4..r * 4 + 4).map(|x| x as u8).collect();
            assert_eq!(&out[r * 8..r * 8 + 4], &want[..]);
            assert_eq!(&out[r * 8 + 4..r * 8 + 8], &want[..]);
        }
        // One repeated byte over a 3x3 (cut) block.
        let mut s = header(3, 3);
        s.extend_from_slice(&[0x40, 7]);
        let mut out = vec![0u8; 9];
        assert_eq!(decode(&s, &mut out, 4), Ok(9));
        assert_eq!(out, vec![7; 9]);
    }

    #[test]
    fn bad_streams_are_errors() {
        let mut out = vec![0u8; 64];
        assert!(decode(&[2, 0, 0], &mut out, 4).is_err());
        let mut s = header(4, 4);
        s.extend_from_slice(&[0xC0, 0xff, 0xff]); // reference before the stream
        assert!(decode(&s, &mut out, 4).is_err());
        let mut s = header(4, 4);
        s.push(0x99); // no such token
        assert!(decode(&s, &mut out, 4).is_err());
        let mut s = header(4, 4);
        s.push(0); // literal cell cut short
        s.extend_from_slice(&[1, 2, 3]);
        assert!(decode(&s, &mut out, 4).is_err());
        let s = header(100, 100); // larger than the output
        assert!(decode(&s, &mut out, 4).is_err());
        // An empty block with a huge other dimension holds nothing.
        assert_eq!(decode(&header(i32::MAX, 0), &mut out, 4), Ok(0));
        let mut s = header(4, 4);
        s[0] = 3;
        assert!(decode(&s, &mut out, 4).is_err());
        assert!(decode(&header(4, 4), &mut out, 5).is_err());
    }
}
