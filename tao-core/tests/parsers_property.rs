//! tao-core's readers of user text as properties over generated inputs:
//! never a panic, and an error is one line.
//!
//! Promise and source: the charter ("never a panic", every promise a
//! property over generated inputs) and docs/CONTRACT.md ("errors on stderr
//! as one line `tao-x: error: ...`"). Inputs: site profiles (the built-in
//! ones edited: lines dropped, duplicated, values replaced by generated
//! text), Slurm times (`--time`, a profile's `max_time`), memory sizes
//! (`--mem`), image references; 512 cases each.

use proptest::prelude::*;
use tao_core::site::SiteProfile;
use tao_core::slurm_time::SlurmTime;

/// Text a user may type for a value: digits, separators, units, letters,
/// arbitrary Unicode.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9:-]{0,24}",
        "[0-9]{1,30}[-:]?[0-9]{0,30}[:]?[0-9]{0,30}",
        "[0-9]{0,14}[KMGTkmgtB]?",
        "\\PC{0,16}",
        "[a-z0-9./:@_-]{0,40}",
    ]
}

/// A built-in profile with up to six edits of its lines.
fn profile() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = SiteProfile::builtin_names();
    (
        prop::sample::select(names),
        prop::collection::vec((0.0..1.0f64, 0usize..4, value()), 0..6),
    )
        .prop_map(|(name, edits)| {
            let mut lines: Vec<String> = SiteProfile::builtin_text(name)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            for (at, kind, v) in edits {
                if lines.is_empty() {
                    break;
                }
                let i = ((at * lines.len() as f64) as usize).min(lines.len() - 1);
                match kind {
                    0 => {
                        lines.remove(i);
                    }
                    1 => {
                        let l = lines[i].clone();
                        lines.insert(i, l);
                    }
                    // A value replaced, quoted (a string) or bare.
                    2 => {
                        if let Some((k, _)) = lines[i].split_once('=') {
                            lines[i] = format!("{k}= {}", toml_string(&v));
                        }
                    }
                    _ => {
                        if let Some((k, _)) = lines[i].split_once('=') {
                            lines[i] = format!("{k}= {v}");
                        }
                    }
                }
            }
            lines.join("\n")
        })
}

fn toml_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

proptest! {
    #![proptest_config(tao_core::testing::config(512))]

    /// An edited site profile parses or is one configuration error naming
    /// the profile.
    #[test]
    fn any_site_profile_is_a_profile_or_one_error(text in profile()) {
        if let Err(e) = SiteProfile::parse(&text, "edited") {
            let m = e.to_string();
            prop_assert!(!m.contains('\n'), "{}", m);
            prop_assert!(m.contains("\"edited\""), "{}", m);
            prop_assert_eq!(e.code(), tao_core::exit::CONFIG);
        }
    }

    /// A Slurm time parses or is one error line; a parsed time's canonical
    /// form parses back to the same time (no overflow on any digits).
    #[test]
    fn any_slurm_time_round_trips_or_is_one_error(t in value()) {
        match SlurmTime::parse(&t) {
            Ok(st) => {
                let c = st.canonical();
                let back = SlurmTime::parse(&c);
                prop_assert!(back.is_ok(), "{:?} -> {:?}: {:?}", t, c, back);
                prop_assert_eq!(back.unwrap().seconds(), st.seconds(), "{:?} -> {:?}", t, c);
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n'), "{}", e),
        }
    }

    /// A memory size is checked without a panic (any digits, any unit);
    /// megabytes agree with the size's form.
    #[test]
    fn any_memory_size_is_checked(m in value()) {
        match tao_core::mem::mem(&m) {
            Ok(norm) => {
                prop_assert_eq!(norm.clone(), m.to_ascii_uppercase());
                prop_assert!(tao_core::mem::mem_megabytes(&m).is_ok());
            }
            Err(e) => {
                prop_assert!(!e.contains('\n'), "{}", e);
                prop_assert!(tao_core::mem::mem_megabytes(&m).is_err());
            }
        }
    }

    /// An image reference is normalised or refused with one line, never a
    /// panic; a normalised image normalises to itself.
    #[test]
    fn any_image_is_normalised_or_one_error(i in value()) {
        let _ = tao_core::image::is_sqsh(&i);
        match tao_core::image::normalise_image(&i) {
            Ok(n) => {
                let again = tao_core::image::normalise_image(&n);
                prop_assert_eq!(again.ok(), Some(n.clone()), "{:?}", i);
                let _ = tao_core::image::sqsh_name(&n);
                let _ = tao_core::image::is_latest(&n);
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n'), "{}", e),
        }
    }
}
