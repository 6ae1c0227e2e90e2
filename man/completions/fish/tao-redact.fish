# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tao_redact_global_optspecs
    string join \n rules= secret-env= list-rules q/quiet v/verbose V/version h/help
end

function __fish_tao_redact_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tao_redact_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tao_redact_using_subcommand
    set -l cmd (__fish_tao_redact_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tao-redact -n "__fish_tao_redact_needs_command" -l rules -d 'Add the rules of FILE to the built-in catalogue' -r
complete -c tao-redact -n "__fish_tao_redact_needs_command" -l secret-env -d 'Also mask the exact value of $NAME (repeatable)' -r
complete -c tao-redact -n "__fish_tao_redact_needs_command" -l list-rules -d 'Print the rule catalogue and exit'
complete -c tao-redact -n "__fish_tao_redact_needs_command" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-redact -n "__fish_tao_redact_needs_command" -s v -l verbose -d 'Print what the tool does'
complete -c tao-redact -n "__fish_tao_redact_needs_command" -s V -l version -d 'Print the version'
complete -c tao-redact -n "__fish_tao_redact_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c tao-redact -n "__fish_tao_redact_needs_command" -f -a "lint" -d 'Lint job lines (stdin) or script files: the secret gate before submit'
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -l rules -d 'Add the rules of FILE to the built-in catalogue' -r
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -l secret-env -d 'Also mask the exact value of $NAME (repeatable)' -r
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -l list-rules -d 'Print the rule catalogue and exit'
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -s v -l verbose -d 'Print what the tool does'
complete -c tao-redact -n "__fish_tao_redact_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
