package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth/authtest"
)

func TestRolePolicy(t *testing.T) {
	p := quarry.RolePolicy{AdminEmails: []string{"boss@example.com"}, Claim: "realm_access.roles",
		Map: map[string]quarry.Role{"readers": quarry.RoleBasic, "curators": quarry.RoleCurator, "leads": quarry.RoleGlobalCurator,
			"contractors": quarry.RoleLimited}}
	for _, tc := range []struct {
		email    string
		verified bool
		claims   map[string]any
		want     quarry.Role
	}{
		{"a@example.com", true, map[string]any{"realm_access": map[string]any{"roles": []any{"readers", "leads", 7}}}, quarry.RoleGlobalCurator},
		{"a@example.com", true, map[string]any{"realm_access": map[string]any{"roles": "curators"}}, quarry.RoleCurator},
		{"a@example.com", true, map[string]any{"realm_access": map[string]any{"roles": []any{"contractors"}}}, quarry.RoleLimited},
		{"a@example.com", true, map[string]any{"realm_access": "curators"}, quarry.RoleBasic},
		{"a@example.com", true, map[string]any{}, quarry.RoleBasic},
		{"boss@example.com", true, map[string]any{}, quarry.RoleAdmin},
		// An admin email counts only when the provider vouches for it.
		{"boss@example.com", false, map[string]any{}, quarry.RoleBasic},
	} {
		got, fromProvider := providerRole(&p, tc.email, tc.verified, tc.claims)
		if got != tc.want || !fromProvider {
			t.Errorf("role(%s, %v, %v) = %s, %v; want %s, true", tc.email, tc.verified, tc.claims, got, fromProvider, tc.want)
		}
	}
	if got, from := providerRole(&quarry.RolePolicy{AdminEmails: []string{"boss@example.com"}}, "boss@example.com", true, nil); got != quarry.RoleAdmin || from {
		t.Errorf("without a claim: %s, %v; want admin, not decided by the provider", got, from)
	}
}

// testClock is a clock that moves only when told.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// countingTransport counts the requests for the provider's keys.
type countingTransport struct{ keys atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/keys" {
		c.keys.Add(1)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestKeyFetches: tokens naming unknown keys, or with a bad signature, do
// not make Quarry fetch the provider's keys more than once per KeyRefresh;
// a rotation is picked up once it has passed.
func TestKeyFetches(t *testing.T) {
	op := authtest.Start(t)
	op.AddClient(authtest.Client{ID: "q", Secret: "s", RedirectURIs: []string{"http://127.0.0.1:1/cb"}})
	op.AddUser(authtest.User{Subject: "u", Email: "u@example.com", EmailVerified: true, Password: "pw"})
	tr := &countingTransport{}
	// KeyRefresh is measured on a clock the test moves, so that how long
	// signing and verifying take (under load too) changes nothing.
	refresh := time.Minute
	clock := &testClock{at: time.Now()}
	p := NewProvider(t.Context(), OIDCConfig{Issuer: op.Issuer, ClientID: "q", ClientSecret: "s", KeyRefresh: refresh,
		HTTPClient: &http.Client{Transport: tr}, keyClock: clock.now}, slog.New(slog.DiscardHandler))
	<-p.Ready()
	ctx := context.Background()
	good := op.AccessToken(t, "q", "s", "u", "pw")
	if _, err := p.VerifyAccessToken(ctx, good); err != nil {
		t.Fatal(err)
	}
	foreign, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	claims := op.Claims("q", "u")
	for i := range 50 {
		claims["jti"] = i
		kid := op.KeyID() // a known key id, a signature it does not verify
		if i%2 == 1 {
			kid = fmt.Sprint("made-up-", i)
		}
		if _, err := p.VerifyAccessToken(ctx, op.SignWith(foreign, kid, claims)); err == nil {
			t.Fatal("a token of an unknown key was accepted")
		}
	}
	n := tr.keys.Load()
	if n > 2 {
		t.Errorf("%d fetches of the keys for 50 tokens of an unknown key within %v; want at most 2", n, refresh)
	}
	op.RotateKey()
	op.RetireOldKeys()
	rotated := op.AccessToken(t, "q", "s", "u", "pw")
	clock.advance(refresh - time.Millisecond)
	if _, err := p.VerifyAccessToken(ctx, rotated); err == nil || tr.keys.Load() != n {
		t.Fatalf("a token of a new key within %v of the last fetch: %v, %d fetches; want it refused without one", refresh, err, tr.keys.Load()-n)
	}
	clock.advance(time.Millisecond)
	id, err := p.VerifyAccessToken(ctx, rotated)
	if err != nil {
		t.Fatalf("a token of the new key after the rotation: %v", err)
	}
	if want := (&quarry.Identity{Issuer: op.Issuer, Subject: "u", Email: "u@example.com", EmailVerified: true, Role: quarry.RoleBasic}); !cmp.Equal(id, want) {
		t.Errorf("identity %+v, want %+v", id, want)
	}
}
