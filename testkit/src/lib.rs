//! Servers b2nd's tests start on 127.0.0.1 and stop when dropped.
//!
//! In process, so a fresh clone's `cargo test` reads remotely for real: [`FileServer`]
//! (tower-http's `ServeDir` on hyper: GET and HEAD with byte ranges, plain or TLS with a CA
//! made here by rcgen) and [`S3Server`] (the S3 API of `s3s` over a directory with `s3s-fs`,
//! SigV4 signatures checked). Second, independent servers, installed by `.ci/run` and used by
//! the tests marked `#[ignore = "needs nginx"]` / `"needs moto"`: [`Nginx`] and [`Moto`].
//!
//! With `B2ND_TESTKIT_LOG` set, the in-process servers print every request they answer (method,
//! path, range, status) to stderr: `B2ND_TESTKIT_LOG=1 cargo test --test remote -- --nocapture`.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

/// A server of a directory's files over HTTP.
pub trait HttpServer {
    /// The port it listens on (127.0.0.1).
    fn port(&self) -> u16;

    /// The `http://` URL of `rel` (a path under the served directory).
    fn url(&self, rel: &str) -> String {
        format!("http://127.0.0.1:{}/{rel}", self.port())
    }
}

/// An S3 API server whose objects a test puts.
pub trait S3Server {
    /// The port it listens on (127.0.0.1): the endpoint is `http://127.0.0.1:PORT`.
    fn port(&self) -> u16;

    /// Creates bucket `bucket`.
    fn bucket(&self, bucket: &str);

    /// Stores `body` as object `key` of `bucket`.
    fn put(&self, bucket: &str, key: &str, body: &[u8]);

    /// Points object_store's `AmazonS3Builder::from_env` at this server, as a user's
    /// environment would: `AWS_ENDPOINT_URL`, plain HTTP, [`S3_KEY`] as key and secret,
    /// `us-east-1`. The environment is the process's: tests of one binary that call it take
    /// turns.
    fn use_from_env(&self) {
        std::env::set_var(
            "AWS_ENDPOINT_URL",
            format!("http://127.0.0.1:{}", self.port()),
        );
        std::env::set_var("AWS_ALLOW_HTTP", "true");
        std::env::set_var("AWS_ACCESS_KEY_ID", S3_KEY);
        std::env::set_var("AWS_SECRET_ACCESS_KEY", S3_KEY);
        std::env::set_var("AWS_REGION", "us-east-1");
    }
}

/// The access key and secret the in-process S3 server checks signatures with.
pub const S3_KEY: &str = "b2nd-test";

