// Package auth issues and checks the ES256 tokens of assisted-service's
// agent-installer-local mode (docs/reference/assisted-service.md §11): a P-256 key
// pair made per install, three tokens whose claim auth_scheme names the scheme
// they are for (agentAuth, userAuth, watcherAuth), no expiry for day-1 tokens,
// and per-route schemes. It imports only the standard library and jwt.
package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Scheme is a swagger security scheme name, and the value of a token's
// auth_scheme claim.
type Scheme string

// The schemes agent-installer-local accepts.
const (
	Agent   Scheme = "agentAuth"
	User    Scheme = "userAuth"
	Watcher Scheme = "watcherAuth"
)

// Schemes lists every scheme in a fixed order.
var Schemes = []Scheme{Agent, User, Watcher}

// Header is the HTTP header that carries a scheme's token, raw (no "Bearer").
func (s Scheme) Header() string {
	switch s {
	case Agent:
		return "X-Secret-Key"
	case User:
		return "Authorization"
	case Watcher:
		return "Watcher-Authorization"
	}
	return ""
}

// ClaimAuthScheme is the claim that binds a token to its scheme.
const ClaimAuthScheme = "auth_scheme"

// Errors returned by Verify and Authorize. Callers branch on them with errors.Is.
var (
	ErrMissing   = errors.New("no credentials for this route")
	ErrInvalid   = errors.New("invalid token")
	ErrExpired   = errors.New("the provided authentication token has expired")
	ErrForbidden = errors.New("token is not allowed on this route")
)

// GenerateKey makes a P-256 key pair, as openshift-install does per ISO.
func GenerateKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// Sign issues a token for scheme. A zero expiry means the token never expires
// (the day-1 install workflow).
func Sign(key *ecdsa.PrivateKey, scheme Scheme, expires time.Time) (string, error) {
	claims := jwt.MapClaims{ClaimAuthScheme: string(scheme)}
	if !expires.IsZero() {
		claims["exp"] = expires.Unix()
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign %s token: %w", scheme, err)
	}
	return tok, nil
}

// Verifier checks tokens against one public key.
type Verifier struct {
	key *ecdsa.PublicKey
	now func() time.Time

	// Agents send the same few tokens on every request; an ES256
	// verification costs about 80 µs, so good tokens are remembered.
	mu    sync.Mutex
	cache map[string]verified
}

type verified struct {
	scheme  Scheme
	expires time.Time // zero: never
}

// cacheSize bounds the verified-token cache; it is emptied when full.
const cacheSize = 256

// NewVerifier returns a Verifier for key. now may be nil (time.Now).
func NewVerifier(key *ecdsa.PublicKey, now func() time.Time) *Verifier {
	if now == nil {
		now = time.Now
	}
	return &Verifier{key: key, now: now}
}

// Verify checks the signature (ES256 only: "none", HS256 and every other
// algorithm are refused), the expiry and the not-before and issued-at times,
// and returns the auth_scheme claim.
func (v *Verifier) Verify(token string) (Scheme, error) {
	v.mu.Lock()
	e, ok := v.cache[token]
	v.mu.Unlock()
	if ok {
		if e.expires.IsZero() || v.now().Before(e.expires) {
			return e.scheme, nil
		}
		return "", ErrExpired
	}
	s, exp, err := v.verify(token)
	if err != nil {
		return "", err
	}
	v.mu.Lock()
	if v.cache == nil || len(v.cache) >= cacheSize {
		v.cache = map[string]verified{}
	}
	v.cache[token] = verified{s, exp}
	v.mu.Unlock()
	return s, nil
}

func (v *Verifier) verify(token string) (Scheme, time.Time, error) {
	// jwt/v4, which assisted-service uses, also refuses a token issued in
	// the future; v5 does so only when asked.
	p := jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithTimeFunc(v.now), jwt.WithIssuedAt())
	claims := jwt.MapClaims{}
	_, err := p.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return v.key, nil })
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "", time.Time{}, ErrExpired
	case err != nil:
		return "", time.Time{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	s, _ := claims[ClaimAuthScheme].(string)
	if s == "" {
		return "", time.Time{}, fmt.Errorf("%w: claim %s is missing", ErrInvalid, ClaimAuthScheme)
	}
	var exp time.Time
	if e, err := claims.GetExpirationTime(); err == nil && e != nil {
		exp = e.Time
	}
	return Scheme(s), exp, nil
}

