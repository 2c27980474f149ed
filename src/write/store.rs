//! [`StoreBuilder`]: writing DictStores and TreeStores python-blosc2 opens as its own, as a
//! `.b2z` zip of stored members or a `.b2d` directory (the layout [`crate::Store`] reads):
//! values of at least `threshold` decoded bytes become their own member files
//! (`dir1/node.b2nd`, `.b2f`, `.b2b`), the others go into `embed.b2e`; TreeStore group
//! attributes are `__vlmeta__` SChunks. Written aside and renamed into place, as arrays are.

#![forbid(unsafe_code)]

use super::options::Target;
use super::staging::Staging;
use crate::error::Error;
use crate::error::Result;
use crate::ffi::Cctx;
use crate::ffi::CompressParams;
use crate::ffi::Schunk;
use crate::format::frame_writer::NewFrame;
use crate::format::zip::ZipWriter;
use crate::model::attrs::Value;
use crate::model::codec::Codec;
use crate::model::durability::Durability;
use crate::schunk::SChunk;
use crate::store::keys::{check_key, EMBED_FILE};
use crate::store::StoreKind;
use std::path::Path;

/// Decoded bytes per chunk of the embedded store's stream (python-blosc2's EmbedStore uses
/// `chunksize=2**13`).
const EMBED_CHUNK: usize = 1 << 13;

/// A DictStore or TreeStore to write.
///
/// ```
/// use b2nd::{ArrayBuilder, StoreBuilder, StoreKind, Value};
///
/// let dir = tempfile::tempdir()?;
/// let mut s = StoreBuilder::new(StoreKind::TreeStore).threshold(Some(1000));
/// s.insert("/small", ArrayBuilder::for_type::<i32>(&[3]).to_vec(&[1, 2, 3])?)?;
/// s.insert("/grid/big", ArrayBuilder::for_type::<f64>(&[500]).to_vec(&vec![0.5; 500])?)?;
/// s.set_group_attrs("/grid", vec![("unit".into(), Value::Str("m".into()))])?;
/// let path = dir.path().join("out.b2z");
/// s.write(&path)?;
/// let back = b2nd::Store::open(&path)?;
/// assert_eq!(back.keys(), ["/grid", "/grid/big", "/small"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StoreBuilder {
    kind: StoreKind,
    threshold: Option<u64>,
    overwrite: bool,
    /// Key, CFrame bytes, decoded bytes.
    members: Vec<(String, Vec<u8>, u64)>,
    groups: Vec<(String, Vec<(String, Value)>)>,
}

