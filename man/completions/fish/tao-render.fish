complete -c tao-render -l site-profile -d 'Site profile (built-in name or TOML file)' -r
complete -c tao-render -l print -d 'Print the bare script of one job line'
complete -c tao-render -l allow-unlimited -d 'No effect (kept for old command lines)'
complete -c tao-render -s q -l quiet -d 'Print no warnings (errors are always printed)'
complete -c tao-render -s v -l verbose -d 'Print what the tool does'
complete -c tao-render -s V -l version -d 'Print the version'
complete -c tao-render -s h -l help -d 'Print help (see more with \'--help\')'
