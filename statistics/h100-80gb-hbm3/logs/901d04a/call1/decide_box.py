"""The A/B's rule, set before the run (kernels/NOTES.md): adopt int_gemm_packed's small boxes
as a compile-time choice of the single kernel (IGP_SMALL_BOX=1) if its median at M 1 is more
than 30 % below the 128-row boxes' (IGP_SMALL_BOX=0: main's code in both kernels) and no
other point (M 16, 128, 256, 1024, 8192 on 18944 x 3584) is more than 0.5 % above it.
Exit 0 adopt, 1 not."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
ok = True
for m in ("1", "16", "128", "256", "1024", "8192"):
    got = {r["variant"]: float(r["median_us"]) for r in rows
           if r["batch"] == m and r["status"] == "ok"
           and r["variant"].startswith("default") and "IGP_SMALL_BOX=" in r["variant"]}
    got = {("new" if "IGP_SMALL_BOX=1" in k else "old"): t for k, t in got.items()}
    if len(got) != 2:
        print(f"M {m}: rows missing {got}")
        ok = False
        continue
    new, old = got["new"], got["old"]
    print(f"M {m}: small boxes {new:.2f} us, 128-row {old:.2f} us ({(new / old - 1) * 100:+.2f} %)")
    ok &= new < 0.70 * old if m == "1" else new <= 1.005 * old
print("adopt" if ok else "not adopted")
sys.exit(0 if ok else 1)
