//! Rows of a 1-d array of 4-byte code units (NumPy `<U`) read as one byte a unit: the low
//! byte plane of python-blosc2's 4-byte SHUFFLE kept as it comes out of the codec, the other
//! three checked to be zero, nothing unshuffled (see [`Target::Narrow`]).

#![forbid(unsafe_code)]

use std::ops::Range;
use std::sync::atomic::Ordering;

use crate::array::Array;
use crate::codec::chunk::{Narrow, Narrowed, Target};
use crate::codec::filters;
use crate::codec::worker::{blank, fetch_decode, workers_for};
use crate::error::{Error, Result};
use crate::model::region::Region;

impl Array {
    /// Rows `rows` of a 1-d array of little-endian 4-byte code units (NumPy `<U`), each unit
    /// as its low byte, into `out` (`itemsize / 4` bytes a row): `Ok(false)`, `out`
    /// unspecified, when a unit of the rows, or of the blocks holding them, is 256 or more
    /// (not Latin-1: read the rows whole instead). Only the blocks holding the rows are
    /// fetched and decoded. Once a block beyond Latin-1 was met, every later call answers
    /// `false` without reading.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))] // read by the Arrow conversion alone
    pub(crate) fn read_rows_narrow_into(&self, rows: Range<u64>, out: &mut [u8]) -> Result<bool> {
        let g = &self.geom;
        let isz = g.itemsize();
        let too_large = || Error::InvalidArgument("rows larger than the address space".into());
        if g.ndim() != 1 || isz == 0 || !isz.is_multiple_of(4) {
            return Err(Error::InvalidArgument(format!(
                "{}: a projection of code units needs a 1-d array of 4-byte units, not {} \
                 dimensions of {isz}-byte items",
                self.frame.source,
                g.ndim()
            )));
        }
        let unit = isz / 4;
        let n = usize::try_from(rows.end.saturating_sub(rows.start))
            .ok()
            .and_then(|r| r.checked_mul(unit))
            .ok_or_else(too_large)?;
        if out.len() != n {
            return Err(Error::BufferSize {
                expected: n,
                got: out.len(),
            });
        }
        if n == 0 {
            return Ok(true);
        }
        if self.wide.load(Ordering::Relaxed) {
            return Ok(false);
        }
        let spans = g.row_blocks(rows.clone());
        if spans.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "rows {}..{} of an array of {} rows",
                rows.start,
                rows.end,
                g.shape()[0]
            )));
        }
        let (bb, block_rows, chunk_rows) = (g.block_bytes(), g.blocks()[0], g.chunks()[0]);
        let nblocks = g.chunk_bytes() / bb.max(1);
        self.workers.with(|ws| {
            // The wanted blocks' projection, when the rows do not start and end with them, or
            // the rows whole, when their chunk cannot be projected as it is decoded.
            let mut part = Vec::new();
            for (chunk, first, end, r) in spans {
                let lo = chunk * chunk_rows + first as u64 * block_rows;
                let whole = (end - first).checked_mul(bb / 4).ok_or_else(too_large)?;
                let at = (r.start - rows.start) as usize * unit;
                let len = (r.end - r.start) as usize * unit;
                let skip = (r.start - lo) as usize * unit;
                let aligned = skip == 0 && len == whole;
                let w = &mut workers_for(ws, 1, self.threads, g.blocks())[0];
                w.wanted.clear();
                w.wanted.extend((0..nblocks).map(|j| j >= first && j < end));
                let target: &mut [u8] = if aligned {
                    &mut out[at..at + len]
                } else {
                    crate::alloc::fit(&mut part, whole, "a projected part")?;
                    &mut part[..]
                };
                let mut outcome = Narrowed::Unprojectable;
                let blank = blank(&mut w.blank, g.chunk_bytes())?;
                let (c, d, wanted) = (&mut w.compressed, &mut w.decoder, &w.wanted);
                fetch_decode(&self.frame, chunk, c, d, isz, Some((wanted, bb)), |_| {
                    Target::Narrow(Narrow {
                        blank,
                        first_block: first,
                        out: target,
                        block_bytes: bb,
                        outcome: &mut outcome,
                    })
                })?;
                match outcome {
                    Narrowed::Done if aligned => {}
                    Narrowed::Done => {
                        let from = part.get(skip..skip + len).ok_or_else(too_large)?;
                        out[at..at + len].copy_from_slice(from);
                    }
                    Narrowed::Wide => {
                        self.wide.store(true, Ordering::Relaxed);
                        return Ok(false);
                    }
                    Narrowed::Unprojectable => {
                        // Read whole (only the blocks holding the rows), then projected.
                        let mut units = Vec::new();
                        let n = len.checked_mul(4).ok_or_else(too_large)?;
                        crate::alloc::fit(&mut units, n, "the rows")?;
                        let region = Region::new(vec![r.start], vec![r.end - r.start]);
                        self.fill_region(&region, &mut units, ws)?;
                        if !filters::narrow_ucs4(&units, &mut out[at..at + len]) {
                            self.wide.store(true, Ordering::Relaxed);
                            return Ok(false);
                        }
                    }
                }
            }
            Ok(true)
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::model::codec::{Codec, Filter};
    use crate::parallel::Threads;
    use crate::write::ArrayBuilder;
    use crate::Array;

    /// `<U5` rows (20 bytes each) of a few Latin-1 strings, and one row per `wide_every`
    /// holding U+0101 when given.
    fn rows(n: usize, wide_at: Option<usize>) -> Vec<u8> {
        let names = ["alpha", "beta", "gamma", "", "\u{e9}t\u{e9}", "x\0y"];
        let mut raw = Vec::with_capacity(n * 20);
        for i in 0..n {
            let s: Vec<char> = if Some(i) == wide_at {
                "w\u{101}".chars().collect()
            } else {
                names[(i * 7 + i / 3) % names.len()].chars().collect()
            };
            for k in 0..5 {
                raw.extend_from_slice(&s.get(k).map_or(0, |&c| c as u32).to_le_bytes());
            }
        }
        raw
    }

    /// The low byte of each code unit, by the plain definition; `None` when one is wider.
    fn plain(units: &[u8]) -> Option<Vec<u8>> {
        units
            .chunks_exact(4)
            .map(|u| (u[1..] == [0, 0, 0]).then_some(u[0]))
            .collect()
    }

    /// A projection read equals the plain projection of the rows read whole, for row ranges
    /// on and off block and chunk edges, through the hook (no filter, 4-byte SHUFFLE, one or
    /// two block threads) and through a whole decode (SHUFFLE by item size, BITSHUFFLE, a
    /// codec Rust runs); rows with a character beyond U+00FF answer `false` exactly when
    /// the blocks read hold one.
    #[test]
    fn latin1_projection_is_the_low_byte_of_each_unit() {
        let n = 1000usize;
        let filters: [&[Filter]; 5] = [
            &[],
            &[Filter::ShuffleBytes(4)],
            &[Filter::Shuffle],
            &[Filter::Bitshuffle],
            &[Filter::ShuffleBytes(4)],
        ];
        let mut checked = 0;
        for (case, f) in filters.iter().enumerate() {
            for wide_at in [None, Some(517)] {
                let raw = rows(n, wide_at);
                let codec = if case == 4 { Codec::Zlib } else { Codec::Zstd };
                let frame = ArrayBuilder::with_dtype_str(&[n as u64], "<U5")
                    .unwrap()
                    .chunks(&[300])
                    .blocks(&[40])
                    .codec(codec)
                    .filters(f)
                    .bytes_to_vec(&raw)
                    .unwrap();
                for threads in [
                    Threads::Single,
                    Threads::Pool(std::sync::Arc::new(
                        rayon::ThreadPoolBuilder::new()
                            .num_threads(2)
                            .build()
                            .unwrap(),
                    )),
                ] {
                    // A fresh array for each range: one that met a wide block answers
                    // `false` from then on (checked below).
                    let open = || {
                        Array::from_bytes(frame.clone())
                            .unwrap()
                            .with_threads(threads.clone())
                    };
                    for (lo, hi) in [
                        (0, n),
                        (0, 40),
                        (40, 120),
                        (13, 997),
                        (280, 330),
                        (600, 1000),
                        (517, 518),
                        (999, 1000),
                    ] {
                        let a = open();
                        let mut out = vec![0u8; (hi - lo) * 5];
                        let got = a
                            .read_rows_narrow_into(lo as u64..hi as u64, &mut out)
                            .unwrap();
                        let want = plain(&raw[lo * 20..hi * 20]);
                        // The blocks read: every block of 40 rows the range touches.
                        let blocks_wide =
                            wide_at.is_some_and(|w| w / 40 >= lo / 40 && w / 40 <= (hi - 1) / 40);
                        assert_eq!(got, !blocks_wide, "case {case}, rows {lo}..{hi}");
                        if got {
                            assert_eq!(Some(out), want, "case {case}, rows {lo}..{hi}");
                        } else {
                            // Remembered: Latin-1 rows of another block answer `false` too.
                            let mut out = vec![0u8; 40 * 5];
                            assert!(!a.read_rows_narrow_into(0..40, &mut out).unwrap());
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 5 * 2 * 2 * 8);
        // Not a 1-d array: refused, not misread.
        let frame = ArrayBuilder::with_dtype_str(&[2, 2], "<U2")
            .unwrap()
            .bytes_to_vec(&[0; 32])
            .unwrap();
        let a = Array::from_bytes(frame).unwrap();
        let mut out = vec![0u8; 4];
        assert!(a.read_rows_narrow_into(0..2, &mut out).is_err());
    }
}
