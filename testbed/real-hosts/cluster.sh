#!/bin/bash
# cluster.sh: a Ceph cluster on real-kernel storage hosts, for tests. The hosts are qemu VMs
# (Debian 12's kernel, systemd, udev, LVM2, cryptsetup, Ceph 16.2 from Debian's packages) loaded
# from the RAM states prepare.sh saved, into throw-away overlays of its disks. The mon and the
# mgr run on this machine, in a network namespace of the run's own that sits on the hosts'
# private L2 as 10.88.0.254 ("ceph-admin"): the machine's Ceph packages are the hosts' release,
# and a mgr under emulation would spend minutes loading its Python modules.
#
#   cluster.sh up RUN [--port-base P]   clone the prepared hosts into RUN, start the network,
#                                    the mon and the mgr, load every host, give each the cluster's
#                                    /etc/ceph and bootstrap-osd key; prints "up after S s"
#   cluster.sh down RUN              stop everything RUN started (qemu, the switch, the tap plug,
#                                    the mon and the mgr: by their pid files, checked against
#                                    their command lines; the namespace by its recorded name) and
#                                    delete RUN's disk overlays (KEEP=1 keeps them)
#   cluster.sh stop RUN [HOST...]    clean poweroff (all hosts, or those named), waited for
#   cluster.sh ssh RUN HOST [CMD...] run CMD as root on HOST (stdin passed)
#   cluster.sh copy RUN HOST SRC DEST      copy a local file to HOST:DEST (ssh: slow under emulation;
#                                    what RUN/share holds is read-only at /mnt/osdk on every host)
#   cluster.sh ns RUN CMD...         run CMD in the run's network namespace (CEPH_CONF set: `ceph`
#                                    and `rados` reach the cluster as client.admin)
#   cluster.sh plug RUN HOST NAME KIND SIZE SCSI_ID   hot-add a blank disk (KIND hdd|ssd)
#   cluster.sh unplug RUN HOST NAME  hot-remove a disk (as pulling it from its bay)
#   cluster.sh reboot RUN HOST       reboot HOST's guest and wait until ssh answers from the new boot
#   cluster.sh wait RUN HOST SECONDS wait until HOST answers on ssh
#   cluster.sh ports RUN HOST        "SSH AGENT DAEMON": HOST's ports 22, 8741 and 8740 on 127.0.0.1
#   cluster.sh hosts RUN             the host names
#
# Every port of a host is on 127.0.0.1 of the machine (qemu user networking with restrict=on: the
# guests reach nothing outside); HOST's are P + 10 * index + 0 (ssh), 1 (8741), 2 (8740). The
# hosts and the namespace talk on 10.88.0.0/24 through a vde_switch of RUN's own (a unix socket
# in RUN): no packet of it touches the machine's own network. Consoles: RUN/hosts/HOST/console.log;
# the mon's and mgr's logs: RUN/ceph/log.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$RH_HERE/machine.sh"
cmd=${1:?usage: cluster.sh up|down|stop|ssh|copy|ns|plug|unplug|reboot|wait|ports|hosts RUN ...}; shift
RUN=${1:?RUN}; shift
RUN=$(realpath -m "$RUN")
CEPH=$RUN/ceph

load_run() {
  [ -f "$RUN/cluster.env" ] || rh_die "$RUN is not a cluster (no cluster.env)"
  . "$RUN/cluster.env"
}
host_dir() { local d=$RUN/hosts/$1; [ -f "$d/host.env" ] || rh_die "no host $1 in $RUN"; echo "$d"; }
load_host() { D=$(host_dir "$1"); . "$D/host.env"; }
# One connection per host, kept open and shared by every later command: a new ssh connection
# costs an emulated host seconds of key exchange.
ssh_opts() {
  SSHOPT=(-i "$IMAGE/id_ed25519" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
          -o LogLevel=ERROR -o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=15
          -o ControlMaster=auto -o "ControlPath=$D/ssh.sock" -o ControlPersist=1800)
}
port() { echo $(( PORT_BASE + 10 * IDX + $1 )); }
vssh() { ssh_opts; ssh "${SSHOPT[@]}" -p "$(port 0)" root@127.0.0.1 "$@"; }
# The loaded host's disks, as host.env records them (not through sed: printf %q escapes spaces
# with backslashes, which a sed replacement would eat).
set_disks() {
  { grep -v '^DISKS=' "$D/host.env"; printf 'DISKS=%q\n' "$1"; } > "$D/host.env.new"
  mv "$D/host.env.new" "$D/host.env"
}
in_ns() { ip netns exec "$NETNS" env CEPH_CONF="$CEPH/ceph.conf" "$@"; }

