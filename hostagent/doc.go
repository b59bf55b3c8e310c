// Package hostagent is the host agent every host runs: it derives the host ID,
// registers with the assisted service, asks for instructions, runs each step
// in-process and posts the replies, exactly as assisted-installer-agent speaks
// the protocol. Sub-packages hold the steps' work (inventory, ...).
//
// hostagent imports only the wire package.
package hostagent
