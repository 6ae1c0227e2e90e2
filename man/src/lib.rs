//! Man pages and shell completions for the tao-slurm tools.
