package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/store/storetest"
)

// fuzzServer is a server set up for single sign-on at a real provider, for
// the fuzz targets (which have no *testing.T to build an env with).
type fuzzServer struct {
	url string
	op  *authtest.Provider
	c   *http.Client
}

func newFuzzServer(f *testing.F) *fuzzServer {
	op := authtest.Start(f)
	op.AddUser(authtest.User{Subject: "u-fuzz", Email: "fuzz@example.com", EmailVerified: true, Password: "pw"})
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	op.AddClient(authtest.Client{ID: ssoClient, Secret: ssoSecret, RedirectURIs: []string{base + "/auth/oidc/callback"}})
	p := auth.NewProvider(f.Context(), auth.OIDCConfig{Issuer: op.Issuer, ClientID: ssoClient, ClientSecret: ssoSecret,
		RedirectURL: base + "/auth/oidc/callback", Scopes: []string{"email"}, KeyRefresh: time.Second}, slog.New(slog.DiscardHandler))
	select {
	case <-p.Ready():
	case <-time.After(time.Minute):
		f.Fatalf("the provider was not discovered: %v", p.Err())
	}
	db := storetest.OpenURL(f, storetest.URL(f), storetest.Key(f))
	public, _ := url.Parse(base)
	srv.Config.Handler = api.NewServer(api.Config{SignIn: api.SignInConfig{OIDC: p, PublicURL: public}}, db, slog.New(slog.DiscardHandler))
	srv.Start()
	f.Cleanup(srv.Close)
	return &fuzzServer{url: base, op: op, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// get sends a GET with the given headers and returns the status, the
// Location and the body.
func (s *fuzzServer) get(t *testing.T, target string, headers ...string) (int, string, string) {
	req, err := http.NewRequest("GET", target, nil)
	if err != nil {
		t.Skip() // not a URL a client could send
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

// FuzzSignInCallback sends the callback of single sign-on whatever state,
// code, error and state cookie: it never fails with a 500 or panics, and it
// only ever sends the browser back to the admin page (signed in, or with a
// reason), never elsewhere.
func FuzzSignInCallback(f *testing.F) {
	s := newFuzzServer(f)
	cb, err := s.op.Authorize(nil, s.url+"/auth/oidc/login", "u-fuzz", "pw")
	if err != nil {
		f.Fatal(err)
	}
	state, code := cb.Query().Get("state"), cb.Query().Get("code")
	f.Add(state, code, "", state)
	f.Add(state, code, "", "")
	f.Add(state, "", "access_denied", state)
	f.Add("", code, "", "")
	f.Add("s", "c", "server_error", "s")
	f.Add(strings.Repeat("a", 5000), "\x00", "\n", "é")
	f.Fuzz(func(t *testing.T, state, code, errParam, cookie string) {
		q := url.Values{}
		for k, v := range map[string]string{"state": state, "code": code, "error": errParam} {
			if v != "" {
				q.Set(k, v)
			}
		}
		var headers []string
		if c := (&http.Cookie{Name: "quarry_oidc_state", Value: cookie}); cookie != "" && c.Valid() == nil {
			headers = []string{"Cookie", c.String()}
		}
		status, loc, body := s.get(t, s.url+"/auth/oidc/callback?"+q.Encode(), headers...)
		if status != http.StatusSeeOther || (loc != s.url+"/" && !strings.HasPrefix(loc, s.url+"/?signin_error=")) {
			t.Fatalf("callback answered %d, Location %q: %s", status, loc, body)
		}
	})
}

// FuzzAccessToken sends any bearer token: the answer is 200 or the 401 of
// a bad token, never a 500 or a panic.
func FuzzAccessToken(f *testing.F) {
	s := newFuzzServer(f)
	good := s.op.AccessToken(f, ssoClient, ssoSecret, "u-fuzz", "pw")
	parts := strings.Split(good, ".")
	f.Add(good)
	f.Add(parts[0] + "." + parts[1] + ".")
	f.Add(parts[0] + ".e30." + parts[2])
	f.Add("eyJhbGciOiJub25lIn0." + parts[1] + ".")
	f.Add("eyJhbGciOiJSUzI1NiIsImtpZCI6Im5vcGUifQ." + parts[1] + "." + parts[2])
	f.Add("..")
	f.Add("qrs_" + strings.Repeat("A", 43))
	f.Add("qry_" + strings.Repeat("A", 43))
	f.Fuzz(func(t *testing.T, token string) {
		if strings.ContainsFunc(token, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			t.Skip() // not a header value a client can send
		}
		status, _, body := s.get(t, s.url+"/me", "Authorization", "Bearer "+token)
		if status != http.StatusOK && !(status == http.StatusUnauthorized && body == `{"detail":"Not authenticated"}`) {
			t.Fatalf("token %q: %d %s", token, status, body)
		}
	})
}
