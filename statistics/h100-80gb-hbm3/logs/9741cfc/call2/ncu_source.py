"""One launch of a stage variant under ncu with per-instruction stall samples (SourceCounters and
WarpStateStats), printed as the SASS source page and the details page. A diagnostic."""
import subprocess
import sys
from pathlib import Path

from harness.contract import registry
from harness.engine.devices import sm_count
from harness.engine.jobs import one_point
from harness.tools import ncu

out = Path(sys.argv[1])
stage, variant = sys.argv[2], sys.argv[3]
sweep = sys.argv[4:]
reg = registry.discover()
st = reg.get(stage)
import os
defs = [d for d in os.environ.get("NCU_DEFINES", "").split(",") if d]
job = one_point(st, variant, {}, sweep, tuple(defs))
cmd = ncu.command(st, job.variant, job.point, "normal", None, None, 0, sm_count=sm_count(0))
i = cmd.index("--metrics")
del cmd[i:i + 2]
for flag in ("--csv",):
    cmd.remove(flag)
j = cmd.index("--page")
del cmd[j:j + 2]
rep = f"/tmp/{stage}"
cmd[1:1] = ["--section", "SourceCounters", "--section", "WarpStateStats", "--section",
            "SpeedOfLight", "--section", "MemoryWorkloadAnalysis", "-o", rep, "-f"]
print(" ".join(cmd), flush=True)
subprocess.run(cmd, check=True)
with open(out / "ncu-source.csv", "w") as f:
    subprocess.run([cmd[0], "--import", rep + ".ncu-rep", "--page", "source", "--csv",
                    "--print-source", "sass"], stdout=f, check=False)
with open(out / "ncu-details.txt", "w") as f:
    subprocess.run([cmd[0], "--import", rep + ".ncu-rep", "--page", "details"], stdout=f,
                   check=False)
