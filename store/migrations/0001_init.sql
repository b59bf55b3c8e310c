-- 0001_init: the first schema of node zero's store.
--
-- Conventions (see doc.go):
--   * Times are INTEGER nanoseconds since the Unix epoch, UTC; 0 means "not set".
--   * An absent reference (a host or infra-env without a cluster, an event
--     without a host) is NULL, never ''.
--   * doc, args and props hold the caller's JSON as TEXT, so the sqlite3 CLI
--     and json_extract() can read them; the store never parses them.
--   * Rows are written with INSERT ... ON CONFLICT DO UPDATE, never with
--     INSERT OR REPLACE: REPLACE deletes the old row first, which would fire
--     the ON DELETE CASCADE actions below and silently drop a host's steps.

CREATE TABLE clusters (
    id                TEXT    NOT NULL PRIMARY KEY,
    status            TEXT    NOT NULL,
    status_info       TEXT    NOT NULL DEFAULT '',
    status_updated_at INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    doc               TEXT    NOT NULL
);

-- An infra-env outlives its cluster (ON DELETE SET NULL): it is a resource of
-- its own whose discovery ISO may already be booted on machines, and an
-- infra-env without a cluster is a valid late-binding one. assisted-service
-- keeps infra-envs when a cluster is deregistered (it deletes only the legacy
-- infra-env that shares the cluster's id; internal/cluster/registrar.go
-- DeregisterCluster).
CREATE TABLE infra_envs (
    id         TEXT    NOT NULL PRIMARY KEY,
    cluster_id TEXT    REFERENCES clusters (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    doc        TEXT    NOT NULL
);
-- Lets the SET NULL action above find the children without a table scan.
CREATE INDEX infra_envs_cluster_id ON infra_envs (cluster_id);

-- Hosts are keyed by (infra_env_id, id) as in assisted-service, where the
-- agent picks the host id and the same machine may register in two
-- infra-envs. A host goes with its infra-env (CASCADE): it registered through
-- that infra-env's token and cannot exist without it.
--
-- A host bound to a deleted cluster goes with the cluster too (CASCADE).
-- assisted-service deletes the hosts of infra-envs bound to the cluster and
-- unbinds late-bound ones (internal/bminventory/inventory.go
-- deleteOrUnbindHosts). Unbinding is a status change, which the store does
-- not know about, so the service unbinds the late-bound hosts itself before
-- it deletes the cluster; what is still bound then is deleted here, and no
-- host is left pointing at a cluster that does not exist.
CREATE TABLE hosts (
    infra_env_id      TEXT    NOT NULL REFERENCES infra_envs (id) ON DELETE CASCADE,
    id                TEXT    NOT NULL,
    cluster_id        TEXT    REFERENCES clusters (id) ON DELETE CASCADE,
    status            TEXT    NOT NULL,
    status_info       TEXT    NOT NULL DEFAULT '',
    status_updated_at INTEGER NOT NULL DEFAULT 0,
    checked_in_at     INTEGER NOT NULL DEFAULT 0,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    doc               TEXT    NOT NULL,
    PRIMARY KEY (infra_env_id, id)
);
CREATE INDEX hosts_cluster_id ON hosts (cluster_id);

-- Steps issued to a host and not yet answered. They mean nothing without the
-- host, so they go with it. The primary key's prefix (infra_env_id, host_id)
-- serves both Steps() and the cascade.
CREATE TABLE steps (
    infra_env_id TEXT    NOT NULL,
    host_id      TEXT    NOT NULL,
    step_id      TEXT    NOT NULL,
    step_type    TEXT    NOT NULL,
    args         TEXT,
    issued_at    INTEGER NOT NULL,
    PRIMARY KEY (infra_env_id, host_id, step_id),
    FOREIGN KEY (infra_env_id, host_id) REFERENCES hosts (infra_env_id, id) ON DELETE CASCADE
);

-- Events outlive the rows they talk about (a deleted host's history stays
-- listable, as with assisted-service's deleted_hosts filter), so their ids
-- are plain TEXT without foreign keys. seq is the rowid; AUTOINCREMENT keeps
-- it strictly increasing even if rows are ever deleted. Every index below
-- ends, implicitly, in the rowid, so "ORDER BY time, seq" is read straight
-- from the (..., time) indexes; (cluster_id, severity) answers the
-- per-severity counts of a cluster's events without touching the table.
CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    time         INTEGER NOT NULL,
    name         TEXT    NOT NULL DEFAULT '',
    severity     TEXT    NOT NULL,
    category     TEXT    NOT NULL DEFAULT '',
    message      TEXT    NOT NULL,
    cluster_id   TEXT,
    host_id      TEXT,
    infra_env_id TEXT,
    request_id   TEXT    NOT NULL DEFAULT '',
    props        TEXT
);
CREATE INDEX events_cluster_id_time ON events (cluster_id, time);
CREATE INDEX events_cluster_id_severity ON events (cluster_id, severity);
CREATE INDEX events_host_id_time ON events (host_id, time);
CREATE INDEX events_infra_env_id_time ON events (infra_env_id, time);
CREATE INDEX events_time ON events (time);
