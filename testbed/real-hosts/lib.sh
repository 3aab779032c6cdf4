# lib.sh: what image.sh, prepare.sh and cluster.sh share. Sourced, not run.
#
# The cache lives in $OSDKEEPER_TESTBED_CACHE (default /var/cache/osdkeeper-testbed), never in git:
#   image-KEY/     the base image (base.qcow2 vmlinuz initrd.img id_ed25519), KEY = its inputs' hash
#   hosts-KEY/     the prepared hosts (prepare.sh): each host's blank disks and its RAM state
#                  saved after one boot; cluster.sh loads them into throw-away qcow2 overlays
# A directory appears under its final name only once it is complete (built under NAME.tmp, then
# renamed), and builds are serialized by a lock, so a test that finds it can use it.

RH_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RH_CACHE=${OSDKEEPER_TESTBED_CACHE:-/var/cache/osdkeeper-testbed}

rh_die() { echo "${0##*/}: $*" >&2; exit 1; }
rh_now() { date +%s.%N; }
rh_since() { echo "$(rh_now) - $1" | bc | xargs printf '%.1f'; }

# The hash of some files' contents (and of extra words), the key of what is built from them.
rh_key() {
  { for f in "$@"; do if [ -f "$f" ]; then sha256sum < "$f"; else echo "$f"; fi; done; } | sha256sum | cut -c1-16
}

# Hardware acceleration only where it can boot a stock kernel: an Intel or AMD KVM module. A
# machine whose /dev/kvm is PVM (kvm_pvm: nested "pagetable virtualization") runs only PVM guest
# kernels, so it gets software emulation (TCG) like a machine without /dev/kvm.
rh_accel() {
  case ${OSDKEEPER_TESTBED_ACCEL:-auto} in
    kvm | tcg) echo "$OSDKEEPER_TESTBED_ACCEL" ;;
    auto)
      if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then echo kvm; else echo tcg; fi ;;
    *) rh_die "OSDKEEPER_TESTBED_ACCEL=$OSDKEEPER_TESTBED_ACCEL: auto, kvm or tcg" ;;
  esac
}

rh_need() {
  local t missing=()
  for t in "$@"; do command -v "$t" >/dev/null || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] || rh_die "missing ${missing[*]}: apt-get install -y --no-install-recommends \
qemu-system-x86 qemu-utils vde2 debootstrap e2fsprogs bc openssh-client python3 (see testbed/real-hosts/README.md)"
}

# A QMP command on a running VM's socket; prints the answer (events skipped). An error answer
# ends it with status 1 and the error on stderr.
rh_qmp() {
  local sock=$1; shift
  python3 - "$sock" "$@" <<'EOF'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sys.argv[1])
f = s.makefile('rw')
f.readline()
f.write('{"execute":"qmp_capabilities"}\n'); f.flush(); f.readline()
for c in sys.argv[2:]:
    f.write(c + '\n'); f.flush()
    while True:
        r = json.loads(f.readline())
        if 'event' in r:
            continue
        print(json.dumps(r))
        if 'error' in r:
            sys.exit(f"qmp {c}: {r['error'].get('desc', r['error'])}")
        break
EOF
}

# Whether the pid in FILE is a live qemu of this VM directory (the pid file may be stale and its
# number reused by another process: never signal a process by name or by a bare number).
rh_qemu_pid() {
  local dir=$1 p
  p=$(cat "$dir/qemu.pid" 2>/dev/null) || return 1
  [ -r "/proc/$p/cmdline" ] && tr '\0' ' ' < "/proc/$p/cmdline" | grep -qF -- "$dir/root.qcow2" && echo "$p"
}

# Marks DIR (an image or prepared hosts) as used now, and deletes the others of its kind
# (PREFIX-*) that no run has used for a day: every change of their inputs leaves one behind
# (1-2 GiB). A day, not at once: a run of an older checkout may still be using its own.
rh_used() {
  local dir=$1 prefix=$2 d
  touch "$dir/used"
  for d in "$RH_CACHE/$prefix"-*; do
    [ "$d" = "$dir" ] || [ ! -d "$d" ] || [ "${d%.tmp}" != "$d" ] && continue
    [ -n "$(find "$d/used" -mmin -1440 2>/dev/null)" ] && continue
    echo "${0##*/}: removing $d, unused for a day" >&2
    rm -rf "$d"
  done
}
