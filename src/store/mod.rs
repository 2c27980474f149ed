//! [`Store`]: python-blosc2's DictStore, TreeStore and EmbedStore, read in place.
//!
//! Layout (python-blosc2 4.x, `dict_store.py`, `tree_store.py`, `embed_store.py`):
//! - an **embed store** (`.b2e`) is one SChunk of bytes (metalayer `b2embed`) whose vlmeta
//!   `estore_metadata` maps each key to a whole CFrame inside the SChunk's decoded stream, or
//!   to a remote array (see [`embed`]);
//! - a **DictStore** (metalayer `b2dict`) or **TreeStore** (`b2tree`) is a directory (`.b2d`)
//!   or the same tree as a zip of stored members (`.b2z`): `embed.b2e` (an embed store for
//!   the small values) plus one file per external value, `dir1/node.b2nd` for key
//!   `/dir1/node` (`.b2f` SChunk or ObjectArray, `.b2b` BatchArray or ListArray). A
//!   TreeStore's groups are key prefixes; a group's attributes are the vlmeta of the SChunk
//!   at `<group>/__vlmeta__` (the root's at `/__vlmeta__`); tables inside it are listed in
//!   the `_object_registry` vlmeta of its embed store, or found by their `_meta` manifest.
//!
//! Opening reads the zip index or walks the directory and parses the key map; members are
//! opened on request, external ones in place (a `.b2z` member at its offset in the zip).

#![forbid(unsafe_code)]

pub(crate) mod embed;
pub(crate) mod keys;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::array::Array;
use crate::error::{Error, Result};
use crate::format::frame::Frame;
use crate::format::zip::ZipIndex;
use crate::model::attrs::Value;
use crate::schunk::SChunk;
use crate::storage::{LocalFile, RangeRead};
use embed::Embedded;
use keys::{check_key, has_external_suffix, key_of_path, EMBED_FILE};

/// Which python-blosc2 store class a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreKind {
    /// `blosc2.DictStore` (`.b2d` / `.b2z`, metalayer `b2dict`).
    DictStore,
    /// `blosc2.TreeStore` (`.b2d` / `.b2z`, metalayer `b2tree`): keys form a tree of groups.
    TreeStore,
    /// `blosc2.EmbedStore` (`.b2e`, metalayer `b2embed`): every value inside one SChunk.
    EmbedStore,
}

