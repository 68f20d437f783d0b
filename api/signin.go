package api

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/store"
)

// Signing in: local accounts (register, log in), single sign-on at an
// OpenID provider (the code flow, run by the server for the browser), and
// the session cookie both ways in end with.

// sessionCookie is the name of the session cookie: Onyx's (FastAPI-Users'),
// so that Onyx's clients keep theirs.
const sessionCookie = "fastapiusersauth"

// stateCookie returns the name of the cookie that binds the sign-in at the
// provider with state to the browser that started it, so that nobody can
// finish it in another (login cross-site request forgery). Each sign-in
// has a cookie of its own, so that two started in two tabs both work.
func stateCookie(state string) string { return "quarry_oidc_" + quarry.HashToken(state)[:16] }

// publicFunc is a handler of a route that needs no caller.
type publicFunc func(w http.ResponseWriter, r *http.Request) error

// public adapts a handler of a public route as authed does, without the
// caller.
func (s *Server) public(h publicFunc) http.Handler { return s.publicFor(s.cfg.DBTimeout, h) }

// publicFor is public for a route whose requests may take up to d.
func (s *Server) publicFor(d time.Duration, h publicFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		r = r.WithContext(ctx)
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// errCrossOrigin answers a browser request from another site that would
// use the session cookie to change something.
var errCrossOrigin = quarry.Errorf(quarry.EFORBIDDEN, "Cross-origin request refused")

// checkOrigin refuses unsafe cross-origin browser requests.
func (s *Server) checkOrigin(r *http.Request) error {
	if s.csrf.Check(r) != nil {
		return errCrossOrigin
	}
	return nil
}

// errLocalOff answers the local-account routes when they are turned off.
var errLocalOff = quarry.Errorf(quarry.EFORBIDDEN, "Signing in with a password is turned off; use single sign-on")

// userRead is the answer to POST /auth/register: FastAPI-Users' UserRead,
// as Onyx sends it.
type userRead struct {
	ID          string      `json:"id"`
	Email       string      `json:"email"`
	IsActive    bool        `json:"is_active"`
	IsSuperuser bool        `json:"is_superuser"`
	IsVerified  bool        `json:"is_verified"`
	Role        quarry.Role `json:"role"`
}

// handleRegister serves POST /auth/register: a local account for an email
// and a password. Registrations are counted per address, and whether the
// email may register is known before the password is hashed.
func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.SignIn.LocalAccounts {
		return errLocalOff
	}
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	var in registerRoute
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	email, _, err := quarry.ParseEmail(in.Body.Email)
	if err != nil {
		return err
	}
	name := value(in.Body.Name)
	if err := quarry.CheckPersonName(name); err != nil {
		return err
	}
	if err := s.policy.Check(in.Body.Password, email); err != nil {
		return err
	}
	ctx := r.Context()
	lim := &s.cfg.SignIn.Limits
	counts, now, err := s.db.CountAttempts(ctx, lim.Window, quarry.RegistrationKey(s.clientIP(r)))
	if err != nil {
		return err
	}
	if err := lim.CheckRegistration(counts[0], now); err != nil {
		return err
	}
	token := in.Body.InvitationToken.Value
	if err := s.db.CheckRegistration(ctx, email, token, &s.cfg.SignIn.Registration); err != nil {
		return err
	}
	hash, err := s.passwords.Hash(ctx, in.Body.Password)
	if err != nil {
		return err
	}
	u, err := s.db.Register(ctx, email, name, hash, token, &s.cfg.SignIn.Registration)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, userRead{ID: u.ID, Email: u.Email, IsActive: u.IsActive, Role: u.Role})
}

// errBadCredentials is the one answer to a wrong email, a wrong password,
// and a deactivated account, so that none tells which it was.
var errBadCredentials = quarry.Errorf(quarry.EINVALID, "Wrong email or password")

// handleLogin serves POST /auth/login: a form with username (the email) and
// password, as FastAPI-Users takes it; a session cookie (and 204) if they
// are right. Attempts are counted per account and per address before the
// password is checked (a successful one is taken back); past their limits
// the answer is 429 until the window ends.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) error {
	if !s.cfg.SignIn.LocalAccounts {
		return errLocalOff
	}
	if err := s.checkOrigin(r); err != nil {
		return err
	}
	var in loginForm
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	key := quarry.EmailKey(in.Username)
	attempt, err := s.countSignIn(r, key)
	if err != nil {
		return err
	}
	id, hash, active, err := s.db.PasswordAccount(ctx, key)
	if err != nil {
		return err
	}
	ok, err := s.passwords.Check(ctx, hash, in.Password)
	if err != nil {
		return err
	}
	if !ok || !active {
		if err := s.db.RecordSignInFailure(ctx, id, in.Username, quarry.SignInPassword); err != nil {
			return err
		}
		return errBadCredentials
	}
	token, err := s.db.OpenSession(ctx, id, s.newSession(r, quarry.SignInPassword, ""), s.cfg.SignIn.Sessions, attempt)
	if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
		return errBadCredentials // deactivated meanwhile
	}
	if err != nil {
		return err
	}
	s.setSessionCookie(w, r, token)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// countSignIn counts an attempt to sign in to the account with email key
