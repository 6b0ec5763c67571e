#!/usr/bin/env bash
# Benchmark: tcpwhy flows against tshark (conversations; TCP expert analysis), tcptrace and
# a bare parse-headers + hash-the-4-tuple loop, all on one core and on the same capture of
# real kernel traffic, in one run. See bench/README.md.
#
#   bench/run.sh [--packets N] [--keep] [--regen] [--runs R] [--skip-tshark-expert]
#                [--expert-packets N]
#
#   --packets N           packets in the large capture (default 5000000); the small one has N/5
#   --keep                keep bench/out/*.pcap after the run (a later run reuses them)
#   --regen               make new captures even if bench/out has them
#   --runs R              timed runs of each fast tool, median reported (default 3)
#   --skip-tshark-expert  do not run `tshark -z expert` (minutes, GBs of memory)
#   --expert-packets N    run `tshark -z expert` on the first N packets only
#   Environment: TCPWHY=path times that binary instead of building this workspace's.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BENCH="$ROOT/bench"
OUT="$BENCH/out"
PACKETS=5000000
KEEP=0
REGEN=0
RUNS=3
SKIP_EXPERT=0
EXPERT_PACKETS=0
while (($#)); do
    case $1 in
        --packets) PACKETS=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        --regen) REGEN=1; shift ;;
        --runs) RUNS=$2; shift 2 ;;
        --skip-tshark-expert) SKIP_EXPERT=1; shift ;;
        --expert-packets) EXPERT_PACKETS=$2; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $PACKETS =~ ^[0-9]+$ && $PACKETS -ge 1000 ]] || { echo "run.sh: --packets must be ≥ 1000" >&2; exit 2; }

BIG="$OUT/bench-$PACKETS.pcap"
SMALL="$OUT/bench-$PACKETS-fifth.pcap"
INFO="$OUT/bench-$PACKETS.info"
mkdir -p "$OUT"
TMP=$(mktemp -d /tmp/tcpwhy-bench.XXXXXX)

# Traffic generation: two namespaces joined by one veth pair, addresses we own.
NS_C=twb-cli NS_S=twb-srv
CLI_IP=10.78.0.1 SRV_IP=10.78.0.2
BULK_STREAMS=${BULK_STREAMS:-4}
RR_CLIENTS=${RR_CLIENTS:-3}
# Caps the client's sending rate so tcpdump (sharing the 2 cores) keeps up.
RATE=${RATE:-1gbit}
PY=${PYTHON:-python3}
PIDS=()

cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    ip netns del "$NS_C" 2>/dev/null || true
    ip netns del "$NS_S" 2>/dev/null || true
    rm -rf "$TMP"
    if ((KEEP == 0)); then
        rm -f "$BIG" "$SMALL" "$BIG.partial" "$INFO"
    fi
}
trap cleanup EXIT

section() { printf '\n== %s\n' "$*"; }
need() { command -v "$1" >/dev/null || { echo "run.sh: missing $1 ($2)" >&2; exit 2; }; }

# Number of packets in a pcap, counted by the baseline program (fast).
count_packets() { "$BARELOOP" "$1" | sed -n 's/^packets=\([0-9]*\).*/\1/p'; }

