"""Subcommands of the ``flexrobot`` command line tool (see ``flexrobot_ros.cli``)."""
