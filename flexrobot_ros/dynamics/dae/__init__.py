"""Inverse dynamics of the extended flexible-joint model as a DAE (seed 002): the composed model's terms in the DAE's
coordinates (CasADi, eq. 1: :mod:`.symbolic`; tool-point coordinates: :mod:`.tool_axes`),
k-step BDF on the index-3/2/1 systems (eqs. 17-19), the discretized-DAE optimization (eqs. 25-26) and the continuous
one (eqs. 27-29), and the zero dynamics that choose between them (section 10)."""
