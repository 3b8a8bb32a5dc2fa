"""Flexible links: beam shape functions (assumed modes, finite elements), the link model, and the dynamics of
serial chains mixing rigid and flexible links (seed 003, DeNOC)."""