impl StoreKind {
    /// The python class name in lowercase: `dictstore`, `treestore`, `embedstore`.
    pub fn name(self) -> &'static str {
        match self {
            StoreKind::DictStore => "dictstore",
            StoreKind::TreeStore => "treestore",
            StoreKind::EmbedStore => "embedstore",
        }
    }

    fn from_metalayers(names: &[String]) -> Option<StoreKind> {
        let has = |n: &str| names.iter().any(|m| m == n);
        if has("b2embed") {
            Some(StoreKind::EmbedStore)
        } else if has("b2dict") {
            Some(StoreKind::DictStore)
        } else if has("b2tree") {
            Some(StoreKind::TreeStore)
        } else {
            None
        }
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a key of a store holds, named after the python-blosc2 class `store[key]` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemberKind {
    /// An N-d array (`NDArray`): open it with [`Store::open_array`].
    NdArray,
    /// A plain super-chunk (`SChunk`): [`Store::open_schunk`].
    SChunk,
    /// `ObjectArray` (metalayer `vlarray`).
    ObjectArray,
    /// `BatchArray` (metalayer `batcharray`).
    BatchArray,
    /// `ListArray` (metalayer `listarray`).
    ListArray,
    /// A reference to a remote array (`C2Array`): nothing of it is stored.
    C2Array,
    /// A saved Blosc2 object (metalayer `b2o`: `lazyexpr`, `lazyudf`, `c2array`,
    /// `remotearray`), named by its python class: it holds no data of its own.
    Object(String),
    /// A group of a TreeStore (`store[key]` is a sub-`TreeStore`).
    Group,
    /// A table (`CTable`) stored under this key of a TreeStore.
    CTable,
}

impl MemberKind {
    /// The name used in listings: python's class in lowercase (`ndarray`, `schunk`,
    /// `objectarray`, `batcharray`, `listarray`, `c2array`, `treestore`, `ctable`), or a
    /// saved object's kind.
    pub fn name(&self) -> &str {
        match self {
            MemberKind::NdArray => "ndarray",
            MemberKind::SChunk => "schunk",
            MemberKind::ObjectArray => "objectarray",
            MemberKind::BatchArray => "batcharray",
            MemberKind::ListArray => "listarray",
            MemberKind::C2Array => "c2array",
            MemberKind::Object(k) => k,
            MemberKind::Group => "treestore",
            MemberKind::CTable => "ctable",
        }
    }

    /// The kind of a frame, from its metalayers.
    fn of_frame(s: &SChunk) -> Result<MemberKind> {
        let names = s.metalayer_names();
        let has = |n: &str| names.iter().any(|m| m == n);
        Ok(if has("b2o") {
            let kind = s
                .metalayer_value("b2o")?
                .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| "b2o".into())
                // The python class, lowercase: `remote_array` is a `RemoteArray`.
                .replace('_', "");
            MemberKind::Object(kind)
        } else if has("listarray") {
            MemberKind::ListArray
        } else if has("vlarray") {
            MemberKind::ObjectArray
        } else if has("batcharray") {
            MemberKind::BatchArray
        } else if has("b2nd") || has("caterva") {
            MemberKind::NdArray
        } else {
            MemberKind::SChunk
        })
    }
}

impl std::fmt::Display for MemberKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a stored value's frame is.
#[derive(Debug, Clone)]
enum Place {
    /// Inside the embed store's decoded stream.
    Embedded(Embedded),
    /// An external file (or sparse frame directory) of a `.b2d`, by its `/`-separated path
    /// relative to the store's directory.
    File(String),
    /// An external member of a `.b2z`: its bytes in the zip.
    Zip { offset: u64, length: u64 },
}

/// The file a store was opened from.
#[derive(Debug)]
enum Container {
    Dir,
    Zip,
    Embed,
}

/// Where a store's bytes are.
#[derive(Clone)]
enum Root {
    /// A local file or directory.
    Local(PathBuf),
    /// One remote object (a `.b2z` or `.b2e`), read by ranges.
    #[cfg(feature = "remote")]
    Object(std::sync::Arc<dyn RangeRead>),
    /// A remote prefix (a `.b2d` directory), its members objects under it.
    #[cfg(feature = "remote")]
    Prefix(std::sync::Arc<crate::storage::RemoteDir>),
}

impl Root {
    /// The store's file as a source of byte ranges.
    fn source(&self) -> Result<std::sync::Arc<dyn RangeRead>> {
        match self {
            Root::Local(p) => Ok(std::sync::Arc::new(LocalFile::open(p)?)),
            #[cfg(feature = "remote")]
            Root::Object(src) => Ok(src.clone()),
            #[cfg(feature = "remote")]
            Root::Prefix(d) => Err(Error::InvalidArgument(format!(
                "{}: a directory, not one object",
                d.url()
            ))),
        }
    }

    /// The frame starting `offset` bytes into the store's file (a `.b2z` member, a `.b2e`).
    fn frame_at(&self, offset: u64) -> Result<Frame> {
        match self {
            Root::Local(p) => Frame::open(p, offset),
            #[cfg(feature = "remote")]
            Root::Object(src) => Frame::in_source(src.clone(), offset),
            #[cfg(feature = "remote")]
            Root::Prefix(_) => Frame::in_source(self.source()?, offset),
        }
    }

