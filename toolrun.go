package quarry

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Running custom tools: who may run one, how a run authenticates at the
// tool's server, and what a run leaves in the audit log. Package toolrun
// makes the HTTP call; package store keeps the tokens.

// ToolRun is a request to run one operation of a custom tool.
type ToolRun struct {
	Method string         // A method name POST /admin/tool/custom/validate lists: the sanitized operationId.
	Args   map[string]any // Parameter values by name, and the JSON body as "requestBody".
}

// RequestBodyArg is the argument that holds an operation's JSON request
// body, as Onyx names it for its language models.
const RequestBodyArg = "requestBody"

// ToolAuth says what a run of a tool sends to authenticate at the tool's
// server, beyond its custom headers.
type ToolAuth int

const (
	// ToolAuthHeaders sends the tool's custom headers only.
	ToolAuthHeaders ToolAuth = iota
	// ToolAuthOAuth sends the caller's own token for the tool's OAuth
	// configuration, as "Authorization: Bearer".
	ToolAuthOAuth
	// ToolAuthPassthrough sends the caller's own single sign-on access
	// token, as "Authorization: Bearer".
	ToolAuthPassthrough
)

// RunAuth returns how runs of t authenticate. An OAuth configuration wins
// over passthrough, as in Onyx (a tool may have both: nothing forbids it).
func (t *Tool) RunAuth() ToolAuth {
	switch {
	case t.OAuthConfigID != nil:
		return ToolAuthOAuth
	case t.PassthroughAuth:
		return ToolAuthPassthrough
	}
	return ToolAuthHeaders
}

// CheckToolRun reports why c may not run t, if it may not. Everyone with
// basic access or more may run every custom tool they can see (and they
// see them all, as GET /tool shows); limited callers may not (403).
// Built-in tools are run by the assistant's own code (400), and a disabled
// tool is not run (409), so that disabling a tool stops it at once.
func (c *Caller) CheckToolRun(t *Tool) error {
	switch {
	case c.Role == RoleLimited:
		return ErrLimited
	case t.IsBuiltIn():
		return Errorf(EINVALID, "Built-in tools cannot be run through this endpoint.")
	case !t.Enabled:
		return Errorf(ECONFLICT, "Tool %d is disabled; an admin or its owner can enable it with PATCH /admin/tool/status", t.ID)
	}
	return nil
}

// ErrNoPassthroughToken answers a run of a passthrough tool by a caller
// who brings no single sign-on access token: an API key, a local account,
// or a session whose token is gone (it expired and could not be
// refreshed). The call is never made without it.
var ErrNoPassthroughToken = Errorf(ECONFLICT,
	"This tool sends your own single sign-on access token to its server, and you have none here: "+
		"sign in with single sign-on (API keys and local accounts have no such token), then run it again")

// ConnectFirst answers a run of a tool whose OAuth configuration (id,
// named name) the caller has no usable token for: it says what to do.
func ConnectFirst(id int64, name string) *Error {
	return Errorf(ECONFLICT,
		"Connect your %s account first: this tool calls its server with your own OAuth token, and you have none. "+
			"Start with POST /oauth-config/initiate {\"oauth_config_id\": %d} and open the authorization_url it answers.",
		name, id)
}

// ToolRunResult is what a run of a tool got back from the tool's server.
type ToolRunResult struct {
	Status      int               // The server's HTTP status.
	ContentType string            // Its Content-Type, or "".
	Headers     map[string]string // The answer's headers that are on the allow-list (see toolrun.AnswerHeaders).
	// Body is the answer's body rendered as JSON: the value itself when the
	// answer is JSON, a string otherwise (base64 when it is not UTF-8 text;
	// see BodyEncoding).
	Body         []byte
	BodyEncoding string // "json", "text" or "base64".
	Truncated    bool   // The answer was longer than the size cap and was cut.
	Duration     time.Duration
}

