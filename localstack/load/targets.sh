#!/usr/bin/env bash
# make load-targets: the three throughput runs, each against a fresh
# make dev (its own data directory and free loopback ports, so a running
# make dev is left alone), and one table of the results:
#   1. 2,000 events unpaced to one endpoint, per-endpoint cap off
#   2. 2,000 events unpaced to one endpoint, the shipped cap of 5
#   3. 1,000 events paced at 50/s, cap off
# LOAD_RUNS picks some of them (e.g. LOAD_RUNS="1 3"); PPROF=1 also writes a
# CPU profile of make dev during each run to .cache/load/run<N>.pprof;
# LOAD_EVENTS overrides the event count of the unpaced runs; DEV_BIN runs
# another build of make dev's binary (to compare commits on the same machine);
# LOAD_MEMORY=1 runs the emulators without their files (dynoxide in memory,
# fauxqs without its data directory), for what the SQLite file costs.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
out=.cache/load
mkdir -p "$out"
dev_bin=${DEV_BIN:-$out/dev}
[ -n "${DEV_BIN:-}" ] || $GO build -o "$out/dev" ./localstack/dev
$GO build -o "$out/load" ./localstack/load

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

events=${LOAD_EVENTS:-2000}
declare -A label cap args
label[1]="$events events unpaced, 8 producers, cap off"; cap[1]=0; args[1]="-events $events -rate 0"
label[2]="$events events unpaced, 8 producers, cap 5";   cap[2]=5; args[2]="-events $events -rate 0"
label[3]="1000 events paced at 50/s, cap off";          cap[3]=0; args[3]="-events 1000 -rate 50"

rows=()
for n in ${LOAD_RUNS:-1 2 3}; do
  data=$(mktemp -d)
  api=$(free_port); ddb=$(free_port); sqs=$(free_port); rcv=$(free_port); pp=$(free_port)
  env API_ADDR=127.0.0.1:$api DYNAMODB_ADDR=127.0.0.1:$ddb SQS_ADDR=127.0.0.1:$sqs RECEIVER_ADDR=127.0.0.1:$rcv \
    DATA_DIR="$data" STATS=off EMULATORS_IN_MEMORY=${LOAD_MEMORY:-0} ENDPOINT_MAX_IN_FLIGHT=${cap[$n]} GIFQ_PPROF_ADDR=127.0.0.1:$pp \
    "$dev_bin" >"$out/run$n.dev.log" 2>&1 &
  dev=$!
  for _ in $(seq 300); do
    grep -q 'gifq-webhooks is running' "$out/run$n.dev.log" && break
    kill -0 $dev 2>/dev/null || { cat "$out/run$n.dev.log"; exit 1; }
    sleep 0.1
  done
  prof=()
  [ -n "${PPROF:-}" ] && prof=(-pprof 127.0.0.1:$pp -pprof-out "$out/run$n.pprof")
  echo "== run $n: ${label[$n]}"
  "$out/load" -api http://127.0.0.1:$api -dynamodb http://127.0.0.1:$ddb -accounts 1 -workers 8 \
    -account-rate 1000 -body-bytes 200 ${args[$n]} "${prof[@]}" -row "${label[$n]}" | tee "$out/run$n.txt"
  kill -INT $dev; wait $dev || true
  # The poller's last line: its receives and the messages they returned.
  recv=$(grep -o '"msg":"poller stopped".*' "$out/run$n.dev.log" | sed -E 's/.*"receives":([0-9]+),"messages":([0-9]+).*/\1 for \2 messages/' || true)
  rows+=("$(grep '^| ' "$out/run$n.txt" || echo "| ${label[$n]} | failed: see $out/run$n.txt | | | |") ${recv:-?} |")
  rm -rf "$data"
done

echo
echo "| run | delivered | deliveries/s | ingest to first attempt p50 / p99 | CPU ms per delivery (ours + emulators) | SQS receives |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
