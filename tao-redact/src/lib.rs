//! Secret lint gate for sbatch scripts and a streaming redaction filter for logs.
