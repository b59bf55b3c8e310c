package credentials

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// verifyES256 checks a token as a JWT library does, with the standard
// library only: three parts, header alg ES256, a 64-byte r‖s signature over
// the first two parts that the public key accepts. It returns the claims.
func verifyES256(t *testing.T, pubPEM []byte, token string) map[string]any {
	t.Helper()
	blk, _ := pem.Decode(pubPEM)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		t.Fatalf("public key PEM: got %q", pubPEM)
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub := k.(*ecdsa.PublicKey)
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q: got %d parts, want 3", token, len(parts))
	}
	dec := func(s string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("token part %q: %v", s, err)
		}
		return b
	}
	var hdr map[string]any
	if err := json.Unmarshal(dec(parts[0]), &hdr); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"alg": "ES256", "typ": "JWT"}, hdr); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	sig := dec(parts[2])
	if len(sig) != 64 {
		t.Fatalf("signature is %d bytes, want 64", len(sig))
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatalf("token %q: signature does not verify", token)
	}
	var claims map[string]any
	if err := json.Unmarshal(dec(parts[1]), &claims); err != nil {
		t.Fatal(err)
	}
	return claims
}

func TestSignToken(t *testing.T) {
	keyPEM, err := NewTokenKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ParseTokenKey(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := TokenPublicKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		expires time.Time
		want    map[string]any
	}{
		{"day 2, with exp", exp, map[string]any{"auth_scheme": "userAuth", "exp": float64(exp.Unix())}},
		{"no exp", time.Time{}, map[string]any{"auth_scheme": "userAuth"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := SignToken(nil, key, "userAuth", tc.expires)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, verifyES256(t, pub, tok)); diff != "" {
				t.Errorf("claims (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("another key does not verify it", func(t *testing.T) {
		otherPEM, _ := NewTokenKey(nil)
		otherPub, _ := TokenPublicKeyPEM(otherPEM)
		tok, _ := SignToken(nil, key, "agentAuth", exp)
		parts := strings.Split(tok, ".")
		blk, _ := pem.Decode(otherPub)
		k, _ := x509.ParsePKIXPublicKey(blk.Bytes)
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
		if ecdsa.Verify(k.(*ecdsa.PublicKey), sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
			t.Errorf("a token verified with another key")
		}
	})
	if _, err := ParseTokenKey("not a key"); err == nil {
		t.Errorf("ParseTokenKey(garbage) = nil error, want one")
	}
}
