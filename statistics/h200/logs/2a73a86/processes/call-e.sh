#!/usr/bin/env bash
# call E: the same int_gemm point in six processes: is a stream kernel's time a property of the process?
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
for i in 1 2 3 4 5 6; do
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,pstate --format=csv,noheader >> $OUT/summary.txt
  python3 -m harness bench int_gemm --variant int8 --sweep batch=1 --sweep out_f=3584,18944 --budget 0.1 --no-verify --peers linear_bf16 --out /tmp/peer$i > $OUT/logs/proc$i.log 2>&1
  echo "process $i rc=$?" >> $OUT/summary.txt
  python3 - $i >> $OUT/summary.txt <<'PY'
import csv, sys
for r in csv.DictReader(open(f"/tmp/peer{sys.argv[1]}/int_gemm.csv")):
    print("  ", r["backend"], r["batch"], r["out_f"], r["median_us"], r["noise_pct"][:5], r["samples"], r["clock_mhz_median"], r["clock_mhz_min"], r["throttled_samples"])
PY
done
cat $OUT/summary.txt