// key from r's address, before its password is checked, and refuses it
// past the limits (quarry.SignInLimits.CheckSignIn). It returns what a
// success does to the counts: the address starts again for the account,
// and the account and the address take the attempt back.
func (s *Server) countSignIn(r *http.Request, key string) (store.Attempt, error) {
	lim := &s.cfg.SignIn.Limits
	pair, account, address := quarry.AttemptKeys(key, s.clientIP(r))
	counts, now, err := s.db.CountAttempts(r.Context(), lim.Window, pair, account, address)
	if err != nil {
		return store.Attempt{}, err
	}
	if err := lim.CheckSignIn(counts[0], counts[1], counts[2], now); err != nil {
		return store.Attempt{}, err
	}
	return store.Attempt{Clear: []string{pair}, TakeBack: []string{account, address}}, nil
}

// newSession describes the session a sign-in opens; it replaces the one
// the browser's cookie holds, if any.
func (s *Server) newSession(r *http.Request, method, idToken string) quarry.NewSession {
	ns := quarry.NewSession{Method: method, IP: s.clientIP(r), UserAgent: r.UserAgent(), IDToken: idToken}
	if c, err := r.Cookie(sessionCookie); err == nil && quarry.ValidSessionTokenFormat(c.Value) {
		ns.Replaces = quarry.HashToken(c.Value)
	}
	return ns
}

// handleChangePassword serves POST /auth/change-password: the caller's own
// password, given the current one (an open browser is not proof enough).
// The caller's other sessions end.
func (s *Server) handleChangePassword(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if !s.cfg.SignIn.LocalAccounts {
		return errLocalOff
	}
	var in changePasswordRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ctx := r.Context()
	if c.ServiceAccount {
		return quarry.ErrKeyHasNoPassword
	}
	if _, err := s.countSignIn(r, quarry.EmailKey(c.Email)); err != nil {
		return err
	}
	hash, err := s.db.PasswordOf(ctx, c.ID)
	if err != nil {
		return err
	}
	if hash == "" {
		return quarry.ErrNoPassword
	}
	ok, err := s.passwords.Check(ctx, hash, in.Body.CurrentPassword)
	if err != nil {
		return err
	}
	if !ok {
		return quarry.ErrWrongPassword
	}
	if err := s.policy.Check(in.Body.NewPassword, c.Email); err != nil {
		return err
	}
	newHash, err := s.passwords.Hash(ctx, in.Body.NewPassword)
	if err != nil {
		return err
	}
	if err := s.db.ChangePassword(ctx, c, newHash); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// newPassword is the answer to POST /manage/admin/reset-password.
type newPassword struct {
	UserEmail   string `json:"user_email"`
	NewPassword string `json:"new_password"`
}

// handleResetPassword serves POST /manage/admin/reset-password: a new,
// random password for a person, shown once (to give them); their sessions
// end.
func (s *Server) handleResetPassword(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in resetPasswordRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	password := auth.RandomPassword()
	hash, err := s.passwords.Hash(r.Context(), password)
	if err != nil {
		return err
	}
	if err := s.db.ResetPassword(r.Context(), c, in.Body.UserEmail, hash); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, newPassword{UserEmail: in.Body.UserEmail, NewPassword: password})
}

// logoutAnswer is the answer to POST /auth/logout when the browser should
// go on to the provider, to end its session there too.
type logoutAnswer struct {
	RedirectURL string `json:"redirect_url"`
}

