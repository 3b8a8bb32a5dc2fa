"""Inverse dynamics of the extended flexible-joint model as a DAE (seed 002): its symbolic model (CasADi, eq. 1),
k-step BDF on the index-3/2/1 systems (eqs. 17-19), the discretized-DAE optimization (eqs. 25-26) and the continuous
one (eqs. 27-29), and the zero dynamics that choose between them (section 10)."""
