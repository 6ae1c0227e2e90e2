//! Container image names: every accepted spelling normalised to the
//! Pyxis/Enroot form, and the `.sqsh` cache name derived from it.
//!
//! Accepted (docs/CONTRACT.md, `image`): `/abs/path.sqsh`,
//! `registry#image:tag`, `docker://registry#image:tag`,
//! `registry/image:tag` and `docker://registry/image:tag`. Enroot and Pyxis
//! name a registry with `#` (enroot-import(1): `docker://[USER@][REGISTRY#]IMAGE[:TAG]`;
//! Pyxis `--container-image`); Enroot 3.x reads `docker://nvcr.io/x` as an
//! image *on Docker Hub* called `nvcr.io/x`, so the `/` form is rewritten
//! when its first component is a registry host (Docker's rule: it contains
//! a `.` or `:`, or is `localhost`). A missing tag becomes `:latest`, so
//! `a#b` and `a#b:latest` share one cache file.
//!
//! A `.sqsh` path must be absolute (Pyxis reads a relative name as a
//! registry image) and of `[A-Za-z0-9._/+@-]`.
//!
//! tao-record checks `--image` and tao-render plans the container with
//! this one function, so a request one accepts the other renders.

use crate::{sha256_hex, Error, Result};

/// Whether `image` names a squashfs file (ends in `.sqsh`).
pub fn is_sqsh(image: &str) -> bool {
    image.ends_with(".sqsh")
}

fn bad(image: &str, why: &str) -> Error {
    Error::Data(format!("image {image:?}: {why}"))
}

fn registry_like(first: &str) -> bool {
    first.contains('.') || first.contains(':') || first == "localhost"
}

/// Normalise an image reference to the Pyxis/Enroot form.
///
/// Input: any accepted spelling (see the module doc). Output: an absolute
/// `.sqsh` path unchanged, or `[REGISTRY#]IMAGE:TAG` / `[REGISTRY#]IMAGE@DIGEST`,
/// e.g. `docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt` becomes
/// `nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt` and `ubuntu` becomes
/// `ubuntu:latest` (Docker Hub).
///
/// Errors: [`Error::Data`] for a relative `.sqsh` path (Pyxis would read it
/// as a registry name), a path that is not a `.sqsh`, an empty name, or
/// characters outside `[A-Za-z0-9._/:#@-]`.
pub fn normalise_image(image: &str) -> Result<String> {
    if is_sqsh(image) {
        if !image.starts_with('/') {
            return Err(bad(
                image,
                "a .sqsh image must be an absolute path (Pyxis reads a relative name as a registry image); give the full path",
            ));
        }
        if let Some(c) = image
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || "._/+@-".contains(*c)))
        {
            return Err(bad(
                image,
                &format!(
                    "the path holds {c:?}; give a path of [A-Za-z0-9._/+@-] (rename the file)"
                ),
            ));
        }
        return Ok(image.to_string());
    }
    if image.starts_with('/') || image.starts_with("./") || image.starts_with("file:") {
        return Err(bad(
            image,
            "a file image must be a squashfs file ending in .sqsh; convert it with enroot first",
        ));
    }
    let rest = image.strip_prefix("docker://").unwrap_or(image);
    if rest.is_empty()
        || !rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/:#@-".contains(c))
    {
        return Err(bad(
            image,
            "use registry#image:tag, docker://registry#image:tag, registry/image:tag or /abs/path.sqsh",
        ));
    }
    let (registry, name) = match rest.split_once('#') {
        Some((r, n)) => (Some(r), n),
        None => match rest.split_once('/') {
            Some((first, n)) if registry_like(first) => (Some(first), n),
            _ => (None, rest),
        },
    };
    if name.is_empty() || name.contains('#') || registry == Some("") {
        return Err(bad(
            image,
            "empty registry or image name; use registry#image:tag",
        ));
    }
    if name.starts_with('/') || name.ends_with('/') || name.contains("//") {
        return Err(bad(image, "empty path component in the image name"));
    }
    // A tag is a `:` after the last `/`; a digest is `@sha256:...`.
    let last = name.rsplit('/').next().unwrap_or(name);
    let name = if last.contains(':') || last.contains('@') {
        name.to_string()
    } else {
        format!("{name}:latest")
    };
    Ok(match registry {
        Some(r) => format!("{r}#{name}"),
        None => name,
    })
}

