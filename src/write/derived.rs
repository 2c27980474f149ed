//! State python-blosc2 derives from an array's data and keeps beside it, kept true by every
//! change b2nd publishes to the data (see `docs/derived-state.md` for the whole list):
//!
//! - persistent indexes (vlmeta `blosc2_indexes`: a catalog `{version, indexes: {token:
//!   descriptor}}`): every descriptor gets `stale: true`, as python-blosc2 4.14.1's
//!   `indexing.mark_indexes_stale` does on each of its own writes (the catalog is written
//!   again only when a descriptor changed). python answers queries on a stale index by
//!   scanning the data, and `rebuild_index` makes it fresh again;
//! - the query cache (vlmeta `_blosc2_query_cache`, payload `<root>.__query_cache__.b2frame`
//!   beside the array): removed, as `indexing._invalidate_query_cache` does.
//!
//! The vlmeta edits are part of the change's new trailer, so they are published atomically
//! with the data; the payload file, which nothing refers to any more once the change is
//! published, is removed after it.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::attrs::Value;

/// The index catalog (python-blosc2's `indexing.INDEXES_VLMETA_KEY`).
pub(crate) const INDEXES_KEY: &str = "blosc2_indexes";
/// The query cache's catalog (`indexing.QUERY_CACHE_VLMETA_KEY`).
pub(crate) const QUERY_CACHE_KEY: &str = "_blosc2_query_cache";

/// Largest decoded catalog accepted (a catalog holds descriptors, not data).
const MAX_CATALOG: usize = 64 << 20;

/// The attributes `vlmeta` (name, stored value) of an array whose data changes, made true
/// for the new data: index descriptors marked stale, the query cache's catalog dropped.
/// `compress` stores an attribute's msgpack bytes as the trailer holds them.
pub(crate) fn invalidate(
    vlmeta: &mut Vec<(String, Vec<u8>)>,
    source: &str,
    compress: impl Fn(&[u8]) -> std::result::Result<Vec<u8>, crate::ffi::CError>,
) -> Result<()> {
    vlmeta.retain(|(n, _)| n != QUERY_CACHE_KEY);
    let Some(slot) = vlmeta.iter_mut().find(|(n, _)| n == INDEXES_KEY) else {
        return Ok(());
    };
    let bad = |reason: String| Error::Attr {
        source_name: source.into(),
        name: INDEXES_KEY.into(),
        reason,
    };
    let raw = decompress(&slot.1).map_err(&bad)?;
    let catalog = Value::decode(&raw).map_err(|e| bad(e.to_string()))?;
    if let Some(stale) = mark_stale(&catalog) {
        slot.1 = compress(&stale.encode())
            .map_err(|e| bad(format!("could not compress the catalog ({e})")))?;
    }
    Ok(())
}

/// The catalog with every descriptor stale, or `None` when nothing changes (no descriptors,
/// all stale already, or not a catalog python-blosc2 would use: python then starts a new
/// empty one, so no descriptor of it is ever trusted).
fn mark_stale(catalog: &Value) -> Option<Value> {
    let Value::Map(top) = catalog else {
        return None;
    };
    let mut top = top.clone();
    let (_, indexes) = top
        .iter_mut()
        .find(|(k, _)| k.as_str() == Some("indexes"))?;
    let Value::Map(descriptors) = indexes else {
        return None;
    };
    mark_descriptors_stale(descriptors).then_some(Value::Map(top))
}

/// A CTable's `index_catalog` (column -> descriptor, in the table's `_meta`) with every
/// descriptor stale, as python-blosc2's `CTable._mark_all_indexes_stale` leaves it; `None`
/// when nothing changes.
pub(crate) fn table_catalog_stale(catalog: &Value) -> Option<Value> {
    let Value::Map(descriptors) = catalog else {
        return None;
    };
    let mut descriptors = descriptors.clone();
    mark_descriptors_stale(&mut descriptors).then_some(Value::Map(descriptors))
}

/// Mark each descriptor of `descriptors` stale; whether any changed.
fn mark_descriptors_stale(descriptors: &mut [(Value, Value)]) -> bool {
    let mut changed = false;
    for (_, d) in descriptors.iter_mut() {
        // python: `if not descriptor.get("stale", False): descriptor["stale"] = True`.
        let Value::Map(fields) = d else { continue };
        match fields.iter_mut().find(|(k, _)| k.as_str() == Some("stale")) {
            Some((_, v)) if v.truthy() => {}
            Some((_, v)) => {
                *v = Value::Bool(true);
                changed = true;
            }
            None => {
                fields.push((Value::Str("stale".into()), Value::Bool(true)));
                changed = true;
            }
        }
    }
    changed
}

