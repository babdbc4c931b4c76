"""Benchmark: watch in-place writes with a TorchDispatchMode instead of a TorchFunctionMode?

Two parts, on the models of ``bench/tracer_overhead.py`` (each fixture's expert script):

1. Per-step time of the training loop, in-process, single-threaded, for:

   * ``untraced``: the script as written;
   * ``tracer``: the shipped tracer (``autoclone.trace_install.install``: saved-tensor hooks plus
     its ``TorchFunctionMode``);
   * ``dispatch watcher``: a minimal ``TorchDispatchMode`` that only watches writes: for
     every aten op it reads (once per op) which arguments the schema marks as written
     (``alias_info.is_write``), compares their versions before and after, records the
     write and bumps the version itself when the op did not (``_foreach_*_``); it records
     no saved tensors and no frames, so it is a lower bound for a dispatch-based tracer;
   * ``no-op function mode`` and ``no-op dispatch mode``: the bare cost of each kind of mode.

   Each run is a fork of this process (torch imported once) that installs one
   configuration and runs the script with EPOCHS=N; a step is one epoch, timed between
   backward calls with the main thread's CPU time (the machine is shared: wall time would
   count other processes), median over the epochs after three warm-up ones. Each of
   ``--reps`` rounds runs every configuration back to back; the table gives medians over
   the rounds, of the times and of the per-round ratios to ``untraced``.

2. Which writes each watcher sees (``x += y``, ``x[i] = v``, ``nn.ReLU(inplace=True)``,
   ``add_``, ``torch._foreach_add_``, an Adam step with ``foreach=True``) and whether the
   version counter still moves under a dispatch mode.

    OMP_NUM_THREADS=1 python bench/dispatch_mode.py [--epochs 60] [--reps 5] [fixture ...]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import runpy
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from autoclone.codemods.overrides import apply_overrides, module_constants  # noqa: E402

FIXTURES = ROOT / "fixtures"
CONFIGS = ["untraced", "tracer", "dispatch watcher", "no-op function mode", "no-op dispatch mode"]


# -- the modes --------------------------------------------------------------------------
class NoOpFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


class NoOpDispatchMode(TorchDispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


class DispatchWriteWatcher(TorchDispatchMode):
    """A minimal write watcher: which aten ops wrote into which storages."""

    def __init__(self, fix_versions: bool = True) -> None:
        super().__init__()
        self.fix_versions = fix_versions
        self.written: dict[Any, tuple[tuple[int, str], ...]] = {}  # op -> (index, name)
        self.writes: list[tuple[str, int, int, int]] = []  # op, storage, before, after
        self.unbumped: set[str] = set()  # ops that wrote without bumping the version

    def _written(self, func: Any) -> tuple[tuple[int, str], ...]:
        found = tuple(
            (i, arg.name)
            for i, arg in enumerate(func._schema.arguments)
            if arg.alias_info is not None and arg.alias_info.is_write
        )
        self.written[func] = found
        return found

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        written = self.written.get(func)
        if written is None:
            written = self._written(func)
        if not written:
            return func(*args, **kwargs)
        targets: list[torch.Tensor] = []
        for index, name in written:
            value = args[index] if index < len(args) else kwargs.get(name)
            if isinstance(value, torch.Tensor):
                targets.append(value)
            elif isinstance(value, list | tuple):
                targets.extend(v for v in value if isinstance(v, torch.Tensor))
        before = [t._version for t in targets]
        out = func(*args, **kwargs)
        for t, version in zip(targets, before, strict=True):
            if t._version == version:
                self.unbumped.add(str(func))
                if self.fix_versions:
                    torch.autograd.graph.increment_version(t)
            storage = t.untyped_storage().data_ptr()
            self.writes.append((str(func), storage, version, t._version))
        del self.writes[:-256]
        return out


def _enter(config: str, prefix: str) -> None:
    """Install one configuration for the rest of this process."""
    if config == "tracer":
        from autoclone.trace_install import install

        install(prefix)
    elif config == "dispatch watcher":
        DispatchWriteWatcher().__enter__()
    elif config == "no-op function mode":
        NoOpFunctionMode().__enter__()
    elif config == "no-op dispatch mode":
        NoOpDispatchMode().__enter__()
    elif config != "untraced":
        raise SystemExit(f"unknown configuration {config!r}")


# -- part 1: time per step --------------------------------------------------------------
def _one(case: str, config: str, epochs: int, work: Path) -> float:
    """In a fresh fork: install ``config``, run the training loop, return s per epoch."""
    expert = (FIXTURES / case / "expert.py").read_text()
    shutil.copytree(FIXTURES / case, work)
    os.chdir(work)
    sys.path.insert(0, str(work))
    script = work / "input_bench.py"
    script.write_text(apply_overrides(expert, {"EPOCHS": str(epochs)}))
    _enter(config, str(work) + os.sep)
    stamps: list[float] = []
    backward = torch.autograd.backward

    def stamped(*args: Any, **kwargs: Any) -> Any:
        stamps.append(time.thread_time())
        return backward(*args, **kwargs)

    torch.autograd.backward = stamped  # type: ignore[assignment]
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(str(script), run_name="__main__")
    return per_epoch(stamps, epochs)


def per_epoch(stamps: list[float], epochs: int, skip: int = 3) -> float:
    """Median time of one epoch, from the times of the backward calls (the first
    ``skip`` epochs warm up). CPU time of the main thread: on a shared machine wall
    time also counts the time other processes held the core."""
    every = max(1, round(len(stamps) / epochs))  # backward calls per epoch
    ends = stamps[skip * every :: every]
    if len(ends) < 3:
        raise RuntimeError(f"too few backward calls ({len(stamps)}) for {epochs} epochs")
    return statistics.median(b - a for a, b in zip(ends, ends[1:], strict=False))


def _forked(case: str, config: str, epochs: int) -> float:
    """Measure in a fork of this process: torch is imported once, no mode leaks."""
    read, write = os.pipe()
    with tempfile.TemporaryDirectory() as tmp:
        pid = os.fork()
        if pid == 0:  # the child: measure, report, leave without cleanup
            os.close(read)
            code = 0
            try:
                result = repr(_one(case, config, epochs, Path(tmp) / case))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                result, code = f"error {type(exc).__name__}: {exc}", 1
            os.write(write, result.encode())
            os._exit(code)
        os.close(write)
        with os.fdopen(read) as pipe:
            answer = pipe.read()
        os.waitpid(pid, 0)
    if answer.startswith("error"):
        raise RuntimeError(f"{case} / {config}: {answer}")
    return float(answer)


def _cases(names: list[str]) -> list[str]:
    found = []
    for case in sorted(FIXTURES.iterdir()):
        expert = case / "expert.py"
        if not expert.is_file() or "EPOCHS" not in module_constants(expert.read_text()):
            continue
        if not names or case.name in names:
            found.append(case.name)
    return found


def measure(
    case: str, configs: list[str], epochs: int, reps: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per epoch for each configuration, and its ratio to the first one: each
    round runs every configuration back to back, so a busy spell on the machine hits them
    alike; medians over the rounds (of the times, and of the per-round ratios)."""
    rounds: dict[str, list[float]] = {config: [] for config in configs}
    for _ in range(reps):
        for config in configs:
            rounds[config].append(_forked(case, config, epochs))
    base = rounds[configs[0]]
    times = {config: statistics.median(values) for config, values in rounds.items()}
    ratios = {
        config: statistics.median(t / b for b, t in zip(base, values, strict=True))
        for config, values in rounds.items()
    }
    return times, ratios


