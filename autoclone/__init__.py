"""autoclone: repair PyTorch scripts that crash in autograd with a minimal, verified patch."""

from importlib.metadata import PackageNotFoundError, version

try:  # one source of truth: pyproject.toml, as installed
    __version__ = version("autoclone")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"
