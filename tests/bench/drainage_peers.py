#!/usr/bin/env python3
"""Peer benchmarks for `cargo xtask bench`: richdem and fastscapelib drainage, FastNoiseSIMD fBm.

usage: drainage_peers.py DIR N[,N...] [REPS]

For each N reads DIR/height_N.f32 (N*N little-endian float32, row-major: the island heightfield
in metres, sea level 0.0) and DIR/height_N.json ({"n": N, "cell_size": metres}), and times with
time.perf_counter (median of REPS runs after one warm-up), each single-threaded:

  richdem_fill              richdem `FillDepressions(dem, epsilon=True, in_place=False)`
                            (Priority-Flood+Epsilon, Barnes 2014; the time includes richdem's
                            own copy of the DEM). The sea (h <= 0) is NoData (-9999, below every
                            land height): richdem floods NoData cells first, so the sea reached
                            from the map border is an outlet like the border itself. A NoData
                            pocket inside the land (h <= 0, not connected to the border) is NOT
                            an outlet in richdem: its depression is filled.
  richdem_d8_accumulation   richdem `FlowAccumulation(filled, method='D8')` on that filled DEM
                            (O'Callaghan & Mark D8: the LOWEST lower neighbour, not the steepest
                            drop/distance; NoData neighbours are never receivers, so coastal
                            samples with no lower land neighbour end the flow there).
  fastscape_update_routes   fastscapelib `FlowGraph(grid, [SingleFlowRouter(), MSTSinkResolver()])
                            .update_routes(h)`: steepest-descent receivers, closed depressions
                            resolved by a minimum spanning tree of basins (Kruskal, carve).
  fastscape_update_routes_pflood
                            the same graph with `[PFloodSinkResolver(), SingleFlowRouter()]`:
                            Priority-Flood+Epsilon fill, then steepest descent (closest in kind
                            to our fill + D8 receivers).
  fastscape_accumulate      `FlowGraph.accumulate(1.0)` (drainage area, m^2) on the MST graph.
  fastscape_spl_step        one `SPLEroder(graph, k_coef=2e-4, area_exp=0.4, slope_exp=1)
                            .erode(h, area, dt=1e3)` step (implicit; with slope_exp = 1 there are
                            no Newton iterations, so the time does not depend on k_coef or dt).
  fastnoisesimd_fbm8        pyfastnoisesimd (FastNoiseSIMD): Perlin fBm, 8 octaves, lacunarity 2,
                            gain 0.5, frequency 0.005 per sample, N x M samples (an N x M x 1 slab
                            of 3-D noise: FastNoiseSIMD has no 2-D noise; M = N rounded up to the
                            SIMD width, which pyfastnoisesimd requires), numWorkers=1.
                            (pyfastnoisesimd 0.4.2 calls np.product, removed in numpy 2: the
                            script aliases it to np.prod.)
  fastnoisesimd_fbm8_threads  the same with numWorkers = number of CPUs.

fastscapelib grid: RasterGrid N x N with spacing cell_size, border FIXED_VALUE. The open sea (sea
samples, h <= 0, with no land among their 8 neighbours) is masked out of the graph
(`FlowGraph.mask`); the base levels (outlets, `FlowGraph.base_levels`) are the coastal sea samples
(sea with a land neighbour) and the land samples on the map border. So land drains into the sea or
off the map as in our kernels, without one basin per sea sample: making every sea sample a base
level instead gives the same land routes and areas but costs about twice as much in the sink
resolvers (1025^2 trial: MST 441 vs 280 ms, PFlood 524 vs 252 ms). Heights in float64
(fastscapelib's type; the conversion is not timed). `update_routes` includes fastscapelib's
traversal order (the donors-to-receivers stack), as our flow order.

Prints one tab-separated line per peer and size:
    peer  NAME  N  median_ms  min_ms  reps  note
where note holds a sanity check of the timed result (a peer number is only worth comparing when
the peer did the same job), e.g. `ok` plus counts, or `CHECK FAILED: ...`. A library that cannot
be imported, or a call that raises, gives
    peer  NAME  N  nan  nan  0  missing: <reason>   (or error: <reason>)
instead of failing the whole script. Anything the libraries print goes to stderr.
"""
import json
import os
import sys
import time

