//! Objects behind HTTP or in S3, read by byte ranges through the `object_store` crate
//! (feature `remote`). A vectored read coalesces nearby ranges and runs the requests with a
//! bounded number in flight, each one conditional on the object being the version opened,
//! on a Tokio runtime b2nd owns, so callers need no runtime of their own. Called from inside
//! a caller's runtime the synchronous calls still work (the wait leaves the runtime's worker,
//! see `block_on`), but they block that task: async code should use [`crate::nonblocking`].

#![forbid(unsafe_code)]

use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use futures_util::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{
    ClientConfigKey, GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt, RetryConfig,
};

use super::kept::Kept;
use super::{Directory, RangeRead};
use crate::error::{Error, Result};

/// How remote objects are reached: timeouts, retries, requests in flight, how far apart
/// two ranges may be and still be fetched by one request, and settings passed to
/// `object_store`'s builders (for S3 any key `AmazonS3ConfigKey` parses: `aws_endpoint`,
/// `aws_region`, `aws_access_key_id`, ...; for HTTP any `ClientConfigKey`), which override
/// the environment.
///
/// ```
/// use std::time::Duration;
///
/// let options = b2nd::RemoteOptions::new()
///     .timeout(Duration::from_secs(10))
///     .retries(2)
///     .max_in_flight(4)
///     .setting("aws_region", "eu-west-1");
/// assert_eq!(options.in_flight(), 4);
/// ```
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    timeout: Duration,
    connect_timeout: Duration,
    retries: usize,
    retry_timeout: Duration,
    in_flight: usize,
    coalesce: u64,
    chunk_cache: usize,
    settings: Vec<(String, String)>,
    roots: Vec<Vec<u8>>,
}

impl Default for RemoteOptions {
    fn default() -> RemoteOptions {
        // Retries as object_store's own defaults (10, within 3 minutes, its backoff).
        let retry = RetryConfig::default();
        RemoteOptions {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: retry.max_retries,
            retry_timeout: retry.retry_timeout,
            in_flight: 8,
            coalesce: 256 * 1024,
            chunk_cache: 256 << 20,
            settings: Vec::new(),
            roots: Vec::new(),
        }
    }
}

impl RemoteOptions {
    /// The defaults: 30 s per request (body included), 5 s to connect, object_store's retry
    /// policy (10 retries of a transient error, 5xx or a reset, with exponential backoff
    /// within 3 minutes), 8 requests in
    /// flight, ranges less than 256 KiB apart fetched together, 256 MiB of compressed chunks
    /// kept and fetched ahead of whole reads.
    pub fn new() -> RemoteOptions {
        RemoteOptions::default()
    }

    /// The longest one request may take, its body included.
    pub fn timeout(mut self, timeout: Duration) -> RemoteOptions {
        self.timeout = timeout;
        self
    }

    /// The longest connecting may take.
    pub fn connect_timeout(mut self, timeout: Duration) -> RemoteOptions {
        self.connect_timeout = timeout;
        self
    }

    /// How many times a transient failure is retried (0: never).
    pub fn retries(mut self, retries: usize) -> RemoteOptions {
        self.retries = retries;
        self
    }

    /// No retry starts later than this after a request's first try.
    pub fn retry_timeout(mut self, timeout: Duration) -> RemoteOptions {
        self.retry_timeout = timeout;
        self
    }

    /// At most this many requests in flight per read (at least 1).
    pub fn max_in_flight(mut self, n: usize) -> RemoteOptions {
        self.in_flight = n.max(1);
        self
    }

    /// Ranges less than `bytes` apart are fetched by one request.
    pub fn coalesce_gap(mut self, bytes: u64) -> RemoteOptions {
        self.coalesce = bytes;
        self
    }

    /// How many bytes of compressed chunks an opened array keeps, fetching up to half of
    /// that ahead of reads that decode whole chunks (0: none; every chunk is fetched when
    /// decoded).
    pub fn chunk_cache(mut self, bytes: usize) -> RemoteOptions {
        self.chunk_cache = bytes;
        self
    }

