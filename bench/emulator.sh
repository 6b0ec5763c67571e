#!/usr/bin/env bash
# Benchmark of the lab's path emulator (tcpwhy-lab emulate): how many packets per second it
# carried and how late its verdicts left (p50/p99/max after their due time) under a paced
# echo, 1000 writes/s each way by default, through client — router — server namespaces
# with a 20 ms delay each way. These are the figures the lab's tests must not assert
# (they depend on the machine and its load); see bench/README.md.
#
#   bench/emulator.sh [--rate W] [--seconds S] [--delay-ms D]
#
#   --rate W       writes per second by the client, each echoed (default 1000)
#   --seconds S    how long the client writes (default 5)
#   --delay-ms D   the emulator's delay each way (default 20)
#   Environment: TCPWHY_LAB=path uses that binary instead of building this workspace's;
#   PYTHON (python3). Needs root (network namespaces, iptables).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RATE=1000 SECONDS_=5 DELAY_MS=20
while (($#)); do
    case $1 in
        --rate) RATE=$2; shift 2 ;;
        --seconds) SECONDS_=$2; shift 2 ;;
        --delay-ms) DELAY_MS=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "emulator.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $(id -u) == 0 ]] || { echo "emulator.sh: needs root (network namespaces, iptables)" >&2; exit 2; }
for tool in ip iptables "${PYTHON:-python3}"; do
    command -v "$tool" >/dev/null || { echo "emulator.sh: missing $tool" >&2; exit 2; }
done
PY=${PYTHON:-python3}

if [[ -z ${TCPWHY_LAB:-} ]]; then
    (cd "$ROOT" && cargo build --release --quiet -p tcpwhy-lab)
    TCPWHY_LAB="${CARGO_TARGET_DIR:-$ROOT/target}/release/tcpwhy-lab"
fi

# Three namespaces named after this shell, addresses of our own (10.79.x).
NS_C=twe$$c NS_R=twe$$r NS_S=twe$$s
CLI_IP=10.79.1.2 SRV_IP=10.79.2.2 QUEUE=9
TMP=$(mktemp -d /tmp/tcpwhy-emubench.XXXXXX)
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    for ns in "$NS_C" "$NS_R" "$NS_S"; do ip netns del "$ns" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

for ns in "$NS_C" "$NS_R" "$NS_S"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
done
ip link add vc netns "$NS_C" type veth peer name vrc netns "$NS_R"
ip link add vs netns "$NS_S" type veth peer name vrs netns "$NS_R"
ip -n "$NS_C" addr add "$CLI_IP/24" dev vc
ip -n "$NS_R" addr add 10.79.1.1/24 dev vrc
ip -n "$NS_R" addr add 10.79.2.1/24 dev vrs
ip -n "$NS_S" addr add "$SRV_IP/24" dev vs
for pair in "$NS_C vc" "$NS_R vrc" "$NS_R vrs" "$NS_S vs"; do
    read -r ns dev <<<"$pair"
    ip -n "$ns" link set "$dev" up
done
ip -n "$NS_C" route add default via 10.79.1.1
ip -n "$NS_S" route add default via 10.79.2.1
ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$NS_R" iptables -A FORWARD -p tcp -j NFQUEUE --queue-num "$QUEUE"

cat >"$TMP/path.json" <<JSON
{"client":"$CLI_IP","server":"$SRV_IP","seed":1,
 "to_server":{"delay_ms":$DELAY_MS},"to_client":{"delay_ms":$DELAY_MS}}
JSON
# The emulator prints "ready" once bound; packets queued before that would be dropped.
ip netns exec "$NS_R" "$TCPWHY_LAB" emulate --queue "$QUEUE" --config "$TMP/path.json" \
    --log "$TMP/decisions.jsonl" >"$TMP/emulator.out" 2>&1 &
EMU=$!
PIDS+=("$EMU")
for _ in $(seq 100); do grep -qs ready "$TMP/emulator.out" && break; sleep 0.05; done
grep -qs ready "$TMP/emulator.out" || { cat "$TMP/emulator.out" >&2; exit 1; }

ip netns exec "$NS_S" "$PY" "$ROOT/bench/lab/paced_echo.py" serve --bind "$SRV_IP" >"$TMP/server.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
    ip netns exec "$NS_S" ss -Hltn "sport = :9100" | grep -q . && break
    sleep 0.05
done

echo "== path emulator: $RATE writes/s echoed for ${SECONDS_} s, ${DELAY_MS} ms each way ($(nproc) cores, $(uname -r))"
ip netns exec "$NS_C" "$PY" "$ROOT/bench/lab/paced_echo.py" client --host "$SRV_IP" \
    --rate "$RATE" --seconds "$SECONDS_" | tee "$TMP/client.out"
kill -TERM "$EMU"
wait "$EMU" || { echo "emulator.sh: the emulator exited $?" >&2; cat "$TMP/emulator.out" >&2; exit 1; }

# Packets over the time between the first and the last arrival; lateness as the summary
# line computed it (accepted packets: verdict issued − planned release).
"$PY" - "$TMP/decisions.jsonl" <<'PY'
import json, sys
pkts, summary = [], None
for line in open(sys.argv[1]):
    v = json.loads(line)
    if "id" in v:
        pkts.append(v)
    elif "summary" in v:
        summary = v["summary"]
t = [p["t_us"] for p in pkts]
span = (max(t) - min(t)) / 1e6 if len(t) > 1 else 0.0
late = summary["late_us"]
c = summary["counts"]
print(f"packets: {c['packets']} ({c['to_server']} to server, {c['to_client']} to client) "
      f"in {span:.2f} s: {c['packets'] / span if span else 0:.0f} packets/s")
print(f"lateness after the due time: p50 {late['p50']} µs, p99 {late['p99']} µs, max {late['max']} µs")
print(f"kernel drops: queue {summary['kernel_queue_dropped']}, socket {summary['kernel_user_dropped']}; "
      f"most held at once {c['max_held']}")
PY
