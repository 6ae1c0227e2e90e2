# The tao-redact built-in patterns as GNU `sed -E` substitutions, for the
# throughput baseline of bench/run.sh (run with LC_ALL=C so bytes need not
# be UTF-8). sed has no keyword prefilter and no post-match checks (entropy,
# placeholders, decode checks), so it masks more than tao-redact does; it is
# a speed baseline, not a second implementation. Multi-line PEM blocks are
# masked only on their BEGIN line.
s#-----BEGIN[ A-Z0-9]{0,32}PRIVATE KEY( BLOCK)?-----.*#[REDACTED:pem-private-key]#g
s#\b(hf_|api_org_)[A-Za-z0-9]{34}\b#[REDACTED:huggingface-token]#g
s#\bnvapi-[A-Za-z0-9_-]{60,}#[REDACTED:ngc-api-key]#g
s#(^|[^A-Za-z0-9+/])[A-Za-z0-9+/]{84}([^A-Za-z0-9+/=]|$)#\1[REDACTED:ngc-legacy-api-key]\2#g
s#\b(A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b#[REDACTED:aws-access-key-id]#g
s#((aws)?[_-]?secret[_-]?(access)?[_-]?key["']?[[:space:]]*(=|:|=>)[[:space:]]*["']?)[A-Za-z0-9/+=]{40}([^A-Za-z0-9/+=]|$)#\1[REDACTED:aws-secret-access-key]\5#gI
s#\bgh[pousr]_[A-Za-z0-9]{36,}\b#[REDACTED:github-token]#g
s#\bgithub_pat_[A-Za-z0-9_]{82}\b#[REDACTED:github-fine-grained-pat]#g
s#\bgl(pat|dt|rt)-[A-Za-z0-9_-]{20,}#[REDACTED:gitlab-token]#g
s#\bxox[abeoprs]-([0-9]+-)+[A-Za-z0-9-]{8,}#[REDACTED:slack-token]#g
s#hooks\.slack\.com/(services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}#[REDACTED:slack-webhook]#g
s#\bsk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}#[REDACTED:anthropic-api-key]#g
s#\bsk-(proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|\bsk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}\b|\bsk-[A-Za-z0-9]{48}\b#[REDACTED:openai-api-key]#g
s#(wandb.{0,32}\b)[0-9a-f]{40}\b#\1[REDACTED:wandb-api-key]#gI
s#\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_/+-]*=*#[REDACTED:jwt]#g
s#(\b[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]:/@"'<>]+:)[^[:space:]/@"'<>]+@#\1[REDACTED:url-credentials]@#g
s#(\bmachine[[:space:]]+[^[:space:]]+[[:space:]]+login[[:space:]]+[^[:space:]]+[[:space:]]+password[[:space:]]+)[^[:space:]"']+#\1[REDACTED:netrc-password]#gI
s#^([[:space:]]*password[[:space:]]+)[^[:space:]"']+([[:space:]]*)$#\1[REDACTED:netrc-password]\2#I
s#(\\?"(auth|identitytoken|registrytoken)\\?"[[:space:]]*:[[:space:]]*\\?")[A-Za-z0-9+/=_.-]{8,}#\1[REDACTED:docker-config-auth]#gI
s#(\b(docker|podman|nerdctl|buildah|skopeo|helm|singularity|apptainer|oras|crane)\b.*\blogin\b.*[[:space:]](-p|--password)([[:space:]]+|=)["']?)[^[:space:]"']+#\1[REDACTED:registry-login-password]#I
s#(authorization[]\\"']{0,3}[ 	]*[:=,][ 	]*[\\"']{0,2}[ 	]*(bearer|token)[ 	]+)[A-Za-z0-9._~+/-]{8,}=*#\1[REDACTED:http-bearer-token]#gI
s#(authorization[]\\"']{0,3}[ 	]*[:=,][ 	]*[\\"']{0,2}[ 	]*basic[ 	]+)[A-Za-z0-9+/]{8,}={0,2}#\1[REDACTED:http-basic-auth]#gI
s#((^|[^A-Za-z0-9_.-])[A-Za-z0-9_.-]*(token|key|secret|passw(or)?d|pwd|credentials?)\\?["']?[[:space:]]*(:=|=>|=|:)[ 	]*\\?["']?)[^[:space:]"'\\,;)}]+#\1[REDACTED:secret-assignment]#gI
s#((^|[[:space:]])--?([a-z0-9]+-)*(token|key|secret|password|passwd|apikey)([[:space:]]+|=)["']?)[^[:space:]"']+#\1[REDACTED:secret-flag]#gI
