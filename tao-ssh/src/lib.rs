//! The SSH transport of tao-slurm.
