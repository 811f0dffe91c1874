#!/usr/bin/env bash
# One-off device check of the three conversion kernels (not a recorded run): validate,
# compute-sanitizer, and (phase bench) the stages beside torch and torch.compile.
set -uo pipefail
phase=${1:-check}
python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=c9d4cb4+conv PYTHONUNBUFFERED=1
h() { python3 -m harness "$@"; }
S="find_min_max transform_absmax dynamic_spikes_reverse"
if [ "$phase" = check ]; then
  h check $S 2>&1 | tee "$OUT/check.log"
  h validate $S 2>&1 | tee "$OUT/validate.log"
  echo "validate rc ${PIPESTATUS[0]}"
  h sanitize $S --out "$OUT/sanitizer.csv" 2>&1 | tee "$OUT/sanitize.log"
  echo "sanitize rc ${PIPESTATUS[0]}"
else
  h calibrate 2>&1 | tail -3
  mkdir -p "$OUT/bench"
  h bench $S --sweep batch=1,8,64,1024,16384 --peers torch,torch_compile --budget 0.3 \
    --out "$OUT/bench" 2>&1 | tee "$OUT/bench.log"
  echo "bench rc ${PIPESTATUS[0]}"
fi
