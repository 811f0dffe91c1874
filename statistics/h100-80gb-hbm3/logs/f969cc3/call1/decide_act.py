"""The A/B's rule, set before the run: adopt the ring for rows past the thread caches
(operand_unidirectional built with STATS_RING_BYTES=228352) only if its median is below the
build of STATS_RING_BYTES=49152 (the ring for rows up to 4096 values only, main's launch and
paths) at 1024 and 8192 rows of 18944 and no more than 3 % above it at 1024 rows of 3584
(a path the change leaves as it was). 16 rows of 18944 are reported, not judged.
Exit 0 adopt, 1 not."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
v = "operand_unidirectional"
ok = True
for b, f, rule in (("1024", "18944", "faster"), ("8192", "18944", "faster"),
                   ("1024", "3584", "level"), ("16", "18944", None)):
    got = {r["variant"]: float(r["median_us"]) for r in rows
           if (r["batch"], r["in_f"]) == (b, f) and r["status"] == "ok"
           and r["variant"].startswith(v) and ("=228352]" in r["variant"] or "=49152]" in r["variant"])}
    got = {("new" if "=228352]" in k else "old"): t for k, t in got.items()}
    if len(got) != 2:
        print(f"{b} x {f}: rows missing {got}")
        ok &= rule is None
        continue
    new, old = got["new"], got["old"]
    print(f"{b} x {f}: ring {new:.2f} us, main {old:.2f} us ({(new / old - 1) * 100:+.1f} %)"
          f"{'' if rule else ' (not judged)'}")
    if rule == "faster":
        ok &= new < old
    elif rule == "level":
        ok &= new <= 1.03 * old
print("adopt" if ok else "not adopted")
sys.exit(0 if ok else 1)