    /// The frame in the file (or sparse frame directory) `rel` of a `.b2d`.
    fn member_frame(&self, rel: &str) -> Result<Frame> {
        match self {
            #[cfg(feature = "remote")]
            Root::Prefix(d) => {
                let url = format!("{}/{rel}", d.url());
                Frame::from_remote(&url, crate::storage::RemoteFrame::open(d.entry(rel)?)?)
            }
            _ => Frame::open(&self.local(rel)?, 0),
        }
    }

    /// The bytes of the file `rel` of a `.b2d`.
    fn member_bytes(&self, rel: &str) -> Result<Vec<u8>> {
        match self {
            #[cfg(feature = "remote")]
            Root::Prefix(d) => {
                let f = d.open(rel)?;
                let n = usize::try_from(f.size()?)
                    .map_err(|_| Error::InvalidArgument(format!("{}/{rel}: too large", d.url())))?;
                f.read_range(0, n)
            }
            _ => {
                let p = self.local(rel)?;
                std::fs::read(&p).map_err(|source| Error::Io { path: p, source })
            }
        }
    }

    /// The local path of `rel` under a local directory.
    fn local(&self, rel: &str) -> Result<PathBuf> {
        match self {
            Root::Local(p) => Ok(p.join(rel)),
            #[allow(unreachable_patterns)]
            _ => Err(Error::InvalidArgument(format!(
                "{rel}: not in a local directory"
            ))),
        }
    }
}

/// A python-blosc2 store (DictStore, TreeStore or EmbedStore) opened for reading.
///
/// ```
/// use b2nd::{MemberKind, Store};
///
/// let store = Store::open("tests/data/stores/dict_ext.b2z")?;
/// for key in store.keys() {
///     println!("{key}: {}", store.member_kind(&key)?);
/// }
/// let a = store.open_array("/dir1/big")?;
/// assert_eq!(a.shape(), &[40, 50]);
/// # Ok::<(), b2nd::Error>(())
/// ```
pub struct Store {
    path: PathBuf,
    root: Root,
    kind: StoreKind,
    container: Container,
    /// The embed store (the whole store for `.b2e`).
    embed: SChunk,
    /// Stored values: external ones (sorted by key), then embedded ones (in map order).
    members: Vec<(String, Place)>,
    /// The table roots, found once (each needs its manifest opened).
    tables: std::sync::OnceLock<BTreeSet<String>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("members", &self.members.len())
            .finish()
    }
}

