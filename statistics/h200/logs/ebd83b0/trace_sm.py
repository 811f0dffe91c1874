"""Is the stream kernel's spread between CTAs (the last unit landing 14-20 us into a 20 us
launch on 18944 x 3584) a property of the SM? The trace build (-DIGT_TRACE=1) stamps each
CTA's %smid and its cycles from entry to its last unit landed; over 60 cold launches, each
SM's mean lateness in the first and the second 30 launches are compared. A diagnostic, not a
result file. Usage: python trace_sm.py"""
import numpy as np

from harness.backends.pycuda.context import Device
from harness.backends.pycuda.runner import GpuRunner
from harness.backends.pycuda.buffers import Buffers
from harness.contract.registry import discover
from harness.engine.jobs import one_point
from harness.engine.measure import BenchConfig, job_inputs

SLOTS = 8
reg = discover()
st = reg.get("int_gemm")
with Device(0) as dev:
    run = GpuRunner(dev)
    drv = run.drv
    for (m, n, k) in [(1, 18944, 3584), (16, 18944, 3584), (1, 3584, 18944)]:
        job = one_point(st, "int8", {}, [f"batch={m}", f"out_f={n}", f"in_f={k}"], ["IGT_TRACE=1"])
        inputs = job_inputs(job, BenchConfig())
        launch = run.launcher(st, job.variant)
        mod = run.module(st, job.variant)
        gptr, gsize = mod.get_global("int_gemm_stream_trace")
        bufs = Buffers.allocate(drv, st, inputs, job.point)
        args = bufs.all()
        late, smids, ends = [], [], []
        for it in range(70):
            drv.memset_d8(gptr, 0, gsize)
            run.prelude.flush()
            st.enqueue(launch, args, job.point, job.variant)
            run.stream.synchronize()
            tr = np.empty(gsize // 8, np.uint64)
            drv.memcpy_dtoh(tr, gptr)
            if it < 10:
                continue
            tr = tr.reshape(-1, 2 * SLOTS)
            used = tr[:, 0] > 0
            g, c = tr[used, :SLOTS].astype(np.float64), tr[used, SLOTS:].astype(np.float64)
            smids.append(tr[used, 6].astype(int))
            late.append(c[:, 3] - c[:, 0])          # cycles, entry -> last unit landed
            ends.append((g[:, 5] - g[:, 0].min()) / 1000.0)
        S, L = np.stack(smids), np.stack(late)
        P = S.shape[1]
        stable = bool((S == S[0]).all())
        nsm = S.max() + 1
        def per_sm(rows):
            tot, cnt = np.zeros(nsm), np.zeros(nsm)
            for s, l in zip(S[rows], L[rows]):
                np.add.at(tot, s, l)
                np.add.at(cnt, s, 1)
            with np.errstate(invalid="ignore"):
                return tot / cnt
        half = len(L) // 2
        a, b = per_sm(slice(0, half)), per_sm(slice(half, None))
        ok = ~np.isnan(a) & ~np.isnan(b)
        r = np.corrcoef(a[ok], b[ok])[0, 1]
        allm = per_sm(slice(None))
        within = np.mean([np.std(L[:, i]) for i in range(P)])
        print(f"\n== M={m} N={n} K={k}: {P} CTAs, blockIdx -> smid the same every launch: {stable}")
        print(f"last unit landed, cycles from entry: median {np.median(L):.0f}, min {L.min():.0f}, "
              f"max {L.max():.0f}; per launch max - min (median) {np.median(L.max(1) - L.min(1)):.0f}")
        print(f"per-SM mean lateness: spread (max - min) {np.nanmax(allm) - np.nanmin(allm):.0f}, "
              f"std {np.nanstd(allm):.0f}; within one CTA slot across launches, std {within:.0f}")
        print(f"correlation of per-SM means, first vs second {half} launches: r = {r:.3f}")
        same = float((S == S[0]).mean())
        pa, pb = L[:half].mean(0), L[half:].mean(0)  # per blockIdx (the CTA's run, its data)
        rb = np.corrcoef(pa, pb)[0, 1]
        # Mean lateness by SM computed only over launches where the CTA's SM differs from its
        # SM in launch 0: an SM property survives the remapping, a data property does not.
        moved = S != S[0]
        tot, cnt = np.zeros(nsm), np.zeros(nsm)
        np.add.at(tot, S[moved], L[moved])
        np.add.at(cnt, S[moved], 1)
        tot0, cnt0 = np.zeros(nsm), np.zeros(nsm)
        np.add.at(tot0, S[~moved], L[~moved])
        np.add.at(cnt0, S[~moved], 1)
        both = (cnt > 3) & (cnt0 > 3)
        rm = np.corrcoef((tot / np.maximum(cnt, 1))[both], (tot0 / np.maximum(cnt0, 1))[both])[0, 1] if both.sum() > 5 else float("nan")
        print(f"CTA slots on launch 0's SM: {same:.1%}; per-blockIdx r (halves) = {rb:.3f}; "
              f"per-SM r, launches where the CTA moved vs stayed ({int(both.sum())} SMs) = {rm:.3f}")
        order = np.argsort(allm[ok])
        ids = np.arange(nsm)[ok][order]
        print("slowest 16 SMs (smid: mean cycles):",
              " ".join(f"{i}:{allm[i]:.0f}" for i in ids[::-1][:16]))
        print("fastest 16 SMs:", " ".join(f"{i}:{allm[i]:.0f}" for i in ids[:16]))
        print("per smid, in smid order:", " ".join(f"{allm[i]:.0f}" if not np.isnan(allm[i]) else "-"
                                                   for i in range(nsm)))
        print(f"last store, us from first entry: median over launches of the max {np.median([e.max() for e in ends]):.2f}")
        bufs.free()
