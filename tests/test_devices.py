"""CUDA mapped to the CPU (``autoclone.devices``), with real torch in real processes.

The mapping changes torch for the rest of a process, so it is never installed in the test
process: this file is also the probe. ``python tests/test_devices.py mapped`` installs the
mapping and runs every check below, ``... plain`` runs them without it; each prints one
JSON object (check name -> what it returned, or ``"raised ..."``). The tests compare the
two: with the mapping each construct behaves as on the CPU, without it the same calls fail
as they do on a machine without CUDA.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn

CHECKS: dict[str, Callable[[], Any]] = {}
#: Constructors given ``device="cuda"``: what each must give is what it gives on the CPU.
FACTORIES: dict[str, Callable[[Any], torch.Tensor]] = {
    "randn": lambda d: torch.randn(2, 3, device=d),
    "rand": lambda d: torch.rand(2, device=d),
    "zeros": lambda d: torch.zeros(2, 3, device=d),
    "ones": lambda d: torch.ones(2, device=d),
    "empty": lambda d: torch.empty(2, device=d),
    "full": lambda d: torch.full((2,), 1.5, device=d),
    "tensor": lambda d: torch.tensor([1.0, 2.0], device=d),
    "arange": lambda d: torch.arange(4, device=d),
    "randint": lambda d: torch.randint(0, 9, (3,), device=d),
    "randperm": lambda d: torch.randperm(5, device=d),
    "eye": lambda d: torch.eye(2, device=d),
    "linspace": lambda d: torch.linspace(0, 1, 5, device=d),
    "normal": lambda d: torch.normal(0.0, 1.0, (3,), device=d),
    "zeros_like": lambda d: torch.zeros_like(torch.ones(2), device=d),
    "ones_like": lambda d: torch.ones_like(torch.ones(2), device=d),
    "randn_like": lambda d: torch.randn_like(torch.ones(2), device=d),
    "full_like": lambda d: torch.full_like(torch.ones(2), 3.0, device=d),
    "empty_like": lambda d: torch.empty_like(torch.ones(2), device=d),
    "new_zeros": lambda d: torch.ones(2).new_zeros(3, device=d),
    "new_tensor": lambda d: torch.ones(2).new_tensor([4.0], device=d),
    "nn.Linear": lambda d: nn.Linear(2, 2, device=d).weight,
}


def check(fn: Callable[[], Any]) -> Callable[[], Any]:
    CHECKS[fn.__name__] = fn
    return fn


@check
def is_available() -> list[Any]:
    return [torch.cuda.is_available(), torch.cuda.device_count()]


@check
def tensor_cuda() -> list[Any]:
    """As ``x.to("cpu")`` on a CPU: the tensor itself."""
    x = torch.ones(2)
    return [x.cuda().device.type, x.cuda() is x, x.cuda(0, non_blocking=True).device.type]


@check
def tensor_to() -> list[str]:
    x = torch.ones(2)
    moved = [
        x.to("cuda"),
        x.to("cuda:0"),
        x.to(torch.device("cuda")),
        x.to(torch.device("cuda", 0)),
        x.to(0),
        x.to(device="cuda", non_blocking=True),
        x.to("cuda", torch.float64),
    ]
    return [str(y.device) for y in moved] + [str(moved[-1].dtype)]


@check
def module_moves() -> list[Any]:
    """``Module.cuda``/``to`` keep the parameters (as on a CPU); training works after."""
    model = nn.Linear(3, 2)
    weight = model.weight
    model.cuda()
    model.to("cuda")
    model.to(torch.device("cuda"), torch.float64)
    model(torch.ones(1, 3, device="cuda", dtype=torch.float64)).sum().backward()
    assert model.weight.grad is not None
    return [model.weight is weight, model.weight.device.type, model.weight.grad.device.type]


@check
def factories() -> dict[str, Any]:
    """Same seed, same numbers as the CPU call (shapes only for ``empty``)."""
    out: dict[str, Any] = {}
    for name, make in FACTORIES.items():
        torch.manual_seed(0)
        try:
            mapped = make("cuda")
        except Exception as exc:  # noqa: BLE001 - each constructor on its own
            out[name] = f"raised {type(exc).__name__}"
            continue
        torch.manual_seed(0)
        plain = make("cpu")
        same = mapped.shape == plain.shape and ("empty" in name or torch.equal(mapped, plain))
        out[name] = [mapped.device.type, same]
    return out


@check
def device_objects() -> list[str]:
    device = torch.device("cuda")
    made = [torch.zeros(1, device=device), torch.randn(1, device=torch.device("cuda", 0))]
    return [t.device.type for t in made]


@check
def pin_memory() -> list[Any]:
    x = torch.ones(2)
    dataset = torch.utils.data.TensorDataset(torch.ones(4, 2))
    batches = list(torch.utils.data.DataLoader(dataset, batch_size=2, pin_memory=True))
    return [x.pin_memory() is x, torch.zeros(2, pin_memory=True).is_pinned(), len(batches)]


@check
def default_device() -> list[str]:
    torch.set_default_device("cuda")
    try:
        by_default = torch.zeros(2)
    finally:
        torch.set_default_device(None)
    with torch.device("cuda"):
        in_context = torch.ones(2)
    return [by_default.device.type, in_context.device.type]


@check
def cuda_calls() -> list[Any]:
    torch.cuda.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.set_device(0)
    torch.cuda.reset_peak_memory_stats()
    return [torch.cuda.current_device(), torch.cuda.memory_allocated()]


@check
def cuda_timing_and_device_context() -> list[Any]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    with torch.cuda.device(0):
        torch.randn(64, 64, device="cuda").sum()
    end.record()
    end.synchronize()
    milliseconds = start.elapsed_time(end)
    return [isinstance(milliseconds, float), 0.0 <= milliseconds < 60_000.0, end.query()]


@check
def autocast() -> list[Any]:
    """A no-op: the output is the float32 output, bit for bit."""
    torch.manual_seed(0)
    model, x = nn.Linear(4, 3), torch.randn(2, 4)
    plain = model(x)
    with torch.autocast("cuda", dtype=torch.float16):
        first = model(x)
    with torch.autocast(device_type="cuda"):
        second = model(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch.cuda.amp is deprecated
        with torch.cuda.amp.autocast():
            third = model(x)
    return [str(first.dtype), *(torch.equal(y, plain) for y in (first, second, third))]


def _scaled_step(scaler: Any) -> list[Any]:
    weight = torch.ones(3, requires_grad=True)
    optimizer = torch.optim.SGD([weight], lr=0.5)
    loss = (weight * torch.arange(3.0)).sum()
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    return [scaled is loss, weight.tolist()]


@check
def grad_scaler() -> list[Any]:
    """A pass-through: ``scale`` returns the loss, ``step`` is ``optimizer.step()``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old_spelling = torch.cuda.amp.GradScaler()
    return [_scaled_step(torch.amp.GradScaler("cuda")), _scaled_step(old_spelling)]


