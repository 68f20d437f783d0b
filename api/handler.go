package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
)

// handlerFunc is an API handler: it writes a response and returns nil, or
// returns an error that writeError turns into the response.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error

// gate decides whether a caller's role may use a route at all (403).
type gate func(c *quarry.Caller) error

// The gates of contract sections 3.1 and 6, one per rule: each asks the
// caller's permissions (quarry.Caller.Permissions, the one place where
// roles and group grants are combined) whether it may call a route at all.
var (
	// anyUser admits every authenticated caller.
	anyUser gate = func(*quarry.Caller) error { return nil }
	// basicAccess admits holders of basic: every role but limited.
	basicAccess = permitted(func(c *quarry.Caller) bool { return c.Has(quarry.PermBasic) }, quarry.ErrLimited)
	// adminOnly admits holders of admin: the admins.
	adminOnly = permitted(func(c *quarry.Caller) bool { return c.Has(quarry.PermAdmin) }, quarry.ErrNotAdmin)
	// connectorAccess admits curators and those who manage connectors
	// (quarry.Caller.CanReachConnectors).
	connectorAccess = permitted((*quarry.Caller).CanReachConnectors, quarry.ErrNotCurator)
	// groupAccess admits curators and those who manage groups
	// (quarry.Caller.CanReachGroups).
	groupAccess = permitted((*quarry.Caller).CanReachGroups, quarry.ErrNotCurator)
	// groupAdmin admits those who manage groups (admins, and holders of
	// manage:user_groups).
	groupAdmin = permitted((*quarry.Caller).ManagesGroups, quarry.ErrNotAdmin)
	// actionAccess admits curators and those who manage actions
	// (quarry.Caller.CanReachActions).
	actionAccess = permitted((*quarry.Caller).CanReachActions, quarry.ErrNotCurator)
	// searchAccess admits holders of read:search (quarry.Caller.CanSearch).
	searchAccess = permitted((*quarry.Caller).CanSearch, quarry.ErrNoPermission)
	// userDirectory admits curators and holders of read:users
	// (quarry.Caller.CanListUsers).
	userDirectory = permitted((*quarry.Caller).CanListUsers, quarry.ErrNotCurator)
)

// permitted returns the gate that admits the callers ok admits and
// refuses the others with refusal (one of the root package's 403s).
func permitted(ok func(*quarry.Caller) bool, refusal error) gate {
	return func(c *quarry.Caller) error {
		if !ok(c) {
			return refusal
		}
		return nil
	}
}

// minting is g for a route that makes what signs in on its own (a
// password, an invitation, a key, a session, a token): of the callers g
// admits, it refuses those quarry.Caller.CheckMint refuses (a personal
// access token, 403).
func minting(g gate) gate {
	return func(c *quarry.Caller) error {
		if err := g(c); err != nil {
			return err
		}
		return c.CheckMint()
	}
}

// authed adapts an API handler: it authenticates the caller (401), applies
// the route's gate (403), runs the handler and writes any error it returns.
// The request may take the database time-out.
func (s *Server) authed(g gate, h handlerFunc) http.Handler {
	return s.authedFor(s.cfg.DBTimeout, g, h)
}

