#!/usr/bin/env python3
"""Peer benchmark for `cargo xtask bench`: scipy.ndimage.distance_transform_edt.

usage: scipy_edt.py DIR N[,N...] [REPS]

For each N reads DIR/mask_N.u8 (N*N bytes, 1 = land) written by the `bench_table` example,
times `distance_transform_edt(mask)` with time.perf_counter (median of REPS runs after one
warm-up) and checks that the result squared equals our exact squared EDT in DIR/edt_N.u32.
Prints one tab-separated line per size:
    scipy_edt  N  median_ms  min_ms  reps  match|mismatch:<count>
"""
import sys
import time

import numpy as np
from scipy import ndimage


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2].split(",")]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for n in sizes:
        mask = np.fromfile(f"{d}/mask_{n}.u8", dtype=np.uint8)
        if mask.size != n * n:
            print(f"mask_{n}.u8 has {mask.size} bytes, expected {n * n}", file=sys.stderr)
            return 1
        mask = mask.reshape(n, n)
        ours = np.fromfile(f"{d}/edt_{n}.u32", dtype="<u4").reshape(n, n)
        result = ndimage.distance_transform_edt(mask)  # warm-up, and the cross-check
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            ndimage.distance_transform_edt(mask)
            times.append((time.perf_counter() - t) * 1e3)
        sq = np.rint(result * result).astype(np.uint64)
        bad = int(np.count_nonzero(sq != ours.astype(np.uint64)))
        status = "match" if bad == 0 else f"mismatch:{bad}"
        print(f"scipy_edt\t{n}\t{float(np.median(times)):.4f}\t{min(times):.4f}\t{reps}\t{status}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
