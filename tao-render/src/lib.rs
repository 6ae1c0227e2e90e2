//! Render a job line into an sbatch script from askama templates compiled into the binary.