# Single-threaded peers: keep any OpenMP / BLAS pool at one thread (set before the imports).
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

NODATA = -9999.0
NAMES_RICHDEM = ("richdem_fill", "richdem_d8_accumulation")
NAMES_FASTSCAPE = (
    "fastscape_update_routes",
    "fastscape_update_routes_pflood",
    "fastscape_accumulate",
    "fastscape_spl_step",
)
NAMES_NOISE = ("fastnoisesimd_fbm8", "fastnoisesimd_fbm8_threads")

# The result lines go to the real stdout; the libraries' own prints (richdem's warnings, progress
# bars written by C++ to fd 1) go to stderr.
_OUT = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)
sys.stdout = sys.stderr


def emit(name, n, med, mn, reps, note):
    note = " ".join(str(note).split())  # no tabs or newlines in the note
    if med != med:  # nan
        _OUT.write(f"peer\t{name}\t{n}\tnan\tnan\t{reps}\t{note}\n")
    else:
        _OUT.write(f"peer\t{name}\t{n}\t{med:.4f}\t{mn:.4f}\t{reps}\t{note}\n")
    _OUT.flush()


def missing(names, n, reason):
    for name in names:
        emit(name, n, float("nan"), float("nan"), 0, reason)


def timed(fn, reps):
    """(result of the warm-up call, median ms, min ms) of `fn()`."""
    result = fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return result, float(np.median(times)), min(times)


def neighbour_min(a, fill):
    """Minimum over the 8 neighbours of each interior sample of `a` (shape (n-2, n-2))."""
    n0, n1 = a.shape
    m = None
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dy == 0 and dx == 0:
                continue
            s = a[1 + dy:n0 - 1 + dy, 1 + dx:n1 - 1 + dx]
            m = s.copy() if m is None else np.minimum(m, s, out=m)
    return m


def border_mask(n):
    b = np.zeros((n, n), dtype=bool)
    b[0, :] = b[-1, :] = b[:, 0] = b[:, -1] = True
    return b


def run_richdem(h, n, cs, reps):
    try:
        import richdem as rd
    except Exception as e:  # noqa: BLE001
        missing(NAMES_RICHDEM, n, f"missing: import richdem failed ({e})")
        return
    land = h > 0
    dem = rd.rdarray(
        np.where(land, h, np.float32(NODATA)).astype(np.float32),
        no_data=NODATA,
        geotransform=[0.0, cs, 0.0, 0.0, 0.0, -cs],
    )
    try:
        filled, med, mn = timed(lambda: rd.FillDepressions(dem, epsilon=True, in_place=False), reps)
    except Exception as e:  # noqa: BLE001
        missing(NAMES_RICHDEM, n, f"error: FillDepressions: {e}")
        return
    f = np.asarray(filled, dtype=np.float32)
    raised = int(np.count_nonzero(f[land] > h[land]))
    lowered = int(np.count_nonzero(f[land] < h[land]))
    # No interior pit: every interior land sample has a strictly lower neighbour (the sea counts).
    fd = np.where(land, f, -np.inf)
    pits = int(np.count_nonzero(land[1:-1, 1:-1] & (neighbour_min(fd, -np.inf) >= f[1:-1, 1:-1])))
    seaok = bool(np.all(f[~land] == np.float32(NODATA)))
    ok = pits == 0 and lowered == 0 and seaok
    note = (
        f"{'ok' if ok else 'CHECK FAILED'}: pits={pits} raised={raised} lowered={lowered} "
        f"sea_untouched={seaok}; sea=NoData, in_place=False"
    )
    emit("richdem_fill", n, med, mn, reps, note)

    try:
        acc, med, mn = timed(lambda: rd.FlowAccumulation(filled, method="D8"), reps)
    except Exception as e:  # noqa: BLE001
        missing(NAMES_RICHDEM[1:], n, f"error: FlowAccumulation: {e}")
        return
    a = np.asarray(acc, dtype=np.float64)
    # Every land sample's unit ends in exactly one terminal sample: one on the map border or one
    # with no strictly lower land neighbour (richdem's D8 never sends flow into NoData).
    fl = np.where(land, f, np.inf)
    terminal = border_mask(n) & land
    terminal[1:-1, 1:-1] |= land[1:-1, 1:-1] & (neighbour_min(fl, np.inf) >= f[1:-1, 1:-1])
    nland = int(np.count_nonzero(land))
    total = float(a[terminal].sum())
    ok = total == nland and float(a[land].min()) >= 1.0
    note = (
        f"{'ok' if ok else 'CHECK FAILED'}: terminal_total={total:.0f} land={nland} "
        f"max={float(a[land].max()):.0f} outlets={int(np.count_nonzero(terminal))}; lowest-neighbour D8"
    )
    emit("richdem_d8_accumulation", n, med, mn, reps, note)


