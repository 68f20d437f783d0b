package quarry

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// Token prefixes: every bearer token Quarry issues says what it is, so that
// it can be told apart without a lookup (and found by secret scanners).
const (
	APIKeyPrefix       = "qry_" // An API key.
	SessionTokenPrefix = "qrs_" // A session, usually carried by the session cookie.
)

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

// NewAPIKey returns a fresh API key ("qry_" + 43 base64url characters, 256
// random bits) and its hash.
func NewAPIKey() (token, hash string) { return newToken(APIKeyPrefix) }

// NewSessionToken returns a fresh session token ("qrs_" + 43 base64url
// characters, 256 random bits) and its hash.
func NewSessionToken() (token, hash string) { return newToken(SessionTokenPrefix) }

func newToken(prefix string) (token, hash string) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("quarry: crypto/rand failed: " + err.Error()) // rand.Read never fails on supported platforms.
	}
	token = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken returns the hex SHA-256 of a token, the form in which API keys
// and session tokens are stored and looked up.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// HashAPIKey returns the hex SHA-256 of an API key.
func HashAPIKey(token string) string { return HashToken(token) }

// ValidAPIKeyFormat reports whether token has the shape of an API key, so
// that malformed tokens are refused without a database lookup.
func ValidAPIKeyFormat(token string) bool { return validTokenFormat(token, APIKeyPrefix) }

// ValidSessionTokenFormat reports whether token has the shape of a session
// token.
func ValidSessionTokenFormat(token string) bool { return validTokenFormat(token, SessionTokenPrefix) }

func validTokenFormat(token, prefix string) bool {
	rest, ok := strings.CutPrefix(token, prefix)
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

// CheckLastAdminKey reports why key k of service account u may not be
// revoked, or given another role than admin (what says which: "revoked",
// "given another role"), given the other active admins who can sign in
// (OtherAdmins.Keep): it may be the last way in as an admin.
func CheckLastAdminKey(k *APIKey, u *User, others OtherAdmins, what string) error {
	if !u.IsActiveAdmin() || others.Keep(u) {
		return nil
	}
	return Errorf(EINVALID, "API key %d is the last active admin and cannot be %s: make another admin first", k.ID, what)
}
