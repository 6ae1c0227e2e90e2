//! `tao-poll report ID...`: one self-contained HTML file per run, a
//! picture of each job and its retry chain.
//!
//! For every id (a record id, looked up read-only in the local store like
//! `logs`), the whole retry chain is taken (`tao_store::query::chain`:
//! back along `retry_of`, forward along `retried_by`). For each attempt the
//! report shows:
//!
//! * KPI curves over epochs: every numeric `kpi`/`graphical` value of the
//!   attempt's `<results_dir>/status.json` (TAO's status logger records,
//!   [`tao_core::progress::curves`]), one chart per KPI, one line per
//!   attempt. Each point is an SVG `<circle>` carrying `data-kpi`,
//!   `data-attempt`, `data-epoch` and `data-value`, so the picture can be
//!   checked against the file.
//! * A timeline: one row per attempt, its history (the record store's
//!   `history`: queued, running, restarts, the end state) as coloured
//!   segments on one time axis, with each attempt's end state and failure
//!   class (`classification.class`) written at its end.
//!
//! The file is HTML with inline SVG and inline CSS only: no script, no
//! network request, no external font or image. The status files are read
//! over the transport in one command per login host (the last
//! [`REPORT_BYTES`] of each), or from `--replay-root`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value;
use tao_core::Result;

use crate::replay::{connector, ReplayArgs};

/// Bytes read from the end of each status.json for the report's curves:
/// 8 MiB holds some 20,000 TAO epoch records.
pub const REPORT_BYTES: u64 = 8 * 1024 * 1024;

/// Options of `tao-poll report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Record ids (`tao-record` ids); each brings its whole retry chain.
    #[arg(value_name = "ID", required = true)]
    pub ids: Vec<String>,
    /// The HTML file to write (written whole, then renamed into place). Default:
    /// tao-report.html in the current directory, and then one `tao-poll: wrote PATH`
    /// line on stderr names it.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Read the records from this store directory instead of TAO_STATE_DIR.
    #[arg(long, value_name = "DIR", hide = true)]
    pub state_dir: Option<PathBuf>,
    #[command(flatten)]
    /// Saved files to read instead of the cluster (`--replay-root`).
    pub replay: ReplayArgs,
}

/// Where `report` writes without `-o`: tao-report.html in the current
/// directory, as an absolute path when the current directory is known (the
/// path the `wrote` line names).
pub fn default_output() -> PathBuf {
    let name = PathBuf::from("tao-report.html");
    std::env::current_dir()
        .map(|d| d.join(&name))
        .unwrap_or(name)
}

/// One attempt of a chain, as the report draws it.
#[derive(Debug, Clone, Default)]
pub struct Attempt {
    /// Record id.
    pub id: String,
    /// `attempt` (1-based), or its place in the chain.
    pub attempt: u64,
    /// Final or current `state`.
    pub state: String,
    /// `classification.class`, when classified.
    pub class: Option<String>,
    /// `slurm.job_id`.
    pub slurm_job_id: Option<String>,
    /// History entries: (time, state, message).
    pub history: Vec<(chrono::DateTime<chrono::Utc>, String, String)>,
    /// KPI curves from status.json: name -> (epoch, value) points.
    pub curves: BTreeMap<String, Vec<(u64, f64)>>,
    /// Why there are no curves (no status.json, unreadable), if so.
    pub curves_note: Option<String>,
}

/// Escape text for HTML and SVG (element text and attribute values).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c if c.is_control() && c != '\n' => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// Fill colour of a state in the timeline.
fn state_colour(state: &str) -> &'static str {
    match state {
        "PENDING" => "#d9a400",
        "RUNNING" => "#2f6fd6",
        "COMPLETE" => "#2e9e44",
        "ERROR" => "#c8332b",
        "CANCELED" => "#7a7a7a",
        _ => "#a0a0a0",
    }
}

/// Line colours of attempts in the KPI charts.
const SERIES: [&str; 6] = [
    "#2f6fd6", "#c8332b", "#2e9e44", "#8a3fd1", "#d9a400", "#1b9aaa",
];

