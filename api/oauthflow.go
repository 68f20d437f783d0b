package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// OAuth for custom tools, with Onyx's paths and shapes
// (onyx/server/features/oauth_config/api.py): admins manage
// configurations; each person connects their own account with the
// authorization code flow (PKCE S256, a state good once, for five minutes,
// for the person who started), Quarry keeps their token sealed and sends
// it when they run a tool that uses the configuration.

// oauthConfigRecord is the wire shape of an OAuth configuration: Quarry's
// fields, then Onyx's OAuthConfigSnapshot's. The client secret is never
// shown.
type oauthConfigRecord struct {
	ID                   int64             `json:"id"`
	Name                 string            `json:"name"`
	AuthorizationURL     string            `json:"authorization_url"`
	TokenURL             string            `json:"token_url"`
	ClientID             string            `json:"client_id"`
	Scopes               []string          `json:"scopes"`
	UserID               *string           `json:"user_id"`
	TimeCreated          quarry.Time       `json:"time_created"`
	TimeUpdated          quarry.Time       `json:"time_updated"`
	AdditionalParams     map[string]string `json:"additional_params"`
	HasClientCredentials bool              `json:"has_client_credentials"`
	ToolCount            int               `json:"tool_count"`
	CreatedAt            quarry.Time       `json:"created_at"`
	UpdatedAt            quarry.Time       `json:"updated_at"`
}

// oauthConfigView returns what a response shows of o.
func oauthConfigView(o *quarry.OAuthConfig) oauthConfigRecord {
	scopes := o.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return oauthConfigRecord{ID: o.ID, Name: o.Name, AuthorizationURL: o.AuthorizationURL, TokenURL: o.TokenURL,
		ClientID: o.ClientID, Scopes: scopes, UserID: o.UserID, TimeCreated: o.CreatedAt, TimeUpdated: o.UpdatedAt,
		AdditionalParams: o.AdditionalParams, HasClientCredentials: o.HasClientCredentials(), ToolCount: o.ToolCount,
		CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt}
}

// additionalParams reads additional_params (quarry.ParseAdditionalParams),
// or nil when it is absent or null.
func additionalParams(o decode.Optional[json.RawMessage]) (map[string]string, error) {
	if !o.Set() {
		return nil, nil
	}
	return quarry.ParseAdditionalParams(o.Value)
}

// handleCreateOAuthConfig serves POST /admin/oauth-config and Onyx's POST
// /admin/oauth-config/create.
func (s *Server) handleCreateOAuthConfig(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in createOAuthConfigRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	params, err := additionalParams(b.AdditionalParams)
	if err != nil {
		return err
	}
	cfg := quarry.OAuthConfig{
		Name:             b.Name,
		AuthorizationURL: b.AuthorizationURL,
		TokenURL:         b.TokenURL,
		ClientID:         b.ClientID,
		ClientSecret:     b.ClientSecret,
		Scopes:           b.Scopes.Value,
		AdditionalParams: params,
	}
	if err := cfg.CheckURLs(); err != nil {
		return err
	}
	o, err := s.db.CreateOAuthConfig(r.Context(), c, cfg)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, oauthConfigView(o))
}