def run_fastscape(h, n, cs, reps):
    try:
        import fastscapelib as fs
    except Exception as e:  # noqa: BLE001
        missing(NAMES_FASTSCAPE, n, f"missing: import fastscapelib failed ({e})")
        return
    land = h > 0
    elev = h.astype(np.float64)
    lp = np.pad(land, 1)
    near_land = np.zeros((n, n), dtype=bool)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            near_land |= lp[1 + dy:n + 1 + dy, 1 + dx:n + 1 + dx]
    open_sea = ~land & ~near_land
    base = np.flatnonzero((~land & near_land) | (land & border_mask(n)))
    is_base = np.zeros(n * n, dtype=bool)
    is_base[base] = True
    land_flat = land.ravel()
    try:
        grid = fs.RasterGrid([n, n], [cs, cs], fs.RasterBoundaryStatus(fs.NodeStatus.FIXED_VALUE))

        def new_graph(ops):
            g = fs.FlowGraph(grid, ops)
            g.mask = open_sea
            g.base_levels = base
            return g

        graph = new_graph([fs.SingleFlowRouter(), fs.MSTSinkResolver()])
        routed, med, mn = timed(lambda: graph.update_routes(elev), reps)
    except Exception as e:  # noqa: BLE001
        missing(NAMES_FASTSCAPE, n, f"error: MST update_routes: {e}")
        return
    rcv = np.asarray(graph.impl().receivers)[:, 0]
    stuck = int(np.count_nonzero((rcv == np.arange(n * n)) & land_flat & ~is_base))
    changed = int(np.count_nonzero(np.asarray(routed) != elev))
    note = (
        f"{'ok' if stuck == 0 else 'CHECK FAILED'}: land_without_receiver={stuck} "
        f"elev_changed={changed} base_levels={base.size} masked={int(open_sea.sum())}; MST kruskal+carve"
    )
    emit("fastscape_update_routes", n, med, mn, reps, note)

    try:
        g2 = new_graph([fs.PFloodSinkResolver(), fs.SingleFlowRouter()])
        filled2, med, mn = timed(lambda: g2.update_routes(elev), reps)
        f2 = np.asarray(filled2)
        rcv2 = np.asarray(g2.impl().receivers)[:, 0]
        stuck2 = int(np.count_nonzero((rcv2 == np.arange(n * n)) & land_flat & ~is_base))
        raised2 = int(np.count_nonzero(f2[land] > elev[land]))
        ok = stuck2 == 0 and not np.any(f2[land] < elev[land])
        note = (
            f"{'ok' if ok else 'CHECK FAILED'}: land_without_receiver={stuck2} raised={raised2}; "
            "priority-flood+epsilon then steepest descent"
        )
        emit("fastscape_update_routes_pflood", n, med, mn, reps, note)
        del g2, filled2, f2, rcv2
    except Exception as e:  # noqa: BLE001
        missing(NAMES_FASTSCAPE[1:2], n, f"error: PFlood update_routes: {e}")

    try:
        area, med, mn = timed(lambda: graph.accumulate(1.0), reps)
    except Exception as e:  # noqa: BLE001
        missing(NAMES_FASTSCAPE[2:], n, f"error: accumulate: {e}")
        return
    area = np.asarray(area)
    # Every unmasked sample's area ends in one base level.
    total = float(area.ravel()[base].sum())
    want = float(np.asarray(grid.nodes_areas())[~open_sea].sum())
    ok = abs(total - want) <= 1e-9 * want
    note = (
        f"{'ok' if ok else 'CHECK FAILED'}: area_at_outlets={total:.6g} graph_area={want:.6g} "
        f"max_area={float(area.max()):.6g}m^2={float(area.max()) / (cs * cs):.0f}samples"
    )
    emit("fastscape_accumulate", n, med, mn, reps, note)

    try:
        spl = fs.SPLEroder(graph, k_coef=2e-4, area_exp=0.4, slope_exp=1.0)
        er, med, mn = timed(lambda: spl.erode(elev, area, 1e3), reps)
    except Exception as e:  # noqa: BLE001
        missing(NAMES_FASTSCAPE[3:], n, f"error: SPLEroder: {e}")
        return
    er = np.asarray(er)
    # Erosion is the old minus the new elevation in doubles: where a sample barely moves, the
    # difference may come out a rounding error below zero (-1.8e-15 m at 1025²), which is not
    # deposition.
    roundoff = 1e-12 * max(1.0, float(np.abs(elev).max()))
    ok = bool(np.all(np.isfinite(er))) and float(er.min()) >= -roundoff and float(np.abs(er.ravel()[base]).max()) == 0.0
    note = (
        f"{'ok' if ok else 'CHECK FAILED'}: eroded={int(np.count_nonzero(er > 0))} max={float(er.max()):.4g}m "
        f"min={float(er.min()):.3g}m; k=2e-4 m=0.4 n=1 dt=1e3"
    )
    emit("fastscape_spl_step", n, med, mn, reps, note)