/// An attempt from its record (fields and history); curves are added later.
pub fn attempt_of(fields: &serde_json::Map<String, Value>, place: u64) -> Attempt {
    let s = |k: &str| fields.get(k).and_then(Value::as_str).map(str::to_string);
    let history = fields
        .get("history")
        .and_then(Value::as_array)
        .map(|h| {
            h.iter()
                .filter_map(|e| {
                    Some((
                        tao_core::time::parse_rfc3339(e.get("at")?.as_str()?)?,
                        e.get("state")?.as_str()?.to_string(),
                        e.get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    Attempt {
        id: s("id").unwrap_or_default(),
        attempt: fields
            .get("attempt")
            .and_then(Value::as_u64)
            .unwrap_or(place),
        state: s("state").unwrap_or_else(|| "UNKNOWN".into()),
        class: fields
            .get("classification")
            .and_then(|c| c.get("class"))
            .and_then(Value::as_str)
            .map(str::to_string),
        slurm_job_id: fields.get("slurm").and_then(|s| s.get("job_id")).map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        }),
        history,
        curves: BTreeMap::new(),
        curves_note: None,
    }
}

/// A chart of one KPI: one polyline and its points per attempt.
fn kpi_chart(name: &str, attempts: &[Attempt]) -> String {
    let (w, h, l, r, t, b) = (640.0, 260.0, 64.0, 16.0, 24.0, 36.0);
    let pts: Vec<(usize, u64, f64)> = attempts
        .iter()
        .enumerate()
        .flat_map(|(i, a)| {
            a.curves
                .get(name)
                .into_iter()
                .flatten()
                .map(move |(e, v)| (i, *e, *v))
        })
        .collect();
    let (emin, emax) = pts
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let (vmin, vmax) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.2), hi.max(p.2))
        });
    let (emin, emax) = if emin >= emax {
        (emin.saturating_sub(1), emin + 1)
    } else {
        (emin, emax)
    };
    let (vmin, vmax) = if vmax - vmin <= f64::EPSILON {
        (vmin - 0.5, vmax + 0.5)
    } else {
        (vmin, vmax)
    };
    let x = |e: u64| l + (e - emin) as f64 / (emax - emin) as f64 * (w - l - r);
    let y = |v: f64| t + (vmax - v) / (vmax - vmin) * (h - t - b);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="kpi" data-kpi="{n}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="{n} over epochs">"#,
        n = esc(name)
    );
    let _ = write!(s, r#"<title>{}</title>"#, esc(name));
    let _ = write!(
        s,
        r##"<rect x="{l}" y="{t}" width="{}" height="{}" fill="#fafafa" stroke="#ccc"/>"##,
        w - l - r,
        h - t - b
    );
    let _ = write!(
        s,
        r##"<text x="{l}" y="16" font-size="13" font-weight="bold">{}</text>"##,
        esc(name)
    );
    for (v, anchor) in [(vmax, t + 4.0), (vmin, h - b)] {
        let _ = write!(
            s,
            r##"<text x="{}" y="{anchor}" font-size="11" text-anchor="end">{}</text>"##,
            l - 4.0,
            esc(&tao_core::progress::short_number(v))
        );
    }
    for e in [emin, emax] {
        let _ = write!(
            s,
            r##"<text x="{}" y="{}" font-size="11" text-anchor="middle">{e}</text>"##,
            x(e),
            h - b + 14.0
        );
    }
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="middle">epoch</text>"##,
        (l + w - r) / 2.0,
        h - 6.0
    );
    let mut legend_x = w - r;
    for (i, a) in attempts.iter().enumerate().rev() {
        if a.curves.get(name).is_some_and(|c| !c.is_empty()) {
            let _ = write!(
                s,
                r#"<text x="{legend_x}" y="16" font-size="11" text-anchor="end" fill="{}">attempt {}</text>"#,
                SERIES[i % SERIES.len()],
                a.attempt
            );
            legend_x -= 70.0;
        }
    }
    for (i, a) in attempts.iter().enumerate() {
        let Some(c) = a.curves.get(name).filter(|c| !c.is_empty()) else {
            continue;
        };
        let colour = SERIES[i % SERIES.len()];
        let line: Vec<String> = c
            .iter()
            .map(|(e, v)| format!("{:.2},{:.2}", x(*e), y(*v)))
            .collect();
        let _ = write!(
            s,
            r#"<g class="series" data-attempt="{at}" data-id="{id}"><polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            line.join(" "),
            at = a.attempt,
            id = esc(&a.id)
        );
        for (e, v) in c {
            let _ = write!(
                s,
                r#"<circle cx="{:.2}" cy="{:.2}" r="3" fill="{colour}" data-kpi="{n}" data-attempt="{at}" data-epoch="{e}" data-value="{v}"><title>attempt {at}, epoch {e}: {n} = {v}</title></circle>"#,
                x(*e),
                y(*v),
                n = esc(name),
                at = a.attempt
            );
        }
        s.push_str("</g>");
    }
    s.push_str("</svg>");
    s
}