impl Store {
    /// Open a `.b2z` zip, a `.b2d` directory or a `.b2e` embed store.
    ///
    /// What the store is comes from its embed store's metalayer (`b2dict`, `b2tree`,
    /// `b2embed`), else from the suffix as python-blosc2 decides (`.b2d` DictStore, `.b2z`
    /// TreeStore, `.b2e` EmbedStore).
    pub fn open(path: impl AsRef<Path>) -> Result<Store> {
        let path = path.as_ref();
        let bad = |reason: String| Error::Store {
            path: path.display().to_string(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_dir() && !meta.is_file() {
            return Err(bad(crate::format::frame::not_regular(&meta)));
        }
        let suffix = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let root = Root::Local(path.to_path_buf());
        if !meta.is_dir() {
            return Store::open_file(root, path, suffix, meta.len());
        }
        let embed_path = path.join(EMBED_FILE);
        if !embed_path.is_file() {
            return Err(bad(format!("no `{EMBED_FILE}`: not a store directory")));
        }
        let embed = SChunk::open(&embed_path)?;
        let external = walk_dir(path).map_err(bad)?;
        Store::assemble(root, path, suffix, Container::Dir, embed, external)
    }

    /// Open the store in one file (`.b2z` zip or `.b2e` embed store) of `len` bytes at
    /// `root`, named `path` in errors.
    fn open_file(root: Root, path: &Path, suffix: &str, len: u64) -> Result<Store> {
        let bad = |reason: String| Error::Store {
            path: path.display().to_string(),
            reason,
        };
        let src = root.source()?;
        let zip = len >= 4
            && src
                .read_range(0, 4)
                .is_ok_and(|magic| magic == *b"PK\x03\x04");
        let (container, embed, external) = if suffix == "b2e" || !zip {
            (
                Container::Embed,
                SChunk::from_frame(root.frame_at(0)?)?,
                Vec::new(),
            )
        } else {
            let index = ZipIndex::read(src.as_ref(), len).map_err(|m| bad(m.0))?;
            if let Some(e) = index.entries.iter().find(|e| !e.stored) {
                return Err(bad(format!(
                    "member {:?} is compressed: a .b2z is read in place, so its members must \
                     be stored (unzip it and open the directory instead)",
                    e.name
                )));
            }
            let entry = index
                .get(EMBED_FILE)
                .ok_or_else(|| bad(format!("no `{EMBED_FILE}` member: not a store")))?;
            let embed = SChunk::from_frame(root.frame_at(entry.data_offset)?)?;
            let mut external = Vec::new();
            for e in &index.entries {
                if e.name == EMBED_FILE {
                    continue;
                }
                let place = Place::Zip {
                    offset: e.data_offset,
                    length: e.size,
                };
                if has_external_suffix(&e.name) || root.frame_at(e.data_offset).is_ok() {
                    external.push((e.name.clone(), place));
                }
            }
            (Container::Zip, embed, external)
        };
        Store::assemble(root, path, suffix, container, embed, external)
    }

    /// The store in `container` at `root` from its embed store and external members: its
    /// kind, and its members by key.
    fn assemble(
        root: Root,
        path: &Path,
        suffix: &str,
        container: Container,
        embed: SChunk,
        external: Vec<(String, Place)>,
    ) -> Result<Store> {
        let bad = |reason: String| Error::Store {
            path: path.display().to_string(),
            reason,
        };
        let layers = embed.metalayer_names();
        let kind = match StoreKind::from_metalayers(&layers) {
            Some(k) => k,
            None => match (&container, suffix) {
                (Container::Dir, "b2d") => StoreKind::DictStore,
                (Container::Zip, "b2z") => StoreKind::TreeStore,
                (Container::Embed, "b2e") => StoreKind::EmbedStore,
                _ => {
                    return Err(bad(format!(
                        "neither a `b2embed`, `b2dict` nor `b2tree` metalayer (found: {}) nor a \
                         store suffix",
                        if layers.is_empty() {
                            "none".into()
                        } else {
                            layers.join(", ")
                        }
                    )))
                }
            },
        };
        if matches!(container, Container::Embed) && kind != StoreKind::EmbedStore {
            return Err(bad(format!(
                "the `{EMBED_FILE}` of a {kind}: open the store's directory or zip instead"
            )));
        }
        let mut members: Vec<(String, Place)> = Vec::new();
        let mut seen = BTreeSet::new();
        for (rel, place) in external {
            let key = key_of_path(&rel);
            check_key(&key).map_err(|why| bad(format!("member {rel:?}: key {key:?} {why}")))?;
            if !seen.insert(key.clone()) {
                return Err(bad(format!("key {key:?} is held by two member files")));
            }
            members.push((key, place));
        }
        members.sort_by(|a, b| a.0.cmp(&b.0));
        let map = match embed.attr("estore_metadata")? {
            Some(m) => embed::parse_map(&m, embed.nbytes())
                .map_err(|why| bad(format!("{EMBED_FILE}: estore_metadata: {why}")))?,
            None => Vec::new(),
        };
        for (key, e) in map {
            if !seen.insert(key.clone()) {
                return Err(bad(format!(
                    "key {key:?} is both embedded and an external member"
                )));
            }
            members.push((key, Place::Embedded(e)));
        }
        Ok(Store {
            path: path.to_path_buf(),
            root,
            kind,
            container,
            embed,
            members,
            tables: std::sync::OnceLock::new(),
        })
    }

    /// Whether `path` looks like a store (without opening it fully): a directory holding
    /// `embed.b2e`, a zip file, or a frame with a `b2embed` metalayer.
    pub fn probe(path: impl AsRef<Path>) -> bool {
        let path = path.as_ref();
        if path.is_dir() {
            return path.join(EMBED_FILE).is_file();
        }
        if !path.is_file() {
            return false; // FIFOs, devices, sockets, missing paths: never opened here
        }
        if is_zip(path).unwrap_or(false) {
            return true;
        }
        SChunk::open(path).is_ok_and(|s| {
            StoreKind::from_metalayers(&s.metalayer_names()) == Some(StoreKind::EmbedStore)
        })
    }

    /// Open the store in one object at `url` (feature `remote`): a `.b2z` (read in place,
    /// each member by ranges) or a `.b2e`, with the default [`crate::RemoteOptions`]; URLs
    /// as [`Array::open_url`] takes them. A `.b2d` directory is not read over URLs.
    ///
    /// ```no_run
    /// let store = b2nd::Store::open_url("s3://bucket/data/tree.b2z")?;
    /// let a = store.open_array("/dir1/big")?;
    /// # Ok::<(), b2nd::Error>(())
    /// ```
    #[cfg(feature = "remote")]
    pub fn open_url(url: &str) -> Result<Store> {
        Store::open_url_with(url, &crate::storage::RemoteOptions::new())
    }

    /// [`Store::open_url`] with explicit timeouts, retries, requests in flight and store
    /// settings.
    #[cfg(feature = "remote")]
    pub fn open_url_with(url: &str, options: &crate::storage::RemoteOptions) -> Result<Store> {
        let path = PathBuf::from(url.trim_end_matches('/'));
        let suffix = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_string();
        match crate::storage::RemoteEntry::open_url(url, options)? {
            crate::storage::RemoteEntry::Object(o) => {
                let len = o.size()?;
                Store::open_file(Root::Object(std::sync::Arc::new(o)), &path, &suffix, len)
            }
            crate::storage::RemoteEntry::Prefix(dir, first) => {
                Store::open_prefix(std::sync::Arc::new(dir), &path, &suffix, first)
            }
        }
    }

    /// Open the `.b2d` store under the remote prefix `dir` (named `path`); `first` is the
    /// error of the object at the URL, said when the prefix holds no store either.
    #[cfg(feature = "remote")]
    fn open_prefix(
        dir: std::sync::Arc<crate::storage::RemoteDir>,
        path: &Path,
        suffix: &str,
        first: Option<Error>,
    ) -> Result<Store> {
        let bad = |reason: String| Error::Store {
            path: path.display().to_string(),
            reason,
        };
        let embed = match dir.open(EMBED_FILE) {
            Ok(o) => SChunk::from_frame(Frame::in_source(std::sync::Arc::new(o), 0)?)?,
            Err(Error::Remote { reason, .. }) if reason == "not found" => {
                return Err(first
                    .unwrap_or_else(|| bad(format!("no `{EMBED_FILE}`: not a store directory"))))
            }
            Err(e) => return Err(e),
        };
        let root = Root::Prefix(dir.clone());
        let external =
            walk_listing(&dir.list()?, |rel| root.member_frame(rel).is_ok()).map_err(bad)?;
        Store::assemble(root, path, suffix, Container::Dir, embed, external)
    }

    /// The same store opened again (for a table, which owns its store): a local store
    /// from its path, a remote one on the object already opened.
    pub(crate) fn reopen(&self) -> Result<Store> {
        match &self.root {
            Root::Local(p) => Store::open(p),
            #[cfg(feature = "remote")]
            Root::Object(src) => {
                let suffix = self.path.extension().and_then(|e| e.to_str()).unwrap_or("");
                Store::open_file(self.root.clone(), &self.path, suffix, src.size()?)
            }
            #[cfg(feature = "remote")]
            Root::Prefix(dir) => {
                let suffix = self.path.extension().and_then(|e| e.to_str()).unwrap_or("");
                Store::open_prefix(dir.clone(), &self.path, suffix, None)
            }
        }
    }

    /// The path the store was opened from (for a store opened from a URL, the URL).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store is a CTable saved on its own: a TreeStore with a table's manifest
    /// (`_meta`) at its root, opened with [`Store::open_table`]`("/")`.
    pub fn is_table(&self) -> bool {
        self.kind() == StoreKind::TreeStore && self.contains(&crate::format::ctable::meta_key(""))
    }

    /// Which python-blosc2 store this is.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The keys python-blosc2's `store.keys()` gives, sorted: every stored value's key; for a
    /// TreeStore, also every group (key prefix, or a group holding only attributes) and every
    /// table root, without the attribute carriers (`.../__vlmeta__`) and the members inside
    /// tables.
    pub fn keys(&self) -> Vec<String> {
        if self.kind != StoreKind::TreeStore {
            let mut keys: Vec<String> = self.members.iter().map(|(k, _)| k.clone()).collect();
            keys.sort();
            return keys;
        }
        let tables = self.table_roots();
        let mut out = BTreeSet::new();
        for (key, _) in &self.members {
            let key = key.strip_suffix("/__vlmeta__").unwrap_or(key);
            if key.is_empty() || key == "/__vlmeta__" {
                continue;
            }
            if tables.iter().any(|t| key.starts_with(&format!("{t}/"))) {
                continue;
            }
            out.insert(key.to_string());
        }
        out.extend(tables.iter().cloned());
        let mut groups = BTreeSet::new();
        for key in &out {
            let mut at = 0;
            while let Some(i) = key[at + 1..].find('/') {
                at += 1 + i;
                groups.insert(key[..at].to_string());
            }
        }
        out.extend(groups);
        out.into_iter().collect()
    }

    /// Table roots of a TreeStore: the keys `k` with a `k/_meta` manifest whose `kind` is
    /// `ctable` (not the root: a store whose `/_meta` is a manifest is a table itself).
    fn table_roots(&self) -> &BTreeSet<String> {
        self.tables.get_or_init(|| self.find_table_roots())
    }

    fn find_table_roots(&self) -> BTreeSet<String> {
        let mut roots = BTreeSet::new();
        for (key, _) in &self.members {
            if let Some(root) = key.strip_suffix(&crate::format::ctable::meta_key("")) {
                if root.is_empty() {
                    continue;
                }
                let is_table = self
                    .open_schunk(key)
                    .ok()
                    .and_then(|s| s.attr("kind").ok().flatten())
                    .is_some_and(|k| k.as_str() == Some("ctable"));
                if is_table {
                    roots.insert(root.to_string());
                }
            }
        }
        roots
    }

    fn place(&self, key: &str) -> Option<&Place> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, p)| p)
    }

    /// The file (or sparse-frame directory) of external member `key` of a directory store
    /// (`.b2d`); `None` for a member embedded in `embed.b2e`, a member of a zip, or no member.
    pub(crate) fn member_path(&self, key: &str) -> Option<std::path::PathBuf> {
        match (self.place(key)?, &self.container) {
            (Place::File(rel), Container::Dir) => Some(self.path.join(rel)),
            _ => None,
        }
    }

    /// The groups of a TreeStore (every key prefix, and groups holding only attributes),
    /// sorted; none for other stores.
    pub fn groups(&self) -> Vec<String> {
        if self.kind != StoreKind::TreeStore {
            return Vec::new();
        }
        let tables = self.table_roots();
        self.keys()
            .into_iter()
            .filter(|k| !self.contains(k) && !tables.contains(k))
            .collect()
    }

    /// Whether `key` holds a stored value (not a group).
    pub fn contains(&self, key: &str) -> bool {
        self.place(key).is_some()
    }

    /// What `key` holds (opening its frame to read its metalayers).
    pub fn member_kind(&self, key: &str) -> Result<MemberKind> {
        match self.place(key) {
            Some(Place::Embedded(Embedded::Remote { .. })) => Ok(MemberKind::C2Array),
            Some(_) => MemberKind::of_frame(&self.open_schunk(key)?),
            None if self.kind == StoreKind::TreeStore => {
                let keys = self.keys();
                if !keys.iter().any(|k| k == key) {
                    return Err(self.no_key(key));
                }
                if self.table_roots().contains(key) {
                    Ok(MemberKind::CTable)
                } else {
                    Ok(MemberKind::Group)
                }
            }
            None => Err(self.no_key(key)),
        }
    }

    fn no_key(&self, key: &str) -> Error {
        Error::KeyNotFound {
            store: self.path.display().to_string(),
            key: key.to_string(),
        }
    }

    /// How errors name member `key`: `store.b2z:/key`.
    fn source_of(&self, key: &str) -> String {
        format!("{}:{key}", self.path.display())
    }

    /// The bytes of the frame stored under `key` (a CFrame), read whole.
    pub fn member_bytes(&self, key: &str) -> Result<Vec<u8>> {
        match self.place(key).ok_or_else(|| self.no_key(key))? {
            Place::Embedded(Embedded::Frame { offset, length }) => {
                self.embed.read_bytes_range(*offset, *length)
            }
            Place::Embedded(Embedded::Remote { urlbase, path }) => {
                Err(self.remote(key, urlbase, path))
            }
            Place::File(rel) => self.root.member_bytes(rel),
            Place::Zip { offset, length } => {
                let file = self.root.source()?;
                let n = usize::try_from(*length).map_err(|_| {
                    Error::InvalidArgument(format!("member {key}: {length} bytes do not fit"))
                })?;
                file.read_range(*offset, n).map_err(|_| Error::Store {
                    path: self.path.display().to_string(),
                    reason: format!("member {key}: cannot read its bytes"),
                })
            }
        }
    }

    fn remote(&self, key: &str, urlbase: &str, path: &str) -> Error {
        Error::NoData {
            source_name: self.source_of(key),
            reason: format!(
                "it is a reference to the remote array {urlbase}{path} (C2Array): nothing of it \
                 is stored here"
            ),
        }
    }

    /// The frame stored under `key`, named `store:key` in errors.
    fn frame(&self, key: &str) -> Result<Frame> {
        let place = self.place(key).ok_or_else(|| self.no_key(key))?;
        let frame = match place {
            Place::File(rel) => self.root.member_frame(rel)?,
            Place::Zip { offset, .. } => self.root.frame_at(*offset)?,
            Place::Embedded(_) => Frame::from_bytes(self.member_bytes(key)?)
                .map_err(|e| rename(e, &self.source_of(key)))?,
        };
        Ok(frame.named(self.source_of(key)))
    }

    /// Open the N-d array stored under `key`: in place for external members (a `.b2z`
    /// member at its offset in the zip), from its decoded bytes for embedded ones.
    pub fn open_array(&self, key: &str) -> Result<Array> {
        Array::from_frame(self.frame(key)?)
    }

    /// Open the frame stored under `key` as a super-chunk (any kind of member).
    pub fn open_schunk(&self, key: &str) -> Result<SChunk> {
        SChunk::from_frame(self.frame(key)?)
    }

    /// The attributes of TreeStore group `group` (`/` for the root): the vlmeta of its
    /// `__vlmeta__` SChunk; none if it has none. Other stores have no group attributes.
    pub fn group_attrs(&self, group: &str) -> Result<Vec<(String, Value)>> {
        check_key(group).map_err(|why| Error::InvalidArgument(format!("group {group:?} {why}")))?;
        let carrier = if group == "/" {
            "/__vlmeta__".to_string()
        } else {
            format!("{group}/__vlmeta__")
        };
        if !self.contains(&carrier) {
            if group != "/" && !self.keys().iter().any(|k| k == group) {
                return Err(self.no_key(group));
            }
            return Ok(Vec::new());
        }
        self.open_schunk(&carrier)?.attrs()
    }

    /// The embed store's SChunk (for `.b2e` stores, the whole store).
    pub fn embed_schunk(&self) -> &SChunk {
        &self.embed
    }

    /// Whether the store is a directory (`.b2d`), a zip (`.b2z`) or an embed store (`.b2e`).
    pub fn format(&self) -> &'static str {
        match self.container {
            Container::Dir => "b2d",
            Container::Zip => "b2z",
            Container::Embed => "b2e",
        }
    }
}

