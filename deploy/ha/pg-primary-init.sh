#!/bin/bash
# First start of pg-1 (compose profile ha), run by the image's entrypoint after initdb: a role the
# standby replicates with, its pg_hba line, and one synchronous standby from the next start on, so
# a COMMIT is answered only once the standby holds it. (Set with ALTER SYSTEM here, not on the
# command line: the entrypoint's own set-up server would otherwise wait for a standby forever.)
set -euo pipefail
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres <<SQL
create role replicator with replication login password '${REPLICATION_PASSWORD}';
alter system set synchronous_standby_names = 'ANY 1 (pg_1, pg_2)';
alter system set synchronous_commit = 'on';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
