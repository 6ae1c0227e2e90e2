//! Every scheduler mutation over one SSH session: preflight, stage, image conversion, sbatch, cancel.
