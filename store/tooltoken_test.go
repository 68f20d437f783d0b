package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// tokenClock is a clock tests move.
type tokenClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tokenClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *tokenClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// tokenFixture is a database with an admin, a person, and an OAuth
// configuration the person connected.
type tokenFixture struct {
	url    string
	keys   *store.Keyring
	clock  *tokenClock
	db     *store.DB
	admin  *quarry.Caller
	person *quarry.Caller
	cfg    *quarry.OAuthConfig
}

func newTokenFixture(t *testing.T) *tokenFixture {
	t.Helper()
	f := &tokenFixture{url: storetest.URL(t), keys: storetest.Key(t),
		clock: &tokenClock{now: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}}
	f.db = f.open(t)
	f.admin = adminOf(t, f.db)
	_, token, err := f.db.CreateAPIKey(ctx, nil, ptr("person"), quarry.RoleBasic)
	if err != nil {
		t.Fatal(err)
	}
	if f.person, err = f.db.Authenticate(ctx, quarry.HashAPIKey(token)); err != nil {
		t.Fatal(err)
	}
	f.cfg, err = f.db.CreateOAuthConfig(ctx, f.admin, quarry.OAuthConfig{Name: "acme", AuthorizationURL: "https://a.example.com/authorize",
		TokenURL: "https://a.example.com/token", ClientID: "client", ClientSecret: "client-secret"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// open opens another handle on the fixture's database, as a replica would,
// on the fixture's clock.
func (f *tokenFixture) open(t *testing.T) *store.DB {
	db := storetest.OpenURL(t, f.url, f.keys)
	db.Now = f.clock.Now
	return db
}

// connect gives the person a token that expires in lifetime.
func (f *tokenFixture) connect(t *testing.T, access, refresh string, lifetime time.Duration) {
	t.Helper()
	if err := f.db.SaveOAuthToken(ctx, f.person, f.cfg.ID, quarry.OAuthToken{AccessToken: access, RefreshToken: refresh,
		ExpiresIn: lifetime}); err != nil {
		t.Fatal(err)
	}
}

// refresher is a RefreshFunc that counts its calls and answers as told.
type refresher struct {
	calls atomic.Int64
	delay time.Duration
	next  func(n int64, old quarry.OAuthToken) (quarry.OAuthToken, error)
}

func (r *refresher) refresh(ctx context.Context, old quarry.OAuthToken) (quarry.OAuthToken, error) {
	n := r.calls.Add(1)
	time.Sleep(r.delay)
	return r.next(n, old)
}

func rotating(n int64, old quarry.OAuthToken) (quarry.OAuthToken, error) {
	return quarry.OAuthToken{AccessToken: fmt.Sprint("access-", n), RefreshToken: fmt.Sprint("refresh-", n), ExpiresIn: time.Hour}, nil
}

func TestToolTokens(t *testing.T) {
	f := newTokenFixture(t)
	r := &refresher{next: rotating}

	_, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
	if quarry.ErrorCode(err) != quarry.ECONFLICT || quarry.ErrorMessage(err) != quarry.ConnectFirst(f.cfg.ID, "acme").Message {
		t.Fatalf("no token: %v, want ConnectFirst", err)
	}
	f.connect(t, "access-0", "refresh-0", time.Hour)
	statuses, err := f.db.OAuthTokenStatuses(ctx, f.person.ID)
	exp := f.clock.Now().Add(time.Hour).Unix()
	if err != nil || !cmp.Equal(statuses, []quarry.OAuthTokenStatus{{OAuthConfigID: f.cfg.ID, OAuthConfigName: "acme", ExpiresAt: &exp}}) {
		t.Errorf("statuses %+v, %v", statuses, err)
	}
	if others, _ := f.db.OAuthTokenStatuses(ctx, f.admin.ID); len(others) != 0 {
		t.Errorf("the admin's statuses %+v", others)
	}

	tok, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
	if err != nil || tok.AccessToken != "access-0" || r.calls.Load() != 0 {
		t.Fatalf("fresh token: %+v, %v after %d refreshes", tok, err, r.calls.Load())
	}

	t.Run("refreshed when due", func(t *testing.T) {
		f.clock.advance(time.Hour - quarry.RefreshMargin)
		tok, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
		if err != nil || tok.AccessToken != "access-1" || tok.RefreshToken != "refresh-1" || r.calls.Load() != 1 {
			t.Fatalf("due token: %+v, %v after %d refreshes", tok, err, r.calls.Load())
		}
		if want := f.clock.Now().Add(time.Hour); !tok.Expiry.Equal(want) {
			t.Errorf("expiry %v, want %v", tok.Expiry, want)
		}
		tok, err = f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
		if err != nil || tok.AccessToken != "access-1" || r.calls.Load() != 1 {
			t.Errorf("after the refresh: %+v, %v after %d refreshes", tok, err, r.calls.Load())
		}
	})
	t.Run("a server that sends no new refresh token keeps the old", func(t *testing.T) {
		f.clock.advance(2 * time.Hour)
		keep := &refresher{next: func(int64, quarry.OAuthToken) (quarry.OAuthToken, error) {
			return quarry.OAuthToken{AccessToken: "access-kept"}, nil
		}}
		tok, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, keep.refresh)
		if err != nil || tok.AccessToken != "access-kept" || tok.RefreshToken != "refresh-1" || !tok.Expiry.IsZero() {
			t.Fatalf("%+v, %v", tok, err)
		}
	})
	t.Run("a failed refresh leaves the token for the next run", func(t *testing.T) {
		f.connect(t, "stale-access", "stale-refresh", time.Minute)
		down := &refresher{next: func(int64, quarry.OAuthToken) (quarry.OAuthToken, error) {
			return quarry.OAuthToken{}, quarry.Errorf(quarry.EBADGATEWAY, "the token endpoint is down")
		}}
		if _, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, down.refresh); quarry.ErrorCode(err) != quarry.EBADGATEWAY {
			t.Fatalf("err %v, want the refresh's", err)
		}
		tok, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
		if err != nil || tok.RefreshToken == "stale-refresh" {
			t.Fatalf("next run: %+v, %v; want a refreshed token (the lease released)", tok, err)
		}
	})
	t.Run("a revoked refresh token is forgotten", func(t *testing.T) {
		f.connect(t, "access-3", "refresh-3", time.Minute)
		revoked := &refresher{next: func(int64, quarry.OAuthToken) (quarry.OAuthToken, error) {
			return quarry.OAuthToken{}, fmt.Errorf("refresh: %w", quarry.ErrTokenRevoked)
		}}
		_, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, revoked.refresh)
		if quarry.ErrorCode(err) != quarry.ECONFLICT {
			t.Fatalf("err %v, want ConnectFirst", err)
		}
		if statuses, _ := f.db.OAuthTokenStatuses(ctx, f.person.ID); len(statuses) != 0 {
			t.Errorf("the revoked token is still kept: %+v", statuses)
		}
	})
	t.Run("an expired token without a refresh token", func(t *testing.T) {
		f.connect(t, "access-4", "", time.Minute)
		f.clock.advance(2 * time.Minute)
		if _, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, r.refresh); quarry.ErrorCode(err) != quarry.ECONFLICT {
			t.Fatalf("err %v, want ConnectFirst", err)
		}
		statuses, _ := f.db.OAuthTokenStatuses(ctx, f.person.ID)
		if len(statuses) != 1 || !statuses[0].IsExpired {
			t.Errorf("statuses %+v, want the token kept and expired", statuses)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		if err := f.db.DeleteOAuthToken(ctx, f.person, f.cfg.ID); err != nil {
			t.Fatal(err)
		}
		err := f.db.DeleteOAuthToken(ctx, f.person, f.cfg.ID)
		if want := fmt.Sprintf("OAuth token for user %s and config %d does not exist", f.person.ID, f.cfg.ID); quarry.ErrorMessage(err) != want {
			t.Errorf("second disconnect: %v", err)
		}
	})
}

