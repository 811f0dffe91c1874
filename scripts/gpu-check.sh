#!/usr/bin/env bash
# The GPU machine's run, in phases named by what they produce:
#
#   bash scripts/gpu-check.sh [PHASE...]        (default: validate test regress)
#
#   validate  `harness validate --record`: every stage, variant, family and seed, and every
#             pipeline, against the NumPy references; a ledger row per kernel variant. A
#             process a stage or pipeline variant, $VALIDATE_JOBS at once (a validation's
#             time is mostly the host's: its inputs and references), each with its log
#             under logs/validate/; the ledger takes each row as it lands
#   test      the GPU tests (pytest -m gpu) and one checked `harness run` of the pipeline
#   sweep     the copy bandwidth calibrated, then every stage's and every pipeline's default
#             sweep into the GPU's folder (`harness where`: statistics/<gpu>/)
#   peers     the copy bandwidth calibrated, then every stage beside its torch and
#             torch.compile peers at $PEER_SWEEP, less the values of an axis beyond the
#             largest of the stage's own default sweep of it (gemm and int_gemm stop at their
#             largest default batch), and as CUDA-graph replays at batch 1, 8 and 64, into
#             the GPU's folder (replacing the stage CSVs a sweep wrote there)
#   profile   `harness profile` (ncu) of every stage variant at batch $PROFILE_BATCH, into
#             statistics/ncu/
#   sanitize  `harness sanitize`: compute-sanitizer's four tools over every stage variant at
#             small and odd shapes, into statistics/<gpu>/sanitizer.csv; and memcheck over
#             spike_linear's validation of its exact path (a kernel only that pipeline runs)
#   regress   the GPU folder's rows as they were when this script started, measured again
#             with their own commands (python -m harness.tools.replay) and compared row by
#             row (`harness compare`, a slower row fails); the pytest-benchmark benchmarks
#             against the GPU folder's baseline (a median more than 10 % slower fails)
#   layer     the spike linear layer: int_gemm at M $LAYER_BATCHES on (N, K) = (18944, 3584),
#             (3584, 18944) and (3584, 3584) beside its named peers (linear_fp32,
#             linear_bf16, int_mm), torch.compile of the W8ASpike reference at M 1, 1024 and
#             8192 on the first shape, the FP32 tiled gemm on the first shape (harness
#             compare --ignore stage,variant,params against it), and spike_linear's sweep
#             on the three shapes, into the GPU's folder (replacing those CSVs); the layer
#             plane by plane (int_gemm_planes) beside int_gemm_packed and int_gemm at M 1,
#             16, 1024, 8192 on the first shape and M 1024 on 3584 x 3584, into planes/
#   ceilings  the copy bandwidth calibrated, then the ceiling of the traffic of the passes
#             the byte-floor targets judge, each by the harness's own kernel at that pass's
#             bytes (stored beside the peak, never replacing it): activation_fused's pass 2
#             (q8 read, six int8 planes written) and pass 1 (x read, q8 written) at batch
#             $CEILING_BATCH x in_f 3584, and a read of int_gemm's operand at small M (int8
#             weights and their fp32 group scales, G = 128, down to whole 64-byte units)
#             on (N, K) = $CEILING_WEIGHTS
#   ab        an A/B of kernel builds (`bench --define`, and/or `bench --against` the
#             kernels of $AB_AGAINST) into the GPU folder's tuning/$AB_DIR:
#             each build first checked against the reference at $AB_CHECK, then each point
#             of $AB_POINTS timed $TUNE_REPEATS times in rotated order with the check off
#             (the builds' outputs were checked just before), then read with `harness best`
#   tune      the tuning sweeps of statistics/<gpu>/tuning/ (`bench --define`), measured
#             again with their own commands, their rows added to that folder's CSVs (the
#             earlier rows kept), each point $TUNE_REPEATS
#             times in rotated order (bench --repeats; where a point has more builds than
#             that, some are never measured first). A new one is first run by hand:
#             harness bench STAGE --define NAME=V1,V2 --repeats 3 --out "$(harness where)/tuning"
#
# Settings (environment): BUDGET, seconds of sampling per point (0.5); SWEEP, the --sweep
# specs of `sweep` (default: each stage's own default sweep); PEER_SWEEP, those of `peers`
# ("batch=1,1024,16384,65536 out_f=3584,18944", each stage capped as above); PROFILE_BATCH
# (16384); LAYER_BATCHES ("1,4,16,64,256,1024,4096,8192"); CEILING_BATCH (65536);
# CEILING_WEIGHTS ("18944x3584 3584x3584"); TUNE_REPEATS (3); REGRESS_REPEATS,
# each regress point's repeats (1; 3 takes three times as long and keeps a process's order
# effect out of the gate: README, "How a time is measured"); REGRESS_SAVE=1, the
# pytest-benchmark run also saved as the next baseline (commit it: a stage the newest
# baseline lacks fails regress until one holds it); REGRESS_LEAVE, stages whose
# rows regress leaves out (measured by another phase of the same run, say); HARNESS_GIT_SHA,
# the commit the rows name when the tree arrives without git history, and HARNESS_GIT_TREE,
# that commit's sources' digest (rows name <commit>-dirty where the sources here differ):
# both read from the file `harness stamp` writes before the tree is sent (HARNESS_SENT,
# default .harness-sent), where it is there and they are not set already; STAGES, the stages
# and pipelines validate takes, and the stages of them sanitize takes (default: all);
# VALIDATE_JOBS, the validations run at once (default: the CPUs, at most 16); for
# ab, AB_STAGE, AB_VARIANT, AB_DEFINES (its --define specs, space-separated: "NAME=V1,V2
# NAME2=V1,V2"), AB_AGAINST (a folder holding another revision's kernels/ tree, as `git
# archive REV kernels | tar -x -C DIR` makes it: the machine has no git history), AB_CHECK
# (the --sweep specs of the check), AB_POINTS (the timed points,
# ';'-separated, each its --sweep specs), AB_FLAGS (more bench flags of the timed points,
# say --graph) and AB_DIR (appended to where it holds rows).
#
# Staged wheels in .whl/ (PyCUDA and its dependencies) are installed into /tmp/site first.
# Everything lands in $OUT (gpu-out/ when OUT is unset), in three files, repacked after
# every step so that a run cut short still returns what it did: results.tgz (statistics/
# as written: unpack it over the checkout and commit it as it came), logs.tgz (one log per
# step, each validation's under validate/, the environment, the rows regress measured)
# and summary.txt (each step's exit status). The exit status is 0 when every step passed,
# 1 when one failed, 2 on bad usage or a bad stamp (.harness-sent).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
phases=(validate test sweep peers layer profile sanitize regress ceilings ab tune)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
case " $* " in *" -h "* | *" --help "*) usage; exit 0 ;; esac
asked=("$@")
[ ${#asked[@]} -gt 0 ] || asked=(validate test regress)
for p in "${asked[@]}"; do
  case " ${phases[*]} " in
    *" $p "*) ;;
    *) echo "gpu-check: unknown phase '$p' (phases: ${phases[*]})" >&2; exit 2 ;;
  esac
