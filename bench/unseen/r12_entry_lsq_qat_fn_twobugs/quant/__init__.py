from .lsq import LSQQuantizer, QuantAct, QuantLinear

__all__ = ["LSQQuantizer", "QuantAct", "QuantLinear"]
