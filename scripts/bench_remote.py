"""Remote reads, b2nd against python-blosc2's RemoteArray, side by side on the same server.

usage: bench_remote.py B2ND_BINARY WORKDIR [LATENCIES_MS]     (default 0,20,100)
       MOTO_SERVER=.../moto_server PYTHON_S3=.../python bench_remote.py ...   (S3 too)

WORKDIR gets three arrays written by python-blosc2 4.14.1 (made once, kept):
  walk_f8.b2nd   1-D f8 random walk, 100M items (800 MB, compresses little: 559 MB)
  walk_i4.b2nd   1-D i4 random walk, 120M items (458 MiB) in 8 chunks (88 MiB compressed)
  grid_f4.b2nd   2-D f4 smooth field, 8000 x 8000, chunks 1000 x 1000, blocks 100 x 200
nginx (Debian's) serves WORKDIR on 127.0.0.1; a proxy of this script's own sits in front of
it, delays every request by the latency, and counts requests and body bytes. Each case runs
in a fresh process (python: `blosc2.open(url)` then the read, cache_policy NONE, so nothing is
kept between runs; b2nd: `b2nd to-npy URL OUT [--slice ...]`, which also writes the .npy to
/dev/shm), best wall time of 3, requests and bytes of the last run. Both are told to use 2
threads. With MOTO_SERVER (moto's S3 server) and PYTHON_S3 (a Python with blosc2 and s3fs:
s3fs pins a botocore that moto's boto3 refuses, so it lives in a venv of its own), the same
cases also run from S3 (moto, the files uploaded once) through the same proxy: python-blosc2
by `blosc2.open("s3://...", storage_options=...)` (fsspec's s3fs), b2nd by `s3://` with
AWS_ENDPOINT_URL. python's start-up (interpreter and `import blosc2`, best of 5) is measured apart and
its wall time is also given net of it. The table is printed as Markdown.
"""

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import blosc2

CASES = [
    ("walk_f8.b2nd", "10-item slice", "50000000:50000010", "[50000000:50000010]"),
    ("grid_f4.b2nd", "100 x 100 box", "3950:4050,2950:3050", "[3950:4050, 2950:3050]"),
    ("walk_i4.b2nd", "whole (458 MiB)", None, "[:]"),
]


def make_files(work):
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261126)
    if not (work / "walk_f8.b2nd").exists():
        x = np.cumsum(rng.standard_normal(100_000_000))
        blosc2.asarray(x, urlpath=str(work / "walk_f8.b2nd"), mode="w")
    if not (work / "walk_i4.b2nd").exists():
        x = np.cumsum(rng.integers(-3, 4, 120_000_000)).astype("i4")
        blosc2.asarray(x, urlpath=str(work / "walk_i4.b2nd"), mode="w", chunks=(15_000_000,))
    if not (work / "grid_f4.b2nd").exists():
        i = np.linspace(0, 20, 8000, dtype="f4")
        x = (np.sin(i)[:, None] * np.cos(i)[None, :]).astype("f4")
        blosc2.asarray(x, urlpath=str(work / "grid_f4.b2nd"), mode="w", chunks=(1000, 1000),
                       blocks=(100, 200))


class Proxy:
    """HTTP proxy to 127.0.0.1:upstream delaying each request by `delay` seconds."""

    def __init__(self, upstream):
        self.upstream = upstream
        self.delay = 0.0
        self.requests = 0
        self.bytes = 0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)

        async def start():
            self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()

        self.loop.run_until_complete(start())
        self.loop.run_forever()

    async def _client(self, reader, writer):
        up_r = up_w = None
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                if self.delay:
                    await asyncio.sleep(self.delay)
                if up_w is None:
                    up_r, up_w = await asyncio.open_connection("127.0.0.1", self.upstream)
                up_w.write(head)
                await up_w.drain()
                rhead = await up_r.readuntil(b"\r\n\r\n")
                length = 0
                for line in rhead.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                if head.startswith(b"HEAD "):
                    length = 0
                writer.write(rhead)
                left = length
                while left:
                    block = await up_r.read(min(left, 1 << 20))
                    if not block:
                        raise ConnectionError("upstream closed")
                    writer.write(block)
                    left -= len(block)
                    await writer.drain()
                self.bytes += length
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            if up_w is not None:
                up_w.close()

    def reset(self):
        self.requests = 0
        self.bytes = 0


def start_nginx(root):
    conf_dir = Path(tempfile.mkdtemp())
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    (conf_dir / "nginx.conf").write_text(
        f"daemon off; pid {conf_dir}/nginx.pid; error_log {conf_dir}/error.log;\n"
        f"events {{}}\nhttp {{ access_log off; server {{ listen 127.0.0.1:{port}; "
        f"root {root}; }} }}\n")
    proc = subprocess.Popen(["nginx", "-c", str(conf_dir / "nginx.conf")])
    time.sleep(0.5)
    return proc, port


