package auth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is the provider's signing keys (its JWKS), fetched when a token
// names a key id not seen before, but no more often than every minRefresh:
// go-oidc's own remote key set fetches again for every token it cannot
// verify, which tokens with made-up key ids (or a tampered signature) could
// turn into a flood of requests to the provider.
type keySet struct {
	url        string
	client     *http.Client
	algs       []jose.SignatureAlgorithm
	minRefresh time.Duration
	now        func() time.Time // the clock of fetched; time.Now but in tests

	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time     // of the last fetch, successful or not
	flight  chan struct{} // closed when the fetch in progress ends; nil if none
}

func newKeySet(url string, client *http.Client, algs []string, minRefresh time.Duration, now func() time.Time) *keySet {
	if now == nil {
		now = time.Now
	}
	ks := &keySet{url: url, client: client, minRefresh: minRefresh, now: now}
	for _, a := range algs {
		ks.algs = append(ks.algs, jose.SignatureAlgorithm(a))
	}
	return ks
}

// VerifySignature implements oidc.KeySet: it returns the payload of jwt if
// one of the provider's keys signed it.
func (ks *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSigned(jwt, ks.algs)
	if err != nil {
		return nil, fmt.Errorf("auth: malformed JWT: %w", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("auth: a JWT needs exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	keys, known := ks.lookup(kid)
	if !known {
		fresh, err := ks.refresh(ctx, kid)
		switch {
		case err == nil:
			keys = fresh
		case len(keys) == 0:
			return nil, err
		}
		// Keys too old to trust without a fetch still do while the provider
		// cannot be reached.
	}
	if payload, ok := verify(jws, keys); ok {
		return payload, nil
	}
	if kid == "" {
		// A token that names no key may be of a key that came since the
		// last fetch.
		if keys, err = ks.refresh(ctx, kid); err == nil {
			if payload, ok := verify(jws, keys); ok {
				return payload, nil
			}
		}
	}
	return nil, errors.New("auth: no key of the provider verifies the signature")
}

// verify returns the payload of jws if one of keys signed it.
func verify(jws *jose.JSONWebSignature, keys []jose.JSONWebKey) ([]byte, bool) {
	for _, k := range keys {
		if payload, err := jws.Verify(&k); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// keysMaxAge is how long fetched keys are trusted without a fetch: a key
// the provider withdrew stops working within it even if no token names a
// new key.
const keysMaxAge = 24 * time.Hour

// lookup returns the cached keys that may have signed a token naming kid
// (all of them for no kid), and whether kid is known and the keys fresh.
func (ks *keySet) lookup(kid string) ([]jose.JSONWebKey, bool) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	keys, known := matching(ks.keys, kid)
	return keys, known && ks.now().Sub(ks.fetched) <= keysMaxAge
}

func matching(keys []jose.JSONWebKey, kid string) ([]jose.JSONWebKey, bool) {
	if kid == "" {
		return keys, len(keys) > 0
	}
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out, len(out) > 0
}

// refresh fetches the keys again, unless that was done less than
// minRefresh ago, and returns those that match kid. Concurrent callers share
// one fetch.
func (ks *keySet) refresh(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	ks.mu.Lock()
	flight := ks.flight
	if flight == nil {
		if since := ks.now().Sub(ks.fetched); !ks.fetched.IsZero() && since < ks.minRefresh {
			ks.mu.Unlock()
			return nil, fmt.Errorf("auth: key id %q is unknown (the keys were fetched %s ago)", kid, since.Round(time.Millisecond))
		}
		flight = make(chan struct{})
		ks.flight = flight
		ks.fetched = ks.now()
		go ks.fetch(flight)
	}
	ks.mu.Unlock()
	select {
	case <-flight:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	keys, _ := ks.lookup(kid)
	if len(keys) == 0 {
		return nil, fmt.Errorf("auth: key id %q is not among the provider's keys", kid)
	}
	return keys, nil
}

// fetch reads the key set and keeps it if it is readable; it runs apart
// from any request, so that a caller that gives up does not waste it.
func (ks *keySet) fetch(done chan struct{}) {
	keys, err := ks.get()
	ks.mu.Lock()
	if err == nil {
		ks.keys = keys
	}
	ks.flight = nil
	ks.mu.Unlock()
	close(done)
}

func (ks *keySet) get() ([]jose.JSONWebKey, error) {
	req, err := http.NewRequest(http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("auth: fetching keys: %s", resp.Status)
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("auth: reading keys: %w", err)
	}
	var keys []jose.JSONWebKey
	for _, raw := range set.Keys {
		// A key of a kind go-jose does not know is skipped, not fatal.
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err == nil && k.Valid() && k.IsPublic() && (k.Use == "" || k.Use == "sig") {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// constantTimeEqual reports whether a and b are equal, in time that does
// not depend on where they differ.
func constantTimeEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