@check
def amp_warnings() -> list[str]:
    """PyTorch's "CUDA is not available" warnings are expected under the mapping."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("ignore", FutureWarning)
        torch.autocast("cuda")
        torch.amp.GradScaler("cuda")
    return [str(w.message) for w in seen]


@check
def torch_load() -> list[str]:
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    devices = []
    for location in ("cuda", torch.device("cuda:0"), None):
        buffer.seek(0)
        devices.append(torch.load(buffer, map_location=location)["w"].device.type)
    return devices


@check
def counted() -> int:
    """One count per call moved to the CPU; calls that name the CPU are not counted."""
    from autoclone import devices

    before = devices.mapped()
    x = torch.ones(1)
    x.cuda()
    x.to("cuda")
    torch.zeros(1, device="cuda")
    x.to("cpu")
    torch.zeros(1, device="cpu")
    return devices.mapped() - before


def probe(install: bool) -> dict[str, Any]:
    """Run in a child process: every check, with or without the mapping."""
    from autoclone import devices

    results: dict[str, Any] = {"installed": devices.install() if install else False}
    for name, fn in CHECKS.items():
        try:
            results[name] = fn()
        except Exception as exc:  # noqa: BLE001 - a failing construct is the datum
            results[name] = f"raised {type(exc).__name__}: {exc}"
    return results


def _probe(kind: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, kind], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def mapped() -> dict[str, Any]:
    return _probe("mapped")


@pytest.fixture(scope="module")
def plain() -> dict[str, Any]:
    return _probe("plain")


no_gpu = pytest.mark.skipif(
    torch.cuda.is_available(), reason="the mapping is for machines without CUDA"
)


@no_gpu
def test_installed_and_is_available_stays_false(mapped: dict[str, Any]) -> None:
    assert mapped["installed"] is True
    assert mapped["is_available"] == [False, 0]


@no_gpu
def test_tensor_and_module_moves_are_cpu_moves(mapped: dict[str, Any]) -> None:
    assert mapped["tensor_cuda"] == ["cpu", True, "cpu"]
    assert mapped["tensor_to"] == ["cpu"] * 7 + ["torch.float64"]
    assert mapped["module_moves"] == [True, "cpu", "cpu"]
    assert mapped["device_objects"] == ["cpu", "cpu"]


@no_gpu
def test_factories_give_the_cpu_results(mapped: dict[str, Any]) -> None:
    assert mapped["factories"] == {name: ["cpu", True] for name in FACTORIES}


@no_gpu
def test_pinning_default_device_and_cuda_calls_are_harmless(mapped: dict[str, Any]) -> None:
    assert mapped["pin_memory"] == [True, False, 2]
    assert mapped["default_device"] == ["cpu", "cpu"]
    assert mapped["cuda_calls"] == [0, 0]
    assert mapped["torch_load"] == ["cpu", "cpu", "cpu"]
    assert mapped["cuda_timing_and_device_context"] == [True, True, True]


@no_gpu
def test_autocast_is_a_no_op_and_grad_scaler_a_pass_through(mapped: dict[str, Any]) -> None:
    assert mapped["autocast"] == ["torch.float32", True, True, True]
    step = [True, [1.0, 0.5, 0.0]]  # plain SGD: w - 0.5 * [0, 1, 2]
    assert mapped["grad_scaler"] == [step, step]
    assert mapped["amp_warnings"] == []


@no_gpu
def test_mapped_calls_are_counted(mapped: dict[str, Any]) -> None:
    assert mapped["counted"] == 3


@no_gpu
def test_nothing_is_mapped_without_install(plain: dict[str, Any]) -> None:
    """The same calls fail as on any machine without CUDA, and nothing is counted."""
    assert plain["installed"] is False
    for name in ("tensor_cuda", "tensor_to", "module_moves", "device_objects", "pin_memory"):
        assert str(plain[name]).startswith("raised"), name
    for name in ("default_device", "cuda_calls", "torch_load", "cuda_timing_and_device_context"):
        assert str(plain[name]).startswith("raised"), name
    assert plain["factories"] == {name: "raised AssertionError" for name in FACTORIES}
    assert str(plain["counted"]).startswith("raised")
    assert plain["is_available"] == [False, 0]


@no_gpu
def test_amp_is_disabled_by_torch_itself(mapped: dict[str, Any], plain: dict[str, Any]) -> None:
    """What the mapping relies on: with ``is_available()`` False, PyTorch turns CUDA autocast
    and GradScaler off on its own (and says so; the mapping only silences it)."""
    assert plain["autocast"] == mapped["autocast"]
    assert plain["grad_scaler"] == mapped["grad_scaler"]
    assert len(plain["amp_warnings"]) == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_nothing_is_mapped_where_a_gpu_is_present() -> None:
    found = _probe("mapped")
    assert found["installed"] is False
    assert found["tensor_cuda"][0] == "cuda"


def test_importing_the_child_does_not_import_torch() -> None:
    """The parent imports ``autoclone.child`` for its constants: torch costs seconds."""
    code = "import sys, autoclone.child; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def _child_result(tmp_path: Path, script: str) -> dict[str, Any]:
    """One real trial child (``autoclone.child.main``) on ``script``; its result file."""
    (tmp_path / "train.py").write_text(script)
    env = {
        **os.environ,
        "AUTOCLONE_RESULT": str(tmp_path / "result.json"),
        "AUTOCLONE_SCRIPT": str(tmp_path / "train.py"),
        "AUTOCLONE_MODE": "plain",
    }
    code = "from autoclone.child import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((tmp_path / "result.json").read_text())


_TRAIN = """\
import torch
model = torch.nn.Linear(2, 1){move}
x = torch.ones(4, 2{device})
model(x).sum().backward()
print(model.weight.grad.device)
"""


@no_gpu
def test_the_trial_child_runs_a_cuda_script_and_says_so(tmp_path: Path) -> None:
    result = _child_result(tmp_path, _TRAIN.format(move=".cuda()", device=', device="cuda"'))
    assert result["status"] == "completed"
    assert result["backward"] == 1
    assert result["cuda_mapped"] == 3  # weight, bias, x


def test_the_trial_child_maps_nothing_in_a_cpu_script(tmp_path: Path) -> None:
    result = _child_result(tmp_path, _TRAIN.format(move="", device=""))
    assert result["status"] == "completed"
    assert result["cuda_mapped"] == 0


if __name__ == "__main__":
    print(json.dumps(probe(install=sys.argv[1] == "mapped")))
