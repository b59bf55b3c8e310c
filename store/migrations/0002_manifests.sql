-- 0002_manifests: the custom manifests of a cluster (V2CreateClusterManifest
-- and its siblings), which the installer adds to what `create manifests`
-- renders.
--
-- assisted-service keeps them as files in its object store under
-- <cluster id>/manifests/<folder>/<file name>, with the source (user or
-- system) as object metadata; here they are rows keyed the same way. The
-- content is the decoded file, kept byte for byte as a BLOB (it is YAML or
-- JSON, but a manifest is a file, not a document the store reads). The
-- primary key's prefix, cluster_id, serves both a cluster's listing and the
-- cascade: a manifest means nothing without its cluster, and assisted
-- deletes a deregistered cluster's files with it.
CREATE TABLE manifests (
    cluster_id TEXT    NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
    folder     TEXT    NOT NULL,
    file_name  TEXT    NOT NULL,
    content    BLOB    NOT NULL,
    source     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (cluster_id, folder, file_name)
);
