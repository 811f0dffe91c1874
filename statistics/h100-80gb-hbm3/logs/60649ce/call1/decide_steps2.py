"""The A/B's rule for compute_scales and weight_quantize, set before the run
(kernels/NOTES.md): a stage's default moves to its fastest WARP_STEPS 1 build (the least sum
of medians) only if that is at least 2 % below main's (WARP_STEPS 0, PREFETCH 1, BPS 8) at
18944 x 3584 (out x in) and no more than 0.5 % above it at 3584 x 3584. Prints each stage's
verdict; exit 0 always (each verdict is its own line: "adopt STAGE ..." or "STAGE: not adopted")."""
import csv
import re
import sys

SHAPES = (("18944", "3584", 0.98), ("3584", "3584", 1.005))
for path in sys.argv[1:]:
    rows = [r for r in csv.DictReader(open(path)) if r["backend"] == "pycuda" and r["status"] == "ok"]
    stage = rows[0]["stage"] if rows else path
    t: dict[tuple[str, ...], dict[tuple[str, str], float]] = {}
    for r in rows:
        m = dict(re.findall(r"(WARP_STEPS|PREFETCH|BPS)=(\d+)", r["variant"]))
        if len(m) == 3:
            t.setdefault((m["WARP_STEPS"], m["PREFETCH"], m["BPS"]), {})[(r["out_f"], r["in_f"])] = \
                float(r["median_us"])
    for b, got in sorted(t.items()):
        print(f"{stage} WARP_STEPS {b[0]} PREFETCH {b[1]} BPS {b[2]}: " + ", ".join(
            f"{o} x {f} {got.get((o, f), float('nan')):.2f}" for o, f, _ in SHAPES))
    main = t.get(("0", "1", "8"), {})
    cands = [b for b, got in t.items() if b[0] == "1" and len(got) == len(SHAPES)]
    if len(main) != len(SHAPES) or not cands:
        print(f"{stage}: rows missing; not adopted")
        continue
    best = min(cands, key=lambda b: sum(t[b].values()))
    ok = True
    for o, f, bound in SHAPES:
        new, old = t[best][(o, f)], main[(o, f)]
        print(f"{stage} {o} x {f}: {best} {new:.2f} us against main {old:.2f} "
              f"({(new / old - 1) * 100:+.2f} %, bound {(bound - 1) * 100:+.1f} %)")
        ok &= new <= bound * old
    print(f"adopt {stage} WARP_STEPS={best[0]} PREFETCH={best[1]} BPS={best[2]}" if ok
          else f"{stage}: not adopted")
