package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/quarryhq/quarry"
)

// Argon2Params are the parameters of argon2id password hashing.
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32 // passes
	Threads uint8
	SaltLen uint32 // bytes
	KeyLen  uint32 // bytes
}

// DefaultArgon2Params returns OWASP's first recommendation for argon2id
// (19 MiB, two passes, one thread), with a 16-byte salt and a 32-byte hash:
// little memory per sign-in in flight, and a few tens of milliseconds per
// hash (docs/decisions.md has the time measured).
func DefaultArgon2Params() Argon2Params {
	return Argon2Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}
}

// Hasher hashes and checks passwords with argon2id. It runs at most a few
// hashes at a time, so that a burst of sign-ins costs a bounded amount of
// memory; the others wait (or give up when their context ends).
type Hasher struct {
	params Argon2Params
	slots  chan struct{}
	dummy  string // A hash of nothing anybody knows, checked for unknown accounts.
}

// NewHasher returns a Hasher with params that runs at most concurrent
// hashes at once (at least one).
func NewHasher(params Argon2Params, concurrent int) *Hasher {
	h := &Hasher{params: params, slots: make(chan struct{}, max(concurrent, 1))}
	var b [24]byte
	rand.Read(b[:])
	h.dummy = h.hash(base64.RawStdEncoding.EncodeToString(b[:]))
	return h
}

// Hash returns the PHC string of password:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<threads>$<salt>$<hash>.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if len(password) > quarry.MaxPasswordBytes {
		return "", quarry.ErrPasswordTooLong
	}
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	return h.hash(password), nil
}

func (h *Hasher) hash(password string) string {
	p := h.params
	salt := make([]byte, p.SaltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// Check reports whether password matches the PHC string encoded. An empty
// encoded (an unknown account, or one without a password) is checked
// against a hash nobody knows the password of, so that it costs the same
// time and never matches.
func (h *Hasher) Check(ctx context.Context, encoded, password string) (bool, error) {
	if len(password) > quarry.MaxPasswordBytes {
		return false, nil
	}
	known := encoded != ""
	if !known {
		encoded = h.dummy
	}
	p, salt, want, err := parsePHC(encoded)
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return known && subtle.ConstantTimeCompare(got, want) == 1, nil
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Hasher) release() { <-h.slots }

var errBadHash = errors.New("auth: not an argon2id hash")

// parsePHC decodes an argon2id PHC string.
func parsePHC(s string) (p Argon2Params, salt, key []byte, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return p, nil, nil, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return p, nil, nil, errBadHash
	}
	if salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil {
		return p, nil, nil, errBadHash
	}
	if key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(key) == 0 {
		return p, nil, nil, errBadHash
	}
	// A hash from a tampered database must not make a sign-in take minutes.
	if p.Memory == 0 || p.Memory > 1<<20 || p.Time == 0 || p.Time > 16 || p.Threads == 0 || len(key) > 64 {
		return p, nil, nil, errBadHash
	}
	return p, salt, key, nil
}

// RandomPassword returns a new random password: 20 base64url characters
// (120 bits), which any policy of Quarry's accepts.
func RandomPassword() string {
	var b [15]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