/// A hyper service run on its own thread and Tokio runtime, accepting connections on
/// 127.0.0.1 (a free port) until dropped.
struct Serving {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// What a connection is served with: the plain stream, or TLS over it.
type Acceptor = Option<tokio_rustls::TlsAcceptor>;

impl Serving {
    fn start<S, B>(service: S, tls: Acceptor) -> Serving
    where
        S: hyper::service::Service<hyper::Request<Incoming>, Response = hyper::Response<B>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: hyper::body::Body + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let socket = tokio::select! {
                        r = listener.accept() => match r {
                            Ok((s, _)) => s,
                            Err(_) => continue,
                        },
                        _ = &mut stopped => break,
                    };
                    let (service, tls) = (service.clone(), tls.clone());
                    let log = std::env::var_os("B2ND_TESTKIT_LOG").is_some();
                    let service =
                        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                            let line = format!(
                                "{} {} {:?}",
                                req.method(),
                                req.uri(),
                                req.headers().get("range")
                            );
                            let fut = hyper::service::Service::call(&service, req);
                            async move {
                                let r = fut.await;
                                if log {
                                    eprintln!(
                                        "testkit: {line} -> {:?}",
                                        r.as_ref().map(|r| r.status()).ok()
                                    );
                                }
                                r
                            }
                        });
                    tokio::spawn(async move {
                        let http = hyper::server::conn::http1::Builder::new();
                        match tls {
                            None => {
                                let _ = http.serve_connection(TokioIo::new(socket), service).await;
                            }
                            Some(tls) => {
                                if let Ok(s) = tls.accept(socket).await {
                                    let _ = http.serve_connection(TokioIo::new(s), service).await;
                                }
                            }
                        }
                    });
                }
            });
            // Open connections end with the runtime.
            rt.shutdown_timeout(Duration::from_millis(100));
        });
        Serving {
            port,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A directory's files over HTTP, in process: tower-http's `ServeDir` (GET and HEAD,
/// single byte ranges answered 206 with `Content-Range`, `Last-Modified`, 404 for a missing
/// file) on a hyper HTTP/1.1 server, with an `ETag` as nginx makes it (hex modification
/// time and size) and `If-Match` answered 412 when it differs, as nginx does.
pub struct FileServer {
    serving: Serving,
}

/// A response body of the file server: a file's bytes, or a short message.
type Body = http_body_util::combinators::UnsyncBoxBody<bytes::Bytes, std::io::Error>;

/// The file service: `ServeDir` behind the `ETag` / `If-Match` handling.
fn file_service(
    root: &Path,
) -> impl hyper::service::Service<
    hyper::Request<Incoming>,
    Response = hyper::Response<Body>,
    Error = std::convert::Infallible,
    Future = impl Send + 'static,
> + Clone
       + Send
       + 'static {
    use http_body_util::BodyExt;
    let root = root.to_path_buf();
    let serve = tower_http::services::ServeDir::new(&root);
    hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
        let mut serve = serve.clone();
        let etag = etag_of(&root, req.uri().path());
        async move {
            let wanted = req.headers().get(hyper::header::IF_MATCH).cloned();
            if let (Some(have), Some(want)) = (&etag, wanted) {
                if want != "*" && want != have {
                    let body = http_body_util::Full::new(bytes::Bytes::from_static(
                        b"precondition failed",
                    ))
                    .map_err(|never| match never {})
                    .boxed_unsync();
                    let mut r = hyper::Response::new(body);
                    *r.status_mut() = hyper::StatusCode::PRECONDITION_FAILED;
                    return Ok(r);
                }
            }
            let r = tower_service::Service::call(&mut serve, req).await?;
            let mut r = r.map(|b| b.boxed_unsync());
            if let Some(e) = etag {
                r.headers_mut().insert(hyper::header::ETAG, e);
            }
            Ok(r)
        }
    })
}

/// nginx's `ETag` of the file at URL path `path` under `root`: `"MTIME-SIZE"` in hex.
fn etag_of(root: &Path, path: &str) -> Option<hyper::header::HeaderValue> {
    let rel = percent_decoded(path.trim_start_matches('/'))?;
    if rel.split('/').any(|p| p == "..") {
        return None;
    }
    let m = std::fs::metadata(root.join(rel))
        .ok()
        .filter(|m| m.is_file())?;
    let mtime = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    hyper::header::HeaderValue::from_str(&format!("\"{mtime:x}-{:x}\"", m.len())).ok()
}

/// `path` with its `%XX` escapes decoded (the GCS client escapes `_` and `.`).
fn percent_decoded(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl FileServer {
    /// Serves `root` over plain HTTP.
    pub fn start(root: &Path) -> FileServer {
        FileServer {
            serving: Serving::start(file_service(root), None),
        }
    }

    /// Serves `root` over HTTPS with a certificate for 127.0.0.1 signed by a CA made here;
    /// the CA's PEM is returned beside it (the platform does not trust it).
    pub fn start_tls(root: &Path) -> (FileServer, Vec<u8>) {
        let (config, ca) = tls_config();
        let service = file_service(root);
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let server = FileServer {
            serving: Serving::start(service, Some(acceptor)),
        };
        (server, ca)
    }

    /// The `https://` URL of `rel` (for a server from [`FileServer::start_tls`]).
    pub fn https_url(&self, rel: &str) -> String {
        format!("https://127.0.0.1:{}/{rel}", self.port())
    }
}

impl HttpServer for FileServer {
    fn port(&self) -> u16 {
        self.serving.port
    }
}

/// A rustls server configuration with a certificate for 127.0.0.1 signed by a new CA, and
/// the CA's PEM.
fn tls_config() -> (tokio_rustls::rustls::ServerConfig, Vec<u8>) {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose,
    };
    use tokio_rustls::rustls;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "b2nd test CA");
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&leaf_key, &ca)
        .unwrap();
    let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca.der().clone()], key)
        .unwrap();
    (config, ca.pem().into_bytes())
}

