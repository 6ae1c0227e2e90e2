//! Per-command cost of the transport chosen by `TAO_TRANSPORT` (libssh2,
//! openssh, local) with the cluster env sourced: connect once, then run
//! `true` N times (`BENCH_COMMANDS`, default 200) and print
//! `transport=NAME connect_ms=X per_command_ms=Y handshakes=H` (make bench).
fn main() -> tao_core::Result<()> {
    let opts = tao_ssh::SshOptions::from_env()?;
    let n: u32 = std::env::var("BENCH_COMMANDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let t = std::time::Instant::now();
    let r = tao_ssh::connect(&opts)?;
    let connect = t.elapsed();
    // One warm-up command, not counted.
    r.exec("true", None)?;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let o = r.exec("true", None)?;
        assert_eq!(o.status, 0);
    }
    let per = t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
    println!(
        "transport={} connect_ms={:.1} per_command_ms={per:.2} handshakes={}",
        opts.transport.name(),
        connect.as_secs_f64() * 1000.0,
        tao_ssh::handshake_count()
    );
    Ok(())
}