make_captures() {
    [[ $(id -u) == 0 ]] || { echo "run.sh: making the capture needs root (network namespaces)" >&2; exit 2; }
    need tcpdump "apt-get install tcpdump"
    need "$PY" "python3"
    local ns
    for ns in "$NS_C" "$NS_S"; do
        if ip netns list | grep -qw "$ns"; then
            echo "run.sh: namespace $ns exists (another run?); remove it: ip netns del $ns" >&2
            exit 2
        fi
    done
    section "making a $PACKETS-packet capture of namespace traffic"
    ip netns add "$NS_C"
    ip netns add "$NS_S"
    ip link add twb-c netns "$NS_C" type veth peer name twb-s netns "$NS_S"
    ip -n "$NS_C" addr add "$CLI_IP/24" dev twb-c
    ip -n "$NS_S" addr add "$SRV_IP/24" dev twb-s
    local offloads=off
    for ns in "$NS_C" "$NS_S"; do
        ip -n "$ns" link set lo up
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    done
    ip -n "$NS_C" link set twb-c up
    ip -n "$NS_S" link set twb-s up
    # One MSS per packet as on a wire: the packet count per byte is then realistic
    # (veth would otherwise carry 64 KB TSO/GSO super-segments).
    if command -v ethtool >/dev/null; then
        ip netns exec "$NS_C" ethtool -K twb-c tso off gso off gro off >/dev/null || offloads="on (ethtool failed)"
        ip netns exec "$NS_S" ethtool -K twb-s tso off gso off gro off >/dev/null || offloads="on (ethtool failed)"
    else
        offloads="on (no ethtool)"
    fi
    # Many short connections from one client address: widen the port range, reuse TIME_WAIT.
    ip netns exec "$NS_C" sysctl -qw net.ipv4.ip_local_port_range="1024 65535" net.ipv4.tcp_tw_reuse=1
    ip netns exec "$NS_C" tc qdisc add dev twb-c root handle 1: htb default 10 r2q 1000
    ip netns exec "$NS_C" tc class add dev twb-c parent 1: classid 1:10 htb rate "$RATE"

    ip netns exec "$NS_S" "$PY" "$BENCH/lab/traffic.py" serve --bind "$SRV_IP" >"$TMP/server.log" 2>&1 &
    PIDS+=($!)
    local i
    for i in $(seq 100); do
        ip netns exec "$NS_S" ss -Hltn "sport = :9001" | grep -q . && break
        sleep 0.05
    done
    ip netns exec "$NS_S" ss -Hltn "sport = :9001" | grep -q . || { cat "$TMP/server.log" >&2; exit 1; }

    # tcpdump stops by itself after PACKETS packets (-c). -B: 64 MB kernel buffer.
    ip netns exec "$NS_C" tcpdump -n -i twb-c -s 128 -B 65536 -Z root -c "$PACKETS" \
        -w "$BIG.partial" >"$TMP/tcpdump.log" 2>&1 &
    local tpid=$!
    PIDS+=("$tpid")
    for i in $(seq 100); do grep -qs "listening on" "$TMP/tcpdump.log" && break; sleep 0.05; done
    grep -qs "listening on" "$TMP/tcpdump.log" || { cat "$TMP/tcpdump.log" >&2; exit 1; }

    local t0=$SECONDS wpids=()
    for i in $(seq "$BULK_STREAMS"); do
        ip netns exec "$NS_C" "$PY" "$BENCH/lab/traffic.py" bulk --host "$SRV_IP" >/dev/null 2>&1 &
        wpids+=($!)
    done
    for i in $(seq "$RR_CLIENTS"); do
        ip netns exec "$NS_C" "$PY" "$BENCH/lab/traffic.py" rr --host "$SRV_IP" --seed "$i" >/dev/null 2>&1 &
        wpids+=($!)
    done
    PIDS+=("${wpids[@]}")
    wait "$tpid" || true
    local elapsed=$((SECONDS - t0))
    for i in "${wpids[@]}"; do kill "$i" 2>/dev/null || true; done
    for i in "${wpids[@]}"; do wait "$i" 2>/dev/null || true; done
    local captured received dropped
    captured=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$TMP/tcpdump.log")
    received=$(sed -n 's/^\([0-9]*\) packets\{0,1\} received by filter.*/\1/p' "$TMP/tcpdump.log")
    dropped=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel.*/\1/p' "$TMP/tcpdump.log")
    mv "$BIG.partial" "$BIG"
    # The small file is a prefix of the same traffic (1/5 of the packets).
    tcpdump -Z root -r "$BIG" -c $((PACKETS / 5)) -w "$SMALL" 2>/dev/null
    ip netns del "$NS_C"
    ip netns del "$NS_S"
    {
        echo "made: $(date -u '+%Y-%m-%d %H:%M UTC') on kernel $(uname -r), $(nproc) cores"
        echo "traffic: $BULK_STREAMS bulk streams + $RR_CLIENTS short-connection clients, client rate cap $RATE, offloads $offloads, ${elapsed}s"
        echo "tcpdump: ${captured:-?} captured, ${received:-?} received by filter, ${dropped:-?} dropped by kernel"
    } >"$INFO"
}