PY_READ = """
import json, sys, blosc2
blosc2.set_nthreads(2)
opts = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
a = blosc2.open(sys.argv[1], storage_options=opts) if opts else blosc2.open(sys.argv[1])
x = eval("a" + sys.argv[2])
print(x.nbytes)
"""

S3_ENV = {"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
          "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}


def start_moto(work):
    """moto's S3 server on a free port with the bench files in bucket `bench`."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([os.environ["MOTO_SERVER"], "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    import boto3  # moto's own dependency: multipart uploads (one PUT of 600 MB stalls moto)
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="bench",
                      aws_secret_access_key="bench", region_name="us-east-1")
    s3.create_bucket(Bucket="bench")
    for name, *_ in CASES:
        s3.upload_file(str(work / name), "bench", name)
    return proc, port


def run(cmd, env=None):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True,
                       env=None if env is None else {**os.environ, **env})
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return dt


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    latencies = [int(x) for x in (sys.argv[3] if len(sys.argv) > 3 else "0,20,100").split(",")]
    make_files(work)
    nginx, port = start_nginx(work.resolve())
    proxy = Proxy(port)
    backends = [("HTTP", proxy)]
    moto = None
    if os.environ.get("MOTO_SERVER") and os.environ.get("PYTHON_S3"):
        moto, moto_port = start_moto(work)
        backends.append(("S3", Proxy(moto_port)))
    out = Path("/dev/shm/bench_remote.npy")
    rows = []
    # What every python run pays before reading: the interpreter and `import blosc2`.
    startup = min(run([sys.executable, "-c", "import blosc2"]) for _ in range(5))
    print(f"python start + import blosc2: {startup:.3f} s (best of 5)", flush=True)
    try:
        for backend, px in backends:
            for ms in latencies:
                px.delay = ms / 1000
                for name, what, spec, pyidx in CASES:
                    res = {}
                    for who in ("python", "b2nd"):
                        env = None
                        if backend == "HTTP":
                            url = f"http://127.0.0.1:{px.port}/{name}"
                            py = [sys.executable, "-c", PY_READ, url, pyidx]
                        else:
                            url = f"s3://bench/{name}"
                            import json
                            opts = {"endpoint_url": f"http://127.0.0.1:{px.port}",
                                    "key": "bench", "secret": "bench",
                                    "client_kwargs": {"region_name": "us-east-1"}}
                            py = [os.environ["PYTHON_S3"], "-c", PY_READ, url, pyidx,
                                  json.dumps(opts)]
                            env = {**S3_ENV, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{px.port}"}
                        if who == "python":
                            cmd = py
                        else:
                            cmd = [binary, "to-npy", url, str(out), "--force", "--threads", "2"]
                            if spec:
                                cmd += ["--slice", spec]
                        best = None
                        for _ in range(3):
                            px.reset()
                            dt = run(cmd, env)
                            best = dt if best is None else min(best, dt)
                        res[who] = (best, px.requests, px.bytes)
                    rows.append((backend, ms, what, res))
                    p, b = res["python"], res["b2nd"]
                    print(f"{backend} {ms} ms {what}: python {p[0]:.3f} s {p[1]} req {p[2]} B; "
                          f"b2nd {b[0]:.3f} s {b[1]} req {b[2]} B", flush=True)
        # The link itself: one plain GET of the whole-read file (curl, to /dev/null) through
        # the same proxy, per latency.
        links = []
        if shutil.which("curl"):
            for ms in latencies:
                proxy.delay = ms / 1000
                url = f"http://127.0.0.1:{proxy.port}/walk_i4.b2nd"
                t = min(run(["curl", "-sf", "-o", "/dev/null", url]) for _ in range(3))
                links.append((ms, t))
                print(f"link {ms} ms: one GET of walk_i4.b2nd {t:.3f} s", flush=True)
    finally:
        nginx.terminate()
        if moto is not None:
            moto.terminate()
        out.unlink(missing_ok=True)
    print()
    for ms, t in links:
        size = (work / "walk_i4.b2nd").stat().st_size
        print(f"link at {ms} ms: one GET of walk_i4.b2nd ({size:,} bytes) by curl: {t:.3f} s")
    print(f"python's start-up (interpreter + import blosc2, best of 5): {startup:.3f} s; "
          f"'python net' is its wall time less that")
    print()
    print("| from | latency | read | python-blosc2 s | python net s | requests | bytes | "
          "b2nd s | requests | bytes | b2nd speed (net) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for backend, ms, what, res in rows:
        p, b = res["python"], res["b2nd"]
        net = max(p[0] - startup, 1e-6)
        print(f"| {backend} | {ms} ms | {what} | {p[0]:.3f} | {net:.3f} | {p[1]} | {p[2]:,} | "
              f"{b[0]:.3f} | {b[1]} | {b[2]:,} | {net / b[0]:.2f}x |")


if __name__ == "__main__":
    main()
