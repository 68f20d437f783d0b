package store

import (
	"bytes"
	"testing"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestKeyringSealOpen(t *testing.T) {
	kr, err := NewKeyring(testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(`{"token":"s3cret"}`)
	ct := kr.seal(purposeCredential, secret)
	if bytes.Contains(ct, []byte("s3cret")) {
		t.Fatal("ciphertext contains the plaintext")
	}
	if again := kr.seal(purposeCredential, secret); bytes.Equal(again, ct) {
		t.Error("two seals of one plaintext are equal: nonce reused")
	}
	pt, err := kr.open(purposeCredential, ct)
	if err != nil || !bytes.Equal(pt, secret) {
		t.Fatalf("open = %q, %v; want %q", pt, err, secret)
	}
	if _, err := kr.open(purposeToolHeaders, ct); err == nil {
		t.Error("a credential ciphertext opened as tool headers")
	}
	tampered := bytes.Clone(ct)
	tampered[len(tampered)-1] ^= 1
	if _, err := kr.open(purposeCredential, tampered); err == nil {
		t.Error("a tampered ciphertext opened")
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, append([]byte{9}, ct[1:]...)} {
		if _, err := kr.open(purposeCredential, bad); err == nil {
			t.Errorf("malformed ciphertext %x opened", bad)
		}
	}
}

func TestKeyringRotation(t *testing.T) {
	old, _ := NewKeyring(testKey(1))
	ct := old.seal(purposeOAuthSecret, []byte("x"))

	rotated, err := NewKeyring(testKey(2), testKey(1))
	if err != nil {
		t.Fatal(err)
	}
	if rotated.sealedWithPrimary(ct) {
		t.Error("old ciphertext reported as sealed with the new key")
	}
	if pt, err := rotated.open(purposeOAuthSecret, ct); err != nil || string(pt) != "x" {
		t.Errorf("rotated keyring cannot open old ciphertext: %q, %v", pt, err)
	}
	if !rotated.sealedWithPrimary(rotated.seal(purposeOAuthSecret, []byte("x"))) {
		t.Error("new ciphertext not sealed with the primary key")
	}
	newOnly, _ := NewKeyring(testKey(2))
	if _, err := newOnly.open(purposeOAuthSecret, ct); err != errUnknownKey {
		t.Errorf("open with missing key: err = %v, want errUnknownKey", err)
	}
}

func TestParseKey(t *testing.T) {
	k := NewKey()
	if b, err := ParseKey(k); err != nil || len(b) != 32 {
		t.Errorf("ParseKey(NewKey()) = %d bytes, %v", len(b), err)
	}
	for _, bad := range []string{"", "not base64!", "c2hvcnQ="} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) succeeded", bad)
		}
	}
}
