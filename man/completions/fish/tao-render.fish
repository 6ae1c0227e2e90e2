complete -c tao-render -l site-profile -d 'Site profile: `local`, `cs-oci-ord` (default), or a TOML file' -r
complete -c tao-render -l print -d 'Print the bare script instead of the job line'
complete -c tao-render -l allow-unlimited -d 'No effect (kept for old command lines)'
complete -c tao-render -s q -l quiet -d 'Print no warnings on standard error; errors are always printed'
complete -c tao-render -s v -l verbose -d 'Print what the tool does on standard error (one line per line rendered)'
complete -c tao-render -s V -l version -d 'Print the version'
complete -c tao-render -s h -l help -d 'Print help (see more with \'--help\')'
