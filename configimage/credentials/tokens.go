package credentials

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"time"
)

// The tokens a config image carries, minted here for both images (create
// config-image's never expire; the node config image of day 2 carries
// tokens that do: exp = creation + 48 h, docs/reference/abi-on-host.md
// §13), with the standard library so that configimage stays a leaf. They
// are the ES256 JWTs daemon/auth checks: header {"alg":"ES256","typ":"JWT"},
// claims auth_scheme and exp, the signature r‖s of 32 bytes each (RFC 7518
// §3.4).

// ClaimAuthScheme is the claim naming a token's scheme (agentAuth,
// userAuth, watcherAuth), as assisted-service reads it.
const ClaimAuthScheme = "auth_scheme"

// NewTokenKey makes a P-256 token key and returns it PEM-encoded ("EC
// PRIVATE KEY"), as State.ECPrivateKeyPEM keeps it; rnd nil means
// crypto/rand.
func NewTokenKey(rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rnd)
	if err != nil {
		return "", fmt.Errorf("generate token key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return "", fmt.Errorf("marshal token key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})), nil
}

// ParseTokenKey reads a key NewTokenKey made.
func ParseTokenKey(pemText string) (*ecdsa.PrivateKey, error) {
	return (&State{ECPrivateKeyPEM: pemText}).TokenKey()
}

// TokenPublicKeyPEM is a token key's public half, PEM ("PUBLIC KEY"): what
// assisted-service.env's EC_PUBLIC_KEY_PEM carries, base64.
func TokenPublicKeyPEM(pemText string) ([]byte, error) {
	return (&State{ECPrivateKeyPEM: pemText}).PublicKeyPEM()
}

// SignToken issues an ES256 token for scheme, with exp = expires (none
// when expires is zero). rnd nil means crypto/rand; ECDSA signatures
// differ on every signing, so callers keep the tokens they mint.
func SignToken(rnd io.Reader, key *ecdsa.PrivateKey, scheme string, expires time.Time) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	if key == nil || key.Curve != elliptic.P256() {
		return "", fmt.Errorf("sign %s token: want a P-256 key", scheme)
	}
	claims := map[string]any{ClaimAuthScheme: scheme}
	if !expires.IsZero() {
		claims["exp"] = expires.Unix()
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("sign %s token: %w", scheme, err)
	}
	enc := base64.RawURLEncoding
	signed := enc.EncodeToString([]byte(`{"alg":"ES256","typ":"JWT"}`)) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signed))
	r, s, err := ecdsa.Sign(rnd, key, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign %s token: %w", scheme, err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return signed + "." + enc.EncodeToString(sig), nil
}
