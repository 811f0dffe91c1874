"""The A/B's rule, set before the run: adopt int_gemm_packed's small-M boxes (variant default,
IGP_SMALL_BOX=1) only if its median at M 1 is below the 128-row boxes' (IGP_SMALL_BOX=0,
main's source but for the define) and at
M 16 and 1024 (18944 x 3584; 8192 not timed: the device time was short) no more than 1 % above it. Exit 0 adopt, 1 not."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
ok = True
for m in ("1", "16", "1024"):
    got = {r["variant"]: float(r["median_us"]) for r in rows
           if r["batch"] == m and r["status"] == "ok"
           and r["variant"].startswith("default") and "IGP_SMALL_BOX=" in r["variant"]}
    got = {("new" if "IGP_SMALL_BOX=1" in k else "old"): t for k, t in got.items()}
    if len(got) != 2:
        print(f"M {m}: rows missing {got}")
        ok = False
        continue
    new, old = got["new"], got["old"]
    print(f"M {m}: boxes {new:.2f} us, main {old:.2f} us ({(new / old - 1) * 100:+.1f} %)")
    ok &= new < old if m == "1" else new <= 1.01 * old
print("adopt" if ok else "not adopted")
sys.exit(0 if ok else 1)
