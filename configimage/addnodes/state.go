package addnodes

import (
	"errors"
	"time"
)

// State is Dir/StateFile: what a rebuild of the node config image reuses.
type State struct {
	Version int `json:"version"`
	// ECPrivateKeyPEM is the key the tokens are signed with; its public
	// half goes into assisted-service.env.
	ECPrivateKeyPEM string `json:"ec_private_key_pem"`
	// Tokens are the service tokens by scheme (agentAuth, userAuth,
	// watcherAuth), each with exp = TokenExpiry.
	Tokens      map[string]string `json:"tokens"`
	TokenExpiry time.Time         `json:"token_expiry"`
	// InfraEnvID is the infra-env id the added hosts' service is told to
	// use.
	InfraEnvID string `json:"infra_env_id"`
}

// UserToken is the userAuth token: what a caller sends in Authorization to
// an added host's service.
func (s *State) UserToken() string { return s.Tokens["userAuth"] }

// LoadState reads dir/StateFile as Create saved it.
func LoadState(dir string) (*State, error) {
	return nil, errors.New("load node config image state: not implemented yet")
}
