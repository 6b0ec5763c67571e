#!/bin/bash
# Used to make tests/data/bundle-ns and tests/data/ns (see README.md). Run as root: ./make-ns-fixtures.sh OUTDIR
# Builds two namespaces joined by a veth (A: htb 20 Mbit/s + pfifo 30; B drops every 50th segment to port 5001), changes settings
# in A, runs a transfer A->B and records host state inside A while the connection is open.
set -x
OUT=$1; A=twh-$$-a; B=twh-$$-b
mkdir -p $OUT/bundle/rps/va $OUT/bundle/after
ip netns add $A; ip netns add $B
ip link add va type veth peer name vb
ip link set va netns $A; ip link set vb netns $B
ip -n $A addr add 10.99.0.1/24 dev va; ip -n $B addr add 10.99.0.2/24 dev vb
for n in $A $B; do ip -n $n link set lo up; done
ip -n $A link set va up; ip -n $B link set vb up
ip -n $A link add br-twh type bridge
ip -n $A link add vx-twh type vxlan id 42 dstport 4789 dev va
ip -n $A link set vx-twh master br-twh
ip netns exec $A sysctl -w net.ipv4.tcp_slow_start_after_idle=0 net.ipv4.tcp_window_scaling=0 net.ipv4.tcp_no_ssthresh_metrics_save=0 net.ipv4.tcp_early_retrans=2
tc -n $A qdisc add dev va root handle 1: htb default 10; tc -n $A class add dev va parent 1: classid 1:10 htb rate 20mbit; tc -n $A qdisc add dev va parent 1:10 handle 10: pfifo limit 30
ip netns exec $B iptables -A INPUT -p tcp --dport 5001 -m statistic --mode nth --every 50 --packet 7 -j DROP
ip netns exec $A sh -c 'echo 3 > /sys/class/net/va/queues/rx-0/rps_cpus; cat /sys/class/net/va/queues/rx-0/rps_cpus' > $OUT/bundle/rps/va/rx-0
B_=$OUT/bundle
ip netns exec $A sh -c "cat /proc/net/sockstat > $B_/sockstat.txt; cat /proc/net/sockstat6 > $B_/sockstat6.txt; cat /proc/net/netstat > $B_/netstat.txt; cat /proc/net/snmp > $B_/snmp.txt; nstat -asz > $B_/nstat.txt"
T0=$(date +%s.%N)
ip netns exec $B python3 $(dirname $0)/ns-xfer.py server 10.99.0.2 5001 & SP=$!
ip netns exec $A python3 $(dirname $0)/ns-xfer.py server 127.0.0.1 5002 & SP2=$!
sleep 0.5
ip netns exec $A python3 $(dirname $0)/ns-xfer.py client 10.99.0.2 5001 6000000 2 & CP=$!
ip netns exec $A python3 $(dirname $0)/ns-xfer.py client 127.0.0.1 5002 1000000 3 & CP2=$!
sleep 1.5
ip netns exec $A ss -tinmO > $OUT/bundle/ss.txt
ip netns exec $A ss -tinm > $OUT/ss-tinm.txt
ip netns exec $A ss -tin > $OUT/ss-tin.txt
ip netns exec $A ss -tinmOe > $OUT/ss-tinmOe.txt
wait $CP $CP2 $SP $SP2
T1=$(date +%s.%N)
ip netns exec $A sh -c "cat /proc/net/sockstat > $B_/after/sockstat.txt; cat /proc/net/sockstat6 > $B_/after/sockstat6.txt; cat /proc/net/netstat > $B_/after/netstat.txt; cat /proc/net/snmp > $B_/after/snmp.txt; nstat -asz > $B_/after/nstat.txt; ss -tinmO > $B_/after/ss.txt"
ip netns exec $A nstat -asz --json > $OUT/nstat-json.txt
ip netns exec $A sysctl -a > $OUT/sysctl-full.txt 2>$OUT/sysctl-stderr.txt
ip netns exec $A ip tcp_metrics show > $B_/tcp_metrics.txt
ip netns exec $A ip -j tcp_metrics show > $OUT/tcp_metrics.json
ip netns exec $A ip -d link show > $B_/ip-link.txt
ip netns exec $A ip -j -d link show > $OUT/ip-link.json
echo "$T0 $T1 $(uname -r) $(ip -V)" > $OUT/times.txt
ip netns del $A; ip netns del $B