# Times one command on one core with a warm page cache.
# Sets: WALL (median seconds over $2 runs), RSS_KB (peak of the last run), RC, ERR.
timed() {
    local file=$1 runs=$2; shift 2
    local walls=() r t0 t1
    RC=0
    for ((r = 0; r < runs; r++)); do
        cat "$file" >/dev/null    # the VM drops file pages untouched for ~30 s
        t0=$(date +%s%N)
        /usr/bin/time -f '%e %M' -o "$TMP/time" "$@" >/dev/null 2>"$TMP/err" || RC=$?
        t1=$(date +%s%N)
        ((RC == 0)) || break
        walls+=("$(((t1 - t0) / 1000))")
    done
    ERR=$({ grep -v '^Command exited' "$TMP/err" || true; } | tail -n 1 | cut -c1-100)
    RSS_KB=$(awk 'NF == 2 {print $2}' "$TMP/time" | tail -n 1)
    if ((RC == 0)); then
        WALL=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END{printf "%.3f", a[int((NR+1)/2)]/1e6}')
    else
        WALL=""
    fi
}

ROWS=()     # "name|packets|wall|rss_kb|note"
add_row() { ROWS+=("$1|$2|$3|$4|$5"); }
pps() { awk -v p="$1" -v w="$2" 'BEGIN{ if (w > 0) printf "%.2f", p / w / 1e6; else print "-" }'; }

# ---- tools -------------------------------------------------------------------------
need taskset "apt-get install util-linux"
[[ -x /usr/bin/time ]] || { echo "run.sh: missing /usr/bin/time (apt-get install time)" >&2; exit 2; }
PIN=(taskset -c 0)

section "building the baseline and tcpwhy (release)"
cargo build --release --quiet --manifest-path "$BENCH/bareloop/Cargo.toml"
BARELOOP="$BENCH/bareloop/target/release/bareloop"
TCPWHY_BUILD_ERR=""
if [[ -n ${TCPWHY:-} ]]; then
    echo "using TCPWHY=$TCPWHY (not built)"
else
    TCPWHY="${CARGO_TARGET_DIR:-$ROOT/target}/release/tcpwhy"
    if ! (cd "$ROOT" && cargo build --release --quiet --bin tcpwhy) 2>"$TMP/build.err"; then
        TCPWHY_BUILD_ERR="build failed: $({ grep -m1 '^error' "$TMP/build.err" || true; } | cut -c1-80)"
    fi
fi

if ((REGEN == 0)) && [[ -s $BIG && -s $SMALL && -s $INFO ]]; then
    section "reusing $BIG"
else
    make_captures
fi
cat "$INFO"
N_BIG=$(count_packets "$BIG")
N_SMALL=$(count_packets "$SMALL")
printf 'large: %s packets, %s MB; small: %s packets, %s MB\n' \
    "$N_BIG" "$(($(stat -c %s "$BIG") / 1000000))" "$N_SMALL" "$(($(stat -c %s "$SMALL") / 1000000))"

# ---- tcpwhy: check it works on the small file before timing it ----------------------
TCPWHY_ERR="$TCPWHY_BUILD_ERR"
if [[ -z $TCPWHY_ERR ]]; then
    rc=0
    "$TCPWHY" flows "$SMALL" --format json >"$TMP/flows.json" 2>"$TMP/flows.err" || rc=$?
    if ((rc)); then
        TCPWHY_ERR="exit $rc: $(tail -n 1 "$TMP/flows.err" | cut -c1-80)"
    elif [[ ! -s $TMP/flows.json ]]; then
        TCPWHY_ERR="printed nothing"
    fi
fi