/// The timeline of a chain: one row per attempt on one time axis.
fn timeline(attempts: &[Attempt], now: chrono::DateTime<chrono::Utc>) -> String {
    let times: Vec<_> = attempts
        .iter()
        .flat_map(|a| a.history.iter().map(|h| h.0))
        .collect();
    let (Some(t0), Some(t1)) = (times.iter().min().copied(), times.iter().max().copied()) else {
        return "<p>No history recorded.</p>".into();
    };
    let live = attempts
        .last()
        .is_some_and(|a| !matches!(a.state.as_str(), "COMPLETE" | "ERROR" | "CANCELED"));
    let t1 = if live { now.max(t1) } else { t1 };
    let span = ((t1 - t0).num_milliseconds().max(1000)) as f64;
    let (w, row, l, r) = (900.0, 34.0, 150.0, 190.0);
    let h = 30.0 + row * attempts.len() as f64;
    let x = |t: chrono::DateTime<chrono::Utc>| {
        l + (t - t0).num_milliseconds() as f64 / span * (w - l - r)
    };
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="timeline of the retry chain">"#
    );
    s.push_str("<title>timeline</title>");
    let _ = write!(
        s,
        r##"<text x="{l}" y="14" font-size="11">{}</text><text x="{}" y="14" font-size="11" text-anchor="end">{}</text>"##,
        esc(&t0.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        w - r,
        esc(&t1.format("%H:%M:%S UTC").to_string())
    );
    for (k, a) in attempts.iter().enumerate() {
        let y = 22.0 + row * k as f64;
        let _ = write!(
            s,
            r##"<g class="attempt" data-attempt="{at}" data-id="{id}" data-state="{st}"><text x="4" y="{}" font-size="12">attempt {at} · {sid}</text>"##,
            y + 15.0,
            at = a.attempt,
            id = esc(&a.id),
            st = esc(&a.state),
            sid = esc(a.slurm_job_id.as_deref().unwrap_or("-"))
        );
        for (i, (at, state, msg)) in a.history.iter().enumerate() {
            let end =
                a.history
                    .get(i + 1)
                    .map(|n| n.0)
                    .unwrap_or(if live && k + 1 == attempts.len() {
                        t1
                    } else {
                        *at
                    });
            let (x0, x1) = (x(*at), x(end));
            let wdt = (x1 - x0).max(2.0);
            let label = if msg.is_empty() {
                state.clone()
            } else {
                format!("{state}: {msg}")
            };
            let _ = write!(
                s,
                r#"<rect class="segment" data-state="{st}" x="{x0:.2}" y="{y}" width="{wdt:.2}" height="20" fill="{c}"><title>{t}</title></rect>"#,
                st = esc(state),
                c = state_colour(state),
                t = esc(&format!("{} {label}", at.format("%H:%M:%S")))
            );
            let restart = msg.contains("restart")
                || (state == "PENDING" && i > 0 && a.history[i - 1].1 == "RUNNING");
            if restart {
                let _ = write!(
                    s,
                    r##"<line class="restart" x1="{x0:.2}" y1="{}" x2="{x0:.2}" y2="{}" stroke="#000" stroke-width="2"><title>restart: {}</title></line>"##,
                    y - 3.0,
                    y + 23.0,
                    esc(msg)
                );
            }
        }
        let end_label = match &a.class {
            Some(c) => format!("{} ({c})", a.state),
            None => a.state.clone(),
        };
        let _ = write!(
            s,
            r#"<text class="end" x="{}" y="{}" font-size="12" fill="{}">{}</text></g>"#,
            w - r + 8.0,
            y + 15.0,
            state_colour(&a.state),
            esc(&end_label)
        );
    }
    s.push_str("</svg>");
    s
}

