"""The ``harness`` command line: thin typer commands over the library.

Every command turns a :class:`harness.errors.HarnessError` into one line on stderr and the
error's exit status; nothing below this module prints or exits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness import bench as _bench
from harness import calibrate as _cal
from harness import compiler, families, ledger, meta, paths, registry, timing, validate
from harness.errors import BadInput, CompileError, HarnessError, ValidationFailed

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Benchmark harness for spike-stream conversion kernels (PyCUDA).")
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)
for _c in (out, err):
    if not _c.is_terminal:  # logs and CI: wide enough that tables are not truncated
        _c.width = 160

F = TypeVar("F", bound=Callable[..., Any])

Stages = Annotated[list[str] | None, typer.Argument(help="Stages (default: all).")]
DeviceOpt = Annotated[int, typer.Option("--device", help="CUDA device index.")]


def cli_errors(fn: F) -> F:
    """Print library errors as one line (plus any detail) and exit with their status."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except HarnessError as exc:
            err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
            if exc.detail:
                err.print(exc.detail, markup=False, soft_wrap=True)
            raise typer.Exit(exc.exit_code) from None

    return wrapper  # type: ignore[return-value]


def _registry() -> registry.Registry:
    reg = registry.discover()
    for p in reg.problems:
        err.print(f"[yellow]warning:[/] {escape(str(p))}", soft_wrap=True)
    return reg


def _open_gpu(device: int) -> Any:
    from harness.device import Device
    from harness.gpu import GpuRunner

    return GpuRunner(Device(device))


@app.command("list")
@cli_errors
def list_cmd() -> None:
    """List the stages found (plugins/ and the harness.stages entry points)."""
    reg = registry.discover()
    t = Table("stage", "variants", "axes (defaults)", "kernel", "source")
    for name, st in sorted(reg.stages.items()):
        axes = ", ".join(f"{a.name}={a.default}" for a in st.axes)
        t.add_row(name, ", ".join(v.name for v in st.variants), axes, st.kernel,
                  reg.sources[name])
    out.print(t)
    for p in reg.problems:
        err.print(f"[red]broken:[/] {escape(str(p))}", soft_wrap=True)
    if reg.problems:
        raise typer.Exit(1)


@app.command()
@cli_errors
def check(stages: Stages = None,
          arch: Annotated[str, typer.Option(help="nvcc target.")] = "sm_90") -> None:
    """Compile every kernel variant with nvcc (no GPU needed) and print its resources."""
    reg = _registry()
    t = Table("stage", "variant", "function", "regs", "smem B", "stack B", "spill st/ld B")
    failed = 0
    for st in reg.select(stages):
        for v in st.variants:
            try:
                res = compiler.nvcc_report(st, v, arch)
            except CompileError as exc:
                failed += 1
                err.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
                err.print(exc.detail, markup=False, soft_wrap=True)
                continue
            for r in res:
                t.add_row(st.name, v.name, r.function, str(r.registers), str(r.smem_bytes),
                          str(r.stack_bytes), f"{r.spill_stores}/{r.spill_loads}")
    out.print(t)
    if failed:
        raise typer.Exit(1)


@app.command("validate")
@cli_errors
def validate_cmd(
    stages: Stages = None,
    variant: Annotated[str, typer.Option(help="Variant name, or 'all'.")] = "all",
    family: Annotated[list[str] | None, typer.Option(help="Input family (repeat).")] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Fresh draws per case.")] = 3,
    seed: Annotated[int, typer.Option(help="Base random seed.")] = 0,
    record: Annotated[bool, typer.Option(help="Append the results to the ledger.")] = False,
    device: DeviceOpt = 0,
) -> None:
    """Validate kernels on the GPU against their NumPy references (SPEC.md's rules)."""
    reg = _registry()
    pairs = [(st, v) for st in reg.select(stages) for v in _variants(st, variant)]
    runner = _open_gpu(device)
    info = runner.device.info
    rows, failures = [], []
    t = Table("stage", "variant", "kernel hash", "cases", "passed", "worst error")
    for st, v in pairs:
        sname, vname = st.name, v.name
        results = list(validate.validate(st, v, runner, family, seeds, seed))
        passed = sum(r.ok for r in results)
        worst = validate.worst_errors(results)
        h = compiler.kernel_hash(st, v)
        t.add_row(sname, vname, h, str(len(results)), str(passed), worst)
        failures += [r for r in results if not r.ok]
        rows.append({"stage": sname, "variant": vname, "kernel_hash": h,
                     "status": "pass" if passed == len(results) else "fail",
                     "gpu": info.name, "cc": f"{info.cc[0]}.{info.cc[1]}",
                     "driver": info.driver, "cuda": info.cuda, "date": meta.now(),
                     "cases": len(results), "passed": passed, "worst_error": worst,
                     "families": ",".join(family or st.families), "seeds": seeds,
                     "git_sha": meta.git_sha()})
    out.print(t)
    for r in failures[:10]:
        err.print(r.describe(), markup=False, soft_wrap=True)
    if len(failures) > 10:
        err.print(f"... and {len(failures) - 10} more failed cases", markup=False)
    if record:
        out.print(f"recorded {len(rows)} rows in {ledger.append(rows)}", markup=False)
    if failures:
        raise ValidationFailed(f"{len(failures)} validation case(s) failed")


