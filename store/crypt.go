package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// A ciphertext is laid out as
//
//	version (1 byte, 1) | key id (4 bytes) | nonce (12 bytes) | AES-256-GCM sealed data
//
// The key id is the first four bytes of the SHA-256 of the key, so a
// ciphertext names the key that opens it and keys can be rotated while old
// ciphertexts are still being read. The additional data is the purpose of the
// secret (such as "credential_json"), so a ciphertext cannot be moved from
// one kind of column to another.
const (
	cipherVersion = 1
	keyIDLen      = 4
	headerLen     = 1 + keyIDLen + 12
)

// Purposes bind each ciphertext to the kind of secret it holds.
const (
	purposeCredential  = "credential_json"
	purposeToolHeaders = "tool_headers"
	purposeOAuthSecret = "oauth_client_secret"
	purposeIDToken     = "session_id_token"
	purposeOIDCLogin   = "oidc_login"
	purposeToolToken   = "oauth_token"       // A person's token for a tool's OAuth configuration.
	purposeSSOToken    = "session_sso_token" // A session's single sign-on access and refresh tokens.
	purposeOAuthState  = "oauth_state"       // The PKCE verifier of an OAuth connection in progress.
	purposeMCPConfig   = "mcp_config"        // An MCP server's secrets: API token, header template, admin values, OAuth client.
	purposeMCPCreds    = "mcp_credentials"   // A person's values for an MCP server's header template.
	purposeMCPToken    = "mcp_token"         // An OAuth token for an MCP server: a person's, or the shared one.
	purposeMCPState    = "mcp_oauth_state"   // The PKCE verifier of an OAuth connection to an MCP server in progress.
	purposeLLMKey      = "llm_api_key"       // A model provider's API key.
)

// Keyring encrypts secrets with its primary key and decrypts them with any
// of its keys.
type Keyring struct {
	primary uint32
	aeads   map[uint32]cipher.AEAD
}

// ParseKey decodes a key given as standard or URL-safe base64 of 32 bytes.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("encryption key is %d bytes, want 32", len(k))
			}
			return k, nil
		}
	}
	return nil, errors.New("encryption key is not base64")
}

// NewKey returns a fresh random key, base64-encoded.
func NewKey() string {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	return base64.StdEncoding.EncodeToString(k)
}

// NewKeyring returns a Keyring that encrypts with primary and also decrypts
// with the older keys, each 32 bytes.
func NewKeyring(primary []byte, older ...[]byte) (*Keyring, error) {
	kr := &Keyring{aeads: make(map[uint32]cipher.AEAD)}
	for i, k := range append([][]byte{primary}, older...) {
		if len(k) != 32 {
			return nil, fmt.Errorf("encryption key is %d bytes, want 32", len(k))
		}
		block, err := aes.NewCipher(k)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		id := keyID(k)
		kr.aeads[id] = aead
		if i == 0 {
			kr.primary = id
		}
	}
	return kr, nil
}

func keyID(k []byte) uint32 {
	sum := sha256.Sum256(k)
	return binary.BigEndian.Uint32(sum[:keyIDLen])
}

// PrimaryID returns the id of the key new ciphertexts are sealed with, as
// eight hex digits.
func (kr *Keyring) PrimaryID() string { return fmt.Sprintf("%08x", kr.primary) }

// seal encrypts plaintext under the primary key.
func (kr *Keyring) seal(purpose string, plaintext []byte) []byte {
	aead := kr.aeads[kr.primary]
	out := make([]byte, headerLen, headerLen+len(plaintext)+aead.Overhead())
	out[0] = cipherVersion
	binary.BigEndian.PutUint32(out[1:], kr.primary)
	if _, err := rand.Read(out[1+keyIDLen : headerLen]); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	return aead.Seal(out, out[1+keyIDLen:headerLen], plaintext, []byte(purpose))
}

// errUnknownKey is returned when a ciphertext was sealed with a key the
// keyring does not hold.
var errUnknownKey = errors.New("store: secret was encrypted with a key this server does not have (check QUARRY_ENCRYPTION_KEY)")

// open decrypts a ciphertext made by seal with any key of the ring.
func (kr *Keyring) open(purpose string, ciphertext []byte) ([]byte, error) {
	return kr.openTo(nil, purpose, ciphertext)
}

// openTo is open, appending the plaintext to dst.
func (kr *Keyring) openTo(dst []byte, purpose string, ciphertext []byte) ([]byte, error) {
	if len(ciphertext) < headerLen || ciphertext[0] != cipherVersion {
		return nil, errors.New("store: malformed ciphertext")
	}
	aead, ok := kr.aeads[binary.BigEndian.Uint32(ciphertext[1:])]
	if !ok {
		return nil, errUnknownKey
	}
	pt, err := aead.Open(dst, ciphertext[1+keyIDLen:headerLen], ciphertext[headerLen:], []byte(purpose))
	if err != nil {
		return nil, fmt.Errorf("store: decrypting %s: %w", purpose, err)
	}
	return pt, nil
}

// sealedWithPrimary reports whether ciphertext is already under the primary key.
func (kr *Keyring) sealedWithPrimary(ciphertext []byte) bool {
	return len(ciphertext) >= headerLen && binary.BigEndian.Uint32(ciphertext[1:]) == kr.primary
}