// TestOneRefreshAtATime runs many runs at once, on two handles of the
// database (two replicas), with a token due for a refresh whose server
// rotates refresh tokens: exactly one refresh is made, and every run gets
// its token.
func TestOneRefreshAtATime(t *testing.T) {
	f := newTokenFixture(t)
	f.connect(t, "access-0", "refresh-0", time.Minute)
	replicas := []*store.DB{f.db, f.open(t)}
	r := &refresher{delay: 100 * time.Millisecond, next: func(n int64, old quarry.OAuthToken) (quarry.OAuthToken, error) {
		if old.RefreshToken != "refresh-0" {
			return quarry.OAuthToken{}, quarry.ErrTokenRevoked // a rotated refresh token used twice
		}
		return rotating(n, old)
	}}
	var wg sync.WaitGroup
	got := make([]string, 16)
	errs := make([]error, len(got))
	start := make(chan struct{})
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			tok, err := replicas[i%2].ToolToken(ctx, f.person.ID, f.cfg, r.refresh)
			errs[i] = err
			if err == nil {
				got[i] = tok.AccessToken
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, a := range got {
		if a != "access-1" {
			t.Errorf("run %d got %q, want access-1", i, a)
		}
	}
	if n := r.calls.Load(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
}

// TestTokensGo checks that tokens go with what they belong to: a person's
// tool tokens when they are deactivated, a configuration's when it is
// deleted or its token endpoint or client changes, a session's single
// sign-on tokens with the session.
func TestTokensGo(t *testing.T) {
	f := newTokenFixture(t)
	has := func() bool {
		t.Helper()
		s, err := f.db.OAuthTokenStatuses(ctx, f.person.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(s) > 0
	}
	f.connect(t, "a", "r", time.Hour)
	if err := f.db.SetActive(ctx, f.admin, f.person.Email, false); err != nil {
		t.Fatal(err)
	}
	if has() {
		t.Error("a deactivated person's token is kept")
	}
	if err := f.db.SetActive(ctx, f.admin, f.person.Email, true); err != nil {
		t.Fatal(err)
	}

	f.connect(t, "a", "r", time.Hour)
	for _, tt := range []struct {
		name  string
		u     quarry.OAuthConfigUpdate
		keeps bool
	}{
		{"name", quarry.OAuthConfigUpdate{Name: ptr("acme 2")}, true},
		{"scopes and secret", quarry.OAuthConfigUpdate{Scopes: &[]string{"read"}, ClientSecret: ptr("s2")}, true},
		{"authorization URL", quarry.OAuthConfigUpdate{AuthorizationURL: ptr("https://a.example.com/authorize2")}, true},
		{"token URL", quarry.OAuthConfigUpdate{TokenURL: ptr("https://b.example.com/token")}, false},
		{"client id", quarry.OAuthConfigUpdate{ClientID: ptr("client-2")}, false},
		{"client id cleared", quarry.OAuthConfigUpdate{ClearClientID: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f.connect(t, "a", "r", time.Hour)
			if _, err := f.db.UpdateOAuthConfig(ctx, f.admin, f.cfg.ID, tt.u); err != nil {
				t.Fatal(err)
			}
			if has() != tt.keeps {
				t.Errorf("token kept: %t, want %t", has(), tt.keeps)
			}
		})
	}

	f.connect(t, "a", "r", time.Hour)
	if err := f.db.DeleteOAuthConfig(ctx, f.admin, f.cfg.ID); err != nil {
		t.Fatal(err)
	}
	if s, _ := f.db.OAuthTokenStatuses(ctx, f.person.ID); len(s) != 0 {
		t.Errorf("statuses after the config went: %+v", s)
	}

	token, _, err := f.db.SignInOIDC(ctx, &quarry.Identity{Issuer: "https://idp.example.com", Subject: "s", Email: "p@example.com", Role: quarry.RoleBasic},
		quarry.NewSession{Method: quarry.SignInOIDC, SSOToken: &quarry.OAuthToken{AccessToken: "sso-a", RefreshToken: "sso-r"}}, testSessions)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.db.SessionCaller(ctx, quarry.HashToken(token), testSessions)
	if err != nil {
		t.Fatal(err)
	}
	noRefresh := func(context.Context, quarry.OAuthToken) (quarry.OAuthToken, error) {
		return quarry.OAuthToken{}, errors.New("no")
	}
	if tok, err := f.db.SessionToken(ctx, c.SessionID, noRefresh); err != nil || tok.AccessToken != "sso-a" {
		t.Fatalf("session token %+v, %v", tok, err)
	}
	if _, err := f.db.CloseSession(ctx, c, c.SessionID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.SessionToken(ctx, c.SessionID, noRefresh); !errors.Is(err, quarry.ErrNoPassthroughToken) {
		t.Errorf("after sign-out: %v, want ErrNoPassthroughToken", err)
	}
}

// TestOAuthConnections checks the states of connections in progress: good
// once, for five minutes, for a configuration that exists.
func TestOAuthConnections(t *testing.T) {
	f := newTokenFixture(t)
	if err := f.db.BeginOAuthConnection(ctx, f.person, "s0", &quarry.OAuthConnection{OAuthConfigID: 9999}); quarry.ErrorCode(err) != quarry.ENOTFOUND {
		t.Errorf("unknown config: %v", err)
	}
	want := &quarry.OAuthConnection{UserID: f.person.ID, OAuthConfigID: f.cfg.ID, Verifier: "v1",
		RedirectURI: "https://quarry.example.com/oauth-config/callback", ReturnPath: "/#tools"}
	if err := f.db.BeginOAuthConnection(ctx, f.person, "s1", want); err != nil {
		t.Fatal(err)
	}
	k, err := f.db.TakeOAuthConnection(ctx, "s1")
	if err != nil || !cmp.Equal(k, want) {
		t.Errorf("connection %+v, %v", k, err)
	}
	if _, err := f.db.TakeOAuthConnection(ctx, "s1"); quarry.ErrorCode(err) != quarry.EINVALID {
		t.Errorf("second take: %v", err)
	}
	if err := f.db.BeginOAuthConnection(ctx, f.person, "s2", &quarry.OAuthConnection{OAuthConfigID: f.cfg.ID, Verifier: "v2", ReturnPath: "/"}); err != nil {
		t.Fatal(err)
	}
	f.clock.advance(quarry.OAuthConnectionTTL)
	if _, err := f.db.TakeOAuthConnection(ctx, "s2"); quarry.ErrorCode(err) != quarry.EINVALID {
		t.Errorf("expired: %v", err)
	}
}

// TestRefreshLease checks the lease step by step: while one replica
// refreshes a token, another that needs it waits for the new token instead
// of refreshing it too.
func TestRefreshLease(t *testing.T) {
	f := newTokenFixture(t)
	f.connect(t, "access-0", "refresh-0", time.Minute)
	other := f.open(t)
	inside, release := make(chan struct{}), make(chan struct{})
	first := func(ctx context.Context, old quarry.OAuthToken) (quarry.OAuthToken, error) {
		close(inside)
		<-release
		return rotating(1, old)
	}
	done := make(chan error, 1)
	go func() {
		tok, err := f.db.ToolToken(ctx, f.person.ID, f.cfg, first)
		if err == nil && tok.AccessToken != "access-1" {
			err = fmt.Errorf("first got %q", tok.AccessToken)
		}
		done <- err
	}()
	<-inside // The first replica holds the lease and is at the token endpoint.
	second := make(chan *quarry.OAuthToken, 1)
	go func() {
		tok, err := other.ToolToken(ctx, f.person.ID, f.cfg, func(context.Context, quarry.OAuthToken) (quarry.OAuthToken, error) {
			t.Error("the second replica refreshed the token too")
			return quarry.OAuthToken{}, errors.New("no")
		})
		if err != nil {
			t.Error(err)
		}
		second <- tok
	}()
	select {
	case tok := <-second:
		t.Fatalf("the second replica did not wait for the refresh: %+v", tok)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if tok := <-second; tok == nil || tok.AccessToken != "access-1" {
		t.Errorf("the second replica got %+v, want the refreshed token", tok)
	}
}

// TestRecordToolRunsAtOnce records runs from many goroutines on two handles
// (their entries are written together): each is in the audit log once,
// with its own details.
func TestRecordToolRunsAtOnce(t *testing.T) {
	f := newTokenFixture(t)
	dbs := []*store.DB{f.db, f.open(t)}
	var wg sync.WaitGroup
	errs := make([]error, 60)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = dbs[i%2].RecordToolRun(ctx, f.person, &quarry.ToolRunRecord{ToolID: int64(1000 + i), Method: fmt.Sprint("m", i),
				Host: "api.example.com", Status: 200, Outcome: quarry.RunOK, Duration: time.Duration(i) * time.Millisecond})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	events, total, err := f.db.AuditEvents(ctx, quarry.AuditFilter{Action: ptr("tool.run"), Limit: 1000})
	if err != nil || total != 60 {
		t.Fatalf("%d entries, %v", total, err)
	}
	seen := map[string]bool{}
	for _, e := range events {
		var d struct {
			Method     string  `json:"method"`
			DurationMS float64 `json:"duration_ms"`
		}
		if err := json.Unmarshal(e.Details, &d); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(1000 + int(d.DurationMS))
		if e.ResourceID != want || d.Method != fmt.Sprint("m", int(d.DurationMS)) || e.ActorID == nil || *e.ActorID != f.person.ID || seen[e.ResourceID] {
			t.Errorf("entry %+v %s", e, e.Details)
		}
		seen[e.ResourceID] = true
	}
}