/// The S3 API in process: `s3s` over a directory (`s3s-fs`: a bucket is a directory, an
/// object a file), requests signed with [`S3_KEY`] as key and secret.
pub struct S3 {
    serving: Serving,
    root: tempfile::TempDir,
}

/// s3s-fs's file system with the suffix ranges it mishandles clamped: s3s-fs 0.14.1 seeks
/// `length` bytes back from the end unclamped, so `Range: bytes=-N` with N above the object's
/// size (valid: the whole object, RFC 9110 14.1.2, as S3 answers it) fails with 500; and a key
/// that is a directory there (a prefix of other keys, no object in S3) fails with 500 where S3
/// says `NoSuchKey`. The requests object_store makes (GET, HEAD, LIST) pass through; the rest
/// are not served.
struct Fs {
    fs: s3s_fs::FileSystem,
    root: PathBuf,
}

impl Fs {
    /// The file of `key`; `NoSuchKey` when the key names a directory (a prefix).
    fn object_path(&self, bucket: &str, key: &str) -> s3s::S3Result<PathBuf> {
        let path = self.root.join(bucket).join(key);
        if path.is_dir() {
            return Err(s3s::s3_error!(NoSuchKey));
        }
        Ok(path)
    }
}

#[async_trait::async_trait]
impl s3s::S3 for Fs {
    async fn get_object(
        &self,
        mut req: s3s::S3Request<s3s::dto::GetObjectInput>,
    ) -> s3s::S3Result<s3s::S3Response<s3s::dto::GetObjectOutput>> {
        let path = self.object_path(&req.input.bucket, &req.input.key)?;
        if let Some(s3s::dto::Range::Suffix { length }) = req.input.range {
            let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
            if size > 0 && length > size {
                req.input.range = Some(s3s::dto::Range::Int {
                    first: 0,
                    last: Some(size - 1),
                });
            }
        }
        self.fs.get_object(req).await
    }

    async fn head_object(
        &self,
        req: s3s::S3Request<s3s::dto::HeadObjectInput>,
    ) -> s3s::S3Result<s3s::S3Response<s3s::dto::HeadObjectOutput>> {
        self.object_path(&req.input.bucket, &req.input.key)?;
        self.fs.head_object(req).await
    }

    async fn head_bucket(
        &self,
        req: s3s::S3Request<s3s::dto::HeadBucketInput>,
    ) -> s3s::S3Result<s3s::S3Response<s3s::dto::HeadBucketOutput>> {
        self.fs.head_bucket(req).await
    }

    async fn list_objects(
        &self,
        req: s3s::S3Request<s3s::dto::ListObjectsInput>,
    ) -> s3s::S3Result<s3s::S3Response<s3s::dto::ListObjectsOutput>> {
        self.fs.list_objects(req).await
    }

    async fn list_objects_v2(
        &self,
        req: s3s::S3Request<s3s::dto::ListObjectsV2Input>,
    ) -> s3s::S3Result<s3s::S3Response<s3s::dto::ListObjectsV2Output>> {
        self.fs.list_objects_v2(req).await
    }
}

