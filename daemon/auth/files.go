package auth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// Material is what a service needs to check tokens and what its users need to
// send them.
type Material struct {
	PublicKeyPEM []byte
	Tokens       map[Scheme]string
}

// File names under an auth directory.
const (
	PublicKeyFile = "public-key.pem"
	tokenSuffix   = ".token"
)

// TokenFile is the file a scheme's token is written to: agent.token,
// user.token, watcher.token.
func TokenFile(s Scheme) string {
	return strings.TrimSuffix(string(s), "Auth") + tokenSuffix
}

// LoadOrCreate reads dir/public-key.pem and the three token files, or, when
// there is no public key yet, makes a key pair, signs the three tokens
// (without expiry) and writes them with mode 0600 (the key 0644). The private
// key is not kept: nothing in the service signs tokens, and a key that is not
// on disk cannot leak. created reports whether new material was written.
func LoadOrCreate(dir string) (m Material, created bool, err error) {
	pubPath := filepath.Join(dir, PublicKeyFile)
	pub, err := os.ReadFile(pubPath)
	switch {
	case err == nil:
		m = Material{PublicKeyPEM: pub, Tokens: map[Scheme]string{}}
		if _, err := ParsePublicKey(pub); err != nil {
			return Material{}, false, fmt.Errorf("%s: %w", pubPath, err)
		}
		for _, s := range Schemes {
			b, err := os.ReadFile(filepath.Join(dir, TokenFile(s)))
			if err != nil {
				return Material{}, false, fmt.Errorf("read token: %w", err)
			}
			m.Tokens[s] = strings.TrimSpace(string(b))
		}
		return m, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Material{}, false, fmt.Errorf("read public key: %w", err)
	}
	key, err := GenerateKey()
	if err != nil {
		return Material{}, false, fmt.Errorf("generate key: %w", err)
	}
	pub, err = MarshalPublicKey(&key.PublicKey)
	if err != nil {
		return Material{}, false, err
	}
	m = Material{PublicKeyPEM: pub, Tokens: map[Scheme]string{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Material{}, false, fmt.Errorf("create auth dir: %w", err)
	}
	for _, s := range Schemes {
		tok, err := Sign(key, s, time.Time{})
		if err != nil {
			return Material{}, false, err
		}
		m.Tokens[s] = tok
		if err := atomicfile.Write(filepath.Join(dir, TokenFile(s)), []byte(tok+"\n"), 0o600); err != nil {
			return Material{}, false, err
		}
	}
	// The public key last: its presence marks the directory complete.
	if err := atomicfile.Write(pubPath, pub, 0o644); err != nil {
		return Material{}, false, err
	}
	return m, true, nil
}
