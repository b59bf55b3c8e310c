// Package v2 holds the JSON shapes of the assisted-service v2 REST API and a
// small HTTP client for it. It is the contract between node zero's embedded
// service, the host agent and the console, so it imports no other package of
// this module.
//
// The *_gen.go files were generated once from the public assisted-service
// swagger definitions (shapes are facts, the code is ours) and are edited by
// hand since: field names, JSON tags, omitempty and nullability follow the
// swagger file exactly, so that a real agent or a real service can talk to
// ours. Hand-written helpers live in the files without the _gen suffix.
package wire
