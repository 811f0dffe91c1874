#!/usr/bin/env bash
# On the same warm machine as run47 (no source changed since): the GPU test suite whole.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics
st 330 pytest-gpu python3 -m pytest -m gpu -rA -p no:cacheprovider tests
pack
tail -3 $base/logs/pytest-gpu.log
cat $sum