section "timing (one core: ${PIN[*]}; page cache warmed before each run)"
run_tcpwhy() {   # label file packets extra-args...
    local label=$1 file=$2 n=$3; shift 3
    if [[ -n $TCPWHY_ERR ]]; then
        add_row "$label" "$n" "" "" "tcpwhy flows failed: $TCPWHY_ERR"
        return
    fi
    echo "  $label"
    timed "$file" "$RUNS" "$@" "$TCPWHY" flows "$file" --format json "${TCPWHY_EXTRA[@]}"
    if ((RC == 0)); then add_row "$label" "$n" "$WALL" "$RSS_KB" ""
    else add_row "$label" "$n" "" "" "tcpwhy flows failed: exit $RC: $ERR"; fi
}
run_tool() {   # label file packets runs command...
    local label=$1 file=$2 n=$3 runs=$4; shift 4
    echo "  $label"
    timed "$file" "$runs" "$@"
    if ((RC == 0)); then add_row "$label" "$n" "$WALL" "$RSS_KB" "${NOTE:-}"
    else add_row "$label" "$n" "" "" "failed: exit $RC: $ERR"; fi
    NOTE=""
}

NOTE=""
TCPWHY_EXTRA=()
run_tcpwhy "tcpwhy flows --format json" "$BIG" "$N_BIG" "${PIN[@]}"
# The main job: every detector on top of the tracker. Exit status 1 means "findings".
ANALYZE_TCPWHY=(sh -c '"$0" analyze --format json "$1" >/dev/null; [ $? -le 1 ]' "$TCPWHY")
run_tool "tcpwhy analyze --format json" "$BIG" "$N_BIG" "$RUNS" "${PIN[@]}" "${ANALYZE_TCPWHY[@]}" "$BIG"
run_tool "bareloop (parse + 4-tuple hash)" "$BIG" "$N_BIG" "$RUNS" "${PIN[@]}" "$BARELOOP" "$BIG"
run_tool "tcptrace -n" "$BIG" "$N_BIG" "$RUNS" "${PIN[@]}" tcptrace -n "$BIG"
run_tool "tshark -z conv,tcp" "$BIG" "$N_BIG" 1 "${PIN[@]}" tshark -n -q -r "$BIG" -z conv,tcp
if ((SKIP_EXPERT)); then
    add_row "tshark -z expert" "" "" "" "skipped (--skip-tshark-expert)"
else
    EXPERT_FILE=$BIG N_EXPERT=$N_BIG
    if ((EXPERT_PACKETS > 0 && EXPERT_PACKETS < N_BIG)); then
        EXPERT_FILE="$OUT/bench-$PACKETS-first-$EXPERT_PACKETS.pcap"
        tcpdump -Z root -r "$BIG" -c "$EXPERT_PACKETS" -w "$EXPERT_FILE" 2>/dev/null
        N_EXPERT=$(count_packets "$EXPERT_FILE")
        NOTE="on the first $N_EXPERT packets only"
    fi
    run_tool "tshark -z expert" "$EXPERT_FILE" "$N_EXPERT" 1 "${PIN[@]}" tshark -n -q -r "$EXPERT_FILE" -z expert
    [[ $EXPERT_FILE == "$BIG" ]] || rm -f "$EXPERT_FILE"
fi

# Peak memory must not grow with capture length: same traffic, 1/5 of the packets.
# A memory-mapped file's resident pages count in RSS, so the memory rows feed the capture
# on standard input (`-`), where RSS is the program's own memory.
run_tcpwhy "tcpwhy flows, small file (1/5)" "$SMALL" "$N_SMALL" "${PIN[@]}"
run_tool "bareloop, small file (1/5)" "$SMALL" "$N_SMALL" "$RUNS" "${PIN[@]}" "$BARELOOP" "$SMALL"
STDIN_TCPWHY=(sh -c 'exec "$0" flows - --format json <"$1"' "$TCPWHY")
if [[ -n $TCPWHY_ERR ]]; then
    add_row "tcpwhy flows - <large (stdin)" "$N_BIG" "" "" "tcpwhy flows failed: $TCPWHY_ERR"
else
    run_tool "tcpwhy flows - <large (stdin)" "$BIG" "$N_BIG" 1 "${PIN[@]}" "${STDIN_TCPWHY[@]}" "$BIG"
    run_tool "tcpwhy flows - <small (stdin)" "$SMALL" "$N_SMALL" 1 "${PIN[@]}" "${STDIN_TCPWHY[@]}" "$SMALL"
