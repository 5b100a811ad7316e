#!/bin/bash
# Entrypoint of pg-2 (compose profile ha): on its first start, a copy of pg-1 taken with
# pg_basebackup -R (standby.signal, primary_conninfo; the synchronous settings come with the copy),
# then the image's own entrypoint, which finds the data directory initialised and starts the
# standby. `cluster_name` on the command line is the name pg-1's synchronous_standby_names lists.
set -euo pipefail
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_isready -q -h "$PRIMARY_HOST" -U postgres; do sleep 1; done
  mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  until PGPASSWORD="$REPLICATION_PASSWORD" gosu postgres pg_basebackup -h "$PRIMARY_HOST" -U replicator -D "$PGDATA" -R -X stream -c fast; do
    # The replication role appears once pg-1's first-start script has run.
    rm -rf "${PGDATA:?}"/* && sleep 2
  done
fi
exec docker-entrypoint.sh "$@"