// handleLogout serves POST /auth/logout: the caller's session ends and the
// cookie goes. After a single sign-on, the answer (200) says where to send
// the browser so that the provider signs it out too; otherwise it is 204.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var idToken string
	if c.SessionID != 0 {
		var err error
		if idToken, err = s.db.CloseSession(r.Context(), c, c.SessionID); err != nil {
			return err
		}
	}
	s.clearCookie(w, r, sessionCookie)
	if p := s.cfg.SignIn.OIDC; p != nil && idToken != "" {
		if u := p.EndSessionURL(idToken, s.publicBase(r)+"/"); u != "" {
			return writeJSON(w, http.StatusOK, logoutAnswer{u})
		}
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// authType is the answer to GET /auth/type: how people sign in here, for
// the admin page's sign-in screen (Onyx's route, with Quarry's fields).
type authType struct {
	AuthType          string     `json:"auth_type"` // "oidc" or "basic", as Onyx names them
	RequiresVerify    bool       `json:"requires_verification"`
	AnonymousUsers    bool       `json:"anonymous_user_enabled"`
	PasswordMinLength int        `json:"password_min_length"`
	LocalAccounts     bool       `json:"local_accounts"`
	Registration      string     `json:"registration"`
	OIDC              *oidcLogin `json:"oidc"`
}

type oidcLogin struct {
	DisplayName string `json:"display_name"`
	LoginURL    string `json:"login_url"`
}

// handleAuthType serves GET /auth/type.
func (s *Server) handleAuthType(w http.ResponseWriter, r *http.Request) error {
	si := &s.cfg.SignIn
	out := authType{AuthType: "basic", PasswordMinLength: si.PasswordMinLength, LocalAccounts: si.LocalAccounts,
		Registration: si.Registration.Mode}
	if si.OIDC != nil {
		out.AuthType = "oidc"
		out.OIDC = &oidcLogin{DisplayName: si.OIDCName, LoginURL: s.publicBase(r) + "/auth/oidc/login"}
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusOK, out)
}

// errNoSSO answers the single sign-on routes when no provider is set up.
var errNoSSO = quarry.Errorf(quarry.ENOTFOUND, "Single sign-on is not set up")

// handleOIDCLogin serves GET /auth/oidc/login: it starts a sign-in at the
// provider (state, nonce and PKCE verifier kept in the database for the
// callback, the state also in a cookie) and sends the browser there.
// ?next= is where to go afterwards, a path of the admin page.
func (s *Server) handleOIDCLogin(w http.ResponseWriter, r *http.Request) error {
	p := s.cfg.SignIn.OIDC
	if p == nil {
		return errNoSSO
	}
	l := auth.NewLogin()
	target, err := p.AuthCodeURL(l)
	if err != nil {
		return err
	}
	if err := s.db.BeginOIDCLogin(r.Context(), l.State, l, safeNext(r.URL.Query().Get("next"))); err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie(l.State), Value: l.State, Path: s.cookiePath(r) + "/auth/oidc/",
		MaxAge: 600, HttpOnly: true, Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusFound)
	return nil
}

// safeNext returns next if it is a path of this site, and "/" otherwise, so
// that the sign-in cannot send the browser elsewhere.
func safeNext(next string) string {
	if !utf8.ValidString(next) || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") || len(next) > 1024 {
		return "/"
	}
	if u, err := url.Parse(next); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return next
}

// handleOIDCCallback serves GET /auth/oidc/callback, where the provider
// sends the browser back: the state must be the one this browser started
// with and still unused, the code is traded for the ID token (with the
// PKCE verifier), the ID token is checked (and its nonce), and the person
// gets a session. Whatever happens, the browser goes back to the admin
// page: signed in, or with ?signin_error=<code> saying why not (a code,
// not a message, so that nobody can make the page say what they like).
func (s *Server) handleOIDCCallback(w http.ResponseWriter, r *http.Request) error {
	p := s.cfg.SignIn.OIDC
	if p == nil {
		return errNoSSO
	}
	ctx, q := r.Context(), r.URL.Query()
	email := "" // of the person, once known
	fail := func(code string, cause error) error {
		s.log.LogAttrs(ctx, slog.LevelWarn, "single sign-on failed", slog.String("request_id", quarry.RequestIDFrom(ctx)),
			slog.String("reason", code), slog.String("error", cause.Error()))
		if err := s.db.RecordSignInFailure(ctx, "", email, quarry.SignInOIDC, code); err != nil {
			return err
		}
		http.Redirect(w, r, s.publicBase(r)+"/?signin_error="+code, http.StatusSeeOther)
		return nil
	}
	w.Header().Set("Cache-Control", "no-store")
	state := q.Get("state")
	if state == "" {
		return fail("state", errors.New("no state"))
	}
	name := stateCookie(state)
	s.clearCookie(w, r, name)
	bound, _ := r.Cookie(name)
	if bound == nil || !constantTimeEqual(bound.Value, state) {
		return fail("state", errors.New("the state is not this browser's"))
	}
	l := &auth.Login{State: state}
	next, err := s.db.TakeOIDCLogin(ctx, state, l)
	if quarry.ErrorCode(err) == quarry.EINVALID {
		return fail("state", err)
	}
	if err != nil {
		return err
	}
	if e := q.Get("error"); e != "" {
		return fail("provider", errors.New("the provider answered "+e+": "+q.Get("error_description")))
	}
	code := q.Get("code")
	if code == "" {
		return fail("code", errors.New("no code"))
	}
	id, tokens, err := p.Exchange(ctx, l, code)
	var se *auth.SignInError
	switch {
	case errors.As(err, &se):
		return fail(se.Code, err)
	case quarry.ErrorCode(err) == quarry.EUNAVAILABLE:
		return fail("unavailable", err)
	case err != nil:
		return err
	}
	email = id.Email
	ns := s.newSession(r, quarry.SignInOIDC, tokens.IDToken)
	ns.SSOToken = &tokens.Token // kept sealed for passthrough tools (api/toolrun.go)
	token, _, err := s.db.SignInOIDC(ctx, id, ns, s.cfg.SignIn.Sessions)
	switch {
	case errors.Is(err, quarry.ErrDeactivated):
		return fail("inactive", err)
	case quarry.ErrorCode(err) == quarry.EFORBIDDEN:
		return fail("email_taken", err)
	case quarry.ErrorCode(err) == quarry.EINVALID:
		return fail("email_refused", err) // a lookalike of another's email, or one that mixes scripts
	case err != nil:
		return err
	}
	s.setSessionCookie(w, r, token)
	http.Redirect(w, r, s.publicBase(r)+next, http.StatusSeeOther)
	return nil
}

