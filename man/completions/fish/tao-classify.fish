complete -c tao-classify -l log -d 'Use FILE (a job\'s main.out/main.err) as the evidence for every ERROR line; repeatable' -r
complete -c tao-classify -l max-attempts -d 'Retry budget: retry infra faults while attempt < N; 1-100' -r
complete -c tao-classify -l rules -d 'Add or replace rules from a TOML file; repeatable' -r
complete -c tao-classify -l list-rules -d 'Print the rule catalogue as JSON lines and exit'
complete -c tao-classify -s q -l quiet -d 'Print no warnings on standard error; errors are always printed'
complete -c tao-classify -s v -l verbose -d 'Print what the tool does on standard error (one line per classified job)'
complete -c tao-classify -s V -l version -d 'Print the version'
complete -c tao-classify -s h -l help -d 'Print help (see more with \'--help\')'
