#!/usr/bin/env bash
# Runs `mpirun -np 2 PROGRAM ARGS...` over two simulated hosts on this machine: two network
# namespaces joined by a veth pair (10.77.0.1 and .2), mpirun's remote shell replaced by
# `ip netns exec` (no ssh), and OpenMPI told to talk TCP on that subnet, as between machines.
# Exits 77 when this machine cannot make namespaces (not root, or no iproute2).
set -uo pipefail
[[ $(id -u) -eq 0 ]] && command -v ip > /dev/null || exit 77
tag=tc$$
a=${tag}a b=${tag}b
work=$(mktemp -d)
cleanup() {
  ip netns del "$a" 2> /dev/null
  ip netns del "$b" 2> /dev/null
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$a" 2> /dev/null && ip netns add "$b" || exit 77
ip link add "v$a" type veth peer name "v$b" &&
  ip link set "v$a" netns "$a" && ip link set "v$b" netns "$b" &&
  ip -n "$a" addr add 10.77.0.1/24 dev "v$a" && ip -n "$b" addr add 10.77.0.2/24 dev "v$b" &&
  ip -n "$a" link set "v$a" up && ip -n "$b" link set "v$b" up &&
  ip -n "$a" link set lo up && ip -n "$b" link set lo up || exit 77
cat > "$work/agent" << AGENT
#!/bin/sh
# mpirun's remote shell: "agent HOST COMMAND" runs COMMAND in that host's namespace
host=\$1; shift
case \$host in 10.77.0.1) ns=$a ;; 10.77.0.2) ns=$b ;; *) echo "agent: no host \$host" >&2; exit 1 ;; esac
exec ip netns exec \$ns sh -c "\$*"
AGENT
chmod +x "$work/agent"
printf '10.77.0.1 slots=1\n10.77.0.2 slots=1\n' > "$work/hosts"
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
  ip netns exec "$a" mpirun -np 2 --hostfile "$work/hosts" --bind-to none \
  --mca plm_rsh_agent "$work/agent" --mca btl tcp,self \
  --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 "$@"
