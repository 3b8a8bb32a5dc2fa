"""Extended flexible joints (seed 002): their forward dynamics (a simulator plant), closed-loop modes, symbolic model
and zero dynamics. The model itself (extra elasticities on a pinocchio extended model) is
:mod:`flexrobot_ros.model.extended_model`."""
