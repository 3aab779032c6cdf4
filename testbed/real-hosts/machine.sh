# machine.sh: a host's qemu command line. Sourced; part of the prepared cluster's key, because a
# saved RAM state can only be loaded into the very machine it was saved from (same devices in
# the same order).
#
# rh_machine_args DIR IMAGE ACCEL PORT_BASE SWITCH SHARE: sets the array RH_ARGS for the host whose
# host.env is in DIR (HOST, IDX, MEM, SMP, DISKS). SHARE, a directory of this machine, is the
# guest's read-only 9p file system "osdk" (mounted at /mnt/osdk by cluster.sh): how programs
# reach the hosts, where ssh under emulation moves half a megabyte a second.
rh_machine_args() {
  local D=$1 image=$2 accel=$3 port_base=$4 switch=$5 share=$6 disk name kind size id rr acc
  # shellcheck disable=SC1091
  . "$D/host.env"
  local p=$(( port_base + 10 * IDX ))
  if [ "$accel" = kvm ]; then acc=(-accel kvm -cpu host); else acc=(-accel tcg,thread=multi,tb-size=256 -cpu max); fi
  # mitigations=off: under emulation every page-table switch the guest kernel makes to isolate
  # itself from its processes costs far more than on hardware, and nothing here needs the isolation.
  RH_ARGS=(-name "osdk-$HOST" -machine pc "${acc[@]}" -m "$MEM" -smp "$SMP" -nodefaults -no-user-config
    -display none -daemonize -pidfile "$D/qemu.pid"
    -kernel "$image/vmlinuz" -initrd "$image/initrd.img"
    -append "root=/dev/vda rw console=ttyS0 systemd.hostname=$HOST net.ifnames=0 mitigations=off quiet"
    -drive "file=$D/root.qcow2,if=none,id=root,format=qcow2,cache=unsafe,discard=unmap"
    -device "virtio-blk-pci,drive=root,serial=TB$IDX-ROOT"
    -device virtio-scsi-pci,id=scsi0)
  for disk in $DISKS; do
    IFS=: read -r name kind size id <<<"$disk"
    rr=7200; [ "$kind" = ssd ] && rr=1
    RH_ARGS+=(-drive "file=$D/disk-$name.qcow2,if=none,id=d-$name,format=qcow2,cache=unsafe,discard=unmap"
              -device "scsi-hd,id=$name,drive=d-$name,bus=scsi0.0,scsi-id=$id,lun=0,serial=TB$IDX-${name^^},rotation_rate=$rr")
  done
  # ssh, the agent (8741) and a daemon (8740) on 127.0.0.1 of the machine; the private L2 through
  # the run's switch.
  RH_ARGS+=(-netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$p-:22,hostfwd=tcp:127.0.0.1:$((p + 1))-:8741,hostfwd=tcp:127.0.0.1:$((p + 2))-:8740"
            -device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56
            -netdev "vde,id=l2,sock=$switch"
            -device "virtio-net-pci,netdev=l2,mac=52:54:00:aa:00:$(printf %02x "$IDX")"
            -chardev "socket,id=ser0,path=$D/serial.sock,server=on,wait=off,logfile=$D/console.log,logappend=on"
            -serial chardev:ser0
            -qmp "unix:$D/qmp.sock,server=on,wait=off"
            -virtfs "local,id=osdk,path=$share,mount_tag=osdk,security_model=none,readonly=on")
}