    /// A setting for `object_store`'s builder (e.g. `aws_endpoint`, `aws_region`,
    /// `aws_allow_http`); later settings of a key win.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> RemoteOptions {
        self.settings.push((key.into(), value.into()));
        self
    }

    /// Trust the PEM certificate `pem` as a root for `https://` URLs, besides the
    /// platform's (a server with a private or self-signed certificate).
    pub fn root_certificate(mut self, pem: impl Into<Vec<u8>>) -> RemoteOptions {
        self.roots.push(pem.into());
        self
    }

    /// Requests in flight per read.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The retry policy for object_store's client.
    fn retry(&self) -> RetryConfig {
        RetryConfig {
            max_retries: self.retries,
            retry_timeout: self.retry_timeout,
            ..RetryConfig::default()
        }
    }

    /// The client settings every store gets: timeouts (as object_store parses durations).
    fn client_settings(&self) -> [(ClientConfigKey, String); 2] {
        [
            (
                ClientConfigKey::Timeout,
                format!("{}ms", self.timeout.as_millis()),
            ),
            (
                ClientConfigKey::ConnectTimeout,
                format!("{}ms", self.connect_timeout.as_millis()),
            ),
        ]
    }
}

/// The runtime every remote read runs on: two worker threads, made on first use.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("b2nd-remote")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| Error::Remote {
        url: String::new(),
        reason: format!("cannot start the I/O runtime: {e}"),
    })
}

/// Run `f` to completion on b2nd's runtime. Called from inside a caller's Tokio runtime
/// (whose threads may not block on another runtime directly), the wait moves off its worker
/// (`block_in_place`) on a multi-thread runtime, or to a thread of its own on a
/// current-thread one, where `block_in_place` is not allowed.
fn block_on<F>(f: F) -> Result<F::Output>
where
    F: std::future::Future + Send,
    F::Output: Send,
{
    use tokio::runtime::{Handle, RuntimeFlavor};
    let rt = runtime()?;
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Err(_) => Ok(rt.block_on(f)),
        Ok(RuntimeFlavor::MultiThread) => Ok(tokio::task::block_in_place(|| rt.block_on(f))),
        Ok(_) => Ok(std::thread::scope(|s| {
            s.spawn(|| rt.block_on(f))
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })),
    }
}

/// The store serving `url` and the object's path in it: `http://` and `https://` (the
/// server must answer range requests), `s3://bucket/key`, `gs://bucket/key`,
/// `az://container/key` (credentials, region and endpoint from the environment as
/// `object_store`'s builders' `from_env` read them, then `options`' settings), or
/// `file:///absolute/path` (through `object_store`'s local file system store).
pub(crate) fn store_for(
    url: &str,
    options: &RemoteOptions,
) -> Result<(Arc<dyn ObjectStore>, ObjectPath)> {
    let bad = |reason: String| Error::Remote {
        url: url.to_string(),
        reason,
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
    let path = ObjectPath::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
    let store: Arc<dyn ObjectStore> = match parsed.scheme() {
        "http" | "https" => {
            let root = format!(
                "{}://{}",
                parsed.scheme(),
                &parsed[url::Position::BeforeHost..url::Position::BeforePath]
            );
            // An http:// URL asks for plain HTTP (object_store refuses it by default).
            let mut client =
                object_store::ClientOptions::new().with_allow_http(parsed.scheme() == "http");
            for (k, v) in options.client_settings() {
                client = client.with_config(k, v);
            }
            for (k, v) in &options.settings {
                let key = k.parse().map_err(|e| bad(format!("setting {k:?}: {e}")))?;
                client = client.with_config(key, v);
            }
            for pem in &options.roots {
                let cert = object_store::Certificate::from_pem(pem)
                    .map_err(|e| bad(format!("root certificate: {e}")))?;
                client = client.with_root_certificate(cert);
            }
            let b = object_store::http::HttpBuilder::new()
                .with_url(root)
                .with_retry(options.retry())
                .with_client_options(client);
            Arc::new(b.build().map_err(|e| bad(e.to_string()))?)
        }
        "s3" | "gs" | "az" | "azure" => {
            let bucket = parsed
                .host_str()
                .ok_or_else(|| bad("no bucket or container in the URL".into()))?;
            // Each cloud builder: from the environment, then the retry policy, the client
            // settings and the user's settings (keys as that store's config key parses them).
            macro_rules! cloud {
                ($builder:expr, $client_key:path) => {{
                    let mut b = $builder.with_retry(options.retry());
                    for (k, v) in options.client_settings() {
                        b = b.with_config($client_key(k), v);
                    }
                    for (k, v) in &options.settings {
                        let key = k.parse().map_err(|e| bad(format!("setting {k:?}: {e}")))?;
                        b = b.with_config(key, v);
                    }
                    Arc::new(b.build().map_err(|e| bad(e.to_string()))?)
                }};
            }
            match parsed.scheme() {
                "s3" => cloud!(
                    object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket),
                    object_store::aws::AmazonS3ConfigKey::Client
                ),
                "gs" => cloud!(
                    object_store::gcp::GoogleCloudStorageBuilder::from_env()
                        .with_bucket_name(bucket),
                    object_store::gcp::GoogleConfigKey::Client
                ),
                _ => cloud!(
                    object_store::azure::MicrosoftAzureBuilder::from_env()
                        .with_container_name(bucket),
                    object_store::azure::AzureConfigKey::Client
                ),
            }
        }
        "file" => Arc::new(object_store::local::LocalFileSystem::new()),
        other => return Err(bad(format!("the scheme {other}:// is not read here"))),
    };
    Ok((store, path))
}

