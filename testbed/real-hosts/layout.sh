# layout.sh: the prepared cluster's hosts and disks. Sourced; part of the prepared cluster's key,
# so a change here makes prepare.sh build a new one.
#
# Named as the field report names its nodes. The first host runs the mon and the mgr; every host
# is a storage host. Each host's address on the private L2 is 10.88.0.N (N = its index, from 1).
RH_HOSTS=(f5-422-01 f5-422-02 f5-422-03)
# Each host's disks at first boot, NAME:KIND:SIZE:SCSI_ID, on one virtio-scsi bus; KIND hdd is
# a SCSI disk with rotation_rate 7200 (the kernel reports rotational 1), ssd one with
# rotation_rate 1 (rotational 0). Serials are TB<index>-<NAME>. More can be plugged in later
# (cluster.sh plug), as a disk is added to a running server.
RH_DISKS=(hdd1:hdd:20G:1 hdd2:hdd:20G:2 ssd1:ssd:20G:3)
# Guest memory (MiB) and virtual CPUs of each host.
RH_MEM=2048
RH_SMP=2