// authedFor is authed for a route whose requests may take up to d (a run
// of a tool, which waits on the tool's server).
func (s *Server) authedFor(d time.Duration, g gate, h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(store.ShareVersion(ctx))
		c, err := s.authenticate(r)
		if err == nil {
			err = g(c)
		}
		if err == nil {
			err = h(w, r, c)
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// errNotAuthenticated answers a request that brings no credentials, and
// errInvalidToken one whose credentials open nothing: a missing, malformed,
// unknown, revoked or expired token or session, or a token that fails a
// check. Both say the same, so that no case tells more than another; the
// second adds error="invalid_token" to WWW-Authenticate (RFC 6750).
var (
	errNotAuthenticated = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")
	errInvalidToken     = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")
)

// bearerToken returns the token of an Authorization header of the bearer
// scheme (the word in any case), and whether it is one: the one parser of
// the header, for people's, the directory's and workers' routes alike.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(h, " ")
	return strings.TrimSpace(token), ok && strings.EqualFold(scheme, "bearer")
}

// authenticate returns the caller of a request: the Authorization header's
// bearer token (an API key, a personal access token, a session token, or
// the OpenID provider's JWT access token) or, without that header, the
// session cookie. A SCIM token opens nothing here. A request
// that changes something with the cookie must come from this site
// (cross-site request forgery is refused).
func (s *Server) authenticate(r *http.Request) (*quarry.Caller, error) {
	ctx := r.Context()
	if h := r.Header.Get("Authorization"); h != "" {
		token, ok := bearerToken(h)
		if !ok {
			return nil, errInvalidToken
		}
		switch {
		case quarry.ValidAPIKeyFormat(token):
			return s.opened(s.db.Authenticate(ctx, quarry.HashAPIKey(token)))
		case quarry.ValidPATFormat(token):
			return s.opened(s.db.PATCaller(ctx, quarry.HashToken(token)))
		case quarry.ValidSessionTokenFormat(token):
			return s.opened(s.db.SessionCaller(ctx, quarry.HashToken(token), s.cfg.SignIn.Sessions))
		case quarry.ValidSCIMTokenFormat(token):
			return nil, errInvalidToken // The directory's token opens the SCIM routes only (scimAuthed).
		case s.cfg.SignIn.OIDC != nil && auth.LooksLikeJWT(token):
			return s.accessToken(r, token)
		}
		return nil, errInvalidToken
	}
	cookie, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, errNotAuthenticated
	}
	if err := s.checkOrigin(r); err != nil {
		return nil, err
	}
	if !quarry.ValidSessionTokenFormat(cookie.Value) {
		return nil, errInvalidToken
	}
	return s.opened(s.db.SessionCaller(ctx, quarry.HashToken(cookie.Value), s.cfg.SignIn.Sessions))
}

// opened turns the store's "opens nothing" into errInvalidToken.
func (s *Server) opened(c *quarry.Caller, err error) (*quarry.Caller, error) {
	if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
		return nil, errInvalidToken
	}
	return c, err
}

// accessToken returns the caller of a JWT access token of the OpenID
// provider; why a token fails goes to the log, never to the caller.
func (s *Server) accessToken(r *http.Request, token string) (*quarry.Caller, error) {
	ctx := r.Context()
	id, err := s.cfg.SignIn.OIDC.VerifyAccessToken(ctx, token)
	if quarry.ErrorCode(err) == quarry.EUNAVAILABLE {
		return nil, err
	}
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelInfo, "access token refused",
			slog.String("request_id", quarry.RequestIDFrom(ctx)), slog.String("error", err.Error()))
		return nil, errInvalidToken
	}
	return s.opened(s.db.IdentityCaller(ctx, id))
}

// writeJSON writes v as the JSON body of a response with the given status.
// Like Python's json module, and like the hand-written status listing, it
// does not escape <, > and & as encoding/json does by default.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return writeBody(w, status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// writeBody writes an encoded JSON body.
func writeBody(w http.ResponseWriter, status int, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) // A failed write means the client left: nothing more to tell it.
	return nil
}

// etag renders an object version as an entity tag.
func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// ifMatch parses the If-Match header into the versions the caller accepts:
// nil when the header is absent or "*", and an empty, non-nil list when it
// names no version of ours (so that it can never match).
func ifMatch(r *http.Request) []int64 {
	h := r.Header.Values("If-Match")
	if len(h) == 0 {
		return nil
	}
	versions := []int64{}
	for _, line := range h {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" {
				return nil
			}
			n, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64)
			if err == nil && len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
				versions = append(versions, n)
			}
		}
	}
	return versions
}

// value returns a pointer to o's value when o holds one, and nil when it is
// absent or null: the "null leaves it unchanged" reading of a field.
func value[T any](o decode.Optional[T]) *T {
	if !o.Set() {
		return nil
	}
	v := o.Value
	return &v
}

// nullable returns nil when o is absent, a pointer to nil when it is null,
// and a pointer to a pointer to its value otherwise: the "null clears it"
// reading of a field.
func nullable[T any](o decode.Optional[T]) **T {
	if !o.Present {
		return nil
	}
	var p *T
	if !o.Null {
		v := o.Value
		p = &v
	}
	return &p
}

// statusResponse is Onyx's StatusResponse: {"success", "message", "data"}.
type statusResponse struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Data    int64  `json:"data"`
}