/// One remote object: its store, path, and the version opened (size, ETag, modification
/// time, asked once when opened); every read is conditional on that version.
pub(crate) struct Remote {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    url: String,
    meta: ObjectMeta,
    /// The object's first bytes, fetched when it was opened.
    prefix: bytes::Bytes,
    /// Ranges fetched by prefetches and small reads, for the reads that come back to them.
    kept: Mutex<Kept>,
    in_flight: usize,
    coalesce: u64,
    chunk_cache: usize,
}

impl Remote {
    /// The object at `path` of `store`, named `url` in errors: its version is asked now (a
    /// missing object is an error here).
    pub(crate) fn open(
        store: Arc<dyn ObjectStore>,
        path: ObjectPath,
        url: &str,
        options: &RemoteOptions,
    ) -> Result<Remote> {
        let (meta, prefix, _) = first(&store, &path, 0)?.map_err(|e| remote_error(url, e))?;
        Ok(Remote::opened(store, path, url, meta, prefix, options))
    }

    /// The object `meta` describes, whose first bytes are `prefix`.
    fn opened(
        store: Arc<dyn ObjectStore>,
        path: ObjectPath,
        url: &str,
        meta: ObjectMeta,
        prefix: bytes::Bytes,
        options: &RemoteOptions,
    ) -> Remote {
        Remote {
            store,
            path,
            url: url.to_string(),
            meta,
            prefix,
            kept: Mutex::new(Kept::new(KEPT_BUDGET)),
            in_flight: options.in_flight,
            coalesce: options.coalesce,
            chunk_cache: options.chunk_cache,
        }
    }

    /// Fetch `ranges` (sorted, disjoint, inside the object) with at most `in_flight`
    /// requests at a time, each conditional on the opened version.
    async fn fetch(&self, ranges: Vec<Range<u64>>) -> Result<Vec<bytes::Bytes>> {
        stream::iter(ranges)
            .map(|r| self.get(r))
            .buffered(self.in_flight)
            .try_collect()
            .await
    }

    /// The response to a GET of one range, conditional on the opened version.
    async fn respond(&self, r: Range<u64>) -> Result<object_store::GetResult> {
        let opened = &self.meta;
        let options = GetOptions {
            range: Some(GetRange::Bounded(r)),
            // The version opened, by ETag where the server gives one, else by date.
            if_match: opened.e_tag.clone(),
            if_unmodified_since: opened.e_tag.is_none().then_some(opened.last_modified),
            ..GetOptions::default()
        };
        let got = self
            .store
            .get_opts(&self.path, options)
            .await
            .map_err(|e| remote_error(&self.url, e))?;
        let changed = got.meta.size != opened.size
            || matches!((&got.meta.e_tag, &opened.e_tag), (Some(a), Some(b)) if a != b);
        if changed {
            return Err(self.changed());
        }
        Ok(got)
    }

