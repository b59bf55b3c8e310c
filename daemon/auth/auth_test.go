package auth

import (
	"crypto/ecdsa"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestVerify(t *testing.T) {
	key, other := mustKey(t), mustKey(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	v := NewVerifier(&key.PublicKey, func() time.Time { return now })
	sign := func(k *ecdsa.PrivateKey, s Scheme, exp time.Time) string {
		tok, err := Sign(k, s, exp)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	pubPEM, _ := MarshalPublicKey(&key.PublicKey)
	hs, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{ClaimAuthScheme: "userAuth"}).SignedString(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{ClaimAuthScheme: "userAuth"}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	es256 := func(claims jwt.MapClaims) string {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	noClaim := es256(jwt.MapClaims{"sub": "x"})
	good := sign(key, User, time.Time{})
	parts := strings.Split(good, ".")
	rs256Header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2]
	for _, tc := range []struct {
		name    string
		token   string
		want    Scheme
		wantErr error
	}{
		{"agent", sign(key, Agent, time.Time{}), Agent, nil},
		{"user not yet expired", sign(key, User, now.Add(time.Hour)), User, nil},
		{"expired", sign(key, Watcher, now.Add(-time.Second)), "", ErrExpired},
		{"other key", sign(other, User, time.Time{}), "", ErrInvalid},
		{"HS256 with the public key as secret", hs, "", ErrInvalid},
		{"alg none", none, "", ErrInvalid},
		{"garbage", "not.a.jwt", "", ErrInvalid},
		{"no auth_scheme claim", noClaim, "", ErrInvalid},
		{"not yet valid", es256(jwt.MapClaims{ClaimAuthScheme: "userAuth", "nbf": now.Add(time.Minute).Unix()}), "", ErrInvalid},
		{"valid from now on", es256(jwt.MapClaims{ClaimAuthScheme: "userAuth", "nbf": now.Unix()}), User, nil},
		{"issued in the future", es256(jwt.MapClaims{ClaimAuthScheme: "userAuth", "iat": now.Add(time.Minute).Unix()}), "", ErrInvalid},
		{"issued before", es256(jwt.MapClaims{ClaimAuthScheme: "userAuth", "iat": now.Add(-time.Minute).Unix()}), User, nil},
		{"RS256 header on an ES256 signature", rs256Header, "", ErrInvalid},
		{"signature stripped", parts[0] + "." + parts[1] + ".", "", ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Verify(tc.token)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("Verify = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	key := mustKey(t)
	v := NewVerifier(&key.PublicKey, nil)
	tok := map[Scheme]string{}
	for _, s := range Schemes {
		tok[s], _ = Sign(key, s, time.Time{})
	}
	expired, _ := Sign(key, User, time.Now().Add(-time.Minute))
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name    string
		h       http.Header
		allowed []Scheme
		want    Scheme
		wantErr error
	}{
		{"agent on agent route", hdr("X-Secret-Key", tok[Agent]), []Scheme{Agent}, Agent, nil},
		{"user on shared route", hdr("Authorization", tok[User]), []Scheme{User, Agent, Watcher}, User, nil},
		{"watcher on shared route", hdr("Watcher-Authorization", tok[Watcher]), []Scheme{User, Agent, Watcher}, Watcher, nil},
		{"bearer prefix refused, as assisted's APIKeyAuth does", hdr("Authorization", "Bearer "+tok[User]), []Scheme{User}, "", ErrInvalid},
		{"basic scheme refused", hdr("Authorization", "Basic dXNlcjpwYXNz"), []Scheme{User}, "", ErrInvalid},
		{"nothing", hdr(), []Scheme{User}, "", ErrMissing},
		// Authenticated but not authorized is 403 whichever scheme's
		// header the valid token came in (issue #18: a watcher token got
		// 401 where an agent token got 403).
		{"agent token in its header on user-only route", hdr("X-Secret-Key", tok[Agent]), []Scheme{User}, "", ErrForbidden},
		{"watcher token in its header on user-only route", hdr("Watcher-Authorization", tok[Watcher]), []Scheme{User}, "", ErrForbidden},
		{"watcher token in its header on agent-only route", hdr("Watcher-Authorization", tok[Watcher]), []Scheme{Agent}, "", ErrForbidden},
		{"bad token in another scheme's header is still missing credentials", hdr("X-Secret-Key", "x.y.z"), []Scheme{User}, "", ErrMissing},
		{"token of another scheme in an unrelated header is missing credentials", hdr("X-Secret-Key", tok[User]), []Scheme{Watcher}, "", ErrMissing},
		{"user token in agent header", hdr("X-Secret-Key", tok[User]), []Scheme{Agent}, "", ErrForbidden},
		{"watcher token in user header", hdr("Authorization", tok[Watcher]), []Scheme{User, Watcher}, "", ErrForbidden},
		{"bad token", hdr("Authorization", "x.y.z"), []Scheme{User}, "", ErrInvalid},
		{"expired token", hdr("Authorization", expired), []Scheme{User}, "", ErrExpired},
		// go-openapi passes over a token that does not verify and tries
		// the route's next scheme.
		{"expired first, good second", hdr("Authorization", expired, "Watcher-Authorization", tok[Watcher]), []Scheme{User, Watcher}, Watcher, nil},
		{"bad first, nothing else", hdr("Authorization", "x.y.z", "X-Secret-Key", tok[Agent]), []Scheme{User, Watcher}, "", ErrInvalid},
		// The first token that verifies decides.
		{"wrong claim first, good second", hdr("Authorization", tok[Watcher], "Watcher-Authorization", tok[Watcher]), []Scheme{User, Watcher}, "", ErrForbidden},
		{"good first, bad second", hdr("Authorization", tok[User], "Watcher-Authorization", "x.y.z"), []Scheme{User, Watcher}, User, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Authorize(tc.h, tc.allowed)
			if !errors.Is(err, tc.wantErr) || got != tc.want {
				t.Errorf("Authorize = %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParsePublicKeyForms(t *testing.T) {
	key := mustKey(t)
	p, err := MarshalPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string][]byte{
		"pem":           p,
		"base64 of pem": []byte(base64.StdEncoding.EncodeToString(p)),
	} {
		got, err := ParsePublicKey(in)
		if err != nil || !got.Equal(&key.PublicKey) {
			t.Errorf("%s: ParsePublicKey = %v, %v", name, got, err)
		}
	}
	if _, err := ParsePublicKey([]byte("nonsense!")); err == nil {
		t.Error("ParsePublicKey(nonsense) succeeded")
	}
	priv, _ := MarshalPrivateKey(key)
	if got, err := ParsePrivateKey(priv); err != nil || !got.Equal(key) {
		t.Errorf("ParsePrivateKey = %v, %v", got, err)
	}
}

func TestLoadOrCreate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	m, created, err := LoadOrCreate(dir)
	if err != nil || !created {
		t.Fatalf("first LoadOrCreate: created=%v err=%v", created, err)
	}
	for _, s := range Schemes {
		fi, err := os.Stat(filepath.Join(dir, TokenFile(s)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", TokenFile(s), fi.Mode().Perm())
		}
	}
	pub, err := ParsePublicKey(m.PublicKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	v := NewVerifier(pub, nil)
	for _, s := range Schemes {
		if got, err := v.Verify(m.Tokens[s]); err != nil || got != s {
			t.Errorf("token %s verifies as %q, %v", s, got, err)
		}
	}
	m2, created, err := LoadOrCreate(dir)
	if err != nil || created {
		t.Fatalf("second LoadOrCreate: created=%v err=%v", created, err)
	}
	if m2.Tokens[User] != m.Tokens[User] || string(m2.PublicKeyPEM) != string(m.PublicKeyPEM) {
		t.Error("second LoadOrCreate returned different material")
	}
	if TokenFile(Agent) != "agent.token" || TokenFile(Watcher) != "watcher.token" {
		t.Errorf("token file names: %s %s", TokenFile(Agent), TokenFile(Watcher))
	}
}

// TestVerifyCacheKeepsExpiry: a remembered token still expires.
func TestVerifyCacheKeepsExpiry(t *testing.T) {
	key := mustKey(t)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	v := NewVerifier(&key.PublicKey, func() time.Time { return now })
	tok, err := Sign(key, User, now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second call is served from the cache
		if got, err := v.Verify(tok); err != nil || got != User {
			t.Fatalf("Verify #%d = %q, %v", i, got, err)
		}
	}
	now = now.Add(2 * time.Minute)
	if _, err := v.Verify(tok); !errors.Is(err, ErrExpired) {
		t.Errorf("Verify after expiry = %v, want ErrExpired", err)
	}
}