// handleListOAuthConfigs serves GET /admin/oauth-config.
func (s *Server) handleListOAuthConfigs(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	os, err := s.db.OAuthConfigs(r.Context())
	if err != nil {
		return err
	}
	out := make([]oauthConfigRecord, len(os))
	for i, o := range os {
		out[i] = oauthConfigView(o)
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleGetOAuthConfig serves GET /admin/oauth-config/{oauth_config_id}.
func (s *Server) handleGetOAuthConfig(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in getOAuthConfigRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	o, err := s.db.OAuthConfig(r.Context(), in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, oauthConfigView(o))
}

// handleUpdateOAuthConfig serves PUT /admin/oauth-config/{oauth_config_id}:
// absent or null fields are left as they are; clear_client_id and
// clear_client_secret empty them.
func (s *Server) handleUpdateOAuthConfig(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateOAuthConfigRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	b := in.Body
	u := quarry.OAuthConfigUpdate{Name: value(b.Name), AuthorizationURL: value(b.AuthorizationURL), TokenURL: value(b.TokenURL),
		ClientID: value(b.ClientID), ClientSecret: value(b.ClientSecret), Scopes: value(b.Scopes),
		ClearClientID: b.ClearClientID, ClearClientSecret: b.ClearClientSecret}
	if b.AdditionalParams.Set() {
		params, err := additionalParams(b.AdditionalParams)
		if err != nil {
			return err
		}
		u.AdditionalParams = &params
	}
	o, err := s.db.UpdateOAuthConfig(r.Context(), c, in.ID, u)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, oauthConfigView(o))
}

// oauthInitiateAnswer is Onyx's OAuthInitiateResponse.
type oauthInitiateAnswer struct {
	AuthorizationURL string `json:"authorization_url"`
	State            string `json:"state"`
}

// callbackPath is where the authorization server sends the browser back.
const callbackPath = "/oauth-config/callback"

// redirectURI returns the absolute URL of the callback: under the public
// URL when one is set, otherwise under the scheme and host the request
// came with (and its base path).
func (s *Server) redirectURI(r *http.Request) string {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return strings.TrimRight(u.String(), "/") + callbackPath
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + s.cookiePath(r) + callbackPath
}

// handleOAuthInitiate serves POST /oauth-config/initiate: it starts a
// connection of the caller to an OAuth configuration and answers the URL to
// send their browser to, and the state.
func (s *Server) handleOAuthInitiate(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in oauthInitiateRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	authURL, state, err := s.out.StartToolConnection(r.Context(), c, in.Body.OAuthConfigID, in.Body.ReturnPath, s.redirectURI(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, oauthInitiateAnswer{AuthorizationURL: authURL, State: state})
}

// withQuery returns path with name=value added to its query, before its
// fragment.
func withQuery(path, name, value string) string {
	frag := ""
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, frag = path[:i], path[i:]
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + name + "=" + value + frag
}

// handleOAuthCallbackPage serves GET /oauth-config/callback, where the
// authorization server sends the person's browser back after connecting
// their account for a tool's OAuth configuration (see callbackPage).
func (s *Server) handleOAuthCallbackPage(w http.ResponseWriter, r *http.Request) error {
	return s.callbackPage(w, r, toolsCallback, func(ctx context.Context, state string) (*pendingCallback, error) {
		k, err := s.db.TakeOAuthConnection(ctx, state)
		if err != nil {
			return nil, err
		}
		return &pendingCallback{ReturnPath: k.ReturnPath, ID: k.OAuthConfigID, Check: func(c *quarry.Caller) error { return c.CheckCallbackCaller(k) },
			Finish: func(ctx context.Context, c *quarry.Caller, code string) error {
				return s.out.FinishToolConnection(ctx, c, k, code)
			}}, nil
	})
}

// A callbackKind is what differs between the pages where authorization
// servers send browsers back (tools' OAuth, MCP servers').
type callbackKind struct {
	log    string   // the log message of a failure
	prefix string   // of the return path's query: <prefix>_connected=<id>, <prefix>_error=<code>
	gone   string   // the error code when what the connection was for is gone
	goneAs []string // the quarry error codes that mean that
}

var (
	toolsCallback = callbackKind{log: "OAuth connection failed", prefix: "oauth", gone: "config", goneAs: []string{quarry.ENOTFOUND}}
	mcpCallback   = callbackKind{log: "MCP OAuth connection failed", prefix: "mcp", gone: "server", goneAs: []string{quarry.ENOTFOUND, quarry.ECONFLICT}}
)

// A pendingCallback is a connection in progress, taken by its state: where
// the browser goes back, what it connects (an id), who may finish it, and
// how.
type pendingCallback struct {
	ReturnPath string
	ID         int64
	Check      func(*quarry.Caller) error
	Finish     func(context.Context, *quarry.Caller, string) error
}

// callbackPage serves a page where an authorization server sends the
// person's browser back. It takes the connection of the state (once,
// with take), checks that the browser is signed in as the person who
// started it, trades the code for the token, keeps it, and sends the
// browser to the connection's return path: with ?<prefix>_connected=<id>,
// or with ?<prefix>_error=<code> saying why not (state, signin, user,
// provider, code, unreachable, or the kind's gone): codes, not messages,
// so that nobody can make the page say what they like. A request without
// a state (not from an authorization server) gets a 400.
func (s *Server) callbackPage(w http.ResponseWriter, r *http.Request, kind callbackKind, take func(context.Context, string) (*pendingCallback, error)) error {
	ctx, q := r.Context(), r.URL.Query()
	w.Header().Set("Cache-Control", "no-store")
	back := func(returnPath, name, value string) error {
		http.Redirect(w, r, s.publicBase(r)+withQuery(returnPath, kind.prefix+"_"+name, value), http.StatusSeeOther)
		return nil
	}
	fail := func(returnPath, code string, cause error) error {
		s.log.LogAttrs(ctx, slog.LevelWarn, kind.log, slog.String("request_id", quarry.RequestIDFrom(ctx)),
			slog.String("reason", code), slog.String("error", cause.Error()))
		return back(returnPath, "error", code)
	}
	state := q.Get("state")
	if state == "" { // Not from an authorization server: it always sends back the state it got.
		return quarry.Errorf(quarry.EINVALID, "The OAuth callback has no state: it is where an authorization server sends a browser back")
	}
	k, err := take(ctx, state)
	if quarry.ErrorCode(err) == quarry.EINVALID {
		return fail("/", "state", err)
	}
	if err != nil {
		return err
	}
	c, err := s.authenticate(r)
	if err != nil {
		return fail(k.ReturnPath, "signin", err)
	}
	if err := k.Check(c); err != nil {
		return fail(k.ReturnPath, "user", err)
	}
	if e := q.Get("error"); e != "" {
		return fail(k.ReturnPath, "provider", fmt.Errorf("the authorization server answered %.100q", e))
	}
	code := q.Get("code")
	if code == "" {
		return fail(k.ReturnPath, "code", errors.New("no code"))
	}
	err = k.Finish(ctx, c, code)
	switch ec := quarry.ErrorCode(err); {
	case err == nil:
	case ec == quarry.EINVALID:
		return fail(k.ReturnPath, "code", err)
	case slices.Contains(kind.goneAs, ec):
		return fail(k.ReturnPath, kind.gone, err)
	case ec == quarry.EFORBIDDEN, ec == quarry.EBADGATEWAY, ec == quarry.EGATEWAYTIMEOUT:
		return fail(k.ReturnPath, "unreachable", err)
	default:
		return err
	}
	return back(k.ReturnPath, "connected", strconv.FormatInt(k.ID, 10))
}

// oauthCallbackAnswer is Onyx's OAuthCallbackResponse.
type oauthCallbackAnswer struct {
	RedirectURL string  `json:"redirect_url"`
	Error       *string `json:"error"`
}

// handleOAuthCallback serves POST /oauth-config/callback?code=&state=, as
// Onyx's pages call it: it does what the callback page does, and answers
// where to send the browser, with an error sentence when the connection
// failed (as Onyx, with status 200).
func (s *Server) handleOAuthCallback(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in oauthCallbackQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	w.Header().Set("Cache-Control", "no-store")
	answer := func(returnPath string, err error) error {
		out := oauthCallbackAnswer{RedirectURL: returnPath}
		if err != nil {
			msg := quarry.ErrorMessage(err)
			out.Error = &msg
			s.log.LogAttrs(ctx, slog.LevelWarn, "OAuth connection failed", slog.String("request_id", quarry.RequestIDFrom(ctx)),
				slog.String("error", err.Error()))
		}
		return writeJSON(w, http.StatusOK, out)
	}
	k, err := s.db.TakeOAuthConnection(ctx, in.State)
	if err != nil {
		if quarry.ErrorCode(err) != quarry.EINVALID {
			return err
		}
		return answer("/", err)
	}
	if err := c.CheckCallbackCaller(k); err != nil {
		return answer(k.ReturnPath, err)
	}
	err = s.out.FinishToolConnection(ctx, c, k, in.Code)
	switch quarry.ErrorCode(err) {
	case "", quarry.EINVALID, quarry.ENOTFOUND, quarry.EFORBIDDEN, quarry.EBADGATEWAY, quarry.EGATEWAYTIMEOUT:
		return answer(k.ReturnPath, err)
	}
	return err
}

// messageAnswer is the {"message"} answer of Onyx's token routes.
type messageAnswer struct {
	Message string `json:"message"`
}

// handleRevokeOAuthToken serves DELETE /oauth-config/{oauth_config_id}/token:
// the caller disconnects their account (Quarry forgets the token).
func (s *Server) handleRevokeOAuthToken(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in revokeOAuthTokenRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteOAuthToken(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, messageAnswer{"OAuth token revoked successfully"})
}

// handleOAuthTokenStatus serves GET /user-oauth-token/status: the caller's
// OAuth connections.
func (s *Server) handleOAuthTokenStatus(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	out, err := s.db.OAuthTokenStatuses(r.Context(), c.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, out)
}
