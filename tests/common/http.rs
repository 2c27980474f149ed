//! A real HTTP server for the remote-read tests: nginx (Debian's package, which `.ci/run`
//! installs) serving a directory on 127.0.0.1, started by the test and stopped with it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free port on 127.0.0.1: bound, read and released (the server binds it right after).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether something listens on 127.0.0.1:`port` within `timeout`.
fn listening(port: u16, timeout: Duration) -> bool {
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

/// nginx serving `root` on 127.0.0.1 (a free port), stopped when dropped.
pub struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// `None` when nginx is not installed.
    pub fn start(root: &Path) -> Option<Nginx> {
        Nginx::start_with(root, false).map(|(n, _)| n)
    }

    /// nginx serving `root` over HTTPS with a certificate for 127.0.0.1 signed by a CA made
    /// here with `openssl`; the CA's PEM is returned beside it. `None` without nginx or
    /// openssl.
    pub fn start_tls(root: &Path) -> Option<(Nginx, Vec<u8>)> {
        Nginx::start_with(root, true)
    }

    fn start_with(root: &Path, tls: bool) -> Option<(Nginx, Vec<u8>)> {
        let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let d = dir.path().display();
        let (listen, ca) = if tls {
            let ca = make_certificates(dir.path())?;
            (
                format!(
                    "listen 127.0.0.1:{port} ssl;\n    ssl_certificate {d}/leaf.pem;\n    \
                     ssl_certificate_key {d}/leaf.key;"
                ),
                ca,
            )
        } else {
            (format!("listen 127.0.0.1:{port};"), Vec::new())
        };
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
             fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             types {{ }}\n  default_type application/octet-stream;\n  \
             server {{\n    {listen}\n    root {};\n  }}\n}}\n",
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
        Some((
            Nginx {
                child,
                port,
                _dir: dir,
            },
            ca,
        ))
    }

    /// The URL of `rel` (a path under the root).
    pub fn url(&self, rel: &str) -> String {
        format!("http://127.0.0.1:{}/{rel}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// A CA (`ca.pem`) and a server certificate for 127.0.0.1 it signs (`leaf.pem`,
/// `leaf.key`) in `dir`, made with the `openssl` command; the CA's PEM, or `None` without
/// openssl.
fn make_certificates(dir: &Path) -> Option<Vec<u8>> {
    let run = |args: &[&str]| {
        let ok = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?
            .success();
        assert!(ok, "openssl {args:?} failed");
        Some(())
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=b2nd test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign",
    ])?;
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "leaf.key",
        "-out",
        "leaf.csr",
        "-subj",
        "/CN=127.0.0.1",
    ])?;
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "leaf.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ])?;
    Some(std::fs::read(dir.join("ca.pem")).unwrap())
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// moto's S3 server (`moto_server` from PyPI: `B2ND_MOTO_SERVER` names the binary, as
/// `.ci/run` installs it) on 127.0.0.1, stopped when dropped.
pub struct Moto {
    child: Child,
    pub port: u16,
}

impl Moto {
    /// `None` when `B2ND_MOTO_SERVER` is not set.
    pub fn start() -> Option<Moto> {
        let bin = std::env::var_os("B2ND_MOTO_SERVER")?;
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
        Some(Moto { child, port })
    }

    /// An unsigned `PUT` of `body` at `path` (moto does not check signatures): creates a
    /// bucket (`/bucket`) or an object (`/bucket/key`).
    pub fn put(&self, path: &str, body: &[u8]) {
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

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
