"""Trials keep off the network: a run of the user's script reaches nothing beyond this machine.

A training script talks to more than files: it posts to a chat webhook when an epoch ends,
logs to an MLflow or ClearML server, writes rows to a remote database, pushes to a hub.
Every trial of a repair runs the script again, and each would post, log and push again
(the loggers that honour an offline switch get it from ``autoclone.trial``; these do not).

In the copy-on-write world (``autoclone.isolation``) the trial also gets a network
namespace of its own, with nothing but a loopback interface (brought up, so the ranks of
one torchrun launch and a script's own local server still talk): a connection anywhere
else fails as it does on a machine without a network. Where there are no namespaces, the
audit hook refuses the same connections before they are made. Either way the hook notes
which host each run tried to reach and the user's line that did it, so the report can say
why a run failed where the user's own does not, and how to give trials the network
(``--allow-network``).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import ipaddress
import os
import socket
import struct
from collections.abc import Mapping
from typing import Any

#: Set to "1" in a trial's environment when the user gave trials the network.
ALLOW_VAR = "AUTOCLONE_NETWORK"
#: Socket events whose address is where the data goes (``socket.connect``, ``sendto``),
#: and the one that names the host before any address exists.
_SENDS = frozenset({"socket.connect", "socket.connect_ex", "socket.sendto"})
_RESOLVE = "socket.getaddrinfo"
_CLONE_NEWNET = 0x40000000
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1
#: Names that never leave the machine.
_LOCAL_NAMES = frozenset({"", "localhost", "localhost.localdomain", "ip6-localhost"})


def allowed(env: Mapping[str, str] = os.environ) -> bool:
    """Whether the user gave trials the network (``--allow-network``)."""
    return env.get(ALLOW_VAR) == "1"


def cut(libc: Any) -> None:
    """Give this process (already root of its own user namespace) a network namespace of
    its own whose loopback is up: ranks and local servers talk, nothing else is reached."""
    if libc.unshare(_CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET): "
                      f"{os.strerror(ctypes.get_errno())}")  # fmt: skip
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | _IFF_UP))


def outward(event: str, args: tuple[Any, ...], loopback: bool = False) -> str | None:
    """``host:port`` when an audit event sends to, or resolves, a host beyond this machine
    (or, with ``loopback``, sends to this machine's loopback, which a trial's own network
    does not share); None for anything else (a Unix socket, a local name, a wildcard)."""
    sends = event in _SENDS
    if sends and len(args) >= 2:
        address = args[1]
    elif event == _RESOLVE and args:
        address = (args[0], args[1] if len(args) > 1 else None)
    else:
        return None
    if not isinstance(address, tuple) or len(address) < 2:
        return None  # AF_UNIX paths and abstract names: this machine's
    host, port = address[0], address[1]
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str) or (local(host) and not (loopback and sends)):
        return None
    ip = _ip(host)
    if ip is not None and ip.is_unspecified:
        return None
    return f"{host}:{port}" if port not in (None, 0, "") else host


def local(host: str) -> bool:
    """Whether a host name or address (``host`` or ``host:port``) is this machine."""
    name = host.strip("[]").lower()
    if name in _LOCAL_NAMES or name.endswith(".localhost") or name == socket.gethostname().lower():
        return True
    if name.count(":") == 1:  # host:port (an IPv6 address has more colons)
        return local(name.rsplit(":", 1)[0])
    ip = _ip(name)
    return ip is not None and (ip.is_loopback or ip.is_unspecified)


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host is written as (``[::1]``, ``fe80::1%eth0``), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%")[0])
    except ValueError:
        return None


def refuse(event: str, host: str) -> OSError:
    """The error a refused lookup or connection raises where no namespace cuts the
    network: what a machine without one says, so the script fails as it would offline."""
    said = f"autoclone keeps trials off the network ({host}); rerun with --allow-network"
    if event == _RESOLVE:
        return socket.gaierror(socket.EAI_NONAME, said)
    return OSError(errno.ENETUNREACH, said)


def hint(hosts: Mapping[str, tuple[str, int]]) -> str:
    """Where a run failed after reaching for a host beyond this machine, most likely for
    want of the network trials do not have: what the error line adds, and the option."""
    if not hosts:
        return ""
    host, (file, line) = next(iter(hosts.items()))
    by = f" at {file}:{line}" if file else ""
    return (f" (trials have no network, and the script tried to reach {host}{by}: "
            "rerun with --allow-network to give them yours)")


def notes(hosts: Mapping[str, tuple[str, int]], shown: int = 5) -> list[str]:
    """One note per host the trials tried to reach, with the line that did it."""
    out = []
    for host, (file, line) in list(hosts.items())[:shown]:
        by = f" ({file}:{line})" if file else ""
        why = ("trials have a network of their own with only a loopback, so no server of "
               "this machine's was reached" if local(host) else "trials have no network, "
               "so that failed there and nothing was sent")  # fmt: skip
        out.append(f"a trial tried to reach {host}{by}: {why}; rerun with --allow-network "
                   "to give them yours")  # fmt: skip
    if len(hosts) > shown:
        out.append(f"and {len(hosts) - shown} more hosts the trials tried to reach")
    return out
