-- 0004_host_connectivity: a host's connectivity-check report gets a row of
-- its own.
--
-- A report names every other host of the cluster (about 300 KB of JSON per
-- host at a thousand hosts). Kept in the host's doc, it was written again
-- with every change of the host (a check-in, a progress report, a
-- validation), and the service held every report in memory. Here it is
-- written only when the agent reports something new, and read when a client
-- asks for it. It goes with its host.
CREATE TABLE host_connectivity (
    infra_env_id TEXT NOT NULL,
    host_id      TEXT NOT NULL,
    report       TEXT NOT NULL,
    PRIMARY KEY (infra_env_id, host_id),
    FOREIGN KEY (infra_env_id, host_id) REFERENCES hosts (infra_env_id, id) ON DELETE CASCADE
);

-- Reports kept in host docs move here; this one migration reads the docs.
INSERT INTO host_connectivity (infra_env_id, host_id, report)
    SELECT infra_env_id, id, json_extract(doc, '$.connectivity') FROM hosts
    WHERE json_valid(doc) AND COALESCE(json_extract(doc, '$.connectivity'), '') <> '';
UPDATE hosts SET doc = json_remove(doc, '$.connectivity')
    WHERE json_valid(doc) AND json_type(doc, '$.connectivity') IS NOT NULL;
