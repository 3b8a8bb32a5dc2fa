"""The kinematic tree of a URDF (links and joints as the XML names them) and the chain between two of its links.

A URDF is a tree: every link but the root is the child of exactly one joint. The *chain* from link ``base`` to a
link ``tip`` below it is the list of joints on the path between them, base first; its *movable* joints (every type
but ``fixed``) are the ones a flexibility YAML makes elastic.

Default tip (:meth:`KinematicTree.default_tip`), deterministic: descend from ``base``; at each link, follow the
child joint whose subtree holds the longest run of movable joints in series (counting that joint); when two or more
children tie for that longest run (the two fingers of a gripper, the fingers of a hand, the two arms of a torso),
stop at this link; when only fixed joints remain below, follow a single fixed child and stop where there are
several (or none). On the Panda this stops at ``panda_hand`` (the fingers tie), on the TIAGo at ``hand_palm_link``.
"""
from __future__ import annotations

from dataclasses import dataclass

from flexrobot_ros.errors import ModelError
from flexrobot_ros.model.urdf_source import urdf_root


@dataclass(frozen=True)
class TreeJoint:
    """One URDF joint: ``kind`` is the URDF type (revolute, continuous, prismatic, fixed, floating, planar)."""

    name: str
    kind: str
    parent: str
    child: str

    @property
    def movable(self) -> bool:
        return self.kind != "fixed"


class KinematicTree:
    """Links and joints of a URDF text; ``source`` (a file) names it in errors."""

    def __init__(self, text: str, source: str) -> None:
        root = urdf_root(text, source)
        self.source = source
        self.robot_name = root.get("name") or "robot"
        self.links: tuple[str, ...] = tuple(link.get("name", "") for link in root.findall("link"))
        joints = []
        for element in root.findall("joint"):
            parent, child = element.find("parent"), element.find("child")
            if parent is None or child is None:
                raise ModelError(f"URDF {source}: joint {element.get('name')!r} lacks a <parent> or <child> link")
            joints.append(TreeJoint(element.get("name", ""), element.get("type", ""), parent.get("link", ""),
                                    child.get("link", "")))
        self.joints: tuple[TreeJoint, ...] = tuple(joints)
        self._above = {joint.child: joint for joint in joints}
        self._below: dict[str, list[TreeJoint]] = {}
        for joint in joints:
            self._below.setdefault(joint.parent, []).append(joint)
        roots = [link for link in self.links if link not in self._above]
        if len(roots) != 1:
            raise ModelError(f"URDF {source}: expected one root link (a link that is no joint's child), found "
                             f"{roots}")
        self.root: str = roots[0]
        self._depth: dict[str, int] = {}

    def check_link(self, link: str, what: str) -> str:
        """``link`` when the URDF has it, else a ModelError naming ``what`` (e.g. 'base link') and the file."""
        if link not in self.links:
            raise ModelError(f"{what} {link!r}: no such link in URDF {self.source} (its root link is {self.root!r}, "
                             f"{len(self.links)} links)")
        return link

    def children(self, link: str) -> list[TreeJoint]:
        """The joints whose parent is ``link``, in the URDF's order."""
        return list(self._below.get(link, ()))

    def chain(self, base: str, tip: str) -> list[TreeJoint]:
        """The joints from ``base`` down to ``tip`` (base first); a ModelError when ``tip`` is not below ``base``."""
        self.check_link(base, "base link")
        self.check_link(tip, "tip link")
        path, link = [], tip
        while link != base:
            joint = self._above.get(link)
            if joint is None:
                raise ModelError(f"tip link {tip!r} is not below base link {base!r} in URDF {self.source} (the path "
                                 f"from the root {self.root!r} to {tip!r} does not pass {base!r})")
            path.append(joint)
            link = joint.parent
        return path[::-1]

    def movable_depth(self, link: str) -> int:
        """The longest run of movable joints in series below ``link`` (0 for a leaf or fixed joints only)."""
        if link not in self._depth:
            self._depth[link] = max((int(joint.movable) + self.movable_depth(joint.child)
                                     for joint in self.children(link)), default=0)
        return self._depth[link]

    def default_tip(self, base: str) -> str:
        """The tip of the longest chain below ``base`` by the rule of the module docstring."""
        link = self.check_link(base, "base link")
        while True:
            below = self.children(link)
            runs = [int(joint.movable) + self.movable_depth(joint.child) for joint in below]
            longest = max(runs, default=0)
            leaders = [joint for joint, run in zip(below, runs) if run == longest]
            if len(leaders) != 1:
                return link
            link = leaders[0].child

    def fixed_frames_below(self, link: str) -> list[str]:
        """The links hanging from ``link`` through fixed joints only (tool flanges, TCPs: other tool frames)."""
        found = []
        for joint in self.children(link):
            if not joint.movable:
                found += [joint.child] + self.fixed_frames_below(joint.child)
        return found


__all__ = ["KinematicTree", "TreeJoint"]
