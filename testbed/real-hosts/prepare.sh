#!/bin/bash
# prepare.sh: prints the directory of the prepared hosts for the current image, layout and
# machine, building them first when this machine has none (a few minutes under emulation): the
# hosts of layout.sh booted once from blank disks until systemd says the boot is over, /etc/hosts
# naming them all, then each one's RAM state saved beside its disks. cluster.sh up loads those
# states into throw-away overlays: a host runs seconds after its start instead of a boot's
# minute or more. Nothing of Ceph runs in them yet: each run has a cluster of its own.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$RH_HERE/layout.sh"
. "$RH_HERE/machine.sh"
image=$("$RH_HERE/image.sh")
key=$(rh_key "$image" "$RH_HERE/prepare.sh" "$RH_HERE/layout.sh" "$RH_HERE/machine.sh" "$(rh_accel)")
dir=$RH_CACHE/hosts-$key
[ -f "$dir/ready" ] && { rh_used "$dir" hosts; echo "$dir"; exit 0; }
mkdir -p "$RH_CACHE"
exec 9>"$RH_CACHE/.hosts.lock"
flock 9
[ -f "$dir/ready" ] && { rh_used "$dir" hosts; echo "$dir"; exit 0; }
t0=$(rh_now)
echo "prepare.sh: preparing the hosts $key (one boot each, then their RAM states saved)" >&2
tmp=$dir.tmp
cleanup() { "$RH_HERE/cluster.sh" down "$tmp" >/dev/null 2>&1 || true; }
[ -d "$tmp" ] && cleanup
rm -rf "$tmp"
trap cleanup EXIT
mkdir -p "$tmp/hosts"
printf 'IMAGE=%q\nPORT_BASE=%q\nACCEL=%q\nPREPARED=\n' "$image" 21800 "$(rh_accel)" > "$tmp/cluster.env"
idx=0
for h in "${RH_HOSTS[@]}"; do
  idx=$((idx + 1)); d=$tmp/hosts/$h; mkdir -p "$d"
  qemu-img create -q -f qcow2 -F qcow2 -b "$image/base.qcow2" "$d/root.qcow2"
  for disk in "${RH_DISKS[@]}"; do
    IFS=: read -r name kind size id <<<"$disk"
    qemu-img create -q -f qcow2 "$d/disk-$name.qcow2" "$size"
  done
  printf 'HOST=%q\nIDX=%q\nMEM=%q\nSMP=%q\nDISKS=%q\n' "$h" "$idx" "$RH_MEM" "$RH_SMP" "${RH_DISKS[*]}" > "$d/host.env"
done
vde_switch --sock "$tmp/switch" --daemon --pidfile "$tmp/switch.pid" >/dev/null
mkdir -p "$tmp/share"
for h in "${RH_HOSTS[@]}"; do
  rh_machine_args "$tmp/hosts/$h" "$image" "$(rh_accel)" 21800 "$tmp/switch" "$tmp/share"
  qemu-system-x86_64 "${RH_ARGS[@]}"
done
C() { "$RH_HERE/cluster.sh" "$@"; }
hosts_file="127.0.0.1 localhost"
i=0
for h in "${RH_HOSTS[@]}"; do i=$((i + 1)); hosts_file+=$'\n'"10.88.0.$i $h"; done
hosts_file+=$'\n'"10.88.0.254 ceph-admin"
for h in "${RH_HOSTS[@]}"; do
  C wait "$tmp" "$h" 1800
  printf '%s\n' "$hosts_file" | C ssh "$tmp" "$h" 'cat > /etc/hosts'
done
for h in "${RH_HOSTS[@]}"; do
  # Until every unit of the boot has started (or failed): a state saved earlier would replay
  # the rest of the boot in every run.
  state=$(C ssh "$tmp" "$h" 'systemctl is-system-running --wait' || true)
  echo "prepare.sh: $h booted ($state)" >&2
  C ssh "$tmp" "$h" 'sync'
done
for h in "${RH_HOSTS[@]}"; do
  d=$tmp/hosts/$h
  pid=$(rh_qemu_pid "$d")
  rh_qmp "$d/qmp.sock" '{"execute":"stop"}' \
    "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"exec:cat > $d/ram.state\"}}" >/dev/null
  until rh_qmp "$d/qmp.sock" '{"execute":"query-migrate"}' | grep -q '"status": "completed"'; do
    rh_qmp "$d/qmp.sock" '{"execute":"query-migrate"}' | grep -q '"status": "failed"' && rh_die "$h: saving its RAM state failed"
    sleep 0.2
  done
  rh_qmp "$d/qmp.sock" '{"execute":"quit"}' >/dev/null || true
  while [ -e "/proc/$pid" ]; do sleep 0.1; done
  echo "prepare.sh: $h saved ($(du -h "$d/ram.state" | cut -f1))" >&2
done
KEEP=1 "$RH_HERE/cluster.sh" down "$tmp"
rm -f "$tmp"/hosts/*/{qemu.pid,serial.sock,qmp.sock} "$tmp/switch.pid"
rm -rf "$tmp/switch" "$tmp/share"
trap - EXIT
touch "$tmp/ready"
mv "$tmp" "$dir"
rh_used "$dir" hosts
echo "prepare.sh: prepared $dir in $(rh_since "$t0") s" >&2
echo "$dir"
