package authtest

import (
	"errors"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

const (
	loginPath     = "/login"      // the login UI that op sends the user to
	loggedOutPath = "/logged-out" // where end_session goes with no post_logout_redirect_uri
)

// ErrLoginFailed is returned (wrapped) by Authorize when the provider's login
// form refuses the username and password.
var ErrLoginFailed = errors.New("authtest: login refused")

// loginPage is the provider's login form. Authorize reads it back, so keep
// the form's action, its hidden inputs and the error paragraph as they are.
var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in to authtest</title></head>
<body>
<h1>Sign in</h1>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>
{{end}}<form method="post" action="{{.Action}}">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<p><label>Username <input name="username" value="{{.Username}}" autocomplete="username" required></label></p>
<p><label>Password <input name="password" type="password" autocomplete="current-password"></label></p>
<p><button type="submit" name="action" value="login">Sign in</button>
<button type="submit" name="action" value="deny" formnovalidate>Deny</button></p>
</form>
</body>
</html>
`))

type loginData struct {
	Action, ID, Username, Error string
}

// login serves the login UI. GET shows the form for an auth request; POST
// with action=login checks the password and, when it matches, completes the
// request and sends the browser to op's callback, which redirects to the
// client with a code; a wrong password shows the form again (status 200)
// with an error. POST with action=deny ends the request with
// error=access_denied at the client's redirect URI.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := r.Form.Get("authRequestID")
	switch r.Method {
	case http.MethodGet:
		a, err := p.store.AuthRequestByID(r.Context(), id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p.showLogin(w, loginData{ID: id, Username: a.(*authRequest).req.LoginHint})
	case http.MethodPost:
		if r.PostForm.Get("action") == "deny" {
			a, err := p.store.deny(id)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			op.AuthRequestError(w, r, a, oidc.ErrAccessDenied().WithDescription("The user denied the request."), p.op)
			return
		}
		username := r.PostForm.Get("username")
		ok, err := p.store.signIn(id, username, r.PostForm.Get("password"))
		switch {
		case err != nil:
			http.Error(w, err.Error(), http.StatusBadRequest)
		case !ok:
			p.showLogin(w, loginData{ID: id, Username: username, Error: "Invalid username or password."})
		default:
			http.Redirect(w, r, op.AuthCallbackURL(p.op)(r.Context(), id), http.StatusFound)
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (p *Provider) showLogin(w http.ResponseWriter, d loginData) {
	d.Action = loginPath
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	loginPage.Execute(w, d)
}

// loggedOut is where the end-session endpoint sends the browser when the
// request names no post_logout_redirect_uri.
func loggedOut(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "Signed out.\n")
}

// Authorize signs username in through the provider's real login UI, as a
// browser would. Starting from start (typically the relying party's own
// login URL, which redirects to the provider's authorization endpoint, or an
// authorization URL of the provider itself), it follows redirects with c,
// whose cookie jar keeps the relying party's cookies (a nil c gets a fresh
// jar); fills in the provider's login form with username (a user's Subject
// or Email) and password and submits it with "Sign in"; and follows
// redirects until the next URL is outside the provider. It returns that URL
// without requesting it, so that a test can request it with c, replay it or
// tamper with it: normally the relying party's redirect URI with code and
// state, or with error, error_description and state when the provider ends
// the request with an error (prompt=none gives error=login_required).
//
// When the form refuses the password, the error wraps ErrLoginFailed. Any
// answer other than a redirect or the login form (an error page of the
// relying party, or the provider's 400 for an unregistered redirect_uri) is
// an error that quotes the status and the start of the body.
func (p *Provider) Authorize(c *http.Client, start, username, password string) (*url.URL, error) {
	return p.drive(c, start, url.Values{"action": {"login"}, "username": {username}, "password": {password}})
}

// Deny is Authorize with the user pressing "Deny" on the login form: the
// returned URL is the relying party's redirect URI with
// error=access_denied, error_description and state.
func (p *Provider) Deny(c *http.Client, start string) (*url.URL, error) {
	return p.drive(c, start, url.Values{"action": {"deny"}})
}

var (
	formAction  = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	hiddenInput = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
	formError   = regexp.MustCompile(`<p id="error" role="alert">([^<]*)</p>`)
)

// drive runs the browser's side of the authorization: redirects, then the
// login form submitted once with fields, then redirects out of the provider.
func (p *Provider) drive(c *http.Client, start string, fields url.Values) (*url.URL, error) {
	if c == nil {
		jar, _ := cookiejar.New(nil)
		c = &http.Client{Jar: jar}
	}
	nc := *c
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	issuer, err := url.Parse(p.Issuer)
	if err != nil {
		return nil, err
	}
	atProvider := func(u *url.URL) bool { return u.Scheme == issuer.Scheme && u.Host == issuer.Host }

	req, err := http.NewRequest(http.MethodGet, start, nil)
	if err != nil {
		return nil, fmt.Errorf("authtest: %w", err)
	}
	visited, submitted := false, false
	for range 20 {
		visited = visited || atProvider(req.URL)
		resp, err := nc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("authtest: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("authtest: %s %s: %w", req.Method, req.URL, err)
		}

		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			next, err := resp.Location()
			if err != nil {
				return nil, fmt.Errorf("authtest: %s %s: %d with no usable Location: %w", req.Method, req.URL, resp.StatusCode, err)
			}
			if visited && !atProvider(next) {
				return next, nil
			}
			if req, err = http.NewRequest(http.MethodGet, next.String(), nil); err != nil {
				return nil, fmt.Errorf("authtest: %w", err)
			}
			continue
		}

		page := string(body)
		action := formAction.FindStringSubmatch(page)
		if resp.StatusCode != http.StatusOK || !atProvider(req.URL) || action == nil {
			return nil, fmt.Errorf("authtest: %s %s: %s: %.300s", req.Method, req.URL, resp.Status, page)
		}
		if submitted {
			msg := "the login form came back"
			if m := formError.FindStringSubmatch(page); m != nil {
				msg = html.UnescapeString(m[1])
			}
			return nil, fmt.Errorf("%w: %s", ErrLoginFailed, msg)
		}
		form := url.Values{}
		for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
			form.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
		}
		for k, v := range fields {
			form[k] = v
		}
		target, err := req.URL.Parse(html.UnescapeString(action[1]))
		if err != nil {
			return nil, fmt.Errorf("authtest: login form action: %w", err)
		}
		if req, err = http.NewRequest(http.MethodPost, target.String(), strings.NewReader(form.Encode())); err != nil {
			return nil, fmt.Errorf("authtest: %w", err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		submitted = true
	}
	return nil, fmt.Errorf("authtest: more than 20 steps from %s", start)
}
