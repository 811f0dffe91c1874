"""The A/B's rule, set before the run (kernels/NOTES.md): weight_quant_fused's default moves to
PREFETCH 2, BPS 6 only if its median is at least 2 % below PREFETCH 1, BPS 8's (main's) at
3584 x 3584 and at 18944 x 3584 (out x in), and no more than 0.5 % above it at 3584 x 18944.
The other two builds (PREFETCH 2 at BPS 8, PREFETCH 1 at BPS 6) are reported, not judged.
Exit 0 adopt, 1 not."""
import csv
import re
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1]))
        if r["backend"] == "pycuda" and r["status"] == "ok"]


def build(v: str) -> tuple[str, str] | None:
    m = dict(re.findall(r"(PREFETCH|BPS)=(\d+)", v))
    return (m["PREFETCH"], m["BPS"]) if len(m) == 2 else None


ok = True
for o, f, bound in (("3584", "3584", 0.98), ("18944", "3584", 0.98), ("3584", "18944", 1.005)):
    got = {build(r["variant"]): float(r["median_us"]) for r in rows
           if (r["out_f"], r["in_f"]) == (o, f)}
    main, new = got.get(("1", "8")), got.get(("2", "6"))
    others = ", ".join(f"PREFETCH {p} BPS {b} {t:.2f}" for (p, b), t in sorted(got.items())
                       if (p, b) not in (("1", "8"), ("2", "6")))
    if main is None or new is None:
        print(f"{o} x {f}: rows missing {got}")
        ok = False
        continue
    print(f"{o} x {f}: PREFETCH 2 BPS 6 {new:.2f} us, main {main:.2f} us "
          f"({(new / main - 1) * 100:+.2f} %, bound {(bound - 1) * 100:+.1f} %); {others}")
    ok &= new <= bound * main
print("adopt" if ok else "not adopted")
sys.exit(0 if ok else 1)
