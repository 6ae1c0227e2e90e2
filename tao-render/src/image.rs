//! Container image names: the one normalisation lives in
//! [`tao_core::image`] (tao-record checks `--image` with it too); this
//! module re-exports it under its old path.

pub use tao_core::image::*;