@app.command("bench")
@cli_errors
def bench_cmd(
    stages: Stages = None,
    sweep: Annotated[list[str] | None, typer.Option(
        help="AXIS=V1,V2 or AXIS=LO..HI (powers of two); repeat for more axes.")] = None,
    variant: Annotated[list[str] | None, typer.Option(
        help="Variant (repeat), or 'all'; default: each stage's default.")] = None,
    family: Annotated[str, typer.Option(help="Input family.")] = "normal",
    backend: Annotated[str, typer.Option(help="pycuda, numpy, or auto.")] = "auto",
    hot: Annotated[bool, typer.Option(help="Skip the L2 flush before each sample.")] = False,
    budget: Annotated[float, typer.Option(min=0.01, help="Seconds of sampling per point.")]
    = 2.0,
    verify: Annotated[bool, typer.Option(help="Check each point against the reference.")]
    = True,
    seed: Annotated[int, typer.Option(help="Random seed of the inputs.")] = 0,
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Folder for <stage>.csv (default statistics/<gpu>/).")] = None,
    append: Annotated[bool, typer.Option(help="Append to existing CSVs.")] = False,
    device: DeviceOpt = 0,
) -> None:
    """Time stages over a sweep with CUDA events and write one CSV row per point."""
    families.check_family(family)
    if backend not in ("auto", "pycuda", "numpy"):
        raise HarnessError(f"unknown backend {backend!r} (known: auto, pycuda, numpy)")
    reg = _registry()
    jobs = _bench.plan(reg.select(stages), sweep or [], variant)
    runner, note = _choose_runner(backend, device)
    if runner.backend == "numpy":
        if not sweep:  # keep the CPU fallback quick: the default sweep's small points only
            jobs = [j for j in jobs if j.stage.bytes_moved(j.point) <= 1 << 26]
        budget = min(budget, 0.5)
        err.print(f"[yellow]{escape(note)}: timing the NumPy references on the CPU instead "
                  "(backend=numpy, no GPU numbers).[/]", soft_wrap=True)
        run_meta = _bench.RunMeta(gpu="cpu", git_sha=meta.git_sha(), command=meta.command_line())
        slug = "cpu"
    else:
        info = runner.device.info
        cal = _cal.load(info.slug)
        if cal is None:
            err.print(f"[yellow]no calibration for {escape(info.name)}: pct_peak left empty "
                      "(run `harness calibrate`).[/]", soft_wrap=True)
        run_meta = _bench.RunMeta(info.name, info.driver, info.cuda, meta.git_sha(),
                                  meta.command_line(), cal["gbps"] if cal else None)
        slug = info.slug
    cfg = _bench.BenchConfig(family, seed, timing.TimingConfig(budget_s=budget, cold=not hot),
                             verify)
    dest = out_dir or (paths.statistics_dir() / slug)
    rows: list[dict[str, Any]] = []
    try:
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, transient=False) as prog:
            task = prog.add_task("bench", total=len(jobs))
            for row in _bench.run(jobs, runner, cfg, run_meta, dest, append):
                rows.append(row)
                prog.update(task, advance=1,
                            description=f"{row['stage']} batch={row['batch']}")
    except KeyboardInterrupt:
        err.print(f"interrupted: {len(rows)} finished row(s) kept in {dest}/", markup=False)
        raise typer.Exit(130) from None
    finally:
        out.print(_summary(rows))
    out.print(f"wrote {len(rows)} row(s) to {dest}/", markup=False)
    if any(r["status"] == "failed" for r in rows):
        raise typer.Exit(1)