wait_ssh() {  # wait_ssh HOST TIMEOUT [OLD_BOOT_ID]: until HOST answers (from a boot other than OLD)
  load_host "$1"
  local deadline=$(( $(date +%s) + $2 )) old=${3:-} id
  while [ "$(date +%s)" -lt "$deadline" ]; do
    rh_qemu_pid "$D" >/dev/null || { tail -n 40 "$D/console.log" >&2; rh_die "$1: qemu is gone"; }
    if id=$(vssh cat /proc/sys/kernel/random/boot_id 2>/dev/null) && [ "$id" != "$old" ]; then return 0; fi
    sleep 1
  done
  tail -n 40 "$D/console.log" >&2
  rh_die "$1: no ssh after $2 s (console above)"
}

# A pid file's process, if it is still the one the file was written for (its command line
# holds MATCH): a stale file's number may belong to anything by now.
pid_of() {
  local p
  p=$(cat "$1" 2>/dev/null) || return 1
  [ -r "/proc/$p/cmdline" ] && tr '\0' ' ' < "/proc/$p/cmdline" | grep -qF -- "$2" && echo "$p"
}

# The run's cluster: mon.a and mgr.x on 10.88.0.254 in the namespace, their files in RUN/ceph.
ceph_up() {
  local fsid
  fsid=$(uuidgen)
  mkdir -p "$CEPH"/{mon.a,mgr.x,log,run}
  cat > "$CEPH/ceph.conf" <<EOF
[global]
fsid = $fsid
mon_host = [v2:10.88.0.254:3300,v1:10.88.0.254:6789]
public_network = 10.88.0.0/24
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
osd_pool_default_size = 3
osd_pool_default_min_size = 2
osd_crush_chooseleaf_type = 1
mon_allow_pool_delete = true
# this machine's disk may be mostly full of images; Ceph warns below 30 % free
mon_data_avail_warn = 1
mgr_initial_modules = iostat
log_file = $CEPH/log/\$name.log
pid_file = $CEPH/run/\$name.pid
admin_socket = $CEPH/run/\$name.asok
keyring = $CEPH/keyring
[mon]
mon_data = $CEPH/mon.a
keyring = $CEPH/mon.a/keyring
[mgr]
mgr_data = $CEPH/mgr.x
keyring = $CEPH/mgr.x/keyring
[client]
log_file = /dev/null
admin_socket =
EOF
  ceph-authtool --create-keyring "$CEPH/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool --create-keyring "$CEPH/keyring" --gen-key -n client.admin \
    --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool --create-keyring "$CEPH/bootstrap-osd.keyring" --gen-key \
    -n client.bootstrap-osd --cap mon 'profile bootstrap-osd' --cap mgr 'allow r' >/dev/null
  ceph-authtool "$CEPH/mon.keyring" --import-keyring "$CEPH/keyring" >/dev/null
  ceph-authtool "$CEPH/mon.keyring" --import-keyring "$CEPH/bootstrap-osd.keyring" >/dev/null
  monmaptool --create --addv a "[v2:10.88.0.254:3300,v1:10.88.0.254:6789]" --fsid "$fsid" "$CEPH/monmap" >/dev/null
  # in the namespace: the mon picks its address from public_network, which only exists there
  in_ns ceph-mon --mkfs -i a -c "$CEPH/ceph.conf" --monmap "$CEPH/monmap" --keyring "$CEPH/mon.keyring"
  in_ns ceph-mon -i a -c "$CEPH/ceph.conf"
  local deadline=$(( $(date +%s) + 60 ))
  until in_ns ceph --connect-timeout 5 mon stat >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 30 "$CEPH/log/mon.a.log" >&2; rh_die "the mon did not answer in 60 s"; }
    sleep 0.5
  done
  in_ns ceph auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' -o "$CEPH/mgr.x/keyring" >/dev/null
  in_ns ceph-mgr -i x -c "$CEPH/ceph.conf"
  # The guests' copy: the same cluster, the keyrings where the packages look for them.
  printf '[global]\nfsid = %s\nmon_host = [v2:10.88.0.254:3300,v1:10.88.0.254:6789]\npublic_network = 10.88.0.0/24\n' \
    "$fsid" > "$CEPH/guest.conf"
  # Two or three OSDs in a 2 GiB host: a small fixed cache, not the 4 GiB memory target.
  in_ns ceph config set osd osd_memory_target 939524096
  in_ns ceph config set osd bluestore_cache_autotune false
  in_ns ceph config set osd bluestore_cache_size 134217728
}