done

out=${OUT:-$root/gpu-out}
budget=${BUDGET:-0.5}
read -r -a sweep_specs <<< "${SWEEP:-}"
read -r -a peer_specs <<< "${PEER_SWEEP:-batch=1,1024,16384,65536 out_f=3584,18944}"
profile_batch=${PROFILE_BATCH:-16384}
layer_batches=${LAYER_BATCHES:-1,4,16,64,256,1024,4096,8192}
ceiling_batch=${CEILING_BATCH:-65536}
read -r -a ceiling_weights <<< "${CEILING_WEIGHTS:-18944x3584 3584x3584}"
read -r -a regress_leave <<< "${REGRESS_LEAVE:-}"
tune_repeats=${TUNE_REPEATS:-3}
read -r -a only_stages <<< "${STAGES:-}"
cpus=$(nproc 2>/dev/null || echo 4)
validate_jobs=${VALIDATE_JOBS:-$((cpus < 16 ? cpus : 16))}
regress_repeats=${REGRESS_REPEATS:-1}
regress_save=${REGRESS_SAVE:-0}
# The timer the pytest-benchmark rounds are timed by (tests/bench/clock.py's EVENT_CLOCK).
event_clock=cuda_event_clock
work=$(mktemp -d)
logs=$work/logs
mkdir -p "$out" "$logs"
: > "$out/summary.txt"
# The commit the tree was sent from, and its sources' digest (`harness stamp`): the machine
# has no git history to ask.
sent=${HARNESS_SENT:-.harness-sent}
stamped() {  # stamped NAME: the first NAME=<hex> line of the stamp (a CR at its end dropped)
  tr -d '\r' < "$sent" | sed -n "s/^$1=\\([0-9a-f][0-9a-f]*\\)\$/\\1/p" | head -n 1
}
if [ -z "${HARNESS_GIT_SHA:-}" ] && [ -e "$sent" ]; then
  if [ -r "$sent" ] && [ -f "$sent" ]; then
    HARNESS_GIT_SHA=$(stamped HARNESS_GIT_SHA)
    HARNESS_GIT_TREE=$(stamped HARNESS_GIT_TREE)
  fi
  if [ -z "${HARNESS_GIT_SHA:-}" ] || [ -z "${HARNESS_GIT_TREE:-}" ]; then
    echo "gpu-check: $sent is unreadable or names no commit or no digest (\`harness stamp\`" \
      "writes it)" | tee -a "$out/summary.txt" >&2
    exit 2
  fi
  export HARNESS_GIT_SHA HARNESS_GIT_TREE
