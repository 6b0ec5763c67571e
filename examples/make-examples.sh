#!/usr/bin/env bash
# Regenerates the example captures in examples/ with the real Linux kernel: a client and
# a server namespace joined through a router namespace whose links are rate-limited (htb),
# small Python workloads, tcpdump inside the namespaces. Run as root. See examples/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE}
# Bottleneck: 50 Mbit/s each way with a 100-packet FIFO (≈ 24 ms of queue at 1514 B).
# This kernel has no netem (nor fq), so the only delay is what the queue adds under load.
RATE=${RATE:-50mbit}
QUEUE_PKTS=${QUEUE_PKTS:-100}
PY=${PYTHON:-python3}
# Snaplen 256 keeps every header (Ethernet, IP, TCP with options) and the whole HTTP
# request and response head, and truncates the body bytes (all "x"), so six 200 KB
# responses fit in under 300 KB. The bulk capture keeps 128 bytes, as the benchmark does.
HTTP_SNAPLEN=256
BULK_SNAPLEN=128
WORKLOAD="$HERE/lab/workload.py"

# Names are prefixed so they cannot collide with anything else on the host.
NS_C=twx-cli NS_R=twx-rtr NS_S=twx-srv
CLI_IP=10.77.1.2 RTR_C_IP=10.77.1.1 RTR_S_IP=10.77.2.1 SRV_IP=10.77.2.2
PORT=8080

PIDS=()
TMP=$(mktemp -d /tmp/tcpwhy-examples.XXXXXX)

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    for ns in "$NS_C" "$NS_R" "$NS_S"; do
        ip netns del "$ns" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

[[ $(id -u) == 0 ]] || { echo "make-examples.sh: needs root (network namespaces)" >&2; exit 2; }
for tool in ip tc tcpdump "$PY"; do
    command -v "$tool" >/dev/null || { echo "make-examples.sh: missing $tool" >&2; exit 2; }
done
for ns in "$NS_C" "$NS_R" "$NS_S"; do
    if ip netns list | grep -qw "$ns"; then
        echo "make-examples.sh: namespace $ns exists (another run?); remove it with: ip netns del $ns" >&2
        trap - EXIT; rm -rf "$TMP"; exit 2
    fi
done

# Not for background jobs: a backgrounded function is a subshell, so $! would not be the
# process to signal.
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# Rate-limits egress of DEV in NS: htb class at RATE with a FIFO of QUEUE_PKTS packets.
shape() {
    local ns=$1 dev=$2
    in_ns "$ns" tc qdisc add dev "$dev" root handle 1: htb default 10 r2q 100
    in_ns "$ns" tc class add dev "$dev" parent 1: classid 1:10 htb rate "$RATE" burst 15k
    in_ns "$ns" tc qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit "$QUEUE_PKTS"
}

OFFLOADS=off
setup() {
    for ns in "$NS_C" "$NS_R" "$NS_S"; do
        ip netns add "$ns"
        in_ns "$ns" ip link set lo up
        # No IPv6 link-local chatter (router solicitations, MLD) in the captures.
        in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    done
    ip link add twx-c0 netns "$NS_C" type veth peer name twx-r1 netns "$NS_R"
    ip link add twx-s0 netns "$NS_S" type veth peer name twx-r2 netns "$NS_R"
    in_ns "$NS_C" ip addr add "$CLI_IP/24" dev twx-c0
    in_ns "$NS_R" ip addr add "$RTR_C_IP/24" dev twx-r1
    in_ns "$NS_R" ip addr add "$RTR_S_IP/24" dev twx-r2
    in_ns "$NS_S" ip addr add "$SRV_IP/24" dev twx-s0
    local pair
    for pair in "$NS_C twx-c0" "$NS_R twx-r1" "$NS_R twx-r2" "$NS_S twx-s0"; do
        set -- $pair
        in_ns "$1" ip link set "$2" up
        # One packet per MSS on the wire, as a NIC capture of a non-offloading path shows
        # (veth would otherwise carry 64 KB TSO/GSO super-segments end to end).
        if ! command -v ethtool >/dev/null; then
            OFFLOADS="on (no ethtool)"
        elif ! in_ns "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1; then
            OFFLOADS="on (ethtool -K failed on $2)"
        fi
    done
    in_ns "$NS_C" ip route add default via "$RTR_C_IP"
    in_ns "$NS_S" ip route add default via "$RTR_S_IP"
    in_ns "$NS_R" sysctl -qw net.ipv4.ip_forward=1
    shape "$NS_R" twx-r1   # server → client direction
    shape "$NS_R" twx-r2   # client → server direction
}

start_server() {
    ip netns exec "$NS_S" "$PY" "$WORKLOAD" serve --bind "$SRV_IP" --port "$PORT" >"$TMP/server.log" 2>&1 &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        in_ns "$NS_S" ss -Hltn "sport = :$PORT" | grep -q . && return 0
        sleep 0.05
    done
    echo "server did not start:" >&2; cat "$TMP/server.log" >&2; exit 1
}

# capture NAME NS DEV SNAPLEN -- CLIENT-ARGS...: runs the workload client while tcpdump
# records DEV inside NS, then moves the file to $OUT/NAME.pcap.
capture() {
    local name=$1 ns=$2 dev=$3 snap=$4; shift 5
    local file="$TMP/$name.pcap" log="$TMP/$name.tcpdump.log"
    # -Z root: keep root so tcpdump can write into $TMP; -n: no DNS.
    ip netns exec "$ns" tcpdump -n -i "$dev" -s "$snap" -Z root -w "$file" >"$log" 2>&1 &
    local tpid=$!
    PIDS+=("$tpid")
    local i
    for i in $(seq 100); do grep -qs "listening on" "$log" && break; sleep 0.05; done
    grep -q "listening on" "$log" || { echo "tcpdump did not start:" >&2; cat "$log" >&2; exit 1; }
    sleep 0.2
    echo "== $name"
    in_ns "$NS_C" "$PY" "$WORKLOAD" get --host "$SRV_IP" --port "$PORT" "$@"
    sleep 1   # let the closing FIN/ACKs and TIME_WAIT traffic land in the capture
    kill -TERM "$tpid"   # (SIGINT is ignored by background jobs of a script)
    wait "$tpid" || true
    grep -E "captured|dropped" "$log" | sed "s/^/   tcpdump: /" || true
    mv "$file" "$OUT/$name.pcap"
    chmod 644 "$OUT/$name.pcap"
}

setup
start_server
echo "kernel $(uname -r); path $RATE, $QUEUE_PKTS-packet FIFO each way; offloads $OFFLOADS"
capture http-new-connections "$NS_S" twx-s0 "$HTTP_SNAPLEN" -- --size 200000 --count 6 --interval 0.5 --new-connection
capture http-keepalive "$NS_S" twx-s0 "$HTTP_SNAPLEN" -- --size 200000 --count 6 --interval 0.5
capture bulk "$NS_C" twx-c0 "$BULK_SNAPLEN" -- --size 2000000 --count 1
ls -l "$OUT"/*.pcap
