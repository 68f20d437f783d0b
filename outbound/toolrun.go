package outbound

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/toolrun"
)

// RunRequest is one run of a tool: the method ("" for none given) and the
// arguments, a JSON object; Authorization is the request's Authorization
// header (a passthrough tool may send the provider's token it holds).
type RunRequest struct {
	Method        string
	Args          json.RawMessage
	Authorization string
}

// RunTool runs tool id for c, for POST /tool/{tool_id}/run and for the
// tools/call of Quarry's MCP endpoint alike: one path, so that the same
// checks, credentials, egress guard and audit entries hold whichever way
// a tool is called. It returns the run's record (nil when the tool does
// not exist), which the caller counts, even when the run failed.
// Checks, in order, for a custom tool: the tool exists (404); the caller
// may run it (403 limited, 400 built-in, 409 disabled); its definition
// still passes validation (409); the method and arguments fit the
// definition (400); the egress guard lets the URL through (403); the
// caller has the token the tool sends (409); then the call (502, 504).
// For a tool of an MCP server: the tool and its server may be used (409
// disabled), the method is the tool's own and the arguments fit its input
// schema (400), the egress guard (403), the credentials (409), then the
// call. Every run of an existing tool, refused or not, is an audit entry.
func (s *Service) RunTool(ctx context.Context, c *quarry.Caller, id int64, in RunRequest) (*quarry.ToolRunResult, *quarry.ToolRunRecord, error) {
	start := s.now()
	dctx, cancel := s.dbContext(ctx)
	t, err := s.db.Tool(dctx, id)
	cancel()
	if err != nil {
		return nil, nil, err
	}
	// The caps of runs in progress (per caller, per tool): 429, counted,
	// not audited.
	release, err := s.runner.Admit(c.ID, t.ID)
	if err != nil {
		return nil, &quarry.ToolRunRecord{ToolID: t.ID, Method: in.Method, Outcome: quarry.RunLimited, Duration: s.now().Sub(start)}, err
	}
	defer release()
	rec := &quarry.ToolRunRecord{ToolID: t.ID, Method: in.Method}
	var (
		res     *quarry.ToolRunResult
		outcome string
	)
	if t.MCPServerID != nil {
		res, outcome, err = s.runMCPTool(ctx, c, t, in, rec)
	} else {
		res, outcome, err = s.runTool(ctx, c, t, in, rec)
	}
	rec.Duration = s.now().Sub(start)
	if res != nil {
		rec.Status = res.Status
	}
	rec.Outcome = outcome
	if rec.Outcome == "" {
		rec.Outcome = quarry.RunOutcome(rec.Status, err)
	}
	if err != nil && rec.Outcome != quarry.RunInvalid && rec.Outcome != quarry.RunDisabled {
		s.log.LogAttrs(ctx, slog.LevelWarn, "tool run failed", slog.String("request_id", quarry.RequestIDFrom(ctx)),
			slog.Int64("tool_id", t.ID), slog.String("method", rec.Method), slog.String("host", rec.Host),
			slog.String("outcome", rec.Outcome), slog.String("error", quarry.ErrorMessage(err)))
	}
	// The run is recorded even when its caller has gone.
	actx, acancel := s.dbContext(context.WithoutCancel(ctx))
	defer acancel()
	if aerr := s.db.RecordToolRun(actx, c, rec); aerr != nil {
		return nil, rec, aerr
	}
	if err != nil {
		return nil, rec, err
	}
	return res, rec, nil
}

