"""Stage the CUTLASS headers for a GPU machine that reaches no package index: a wheel of
the ``nvidia-cutlass`` distribution installed in this Python, written into a folder
(default ``.whl/``, where ``scripts/gpu-check.sh`` installs every staged wheel from).

    python scripts/stage-cutlass-wheel.py [FOLDER]

The wheel holds the files the installed distribution's RECORD lists (its packages and
dist-info; entries outside site-packages, such as scripts, and byte-code left out), under
the tag its WHEEL file gives, so it installs as the same version, and the kernel hash,
which counts that version, is the one validated; a wheel of another version already in the
folder is removed. Exit 2 with one line where the distribution is not installed or its
RECORD is missing."""

from __future__ import annotations

import csv
import sys
import zipfile
from importlib import metadata
from pathlib import Path

DIST = "nvidia-cutlass"


def stage(folder: Path) -> Path:
    """Write the wheel into ``folder``; returns its path."""
    dist = metadata.distribution(DIST)
    record = dist.read_text("RECORD")
    if record is None:
        raise LookupError(f"{DIST}: its RECORD is missing, so its files are unknown")
    base = Path(str(dist.locate_file("")))
    # The tag the distribution was built with (its WHEEL file), so the wheel says what it is.
    wheel = dist.read_text("WHEEL") or ""
    tags = [ln.split(":", 1)[1].strip() for ln in wheel.splitlines() if ln.startswith("Tag:")]
    if len(tags) != 1:
        raise LookupError(f"{DIST}: its WHEEL file gives {len(tags)} tags, not one")
    name = f"{DIST.replace('-', '_')}-{dist.version}-{tags[0]}.whl"
    folder.mkdir(parents=True, exist_ok=True)
    # One version in the folder: gpu-check.sh installs every wheel there.
    for old in folder.glob(f"{DIST.replace('-', '_')}-*.whl"):
        old.unlink()
    out = folder / name
    tmp = out.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for row in csv.reader(record.splitlines()):
            rel = row[0] if row else ""
            if not rel or rel.startswith("..") or "__pycache__" in rel:
                continue
            if (base / rel).is_file():
                z.write(base / rel, rel)
    tmp.replace(out)
    return out


def main(argv: list[str]) -> int:
    if len(argv) > 1:
        print("usage: python scripts/stage-cutlass-wheel.py [FOLDER]", file=sys.stderr)
        return 2
    try:
        out = stage(Path(argv[0] if argv else ".whl"))
    except (metadata.PackageNotFoundError, LookupError) as e:
        print(f"error: {DIST} not staged: {e} (pip install '.[cutlass]' first)", file=sys.stderr)
        return 2
    print(f"staged {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
