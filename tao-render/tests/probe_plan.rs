//! tao-submit's probe reads the plan tao-render wrote into the line
//! (issue 13: plan once): `probe_request_from_plan` on a rendered line
//! gives the request that planning the line again gives, for both
//! runtimes, and refuses a line that carries no plan.

mod common;

use common::*;
use serde_json::json;
use tao_script::{probe_request_for_line, probe_request_from_plan, render_line};

#[test]
fn the_probe_request_comes_from_the_plan_in_the_line() {
    let profile = profile("cs-oci-ord");
    let mut none = line();
    none["resources"]["gpus_per_node"] = json!(16);
    none["resources"]["partition"] = json!("polar");
    none["resources"]["account"] = json!("fake-account");
    none["resources"]["exclude"] = json!(["n1"]);
    let mut pyxis = none.clone();
    pyxis["runtime"] = json!("pyxis");
    pyxis["image"] = json!("nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt");
    pyxis["mounts"] = json!(["/data:/data"]);
    for l in [none, pyxis] {
        let mut l = l;
        let script = render_line(&jobline(&l), &profile).unwrap();
        l["script"] = serde_json::to_value(&script).unwrap();
        let line = jobline(&l);
        let from_plan = probe_request_from_plan(&line, "tao-probe-x", "p.py").unwrap();
        let again = probe_request_for_line(&line, &profile, "tao-probe-x", "p.py").unwrap();
        assert_eq!(from_plan, again, "{}", l["runtime"]);
        assert_eq!((from_plan.nodes, from_plan.gpus_per_node), (2, 8));
        if l["runtime"] == "pyxis" {
            assert!(from_plan.image.as_deref().unwrap().ends_with(".sqsh"));
            assert!(from_plan.mounts.contains(&"/data:/data".to_string()));
        }
    }
    // No plan (not rendered), or a pyxis plan without its container: refused.
    let err = probe_request_from_plan(&jobline(&line()), "tao-probe-x", "p.py").unwrap_err();
    assert!(err.to_string().contains("script.resources"), "{err}");
    let mut l = line();
    l["runtime"] = json!("pyxis");
    l["image"] = json!("/images/x.sqsh");
    l["resources"]["partition"] = json!("polar");
    let script = render_line(&jobline(&l), &profile).unwrap();
    l["script"] = serde_json::to_value(&script).unwrap();
    l["script"].as_object_mut().unwrap().remove("container");
    let err = probe_request_from_plan(&jobline(&l), "tao-probe-x", "p.py").unwrap_err();
    assert!(err.to_string().contains("script.container"), "{err}");
}
