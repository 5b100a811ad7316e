#!/bin/sh
# A Sentinel of compose profile ha. Sentinel rewrites its file as it learns (epochs, replicas,
# the other sentinels, the current master), so the file is written once, on the first start, and
# kept on the sentinel's volume: a restarted sentinel knows the master after a failover.
set -eu
conf=/data/sentinel.conf
if [ ! -f "$conf" ]; then
  cat > "$conf" <<CONF
port 26379
sentinel resolve-hostnames yes
sentinel monitor ${SENTINEL_MASTER} ${MASTER_HOST} 6379 2
sentinel down-after-milliseconds ${SENTINEL_MASTER} 5000
sentinel failover-timeout ${SENTINEL_MASTER} 60000
sentinel parallel-syncs ${SENTINEL_MASTER} 1
CONF
fi
exec redis-sentinel "$conf"
