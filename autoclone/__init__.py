"""autoclone: repair PyTorch scripts that crash in autograd with a minimal, verified patch."""

__version__ = "0.1.0"
