//! The names of python-blosc2's CTable layout (4.x, `ctable_storage.py`): the one place that
//! spells them. Under a table's root key of a TreeStore (`""` for a table that is its store,
//! a `.b2z` or `.b2d` of its own):
//! - `_meta`: an SChunk whose vlmeta holds `kind` (`"ctable"`), `version`, `schema` (a JSON
//!   text: `{"version", "columns": [{"name", "kind", "nullable"?, "null_value"?,
//!   "null_storage"?, ...}], "n_rows"?, ...}`) and the `index_catalog`;
//! - `_valid_rows`: one bool per physical row; deleted rows are `False` (their values stay);
//! - `_cols/<name>`: a column's values, one item (or one row of an `ndarray` column) per
//!   physical row; nested names `a.b` live at `_cols/a/b`, with `%`, `/`, `.` and `\` of a
//!   name part escaped as `%25`, `%2F`, `%2E`, `%5C` ([`column_path`]);
//! - its companions ([`Part`]): `_cols/<name>.notnull` (mask-stored nulls), a `utf8` column's
//!   bytes `_cols/<name>.utf8` (its int64 offsets are `_cols/<name>`), a `dictionary` column's
//!   values `_cols/<name>_dict` (its int32 codes are `_cols/<name>`);
//! - `_indexes/<name>/`: a column's indexes (the block summary at `summary.block`).

#![forbid(unsafe_code)]

use std::path::Path;

/// The manifest: an SChunk whose vlmeta holds the kind, the schema and the index catalog.
pub(crate) const META: &str = "_meta";
/// One bool per physical row, `False` for a deleted row.
pub(crate) const VALID_ROWS: &str = "_valid_rows";
/// The directory of the columns' arrays.
pub(crate) const COLS: &str = "_cols";
/// The directory of the columns' indexes.
pub(crate) const INDEXES: &str = "_indexes";

/// One of the arrays a stored column is made of, named by the suffix of its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    /// `_cols/<name>`: the values; a `utf8` column's offsets, a `dictionary` column's codes,
    /// a variable-length column's BatchArray.
    Values,
    /// `_cols/<name>.notnull`: `True` where a mask-stored nullable column's value is not null.
    NotNull,
    /// `_cols/<name>.utf8`: a `utf8` column's bytes.
    Utf8Bytes,
    /// `_cols/<name>_dict`: a `dictionary` column's values.
    Dict,
}

impl Part {
    /// Every part, the values first.
    pub(crate) const ALL: [Part; 4] = [Part::Values, Part::NotNull, Part::Utf8Bytes, Part::Dict];

    /// The suffix of the part's key after the column's path.
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Part::Values => "",
            Part::NotNull => ".notnull",
            Part::Utf8Bytes => ".utf8",
            Part::Dict => "_dict",
        }
    }
}

/// The manifest's key of the table at `root`.
pub(crate) fn meta_key(root: &str) -> String {
    format!("{root}/{META}")
}

/// The live-row flags' key of the table at `root`.
pub(crate) fn valid_rows_key(root: &str) -> String {
    format!("{root}/{VALID_ROWS}")
}

/// The key of `part` of column `name` of the table at `root`.
pub(crate) fn column_key(root: &str, name: &str, part: Part) -> String {
    format!("{root}/{COLS}/{}{}", column_path(name), part.suffix())
}

/// The key of column `name`'s block summary (python's SUMMARY index) in the table at `root`.
pub(crate) fn summary_key(root: &str, name: &str) -> String {
    format!("{root}/{INDEXES}/{name}/summary.block")
}

/// The directory of column `name`'s indexes, relative to the table's: `None` where that is
/// not a path inside the table (a part of `name` empty, `.` or `..`).
pub(crate) fn index_dir(name: &str) -> Option<std::path::PathBuf> {
    let plain = name.split('/').all(|s| !matches!(s, "" | "." | ".."));
    plain.then(|| Path::new(INDEXES).join(name))
}

/// Whether the directory `d` is the root of a table saved as a directory (`.b2d`): its
/// `_cols/` beside a manifest or live-row flags.
pub(crate) fn is_table_dir(d: &Path) -> bool {
    d.join(COLS).is_dir()
        && (d.join(format!("{META}.b2f")).exists() || d.join(format!("{VALID_ROWS}.b2nd")).exists())
}

/// The root of the table saved as a directory that the file at `path` belongs to (its
/// live-row flags, or a file under its `_cols/` or `_indexes/`), if any.
pub(crate) fn table_of(path: &Path) -> Option<std::path::PathBuf> {
    let parent = path.parent()?;
    let name = path.file_name()?.to_str()?;
    if name.starts_with(&format!("{VALID_ROWS}.")) && is_table_dir(parent) {
        return Some(parent.to_path_buf());
    }
    let mut dir = parent;
    loop {
        let here = dir.file_name().and_then(|n| n.to_str());
        let up = dir.parent()?;
        if matches!(here, Some(COLS | INDEXES)) && is_table_dir(up) {
            return Some(up.to_path_buf());
        }
        dir = up;
    }
}

/// One part of a column name as a storage path segment.
fn encode_segment(s: &str) -> String {
    s.replace('%', "%25")
        .replace('/', "%2F")
        .replace('.', "%2E")
        .replace('\\', "%5C")
}

/// Split a dotted column name into its parts (`\` escapes the next character).
fn split_name(name: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in name.chars() {
        if escaped {
            parts.last_mut().expect("one part").push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '.' {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("one part").push(c);
        }
    }
    if escaped {
        parts.last_mut().expect("one part").push('\\');
    }
    parts
}

/// The storage path of a column under `_cols` (`a.b` -> `a/b`).
pub(crate) fn column_path(name: &str) -> String {
    split_name(name)
        .iter()
        .map(|p| encode_segment(p))
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_paths_escape_like_python() {
        assert_eq!(column_path("a"), "a");
        assert_eq!(column_path("trip.lon"), "trip/lon");
        assert_eq!(column_path("a\\.b.c"), "a%2Eb/c");
        assert_eq!(column_path("50%/x"), "50%25%2Fx");
        assert_eq!(column_path("back\\\\slash"), "back%5Cslash");
    }
}
