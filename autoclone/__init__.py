"""autoclone: repair PyTorch scripts that crash in autograd with a minimal, verified patch."""

from importlib.metadata import PackageNotFoundError, version

try:  # one source of truth: pyproject.toml, as installed
    __version__ = version("autoclone")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext autoclone``: register the ``%autoclone`` line magic (autoclone.magic).
    Imported here, not above: ``import autoclone`` stays light and IPython optional."""
    from autoclone import magic

    magic.load(ipython)