def run_noise(n, reps):
    if not hasattr(np, "product"):
        np.product = np.prod  # pyfastnoisesimd 0.4.2 still calls np.product, gone in numpy 2
    try:
        import pyfastnoisesimd as fns
    except Exception as e:  # noqa: BLE001
        missing(NAMES_NOISE, n, f"missing: import pyfastnoisesimd failed ({e})")
        return
    try:
        simd = str(fns.extension.SIMD_LEVEL)
    except Exception:  # noqa: BLE001
        simd = "?"
    cpus = max(1, int(fns.num_virtual_cores()))
    # pyfastnoisesimd wants the array size a multiple of the SIMD width (odd N*N is not): pad each
    # row to M samples and keep the first N (the time covers the N*M samples, noted).
    try:
        lanes = max(1, int(fns.extension.SIMD_ALIGNMENT) // 4)
    except Exception:  # noqa: BLE001
        lanes = 16
    m = -(-n // lanes) * lanes
    for name, workers in (("fastnoisesimd_fbm8", 1), ("fastnoisesimd_fbm8_threads", cpus)):
        try:
            noise = fns.Noise(seed=1337, numWorkers=workers)
            noise.noiseType = fns.NoiseType.Perlin
            noise.frequency = 0.005
            noise.fractal.fractalType = fns.FractalType.FBM
            noise.fractal.octaves = 8
            noise.fractal.lacunarity = 2.0
            noise.fractal.gain = 0.5
            noise.perturb.perturbType = fns.PerturbType.NoPerturb
            # Rows along axis 0: pyfastnoisesimd splits the work between workers along axis 0.
            out, med, mn = timed(lambda: noise.genAsGrid(shape=[n, m, 1], start=[0, 0, 0]), reps)
        except Exception as e:  # noqa: BLE001
            missing((name,), n, f"error: {e}")
            continue
        out = np.asarray(out).reshape(n, m)[:, :n]
        ok = out.size == n * n and bool(np.all(np.isfinite(out))) and float(out.std()) > 0.01
        note = (
            f"{'ok' if ok else 'CHECK FAILED'}: std={float(out.std()):.3f} range=[{float(out.min()):.3f},"
            f"{float(out.max()):.3f}]; simd={simd} workers={workers} freq=0.005 3-D Perlin slab {n}x{m}"
        )
        emit(name, n, med, mn, reps, note)


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    sizes = [int(s) for s in sys.argv[2].split(",")]
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    for n in sizes:
        h = np.fromfile(f"{d}/height_{n}.f32", dtype="<f4")
        if h.size != n * n:
            print(f"height_{n}.f32 has {h.size} samples, expected {n * n}", file=sys.stderr)
            return 1
        h = h.reshape(n, n)
        with open(f"{d}/height_{n}.json") as f:
            meta = json.load(f)
        if int(meta.get("n", n)) != n:
            print(f"height_{n}.json says n={meta.get('n')}", file=sys.stderr)
            return 1
        cs = float(meta["cell_size"])
        run_richdem(h, n, cs, reps)
        run_fastscape(h, n, cs, reps)
        run_noise(n, reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