fi

# Two cores, if tcpwhy flows has a thread option yet.
if [[ -z $TCPWHY_ERR ]]; then
    THREAD_OPT=$("$TCPWHY" flows --help 2>/dev/null | grep -oE -- '--threads|(^|[ ,])-j\b' | head -n 1 | tr -d ' ,' || true)
    if [[ -n $THREAD_OPT ]]; then
        TCPWHY_EXTRA=("$THREAD_OPT" 2)
        run_tcpwhy "tcpwhy flows $THREAD_OPT 2 (2 cores)" "$BIG" "$N_BIG" taskset -c 0,1
        TCPWHY_EXTRA=()
    else
        add_row "tcpwhy flows, 2 cores" "" "" "" "skipped: no --threads/-j option yet"
    fi
fi

# ---- report ----------------------------------------------------------------------------
section "results ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, kernel $(uname -r))"
TCPWHY_PPS=""
IFS='|' read -r _ n w _ _ <<<"${ROWS[0]}"
[[ -n $w ]] && TCPWHY_PPS=$(awk -v p="$n" -v w="$w" 'BEGIN{print p / w}')
{
    printf '%-34s %10s %9s %9s %9s %12s  %s\n' tool packets "wall s" "Mpkt/s" "RSS MB" "tcpwhy ×" note
    for row in "${ROWS[@]}"; do
        IFS='|' read -r name n w rss note <<<"$row"
        if [[ -n $w ]]; then
            rate=$(pps "$n" "$w")
            mb=$(awk -v k="$rss" 'BEGIN{printf "%.1f", k / 1024}')
            if [[ -n $TCPWHY_PPS && $name == *"(2 cores)" ]]; then
                # For the 2-core row: its speed ÷ tcpwhy's one-core speed (target ≥ 1.7).
                ratio=$(awk -v a="$TCPWHY_PPS" -v p="$n" -v w="$w" 'BEGIN{printf "%.2f (vs 1 core)", (p / w) / a}')
            elif [[ -n $TCPWHY_PPS && $name != tcpwhy* && $name != *small* ]]; then
                ratio=$(awk -v a="$TCPWHY_PPS" -v p="$n" -v w="$w" 'BEGIN{printf "%.2f", a / (p / w)}')
            else ratio="-"; fi
            printf '%-34s %10s %9s %9s %9s %12s  %s\n' "$name" "$n" "$w" "$rate" "$mb" "$ratio" "$note"
        else
            printf '%-34s %10s %9s %9s %9s %12s  %s\n' "$name" "${n:--}" - - - - "$note"
        fi
    done
    echo
    echo "tcpwhy × = tcpwhy's packets/s ÷ that tool's packets/s on one core (targets: ≥ 50 vs"
    echo "tshark -z expert, ≥ 5 vs tcptrace, ≥ 0.67 vs bareloop, i.e. within 1.5×)."
    # analyze against tshark's own TCP analysis: the comparison a user makes.
    A_W="" E_W="" E_N=""
    for row in "${ROWS[@]}"; do
        IFS='|' read -r name n w _ _ <<<"$row"
        [[ $name == "tcpwhy analyze"* ]] && A_W=$w
        [[ $name == "tshark -z expert" ]] && E_W=$w E_N=$n
    done
    if [[ -n $A_W && -n $E_W ]]; then
        awk -v an="$N_BIG" -v aw="$A_W" -v en="$E_N" -v ew="$E_W" \
            'BEGIN{printf "tcpwhy analyze = %.1f × tshark -z expert (packets/s).\n", (an / aw) / (en / ew)}'
    fi
    echo "Wall time: median of $RUNS runs for tcpwhy, bareloop and tcptrace; one run for tshark."
} | tee "$OUT/results-latest.txt"
{ [[ $(id -u) == 0 ]] && "$BENCH/emulator.sh" | tee -a "$OUT/results-latest.txt"; } || echo "bench/emulator.sh: not run (needs root) or failed"
