package quarry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// APIKeyPrefix starts every API key.
const APIKeyPrefix = "qry_"

// APIKey is a bearer token's record. Only the SHA-256 of the token is
// stored; the token itself is shown once, when it is created or regenerated.
// Each key is the credential of a service-account user of its own.
type APIKey struct {
	ID        int64
	Name      *string
	Display   string // "qry_" + first 4 + "********" + last 4 characters.
	Role      Role
	UserID    string
	CreatedAt Time
}

// NewAPIKey returns a fresh token ("qry_" + 43 base64url characters, 256
// random bits) and its hash.
func NewAPIKey() (token, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("quarry: crypto/rand failed: " + err.Error()) // rand.Read never fails on supported platforms.
	}
	token = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashAPIKey(token)
}

// HashAPIKey returns the hex SHA-256 of a token, the form in which it is
// stored and looked up.
func HashAPIKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ValidAPIKeyFormat reports whether token has the shape of an API key, so
// that malformed tokens are refused without a database lookup.
func ValidAPIKeyFormat(token string) bool {
	rest, ok := strings.CutPrefix(token, APIKeyPrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// DisplayAPIKey returns the form of a token that may be shown after creation.
func DisplayAPIKey(token string) string {
	k := strings.TrimPrefix(token, APIKeyPrefix)
	return APIKeyPrefix + k[:4] + "********" + k[len(k)-4:]
}