wait_mgr() {
  local deadline=$(( $(date +%s) + $1 ))
  until in_ns ceph --connect-timeout 5 mgr stat -f json 2>/dev/null | grep -q '"available": *true'; do
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 30 "$CEPH/log/mgr.x.log" >&2; rh_die "the mgr was not available in $1 s"; }
    sleep 1
  done
}

# A host from its saved RAM state: started paused on the state, resumed once it is loaded.
load_state() {
  local h=$1 d=$RUN/hosts/$1
  rh_machine_args "$d" "$IMAGE" "$ACCEL" "$PORT_BASE" "$RUN/switch" "$RUN/share"
  rm -f "$d/serial.sock" "$d/qmp.sock"
  qemu-system-x86_64 "${RH_ARGS[@]}" -incoming "exec:cat $PREPARED/hosts/$h/ram.state"
  until rh_qmp "$d/qmp.sock" '{"execute":"query-migrate"}' | grep -q '"status": "completed"'; do
    rh_qmp "$d/qmp.sock" '{"execute":"query-migrate"}' | grep -q '"status": "failed"' && rh_die "$h: its RAM state did not load"
    sleep 0.2
  done
  rh_qmp "$d/qmp.sock" '{"execute":"cont"}' >/dev/null
}

case $cmd in
up)
  port_base=22000
  while [ $# -gt 0 ]; do case $1 in
    --port-base) port_base=$2; shift 2 ;;
    *) rh_die "up: unknown argument $1" ;; esac; done
  rh_need qemu-system-x86_64 qemu-img vde_switch vde_plug2tap ssh bc python3 ip ceph-mon ceph-mgr
  . "$RH_HERE/layout.sh"
  t0=$(rh_now)
  image=$("$RH_HERE/image.sh")
  prepared=$("$RH_HERE/prepare.sh")
  [ -e "$RUN/cluster.env" ] && rh_die "$RUN already holds a cluster"
  mkdir -p "$RUN/hosts"
  netns=osdk-$(echo "$RUN" | sha256sum | cut -c1-10)
  printf 'IMAGE=%q\nPORT_BASE=%q\nACCEL=%q\nPREPARED=%q\nNETNS=%q\n' \
    "$image" "$port_base" "$(rh_accel)" "$prepared" "$netns" > "$RUN/cluster.env"
  for h in "${RH_HOSTS[@]}"; do
    d=$RUN/hosts/$h; mkdir -p "$d"
    for f in "$prepared/hosts/$h"/*.qcow2; do
      qemu-img create -q -f qcow2 -F qcow2 -b "$f" "$d/$(basename "$f")"
    done
    cp "$prepared/hosts/$h/host.env" "$d/host.env"
  done
  load_run
  mkdir -p "$RUN/share"
  vde_switch --sock "$RUN/switch" --daemon --pidfile "$RUN/switch.pid" >/dev/null
  ip netns add "$NETNS"
  ip -n "$NETNS" link set lo up
  ip netns exec "$NETNS" vde_plug2tap --sock "$RUN/switch" --daemon --pidfile "$RUN/plug.pid" tap0
  for _ in $(seq 1 50); do ip -n "$NETNS" link show tap0 >/dev/null 2>&1 && break; sleep 0.1; done
  ip -n "$NETNS" addr add 10.88.0.254/24 dev tap0
  ip -n "$NETNS" link set tap0 up
  ceph_up
  echo "mon up after $(rh_since "$t0") s" >&2
  for h in "${RH_HOSTS[@]}"; do load_state "$h"; done
  echo "hosts loaded after $(rh_since "$t0") s" >&2
  # The cluster's files as one stream: guest.conf, then the admin and bootstrap-osd keyrings.
  files=$(mktemp -d)
  cp "$CEPH/guest.conf" "$files/ceph.conf"; cp "$CEPH/keyring" "$files/admin"; cp "$CEPH/bootstrap-osd.keyring" "$files/bootstrap-osd"
  for h in "${RH_HOSTS[@]}"; do
    (
      wait_ssh "$h" 300
      echo "$h answers after $(rh_since "$t0") s" >&2
      # The state's clock is the moment it was saved; the files go where the packages look.
      tar -C "$files" -cf - . | vssh "date -s @$(date +%s.%N) >/dev/null; set -e; t=\$(mktemp -d); tar -C \$t -xf -
        install -m 0644 \$t/ceph.conf /etc/ceph/ceph.conf
        install -m 0600 \$t/admin /etc/ceph/ceph.client.admin.keyring
        install -d -o ceph -g ceph /var/lib/ceph/bootstrap-osd
        install -m 0600 -o ceph -g ceph \$t/bootstrap-osd /var/lib/ceph/bootstrap-osd/ceph.keyring
        rm -rf \$t
        mkdir -p /mnt/osdk; mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576,ro osdk /mnt/osdk"
    ) &
  done
  failed=0
  for _ in "${RH_HOSTS[@]}"; do wait -n || failed=1; done
  rm -rf "$files"
  [ "$failed" = 0 ] || rh_die "a host did not come up (above)"
  wait_mgr 300
  echo "up after $(rh_since "$t0") s ($ACCEL)"
  ;;
down)
  [ -f "$RUN/cluster.env" ] || exit 0
  . "$RUN/cluster.env"
  for d in "$RUN"/hosts/*/; do
    d=${d%/}
    # A master that died with its VM leaves a socket that refuses the exit; down goes on.
    if [ -S "$d/ssh.sock" ]; then ssh -o "ControlPath=$d/ssh.sock" -O exit root@127.0.0.1 >/dev/null 2>&1 || true; fi
    if p=$(rh_qemu_pid "$d"); then kill -9 "$p"; while [ -e "/proc/$p" ]; do sleep 0.1; done; fi
  done
  for name in mgr.x mon.a; do
    if p=$(pid_of "$CEPH/run/$name.pid" "$CEPH/ceph.conf"); then
      kill "$p"
      for _ in $(seq 1 100); do [ -e "/proc/$p" ] || break; sleep 0.1; done
      [ -e "/proc/$p" ] && kill -9 "$p"
    fi
  done
  if p=$(pid_of "$RUN/plug.pid" "$RUN/switch"); then kill "$p"; fi
  if p=$(pid_of "$RUN/switch.pid" "$RUN/switch"); then kill "$p"; fi
  if [ -n "${NETNS:-}" ] && ip netns list | grep -qw "^$NETNS"; then ip netns del "$NETNS"; fi
  [ -n "${KEEP:-}" ] || rm -f "$RUN"/hosts/*/*.qcow2
  ;;
stop)
  load_run
  hosts=("$@"); [ ${#hosts[@]} -gt 0 ] || mapfile -t hosts < <(ls "$RUN/hosts")
  for h in "${hosts[@]}"; do (load_host "$h"; vssh 'systemctl poweroff' >/dev/null 2>&1 || true); done
  for h in "${hosts[@]}"; do
    load_host "$h"
    for _ in $(seq 1 600); do rh_qemu_pid "$D" >/dev/null || continue 2; sleep 0.2; done
    echo "$h: no clean poweroff in 120 s; killed" >&2
    p=$(rh_qemu_pid "$D") && kill -9 "$p"
  done
  ;;
ssh) load_run; load_host "${1:?HOST}"; shift; vssh "$@" ;;
copy)
  load_run; load_host "${1:?HOST}"; ssh_opts
  scp -q "${SSHOPT[@]}" -P "$(port 0)" "${2:?SRC}" "root@127.0.0.1:${3:?DEST}"
  ;;
ns) load_run; exec ip netns exec "$NETNS" env CEPH_CONF="$CEPH/ceph.conf" "$@" ;;  # exec: the caller holds the pid
wait) load_run; wait_ssh "${1:?HOST}" "${2:?SECONDS}" ;;
plug)
  load_run; load_host "${1:?HOST}"
  name=${2:?NAME} kind=${3:?KIND} size=${4:?SIZE} id=${5:?SCSI_ID}
  rr=7200; [ "$kind" = ssd ] && rr=1
  qemu-img create -q -f qcow2 "$D/disk-$name.qcow2" "$size"
  rh_qmp "$D/qmp.sock" \
    "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"qcow2\",\"node-name\":\"d-$name\",\"discard\":\"unmap\",\"cache\":{\"direct\":false,\"no-flush\":true},\"file\":{\"driver\":\"file\",\"filename\":\"$D/disk-$name.qcow2\"}}}" \
    "{\"execute\":\"device_add\",\"arguments\":{\"driver\":\"scsi-hd\",\"id\":\"$name\",\"drive\":\"d-$name\",\"bus\":\"scsi0.0\",\"scsi-id\":$id,\"lun\":0,\"serial\":\"TB$IDX-${name^^}\",\"rotation_rate\":$rr}}" >/dev/null
  set_disks "$DISKS $name:$kind:$size:$id"
  ;;
unplug)
  load_run; load_host "${1:?HOST}"; name=${2:?NAME}
  rh_qmp "$D/qmp.sock" "{\"execute\":\"device_del\",\"arguments\":{\"id\":\"$name\"}}" >/dev/null
  # The guest lets go of the disk first; the block node can only go after the device has.
  for _ in $(seq 1 300); do
    rh_qmp "$D/qmp.sock" '{"execute":"query-block"}' | grep -q "\"qdev\": \"$name\"" || break
    sleep 0.2
  done
  # A disk plugged in later has a block node of its own (blockdev-add), to be deleted; one there
  # since boot (-drive) is deleted by qemu with its device.
  if rh_qmp "$D/qmp.sock" '{"execute":"query-named-block-nodes"}' | grep -q "\"node-name\": \"d-$name\""; then
    rh_qmp "$D/qmp.sock" "{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"d-$name\"}}" >/dev/null
  fi
  kept=()
  for disk in $DISKS; do [ "${disk%%:*}" = "$name" ] || kept+=("$disk"); done
  set_disks "${kept[*]}"
  ;;
reboot)
  load_run; load_host "${1:?HOST}"; t0=$(rh_now)
  old=$(vssh cat /proc/sys/kernel/random/boot_id)
  vssh 'systemctl reboot' >/dev/null 2>&1 || true
  wait_ssh "$1" 900 "$old"
  echo "ssh answered from the new boot after $(rh_since "$t0") s"
  ;;
ports) load_run; load_host "${1:?HOST}"; echo "$(port 0) $(port 1) $(port 2)" ;;
hosts) ls "$RUN/hosts" ;;
*) rh_die "unknown command $cmd" ;;
esac
