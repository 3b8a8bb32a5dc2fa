"""Serial chain or tree: where a pinocchio model's joints branch (``model.parents``).

Pinocchio numbers the joints in topological order (every parent before its children). The model is a serial chain
when each joint's parent is the joint before it; otherwise the first joint that breaks the rule is where the tree
branches: off a joint that already has a child (a gripper's second finger, a head beside an arm) or off the base (two
chains on one base, e.g. once the joint they shared is locked).
"""
from __future__ import annotations

from dataclasses import dataclass

import pinocchio as pin


@dataclass(frozen=True)
class Branch:
    """The first branching of a tree: ``joint`` is a child of ``parent`` (None: the base), as is ``sibling`` before
    it (pinocchio joint names)."""

    joint: str
    parent: str | None
    sibling: str

    def __str__(self) -> str:
        where = "the base" if self.parent is None else repr(self.parent)
        return f"joint {self.joint!r} branches off {where} beside {self.sibling!r}"


def first_branch(model: pin.Model) -> Branch | None:
    """The first joint of ``model`` whose parent is not the joint before it, or None for a serial chain."""
    for j in range(2, model.njoints):
        parent = int(model.parents[j])
        if parent != j - 1:
            sibling = next(model.names[k] for k in range(1, j) if int(model.parents[k]) == parent)
            return Branch(model.names[j], None if parent == 0 else model.names[parent], sibling)
    return None


__all__ = ["Branch", "first_branch"]
