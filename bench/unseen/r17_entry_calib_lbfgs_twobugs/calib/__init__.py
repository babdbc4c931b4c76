from .scaling import VectorScaling, project_positive_
from .fit import fit_vector_scaling, expected_calibration_error

__all__ = ["VectorScaling", "project_positive_", "fit_vector_scaling", "expected_calibration_error"]
