"""The A/B's rule for spike_encode (unidirectional) and spike_decode, set before the run
(kernels/NOTES.md): a stage's default moves to the faster of WARP_STEPS 1 and 2 (at batch
16384) only if it is at least 1 % below WARP_STEPS 0 at batch 16384 and no more than 0.5 %
above it at batch 1024. One verdict line a stage: "adopt STAGE WARP_STEPS=n" or "STAGE: not
adopted". Exit 0."""
import csv
import re
import sys

for path, variant in zip(sys.argv[1::2], sys.argv[2::2]):
    rows = [r for r in csv.DictReader(open(path)) if r["backend"] == "pycuda"
            and r["status"] == "ok" and r["variant"].startswith(variant + "[")]
    stage = rows[0]["stage"] if rows else path
    t: dict[str, dict[str, float]] = {}
    for r in rows:
        m = re.search(r"WARP_STEPS=(\d+)", r["variant"])
        if m:
            t.setdefault(m.group(1), {})[r["batch"]] = float(r["median_us"])
    for ws, got in sorted(t.items()):
        print(f"{stage} {variant} WARP_STEPS {ws}: " + ", ".join(
            f"batch {b} {got.get(b, float('nan')):.2f}" for b in ("16384", "1024")))
    base = t.get("0", {})
    cands = [ws for ws in ("1", "2") if len(t.get(ws, {})) == 2]
    if len(base) != 2 or not cands:
        print(f"{stage}: rows missing; not adopted")
        continue
    best = min(cands, key=lambda ws: t[ws]["16384"])
    big, small = t[best]["16384"] / base["16384"], t[best]["1024"] / base["1024"]
    print(f"{stage}: WARP_STEPS {best} {(big - 1) * 100:+.2f} % at 16384 (bound -1.0 %), "
          f"{(small - 1) * 100:+.2f} % at 1024 (bound +0.5 %)")
    print(f"adopt {stage} WARP_STEPS={best}" if big <= 0.99 and small <= 1.005
          else f"{stage}: not adopted")