// Authorize decides a request to a route that accepts the given schemes, the
// way go-openapi's RouteAuthenticators and assisted-service's agent-local
// authorizer do together (docs/reference/assisted-service.md §11):
//
//   - the route's schemes are tried in order; a scheme whose header is
//     absent does not apply and is skipped;
//   - a token that does not verify (another key, another algorithm, expired,
//     not yet valid, malformed, "Bearer "-prefixed) is remembered and the
//     next scheme is tried, as go-openapi keeps the last error and goes on;
//   - the first token that verifies decides: its auth_scheme claim must name
//     the scheme whose header carried it, else ErrForbidden (403), whatever
//     the later headers hold;
//   - no token verified: the last verification error (ErrInvalid or
//     ErrExpired, 401); when no header of the route's schemes was sent, a
//     valid token of another scheme in that scheme's own header is
//     ErrForbidden (403: authenticated, not authorized), else ErrMissing
//     (401).
//
// Tokens are raw, as go-openapi's APIKeyAuth takes them: a "Bearer " prefix
// makes the value an invalid token, as it does in assisted-service.
func (v *Verifier) Authorize(h http.Header, allowed []Scheme) (Scheme, error) {
	var last error
	for _, s := range allowed {
		raw := h.Get(s.Header())
		if raw == "" {
			continue
		}
		if strings.HasPrefix(raw, "Bearer ") || strings.HasPrefix(raw, "Basic ") {
			last = fmt.Errorf("%w: header %s carries an HTTP auth scheme; send the raw token", ErrInvalid, s.Header())
			continue
		}
		claim, err := v.Verify(raw)
		if err != nil {
			last = fmt.Errorf("header %s: %w", s.Header(), err)
			continue
		}
		if claim != s {
			return "", fmt.Errorf("%w: authClaim %s is unauthorized to access (route wants %s)", ErrForbidden, claim, s)
		}
		return s, nil
	}
	if last != nil {
		return "", last
	}
	// A valid token of a scheme the route does not take, in that scheme's
	// own header: the caller is authenticated but not authorized, 403,
	// as assisted's authorizer answers a known token on a route not for it.
	for _, s := range Schemes {
		if slices.Contains(allowed, s) {
			continue
		}
		if raw := h.Get(s.Header()); raw != "" {
			if claim, err := v.Verify(raw); err == nil && claim == s {
				return "", fmt.Errorf("%w: authClaim %s is unauthorized to access (route wants %s)", ErrForbidden, claim, joinSchemes(allowed))
			}
		}
	}
	names := make([]string, len(allowed))
	for i, s := range allowed {
		names[i] = fmt.Sprintf("%s (header %s)", s, s.Header())
	}
	return "", fmt.Errorf("%w: send one of %s", ErrMissing, strings.Join(names, ", "))
}

// MarshalPublicKey encodes key as a PEM "PUBLIC KEY" block.
func MarshalPublicKey(key *ecdsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// MarshalPrivateKey encodes key as a PEM "EC PRIVATE KEY" block.
func MarshalPrivateKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// ParsePublicKey reads a P-256 public key from PEM, or from base64 of PEM as
// ABI's EC_PUBLIC_KEY_PEM carries it (systemd env files hold one line).
func ParsePublicKey(data []byte) (*ecdsa.PublicKey, error) {
	s := strings.TrimSpace(string(data))
	if !strings.HasPrefix(s, "-----BEGIN") {
		dec, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("parse public key: neither PEM nor base64 of PEM: %w", err)
		}
		s = string(dec)
	}
	blk, _ := pem.Decode([]byte(s))
	if blk == nil {
		return nil, errors.New("parse public key: no PEM block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("parse public key: not an ECDSA P-256 key")
	}
	return ec, nil
}

// ParsePrivateKey reads an EC private key from PEM (SEC 1 or PKCS #8).
func ParsePrivateKey(data []byte) (*ecdsa.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil {
		return nil, errors.New("parse private key: no PEM block")
	}
	if k, err := x509.ParseECPrivateKey(blk.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("parse private key: not an ECDSA key")
	}
	return ec, nil
}

// joinSchemes names schemes for an error: "userAuth or watcherAuth".
func joinSchemes(schemes []Scheme) string {
	names := make([]string, len(schemes))
	for i, s := range schemes {
		names[i] = string(s)
	}
	return strings.Join(names, " or ")
}