// runTool does the work of RunTool for a custom tool, noting in rec the
// host it calls. It returns the outcome of a run it refused before
// calling (see quarry.RunOutcomes), or "" to let the answer or the call's
// error decide.
func (s *Service) runTool(ctx context.Context, c *quarry.Caller, t *quarry.Tool, in RunRequest, rec *quarry.ToolRunRecord) (*quarry.ToolRunResult, string, error) {
	if t.Definition != nil {
		if d, err := s.runner.Definition(ctx, t.Definition); err == nil {
			rec.Host = d.Host()
		}
	}
	if err := c.CheckToolRun(t); err != nil {
		return nil, refusedOutcome(err), err
	}
	if _, err := s.defs.Validate(ctx, t.Definition); err != nil {
		if quarry.ErrorCode(err) == quarry.EINVALID {
			return nil, quarry.RunInvalid, quarry.Errorf(quarry.ECONFLICT,
				"Tool %d's definition does not pass validation any more (%s); fix it with PUT /admin/tool/custom/%d",
				t.ID, quarry.ErrorMessage(err), t.ID)
		}
		return nil, quarry.RunError, err
	}
	if in.Method == "" {
		d, err := s.runner.Definition(ctx, t.Definition)
		if err != nil {
			return nil, quarry.RunInvalid, err
		}
		return nil, quarry.RunInvalid, quarry.Errorf(quarry.EINVALID, "method is required: this tool's methods are %s", strings.Join(d.Methods(), ", "))
	}
	args, err := toolrun.DecodeArgs(in.Args)
	if err != nil {
		return nil, quarry.RunInvalid, err
	}
	call, err := s.runner.Prepare(ctx, t.Definition, in.Method, args)
	switch quarry.ErrorCode(err) {
	case "":
	case quarry.EFORBIDDEN:
		return nil, quarry.RunRefused, err
	case quarry.EINVALID:
		return nil, quarry.RunInvalid, err
	default:
		return nil, quarry.RunError, err
	}
	bearer, err := s.runBearer(ctx, c, in.Authorization, t)
	if quarry.ErrorCode(err) == quarry.ECONFLICT {
		return nil, quarry.RunNoToken, err
	}
	if err != nil {
		return nil, "", err
	}
	res, err := s.runner.Do(ctx, call, t.Headers, bearer)
	return res, "", err
}

// refusedOutcome is the outcome of a run the rules refused: a tool (or
// server) that is disabled, or any other refusal.
func refusedOutcome(err error) string {
	if quarry.ErrorCode(err) == quarry.ECONFLICT {
		return quarry.RunDisabled
	}
	return quarry.RunInvalid
}

// runBearer returns the token a run of t sends as "Authorization: Bearer",
// or "" for none (quarry.Tool.RunAuth): the caller's token for the tool's
// OAuth configuration, refreshed if due; or, for passthrough, the
// caller's own single sign-on access token (passthroughToken).
func (s *Service) runBearer(ctx context.Context, c *quarry.Caller, authz string, t *quarry.Tool) (string, error) {
	switch t.RunAuth() {
	case quarry.ToolAuthOAuth:
		dctx, cancel := s.dbContext(ctx)
		cfg, err := s.db.OAuthConfig(dctx, *t.OAuthConfigID)
		cancel()
		if err != nil {
			return "", err
		}
		tok, err := s.db.ToolToken(ctx, c.ID, cfg, func(ctx context.Context, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
			return s.refreshToolToken(ctx, cfg, tok)
		})
		if err != nil {
			return "", err
		}
		return tok.AccessToken, nil
	case quarry.ToolAuthPassthrough:
		return s.passthroughToken(ctx, c, authz)
	}
	return "", nil
}

// passthroughToken returns the caller's own single sign-on access token:
// the one kept with the session the request came with (refreshed if due),
// or the provider's access token the request was authenticated with (authz
// is the request's Authorization header). API keys, local accounts and
// personal access tokens have none (409).
func (s *Service) passthroughToken(ctx context.Context, c *quarry.Caller, authz string) (string, error) {
	p := s.oidc
	switch {
	case p == nil:
		return "", quarry.ErrNoPassthroughToken
	case c.SessionID != 0:
		tok, err := s.db.SessionToken(ctx, c.SessionID, p.Refresh)
		if err != nil {
			return "", err
		}
		return tok.AccessToken, nil
	case c.APIKeyID == 0:
		if jwt, ok := providerToken(authz); ok {
			return jwt, nil
		}
	}
	return "", quarry.ErrNoPassthroughToken
}

// providerToken returns the bearer token of an Authorization header when
// it is a JWT: for a caller authenticated neither by an API key nor by a
// session, the provider's access token it was authenticated with.
func providerToken(authz string) (string, bool) {
	scheme, token, ok := strings.Cut(authz, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || !auth.LooksLikeJWT(token) {
		return "", false
	}
	return token, true
}

// refreshToolToken refreshes a person's token for cfg at its token
// endpoint, through the egress guard.
func (s *Service) refreshToolToken(ctx context.Context, cfg *quarry.OAuthConfig, tok quarry.OAuthToken) (quarry.OAuthToken, error) {
	rctx, cancel := s.callContext(ctx)
	defer cancel()
	next, err := auth.ToolRefresh(rctx, s.runner.Client(), cfg, tok)
	return next, s.runner.Explain(ctx, hostOf(cfg.TokenURL), err)
}

// hostOf returns the host of a URL, for messages.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the token endpoint"
	}
	return u.Hostname()
}
