//! A fault-injecting HTTP proxy on 127.0.0.1 in front of a real server: it passes
//! each request on (one upstream connection per request) and can answer 503, cut a
//! response's body short, add latency, hang, or die; it counts requests and body bytes.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the proxy does to the requests it gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Pass every request on.
    None,
    /// Answer the next `n` requests with 503, then pass them on.
    Unavailable(u32),
    /// Answer every request with 503.
    AlwaysUnavailable,
    /// Send each ranged response's headers and only half its body, then close.
    Truncate,
    /// Accept requests and never answer.
    Hang,
    /// Close every connection at once (a server that died); new ones are refused when
    /// `Proxy::kill` is called.
    Die,
}

/// State shared with the proxy's threads.
struct Shared {
    upstream: u16,
    fault: Mutex<Fault>,
    latency: Mutex<Duration>,
    requests: AtomicU64,
    body_bytes: AtomicU64,
    dead: AtomicBool,
}

/// The proxy: a listening port and the counters.
pub struct Proxy {
    port: u16,
    shared: Arc<Shared>,
}

impl Proxy {
    /// A proxy to 127.0.0.1:`upstream`.
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared {
            upstream,
            fault: Mutex::new(Fault::None),
            latency: Mutex::new(Duration::ZERO),
            requests: AtomicU64::new(0),
            body_bytes: AtomicU64::new(0),
            dead: AtomicBool::new(false),
        });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.dead.load(Ordering::SeqCst) {
                    break; // the listener is dropped: new connections are refused
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || serve(conn, &s));
            }
        });
        Proxy { port, shared }
    }

    /// `http://127.0.0.1:PORT/rel`.
    pub fn url(&self, rel: &str) -> String {
        format!("http://127.0.0.1:{}/{rel}", self.port)
    }

    /// Do `fault` from now on.
    pub fn set(&self, fault: Fault) {
        *self.shared.fault.lock().unwrap() = fault;
    }

    /// Wait this long before passing each request on.
    pub fn latency(&self, d: Duration) {
        *self.shared.latency.lock().unwrap() = d;
    }

    /// Requests and body bytes sent since the last reset.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.shared.requests.load(Ordering::SeqCst),
            self.shared.body_bytes.load(Ordering::SeqCst),
        )
    }

    /// Zero the counters.
    pub fn reset(&self) {
        self.shared.requests.store(0, Ordering::SeqCst);
        self.shared.body_bytes.store(0, Ordering::SeqCst);
    }

    /// Stop listening: connections already open see [`Fault::Die`], new ones are refused.
    pub fn kill(&self) {
        self.set(Fault::Die);
        self.shared.dead.store(true, Ordering::SeqCst);
        // Wake the accept loop so it drops the listener.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Read one request head (up to the blank line); `None` at EOF.
fn read_head(conn: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match conn.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => return None,
        }
    }
    Some(head)
}

/// Serve one client connection, request after request.
fn serve(mut conn: TcpStream, s: &Shared) {
    while let Some(head) = read_head(&mut conn) {
        s.requests.fetch_add(1, Ordering::SeqCst);
        let fault = {
            let mut f = s.fault.lock().unwrap();
            let now = *f;
            if let Fault::Unavailable(n) = now {
                *f = if n <= 1 {
                    Fault::None
                } else {
                    Fault::Unavailable(n - 1)
                };
            }
            now
        };
        let latency = *s.latency.lock().unwrap();
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        match fault {
            Fault::Unavailable(_) | Fault::AlwaysUnavailable => {
                let body = b"unavailable";
                let _ = write!(
                    conn,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(body);
                continue;
            }
            Fault::Hang => {
                std::thread::sleep(Duration::from_secs(3600));
                return;
            }
            Fault::Die => {
                let _ = conn.shutdown(Shutdown::Both);
                return;
            }
            Fault::None | Fault::Truncate => {}
        }
        let Some(response) = fetch(s.upstream, &head) else {
            let _ = conn.shutdown(Shutdown::Both);
            return;
        };
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(response.len(), |p| p + 4);
        let (rhead, body) = response.split_at(split);
        let ranged = rhead.starts_with(b"HTTP/1.1 206");
        if fault == Fault::Truncate && ranged && body.len() > 1 {
            s.body_bytes
                .fetch_add(body.len() as u64 / 2, Ordering::SeqCst);
            let _ = conn.write_all(rhead);
            let _ = conn.write_all(&body[..body.len() / 2]);
            let _ = conn.shutdown(Shutdown::Both);
            return;
        }
        // A diagnostic: every answered request's range and body length.
        if std::env::var_os("B2ND_PROXY_LOG").is_some() {
            let h = String::from_utf8_lossy(&head);
            let range = h
                .lines()
                .find(|l| l.to_ascii_lowercase().starts_with("range:"))
                .unwrap_or("range: -");
            eprintln!("proxy: {range} -> {} bytes", body.len());
        }
        // Counted before it is sent, so that a client that has its answer sees it counted.
        s.body_bytes.fetch_add(body.len() as u64, Ordering::SeqCst);
        let _ = conn.write_all(&response);
    }
}

/// Pass the request `head` to the upstream server on a connection of its own and return its
/// whole response (headers and body).
fn fetch(upstream: u16, head: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(head);
    let mut out = String::new();
    for line in text.split("\r\n").filter(|l| !l.is_empty()) {
        let lower = line.to_ascii_lowercase();
        if lower.starts_with("connection:") || lower.starts_with("keep-alive:") {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut up = TcpStream::connect(("127.0.0.1", upstream)).ok()?;
    up.write_all(out.as_bytes()).ok()?;
    let mut response = Vec::new();
    up.read_to_end(&mut response).ok()?;
    // The client keeps its connection to the proxy: say keep-alive, not close.
    let split = response.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&response[..split])
        .replace("Connection: close\r\n", "Connection: keep-alive\r\n")
        .replace("connection: close\r\n", "connection: keep-alive\r\n");
    let mut fixed = head.into_bytes();
    fixed.extend_from_slice(&response[split..]);
    Some(fixed)
}
