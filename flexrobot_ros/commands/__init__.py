"""Subcommands of the ``flexrobot`` command line tool (see ``flexrobot_ros.cli``).

May import anything of the package (the top layer; ``bringup`` starts the nodes).
"""
