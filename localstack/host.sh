#!/usr/bin/env bash
# LocalStack on this host, without Docker (make localstack-up / localstack-down).
#
#   localstack/host.sh install   the pinned LocalStack core and our plugins into localstack/_venv
#   localstack/host.sh up        install if needed, start on 127.0.0.1:4566, wait for health
#   localstack/host.sh down      stop LocalStack and every process it started
#
# State (pid, log, LocalStack's files, the functions' unzipped code) lives in
# $LOCALSTACK_STATE (default .cache/localstack); the log is $LOCALSTACK_STATE/localstack.log.
# See docs/deploy.md, "LocalStack".
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=localstack/_venv
STATE=${LOCALSTACK_STATE:-.cache/localstack}
PIDFILE=$STATE/localstack.pid
LOG=$STATE/localstack.log
LISTEN=${LOCALSTACK_LISTEN:-127.0.0.1:4566}
HEALTH=http://$LISTEN/_localstack/health
UP_TIMEOUT=${LOCALSTACK_UP_TIMEOUT:-180}

# LocalStack 4.14 is written for Python 3.13 (its .python-version; it uses
# 3.12 syntax although its metadata says >=3.10). LOCALSTACK_PYTHON picks one.
python313() {
  local c
  for c in "${LOCALSTACK_PYTHON:-}" python3.13 /root/.pyenv/versions/3.13*/bin/python3.13 python3.12; do
    [[ -n $c ]] && command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { command -v "$c"; return; }
  done
  echo "LocalStack 4.14 needs Python 3.12 or newer (3.13 preferred); set LOCALSTACK_PYTHON=/path/to/python3.13" >&2
  return 1
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The install is redone when the requirements or the plugin change.
install() {
  local stamp=$VENV/.installed
  local want
  if [[ -x $VENV/bin/python ]] && ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    rm -rf "$VENV" # made with a Python too old for LocalStack 4.14
  fi
  want=$(cat localstack/requirements.txt localstack/plugin/pyproject.toml localstack/plugin/gifq_localstack/*.py | sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then return; fi
  local t0; t0=$(now)
  # --no-compile: no byte-compiling of all ~200 packages up front; Python
  # compiles what LocalStack imports, on first use.
  echo "installing LocalStack (localstack/requirements.txt) into $VENV"
  [[ -x $VENV/bin/python ]] || "$(python313)" -m venv "$VENV"
  echo "with $("$VENV/bin/python" --version)"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-compile -r localstack/requirements.txt
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall ./localstack/plugin
  rm -rf localstack/plugin/build localstack/plugin/*.egg-info
  echo "$want" >"$stamp"
  echo "installed in $(since "$t0") s"
}

running() { [[ -f $PIDFILE ]] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
healthy() { curl -fsS -m 2 "$HEALTH" >/dev/null 2>&1; }

up() {
  install
  if running && healthy; then echo "LocalStack already running (pid $(cat "$PIDFILE")) on $LISTEN"; return; fi
  if running; then echo "a LocalStack (pid $(cat "$PIDFILE")) is running but not healthy: make localstack-down first" >&2; exit 1; fi
  if healthy; then echo "something else already answers on $LISTEN: stop it first" >&2; exit 1; fi
  mkdir -p "$STATE/tmp"
  local t0; t0=$(now)
  # The SQS event source: LocalStack's one poller waits 1 s after every batch
  # and backs off up to 10 s on an empty queue (AWS long-polls with several
  # pollers); shorter waits keep retries and rate-limit slots near their
  # times. setsid: LocalStack leads its own process group, so that `down` can stop
  # it together with every function process it started.
  # The CA variables pass through: LocalStack's Kinesis installs its
  # backend (npm kinesis-local) on the first call, through the same
  # registry access as the host's npm. That backend listens on 0.0.0.0:
  # loopback.cjs, preloaded, binds it to 127.0.0.1.
  env -i PATH="$PATH" HOME="${HOME:-/root}" LANG=C.UTF-8 TMPDIR="$PWD/$STATE/tmp" \
    ${NODE_EXTRA_CA_CERTS:+NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"} ${SSL_CERT_FILE:+SSL_CERT_FILE="$SSL_CERT_FILE"} \
    NODE_OPTIONS="--require $PWD/localstack/loopback.cjs" \
    GATEWAY_LISTEN="$LISTEN" \
    LOCALSTACK_HOST="localhost.localstack.cloud:${LISTEN##*:}" \
    DNS_ADDRESS=0 SKIP_SSL_CERT_DOWNLOAD=1 DISABLE_EVENTS=1 \
    LOCALSTACK_CLI=0 FILESYSTEM_ROOT= \
    SERVICES=cloudformation,s3,ssm,sts,iam,ecr,lambda,sqs,dynamodb,apigateway,events,logs,cloudwatch,sns,kms,kinesis,ses \
    PROVIDER_OVERRIDE_DYNAMODB=moto \
    LAMBDA_RUNTIME_EXECUTOR=host \
    LAMBDA_EVENT_SOURCE_MAPPING_POLL_INTERVAL_SEC=0.05 LAMBDA_EVENT_SOURCE_MAPPING_MAX_BACKOFF_ON_EMPTY_POLL_SEC=0.25 \
    LAMBDA_KEEPALIVE_MS="${LOCALSTACK_LAMBDA_KEEPALIVE_MS:-600000}" \
    DEBUG="${LOCALSTACK_DEBUG:-0}" \
    setsid "$VENV/bin/python" -m localstack.runtime.main >"$LOG" 2>&1 </dev/null 9>&- &
  echo $! >"$PIDFILE"
  echo "starting LocalStack 4.14.0 (pid $(cat "$PIDFILE")) on $LISTEN, log $LOG"
  local deadline=$((SECONDS + UP_TIMEOUT))
  until healthy; do
    if ! running; then echo "LocalStack exited during startup; last lines of $LOG:" >&2; tail -n 40 "$LOG" >&2; exit 1; fi
    if ((SECONDS > deadline)); then echo "LocalStack not healthy after ${UP_TIMEOUT}s; last lines of $LOG:" >&2; tail -n 40 "$LOG" >&2; down; exit 1; fi
    sleep 0.5
  done
  echo "LocalStack is up on $LISTEN in $(since "$t0") s"
}

# alive lists the live processes of group $1 (a zombie is dead: it waits
# only for its parent to read its status).
alive() { ps -eo pid=,pgid=,stat=,args= | awk -v g="$1" '$2 == g && $3 !~ /^Z/'; }

# Stops the process group: LocalStack and the function processes it started.
down() {
  if [[ ! -f $PIDFILE ]]; then echo "LocalStack (host) is not running"; return; fi
  local pid; pid=$(cat "$PIDFILE")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 1 40); do [[ -n $(alive "$pid") ]] || break; sleep 0.5; done
    if [[ -n $(alive "$pid") ]]; then
      echo "LocalStack did not stop in 20 s; killing its process group"
      kill -KILL -- "-$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$PIDFILE"
  if [[ -n $(alive "$pid") ]]; then echo "processes of LocalStack's group $pid remain:" >&2; alive "$pid" >&2; exit 1; fi
  echo "LocalStack stopped (process group $pid: no process left)"
}

# One host.sh at a time: two installs into one venv, or two starts, would
# trample each other. (LocalStack itself does not inherit the lock: 9>&- below.)
mkdir -p "$STATE"
exec 9>"$STATE/host.lock"
if ! flock -w 600 9; then echo "another localstack/host.sh is still running ($STATE/host.lock)" >&2; exit 1; fi

case "${1:-}" in
install) install ;;
up) up ;;
down) down ;;
*) echo "usage: $0 install|up|down" >&2; exit 2 ;;
esac
