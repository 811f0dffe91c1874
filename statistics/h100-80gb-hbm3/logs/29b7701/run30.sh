#!/usr/bin/env bash
# The GPU test suite again, after its stale expectations were mended (every test marked gpu).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics
st 420 pytest-gpu python3 -m pytest -m gpu -p no:cacheprovider -rA tests
pack
cat $sum
