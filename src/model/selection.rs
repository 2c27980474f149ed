//! What a user selects: NumPy basic indexing, one [`SliceItem`] per leading dimension
//! (missing trailing dimensions are taken whole), parsed from and printed as the CLI syntax
//! (`10:20,::3,-1`). The read engine that fetches a selection is `read::slice`.

#![forbid(unsafe_code)]

use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeTo};
use std::str::FromStr;

use crate::error::{Error, Result};

/// How one dimension is indexed, as in NumPy basic indexing.
///
/// ```
/// use b2nd::SliceItem;
/// assert_eq!("-1".parse::<SliceItem>()?, SliceItem::Index(-1));
/// assert_eq!(
///     "2::3".parse::<SliceItem>()?,
///     SliceItem::Range { start: Some(2), stop: None, step: 3 }
/// );
/// assert_eq!(SliceItem::from(10..20).to_string(), "10:20");
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SliceItem {
    /// One position; negative values count from the end. The dimension is dropped from the
    /// result. Out of range is an error.
    Index(i64),
    /// Positions `start, start + step, ...` below `stop`. `None` means the start (or end) of
    /// the dimension; negative bounds count from the end; bounds are clamped to the
    /// dimension as NumPy does. `step` must be at least 1.
    Range {
        /// First position (default 0).
        start: Option<i64>,
        /// End position, exclusive (default: the dimension's length).
        stop: Option<i64>,
        /// Distance between selected positions (>= 1).
        step: u64,
    },
}

impl SliceItem {
    /// The whole dimension (`:`).
    pub const ALL: SliceItem = SliceItem::Range {
        start: None,
        stop: None,
        step: 1,
    };
}

impl From<i64> for SliceItem {
    fn from(i: i64) -> SliceItem {
        SliceItem::Index(i)
    }
}

impl From<Range<i64>> for SliceItem {
    fn from(r: Range<i64>) -> SliceItem {
        SliceItem::Range {
            start: Some(r.start),
            stop: Some(r.end),
            step: 1,
        }
    }
}

impl From<RangeFrom<i64>> for SliceItem {
    fn from(r: RangeFrom<i64>) -> SliceItem {
        SliceItem::Range {
            start: Some(r.start),
            stop: None,
            step: 1,
        }
    }
}

impl From<RangeTo<i64>> for SliceItem {
    fn from(r: RangeTo<i64>) -> SliceItem {
        SliceItem::Range {
            start: None,
            stop: Some(r.end),
            step: 1,
        }
    }
}

impl From<RangeFull> for SliceItem {
    fn from(_: RangeFull) -> SliceItem {
        SliceItem::ALL
    }
}

impl fmt::Display for SliceItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            SliceItem::Index(i) => write!(f, "{i}"),
            SliceItem::Range { start, stop, step } => {
                if let Some(s) = start {
                    write!(f, "{s}")?;
                }
                f.write_str(":")?;
                if let Some(s) = stop {
                    write!(f, "{s}")?;
                }
                if step != 1 {
                    write!(f, ":{step}")?;
                }
                Ok(())
            }
        }
    }
}

/// Parse one bound of a range: empty means absent.
fn parse_bound(s: &str, what: &str) -> std::result::Result<Option<i64>, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse::<i64>()
        .map(Some)
        .map_err(|_| format!("{what} `{s}` is not an integer (or is out of range)"))
}

fn parse_item(s: &str) -> std::result::Result<SliceItem, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty item (use `:` for a whole dimension)".into());
    }
    if !s.contains(':') {
        return s
            .parse::<i64>()
            .map(SliceItem::Index)
            .map_err(|_| "not an integer or a `start:stop:step` range".into());
    }
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 3 {
        return Err("more than two `:` (expected `start:stop:step`)".into());
    }
    let start = parse_bound(parts[0], "start")?;
    let stop = parse_bound(parts[1], "stop")?;
    let step = match parts.get(2).map(|p| p.trim()) {
        None | Some("") => 1,
        Some(p) => {
            let v: i64 = p
                .parse()
                .map_err(|_| format!("step `{p}` is not an integer (or is out of range)"))?;
            if v == 0 {
                return Err("step 0: the step must be at least 1".into());
            }
            if v < 0 {
                return Err(format!(
                    "step {v}: negative steps are not supported (the step must be at least 1)"
                ));
            }
            v as u64
        }
    };
    Ok(SliceItem::Range { start, stop, step })
}

impl FromStr for SliceItem {
    type Err = Error;

    /// Parse `i`, `start:stop` or `start:stop:step` (each part optional in a range).
    fn from_str(s: &str) -> Result<SliceItem> {
        parse_item(s).map_err(|why| Error::InvalidArgument(format!("slice item `{s}`: {why}")))
    }
}

/// A selection: one [`SliceItem`] per leading dimension. Dereferences to `[SliceItem]`, so a
/// `&Slice` can be passed wherever `&[SliceItem]` is expected.
///
/// Parses the comma-separated syntax of the command line, with NumPy meaning:
///
/// ```
/// use b2nd::{Slice, SliceItem};
/// let s: Slice = "10:20, ::3, -1".parse()?;
/// assert_eq!(s.len(), 3);
/// assert_eq!(s[2], SliceItem::Index(-1));
/// assert_eq!(s.to_string(), "10:20,::3,-1");
/// assert!("::0".parse::<Slice>().is_err());   // step 0
/// assert!("5:1:-1".parse::<Slice>().is_err()); // negative step
/// assert!("".parse::<Slice>()?.is_empty());    // everything
/// # Ok::<(), b2nd::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Slice(Vec<SliceItem>);

impl Slice {
    /// The whole array (no items).
    pub fn all() -> Slice {
        Slice(Vec::new())
    }
}

impl std::ops::Deref for Slice {
    type Target = [SliceItem];
    fn deref(&self) -> &[SliceItem] {
        &self.0
    }
}

impl From<Vec<SliceItem>> for Slice {
    fn from(v: Vec<SliceItem>) -> Slice {
        Slice(v)
    }
}

impl FromIterator<SliceItem> for Slice {
    fn from_iter<I: IntoIterator<Item = SliceItem>>(iter: I) -> Slice {
        Slice(iter.into_iter().collect())
    }
}

impl fmt::Display for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl FromStr for Slice {
    type Err = Error;

    /// Parse comma-separated items (`10:20,::3,-1`); an empty or blank string selects
    /// everything. Step 0, negative steps and anything unparsable are refused.
    fn from_str(s: &str) -> Result<Slice> {
        if s.trim().is_empty() {
            return Ok(Slice::all());
        }
        s.split(',')
            .enumerate()
            .map(|(i, item)| {
                parse_item(item).map_err(|why| {
                    Error::InvalidArgument(format!(
                        "slice `{s}`: item {} `{}`: {why}",
                        i + 1,
                        item.trim()
                    ))
                })
            })
            .collect()
    }
}