/// The conversion-cache file name of a registry image:
/// `<slug>-<hash12>.sqsh` under `<base_dir>/images/`.
///
/// Input: any accepted registry spelling (normalised first). Output: a file
/// name of `[A-Za-z0-9._-]` only: the normalised name with every other
/// character turned into `_`, then `-` and the first 12 hex digits of the
/// SHA-256 of the normalised name (so `a/b:c` and `a:b/c`, equal as slugs,
/// stay apart), then `.sqsh`. At most 200 bytes.
///
/// Errors: [`Error::Data`] when the image is already a `.sqsh` path (it
/// needs no conversion) or does not normalise (see [`normalise_image`]).
pub fn sqsh_name(image: &str) -> Result<String> {
    let norm = normalise_image(image)?;
    if is_sqsh(&norm) {
        return Err(bad(
            image,
            "already a .sqsh file; it needs no conversion-cache name",
        ));
    }
    let mut slug: String = norm
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    slug.truncate(180);
    let hash = sha256_hex(norm.as_bytes());
    Ok(format!("{slug}-{}.sqsh", &hash[..12]))
}

/// Whether `image` names the moving tag `latest` once normalised (a
/// missing tag is `latest`); a digest (`@sha256:...`) never is.
///
/// Errors: as [`normalise_image`].
pub fn is_latest(image: &str) -> Result<bool> {
    let norm = normalise_image(image)?;
    Ok(!norm.contains('@') && norm.ends_with(":latest"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_normalises_to_the_pyxis_form() {
        let want = "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt";
        for given in [
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
            "docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
        ] {
            assert_eq!(normalise_image(given).unwrap(), want, "{given}");
        }
        assert_eq!(normalise_image("ubuntu").unwrap(), "ubuntu:latest");
        assert!(is_latest("ubuntu").unwrap());
        assert!(is_latest("nvcr.io/nvidia/tao/tao-toolkit:latest").unwrap());
        assert!(!is_latest("nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt").unwrap());
        assert!(!is_latest(
            "ubuntu@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
        )
        .unwrap());
        assert_eq!(
            normalise_image("nvidia/cuda:12.4").unwrap(),
            "nvidia/cuda:12.4"
        );
        assert_eq!(
            normalise_image("localhost:5000/x").unwrap(),
            "localhost:5000#x:latest"
        );
        assert_eq!(
            normalise_image("reg.io#img@sha256:abcd").unwrap(),
            "reg.io#img@sha256:abcd"
        );
        assert_eq!(normalise_image("/images/x.sqsh").unwrap(), "/images/x.sqsh");
    }

    #[test]
    fn refusals_name_the_fix() {
        let rel = normalise_image("images/x.sqsh").unwrap_err().to_string();
        assert!(rel.contains("absolute path"), "{rel}");
        assert!(normalise_image("./x.sqsh").is_err());
        assert!(normalise_image("/images/x.tar").is_err());
        for bad in [
            "",
            "/a b.sqsh",
            "/a,b.sqsh",
            "docker://",
            "a b",
            "nvcr.io#",
            "#x",
            "a#b#c",
            "x;rm",
            "reg.io//x",
            "a$(b)",
        ] {
            assert!(normalise_image(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn cache_names_are_stable_and_distinct() {
        let a = sqsh_name("nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt").unwrap();
        assert_eq!(
            a,
            sqsh_name("docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt").unwrap()
        );
        assert!(
            a.starts_with("nvcr.io_nvidia_tao_tao-toolkit_5.5.0-pyt-"),
            "{a}"
        );
        assert!(a.ends_with(".sqsh"));
        assert!(a
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)));
        assert_ne!(
            sqsh_name("r.io#a/b:c").unwrap(),
            sqsh_name("r.io#a:b/c").unwrap()
        );
        assert_eq!(
            sqsh_name("r.io#a").unwrap(),
            sqsh_name("r.io#a:latest").unwrap()
        );
        assert!(sqsh_name("/x.sqsh").is_err());
        assert!(
            sqsh_name(&format!("r.io#{}", "a".repeat(300)))
                .unwrap()
                .len()
                <= 200
        );
    }
}
