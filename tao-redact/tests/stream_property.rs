//! `tao-redact` (filter mode) on stdin written in generated pieces: byte
//! for byte the library's answer, and no secret in the output.
//!
//! Promise and source: tao-redact(1) ("masks every secret ... bytes
//! outside a secret pass through unchanged"; "the exact values of HF_TOKEN,
//! NGC_KEY and every --secret-env variable are masked too, whatever their
//! format") and the charter ("no secret leaks", "byte for byte"). The text
//! holds a catalogue secret (a GitHub token), the value of HF_TOKEN and the
//! value of a variable with an unusual name given by `--secret-env`
//! (sometimes with a newline inside: each line of it is masked), among
//! multi-byte characters; it is written to the binary's stdin in up to 8
//! pieces cut anywhere (inside a secret, inside a character), flushed one
//! by one, some after a pause so they arrive as separate reads. The
//! output equals `Redactor::redact_text` of the whole text with the same
//! values, and holds no secret. 32 cases (one process each).

use std::io::Write;
use std::process::Command;

use proptest::prelude::*;
use tao_secrets::Redactor;

fn cut_points(len: usize, cuts: &[f64]) -> Vec<usize> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| ((c * len as f64) as usize).min(len))
        .collect();
    at.sort_unstable();
    at
}

proptest! {
    #![proptest_config(tao_core::testing::config(32))]

    /// See the module doc.
    #[test]
    fn the_binary_masks_every_secret_whatever_the_pieces(
        gh in "[A-Za-z0-9]{36}",
        hf in "[A-Za-z0-9]{34}",
        name in "X[A-Z_]{3,12}",
        value in "[A-Za-z0-9!#^*+]{10,24}",
        second in prop::option::of("[A-Za-z0-9!#^*+]{10,24}"),
        filler in prop::collection::vec("[a-z \u{e9}\u{20ac}\u{1f600}.:=]{0,16}", 4),
        cuts in prop::collection::vec(0.0..1.0f64, 0..8),
        pauses in prop::collection::vec(any::<bool>(), 8),
    ) {
        let gh = format!("ghp_{gh}");
        let hf = format!("hf_{hf}");
        let value = match &second {
            Some(s) => format!("{value}\n{s}"),
            None => value,
        };
        // No value may hold another (a longer match would mask both).
        prop_assume!(!value.contains(&hf) && !hf.contains(value.lines().next().unwrap()));
        let text = format!(
            "{}\nclone https://{gh}@github.com/o/r {}\nHF={hf}{}\n{name}={value} {}\n",
            filler[0], filler[1], filler[2], filler[3]
        );
        let red = Redactor::builder()
            .secret_value("HF_TOKEN", hf.as_bytes())
            .secret_value(&name, value.as_bytes())
            .build()
            .unwrap();
        let want = red.redact_text(text.as_bytes()).into_owned();

        let (child, mut stdin) = tao_testkit::tool::spawn_piped(
            Command::new(env!("CARGO_BIN_EXE_tao-redact"))
            .args(["--secret-env", &name])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HF_TOKEN", &hf)
            .env(&name, &value),
        );
        let bytes = text.clone().into_bytes();
        let at = cut_points(bytes.len(), &cuts);
        let writer = std::thread::spawn(move || {
            let mut from = 0;
            for (i, a) in at.into_iter().chain([bytes.len()]).enumerate() {
                stdin.write_all(&bytes[from..a]).unwrap();
                stdin.flush().unwrap();
                if pauses[i % pauses.len()] {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                from = a;
            }
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        prop_assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        prop_assert_eq!(String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&want));
        let got = String::from_utf8_lossy(&out.stdout);
        for s in [gh.as_str(), hf.as_str()].into_iter().chain(value.lines()) {
            prop_assert!(!got.contains(s), "{} in {}", s, got);
        }
    }
}
