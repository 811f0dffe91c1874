#!/usr/bin/env bash
# call 1: validate and sanitize the stream kernel's early head read; its trace; its A/B gated
# beside bf16; the final build at M <= 16 in two more processes; the conversion stages' small
# rows measured again gated beside their peers.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer-int_gemm.csv statistics/h200/tuning/stream-head statistics/h200/small-m-head-read statistics/h200/small-gated 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local name=$1; shift; local t0=$SECONDS; timeout 170 "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st validate python3 -m harness validate --record int_gemm spike_linear spike_quant_gemm
st ledger python3 -m harness ledger --check
st san_stream python3 -m harness sanitize int_gemm --variant int8 --out statistics/h200/sanitizer-int_gemm.csv --append
st trace python3 .dev/gpu/trace.py
T=statistics/h200/tuning/stream-head
st ab_a python3 -m harness bench int_gemm --variant int8 --define IGT_HEAD_EARLY=0,1 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --repeats 3 --budget 0.2 --out $T
st ab_b python3 -m harness bench int_gemm --variant int8 --define IGT_HEAD_EARLY=0,1 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944 --repeats 3 --budget 0.2 --out $T --append
st best python3 -m harness best $T/int_gemm.csv
for i in 1 2; do
  st proc${i}a python3 -m harness bench int_gemm --variant int8 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --budget 0.2 --out /tmp/procs/$i
  st proc${i}b python3 -m harness bench int_gemm --variant int8 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944 --budget 0.2 --out /tmp/procs/$i --append
done
mkdir -p statistics/h200/small-m-head-read
st merge python3 -m harness merge /tmp/procs/1/int_gemm.csv /tmp/procs/2/int_gemm.csv --out statistics/h200/small-m-head-read/int_gemm.csv
st merge_show python3 -c "import csv; [print(r['backend'], r['batch'], r['out_f'], r['in_f'], r['median_us'], r['noise_pct'], r['speedup_vs_best_peer'], r['reason'][-150:]) for r in csv.DictReader(open('statistics/h200/small-m-head-read/int_gemm.csv'))]"
G=statistics/h200/small-gated
st dsr python3 -m harness bench dynamic_spikes_reverse --peers torch,torch_compile --sweep batch=1,1024 --budget 0.5 --out $G
st wqf python3 -m harness bench weight_quant_fused --peers torch,torch_compile --sweep out_f=3584 --sweep in_f=3584 --budget 0.5 --out $G
st act python3 -m harness bench activation_fused --sweep batch=1,1024 --budget 0.5 --out $G
st act_graph python3 -m harness bench activation_fused --graph --sweep batch=1 --budget 0.5 --out $G --append
cat $sum