def _variants(stage: Any, name: str) -> list[Any]:
    if name == "all":
        return list(stage.variants)
    try:
        return [stage.variant(name)]
    except KeyError:
        known = ", ".join(v.name for v in stage.variants)
        raise BadInput(f"stage {stage.name} has no variant {name!r} (variants: {known})") \
            from None


def _choose_runner(backend: str, device: int) -> tuple[Any, str]:
    from harness.cpu import NumpyRunner
    from harness.errors import GpuUnavailable

    if backend == "numpy":
        return NumpyRunner(), "backend numpy asked for"
    try:
        return _open_gpu(device), ""
    except GpuUnavailable as exc:
        if backend == "pycuda":
            raise
        return NumpyRunner(), f"no GPU ({exc})"


def _summary(rows: list[dict[str, Any]]) -> Table:
    t = Table("stage", "backend", "variant", "batch", "in_f", "median µs", "± noise",
              "GB/s", "% peak", "status")
    for r in rows:
        ok = r["status"] == "ok"
        t.add_row(str(r["stage"]), str(r["backend"]), str(r["variant"]), str(r["batch"]),
                  str(r["in_f"]), f"{r['median_us']:.2f}" if ok else "-",
                  f"{r['noise_pct']:.2f}%" if ok else "-",
                  f"{r['gbps']:.0f}" if ok else "-",
                  f"{r['pct_peak']:.1f}" if ok and r["pct_peak"] != "" else "-",
                  r["status"] if ok else escape(f"{r['status']}: {str(r['reason'])[:60]}"))
    return t


@app.command()
@cli_errors
def calibrate(
    device: DeviceOpt = 0,
    nbytes: Annotated[int, typer.Option("--bytes", min=1 << 20, help="Bytes copied.")]
    = _cal.COPY_BYTES,
) -> None:
    """Measure the device-to-device copy bandwidth (read + write) and store it."""
    runner = _open_gpu(device)
    t, gbps = runner.copy_bandwidth(nbytes, timing.TimingConfig(budget_s=3.0))
    info = runner.device.info
    rec = {"gpu": info.name, "device": info.as_dict(), "bytes_each_way": nbytes,
           "median_us": t.median_us, "p10_us": t.p10_us, "p90_us": t.p90_us,
           "noise_pct": t.noise_pct, "samples": t.samples, "gbps": gbps,
           "method": "memcpy_dtod_async, L2 flushed, bytes read + written over median",
           "date": meta.now(), "git_sha": meta.git_sha()}
    p = _cal.save(rec, info.slug)
    out.print(f"{info.name}: copy bandwidth {gbps:.0f} GB/s (read + write; median "
              f"{t.median_us:.1f} µs ± {t.noise_pct:.2f}%, {t.samples} samples) -> {p}",
              markup=False)


@app.command("ledger")
@cli_errors
def ledger_cmd(
    check_: Annotated[bool, typer.Option("--check", help="Fail when a kernel's current "
                                         "source has no passing GPU validation.")] = False,
    path: Annotated[Path | None, typer.Option(help="Ledger CSV.")] = None,
) -> None:
    """Show, for every kernel variant at its current source, its GPU validation record."""
    reg = _registry()
    status = ledger.check(reg.select(None), ledger.read(path))
    for s in status:
        out.print(("[green]ok[/]      " if s.ok else "[red]MISSING[/] ") + escape(s.describe()),
                  soft_wrap=True)
    missing = [s for s in status if not s.ok]
    if check_ and missing:
        raise HarnessError(f"{len(missing)} kernel variant(s) without a passing GPU "
                           "validation at their current source")
    if check_ and reg.problems:
        raise HarnessError(f"{len(reg.problems)} plugin(s) failed to load")


def main() -> None:
    """Entry point of the ``harness`` console script."""
    app()


if __name__ == "__main__":
    main()