    /// The error for a body of `got` bytes where range `r` was asked.
    fn wrong_length(&self, r: &Range<u64>, got: u64) -> Error {
        Error::Remote {
            url: self.url.clone(),
            reason: format!("bytes {}..{}: the server sent {got} bytes", r.start, r.end),
        }
    }

    /// Fetch one range, conditional on the opened version; a short body is an error.
    async fn get(&self, r: Range<u64>) -> Result<bytes::Bytes> {
        let got = self.respond(r.clone()).await?;
        let bytes = got.bytes().await.map_err(|e| remote_error(&self.url, e))?;
        if bytes.len() as u64 != r.end - r.start {
            // A short body is an error, never short data.
            return Err(self.wrong_length(&r, bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// Bytes `pos..pos + len` as they arrive: held bytes and small ranges in one piece
    /// (small ones kept), larger ones as their response's body streams in. A body longer or
    /// shorter than asked ends in an error.
    fn pieces(
        &self,
        pos: u64,
        len: usize,
    ) -> futures_util::stream::BoxStream<'_, Result<bytes::Bytes>> {
        let Some(end) = pos.checked_add(len as u64).filter(|&e| e <= self.meta.size) else {
            let e = Error::Remote {
                url: self.url.clone(),
                reason: format!(
                    "bytes {pos}..+{len} lie past the object's {} bytes",
                    self.meta.size
                ),
            };
            return stream::once(async move { Err(e) }).boxed();
        };
        if let Some(b) = self.held(pos, end) {
            return stream::once(async move { Ok(bytes::Bytes::from(b)) }).boxed();
        }
        if len <= KEPT_READ {
            return stream::once(async move {
                let b = self.get(pos..end).await?;
                self.keep(pos, &b);
                Ok(b)
            })
            .boxed();
        }
        let r = pos..end;
        stream::once(async move {
            let body = self.respond(r.clone()).await?.into_stream();
            // (the body, the bytes seen, whether it ended)
            let checked = stream::unfold((body, 0u64, false), move |(mut body, seen, over)| {
                let r = r.clone();
                async move {
                    if over {
                        return None;
                    }
                    let want = r.end - r.start;
                    match body.next().await {
                        Some(Ok(b)) => {
                            let seen = seen + b.len() as u64;
                            let item = if seen > want {
                                Err(self.wrong_length(&r, seen))
                            } else {
                                Ok(b)
                            };
                            let over = item.is_err();
                            Some((item, (body, seen, over)))
                        }
                        Some(Err(e)) => Some((Err(remote_error(&self.url, e)), (body, seen, true))),
                        None if seen == want => None,
                        None => Some((Err(self.wrong_length(&r, seen)), (body, seen, true))),
                    }
                }
            });
            Ok::<_, Error>(checked)
        })
        .try_flatten()
        .boxed()
    }

    /// Bytes `pos..end` if they were fetched already (at open, by a prefetch or a small read).
    fn held(&self, pos: u64, end: u64) -> Option<Vec<u8>> {
        if end <= self.prefix.len() as u64 {
            return Some(self.prefix[pos as usize..end as usize].to_vec());
        }
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(pos, end).map(<[u8]>::to_vec)
    }

    /// Keep a range just fetched when it is small (headers, trailers, indexes).
    fn keep(&self, pos: u64, bytes: &bytes::Bytes) {
        if bytes.len() <= KEPT_READ {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            kept.put(pos, bytes.clone());
        }
    }

    /// The error for an object replaced since it was opened.
    fn changed(&self) -> Error {
        Error::Remote {
            url: self.url.clone(),
            reason: "the object changed while it was read (its size or ETag is not the one \
                     opened)"
                .into(),
        }
    }
}

/// The most bytes of fetched ranges an opened object keeps (see [`Kept`]).
const KEPT_BUDGET: usize = 8 << 20;
/// The largest read kept after it is fetched: a zip file's last 64 KiB (where its directory
/// is found) and smaller reads. Larger ones are chunks, which the frame's chunk cache keeps.
const KEPT_READ: usize = 80 << 10;
/// How far apart two prefetched ranges may be and still be fetched by one request.
const PREFETCH_GAP: u64 = 16 << 10;

/// How many bytes from an object's start are fetched when it is opened: the header of most
/// frames, or a whole small object (a sparse frame's chunk file).
const OPEN_PREFIX: u64 = 8192;

/// How many bytes from an object's end are fetched, beside its first bytes, when a URL is
/// opened: a zip file's directory record with the longest comment (where a `.b2z`'s member
/// list is found), and the chunk index and trailer of most frames.
const OPEN_SUFFIX: u64 = 22 + 0xFFFF;

/// The object's first bytes, its version, and (when `tail` > 0) its last `tail` bytes with
/// their position, fetched concurrently with the first ones.
type First = (ObjectMeta, bytes::Bytes, Option<(u64, bytes::Bytes)>);

/// What the store says of the object at `path` (its version) and its first bytes, asked by
/// one ranged GET (the answer carries size and ETag), or its error. An empty object, which
/// no range fits, is asked by HEAD. With `tail` > 0 a second GET asks for the last `tail`
/// bytes at the same time; they are kept only when that answer names the same version (a
/// failed or mismatched tail is dropped: the reads that need it fetch it).
fn first(
    store: &Arc<dyn ObjectStore>,
    path: &ObjectPath,
    tail: u64,
) -> Result<std::result::Result<First, object_store::Error>> {
    block_on(async {
        let options = GetOptions {
            range: Some(GetRange::Bounded(0..OPEN_PREFIX)),
            ..GetOptions::default()
        };
        let suffix = async {
            if tail == 0 {
                return None;
            }
            let options = GetOptions {
                range: Some(GetRange::Suffix(tail)),
                ..GetOptions::default()
            };
            let got = store.get_opts(path, options).await.ok()?;
            let (meta, range) = (got.meta.clone(), got.range.clone());
            let bytes = got.bytes().await.ok()?;
            (bytes.len() as u64 == range.end - range.start).then_some((meta, range.start, bytes))
        };
        let (head, suffix) =
            futures_util::future::join(store.get_opts(path, options), suffix).await;
        match head {
            Ok(got) => {
                let meta = got.meta.clone();
                let tail = suffix.and_then(|(m, at, b)| {
                    let same = m.size == meta.size
                        && m.e_tag == meta.e_tag
                        && (meta.e_tag.is_some() || m.last_modified == meta.last_modified);
                    same.then_some((at, b))
                });
                got.bytes().await.map(|b| (meta, b, tail))
            }
            Err(e)
                if reason(clone_error(&e))
                    .to_ascii_lowercase()
                    .contains("range") =>
            {
                match store.head(path).await {
                    Ok(meta) if meta.size == 0 => Ok((meta, bytes::Bytes::new(), None)),
                    _ => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    })
}

/// A copy of `e` good enough to read its message (object_store errors are not `Clone`).
fn clone_error(e: &object_store::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: "b2nd",
        source: e.to_string().into(),
    }
}

/// `object_store`'s error for `url` (see [`reason`]).
fn remote_error(url: &str, e: object_store::Error) -> Error {
    Error::Remote {
        url: url.to_string(),
        reason: reason(e),
    }
}

/// What went wrong, in one line: "not found" and a changed object said as such.
fn reason(e: object_store::Error) -> String {
    match e {
        object_store::Error::NotFound { .. } => "not found".to_string(),
        object_store::Error::Precondition { .. } | object_store::Error::NotModified { .. } => {
            "the object changed while it was read (the server says it is not the version \
             opened)"
                .to_string()
        }
        other => {
            // One line, without the HTML page some servers send with an error status, with
            // the causes a client error wraps (a refused connection, a certificate).
            let mut text = other.to_string().replace('\n', " ");
            if let Some(at) = text.find(": <html") {
                text.truncate(at);
            }
            let mut cause = std::error::Error::source(&other);
            while let Some(c) = cause {
                let m = c.to_string().replace('\n', " ");
                if !text.contains(&m) {
                    text.push_str(": ");
                    text.push_str(&m);
                }
                cause = c.source();
            }
            text
        }
    }
}

/// Group the requests `reads` (positions and lengths, any order, disjoint) into ranges no
/// more than `gap` bytes apart: the ranges in order, and for each request its range's index
/// and its offset inside it.
fn coalesce(reads: &[(u64, usize)], gap: u64) -> (Vec<Range<u64>>, Vec<(usize, usize)>) {
    let mut order: Vec<usize> = (0..reads.len()).filter(|&i| reads[i].1 > 0).collect();
    order.sort_by_key(|&i| reads[i].0);
    let mut ranges: Vec<Range<u64>> = Vec::new();
    let mut place = vec![(0, 0); reads.len()];
    for i in order {
        let (pos, len) = reads[i];
        let end = pos + len as u64;
        let n = ranges.len();
        match ranges.last_mut() {
            Some(last) if pos <= last.end.saturating_add(gap) => {
                place[i] = (n - 1, (pos - last.start) as usize);
                last.end = last.end.max(end);
            }
            _ => {
                place[i] = (ranges.len(), 0);
                ranges.push(pos..end);
            }
        }
    }
    (ranges, place)
}

impl RangeRead for Remote {
    fn location(&self) -> String {
        self.url.clone()
    }

    fn chunk_cache_budget(&self) -> usize {
        self.chunk_cache
    }

    fn read_each(
        &self,
        reads: &[(u64, usize)],
        piece: &mut (dyn FnMut(usize, Result<super::Piece>) -> bool + Send),
    ) {
        let work = async {
            // Each range's pieces as its response streams in; up to `in_flight` responses
            // at a time, their pieces interleaved.
            let mut arrivals = stream::iter(reads.iter().copied().enumerate())
                .map(|(i, (pos, len))| self.pieces(pos, len).map(move |p| (i, p)))
                .flatten_unordered(self.in_flight);
            while let Some((i, got)) = arrivals.next().await {
                let go_on = match got {
                    Ok(b) => piece(i, Ok(Box::new(b))),
                    Err(e) => piece(i, Err(e)),
                };
                if !go_on {
                    return; // the requests still in flight are dropped
                }
            }
        };
        if let Err(e) = block_on(work) {
            let reason = e.to_string();
            for i in 0..reads.len() {
                let e = Error::Remote {
                    url: self.url.clone(),
                    reason: reason.clone(),
                };
                if !piece(i, Err(e)) {
                    return;
                }
            }
        }
    }

    fn size(&self) -> Result<u64> {
        Ok(self.meta.size)
    }

    fn prefetch(&self, ranges: &[(u64, usize)]) {
        // The ranges not held yet, inside the object, coalesced across small gaps, up to
        // half the budget; fetched concurrently, then kept whole.
        let asked: Vec<(u64, usize)> = ranges
            .iter()
            .filter_map(|&(pos, len)| {
                let end = pos.checked_add(len as u64)?.min(self.meta.size);
                (pos < end && self.held(pos, end).is_none()).then(|| (pos, (end - pos) as usize))
            })
            .collect();
        let (mut ranges, _) = coalesce(&asked, PREFETCH_GAP);
        let mut room = (KEPT_BUDGET / 2) as u64;
        let mut fits = 0;
        for r in &ranges {
            let n = r.end - r.start;
            if n > room {
                break;
            }
            room -= n;
            fits += 1;
        }
        ranges.truncate(fits);
        if ranges.is_empty() {
            return;
        }
        let starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
        if let Ok(Ok(got)) = block_on(self.fetch(ranges)) {
            let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            for (b, start) in got.into_iter().zip(starts) {
                kept.put(start, b);
            }
        }
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        let mut asked = Vec::with_capacity(reads.len());
        for (pos, buf) in reads.iter_mut() {
            let end = pos
                .checked_add(buf.len() as u64)
                .filter(|&e| e <= self.meta.size)
                .ok_or_else(|| Error::Remote {
                    url: self.url.clone(),
                    reason: format!(
                        "bytes {pos}..+{} lie past the object's {} bytes",
                        buf.len(),
                        self.meta.size
                    ),
                })?;
            if let Some(held) = self.held(*pos, end) {
                buf.copy_from_slice(&held);
                asked.push((*pos, 0));
            } else {
                asked.push((*pos, buf.len()));
            }
        }
        let (ranges, place) = coalesce(&asked, self.coalesce);
        if ranges.is_empty() {
            return Ok(());
        }
        let starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
        let got = block_on(self.fetch(ranges))??;
        for (b, &start) in got.iter().zip(&starts) {
            self.keep(start, b);
        }
        for (((_, buf), (k, at)), &(_, len)) in reads.iter_mut().zip(place).zip(&asked) {
            if len > 0 {
                buf.copy_from_slice(&got[k][at..at + len]);
            }
        }
        Ok(())
    }
}

/// The most objects a directory's listing may hold.
const MAX_LISTED: usize = 1_000_000;

/// A prefix of a store read as a directory (a sparse frame's chunk files): each file is a
/// [`Remote`] opened on first use.
pub(crate) struct RemoteDir {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    url: String,
    options: RemoteOptions,
}

impl RemoteDir {
    /// The directory `prefix` of `store`, named `url` in errors.
    pub(crate) fn new(
        store: Arc<dyn ObjectStore>,
        prefix: ObjectPath,
        url: &str,
        options: &RemoteOptions,
    ) -> RemoteDir {
        RemoteDir {
            store,
            prefix,
            url: url.trim_end_matches('/').to_string(),
            options: options.clone(),
        }
    }
}

impl RemoteDir {
    /// The URL of the directory.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The object at `rel` (`/`-separated) under the directory.
    pub(crate) fn open(&self, rel: &str) -> Result<Remote> {
        let path = rel
            .split('/')
            .fold(self.prefix.clone(), |p, part| p.join(part));
        Remote::open(
            self.store.clone(),
            path,
            &format!("{}/{rel}", self.url),
            &self.options,
        )
    }

    /// What `rel` (`/`-separated) under the directory is.
    pub(crate) fn entry(&self, rel: &str) -> Result<RemoteEntry> {
        let path = rel
            .split('/')
            .fold(self.prefix.clone(), |p, part| p.join(part));
        RemoteEntry::open(
            self.store.clone(),
            path,
            &format!("{}/{rel}", self.url),
            &self.options,
        )
    }

    /// Every object under the directory, as `/`-separated paths relative to it (the store
    /// must list: S3 does, a plain HTTP server does not).
    pub(crate) fn list(&self) -> Result<Vec<String>> {
        let prefix = self.prefix.clone();
        // At most MAX_LISTED objects are taken (a server's endless listing is an error).
        let listed: Vec<ObjectMeta> = block_on(
            self.store
                .list(Some(&prefix))
                .take(MAX_LISTED + 1)
                .try_collect(),
        )?
        .map_err(|e| Error::Remote {
            url: self.url.clone(),
            reason: format!(
                "cannot list the directory (a .b2d is read where the store lists \
                     prefixes, as S3 does): {}",
                reason(e)
            ),
        })?;
        if listed.len() > MAX_LISTED {
            return Err(Error::Remote {
                url: self.url.clone(),
                reason: format!("more than {MAX_LISTED} objects under the directory"),
            });
        }
        Ok(listed
            .iter()
            .filter_map(|m| {
                let parts: Vec<String> = m
                    .location
                    .prefix_match(&prefix)?
                    .map(|p| p.as_ref().to_string())
                    .collect();
                (!parts.is_empty()).then(|| parts.join("/"))
            })
            .collect())
    }
}

/// The URLs of every object under the prefix `url` (a directory of a store that lists, as
/// S3 does; a plain HTTP server does not), in the store's order.
pub fn list_url(url: &str, options: &RemoteOptions) -> Result<Vec<String>> {
    let (store, prefix) = store_for(url, options)?;
    let dir = RemoteDir::new(store, prefix, url, options);
    Ok(dir
        .list()?
        .into_iter()
        .map(|rel| format!("{}/{rel}", dir.url()))
        .collect())
}

impl Directory for RemoteDir {
    fn file(&self, name: &str) -> Result<Arc<dyn RangeRead>> {
        Ok(Arc::new(self.open(name)?))
    }
}

/// What a URL names: one object, or a prefix (a directory: a sparse frame, a `.b2d`).
pub(crate) enum RemoteEntry {
    /// An object, opened.
    Object(Remote),
    /// No object there (404, or nginx's 403 for a directory): a prefix, maybe a directory.
    /// The object's error is kept for when the prefix holds nothing either.
    Prefix(RemoteDir, Option<Error>),
}

impl RemoteEntry {
    /// What `path` of `store` (named `url`) is; a URL ending in `/` is a prefix.
    pub(crate) fn open(
        store: Arc<dyn ObjectStore>,
        path: ObjectPath,
        url: &str,
        options: &RemoteOptions,
    ) -> Result<RemoteEntry> {
        let dir =
            |e| RemoteEntry::Prefix(RemoteDir::new(store.clone(), path.clone(), url, options), e);
        if url.ends_with('/') {
            return Ok(dir(None));
        }
        match first(&store, &path, OPEN_SUFFIX)? {
            Ok((meta, prefix, tail)) => {
                let object =
                    Remote::opened(store.clone(), path.clone(), url, meta, prefix, options);
                if let Some((at, bytes)) = tail {
                    let mut kept = object.kept.lock().unwrap_or_else(|e| e.into_inner());
                    kept.put(at, bytes);
                }
                Ok(RemoteEntry::Object(object))
            }
            Err(
                e @ (object_store::Error::NotFound { .. }
                | object_store::Error::PermissionDenied { .. }),
            ) => Ok(dir(Some(remote_error(url, e)))),
            Err(e) => Err(remote_error(url, e)),
        }
    }

    /// What `url` (see [`store_for`]) is.
    pub(crate) fn open_url(url: &str, options: &RemoteOptions) -> Result<RemoteEntry> {
        let (store, path) = store_for(url, options)?;
        RemoteEntry::open(store, path, url, options)
    }
}

/// A frame at a URL: one object (a contiguous frame), or a prefix holding a sparse frame's
/// `chunks.b2frame` and chunk files.
pub(crate) enum RemoteFrame {
    /// A contiguous frame.
    Object(Remote),
    /// A sparse frame: its index object and its directory.
    Sparse { index: Remote, dir: RemoteDir },
}

impl RemoteFrame {
    /// The frame `entry` names: the object, else the sparse frame whose `chunks.b2frame` is
    /// under the prefix; "not found" when neither is.
    pub(crate) fn open(entry: RemoteEntry) -> Result<RemoteFrame> {
        let (dir, first) = match entry {
            RemoteEntry::Object(o) => return Ok(RemoteFrame::Object(o)),
            RemoteEntry::Prefix(dir, first) => (dir, first),
        };
        match dir.open("chunks.b2frame") {
            Ok(index) => Ok(RemoteFrame::Sparse { index, dir }),
            Err(Error::Remote { reason, .. }) if reason == "not found" => Err(first
                .unwrap_or_else(|| Error::Remote {
                    url: dir.url.clone(),
                    reason: "not found".into(),
                })),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesce_merges_near_ranges_and_keeps_each_request_place() {
        // Out of order, one empty, two within the gap, one far.
        let reads = [(100, 10), (0, 10), (5000, 4), (20, 0), (30, 5)];
        let (ranges, place) = coalesce(&reads, 70);
        assert_eq!(ranges, vec![0..110, 5000..5004]);
        assert_eq!(place[0], (0, 100));
        assert_eq!(place[1], (0, 0));
        assert_eq!(place[2], (1, 0));
        assert_eq!(place[4], (0, 30));
        // 30..35 joins 0..10 (20 bytes apart), 100..110 is 65 bytes further: its own.
        let (ranges, place) = coalesce(&reads, 64);
        assert_eq!(ranges, vec![0..35, 100..110, 5000..5004]);
        assert_eq!(place[0], (1, 0));
        let (ranges, _) = coalesce(&reads, 0);
        assert_eq!(ranges, vec![0..10, 30..35, 100..110, 5000..5004]);
    }
}
