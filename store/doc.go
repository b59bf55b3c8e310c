// Package store keeps node zero's state in one SQLite file through
// modernc.org/sqlite (pure Go, so the binary stays CGO_ENABLED=0).
//
// It owns the schema (embedded migrations/NNNN_name.sql files applied in
// order, one transaction each, recorded in schema_migrations), the
// connection settings (WAL, foreign_keys=ON, busy_timeout, synchronous=FULL,
// immediate transactions) and the rows: clusters, infra-envs, hosts, events,
// pending steps and clusters' custom manifests. It knows nothing of the
// assisted API: a row carries the columns the store indexes and filters on,
// plus the caller's document as opaque JSON (Doc), stored as TEXT and
// returned byte for byte; a manifest carries its file as a BLOB instead.
//
// Every write runs in one transaction (Store.Update), so a status change
// commits together with the facts and events that caused it, or not at
// all; when Update returns nil the transaction is on disk, and a kill -9
// loses nothing that was acknowledged. Reads run in Store.View on a
// consistent snapshot, in parallel with each other and with the one writer.
//
// Rules callers can rely on:
//
//   - Times are stored as INTEGER nanoseconds since the Unix epoch, UTC, and
//     come back as UTC time.Time values equal to what was stored; the zero
//     time.Time is stored as 0 (so the epoch instant itself reads back as
//     zero). CreatedAt, UpdatedAt and StatusUpdatedAt are set by the store
//     from Options.Now, one reading per transaction (Tx.Now).
//   - "" stands for "no cluster/host/infra-env" and is stored as NULL.
//   - A missing row is ErrNotFound; a broken reference or duplicate key is
//     ErrConflict; a write inside View is ErrReadOnly. All are wrapped with
//     the operation, so test them with errors.Is.
//   - Deleting an infra-env deletes its hosts; deleting a cluster deletes
//     the hosts bound to it and its manifests, and leaves its infra-envs
//     unbound; deleting a host deletes its pending steps. Events are never
//     deleted with the rows they mention. migrations/0001_init.sql and
//     0002_manifests.sql say why.
//
// store imports no other package of this module.
package store
