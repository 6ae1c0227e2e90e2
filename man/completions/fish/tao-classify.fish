complete -c tao-classify -l log -d 'Use FILE (a job\'s main.out/main.err) as the evidence; repeatable' -r
complete -c tao-classify -l max-attempts -d 'Retry budget (1-100): retry infra faults while attempt < N (default 10)' -r
complete -c tao-classify -l rules -d 'Add or replace rules from a TOML file; repeatable' -r
complete -c tao-classify -l list-rules -d 'Print the rule catalogue as JSON lines and exit'
complete -c tao-classify -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-classify -s v -l verbose -d 'Print what the tool does (one line per classified job)'
complete -c tao-classify -s V -l version -d 'Print the version'
complete -c tao-classify -s h -l help -d 'Print help (see more with \'--help\')'