fi
export PYTHONUNBUFFERED=1
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --upgrade --target /tmp/site .whl/*.whl \
    || { echo "gpu-check: installing the staged wheels (.whl/) failed" \
           | tee -a "$out/summary.txt" >&2; exit 1; }
  export PYTHONPATH=/tmp/site:$root
fi

h() { python3 -m harness "$@"; }
pack() {  # everything so far into $OUT, each archive written beside the last and renamed
  # over it: a run cut short while packing still returns the previous archive whole
  tar czf "$out/results.tgz.part" -C "$root" statistics \
    && mv -f "$out/results.tgz.part" "$out/results.tgz"
  tar czf "$out/logs.tgz.part" -C "$work" logs && mv -f "$out/logs.tgz.part" "$out/logs.tgz"
}
status=0
n=0
step() {  # step NAME CMD...: run it, log it, note its exit status, pack; returns it
  local name=$1 log rc start=$SECONDS
  shift
  n=$((n + 1))
  log=$logs/$(printf '%02d' "$n")-$name.log
  echo "=== $name: $*"
  "$@" < /dev/null 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc"
  printf '%-44s exit %-3s %5ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" \
    >> "$out/summary.txt"
  [ "$rc" -eq 0 ] || status=1
  pack
  return "$rc"
}
note() {  # note NAME WHAT: a line in the summary, no failure
  echo "=== $1: $2"
  printf '%-44s %s\n' "$1" "$2" >> "$out/summary.txt"
}
skip() {  # skip NAME WHY: a step that could not run counts as failed
  echo "=== $1: not run: $2"
  printf '%-44s not run: %s\n' "$1" "$2" >> "$out/summary.txt"
  status=1
}
found() {  # found pipelines | found variants: what the harness discovers, one a line
  # (a variant as "STAGE VARIANT AXES", its stage's axes joined by commas)
  python3 - "$1" <<'EOF'
import sys

from harness.contract.registry import discover

reg = discover()
if sys.argv[1] == "pipelines":
    print(*sorted(reg.pipelines), sep="\n")
else:
    print(*(f"{n} {v.name} {','.join(a.name for a in s.axes)}"
            for n, s in sorted(reg.stages.items()) for v in s.variants), sep="\n")
EOF
}
validation_units() {  # validation_units [NAME...]: "NAME VARIANT", a line for each variant
  # of every stage and pipeline (of NAME... where given; an unknown name: exit 2)
  python3 - "$@" <<'EOF'
import sys

from harness.contract.registry import discover

reg = discover()
targets = {**reg.stages, **reg.pipelines}
names = sys.argv[1:] or sorted(targets)
if unknown := [n for n in names if n not in targets]:
    print(f"gpu-check: STAGES: no stage or pipeline {', '.join(unknown)}", file=sys.stderr)
    sys.exit(2)
print(*(f"{n} {v.name}" for n in names for v in targets[n].variants), sep="\n")
EOF
}
validate_side_by_side() {  # validate_side_by_side UNITS JOBS: `harness validate --record`
  # of each unit of the file UNITS ("NAME VARIANT" a line), JOBS processes at once, each
  # logged under logs/validate/; a line as each ends; exit status non-zero when one failed
  mkdir -p "$logs/validate"
  # numpy's threads a process: JOBS processes share the machine's CPUs
  OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 xargs -P "$2" -L 1 bash -c '
    start=$SECONDS
    python3 -m harness validate --record "$1" --variant "$2" < /dev/null \
      > "$0/validate/$1-$2.log" 2>&1
    rc=$?
    echo "$1 [$2]: exit $rc, $((SECONDS - start)) s"
    [ "$rc" -eq 0 ]' "$logs" < "$1"
}
bench_missing() {  # bench_missing JSON: the stages the registry finds that a saved
  # pytest-benchmark run holds no benchmark of, space-separated
  python3 - "$1" <<'EOF'
import json
import sys

from harness.contract.registry import discover

with open(sys.argv[1], encoding="utf-8") as f:
    held = {b["name"] for b in json.load(f)["benchmarks"]}
# the stages tests/bench benchmarks: the built-in ones (an installed package's are not)
print(*(n for n in sorted(discover(entry_points=False).stages)
        if f"test_stage[{n}]" not in held))
EOF
}
bench_clock() {  # bench_clock JSON: the timers a saved pytest-benchmark run's benchmarks
  # were timed by, distinct, space-separated (tests/bench/clock.py's EVENT_CLOCK: the CUDA
  # events; an older run's perf_counter held the host's launch and synchronisation)
  python3 - "$1" <<'EOF'
import json
import sys

with open(sys.argv[1], encoding="utf-8") as f:
    print(*sorted({str(b.get("options", {}).get("timer", "")) for b in json.load(f)["benchmarks"]}))
EOF
}
peer_plan() {  # peer_plan SPEC...: the stages grouped by the sweep each takes in `peers`,
  # a line a group: "STAGE,STAGE<tab>SPEC SPEC"; or "skip STAGE<tab>WHY". A stage takes the
  # specs' values of its own axes, less those beyond the largest of its default sweep of
  # that axis (a stage's default sweep says how large it is meant to go: its reference and
  # peers at larger sizes take minutes a point); a stage with none of the axes, the specs.
  python3 - "$@" <<'EOF'
import sys

from harness.contract.registry import discover
from harness.engine.sweep import parse

try:
    asked = parse(sys.argv[1:])
    groups: dict[str, list[str]] = {}
    for name, st in sorted(discover().stages.items()):
        axes = {a.name: a for a in st.axes}
        specs, why = [], ""
        for axis, texts in asked.items():
            if axis not in axes:
                continue
            values = [axes[axis].parse(t) for t in texts]
            own = st.default_sweep.get(axis)
            if own and axes[axis].kind in (int, float):
                kept = [v for v in values if v <= max(own)]
                if not kept:
                    why = f"its default sweep of {axis} ends at {max(own)}, below {min(values)}"
                    break
                values = kept
            specs.append(f"{axis}={','.join(map(str, values))}")
        if why:
            print(f"skip {name}\t{why}")
            continue
        groups.setdefault(" ".join(specs) or " ".join(sys.argv[1:]), []).append(name)
    for specs, names in groups.items():
        print(f"{','.join(names)}\t{specs}")
except Exception as exc:  # a bad PEER_SWEEP: one line, the phase not run
    print(f"gpu-check: PEER_SWEEP: {exc}", file=sys.stderr)
    sys.exit(2)
EOF
}
calibrated=0
calibrate() {  # once a run: the peak that a row's % of peak refers to
  [ "$calibrated" -eq 1 ] || step calibrate h calibrate
  calibrated=1
}
sanitize_exact_path() {  # the layer's exact path (int_gemm_general_unfit, and
  # activation_fused writing q_wide) runs only inside spike_linear: memcheck over that
  # pipeline's validation, on families whose q does and does not fit int8
  step sanitize-spike_linear-any compute-sanitizer --tool memcheck --error-exitcode 3 \
    python3 -m harness validate spike_linear --variant any --seeds 1 \
    --family normal --family edge --family llm
}
sweep_args() {  # sweep_args SPEC...: one --sweep a spec
  local s
  for s in "$@"; do printf -- '--sweep\n%s\n' "$s"; done
}

# The peers' and the harness's packages too: a torch.compile row depends on the torch and
# Triton it was compiled by, which no row records.
{ nvidia-smi; python3 --version; command -v ncu compute-sanitizer nvcc
  python3 - <<'PY'
from importlib import metadata
wanted = ("torch", "triton", "numpy", "pycuda", "cupy", "nvidia-cutlass", "cuda-python",
          "cuda-bindings")
found = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()
                if (d.metadata["Name"] or "").lower().startswith(wanted)})
print("\n".join(found) or "none of the peers' packages found")
PY
  echo "HARNESS_GIT_SHA=${HARNESS_GIT_SHA:-}"; echo "HARNESS_GIT_TREE=${HARNESS_GIT_TREE:-}"
  } > "$logs/env.log" 2>&1
# The commit the rows will name, as the harness reads it here: where the sources here are not
# the stamped commit's, <commit>-dirty, and the summary says so once.
rows_sha=$(python3 -c 'from harness.results import provenance; print(provenance.git_sha())' \
  2>> "$logs/env.log") || rows_sha=unknown
echo "rows name: $rows_sha" >> "$logs/env.log"
if [ -n "${HARNESS_GIT_TREE:-}" ] && [ "$rows_sha" = "${HARNESS_GIT_SHA:-}-dirty" ]; then
  echo "gpu-check: the sources here are not those of the stamped commit ${HARNESS_GIT_SHA:0:12}:" \
    "rows name ${HARNESS_GIT_SHA:0:12}-dirty" | tee -a "$out/summary.txt" >&2
fi
if ! stats=$(h where); then
  echo "gpu-check: \`harness where\` failed (above): no GPU folder to work in" \
    | tee -a "$out/summary.txt" >&2
  pack
  exit 1
fi
echo "=== the GPU's folder: $stats"
baseline=$work/baseline  # the rows regress compares against, before any phase wrote
if [ -d "$stats" ]; then cp -a "$stats" "$baseline"; fi

for phase in "${asked[@]}"; do
  case $phase in
    validate)
      if ! validation_units "${only_stages[@]}" > "$work/validate-units"; then
        skip validate "the harness could not list what to validate (above)"
        continue
      fi
      step validate validate_side_by_side "$work/validate-units" "$validate_jobs"
      ;;
    test)
      step test python3 -m pytest -m gpu -rP -p no:cacheprovider tests
      step test-run h run --repeats 3 --batch 1024
      ;;
    sweep)
      calibrate
      mapfile -t args < <(sweep_args "${sweep_specs[@]}")
      step sweep-stages h bench --budget "$budget" --overwrite "${args[@]}"
      # Listed into a file first: a failing listing inside < <(...) would pass unseen.
      if ! found pipelines > "$work/pipelines"; then
        skip sweep-pipelines "the harness could not list its pipelines (above)"
        continue
      fi
      mapfile -t pipes < <(grep . "$work/pipelines")
      if [ ${#pipes[@]} -gt 0 ]; then
        step sweep-pipelines h bench --budget "$budget" --overwrite "${pipes[@]}"
      fi
      ;;
    peers)
      calibrate
      if ! peer_plan "${peer_specs[@]}" > "$work/peer-plan"; then
        skip peers "the harness could not plan the peer sweeps (above)"
        continue
      fi
      group=0
      while IFS=$'\t' read -r names specs; do
        case $names in
          "skip "*) note "peers-${names#skip }" "left out: $specs"; continue ;;
        esac
        group=$((group + 1))
        read -r -a named <<< "${names//,/ }"
        read -r -a own <<< "$specs"
        mapfile -t args < <(sweep_args "${own[@]}")
        step "peers-$group" h bench "${named[@]}" --peers all --budget "$budget" --overwrite \
          "${args[@]}"
      done < "$work/peer-plan"
      step peers-graph h bench --peers all --graph --budget "$budget" --sweep batch=1,8,64 \
        --append
      ;;
    layer)
      calibrate
      # torch.compile recompiles per shape: it runs at three points, the other peers at all
      # (disjoint sweeps, so every key is measured once).
      peers=linear_fp32,linear_bf16,int_mm
      rest=$(tr ',' '\n' <<< "$layer_batches" | grep -vxE '1|1024|8192' | paste -sd, -)
      step layer-int-gemm h bench int_gemm --variant int8 --peers "$peers,torch_compile" \
        --budget "$budget" --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 \
        --sweep in_f=3584
      if [ -n "$rest" ]; then
        step layer-int-gemm-rest h bench int_gemm --variant int8 --peers "$peers" \
          --budget "$budget" --append --sweep "batch=$rest" --sweep out_f=18944 \
          --sweep in_f=3584
      fi
      step layer-int-gemm-square h bench int_gemm --variant int8 --peers "$peers" \
        --budget "$budget" --append --sweep "batch=$layer_batches" --sweep out_f=3584 \
        --sweep in_f=3584
      step layer-int-gemm-wide h bench int_gemm --variant int8 --peers "$peers" \
        --budget "$budget" --append --sweep "batch=$layer_batches" --sweep out_f=3584 \
        --sweep in_f=18944
      step layer-gemm h bench gemm --budget "$budget" --overwrite --sweep batch=1,16,1024,8192 \
        --sweep out_f=18944
      step layer-compare h compare "$stats/gemm.csv" "$stats/int_gemm.csv" --ignore stage \
        --ignore variant --ignore params
      # Beside the float layer it replaces, in the same process (the pipeline table's
      # "vs peers"): F.linear in fp32 and bf16 on x.
      step layer-spike-linear h bench spike_linear --peers linear_fp32,linear_bf16 \
        --budget "$budget" --overwrite --sweep "batch=$layer_batches" \
        --sweep out_f=18944,3584
      step layer-spike-linear-wide h bench spike_linear --peers linear_fp32,linear_bf16 \
        --budget "$budget" --append --sweep "batch=$layer_batches" --sweep out_f=3584 \
        --sweep in_f=18944
      # The layer plane by plane (binary MMAs) beside the packed-A and q8 GEMMs, one process.
      step layer-planes h bench int_gemm_planes int_gemm_packed int_gemm --budget "$budget" \
        --overwrite --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584 \
        --out "$stats/planes"
      step layer-planes-square h bench int_gemm_planes int_gemm_packed int_gemm \
        --budget "$budget" --append --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584 \
        --out "$stats/planes"
      ;;
    profile)
      if ! found variants > "$work/variants"; then
        skip profile "the harness could not list its stage variants (above)"
        continue
      fi
      while read -r stage variant axes; do
        batch=()
        case ",$axes," in *,batch,*) batch=(--batch "$profile_batch") ;; esac
        step "profile-$stage-$variant" h profile "$stage" --variant "$variant" "${batch[@]}"
      done < "$work/variants"
      ;;
    sanitize)
      if [ ${#only_stages[@]} -gt 0 ]; then  # STAGES: its stages; its pipelines said
        if ! found variants > "$work/variants" || ! found pipelines > "$work/pipelines"; then
          skip sanitize "the harness could not list its stages and pipelines (above)"
          continue
        fi
        named=()
        for s in "${only_stages[@]}"; do
          if cut -d' ' -f1 "$work/variants" | grep -qFx "$s"; then
            named+=("$s")
          elif grep -qFx "$s" "$work/pipelines"; then
            note "sanitize-$s" "a pipeline: its stages are sanitized by name"
          else
            skip "sanitize-$s" "no stage or pipeline of that name"
          fi
        done
        if [ ${#named[@]} -gt 0 ]; then step sanitize h sanitize --append "${named[@]}"; fi
        if printf '%s\n' "${only_stages[@]}" | grep -qFx spike_linear; then
          sanitize_exact_path
        fi
        continue
      fi
      step sanitize h sanitize --overwrite
      sanitize_exact_path
      ;;
    regress)
      if [ ! -d "$baseline" ]; then
        skip regress "no rows in $stats to compare against"
        continue
      fi
      for s in "${regress_leave[@]}"; do
        rm -f "$baseline/$s.csv"
        note "regress-$s" "left out (REGRESS_LEAVE)"
      done
      fresh=$logs/regress
      step regress-measure python3 -m harness.tools.replay "$baseline" "$fresh" \
        --repeats "$regress_repeats"
      for f in "$fresh"/*.csv; do
        name=$(basename "$f" .csv)
        if [ -e "$baseline/$name.csv" ]; then
          step "regress-$name" h compare "$baseline/$name.csv" "$f"
        elif [ -e "$f" ]; then
          note "regress-$name" "new: no committed rows to compare against"
        fi
      done
      # pytest-benchmark keeps a baseline per machine id and, finding none, compares
      # nothing and passes: look for this Python's first. (Its storage is read in place,
      # inside the checkout: pytest-benchmark names it relative to the working folder.)
      machine=$(python3 -c 'import platform as p
print(p.system(), p.python_implementation(), ".".join(p.python_version_tuple()[:2]),
      p.architecture()[0], sep="-")')
      save=()
      [ "$regress_save" = 1 ] && save=(--benchmark-save="${HARNESS_GIT_SHA:-run}")
      benchmarks=(python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable
                  --benchmark-storage="file://$stats/pytest-benchmark")
      if compgen -G "$stats/pytest-benchmark/$machine/*.json" >/dev/null; then
        # It compares against the newest saved run, and only the names that run holds: a
        # stage added since would pass unjudged, so it is said, and fails the phase.
        newest=$(printf '%s\n' "$stats/pytest-benchmark/$machine"/*.json | sort | tail -n 1)
        clock=$(bench_clock "$newest") || clock="(unreadable)"
        if [ "$clock" != "$event_clock" ]; then
          # Host time against event time: no comparison at all, not a wrong one. Saving
          # this run's as the next baseline is the remedy: asked for, it is a note.
          why="$(basename "$newest") was timed by $clock, not by $event_clock: no baseline\
 for these rounds"
          if [ "$regress_save" = 1 ]; then
            note regress-benchmarks "$why; this run's saved as the next"
            step regress-benchmarks-save "${benchmarks[@]}" "${save[@]}"
          else
            skip regress-benchmarks "$why (REGRESS_SAVE=1 saves this run's as the next)"
          fi
        else
          if ! missing=$(bench_missing "$newest"); then
            skip regress-benchmarks-names "the harness could not list its stages"
          elif [ -n "$missing" ]; then
            skip regress-benchmarks-names "no entry in $(basename "$newest") for: $missing\
 (REGRESS_SAVE=1 saves this run's as the next baseline)"
          fi
          step regress-benchmarks "${benchmarks[@]}" --benchmark-compare \
            --benchmark-compare-fail=median:10% \
            --benchmark-json="$logs/pytest-benchmark.json" "${save[@]}"
        fi
      else
        skip regress-benchmarks "no pytest-benchmark baseline for $machine in $stats"
        if [ "$regress_save" = 1 ]; then
          step regress-benchmarks-save "${benchmarks[@]}" "${save[@]}"
        fi
      fi
      ;;
    ab)
      if [ -z "${AB_STAGE:-}" ] || [ -z "${AB_DEFINES:-}${AB_AGAINST:-}" ] \
         || [ -z "${AB_CHECK:-}" ] || [ -z "${AB_POINTS:-}" ] || [ -z "${AB_DIR:-}" ]; then
        skip ab "AB_STAGE, AB_DEFINES or AB_AGAINST, AB_CHECK, AB_POINTS and AB_DIR must be set"
        continue
      fi
      read -r -a defs <<< "${AB_DEFINES:-}"
      build=(h bench "$AB_STAGE" --variant "${AB_VARIANT:-all}")
      for d in "${defs[@]}"; do build+=(--define "$d"); done
      [ -z "${AB_AGAINST:-}" ] || build+=(--against "$AB_AGAINST")
      dir=$stats/tuning/$AB_DIR
      read -r -a chk <<< "$AB_CHECK"
      mapfile -t args < <(sweep_args "${chk[@]}")
      if ! step ab-check "${build[@]}" --budget 0.05 --out "$logs/ab-check" "${args[@]}"; then
        skip ab-points "a build failed its check (above): no point is timed unchecked"
        continue
      fi
      IFS=';' read -r -a points <<< "$AB_POINTS"
      read -r -a flags <<< "${AB_FLAGS:-}"
      i=0
      for pt in "${points[@]}"; do
        i=$((i + 1))
        read -r -a specs <<< "$pt"
        mapfile -t args < <(sweep_args "${specs[@]}")
        mode=--overwrite
        [ -e "$dir/$AB_STAGE.csv" ] && mode=--append
        step "ab-$i" "${build[@]}" --no-verify --repeats "$tune_repeats" --budget "$budget" \
          "$mode" --out "$dir" "${flags[@]}" "${args[@]}"
      done
      step ab-best h best "$dir/$AB_STAGE.csv"
      ;;
    ceilings)
      calibrate
      # A count with a leading zero or a letter would be an arithmetic error, which ends
      # bash's loop over the phases unreported: numbers only, checked first.
      if ! [[ $ceiling_batch =~ ^[1-9][0-9]*$ ]]; then
        skip ceilings "CEILING_BATCH: '$ceiling_batch' is not a positive whole number"
        continue
      fi
      values=$((ceiling_batch * 3584))  # activation_fused's values at in_f 3584
      step ceiling-pass2 h calibrate --kind mix --writes 6 --bytes "$values"
      step ceiling-pass1 h calibrate --kind mix --reads 4 --writes 1 --bytes $((4 * values))
      for nk in "${ceiling_weights[@]}"; do
        n=${nk%x*} k=${nk#*x}
        if ! [[ $nk == *x* && $n =~ ^[1-9][0-9]*$ && $k =~ ^[1-9][0-9]*$ ]]; then
          skip "ceiling-read-$nk" "CEILING_WEIGHTS: '$nk' is not NxK"
          continue
        fi
        # int8 weights N K bytes and fp32 scales N ceil(K / 128) 4 bytes, down to whole
        # 64-byte units (the read's four 16-byte planes a thread): at most 63 bytes fewer
        bytes=$(( (n * k + n * ((k + 127) / 128) * 4) / 64 * 64 ))
        if [ "$bytes" -lt $((1 << 20)) ]; then
          skip "ceiling-read-$nk" "${n}x${k}'s operand is under 1 MiB, too small to time"
          continue
        fi
        step "ceiling-read-$nk" h calibrate --kind read --bytes "$bytes"
      done
      ;;
    tune)
      if [ ! -d "$stats/tuning" ]; then
        skip tune "no tuning sweeps in $stats/tuning to measure again"
        continue
      fi
      # The rows are added to the committed files: a sweep over a knob since taken out is
      # left out of the replay, and its rows (cited in kernels/NOTES.md) stay.
      step tune python3 -m harness.tools.replay "$stats/tuning" "$stats/tuning" --append \
        --repeats "$tune_repeats"
      pack
      ;;
  esac
done
pack
rm -rf "$work"
echo "gpu-check: exit $status (steps in $out/summary.txt)"
exit $status