/// Whether the file starts like a zip (a local header).
fn is_zip(path: &Path) -> Result<bool> {
    let file = LocalFile::open(path)?;
    Ok(file
        .read_range(0, 4)
        .is_ok_and(|magic| magic == *b"PK\x03\x04"))
}

/// Deepest directory nesting walked in a `.b2d` store.
const MAX_DEPTH: usize = 64;

/// The external members of a `.b2d` directory: files with an external suffix, or that open
/// as frames, other than the root `embed.b2e`, as (`/`-separated relative path, place).
/// Symbolic links are refused (they could leave the store or loop).
fn walk_dir(root: &Path) -> std::result::Result<Vec<(String, Place)>, String> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        if depth > MAX_DEPTH {
            return Err(format!("directories nested deeper than {MAX_DEPTH} levels"));
        }
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
            let name = entry.file_name();
            let name = name
                .to_str()
                .ok_or_else(|| format!("{}: a file name that is not UTF-8", dir.display()))?
                .to_string();
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let ft = entry
                .file_type()
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            if ft.is_symlink() {
                return Err(format!("{rel}: a symbolic link (not followed)"));
            }
            if ft.is_dir() {
                // A sparse frame (SFrame) member is a directory holding `chunks.b2frame`.
                if has_external_suffix(&rel) && entry.path().join("chunks.b2frame").is_file() {
                    out.push((rel.clone(), Place::File(rel)));
                } else {
                    stack.push((entry.path(), rel, depth + 1));
                }
                continue;
            }
            if rel == EMBED_FILE || !ft.is_file() {
                continue;
            }
            if has_external_suffix(&rel) || SChunk::open(entry.path()).is_ok() {
                out.push((rel.clone(), Place::File(rel)));
            }
        }
    }
    Ok(out)
}

