//! A real HTTP server for the remote-read tests: nginx (Debian's package, which `.ci/run`
//! installs) serving a directory on 127.0.0.1, started by the test and stopped with it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// nginx serving `root` on 127.0.0.1 (a free port), stopped when dropped.
pub struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// `None` when nginx is not installed.
    pub fn start(root: &Path) -> Option<Nginx> {
        let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let dir = tempfile::tempdir().unwrap();
        // A free port: bind, read it, release it (nginx binds it right after).
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
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
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let t0 = Instant::now();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "nginx did not listen on {addr}: {}",
                std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Nginx {
            child,
            port,
            _dir: dir,
        })
    }

    /// The URL of `rel` (a path under the root).
    pub fn url(&self, rel: &str) -> String {
        format!("http://127.0.0.1:{}/{rel}", self.port)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
