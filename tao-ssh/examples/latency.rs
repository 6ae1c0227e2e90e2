//! Measure remote command latency on one session: `cargo run --example latency` with the cluster env sourced.
fn main() -> tao_core::Result<()> {
    let opts = tao_ssh::SshOptions::from_env()?;
    let r = tao_ssh::Remote::connect(&opts)?;
    for (name, cmd, stdin) in [
        ("true", "true", None),
        ("sh -c true", "sh -c true", None),
        ("cat stdin", "cat > /dev/null", Some(&b"hello\n"[..])),
        ("cat stdin 5k", "cat > /dev/null", Some(&[b'x'; 5000][..])),
        ("echo", "echo hi", None),
    ] {
        let t = std::time::Instant::now();
        for _ in 0..10 {
            r.exec(cmd, stdin)?;
        }
        println!(
            "{name}: {:.1} ms/command",
            t.elapsed().as_secs_f64() * 100.0
        );
    }
    Ok(())
}