/// The external members of a `.b2d` directory from the listing of every object under it
/// (`/`-separated relative paths), by the rules of [`walk_dir`]: a sparse frame member is a
/// directory with an external suffix holding `chunks.b2frame` (its chunk files are not
/// members); other files are members when they have an external suffix or `opens` says
/// they open as frames; the root `embed.b2e` is not a member.
#[cfg(feature = "remote")]
fn walk_listing(
    listed: &[String],
    opens: impl Fn(&str) -> bool,
) -> std::result::Result<Vec<(String, Place)>, String> {
    let sparse: BTreeSet<&str> = listed
        .iter()
        .filter_map(|rel| rel.strip_suffix("/chunks.b2frame"))
        .filter(|dir| has_external_suffix(dir))
        .collect();
    let inside_sparse = |rel: &str| {
        sparse
            .iter()
            .any(|d| rel.strip_prefix(d).is_some_and(|r| r.starts_with('/')))
    };
    let mut out: Vec<(String, Place)> = sparse
        .iter()
        .map(|d| (d.to_string(), Place::File(d.to_string())))
        .collect();
    for rel in listed {
        if rel.split('/').count() > MAX_DEPTH + 1 {
            return Err(format!("directories nested deeper than {MAX_DEPTH} levels"));
        }
        if rel == EMBED_FILE || inside_sparse(rel) {
            continue;
        }
        if has_external_suffix(rel) || opens(rel) {
            out.push((rel.clone(), Place::File(rel.clone())));
        }
    }
    Ok(out)
}

/// An error about an in-memory frame, naming the store member it came from instead.
fn rename(e: Error, source: &str) -> Error {
    match e {
        Error::Frame { reason, .. } => Error::Frame {
            source_name: source.to_string(),
            reason,
        },
        other => other,
    }
}