// Outcomes of a run, as the metrics and the audit log count them.
const (
	RunOK          = "ok"           // The server answered with a status below 400.
	RunUpstream4xx = "upstream_4xx" // The server answered 4xx.
	RunUpstream5xx = "upstream_5xx" // The server answered 5xx.
	RunRefused     = "refused"      // The egress guard refused the address.
	RunTimeout     = "timeout"      // The server did not answer in time.
	RunUnreachable = "unreachable"  // No connection could be made, or it broke.
	RunInvalid     = "invalid"      // The arguments did not fit the operation (no call was made).
	RunNoToken     = "no_token"     // The caller has no token to send (no call was made).
	RunDisabled    = "disabled"     // The tool is disabled (no call was made).
	RunToolError   = "tool_error"   // An MCP server's tool answered a result marked isError.
	RunLimited     = "limited"      // Refused: the caller or the tool had too many runs in progress (429).
	RunError       = "error"        // Anything else.
)

// RunOutcomes lists every outcome, for the metrics.
func RunOutcomes() []string {
	return []string{RunOK, RunUpstream4xx, RunUpstream5xx, RunRefused, RunTimeout, RunUnreachable, RunInvalid, RunNoToken, RunDisabled, RunToolError, RunLimited, RunError}
}

// RunOutcome returns the outcome of a run that answered status (0 when no
// answer came) or failed with err.
func RunOutcome(status int, err error) string {
	if err == nil {
		switch {
		case status >= 500:
			return RunUpstream5xx
		case status >= 400:
			return RunUpstream4xx
		}
		return RunOK
	}
	switch ErrorCode(err) {
	case EINVALID, ENOTFOUND:
		return RunInvalid
	case EFORBIDDEN:
		return RunRefused
	case EGATEWAYTIMEOUT:
		return RunTimeout
	case EBADGATEWAY:
		return RunUnreachable
	case ECONFLICT:
		return RunNoToken
	}
	return RunError
}

// ToolRunRecord is the audit entry of one run: who ran what, against which
// host, and how it went. It never holds arguments, header values or
// tokens, nor anything of the answer but its status.
type ToolRunRecord struct {
	ToolID   int64
	Method   string
	Host     string // The host the call was made to (or would have been), without port; "" if none was known.
	Status   int    // The server's status; 0 when it did not answer.
	Outcome  string // One of the Run* outcomes.
	Duration time.Duration
}

// Details returns the audit entry's details.
func (r *ToolRunRecord) Details() map[string]any {
	d := map[string]any{"method": r.Method, "host": r.Host, "outcome": r.Outcome,
		"duration_ms": float64(r.Duration.Microseconds()) / 1000}
	if r.Status != 0 {
		d["status"] = r.Status
	} else {
		d["status"] = nil
	}
	return d
}

// CheckReturnPath reports whether p, where a person's browser goes after
// connecting an OAuth account, is a path of this site: it must start with
// one "/", and have no scheme, host, backslash or control character, so
// that the flow cannot send the browser elsewhere.
func CheckReturnPath(p string) error {
	bad := !utf8.ValidString(p) || !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") ||
		strings.ContainsAny(p, "\\") || len(p) > 1024 ||
		strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f })
	if !bad {
		u, err := url.Parse(p)
		bad = err != nil || u.Scheme != "" || u.Host != "" || u.User != nil
	}
	if bad {
		return Errorf(EINVALID, "return_path must be a path of this site, starting with a single /, such as \"/\" or \"/#tool/3\"")
	}
	return nil
}

// OAuthTokenStatus is what a person sees of one of their OAuth
// connections: Onyx's OAuthTokenStatus (GET /user-oauth-token/status),
// with the configuration's name.
type OAuthTokenStatus struct {
	OAuthConfigID   int64  `json:"oauth_config_id"`
	ExpiresAt       *int64 `json:"expires_at"` // Unix seconds; nil when the server said nothing.
	IsExpired       bool   `json:"is_expired"` // Expired, or expiring within RefreshMargin (a run refreshes it if it can).
	OAuthConfigName string `json:"oauth_config_name"`
}
