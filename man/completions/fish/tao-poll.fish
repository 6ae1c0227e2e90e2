# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tao_poll_global_optspecs
    string join \n q/quiet v/verbose transport= watch interval= evidence evidence-lines= requeue= replay-squeue= replay-sacct= replay-scontrol= replay-squeue-start= replay-root= explain stats h/help V/version
end

function __fish_tao_poll_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tao_poll_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tao_poll_using_subcommand
    set -l cmd (__fish_tao_poll_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tao-poll -n "__fish_tao_poll_needs_command" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l interval -d 'Seconds between polls with --watch; 1-86400' -r
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l evidence-lines -d 'Lines per evidence tail; 1-10000' -r
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l requeue -d 'Whether Slurm requeues jobs (lines without resources.requeue); NODE_FAIL and the launch failures are provisional while it may (BOOT_FAIL and PREEMPTED are final either way)' -r
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l replay-squeue -d 'Saved `squeue` output (ours: `-h -t all -O ...`; or any with its header line); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l replay-sacct -d 'Saved `sacct` output (`-P` with or without header, or a default table); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l replay-scontrol -d 'Saved `scontrol show job` output (used when sacct says accounting is disabled); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l replay-squeue-start -d 'Saved `squeue --start -h -o \'%i|%S\'` output (expected starts of pending jobs)' -r -F
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l replay-root -d 'Local directory standing for the cluster\'s `/` (status.json, completion.json, logs)' -r -F
complete -c tao-poll -n "__fish_tao_poll_needs_command" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -s v -l verbose -d 'Print what the tool does (connections, remote commands); repeatable'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l watch -d 'Keep polling until every job is final; print a line per transition (a live table on a terminal). Exit 0 when all jobs are COMPLETE'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l evidence -d 'Attach redacted tails of main.out/main.err to ERROR lines (`evidence`)'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l explain -d 'Say on stderr, for each job, which squeue/sacct/scontrol row (and line number) decided its state: for reading a replayed paste'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -l stats -d 'Print `tao-poll: stats: lines=N handshakes=N execs=N remote_s=S` on stderr (benchmarks; remote_s: seconds spent waiting for remote commands)'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -s V -l version -d 'Print version'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -a "logs" -d 'Print the last lines of a job\'s main.out (or main.err), redacted'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -a "report" -d 'Write one self-contained HTML file: per job and its retry chain, KPI curves over epochs (from status.json) and a timeline of the attempts'
complete -c tao-poll -n "__fish_tao_poll_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -s n -l lines -d 'Number of lines; 0-1000000' -r
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -l state-dir -d 'Read the record from this store directory instead of TAO_STATE_DIR' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -l err -d 'main.err instead of main.out. An empty file prints nothing on stdout (exit 0); on a terminal one stderr line says it is empty'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -s f -l follow -d 'Keep printing new lines until the job ends'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -l no-redact -d 'Print secrets as they are (no masking)'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -s v -l verbose -d 'Print what the tool does (connections, remote commands); repeatable'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand logs" -s h -l help -d 'Print help'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -s o -l output -d 'The HTML file to write (written whole, then renamed into place). Default: tao-report.html in the current directory, and then one `tao-poll: wrote PATH` line on stderr names it' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l state-dir -d 'Read the records from this store directory instead of TAO_STATE_DIR' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l replay-squeue -d 'Saved `squeue` output (ours: `-h -t all -O ...`; or any with its header line); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l replay-sacct -d 'Saved `sacct` output (`-P` with or without header, or a default table); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l replay-scontrol -d 'Saved `scontrol show job` output (used when sacct says accounting is disabled); `-` reads stdin' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l replay-squeue-start -d 'Saved `squeue --start -h -o \'%i|%S\'` output (expected starts of pending jobs)' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l replay-root -d 'Local directory standing for the cluster\'s `/` (status.json, completion.json, logs)' -r -F
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -l transport -d 'How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT' -r -f -a "libssh2\t''
openssh\t''
local\t''"
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -s v -l verbose -d 'Print what the tool does (connections, remote commands); repeatable'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand report" -s h -l help -d 'Print help'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand help; and not __fish_seen_subcommand_from logs report help" -f -a "logs" -d 'Print the last lines of a job\'s main.out (or main.err), redacted'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand help; and not __fish_seen_subcommand_from logs report help" -f -a "report" -d 'Write one self-contained HTML file: per job and its retry chain, KPI curves over epochs (from status.json) and a timeline of the attempts'
complete -c tao-poll -n "__fish_tao_poll_using_subcommand help; and not __fish_seen_subcommand_from logs report help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
