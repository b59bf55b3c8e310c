-- 0003_cluster_files: the files a cluster's installation preparation made
-- (install-config.yaml, the role Ignition configs, metadata.json, the
-- credentials) and each host's Ignition, which the download routes serve.
--
-- assisted-service keeps them in its object store under <cluster id>/; here
-- they are rows keyed by cluster and name, written in the same transaction
-- as last_installation_preparation, so a cluster whose preparation says
-- success always has its files. A host's Ignition is named
-- "hosts/<host id>.ign". They go with their cluster, and a new preparation
-- replaces them whole.
CREATE TABLE cluster_files (
    cluster_id TEXT    NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    content    BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, name)
);
