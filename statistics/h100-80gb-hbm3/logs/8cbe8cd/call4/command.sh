# Its output folders were renamed after the run: layer-current -> layer-peers, the
# layer-current rows of call4 -> layer-peers-wide, act-current -> act-layouts (a name that
# does not go stale); the rows are as they came.
# The call's command (on the warm machine after call3), as run. Its working tree lacked
# call3's results (not unpacked here before it), so its --append to layer-current/
# spike_linear.csv began a new file: those rows are committed as they came, in
# layer-current-wide/; its act-current/ and calibration.json are taken from it.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>/dev/null; export PYTHONPATH=/tmp/site:$PWD && SHA=8cbe8cd8e571ca6e468e04809ab42bc1cc732632 OUT=$OUT LIMIT=200 KEEP=statistics bash -c 'source .dev/gpu/common.sh; G=statistics/h100-80gb-hbm3; KEEP=statistics; st 40 layer-sl-1-wide $H bench spike_linear --variant default --variant operand --peers linear_bf16,linear_fp32 --budget 0.2 --append --out $G/layer-current --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944; st 10 calibrate $H calibrate; st 90 act-layouts $H bench activation_fused --variant unidirectional --variant packed_unidirectional --variant operand_unidirectional --budget 0.2 --out $G/act-current --sweep batch=1024,4096,8192,16384,65536 --sweep in_f=3584; pack; cat $sum'