/// The whole HTML document for the chains (each a list of attempts).
pub fn render(chains: &[Vec<Attempt>], now: chrono::DateTime<chrono::Utc>) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tao-poll report</title>\
         <style>body{font-family:sans-serif;margin:24px;color:#222}h2{margin-top:32px}\
         .legend span{display:inline-block;margin-right:14px}.sw{width:12px;height:12px;display:inline-block;margin-right:4px;vertical-align:middle}\
         svg{display:block;margin:8px 0}table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #ddd}</style></head><body>\n",
    );
    let _ = writeln!(
        s,
        "<h1>tao-poll report</h1><p>Written {} by tao-poll {}.</p>",
        esc(&now.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        env!("CARGO_PKG_VERSION")
    );
    s.push_str("<p class=\"legend\">");
    for st in ["PENDING", "RUNNING", "COMPLETE", "ERROR", "CANCELED"] {
        let _ = write!(
            s,
            "<span><span class=\"sw\" style=\"background:{}\"></span>{st}</span>",
            state_colour(st)
        );
    }
    s.push_str("<span>| restart</span></p>\n");
    for chain in chains {
        let Some(first) = chain.first() else { continue };
        let _ = write!(
            s,
            "<section class=\"job\" data-id=\"{id}\"><h2>{id}</h2>\n<table><tr><th>attempt</th><th>record</th><th>Slurm job</th><th>state</th><th>class</th></tr>",
            id = esc(&first.id)
        );
        for a in chain {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                a.attempt,
                esc(&a.id),
                esc(a.slurm_job_id.as_deref().unwrap_or("-")),
                esc(&a.state),
                esc(a.class.as_deref().unwrap_or("-"))
            );
        }
        s.push_str("</table>\n<h3>Timeline</h3>\n");
        s.push_str(&timeline(chain, now));
        s.push_str("\n<h3>KPIs over epochs</h3>\n");
        let mut names: Vec<&String> = chain.iter().flat_map(|a| a.curves.keys()).collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            s.push_str("<p>No KPI records in status.json.</p>\n");
        }
        for n in names {
            s.push_str(&kpi_chart(n, chain));
            s.push('\n');
        }
        for a in chain {
            if let Some(note) = &a.curves_note {
                let _ = writeln!(s, "<p>attempt {}: {}</p>", a.attempt, esc(note));
            }
        }
        s.push_str("</section>\n");
    }
    s.push_str("</body></html>\n");
    s
}

