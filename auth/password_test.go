package auth

import (
	"context"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

func TestHasher(t *testing.T) {
	ctx := context.Background()
	h := NewHasher(DefaultArgon2Params(), 2)
	enc, err := h.Hash(ctx, "correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(enc, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q: want argon2id with m=19456, t=2, p=1", enc)
	}
	again, _ := h.Hash(ctx, "correct horse battery staple")
	if again == enc {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	for _, tc := range []struct {
		encoded, password string
		ok                bool
	}{
		{enc, "correct horse battery staple", true},
		{enc, "correct horse battery stapl", false},
		{enc, "", false},
		{"", "correct horse battery staple", false}, // no account: the dummy hash, never a match
	} {
		ok, err := h.Check(ctx, tc.encoded, tc.password)
		if err != nil || ok != tc.ok {
			t.Errorf("Check(%.20q, %q) = %v, %v; want %v", tc.encoded, tc.password, ok, err, tc.ok)
		}
	}
	// Hashes with other parameters still check (the parameters are in the
	// hash), and a tampered one cannot make a check take minutes.
	cheap := NewHasher(Argon2Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 8, KeyLen: 16}, 1)
	old, _ := cheap.Hash(ctx, "p")
	if ok, err := h.Check(ctx, old, "p"); !ok || err != nil {
		t.Errorf("a hash with other parameters: %v, %v", ok, err)
	}
	for _, bad := range []string{"plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=4194304,t=1,p=1$c2FsdA$aGFzaA",
		"$argon2id$v=19$m=64,t=99,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaA", "$argon2id$v=19$m=64,t=1,p=1$c2FsdA$"} {
		if ok, err := h.Check(ctx, bad, "p"); ok || err == nil {
			t.Errorf("Check(%q) = %v, %v; want an error", bad, ok, err)
		}
	}
	long := strings.Repeat("x", quarry.MaxPasswordBytes+1)
	if _, err := h.Hash(ctx, long); quarry.ErrorCode(err) != quarry.EINVALID {
		t.Errorf("hashing %d bytes: %v", len(long), err)
	}
	if ok, err := h.Check(ctx, enc, long); ok || err != nil {
		t.Errorf("checking %d bytes: %v, %v; want a plain mismatch", len(long), ok, err)
	}
	// A check waits for a free slot, or gives up with its context.
	busy := NewHasher(DefaultArgon2Params(), 1)
	busy.slots <- struct{}{}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := busy.Check(cctx, enc, "x"); err != context.Canceled {
		t.Errorf("a check with no free slot and a cancelled context: %v", err)
	}
}

// BenchmarkHash measures one argon2id hash with the default parameters
// (docs/decisions.md reports it).
func BenchmarkHash(b *testing.B) {
	h := NewHasher(DefaultArgon2Params(), 1)
	ctx := context.Background()
	for b.Loop() {
		if _, err := h.Hash(ctx, "correct horse battery staple"); err != nil {
			b.Fatal(err)
		}
	}
}
