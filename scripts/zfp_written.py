"""Live check of b2nd's ZFP writer against python-blosc2 4.14.1, on random arrays.

usage: zfp_written.py B2ND_BINARY WORKDIR [CASES]      (CASES defaults to 60)
       SEED=N zfp_written.py ...                        replay a run (the seed is printed)

Each case draws `<f4` or `<f8` data (smooth, scaled by 1e-5 to 1e5, some zero rows), 1 to 4
dimensions, blocks of 4 to 8 per side (partial zfp blocks included), chunks and shapes with
ragged edges, and one of ZFP_ACC (tolerance 10^-6 .. 10^2), ZFP_PREC (0 .. 59) or ZFP_RATE
(1 .. 100 %). `b2nd from-npy --codec zfp_*:META` writes it; python-blosc2 writes the same data
with the same parameters (no filters, no split, one thread) in a child process (it now and
then aborts writing ZFP: such cases are skipped and counted). A case passes when every chunk
b2nd wrote is byte-identical to python-blosc2's and python-blosc2 reads b2nd's file to the
same values as its own; where python-blosc2 cannot read b2nd's file, whose chunks are its own,
and fails the same way on the file it writes itself, the case is skipped and counted. Exit
status 1 on any failure.
"""

import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import blosc2
import numpy as np

C = blosc2.Codec
KINDS = {"acc": C.ZFP_ACC, "prec": C.ZFP_PREC, "rate": C.ZFP_RATE}


def draw(rng):
    nd = int(rng.integers(1, 5))
    dt = str(rng.choice(["<f4", "<f8"]))
    blocks = tuple(int(rng.integers(4, 9)) for _ in range(nd))
    chunks = tuple(b * int(rng.integers(1, 3)) + int(rng.integers(0, 3)) for b in blocks)
    shape = tuple(c * int(rng.integers(1, 3)) - int(rng.integers(0, 2)) for c in chunks)
    kind = str(rng.choice(list(KINDS)))
    meta = {"acc": int(rng.integers(-6, 3)), "prec": int(rng.integers(0, 60)),
            "rate": int(rng.integers(1, 101))}[kind]
    n = int(np.prod(shape))
    x = (np.cumsum(rng.standard_normal(n)) * 10 ** rng.uniform(-5, 5)).reshape(shape)
    if rng.random() < 0.2:
        x[..., 0] = 0
    return x.astype(dt), chunks, blocks, kind, meta


def python_chunks(x, chunks, blocks, kind, meta, path):
    """python-blosc2's chunks and read for the same parameters, and the error python-blosc2
    raises reading the same array from its own file at `path` (None: it reads it) (run in
    a child)."""
    cp = blosc2.CParams(codec=KINDS[kind], codec_meta=meta & 0xFF, filters=[0] * 6,
                        filters_meta=[0] * 6, splitmode=blosc2.SplitMode.NEVER_SPLIT,
                        nthreads=1)
    a = blosc2.asarray(x, chunks=chunks, blocks=blocks, cparams=cp)
    blosc2.asarray(x, chunks=chunks, blocks=blocks, cparams=cp, urlpath=str(path), mode="w")
    try:
        blosc2.open(str(path), mode="r")[()]
        own_error = None
    except RuntimeError as e:
        own_error = str(e)
    return [bytes(a.schunk.get_chunk(i)) for i in range(a.schunk.nchunks)], a[()], own_error


def read_error(path):
    """python-blosc2's values of the array at `path`, or the error it raises reading it."""
    try:
        return blosc2.open(str(path), mode="r")[()], None
    except RuntimeError as e:
        return None, str(e)


def main():
    binary, work = sys.argv[1], Path(sys.argv[2])
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    seed = int(os.environ.get("SEED", np.random.SeedSequence().entropy % 2**31))
    print(f"zfp_written.py SEED={seed}", flush=True)
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    passed = failed = crashed = refused = unreadable = 0
    # One spawned worker, replaced when python-blosc2 aborts in it (fork would deadlock on
    # python-blosc2's threads).
    ex = None
    for case in range(cases):
        x, chunks, blocks, kind, meta = draw(rng)
        src, out = work / "in.npy", work / "out.b2nd"
        np.save(src, x)
        r = subprocess.run([binary, "from-npy", str(src), str(out), "--force", "--codec",
                            f"zfp_{kind}:{meta}", "--chunks", ",".join(map(str, chunks)),
                            "--blocks", ",".join(map(str, blocks))],
                           capture_output=True, text=True, timeout=120)
        what = f"case {case}: {x.dtype.str} {x.shape} chunks {chunks} blocks {blocks} zfp_{kind}:{meta}"
        if r.returncode != 0:
            print(f"FAIL {what}: b2nd refused: {r.stderr.strip()}")
            failed += 1
            continue
        if ex is None:
            ex = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        own = work / "python.b2nd"
        try:
            want, want_read, own_error = ex.submit(python_chunks, x, chunks, blocks, kind, meta,
                                                   own).result(timeout=300)
        except BrokenProcessPool:
            ex = None
            crashed += 1
            continue
        except RuntimeError as e:  # python-blosc2 refused the parameters
            print(f"python-blosc2 refused {what}: {e}")
            refused += 1
            continue
        a = blosc2.open(str(out), mode="r")
        got = [bytes(a.schunk.get_chunk(i)) for i in range(a.schunk.nchunks)]
        read, error = read_error(out)
        if error is not None and got == want and own_error == error:
            # python-blosc2 cannot read b2nd's file, whose chunks are its own, and fails the
            # same way on the file it writes itself: its defect, counted.
            print(f"python-blosc2 cannot read its own file of {what}: {error}")
            unreadable += 1
            continue
        if (got != want or read is None or read.tobytes() != want_read.tobytes()) and ex is not None:
            # python-blosc2 corrupts its heap now and then writing ZFP (the worker may have
            # been hit without dying): ask a fresh worker once more before calling it a failure.
            ex.shutdown()
            ex = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            try:
                want, want_read, own_error = ex.submit(python_chunks, x, chunks, blocks, kind,
                                                       meta, own).result(timeout=300)
            except BrokenProcessPool:
                ex = None
                crashed += 1
                continue
        problems = []
        if len(got) != len(want):
            problems.append(f"{len(got)} chunks, python-blosc2 writes {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                d = next(j for j in range(min(len(g), len(w)) + 1) if j >= min(len(g), len(w))
                         or g[j] != w[j])
                problems.append(f"chunk {i}: {len(g)} vs {len(w)} bytes, first difference at "
                                f"byte {d}")
                break
        if error is not None:
            problems.append(f"python-blosc2 cannot read b2nd's file ({error}; its own: "
                            f"{own_error or 'read'})")
        elif read.tobytes() != want_read.tobytes():
            problems.append("python-blosc2 reads other values from b2nd's file")
        if problems:
            print(f"FAIL {what}: " + "; ".join(problems))
            failed += 1
        else:
            passed += 1
    if ex is not None:
        ex.shutdown()
    print(f"python-blosc2 crashed writing {crashed}, refused {refused} and could not read its "
          f"own file of {unreadable} of {cases} cases (skipped)")
    print(f"zfp written: {passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