/// A stored vlmeta value (a Blosc2 chunk) decoded.
fn decompress(chunk: &[u8]) -> std::result::Result<Vec<u8>, String> {
    if chunk.len() < 16 {
        return Err("the stored value is truncated".into());
    }
    let nbytes = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]) as usize;
    if nbytes > MAX_CATALOG {
        return Err(format!("{nbytes} bytes: larger than any index catalog"));
    }
    let mut out = vec![0u8; nbytes];
    let got = crate::ffi::Dctx::new(1)
        .decompress(chunk, &mut out)
        .map_err(|e| format!("could not decode it ({e})"))?;
    if got != nbytes {
        return Err(format!("decoded {got} of {nbytes} bytes"));
    }
    Ok(out)
}

/// The query cache's payload of the array at `urlpath` (python-blosc2's
/// `_query_cache_payload_path`: `<root>.__query_cache__.b2frame` beside it, where `root` is
/// the file name without all its suffixes, as `pathlib` counts them).
pub(crate) fn query_cache_payload(urlpath: &Path) -> Option<PathBuf> {
    let name = urlpath.file_name()?.to_str()?;
    Some(urlpath.with_file_name(format!("{}.__query_cache__.b2frame", strip_suffixes(name))))
}

/// `name` without `pathlib.PurePath.suffixes` (Python 3.11: none when the name ends with a
/// dot; leading dots belong to the stem).
fn strip_suffixes(name: &str) -> &str {
    if name.ends_with('.') {
        return name;
    }
    let lead = name.len() - name.trim_start_matches('.').len();
    match name[lead..].find('.') {
        Some(i) => &name[..lead + i],
        None => name,
    }
}

/// Remove the query cache's payload of the array at `urlpath` (a file or, if an older
/// python-blosc2 wrote it sparse, a directory), if there is one.
pub(crate) fn remove_query_cache_payload(urlpath: &Path) -> Result<()> {
    let Some(p) = query_cache_payload(urlpath) else {
        return Ok(());
    };
    let Ok(meta) = std::fs::symlink_metadata(&p) else {
        return Ok(());
    };
    let removed = if meta.is_dir() {
        std::fs::remove_dir_all(&p)
    } else {
        std::fs::remove_file(&p)
    };
    match removed {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Io { path: p, source: e }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    #[test]
    fn every_descriptor_becomes_stale_once() {
        let d = |stale: Option<bool>| {
            let mut f = vec![(s("kind"), s("full"))];
            if let Some(b) = stale {
                f.push((s("stale"), Value::Bool(b)));
            }
            Value::Map(f)
        };
        let cat = Value::Map(vec![
            (s("version"), Value::Int(1)),
            (
                s("indexes"),
                Value::Map(vec![
                    (s("__self__"), d(Some(false))),
                    (s("x"), d(None)),
                    (s("y"), d(Some(true))),
                ]),
            ),
        ]);
        let stale = mark_stale(&cat).expect("changed");
        let idx = stale.get("indexes").unwrap().as_map().unwrap();
        for (_, desc) in idx {
            assert_eq!(desc.get("stale"), Some(&Value::Bool(true)));
            assert_eq!(desc.get("kind"), Some(&s("full")));
        }
        assert_eq!(mark_stale(&stale), None, "nothing left to mark");
        assert_eq!(mark_stale(&Value::Int(3)), None);
    }

    #[test]
    fn payload_path_as_python_names_it() {
        let p = |x: &str| query_cache_payload(Path::new(x)).unwrap();
        assert_eq!(p("/d/a.b2nd"), Path::new("/d/a.__query_cache__.b2frame"));
        assert_eq!(p("/d/a.x.b2nd"), Path::new("/d/a.__query_cache__.b2frame"));
        assert_eq!(p("/d/.h.b2nd"), Path::new("/d/.h.__query_cache__.b2frame"));
        assert_eq!(p("/d/plain"), Path::new("/d/plain.__query_cache__.b2frame"));
        assert_eq!(p("/d/a."), Path::new("/d/a..__query_cache__.b2frame"));
    }
}