impl StoreBuilder {
    /// An empty DictStore or TreeStore (an EmbedStore is refused when written).
    pub fn new(kind: StoreKind) -> StoreBuilder {
        StoreBuilder {
            kind,
            threshold: Some(0),
            overwrite: false,
            members: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Values of at least this many decoded bytes get their own member file; `None`
    /// embeds every value. python-blosc2's default (and this one) is `Some(0)`: every
    /// value in its own file.
    pub fn threshold(mut self, threshold: Option<u64>) -> StoreBuilder {
        self.threshold = threshold;
        self
    }

    /// Replace an existing target (default: refuse it).
    pub fn overwrite(mut self, overwrite: bool) -> StoreBuilder {
        self.overwrite = overwrite;
        self
    }

    /// Store the CFrame `frame` (an N-d array from [`ArrayBuilder::to_vec`](super::ArrayBuilder::to_vec), or any
    /// Blosc2 frame) under `key` (`/dir/name`).
    pub fn insert(&mut self, key: &str, frame: Vec<u8>) -> Result<()> {
        check_key(key).map_err(|why| Error::InvalidArgument(format!("key {key:?} {why}")))?;
        if key == "/" || key.ends_with("/__vlmeta__") || key == "/__vlmeta__" {
            return Err(Error::InvalidArgument(format!("key {key:?} is reserved")));
        }
        if self.members.iter().any(|(k, ..)| k == key) {
            return Err(Error::InvalidArgument(format!(
                "key {key:?} inserted twice"
            )));
        }
        let s = SChunk::from_bytes(frame.clone())?;
        let nbytes = s.nbytes();
        self.members.push((key.to_string(), frame, nbytes));
        Ok(())
    }

    /// Set the attributes of TreeStore group `group` (`/` for the root).
    pub fn set_group_attrs(&mut self, group: &str, attrs: Vec<(String, Value)>) -> Result<()> {
        if self.kind != StoreKind::TreeStore {
            return Err(Error::InvalidArgument(format!(
                "group attributes belong to TreeStores, not to a {}",
                self.kind
            )));
        }
        check_key(group).map_err(|why| Error::InvalidArgument(format!("group {group:?} {why}")))?;
        self.groups.retain(|(g, _)| g != group);
        self.groups.push((group.to_string(), attrs));
        Ok(())
    }

    /// The members to write: (key, frame, decoded bytes), group attribute carriers included.
    fn all_members(&self) -> Result<Vec<(String, Vec<u8>, u64)>> {
        let mut all = self.members.clone();
        for (group, attrs) in &self.groups {
            let key = if group == "/" {
                "/__vlmeta__".to_string()
            } else {
                format!("{group}/__vlmeta__")
            };
            all.push((key, attrs_frame(attrs)?, 0));
        }
        Ok(all)
    }

    /// Write the store: a `.b2z` zip for a path ending in `.b2z`, else a `.b2d` directory.
    pub fn write(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let meta_name = match self.kind {
            StoreKind::DictStore => "b2dict",
            StoreKind::TreeStore => "b2tree",
            other => {
                return Err(Error::InvalidArgument(format!(
                    "StoreBuilder writes DictStores and TreeStores, not a {other}"
                )))
            }
        };
        let members = self.all_members()?;
        let mut external: Vec<(String, &[u8])> = Vec::new();
        let mut embedded: Vec<(&str, &[u8])> = Vec::new();
        for (key, frame, nbytes) in &members {
            let goes_external = self.threshold.is_some_and(|t| *nbytes >= t);
            if goes_external {
                let s = SChunk::from_bytes(frame.clone())?;
                external.push((format!("{}{}", &key[1..], suffix(&s)), frame));
            } else {
                embedded.push((key, frame));
            }
        }
        let embed = embed_frame(meta_name, &embedded)?;
        let zip = path.extension().is_some_and(|e| e == "b2z");
        let target = if zip {
            Target::File(path.to_path_buf())
        } else {
            Target::Sparse(path.to_path_buf())
        };
        let staging = Staging::new(&target, self.overwrite)?;
        let inner = staging.c_path().expect("a path target").to_path_buf();
        let io = |p: &Path, source| Error::Io {
            path: p.to_path_buf(),
            source,
        };
        if zip {
            // python-blosc2's order: the largest members first, `embed.b2e` last.
            external.sort_by_key(|(_, f)| std::cmp::Reverse(f.len()));
            let file = std::fs::File::create(&inner).map_err(|e| io(&inner, e))?;
            let mut w = ZipWriter::new(std::io::BufWriter::new(file));
            for (name, frame) in &external {
                w.add(name, frame).map_err(|e| io(&inner, e))?;
            }
            w.add(EMBED_FILE, &embed).map_err(|e| io(&inner, e))?;
            let file = w
                .finish()
                .map_err(|e| io(&inner, e))?
                .into_inner()
                .map_err(|e| io(&inner, e.into_error()))?;
            file.sync_all().map_err(|e| io(&inner, e))?;
        } else {
            std::fs::create_dir(&inner).map_err(|e| io(&inner, e))?;
            for (name, frame) in external
                .iter()
                .map(|(n, f)| (n.as_str(), *f))
                .chain([(EMBED_FILE, &embed[..])])
            {
                let p = inner.join(name);
                if let Some(d) = p.parent() {
                    std::fs::create_dir_all(d).map_err(|e| io(d, e))?;
                }
                std::fs::write(&p, frame).map_err(|e| io(&p, e))?;
            }
        }
        staging.commit(Durability::Disk)
    }
}

/// The file suffix python-blosc2 gives an external member of this kind.
fn suffix(s: &SChunk) -> &'static str {
    let names = s.metalayer_names();
    let has = |n: &str| names.iter().any(|m| m == n);
    if has("batcharray") || has("listarray") {
        ".b2b"
    } else if has("b2nd") || has("caterva") {
        ".b2nd"
    } else {
        ".b2f"
    }
}

/// Compression of the stores' own SChunks: python-blosc2's defaults for bytes.
fn byte_params() -> CompressParams {
    CompressParams {
        compcode: Codec::Zstd.id(),
        compcode_meta: 0,
        clevel: 5,
        typesize: 1,
        blocksize: 0,
        splitmode: crate::ffi::SPLIT_AUTO,
        filters: [0, 0, 0, 0, 0, crate::model::ids::SHUFFLE],
        filters_meta: [0; 6],
        nthreads: 1,
    }
}

/// A new in-memory SChunk frame of bytes with metalayer `meta` (if any), `data` in chunks
/// of [`EMBED_CHUNK`] bytes, and `vlmeta`: c-blosc2 lays out the empty frame's header,
/// `NewFrame` writes the rest.
fn bytes_frame(
    meta: Option<(&str, Value)>,
    data: &[u8],
    vlmeta: &[(String, Value)],
) -> Result<Vec<u8>> {
    let params = byte_params();
    let fail = |what: &str, e| Error::blosc(format!("writing a store's {what}"), e);
    let mut s = Schunk::create(None, true, &params).map_err(|e| fail("frame", e))?;
    if let Some((name, v)) = meta {
        s.meta_add(name, &v.encode())
            .map_err(|e| fail("metalayer", e))?;
    }
    let empty = s.serialize_cframe().map_err(|e| fail("frame", e))?;
    drop(s);
    let mut frame = NewFrame::memory(empty)?;
    let mut cctx = Cctx::new(&params).map_err(|e| fail("compressor", e))?;
    let mut out = Vec::new();
    for part in data.chunks(EMBED_CHUNK) {
        cctx.compress(part, &mut out)
            .map_err(|e| fail("chunks", e))?;
        frame.append(&out)?;
    }
    let vlmeta: Vec<(String, Vec<u8>)> = vlmeta
        .iter()
        .map(|(k, v)| (k.clone(), v.encode()))
        .collect();
    frame
        .finish(&vlmeta)?
        .ok_or_else(|| Error::InvalidArgument("no in-memory frame".into()))
}

/// The `embed.b2e` of a store: the embedded frames one after the other, and the key map.
fn embed_frame(meta_name: &str, embedded: &[(&str, &[u8])]) -> Result<Vec<u8>> {
    let s = |x: &str| Value::Str(x.to_string());
    let mut stream = Vec::new();
    let mut map = Vec::new();
    for (key, frame) in embedded {
        let entry = Value::Map(vec![
            (s("offset"), Value::Int(stream.len() as i64)),
            (s("length"), Value::Int(frame.len() as i64)),
        ]);
        map.push((s(key), entry));
        stream.extend_from_slice(frame);
    }
    let meta = Value::Map(vec![
        (s("embed_map"), Value::Map(map)),
        (s("current_offset"), Value::Int(stream.len() as i64)),
    ]);
    let version = Value::Map(vec![(s("version"), Value::Int(1))]);
    bytes_frame(
        Some((meta_name, version)),
        &stream,
        &[("estore_metadata".to_string(), meta)],
    )
}

/// An empty SChunk carrying `attrs` as vlmeta (a TreeStore group's `__vlmeta__`).
pub(crate) fn attrs_frame(attrs: &[(String, Value)]) -> Result<Vec<u8>> {
    bytes_frame(None, &[], attrs)
}
