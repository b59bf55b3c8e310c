// Package store keeps node zero's state in one SQLite file through
// modernc.org/sqlite (pure Go, so the binary stays CGO_ENABLED=0).
//
// It owns the schema (embedded migrations applied in order, one transaction
// each), the connection settings (WAL, foreign_keys=ON, busy_timeout,
// synchronous=FULL, immediate transactions) and the rows: clusters, infra-envs,
// hosts, events and pending steps. It knows nothing of the assisted API: a row
// carries the columns the store indexes and filters on, plus the caller's
// document as opaque JSON. Every write runs in one transaction, so a status
// change commits together with the facts and events that caused it; a kill -9
// loses nothing that was acknowledged. The clock is injected.
//
// store imports no other package of this module.
package store
