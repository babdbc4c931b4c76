"""Instance discrimination with a non-parametric memory bank (Wu et al. 2018)."""
