#!/bin/bash
# agent-osds-e2e.sh DIR [OSDKEEPER]: end to end on a --release sandbox DIR: the agent's /v1/osds on its own loop
# devices (an OSD made by ceph-osd --mkfs with its DB apart, and a 2 KiB device) through the sandbox's
# ceph-volume, beside what that ceph-volume lists itself; cleans up by record.
set -u
DIR=${1:?usage: agent-osds-e2e.sh DIR [OSDKEEPER]}; BIN=${2:-target/debug/osdkeeper}; export CEPH_CONF=$DIR/ceph.conf PATH=$DIR/bin:$PATH
W=$DIR/e2e; mkdir -p $W; : > $W/loops
att() { rm -f $W/$1; truncate -s $2 $W/$1; d=$(losetup -f --show $W/$1); echo "$d $W/$1" >> $W/loops; echo $d; }
MAIN=$(att main 11G); DB=$(att db 2G); TINY=$(att tiny 2048)
UUID=$(uuidgen); KEY=$(ceph-authtool --gen-print-key)
ID=$(echo "{\"cephx_secret\": \"$KEY\"}" | ceph osd new "$UUID" -i -)
rm -rf $W/osd; mkdir -p $W/osd
ceph-authtool --create-keyring $W/osd/keyring --name osd.$ID --add-key "$KEY" >/dev/null
ceph-osd -c $CEPH_CONF -i $ID --mkfs --osd-uuid $UUID --osd-data $W/osd --bluestore_block_path $MAIN --bluestore_block_db_path $DB --bluestore_block_db_size 0 --keyring $W/osd/keyring > $W/mkfs.log 2>&1
echo "osd.$ID main $MAIN db $DB tiny $TINY"
echo "raw list of the three by ceph-volume itself: $(ceph-volume raw list --format json $MAIN $DB $TINY | tr -d ' \n')"
mkdir -p $W/osddata; "$BIN" agent --listen 127.0.0.1:0 --osd-data-dir $W/osddata --ceph-volume $DIR/bin/ceph-volume --devices $MAIN,$DB,$TINY > $W/agent.out 2> $W/agent.err &
APID=$!
for i in $(seq 50); do grep -q "listening on" $W/agent.out && break; sleep 0.2; done
ADDR=$(sed -n 's/^listening on //p' $W/agent.out)
t0=$(date +%s.%N); curl -s http://$ADDR/v1/osds; t1=$(date +%s.%N); echo; echo "seconds: $(echo "$t1 - $t0" | bc)"
kill $APID; wait $APID 2>/dev/null
grep -i "raw list\|one at a time" $W/agent.err | tail -3
ceph osd purge $ID --yes-i-really-mean-it
while read -r dev file; do [ "$(losetup -n -O BACK-FILE $dev)" = "$file" ] && losetup -d $dev && echo "detached $dev"; done < $W/loops