// setSessionCookie sets the session cookie: HttpOnly, SameSite=Lax,
// Secure over https, kept by the browser for the session's absolute
// lifetime.
func (s *Server) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: s.cookiePath(r) + "/",
		MaxAge: int(s.cfg.SignIn.Sessions.Absolute / time.Second), HttpOnly: true, Secure: s.secureCookie(r),
		SameSite: http.SameSiteLaxMode})
}

// clearCookie tells the browser to forget a cookie.
func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request, name string) {
	path := s.cookiePath(r) + "/"
	if name != sessionCookie {
		path += "auth/oidc/"
	}
	http.SetCookie(w, &http.Cookie{Name: name, Path: path, MaxAge: -1, HttpOnly: true,
		Secure: s.secureCookie(r), SameSite: http.SameSiteLaxMode})
}

// cookiePath is the path of the site's cookies, without its trailing
// slash: the public URL's path, or else the base path the request came
// through.
func (s *Server) cookiePath(r *http.Request) string {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return strings.TrimRight(u.Path, "/")
	}
	if viaBasePath(r) {
		return s.cfg.BasePath
	}
	return ""
}

// publicBase is the URL (or, without a public URL, the path) of the site's
// root, without a trailing slash.
func (s *Server) publicBase(r *http.Request) string {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return strings.TrimRight(u.String(), "/")
	}
	return s.cookiePath(r)
}

// secureCookie says whether cookies are Secure: when the public URL is
// https, or the request came over TLS.
func (s *Server) secureCookie(r *http.Request) bool {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return u.Scheme == "https"
	}
	return r.TLS != nil || forwardedHTTPS(r)
}

// forwardedHTTPS reports whether a proxy in front says the browser's
// request came over https (X-Forwarded-Proto, or RFC 7239's Forwarded
// proto). It need not be trusted: it can only make cookies Secure, which a
// client that sends it without a proxy only does to its own.
func forwardedHTTPS(r *http.Request) bool {
	for _, v := range r.Header.Values("X-Forwarded-Proto") {
		if first, _, _ := strings.Cut(v, ","); strings.EqualFold(strings.TrimSpace(first), "https") {
			return true
		}
	}
	for _, v := range r.Header.Values("Forwarded") {
		first, _, _ := strings.Cut(v, ",")
		for _, pair := range strings.Split(first, ";") {
			k, val, _ := strings.Cut(strings.TrimSpace(pair), "=")
			if strings.EqualFold(k, "proto") && strings.EqualFold(strings.Trim(val, `"`), "https") {
				return true
			}
		}
	}
	return false
}

// clientIP returns the address of the client: from the configured header
// (its last entry, the one the nearest proxy wrote), or the connection.
func (s *Server) clientIP(r *http.Request) string {
	if h := s.cfg.SignIn.ClientIPHeader; h != "" {
		if v := r.Header.Values(h); len(v) > 0 {
			parts := strings.Split(v[len(v)-1], ",")
			if ip := net.ParseIP(strings.TrimSpace(parts[len(parts)-1])); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
