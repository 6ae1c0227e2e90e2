# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tao_record_global_optspecs
    string join \n q/quiet v/verbose h/help V/version
end

function __fish_tao_record_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tao_record_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tao_record_using_subcommand
    set -l cmd (__fish_tao_record_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tao-record -n "__fish_tao_record_needs_command" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_needs_command" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-record -n "__fish_tao_record_needs_command" -s V -l version -d 'Print version'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "open" -d 'Mint an id, bind the job\'s directories and write a new record (state PENDING)'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "mark" -d 'Apply observations (job lines on stdin, or flags) to records and echo the updated lines'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "retry" -d 'Open the retry records of the retryable failures among the job lines on stdin, within the budget, and print them (the cron pipeline\'s retry stage)'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "show" -d 'Show one record (text on a terminal, JSON when piped)'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "history" -d 'Show a record\'s transitions: at, state, source, message'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "list" -d 'Print records: a table on a terminal (oldest first), job lines on a pipe (by id; --sort created: oldest first)'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "gc" -d 'Archive terminal records older than an age into $TAO_STATE_DIR/archive/'
complete -c tao-record -n "__fish_tao_record_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l platform -d 'Platform; only "slurm" is known' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l action -d 'TAO action: train, evaluate, inference, export, prune, retrain, distill, quantize, gen_trt_engine, calibration_tensorfile, dataset_convert, convert, kmeans, augment, auto_label, generate, analyze, validate, or another name of lowercase letters, digits and _ (opened with a note on stderr); a near miss of a known one is refused ("did you mean")' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l network-arch -d 'TAO network architecture (dino, classification_pyt, ...)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l image -d 'Container image (runtime pyxis; refused with runtime none, which runs no container): /abs/x.sqsh, registry#image:tag, docker://registry#image:tag or registry/image:tag' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l runtime -d 'Runtime: pyxis or none [env: TAO_RUNTIME; default: the site profile\'s]' -r -f -a "pyxis\t''
none\t''"
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l command -d 'Command run in the container; may use {config_path}, {job_id}, {results_dir} [default: "ARCH ACTION -e {config_path}" when --spec, --network-arch and --action are given]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l nodes -d 'Number of nodes, 1-4294967295 (the request rules of tao-core, which tao-render applies too, decide what a partition allows) [default: 1]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l gpus-per-node -l gpus -d 'GPUs per node, 0-4294967295 [default: 4]. `--gpus` is an alias. At or above the site profile\'s max_gpus_per_node the nodes are exclusive and the node count is derived from the total (16 on 4-GPU nodes: 4 nodes of 4): the record holds that shape and a warning on stderr names it; a total that does not split evenly is refused' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l cpus-per-task -d 'CPUs per task, 1-4294967295, at most the partition\'s cpus_per_node in the site profile [default: 16, or cpus_per_node when that is smaller]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l time -d 'Wall time, a Slurm time string (sbatch --time: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS; minutes and seconds below 60 and hours below 24 after a day count), at most the partition\'s max_time in the site profile; 0, -1, INFINITE or UNLIMITED only where that max_time is UNLIMITED [default: 04:00:00]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l child-timeout -d 'Time after which the job\'s command is stopped so the job can finish cleanly; below --time [default: 95% of --time; none under an unlimited --time]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l partition -d 'Partition, or a comma-separated list; one the site profile lists, when it lists any [env: SLURM_PARTITION; default: the site profile\'s]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l account -d 'Account to charge [env: SLURM_ACCOUNT]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l exclude -d 'Node to avoid: a name or a Slurm host list, as sbatch --exclude takes it (n1,n2, gpu[01-04]); repeatable' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l mem -d 'Memory per node, sbatch --mem form: digits and an optional K, M, G or T in either case (64G, 64g, 7200M)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l storage-tier -d 'Storage tier name [default: lustre]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l results-root -d 'Results root on the cluster: /abs or lustre:///abs [env: SLURM_BASE_RESULTS_DIR]' -r -F
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l spec -d 'Spec file (YAML) staged as {config_path}, under its own name, byte for byte; one read from a pipe or /dev/fd (--spec <(envsubst < spec.yaml)) is staged as spec.yaml. A spec that does not parse as YAML is refused (exit 65, with its line and column)' -r -F
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l mount -d 'Container mount SRC:DST[:FLAGS]; repeatable [env: SLURM_CONTAINER_MOUNTS, comma-separated]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l env -d 'Non-secret environment variable for the job, K=V; repeatable. Reserved names are refused (the job script\'s own, rendezvous, SLURM_*, BASH*, LD_*, tao_*, PATH, IFS, ...: tao-jobline(7)), and so are names that look like secrets (use --secret). The value reaches the job byte for byte: newlines, tabs, CR and ESC are kept (only NUL is refused). A name given twice with different values is refused (exit 2), not last-wins' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l secret -d 'Name of a secret read from the environment at submit time; repeatable. Names only; the reserved names of --env are refused here too, and a name may not be both' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l execution -d 'JSON file with the model lifecycle (pre_commands, command, post_commands, launcher, supporting_files)' -r -F
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l supporting-file -d 'A file the job needs (a training script, a helper module), staged checksum-closed to `$TAO_ACTION_HELPERS/<file name>`; repeatable. Its sha256 and size are recorded now and verified at submit and in the job' -r -F
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l retry-of -d 'Make the next attempt of this failed (ERROR or CANCELED) record' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l attempt -d 'Attempt number of a first try opened by hand, 1-1000 [default: 1]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l exclusive -d 'Ask for whole nodes (sbatch --exclusive)'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l no-requeue -d 'Do not let Slurm requeue the job [default from SLURM_USE_REQUEUE, else requeue]'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l print-id -d 'Print only the id (for JOB_ID=$(tao-record open ... --print-id))'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -l dry-run -d 'Print the job line a record would hold, and write no record (to preview the script: `... --dry-run | tao-render --print`). tao-submit refuses such a line: it has no record'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand open" -s h -l help -d 'Print help'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l state -d 'New state: PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN (Slurm\'s CANCELLED is taken for CANCELED)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l backend-ref -d 'Slurm job id (sets slurm.job_id)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l source -d 'Who observed it (recorded as the history entry\'s source)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l message -d 'Native sub-state and why' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l at -d 'When it was observed (RFC 3339) [default: now]' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l clear-error -d 'Remove the record\'s stored `error` (e.g. after a failed submit, before submitting again: tools pass lines that carry an `error` through untouched). On a terminal (or with --text) it prints one line: what was cleared and what to do next (a refused request needs a new record); on a pipe the job line'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l json -d 'Print job lines even on a terminal (the default on a pipe)'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -l text -d 'Print one readable line per job even on a pipe (the default on a terminal): id, state, Slurm job id, message, and the error if any'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand mark" -s h -l help -d 'Print help'
complete -c tao-record -n "__fish_tao_record_using_subcommand retry" -l max-attempts -d 'Retry budget: a job is run at most N times in all (attempt 1 is the first try), 1-100 (1 = never retry)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand retry" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand retry" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand retry" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-record -n "__fish_tao_record_using_subcommand show" -l json -d 'Print JSON even on a terminal'
complete -c tao-record -n "__fish_tao_record_using_subcommand show" -l text -d 'Print text even on a pipe'
complete -c tao-record -n "__fish_tao_record_using_subcommand show" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand show" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand show" -s h -l help -d 'Print help'
complete -c tao-record -n "__fish_tao_record_using_subcommand history" -l json -d 'Print JSON even on a terminal'
complete -c tao-record -n "__fish_tao_record_using_subcommand history" -l text -d 'Print text even on a pipe'
complete -c tao-record -n "__fish_tao_record_using_subcommand history" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand history" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand history" -s h -l help -d 'Print help'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l state -d 'Only records in this state (PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN; Slurm\'s CANCELLED is taken for CANCELED); repeatable' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l id -d 'Only this record; repeatable (an unknown id is an error, exit 65)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l since -d 'Only records opened since: a duration back from now (30m, 12h, 7d; at most 100 years) or an RFC 3339 time' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l retry-of -d 'Only the retry chain that contains ID (first attempt first)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l sort -d 'Order of a listing of the store: `created` (oldest first by creation time; the default for the table) or `id` (the default for job lines on a pipe: one read per record, the fast path for cron pipelines); --id and --retry-of keep their own order' -r -f -a "created\t''
id\t''"
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l live -d 'Only records the cron pipeline has work for: PENDING, RUNNING, UNKNOWN, ERROR records that ran on Slurm but are not classified yet (a failure `tao-poll --watch | tao-record mark` recorded), and ERROR records classified retryable whose retry was never opened'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l json -d 'Print job lines even on a terminal (the default on a pipe)'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -l table -l text -d 'Print a table even on a pipe (the default on a terminal); `--text` is the same, as for show, history and mark'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand list" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-record -n "__fish_tao_record_using_subcommand gc" -l older-than -d 'Archive COMPLETE, ERROR and CANCELED records whose last transition is older than this (30d, 12h, ...; at most 100 years)' -r
complete -c tao-record -n "__fish_tao_record_using_subcommand gc" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-record -n "__fish_tao_record_using_subcommand gc" -s v -l verbose -d 'Print what the tool does (records written, transitions applied); repeatable'
complete -c tao-record -n "__fish_tao_record_using_subcommand gc" -s h -l help -d 'Print help'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "open" -d 'Mint an id, bind the job\'s directories and write a new record (state PENDING)'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "mark" -d 'Apply observations (job lines on stdin, or flags) to records and echo the updated lines'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "retry" -d 'Open the retry records of the retryable failures among the job lines on stdin, within the budget, and print them (the cron pipeline\'s retry stage)'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "show" -d 'Show one record (text on a terminal, JSON when piped)'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "history" -d 'Show a record\'s transitions: at, state, source, message'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "list" -d 'Print records: a table on a terminal (oldest first), job lines on a pipe (by id; --sort created: oldest first)'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "gc" -d 'Archive terminal records older than an age into $TAO_STATE_DIR/archive/'
complete -c tao-record -n "__fish_tao_record_using_subcommand help; and not __fish_seen_subcommand_from open mark retry show history list gc help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