impl S3 {
    /// A server over a new, empty directory.
    pub fn start() -> S3 {
        let root = tempfile::tempdir().unwrap();
        let fs = Fs {
            fs: s3s_fs::FileSystem::new(root.path()).unwrap(),
            root: root.path().to_path_buf(),
        };
        let mut b = s3s::service::S3ServiceBuilder::new(fs);
        b.set_auth(s3s::auth::SimpleAuth::from_single(S3_KEY, S3_KEY));
        S3 {
            serving: Serving::start(b.build(), None),
            root,
        }
    }

    fn object_path(&self, bucket: &str, key: &str) -> PathBuf {
        self.root.path().join(bucket).join(key)
    }
}

impl S3Server for S3 {
    fn port(&self) -> u16 {
        self.serving.port
    }

    fn bucket(&self, bucket: &str) {
        std::fs::create_dir_all(self.root.path().join(bucket)).unwrap();
    }

    fn put(&self, bucket: &str, key: &str, body: &[u8]) {
        let p = self.object_path(bucket, key);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
}

/// A free port on 127.0.0.1: bound, read and released (the server binds it right after).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether something listens on 127.0.0.1:`port` within `timeout`.
pub fn listening(port: u16, timeout: Duration) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let t0 = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
        if t0.elapsed() > timeout {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

/// nginx (Debian's package, which `.ci/run` installs) serving a directory on 127.0.0.1 (a
/// free port), stopped when dropped.
pub struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// nginx serving `root`. Panics without nginx: the tests that call it are
    /// `#[ignore = "needs nginx"]`, and a test that runs must run what it names.
    pub fn start(root: &Path) -> Nginx {
        let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .expect("needs nginx (/usr/sbin/nginx): `apt-get install nginx`, as .ci/run does");
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             types {{ }}\n  default_type application/octet-stream;\n  \
             server {{\n    listen 127.0.0.1:{port};\n    root {};\n  }}\n}}\n",
            root.display()
        );
        let conf_path = dir.path().join("nginx.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(bin)
            .arg("-c")
            .arg(&conf_path)
            .arg("-p")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        if !listening(port, Duration::from_secs(10)) {
            panic!(
                "nginx did not listen on port {port}: {}",
                std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default()
            );
        }
        Nginx {
            child,
            port,
            _dir: dir,
        }
    }
}

impl HttpServer for Nginx {
    fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// moto's S3 server (`moto_server` from PyPI, named by `B2ND_MOTO_SERVER` as `.ci/run`
/// installs it) on 127.0.0.1, stopped when dropped.
pub struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    /// Panics without `B2ND_MOTO_SERVER`: the tests that call it are
    /// `#[ignore = "needs moto"]`, and a test that runs must run what it names.
    pub fn start() -> Moto {
        let bin = std::env::var_os("B2ND_MOTO_SERVER").expect(
            "needs moto: set B2ND_MOTO_SERVER to moto's moto_server (pip install 'moto[server]'), as .ci/run does",
        );
        let port = free_port();
        let child = Command::new(bin)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            listening(port, Duration::from_secs(30)),
            "moto did not listen on port {port}"
        );
        Moto { child, port }
    }

    /// An unsigned `PUT` of `body` at `path` (moto does not check signatures).
    fn put_path(&self, path: &str, body: &[u8]) {
        use std::io::{Read, Write};
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        )
        .unwrap();
        s.write_all(body).unwrap();
        let mut reply = String::new();
        let _ = s.read_to_string(&mut reply);
        assert!(
            reply.starts_with("HTTP/1.1 200"),
            "PUT {path}: {}",
            reply.lines().next().unwrap_or("")
        );
    }
}

impl S3Server for Moto {
    fn port(&self) -> u16 {
        self.port
    }

    fn bucket(&self, bucket: &str) {
        self.put_path(&format!("/{bucket}"), b"");
    }

    fn put(&self, bucket: &str, key: &str, body: &[u8]) {
        self.put_path(&format!("/{bucket}/{key}"), body);
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `root` with its bytes, sorted by path: two snapshots are equal when no
/// byte of the tree changed.
pub fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

/// Copy a file, or a directory with everything under it.
pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            copy_tree(&e.path(), &to.join(e.file_name()));
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}
