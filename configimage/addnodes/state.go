package addnodes

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/internal/atomicfile"
)

// stateVersion is the version of StateFile's format.
const stateVersion = 1

// State is Dir/StateFile: the secrets of one node config image, kept so
// that a rebuild gives the same bytes and a caller can talk to the added
// hosts' services.
type State struct {
	Version int `json:"version"`
	// ECPrivateKeyPEM is the key the tokens are signed with; its public
	// half goes into assisted-service.env.
	ECPrivateKeyPEM string `json:"ec_private_key_pem"`
	// Tokens are the service tokens by scheme (agentAuth, userAuth,
	// watcherAuth), each with exp = TokenExpiry.
	Tokens map[string]string `json:"tokens"`
	// IssuedAt is when the tokens were minted (the image's timestamps);
	// TokenExpiry their exp, add-nodes.env's AUTH_TOKEN_EXPIRY.
	IssuedAt    time.Time `json:"issued_at"`
	TokenExpiry time.Time `json:"token_expiry"`
	// InfraEnvID is the infra-env id the added hosts' service is told to
	// use.
	InfraEnvID string `json:"infra_env_id"`
}

// UserToken is the userAuth token: what a caller sends in Authorization to
// an added host's service.
func (s *State) UserToken() string { return s.Tokens[configimage.TokenUser] }

// WatcherToken is the watcherAuth token (Watcher-Authorization).
func (s *State) WatcherToken() string { return s.Tokens[configimage.TokenWatcher] }

// ErrNoState: the directory has no state file (no node config image was
// made there).
var ErrNoState = errors.New("no node config image state")

// LoadState reads dir/StateFile as Create saved it.
func LoadState(dir string) (*State, error) {
	p := filepath.Join(dir, StateFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: run create node-config-image first", p, ErrNoState)
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s: %w (remove it to mint new tokens)", p, err)
	}
	return &s, nil
}

func (s *State) check() error {
	if s.Version != stateVersion {
		return fmt.Errorf("version %d, want %d", s.Version, stateVersion)
	}
	if _, err := credentials.ParseTokenKey(s.ECPrivateKeyPEM); err != nil {
		return err
	}
	for _, k := range schemes {
		if s.Tokens[k] == "" {
			return fmt.Errorf("the %s token is missing", k)
		}
	}
	if !uuidRE.MatchString(s.InfraEnvID) {
		return fmt.Errorf("infra_env_id %q: want a UUID", s.InfraEnvID)
	}
	if !s.IssuedAt.Before(s.TokenExpiry) {
		return fmt.Errorf("token_expiry %s is not after issued_at %s", s.TokenExpiry.Format(time.RFC3339), s.IssuedAt.Format(time.RFC3339))
	}
	return nil
}

var schemes = []string{configimage.TokenAgent, configimage.TokenUser, configimage.TokenWatcher}

// state returns the state to build with at now: dir's, unchanged, while its
// tokens are still valid for more than half of ttl and expire no later
// than now+ttl (oc adm node-image create reuses its tokens while more than
// 24 of their 48 hours are left); else the same key and infra-env id with
// tokens minted at now; else a new state. changed reports whether it
// must be written.
func state(dir string, now time.Time, ttl time.Duration, rnd io.Reader) (s *State, changed bool, err error) {
	s, err = LoadState(dir)
	switch {
	case err == nil:
		if left := s.TokenExpiry.Sub(now); left > ttl/2 && left <= ttl {
			return s, false, nil
		}
	case errors.Is(err, ErrNoState):
		key, err := credentials.NewTokenKey(rnd)
		if err != nil {
			return nil, false, err
		}
		id, err := newUUID(rnd)
		if err != nil {
			return nil, false, err
		}
		s = &State{Version: stateVersion, ECPrivateKeyPEM: key, InfraEnvID: id}
	default:
		return nil, false, err
	}
	key, err := credentials.ParseTokenKey(s.ECPrivateKeyPEM)
	if err != nil {
		return nil, false, err
	}
	s.IssuedAt, s.TokenExpiry = now, now.Add(ttl)
	s.Tokens = map[string]string{}
	for _, k := range schemes {
		if s.Tokens[k], err = credentials.SignToken(rnd, key, k, s.TokenExpiry); err != nil {
			return nil, false, err
		}
	}
	return s, true, nil
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// newUUID is a random (version 4) UUID, the infra-env id assisted accepts.
func newUUID(rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("infra-env id: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

func (s *State) save(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, StateFile), append(b, '\n'), 0o600)
}
