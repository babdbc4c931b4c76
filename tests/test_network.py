"""Trials reach nothing beyond their own loopback unless the user gives them the network.

A real script with a real autograd bug posts each epoch's loss to a webhook (a server this
test runs on the machine's loopback, as a local MLflow or a chat relay would be) and to a
host on the internet. ``fix`` repairs it without either receiving a byte, and the report
names each host with the line that reached for it; ``--allow-network`` gives the trials
the network, and the posts arrive. A script that cannot start without the network fails
in the trial with one line that says why and what to pass.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoclone import isolation, network

SCRIPT = textwrap.dedent(
    """\
    import json, os, urllib.request
    import torch

    def notify(url, text):
        request = urllib.request.Request(url, data=json.dumps({"text": text}).encode())
        try:
            urllib.request.urlopen(request, timeout=2)
        except OSError as exc:
            print("notify failed:", exc)

    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for epoch in range(3):
        out = torch.sigmoid(model(x))
        out *= 2
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        notify(os.environ["HOOK_URL"], f"epoch {epoch} loss {loss.item():.4f}")
        notify("http://hooks.example.invalid/relay", "done")
    """
)

NEEDS_NETWORK = textwrap.dedent(
    """\
    import urllib.request
    import torch
    rows = urllib.request.urlopen("http://data.example.invalid/train.csv", timeout=2).read()
    x = torch.ones(3, requires_grad=True)
    y = torch.sigmoid(x)
    y.mul_(2)
    y.sum().backward()
    """
)


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[bytes]]]:
    """A server on this machine's loopback that keeps every body posted to it."""
    got: list[bytes] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the standard library's name
            got.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", got
    finally:
        server.shutdown()
        server.server_close()


def _autoclone(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "autoclone", *args], cwd=folder, capture_output=True,
        text=True, timeout=300, check=False, env={**os.environ, **env},
    )  # fmt: skip


needs_namespaces = pytest.mark.skipif(
    bool(isolation.available()), reason=f"no isolation here: {isolation.available()}"
)


@needs_namespaces
def test_trials_post_nothing_and_the_report_names_each_host(
    tmp_path: Path, webhook: tuple[str, list[bytes]]
) -> None:
    url, got = webhook
    (tmp_path / "train.py").write_text(SCRIPT)
    run = _autoclone(tmp_path, "fix", "train.py", "--dry-run", "--format", "json", HOOK_URL=url)
    report = json.loads(run.stdout)
    assert report["status"] == "fixed", run.stderr
    assert got == []  # not one post reached the machine's own loopback
    port = url.split(":")[2].split("/")[0]
    notes = "\n".join(report["notes"])
    assert f"127.0.0.1:{port} (train.py:7)" in notes, notes
    assert "hooks.example.invalid:80 (train.py:7)" in notes, notes
    allowed = _autoclone(tmp_path, "fix", "train.py", "--dry-run", "--allow-network",
                         "--format", "json", HOOK_URL=url)  # fmt: skip
    assert json.loads(allowed.stdout)["status"] == "fixed", allowed.stderr
    assert b'{"text": "epoch 2 loss' in b"".join(got)  # the patched run posted for real


@pytest.mark.parametrize("mode", ["auto", isolation.GUARD])
def test_a_script_that_needs_the_network_gets_one_line_naming_the_option(
    tmp_path: Path, mode: str
) -> None:
    """With namespaces the kernel cuts the network; without, the audit hook refuses the
    lookup before it is made. Either way: exit 1, one line, the host, the line, the option."""
    (tmp_path / "dl.py").write_text(NEEDS_NETWORK)
    env = {"AUTOCLONE_ISOLATION": mode} if mode != "auto" else {}
    run = _autoclone(tmp_path, "fix", "dl.py", "--dry-run", **env)
    assert run.returncode == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert "data.example.invalid:80 at dl.py:3" in last and "--allow-network" in last, last


@pytest.mark.parametrize(
    ("event", "args", "loopback", "expected"),
    [
        ("socket.connect", (None, ("10.1.2.3", 443)), False, "10.1.2.3:443"),
        ("socket.sendto", (None, ("2001:db8::1", 53, 0, 0)), False, "2001:db8::1:53"),
        ("socket.getaddrinfo", ("pypi.org", 443, 0, 0, 0), False, "pypi.org:443"),
        ("socket.getaddrinfo", ("localhost", 5000, 0, 0, 0), True, None),
        ("socket.getaddrinfo", (None, 0, 0, 0, 0), True, None),
        ("socket.connect", (None, ("127.0.0.1", 5000)), False, None),
        ("socket.connect", (None, ("127.0.0.1", 5000)), True, "127.0.0.1:5000"),
        ("socket.connect", (None, "/run/user/0/bus"), True, None),
        ("socket.connect", (None, ("0.0.0.0", 80)), True, None),
        ("socket.bind", (None, ("10.1.2.3", 80)), True, None),
    ],
)
def test_which_socket_events_reach_beyond_the_trial(
    event: str, args: tuple[object, ...], loopback: bool, expected: str | None
) -> None:
    assert network.outward(event, args, loopback=loopback) == expected


def test_the_machines_own_name_is_local() -> None:
    assert network.local(socket.gethostname())
    assert network.local("localhost:8080") and network.local("[::1]")
    assert not network.local("example.com") and not network.local("10.0.0.1")
