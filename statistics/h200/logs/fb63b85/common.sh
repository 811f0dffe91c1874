# Sourced by the run scripts: provenance, the step helper with a time guard, packing.
set -u
# The commit the rows name and its sources' digest: `harness stamp` before a call (carry .harness-sent)
SHA=${SHA:-$(sed -n 's/^HARNESS_GIT_SHA=//p' .harness-sent)}
export HARNESS_GIT_SHA=${SHA} HARNESS_GIT_TREE=$(sed -n 's/^HARNESS_GIT_TREE=//p' .harness-sent)
export PYTHONPATH=/tmp/site:$PWD
base=$OUT
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
KEEP=${KEEP:-statistics/h200}
pack() { tar czf $base/statistics.tgz $KEEP 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt ${LIMIT:-585} ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 --version
  python3 -c "from importlib import metadata as m; print('\n'.join(sorted(f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions() if (d.metadata['Name'] or '').lower().startswith(('torch','triton','numpy','pycuda','cupy','nvidia-cutlass')))))"; } > $base/logs/env.log 2>&1
