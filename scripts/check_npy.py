"""Live interop: `b2nd to-npy` on every readable fixture must give, through numpy.load, the
same dtype, shape and bytes that python-blosc2 returns for the file.

usage: check_npy.py PATH/TO/b2nd FIXTURE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import blosc2
except ImportError:  # pragma: no cover
    blosc2 = None


def main():
    exe, d = sys.argv[1], sys.argv[2]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for man in ("manifest.json", "manifest-caterva.json"):
            p = os.path.join(d, man)
            if not os.path.exists(p):
                continue
            for f in json.load(open(p))["fixtures"]:
                if not f["ok"] or not f.get("supported", True):
                    continue
                out = os.path.join(tmp, f["name"] + ".npy")
                cmd = [exe, "to-npy", "--force", os.path.join(d, f["path"]), out]
                if f.get("offset"):
                    cmd += ["--offset", str(f["offset"])]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"FAIL {f['name']}: exit {r.returncode}: {r.stderr.strip()}")
                    failed += 1
                    continue
                got = np.load(out)
                expected = open(os.path.join(d, f["expected"]), "rb").read()
                problems = []
                if man == "manifest.json" and blosc2 is not None:
                    ref = None
                    if not f.get("offset"):
                        try:
                            ref = blosc2.open(os.path.join(d, f["path"]))[...]
                        except Exception:  # noqa: BLE001 - python cannot read some legacy files
                            ref = None
                    if ref is not None:
                        if got.dtype != ref.dtype:
                            problems.append(f"dtype {got.dtype} != {ref.dtype}")
                        if got.shape != ref.shape:
                            problems.append(f"shape {got.shape} != {ref.shape}")
                if tuple(got.shape) != tuple(f["shape"]) and got.dtype.subdtype is None:
                    if not (got.ndim > len(f["shape"])):
                        problems.append(f"shape {got.shape} != manifest {f['shape']}")
                if np.ascontiguousarray(got).tobytes() != expected:
                    problems.append("bytes differ")
                # And back: from-npy writes an array python-blosc2 opens with the same data.
                if blosc2 is not None and got.dtype.kind != "O":
                    back = os.path.join(tmp, f["name"] + ".b2nd")
                    r = subprocess.run([exe, "from-npy", out, back, "--force"], capture_output=True, text=True)
                    if r.returncode != 0:
                        problems.append(f"from-npy failed: {r.stderr.strip()}")
                    else:
                        try:
                            again = blosc2.open(back)[...]
                        except Exception as e:  # noqa: BLE001 - report per fixture
                            problems.append(f"python cannot open the from-npy output: {e}")
                            again = got
                        if again.dtype != got.dtype or again.shape != got.shape:
                            problems.append(f"from-npy: {again.dtype}{again.shape} != {got.dtype}{got.shape}")
                        elif np.ascontiguousarray(again).tobytes() != np.ascontiguousarray(got).tobytes():
                            problems.append("from-npy: python reads different bytes")
                if problems:
                    print(f"FAIL {f['name']}: " + "; ".join(problems))
                    failed += 1
                else:
                    passed += 1
    print(f"interop: {passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
