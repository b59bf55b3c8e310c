// Package archtest holds the architecture test and nothing else: the
// import rules of docs/architecture.md, checked for code and tests; the
// third-party modules each part may use; the modules nobody may use; no
// cgo in the binary; and the committed listing of every package the
// nodezero binary links (docs/deps/nodezero.txt), so that a new
// dependency shows up in review. It imports nothing of this module.
package archtest