def timing_table(cases: list[str], epochs: int, reps: int) -> None:
    header = ["fixture", "untraced ms/step"] + [f"{c} ms/step (ratio)" for c in CONFIGS[1:]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    ratios: dict[str, list[float]] = {c: [] for c in CONFIGS[1:]}
    for case in cases:
        times, ratio_of = measure(case, CONFIGS, epochs, reps)
        cells = [case, f"{times['untraced'] * 1e3:.2f}"]
        for config in CONFIGS[1:]:
            ratio = ratio_of[config]
            ratios[config].append(ratio)
            cells.append(f"{times[config] * 1e3:.2f} ({ratio:.2f}x)")
        print("| " + " | ".join(cells) + " |", flush=True)
    medians = [f"{statistics.median(ratios[c]):.2f}x" for c in CONFIGS[1:]]
    print("| **median ratio** | | " + " | ".join(medians) + " |")


# -- part 2: which writes each watcher sees ---------------------------------------------
def _scenarios() -> dict[str, Callable[[torch.Tensor], None]]:
    """Writes into ``x``, a tensor autograd saved (``x = a.exp()`` saves its output)."""

    def iadd(x: torch.Tensor) -> None:
        x += torch.ones_like(x)

    def setitem(x: torch.Tensor) -> None:
        x[0] = 0.5

    def relu(x: torch.Tensor) -> None:
        torch.nn.ReLU(inplace=True)(x)

    def add_(x: torch.Tensor) -> None:
        x.add_(1.0)

    def foreach(x: torch.Tensor) -> None:
        with torch.no_grad():
            torch._foreach_add_([x], 1.0)

    return {"x += y": iadd, "x[i] = v": setitem, "nn.ReLU(inplace=True)": relu,
            "add_": add_, "torch._foreach_add_": foreach}  # fmt: skip


_KEEP: list[Any] = []  # graphs kept alive, so their saved tensors stay saved


def _setup(write: str) -> tuple[torch.Tensor, Callable[[], None]]:
    """The tensor about to be written, saved by autograd, and the write itself."""
    if write == "Adam(foreach=True).step()":
        w = torch.nn.Parameter(torch.randn(4))
        _KEEP.append((w * w).sum())  # mul saves w
        opt = torch.optim.Adam([w], lr=0.1, foreach=True)
        w.grad = torch.ones(4)
        return w, opt.step
    a = torch.randn(4, requires_grad=True)
    x = a.exp()  # exp saves its output
    _KEEP.append(x)
    scenario = _scenarios()[write]
    return x, lambda: scenario(x)


def _sees(watcher: str, write: str) -> tuple[bool, bool]:
    """Run one write under one watcher: (the write was recorded, the version moved)."""
    from autoclone.trace_install import _Watch
    from autoclone.tracer import Tracer

    if watcher == "tracer (function mode)":
        tracer = Tracer(prefix=str(ROOT) + os.sep)
        with torch.autograd.graph.saved_tensors_hooks(tracer.pack, tracer.unpack):
            target, action = _setup(write)
        storage, before = target.untyped_storage().data_ptr(), target._version
        with _Watch(tracer):
            action()
        seen = any(m.storage == storage for m in tracer.mutations)
        return seen, target._version != before
    target, action = _setup(write)
    storage, before = target.untyped_storage().data_ptr(), target._version
    mode = DispatchWriteWatcher(fix_versions=watcher.endswith("increment_version"))
    with mode:
        action()
    seen = any(w[1] == storage for w in mode.writes)
    return seen, target._version != before


def coverage_table() -> None:
    watchers = ["tracer (function mode)", "dispatch watcher",
                "dispatch watcher + increment_version"]  # fmt: skip
    writes = [*_scenarios(), "Adam(foreach=True).step()"]
    print("| write | " + " | ".join(f"{w}: seen / version bumped" for w in watchers) + " |")
    print("|" + "---|" * (len(watchers) + 1))
    for write in writes:
        cells = []
        for watcher in watchers:
            seen, bumped = _sees(watcher, write)
            cells.append(f"{'yes' if seen else 'NO'} / {'yes' if bumped else 'NO'}")
        print(f"| `{write}` | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--no-timing", action="store_true", help="only the coverage table")
    parser.add_argument("cases", nargs="*", help="fixture names (default: all)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    print("Which writes are seen (x is a tensor autograd saved):\n")
    coverage_table()
    if not args.no_timing:
        print(
            f"\nms per step (epoch): median over {args.epochs} epochs of the main thread's CPU "
            f"time, median of {args.reps} rounds, one thread:\n"
        )
        timing_table(_cases(args.cases), args.epochs, args.reps)


if __name__ == "__main__":
    main()
