//! The labelled corpus (tests/data/corpus.tsv): every fake secret is found
//! by the expected rule and masked, and no hard negative raises an alarm.
//! All mismatches are reported together so a rule change shows its whole
//! effect at once.

use std::collections::BTreeSet;

use tao_secrets::Redactor;

struct Case {
    line_no: usize,
    rule: String,
    secret: String,
    text: String,
}

fn corpus() -> Vec<Case> {
    let data = include_str!("data/corpus.tsv");
    data.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let mut parts = l.splitn(3, '\t');
            let (rule, secret, text) = (
                parts.next().unwrap(),
                parts.next().expect("secret column"),
                parts.next().expect("text column"),
            );
            Case {
                line_no: i + 1,
                rule: rule.into(),
                secret: secret.into(),
                text: text.into(),
            }
        })
        .collect()
}

#[test]
fn corpus_is_large_enough() {
    let cases = corpus();
    let negatives = cases.iter().filter(|c| c.rule == "ok").count();
    assert!(cases.len() >= 100, "{} cases", cases.len());
    assert!(negatives >= 40, "{negatives} hard negatives");
    let red = Redactor::builder().build().unwrap();
    let labelled: BTreeSet<&str> = cases.iter().map(|c| c.rule.as_str()).collect();
    for id in red.rule_ids() {
        assert!(labelled.contains(id), "no corpus line for rule {id}");
    }
}

#[test]
fn corpus_no_miss_no_false_alarm() {
    let red = Redactor::builder().build().unwrap();
    let mut failures = Vec::new();
    for c in corpus() {
        // Each case is linted as a one-line script and filtered as one line.
        let text = c.text.clone();
        let lint = red.lint(&text);
        let found: BTreeSet<String> = lint.findings.iter().map(|f| f.rule.clone()).collect();
        let redacted = String::from_utf8_lossy(&red.redact_line(text.as_bytes())).into_owned();
        if c.rule == "ok" {
            if !lint.ok || redacted != text {
                failures.push(format!(
                    "line {}: false alarm {found:?}: {redacted}",
                    c.line_no
                ));
            }
            continue;
        }
        let want: BTreeSet<String> = [c.rule.clone()].into();
        if found != want {
            failures.push(format!(
                "line {}: want {want:?}, found {found:?}: {redacted}",
                c.line_no
            ));
        }
        if redacted.contains(&c.secret) || !redacted.contains(&format!("[REDACTED:{}]", c.rule)) {
            failures.push(format!("line {}: not masked: {redacted}", c.line_no));
        }
        for f in &lint.findings {
            if f.preview.contains(&c.secret) {
                failures.push(format!("line {}: preview leaks the secret", c.line_no));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
