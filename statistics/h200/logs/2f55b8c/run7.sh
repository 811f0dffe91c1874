#!/usr/bin/env bash
# act_one at batch 1 as it was (0ff4840's source) against the current source, in one process
# (oldnew.py: the harness's sampler, graphs and streams, k 3 and 4, five rounds alternated).
set -u
export HARNESS_GIT_SHA=${SHA}
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/logs
timeout 200 python3 .dev/gpu/oldnew.py 3584 2>&1 | tee $OUT/logs/oldnew.log
