"""The A/B's rule, set before the run: adopt the polling barrier (this checkout's build) only if
its median is below main's (the @kmain build) at 1024 and 2048 rows as stream launches and at
1024 as a graph, int8 layout. Exit 0 adopt, 1 not (a reason on stdout)."""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
ok = True
for launch, batch in (("stream", "1024"), ("stream", "2048"), ("graph", "1024")):
    got = {r["variant"]: float(r["median_us"]) for r in rows
           if r["launch"] == launch and r["batch"] == batch and r["status"] == "ok"
           and r["variant"] in ("unidirectional", "unidirectional@kmain")}
    if len(got) != 2:
        print(f"{launch} {batch}: rows missing {got}"); ok = False; continue
    new, old = got["unidirectional"], got["unidirectional@kmain"]
    print(f"{launch} {batch}: poll {new:.2f} us, main {old:.2f} us ({(new / old - 1) * 100:+.1f} %)")
    ok &= new < old
print("adopt" if ok else "not adopted")
sys.exit(0 if ok else 1)