/// Run `report` (`transport`: the `--transport` value, winning over
/// `TAO_TRANSPORT`); returns the exit status (0; 1 when some status files
/// could not be read: the report is still written, saying so).
///
/// Errors: [`Error::Data`](tao_core::Error::Data) for an unknown record id; [`Error::Io`](tao_core::Error::Io)
/// writing the file; connection errors as exit codes of `tao_core`.
pub fn run(args: &ReportArgs, transport: Option<&str>) -> Result<i32> {
    let store = match &args.state_dir {
        Some(d) => tao_store::Store::open(d.clone())?,
        None => tao_store::Store::open_default()?,
    };
    // Per chain, per attempt: the attempt, its status.json path, its login host.
    type Entry = (Attempt, Option<String>, Option<String>);
    let mut chains: Vec<Vec<Entry>> = Vec::new();
    for id in &args.ids {
        let ids = tao_store::query::chain(&store, id)?;
        let mut chain = Vec::new();
        for (k, rid) in ids.iter().enumerate() {
            let rec = store.load(rid)?;
            let a = attempt_of(&rec.fields, k as u64 + 1);
            let status = rec
                .fields
                .get("storage")
                .and_then(|s| s.get("results_dir"))
                .and_then(Value::as_str)
                .map(|r| format!("{}/status.json", r.trim_end_matches('/')));
            let host = rec
                .fields
                .get("slurm")
                .and_then(|s| s.get("login_host"))
                .and_then(Value::as_str)
                .map(str::to_string);
            chain.push((a, status, host));
        }
        chains.push(chain);
    }
    // One read per login host for every status file of every chain.
    let mut by_host: BTreeMap<Option<String>, Vec<(usize, usize, String)>> = BTreeMap::new();
    for (c, chain) in chains.iter().enumerate() {
        for (k, (_, status, host)) in chain.iter().enumerate() {
            if let Some(p) = status {
                by_host
                    .entry(host.clone())
                    .or_default()
                    .push((c, k, p.clone()));
            }
        }
    }
    let mut conn = connector(&args.replay, transport, !by_host.is_empty(), None)?;
    let mut failed = false;
    for (host, files) in by_host {
        let paths: Vec<String> = files.iter().map(|f| f.2.clone()).collect();
        let res = conn
            .open(host.as_deref())
            .and_then(|b| b.read_tails(&paths, REPORT_BYTES));
        for (i, (c, k, _)) in files.iter().enumerate() {
            let a = &mut chains[*c][*k].0;
            match &res {
                Ok(texts) => match &texts[i] {
                    Some(t) => {
                        let mut lines: Vec<&str> = t.split('\n').collect();
                        if t.len() as u64 >= REPORT_BYTES && !lines.is_empty() {
                            lines.remove(0);
                        }
                        a.curves = tao_core::progress::curves(lines);
                    }
                    None => a.curves_note = Some("no status.json".into()),
                },
                Err(f) => {
                    failed = true;
                    a.curves_note = Some(format!("status.json could not be read: {}", f.message));
                    tao_core::cli::warn(crate::poll::TOOL, &format!("report: {}", f.message));
                }
            }
        }
    }
    let chains: Vec<Vec<Attempt>> = chains
        .into_iter()
        .map(|c| c.into_iter().map(|x| x.0).collect())
        .collect();
    let html = render(&chains, chrono::Utc::now());
    match &args.output {
        Some(p) => write_atomic(p, html.as_bytes(), "")?,
        None => {
            let p = default_output();
            write_atomic(
                &p,
                html.as_bytes(),
                " (the default, in the current directory: name another file with -o FILE)",
            )?;
            tao_core::cli::write_stderr(&format!(
                "{}: wrote {}\n",
                crate::poll::TOOL,
                tao_core::cli::one_line(&p.display().to_string())
            ));
        }
    }
    Ok(if failed {
        tao_core::exit::SOME_FAILED
    } else {
        0
    })
}

/// Write the report whole with [`tao_store::file::write_atomic`] (a
/// temporary file beside it, fsync, rename): a reader never sees half a
/// report. Mode 666 before the umask, as a plain file write would give.
///
/// Errors: [`Error::Io`](tao_core::Error::Io) "writing the report <path>"
/// followed by `hint` (empty, or what to do instead when the path was not
/// the user's choice).
fn write_atomic(path: &std::path::Path, bytes: &[u8], hint: &str) -> Result<()> {
    let what = format!("writing the report {:?}{hint}", path.display().to_string());
    let how = tao_store::file::Atomic {
        mode: 0o666,
        noclobber: false,
        sync_dir: false,
    };
    tao_store::file::write_atomic(path, bytes, how, &what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_renders_self_contained() {
        let rec = serde_json::json!({
            "id": "tao-a<b", "attempt": 1, "state": "ERROR",
            "classification": {"class": "infra"},
            "slurm": {"job_id": "7"},
            "history": [
                {"at": "2026-12-01T10:00:00Z", "state": "PENDING", "message": "PENDING (Priority)"},
                {"at": "2026-12-01T10:01:00Z", "state": "RUNNING", "message": "RUNNING"},
                {"at": "2026-12-01T10:02:00Z", "state": "RUNNING", "message": "RUNNING, restart 1"},
                {"at": "2026-12-01T10:05:00Z", "state": "ERROR", "message": "FAILED exit 1:0"}
            ]
        });
        let mut a = attempt_of(rec.as_object().unwrap(), 1);
        a.curves.insert("loss".into(), vec![(1, 0.5), (2, 0.25)]);
        let html = render(&[vec![a]], chrono::Utc::now());
        assert!(html.contains("tao-a&lt;b"));
        assert!(!html.contains("<script"));
        assert!(
            !html.contains("http://")
                || !html
                    .replace("http://www.w3.org/2000/svg", "")
                    .contains("http://")
        );
        assert!(html.contains(r#"data-epoch="2" data-value="0.25""#));
        assert!(html.contains("ERROR (infra)"));
        assert!(html.contains(r#"class="restart""#));
    }
}
