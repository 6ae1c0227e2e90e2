//! Opening a [`Transport`] of the kind `opts.transport` names: the one
//! place that knows every transport ([`crate::transport`] holds the
//! interface they share, and none of them knows this file).

use tao_core::Result;

use crate::local::LocalRemote;
use crate::openssh::OpensshRemote;
use crate::options::SshOptions;
use crate::remote::Remote;
use crate::transport::{Transport, TransportKind};

/// Connect to the first login host of `opts.hosts` that answers, on the
/// transport of `opts.transport` (for `local`: the login node itself,
/// labelled with the first login host).
///
/// Errors: as [`Remote::connect`]; for `openssh` also
/// [`tao_core::Error::NoPerm`] (77) when the host needs a second factor and no
/// master connection is open (the message gives the `ssh -M` command).
pub fn connect(opts: &SshOptions) -> Result<Box<dyn Transport>> {
    match opts.transport {
        TransportKind::Libssh2 => Ok(Box::new(Remote::connect(opts)?)),
        TransportKind::Openssh => Ok(Box::new(OpensshRemote::connect(opts)?)),
        TransportKind::Local => Ok(Box::new(LocalRemote::new(
            opts,
            opts.hosts.first().map(String::as_str),
        )?)),
    }
}

/// Connect to one given login host spec (as recorded in
/// `slurm.login_host`) on the transport of `opts.transport`.
///
/// Errors: as [`Remote::connect_host`].
pub fn connect_host(opts: &SshOptions, spec: &str) -> Result<Box<dyn Transport>> {
    match opts.transport {
        TransportKind::Libssh2 => Ok(Box::new(Remote::connect_host(opts, spec)?)),
        TransportKind::Openssh => Ok(Box::new(OpensshRemote::connect_host(opts, spec)?)),
        TransportKind::Local => Ok(Box::new(LocalRemote::new(opts, Some(spec))?)),
    }
}
