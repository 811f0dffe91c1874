#!/usr/bin/env bash
# The stream-K tail of int_gemm_wgmma (IG_SK, on main to be validated in this run), in the
# order that matters if the call is cut: validated (with the two pipelines whose hashes
# include it); the A/B of IG_SK=0,1 in one process on 3584 x 18944 (the shape it is for;
# --no-verify: validate has just checked every split case), its ranking; compute-sanitizer;
# the A/B on the other two shapes; activation_fused under compute-sanitizer (its transposed
# pass 2 never was); ncu of the tail's shape.
# The GPU's own folder (statistics/h200, or h100 where that is what came).
G=$(realpath --relative-to="$PWD" "$(PYTHONPATH=/tmp/site:$PWD python3 -m harness where)")
KEEP="statistics/validation_ledger.csv $G/sanitizer.csv statistics/ncu/int_gemm.csv $G/fresh"
source .dev/gpu/common.sh
F=$G/fresh
echo "folder $G" >> $sum
AB="$H bench int_gemm --variant int8 --define IG_SK=0,1 --no-verify --repeats 5 --budget 0.3"
st 150 validate $H validate int_gemm spike_linear spike_quant_gemm --record
st 90 ab-sk-k $AB --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $F/ab-sk
st 20 ab-best $H best $F/ab-sk/int_gemm.csv
st 100 sanitize $H sanitize int_gemm --append
st 100 ab-sk $AB --sweep batch=1024,8192 --sweep out_f=18944,3584 --sweep in_f=3584 --append --out $F/ab-sk
st 20 ab-best-all $H best $F/ab-sk/int_gemm.csv
st 90 sanitize-act $H sanitize activation_fused --append
st 60 ncu-sk $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=3584 --sweep in_f=18944
cat $sum; cat $base/logs/ab-best-all.log 2>/dev/null || cat $base/logs/ab-best.log
grep -h "FAIL\|fail\|rror" $base/logs/validate.log | head -20
