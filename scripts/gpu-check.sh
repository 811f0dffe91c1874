#!/usr/bin/env bash
# One call on the GPU machine: install the staged wheels, calibrate, validate every stage
# (recording the ledger), run the GPU tests and the benchmark sweep, and pack the results.
#
#   bash scripts/gpu-check.sh OUTDIR [SWEEP_STAGES...]
#
# Everything it writes under statistics/ is packed into OUTDIR/results.tgz, to be unpacked
# over the checkout and committed as it came. Logs go to OUTDIR/*.log.
set -uo pipefail
out=${1:?usage: gpu-check.sh OUTDIR [STAGES...]}
shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
h() { python3 -m harness "$@"; }
status=0
step() {  # step NAME CMD...: run, log to OUTDIR/NAME.log, remember a failure
  local name=$1; shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$out/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name exit $rc"
  [ "$rc" -eq 0 ] || status=1
}
{ nvidia-smi; python3 --version; which ncu compute-sanitizer nvcc; } > "$out/env.log" 2>&1
step calibrate h calibrate
step validate h validate --record
step pytest-gpu python3 -m pytest -m gpu -p no:cacheprovider tests
step bench h bench "$@" --sweep batch=1..65536
tar czf "$out/results.tgz" statistics
echo "gpu-check: exit $status"
exit $status
