#!/usr/bin/env bash
# One call on the GPU machine: install the staged wheels, then the phases asked for.
#
#   bash scripts/gpu-check.sh OUTDIR [PHASE...]
#
# Phases (default: validate check sweep-stages sweep-pipeline):
#   validate  calibrate and `harness validate --record` (every stage, variant, family,
#             seed; the pipeline)
#   check     the GPU tests, `harness run --repeats 10 --batch 1024`, one `harness profile`
#   sweep-stages    the stage sweeps
#   sweep-pipeline  the pipeline's sweep and the seed's five summaries (batch 1..65536)
#   peers-dyn       calibrate, then dynamic_spikes with the torch peers, batch 1..65536
#   peers-stages    the other stages with the torch peers
#   fused           issue 6: activation_fused validated, beside the peers (graph replays
#                   at batch 1, 8, 64), its ncu profile
#   weights-dyn     weight_quant_fused and dynamic_spikes beside the peers
#   final           the v3 fused kernels: validated, the target points beside the peers
#   activation-path the activation_path pipeline validated, staged vs fused swept
#   tune            issue 6, v4: the fused kernels validated, then their -D parameters
#                   swept (bench --define) into statistics/<gpu>/tuning/
#   v4              issue 6, v4 at its tuned defaults: validated, ncu of both layouts,
#                   beside the peers (graph replays at batch 1, 8, 64)
#   v4-rest         issue 6, v4: weight quantization beside the peers and its ncu, the GPU
#                   tests of the fused stage, the activation_path sweep, the sanitizer
#   v5              issue 6, v5: validated, pass 1's parameters and load hints tuned, both
#                   layouts at batch 1, 1024, 65536 (into statistics/<gpu>/v5/), ncu
#   final-v5        issue 6 at v5: activation_fused beside the peers (graph replays at 1, 8,
#                   64), packed, the activation_path sweep, the sanitizer, weight ncu
#   review          the fused stages and both pipelines validated, a pipeline run, their
#                   GPU tests (after a refactor that keeps the PTX but moves the hashes)
#   regress         pytest-benchmark: save a baseline, then a compare run (fails on >10 %)
#   sanitize        `harness sanitize` (writes statistics/<gpu>/sanitizer.csv)
#   ncu-sample  a raw ncu CSV of a few dynamic_spikes launches (for the parser's tests)
# Everything written under statistics/ is packed into OUTDIR/results.tgz, to be unpacked
# over the checkout and committed as it came; logs go to OUTDIR/logs.tgz.
set -uo pipefail
out=${1:?usage: gpu-check.sh OUTDIR [PHASE...]}
shift
phases=${*:-validate check sweep-stages sweep-pipeline}
mkdir -p "$out/logs"  # packed into logs.tgz at the end: at most 8 files come back
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
h() { python3 -m harness "$@"; }
status=0
fused_beside_peers() {  # issue 6's committed activation_fused sweep (the int8 and packed rows)
  step bench-fused h bench activation_fused --variant unidirectional --peers all --k 4 \
    --budget 0.5 --sweep batch=1,1024,16384,65536
  step bench-fused-graph h bench activation_fused --variant unidirectional --graph \
    --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
  step bench-packed h bench activation_fused --variant packed_unidirectional --k 4 \
    --budget 0.5 --sweep batch=1,16384,65536 --append
}
step() {  # step NAME CMD...: run, log to OUTDIR/NAME.log, remember a failure
  local name=$1; shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$out/logs/$name.log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name exit $rc"
  [ "$rc" -eq 0 ] || status=1
}
{ nvidia-smi; python3 --version; which ncu compute-sanitizer nvcc; } > "$out/logs/env.log" 2>&1
for phase in $phases; do
  case $phase in
    validate)
      step calibrate h calibrate
      step validate h validate --record
      ;;
    check)
      step pytest-gpu python3 -m pytest -m gpu -rP -p no:cacheprovider tests
      step run h run --repeats 10 --batch 1024
      step profile h profile dynamic_spikes --batch 16384
      ;;
    sweep-stages)
      step bench-stages h bench --budget 0.5 --sweep batch=1,64,1024,16384,65536 \
        --sweep out_f=3584,18944 \
        find_min_max transform_absmax spike_encode spike_decode dynamic_spikes_reverse \
        compute_scales weight_quantize
      ;;
    sweep-pipeline)
      step bench-pipeline h bench spike_quant_gemm --budget 1 --sweep batch=1..65536 \
        --sweep out_f=3584,18944
      ;;
    peers-dyn)  # dynamic_spikes beside the torch peers, the full batch sweep
      step calibrate h calibrate
      step bench-dyn h bench dynamic_spikes --peers all --budget 0.5 \
        --sweep batch=1,1024,16384,65536
      ;;
    peers-stages)  # every other stage beside the torch peers
      step bench-peers h bench --peers all --budget 0.5 --sweep batch=1,1024,16384,65536 \
        --sweep out_f=3584,18944 \
        find_min_max transform_absmax spike_encode spike_decode dynamic_spikes_reverse \
        compute_scales weight_quantize
      step bench-gemm h bench gemm --peers all --budget 0.5 --sweep batch=1024
      ;;
    fused)  # issue 6: the fused activation path and weight quantization beside the peers
      step validate-fused h validate activation_fused --record
      step pytest-fused python3 -m pytest -m gpu -rP -p no:cacheprovider tests/test_gpu.py \
        -k "fused or graph"
      step bench-fused h bench activation_fused --variant unidirectional \
        --variant packed_unidirectional --peers all --k 4 --budget 0.5 \
        --sweep batch=1,64,1024,16384,65536
      step bench-fused-graph h bench activation_fused --variant unidirectional --graph \
        --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
      step profile-fused h profile activation_fused --batch 65536 --k 4
      ;;
    weights-dyn)  # issue 6: one-pass weight quantization and dynamic_spikes beside the peers
      step bench-wq h bench weight_quant_fused --peers all --budget 0.5 \
        --sweep out_f=3584,18944 --sweep in_f=3584,18944
      step bench-dyn h bench dynamic_spikes --peers all --budget 0.5 \
        --sweep batch=1,1024,16384,65536
      ;;
    final)  # issue 6, v3 kernels: validate them, then the target points beside the peers
      step validate-v3 h validate activation_fused weight_quant_fused --record
      step pytest-fused python3 -m pytest -m gpu -rP -p no:cacheprovider tests/test_gpu.py \
        -k "fused or graph"
      step bench-fused h bench activation_fused --variant unidirectional --peers all --k 4 \
        --budget 0.5 --sweep batch=1,1024,65536
      step bench-fused-graph h bench activation_fused --variant unidirectional --graph \
        --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
      step bench-packed h bench activation_fused --variant packed_unidirectional --k 4 \
        --budget 0.5 --sweep batch=1,65536 --append
      step bench-wq h bench weight_quant_fused --peers all --budget 0.5 \
        --sweep out_f=3584,18944 --sweep in_f=3584
      step bench-wq-wide h bench weight_quant_fused --peers all --budget 0.5 \
        --sweep out_f=3584 --sweep in_f=18944 --append
      step profile-fused h profile activation_fused --batch 65536 --k 4
      ;;
    activation-path)  # issue 6: the staged vs the fused activation path, end to end
      step validate-ap h validate activation_path --record
      step bench-ap h bench activation_path --k 4 --budget 0.5 \
        --sweep batch=1,8,64,1024,16384,65536
      ;;
    tune)  # issue 6, v4: validate, then sweep the kernels' compiled parameters
      step validate-v4 h validate activation_fused weight_quant_fused --record
      step validate-ap h validate activation_path --record
      tuning=statistics/h200/tuning  # the lent GPU's folder (statistics/<gpu slug>/)
      step tune-fused h bench activation_fused --variant unidirectional --k 4 --budget 0.3 \
        --sweep batch=16384 --define STATS_BLOCKS=528,1056,2048,8192 --define ENC_UNITS=2,4 \
        --out "$tuning"
      step tune-wq h bench weight_quant_fused --budget 0.3 --sweep out_f=3584,18944 \
        --sweep in_f=3584 --define UNROLL=1,2,4,8 --define WARPS=4,8 --out "$tuning"
      ;;
    v4)  # issue 6, v4 at its tuned defaults: validated, per-kernel ncu, beside the peers
      step validate-v4 h validate activation_fused weight_quant_fused activation_path --record
      step tune-wq h bench weight_quant_fused --budget 0.3 --sweep out_f=3584,18944 \
        --sweep in_f=3584 --define ITERS=1,2,4,8 --define UNROLL=1,2 \
        --out statistics/h200/tuning --append
      step profile-fused h profile activation_fused --batch 65536 --k 4
      step profile-packed h profile activation_fused --variant packed_unidirectional \
        --batch 65536 --k 4
      fused_beside_peers
      ;;
    v4-rest)  # issue 6, v4: the weights beside the peers, the pipeline, tests, sanitizer
      step validate-wq h validate weight_quant_fused --record
      step bench-wq h bench weight_quant_fused --peers all --budget 0.5 \
        --sweep out_f=3584,18944 --sweep in_f=3584
      step bench-wq-wide h bench weight_quant_fused --peers all --budget 0.5 \
        --sweep out_f=3584 --sweep in_f=18944 --append
      step profile-wq h profile weight_quant_fused --sweep out_f=18944
      step pytest-fused python3 -m pytest -m gpu -rP -p no:cacheprovider tests/test_gpu.py \
        -k "fused or graph or workspace"
      step bench-ap h bench activation_path --k 4 --budget 0.5 \
        --sweep batch=1,8,64,1024,16384,65536
      step sanitize-v4 h sanitize activation_fused weight_quant_fused \
        --out statistics/h200/sanitizer-v4.csv
      step tune-wq-more h bench weight_quant_fused --budget 0.3 --sweep out_f=3584,18944 \
        --sweep in_f=3584 --define ITERS=16,32 --define UNROLL=1 \
        --out statistics/h200/tuning --append
      step tune-fused-more h bench activation_fused --variant unidirectional --k 4 \
        --budget 0.3 --sweep batch=16384 --define STATS_BLOCKS=16384 \
        --out statistics/h200/tuning --append
      ;;
    v5)  # issue 6, v5: division-free pass 1 (and load hints) validated, tuned, measured
      step validate-v5 h validate activation_fused weight_quant_fused activation_path --record
      step tune-fused h bench activation_fused --variant unidirectional --k 4 --budget 0.3 \
        --sweep batch=16384 --define STATS_MINB=1,4 --define PREFETCH=0,1 \
        --out statistics/h200/tuning --append
      step tune-fused-ef h bench activation_fused --variant unidirectional --k 4 \
        --budget 0.3 --sweep batch=16384 --define EVICT_FIRST=1 \
        --out statistics/h200/tuning --append
      step tune-wq-ef h bench weight_quant_fused --budget 0.3 --sweep out_f=3584,18944 \
        --sweep in_f=3584 --define EVICT_FIRST=0,1 --out statistics/h200/tuning --append
      step bench-fused h bench activation_fused --variant unidirectional \
        --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,65536 \
        --out statistics/h200/v5
      step profile-fused h profile activation_fused --batch 65536 --k 4
      ;;
    final-v5)  # issue 6 at v5: the committed sweep beside the peers, pipeline, sanitizer
      fused_beside_peers
      step bench-ap h bench activation_path --k 4 --budget 0.5 \
        --sweep batch=1,8,64,1024,16384,65536
      step sanitize-fused h sanitize activation_fused weight_quant_fused \
        --out statistics/h200/sanitizer-fused.csv
      step profile-wq h profile weight_quant_fused --sweep out_f=18944
      ;;
    review)  # after a no-op refactor (same PTX, new source hash): validate, run the pipelines
      step validate-review h validate activation_fused weight_quant_fused activation_path \
        spike_quant_gemm --record
      step run-review h run --repeats 3 --batch 1024
      step pytest-pipelines python3 -m pytest -m gpu -rP -p no:cacheprovider tests \
        -k "pipeline or fused or workspace"
      ;;
    regress)  # pytest-benchmark: a saved baseline, then a compare run that fails on >10 %
      step bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench \
        --benchmark-enable --benchmark-autosave --benchmark-storage="file://$out/pb"
      step bench-compare python3 -m pytest -m gpu -p no:cacheprovider tests/bench \
        --benchmark-enable --benchmark-storage="file://$out/pb" --benchmark-compare \
        --benchmark-compare-fail=median:10%
      tar czf "$out/pytest-benchmark.tgz" -C "$out" pb && rm -rf "$out/pb"
      ;;
    sanitize)  # compute-sanitizer's four tools over every stage and variant, odd shapes
      step sanitize h sanitize
      ;;
    ncu-sample)  # raw ncu CSV of a few dynamic_spikes launches: the parser's test fixture
      step ncu-sample ncu --clock-control none --csv --page raw --launch-skip 3 \
        --launch-count 3 -k regex:dynamic_spikes \
        --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,lts__t_sector_hit_rate.pct \
        python3 -m harness bench dynamic_spikes --sweep batch=16384 --budget 0.05 \
        --no-verify --out /tmp/ncu-bench
      ;;
    *) echo "unknown phase $phase"; status=1 ;;
  esac
done
tar czf "$out/results.tgz" statistics
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"
echo "gpu-check: exit $status"
exit $status
