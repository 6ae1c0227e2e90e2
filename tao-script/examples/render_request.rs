//! Render a conversion or probe script from a JSON request on stdin, for
//! trying the templates by hand (`cargo run -p tao-script --example
//! render_request -- probe < req.json`). tao-submit and the probe flow call
//! the library directly.

use std::io::Read;

fn main() {
    let kind = std::env::args().nth(1).unwrap_or_default();
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .expect("read stdin");
    let script = match kind.as_str() {
        "probe" => serde_json::from_str(&input)
            .map_err(|e| e.to_string())
            .and_then(|req| tao_script::render_probe(&req).map_err(|e| e.to_string())),
        "convert" => serde_json::from_str(&input)
            .map_err(|e| e.to_string())
            .and_then(|req| {
                let profile = tao_core::site::SiteProfile::load(None).map_err(|e| e.to_string())?;
                tao_script::render_convert(&req, &profile).map_err(|e| e.to_string())
            }),
        _ => Err("usage: render_request probe|convert < request.json".to_string()),
    };
    match script {
        Ok(s) => print!("{}", s.text),
        Err(e) => {
            eprintln!("render_request: error: {e}");
            std::process::exit(1);
        }
    }
}
