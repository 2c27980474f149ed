//! Objects behind HTTP or in S3, read by byte ranges through the `object_store` crate
//! (feature `remote`). Each vectored read is one `get_ranges` call (object_store coalesces
//! nearby ranges and runs the requests concurrently) driven by a Tokio runtime b2nd owns, so
//! callers need no runtime of their own; an async caller must call from a blocking task.

#![forbid(unsafe_code)]

use std::sync::{Arc, OnceLock};

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use super::RangeRead;
use crate::error::{Error, Result};

/// Install ring as the process's TLS crypto provider unless one is installed already: the
/// HTTP client refuses to be built without one, even for plain HTTP.
fn tls_provider() {
    // An Err means another provider was installed first: it is used.
    let _ = rustls::crypto::ring::default_provider().install_default();
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

/// One remote object: its store, path and size (asked once, when opened).
pub(crate) struct Remote {
    store: Arc<dyn ObjectStore>,
    path: ObjectPath,
    url: String,
    size: u64,
}

impl Remote {
    /// The object at `path` of `store`, named `url` in errors: its size is asked now (a
    /// missing object is an error here).
    pub(crate) fn open(store: Arc<dyn ObjectStore>, path: ObjectPath, url: &str) -> Result<Remote> {
        tls_provider();
        let meta = runtime()?
            .block_on(store.head(&path))
            .map_err(|e| remote_error(url, e))?;
        Ok(Remote {
            store,
            path,
            url: url.to_string(),
            size: meta.size,
        })
    }

    /// The object at `url`: `http://` and `https://` (the server must answer range requests)
    /// or `s3://bucket/key` (credentials, region and endpoint from the environment as
    /// `object_store`'s `AmazonS3Builder::from_env` reads them: `AWS_ACCESS_KEY_ID`,
    /// `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, ...).
    pub(crate) fn open_url(url: &str) -> Result<Remote> {
        tls_provider();
        let bad = |reason: String| Error::Remote {
            url: url.to_string(),
            reason,
        };
        let parsed = url::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
        let (store, path): (Arc<dyn ObjectStore>, ObjectPath) = match parsed.scheme() {
            "http" | "https" => {
                let root = format!(
                    "{}://{}",
                    parsed.scheme(),
                    &parsed[url::Position::BeforeHost..url::Position::BeforePath]
                );
                // An http:// URL asks for plain HTTP (object_store refuses it by default).
                let options =
                    object_store::ClientOptions::new().with_allow_http(parsed.scheme() == "http");
                let store = object_store::http::HttpBuilder::new()
                    .with_url(root)
                    .with_client_options(options)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                let path =
                    ObjectPath::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
                (Arc::new(store), path)
            }
            "s3" => {
                let bucket = parsed
                    .host_str()
                    .ok_or_else(|| bad("no bucket in the URL".into()))?;
                let store = object_store::aws::AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                let path =
                    ObjectPath::from_url_path(parsed.path()).map_err(|e| bad(e.to_string()))?;
                (Arc::new(store), path)
            }
            other => return Err(bad(format!("the scheme {other}:// is not read here"))),
        };
        Remote::open(store, path, url)
    }
}

/// `object_store`'s error for `url`, with "not found" said as such.
fn remote_error(url: &str, e: object_store::Error) -> Error {
    let reason = match e {
        object_store::Error::NotFound { .. } => "not found".to_string(),
        other => other.to_string(),
    };
    Error::Remote {
        url: url.to_string(),
        reason,
    }
}

impl RangeRead for Remote {
    fn location(&self) -> String {
        self.url.clone()
    }

    fn size(&self) -> Result<u64> {
        Ok(self.size)
    }

    fn read_vectored_at(&self, reads: &mut [(u64, &mut [u8])]) -> Result<()> {
        let mut ranges = Vec::with_capacity(reads.len());
        for (pos, buf) in reads.iter() {
            let end = pos
                .checked_add(buf.len() as u64)
                .filter(|&e| e <= self.size)
                .ok_or_else(|| Error::Remote {
                    url: self.url.clone(),
                    reason: format!(
                        "bytes {pos}..+{} lie past the object's {} bytes",
                        buf.len(),
                        self.size
                    ),
                })?;
            ranges.push(*pos..end);
        }
        if ranges.iter().all(|r| r.is_empty()) {
            return Ok(());
        }
        let got = runtime()?
            .block_on(self.store.get_ranges(&self.path, &ranges))
            .map_err(|e| remote_error(&self.url, e))?;
        if got.len() != reads.len() {
            return Err(Error::Remote {
                url: self.url.clone(),
                reason: format!("{} ranges asked, {} answered", reads.len(), got.len()),
            });
        }
        for ((pos, buf), bytes) in reads.iter_mut().zip(got) {
            if bytes.len() != buf.len() {
                // A short body is an error, never short data.
                return Err(Error::Remote {
                    url: self.url.clone(),
                    reason: format!(
                        "bytes {pos}..+{}: the server sent {}",
                        buf.len(),
                        bytes.len()
                    ),
                });
            }
            buf.copy_from_slice(&bytes);
        }
        Ok(())
    }
}
