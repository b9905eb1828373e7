#!/usr/bin/env bash
# make first-webhook-time: a newcomer's first minute, timed. Clones this
# repository (its committed HEAD) into a temporary folder, runs `make dev`
# there on free loopback ports, sends the banner's first event when the
# banner prints, and stops at the demo receiver's first verified webhook.
# Prints the seconds from clone to first webhook and each phase's share,
# then stops make dev with a Ctrl-C (SIGINT) and checks it exits 0.
#
# COLD says which caches start empty, in the temporary folder:
#   build (default)  Go's build cache: everything is compiled, as after a
#                    fresh clone on a machine that has built Go before
#   all              also Go's module cache and npm's cache: every module,
#                    the Go toolchain and every npm package are downloaded
#   0                none: this machine's caches
# KEEP=1 keeps the temporary folder. The CPU seconds it prints (this script's
# children) bound the time on an idle machine from below, whatever the load.
set -euo pipefail
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d)
log=$tmp/dev.log
dev=
cleanup() {
  if [ -n "$dev" ] && kill -0 "$dev" 2>/dev/null; then kill -INT -- "-$dev" 2>/dev/null || true; wait "$dev" 2>/dev/null || true; fi
  if [ -z "${KEEP:-}" ]; then chmod -R u+w "$tmp" 2>/dev/null || true; rm -rf "$tmp"; else echo "kept $tmp"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

case ${COLD:-build} in
  build) export GOCACHE=$tmp/cache/go-build; caches="Go build cache empty" ;;
  all) export GOCACHE=$tmp/cache/go-build GOMODCACHE=$tmp/cache/go-mod GOFLAGS=-modcacherw npm_config_cache=$tmp/cache/npm
       caches="Go build and module caches and npm's cache empty" ;;
  0) caches="this machine's Go and npm caches" ;;
  *) echo "COLD=$COLD: want build, all or 0"; exit 2 ;;
esac

t0=$(now)
git clone --quiet "$repo" "$tmp/clone"
t1=$(now)
cd "$tmp/clone"
export API_ADDR=127.0.0.1:$(free_port) RECEIVER_ADDR=127.0.0.1:$(free_port) DYNAMODB_ADDR=127.0.0.1:$(free_port) SQS_ADDR=127.0.0.1:$(free_port)
setsid make dev >"$log" 2>&1 &
dev=$!

# The phases, seen from outside: npm's stamp and the dev binary (made side by side), then the banner.
t_npm= t_build=
wait_for() { # pattern, seconds
  for _ in $(seq $(($2 * 10))); do
    [ -n "$t_npm" ] || [ ! -e localstack/_emulators/node_modules/.installed ] || t_npm=$(now)
    [ -n "$t_build" ] || [ ! -e .cache/bin/dev ] || t_build=$(now)
    grep -q "$1" "$log" && return 0
    kill -0 "$dev" 2>/dev/null || { cat "$log"; echo "make dev stopped"; exit 1; }
    sleep 0.1
  done
  cat "$log"; echo "no '$1' after $2 s"; exit 1
}
wait_for 'gifq-webhooks is running' 900
t2=$(now)
api=$(awk '/^  API  /{print $2; exit}' "$log")
key=$(awk '/^  API key/{print $3; exit}' "$log")
curl -sf -X POST "$api/v1/events" -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
  -d '{"event":"payout.fulfilled","payout_type":"crypto","data":{"id":"po_123"}}' >/dev/null
wait_for '<- webhook .* signatures verified' 60
t3=$(now)

kill -INT -- "-$dev"
rc=0; wait "$dev" || rc=$?
dev=
echo "first webhook $(secs "$t0" "$t3") s after clone ($caches)"
# make dev builds while npm installs: each phase's end, from make dev's start.
echo "  clone $(secs "$t0" "$t1") s; from make dev's start: npm ci done at $(secs "$t1" "${t_npm:-$t1}") s, go build at" \
  "$(secs "$t1" "${t_build:-$t2}") s, banner at $(secs "$t1" "$t2") s; first event to webhook $(secs "$t2" "$t3") s"
times >"$tmp/times" # in this shell: in a pipeline it would run in a subshell, which has no children
echo "  CPU of everything it ran: $(tail -n 1 "$tmp/times" | awk '{ print "user " $1 ", system " $2 }')"
echo "  $(date -u +%F) on $(nproc) cores, $(uname -m), $(go env GOVERSION), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  make dev after Ctrl-C: exit status $rc"
[ "$rc" = 0 ]
