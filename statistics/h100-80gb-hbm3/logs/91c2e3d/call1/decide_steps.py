"""The A/B's rule, set before the run (kernels/NOTES.md): weight_quant_fused's default moves
to the fastest WARP_STEPS 1 build (the least sum of medians over the three shapes) only if
its median is at least 2 % below main's (WARP_STEPS 0, PREFETCH 1, BPS 8) at 3584 x 3584
and at 18944 x 3584 (out x in), and no more than 0.5 % above it at 3584 x 18944. Every
build is reported. Exit 0 adopt (the build's defines printed last), 1 not."""
import csv
import re
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["backend"] == "pycuda" and r["status"] == "ok"]
SHAPES = (("3584", "3584", 0.98), ("18944", "3584", 0.98), ("3584", "18944", 1.005))


def build(v: str) -> tuple[str, str, str] | None:
    m = dict(re.findall(r"(WARP_STEPS|PREFETCH|BPS)=(\d+)", v))
    return (m["WARP_STEPS"], m["PREFETCH"], m["BPS"]) if len(m) == 3 else None


t: dict[tuple[str, str, str], dict[tuple[str, str], float]] = {}
for r in rows:
    b = build(r["variant"])
    if b is not None:
        t.setdefault(b, {})[(r["out_f"], r["in_f"])] = float(r["median_us"])
main = t.get(("0", "1", "8"), {})
for b, got in sorted(t.items()):
    print(f"WARP_STEPS {b[0]} PREFETCH {b[1]} BPS {b[2]}: " + ", ".join(
        f"{o} x {f} {got.get((o, f), float('nan')):.2f}" for o, f, _ in SHAPES))
cands = [b for b, got in t.items() if b[0] == "1" and len(got) == 3]
if len(main) != 3 or not cands:
    print("rows missing")
    sys.exit(1)
best = min(cands, key=lambda b: sum(t[b].values()))
ok = True
for o, f, bound in SHAPES:
    new, old = t[best][(o, f)], main[(o, f)]
    print(f"{o} x {f}: {best} {new:.2f} us against main {old:.2f} ({(new / old - 1) * 100:+.2f} %,"
          f" bound {(bound - 1) * 100:+.1f} %)")
    ok &= new <= bound * old
print(("adopt " + "WARP_STEPS={} PREFETCH={} BPS={}".format(*best)) if ok else "not adopted")
sys.exit(0 if ok else 1)
