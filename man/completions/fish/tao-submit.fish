# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tao_submit_global_optspecs
    string join \n q/quiet v/verbose hosts= user= key= known-hosts= ssh-config= site-profile= accept-new-host-key transport= state-dir= reconcile-wait= reconvert-latest stats skip-probe probe-timeout= probe-queue-wait= probe-launcher= h/help V/version
end

function __fish_tao_submit_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tao_submit_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tao_submit_using_subcommand
    set -l cmd (__fish_tao_submit_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tao-submit -n "__fish_tao_submit_needs_command" -l hosts -d 'Login hosts, comma-separated `host[:port]` or ~/.ssh/config aliases; the first that answers is used' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l user -d 'Remote user name' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l key -d 'Private key (mode 600); without it the ssh-agent (SSH_AUTH_SOCK) is used' -r -F
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l known-hosts -d 'known_hosts file [default: ~/.ssh/known_hosts]' -r -F
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l ssh-config -d 'OpenSSH client config for host aliases [default: ~/.ssh/config]' -r -F
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l site-profile -d 'Site profile: built-in name (`local`, `cs-oci-ord`) or a TOML file' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l state-dir -d 'Record store directory, to check each line\'s record exists' -r -F
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l reconcile-wait -d 'Seconds to look for a job by name after an ambiguous submit (connection lost after sending, empty reply, sbatch\'s "Socket timed out") before submitting again; 0-3600' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l probe-timeout -d 'Hard timeout of one probe run in seconds (5-3600); a probe still running then counts as a hang' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l probe-queue-wait -d 'Seconds a probe job may wait in the queue before the probe is given up (the job is then not submitted); 1-86400' -r
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l probe-launcher -d 'How the probe starts on each node [default: torchrun for runtime pyxis, python3 otherwise]' -r -f -a "torchrun\t'`torchrun` with one process per GPU (the container or host must have PyTorch)'
python3\t'`python3` once per node (gloo with PyTorch, plain TCP sockets without)'"
complete -c tao-submit -n "__fish_tao_submit_needs_command" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -s v -l verbose -d 'Print what the tool does (connections, submissions); -vv also the remote commands'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l accept-new-host-key -d 'Add an unknown login-node host key to known_hosts instead of refusing it (a changed key is always refused)'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l reconvert-latest -d 'Convert images tagged `latest` (or untagged) again on the CPU partition even when the .sqsh cache holds them: `latest` moves. The new image replaces the cached one by an atomic rename once it is a valid squashfs'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l stats -d 'Print `tao-submit: stats: handshakes=N commands=M seconds=S` on stderr at the end (SSH handshakes and remote commands of this run)'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -l skip-probe -d 'Submit multi-node and multi-GPU jobs without the communication probe (a cached passing environment is still applied). For clusters where you take the risk of a job hanging in its first collective'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -s V -l version -d 'Print version'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -f -a "cancel" -d 'Cancel the Slurm jobs of the job lines on stdin; emit each with state CANCELED'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -f -a "preflight" -d 'Check the variables, the login, the Slurm commands, the runtime and the storage'
complete -c tao-submit -n "__fish_tao_submit_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l wait -d 'Seconds to wait for cancelled jobs to end before reporting them as still running; 0-3600' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l hosts -d 'Login hosts, comma-separated `host[:port]` or ~/.ssh/config aliases; the first that answers is used' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l user -d 'Remote user name' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l key -d 'Private key (mode 600); without it the ssh-agent (SSH_AUTH_SOCK) is used' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l known-hosts -d 'known_hosts file [default: ~/.ssh/known_hosts]' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l ssh-config -d 'OpenSSH client config for host aliases [default: ~/.ssh/config]' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l site-profile -d 'Site profile: built-in name (`local`, `cs-oci-ord`) or a TOML file' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l state-dir -d 'Record store directory, to check each line\'s record exists' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l reconcile-wait -d 'Seconds to look for a job by name after an ambiguous submit (connection lost after sending, empty reply, sbatch\'s "Socket timed out") before submitting again; 0-3600' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -s v -l verbose -d 'Print what the tool does (connections, submissions); -vv also the remote commands'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l accept-new-host-key -d 'Add an unknown login-node host key to known_hosts instead of refusing it (a changed key is always refused)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l reconvert-latest -d 'Convert images tagged `latest` (or untagged) again on the CPU partition even when the .sqsh cache holds them: `latest` moves. The new image replaces the cached one by an atomic rename once it is a valid squashfs'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -l stats -d 'Print `tao-submit: stats: handshakes=N commands=M seconds=S` on stderr at the end (SSH handshakes and remote commands of this run)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand cancel" -s h -l help -d 'Print help'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l path -d 'A path on the cluster that must exist (dataset, mount source); repeatable' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l runtime -d 'Runtime to check: `pyxis` or `none` [default: TAO_RUNTIME, else the site profile\'s]' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l base-dir -d 'Results root on shared storage [default: SLURM_BASE_RESULTS_DIR]' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l hosts -d 'Login hosts, comma-separated `host[:port]` or ~/.ssh/config aliases; the first that answers is used' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l user -d 'Remote user name' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l key -d 'Private key (mode 600); without it the ssh-agent (SSH_AUTH_SOCK) is used' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l known-hosts -d 'known_hosts file [default: ~/.ssh/known_hosts]' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l ssh-config -d 'OpenSSH client config for host aliases [default: ~/.ssh/config]' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l site-profile -d 'Site profile: built-in name (`local`, `cs-oci-ord`) or a TOML file' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l state-dir -d 'Record store directory, to check each line\'s record exists' -r -F
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l reconcile-wait -d 'Seconds to look for a job by name after an ambiguous submit (connection lost after sending, empty reply, sbatch\'s "Socket timed out") before submitting again; 0-3600' -r
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l lines -d 'Read job lines on stdin, check their mount sources and results root, and print each with a `preflight` object'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l install-enroot-credentials -d 'Write the Enroot credentials for nvcr.io from NGC_KEY on the cluster (mode 600, over SSH stdin)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -s v -l verbose -d 'Print what the tool does (connections, submissions); -vv also the remote commands'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l accept-new-host-key -d 'Add an unknown login-node host key to known_hosts instead of refusing it (a changed key is always refused)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l reconvert-latest -d 'Convert images tagged `latest` (or untagged) again on the CPU partition even when the .sqsh cache holds them: `latest` moves. The new image replaces the cached one by an atomic rename once it is a valid squashfs'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -l stats -d 'Print `tao-submit: stats: handshakes=N commands=M seconds=S` on stderr at the end (SSH handshakes and remote commands of this run)'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand preflight" -s h -l help -d 'Print help'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand help; and not __fish_seen_subcommand_from cancel preflight help" -f -a "cancel" -d 'Cancel the Slurm jobs of the job lines on stdin; emit each with state CANCELED'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand help; and not __fish_seen_subcommand_from cancel preflight help" -f -a "preflight" -d 'Check the variables, the login, the Slurm commands, the runtime and the storage'
complete -c tao-submit -n "__fish_tao_submit_using_subcommand help; and not __fish_seen_subcommand_from cancel preflight help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
