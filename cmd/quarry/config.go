package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/auth"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/toolrun"
)

// Config is the configuration of every command, from flags, environment
// variables and defaults, in that order of precedence.
type Config struct {
	DatabaseURL       string
	Addr              string
	BasePath          string
	EncryptionKey     string   // Base64 of 32 bytes; environment only, never a flag.
	OldEncryptionKeys []string // Keys still accepted for reading during a rotation.
	MaskCredentials   bool
	MaxBodyBytes      int64
	// SearchCacheBytes bounds the search index's blocks kept in memory
	// (store.Options.SearchCache; 0 keeps none).
	SearchCacheBytes  int64
	FileLimits        quarry.FileLimits // Uploads for the file connector.
	LogLevel          slog.Level
	LogFormat         string
	ShutdownGrace     time.Duration
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	DBTimeout         time.Duration

	// Signing in.
	LocalAccounts        bool
	Registration         string
	EmailDomains         []string
	AdminEmails          []string
	PasswordMinLength    int
	RegistrationsPerAddr int
	SessionIdle          time.Duration
	InvitationTTL        time.Duration
	SessionMaxAge        time.Duration
	PublicURL            string
	ClientIPHeader       string
	OIDCIssuer           string
	OIDCClientID         string
	OIDCClientSecret     string // Environment only, never a flag.
	OIDCClientSecretFile string
	OIDCScopes           []string
	OIDCName             string
	OIDCAudience         string
	OIDCTokenClients     []string
	OIDCRoleClaim        string
	OIDCRoleMap          map[string]quarry.Role
	OIDCAlgorithms       []string
	OIDCSkew             time.Duration

	// Runs of custom tools: where they may connect, and their limits.
	// Connectors connect through the same guard.
	ToolEgress toolrun.Policy

	// ChatTestMode honours the chat's mock_llm_response (Onyx's
	// INTEGRATION_TESTS_MODE): for test deployments only.
	ChatTestMode bool

	// Indexing: the scheduler and the worker of quarry serve.
	Indexing         bool
	InProcessWorker  bool
	ScheduleInterval time.Duration
	// ConnectorEndpoints are the API bases of sources pointed elsewhere
	// (the worker of quarry serve and quarry worker).
	ConnectorEndpoints connector.Endpoints
	// PDFCacheDir keeps the PDF reader's module compiled to machine code
	// between starts ("" when it is compiled at every start).
	PDFCacheDir string

	// Workers (quarry worker; the concurrency and the poll interval are
	// also those of the worker in quarry serve).
	WorkerServer            string
	WorkerRegistrationToken string
	WorkerName              string
	WorkerTokenFile         string
	WorkerConcurrency       int
	WorkerPollInterval      time.Duration
}

// setting is one configuration value: its flag (empty for secrets, which
// must not show in process listings), its environment variable, its default
// and how it sets the Config.
type setting struct {
	flag, env, def, usage string
	set                   func(c *Config, v string) error
}

var settings = []setting{
	{"db", "QUARRY_DATABASE_URL", "sqlite:./data/quarry.db", "database: postgres://… or postgresql://… for PostgreSQL, sqlite:<path> or a file path for SQLite",
		func(c *Config, v string) error { c.DatabaseURL = v; return nil }},
	{"addr", "QUARRY_ADDR", "127.0.0.1:8080", "listen address",
		func(c *Config, v string) error { c.Addr = v; return nil }},
	{"base-path", "QUARRY_BASE_PATH", "", "also serve every route under this prefix, e.g. /api",
		func(c *Config, v string) error { c.BasePath = v; return nil }},
	{"", "QUARRY_ENCRYPTION_KEY", "", "base64 of 32 bytes that seals secrets at rest; with SQLite and none set, a key file is made beside the database",
		func(c *Config, v string) error { c.EncryptionKey = v; return nil }},
	{"", "QUARRY_OLD_ENCRYPTION_KEYS", "", "comma-separated keys still accepted for reading, while rotate-encryption-key runs",
		func(c *Config, v string) error { c.OldEncryptionKeys = splitList(v); return nil }},
	{"mask-credentials", "QUARRY_MASK_CREDENTIALS", "true", "mask credential values and tool header values in responses",
		func(c *Config, v string) (err error) { c.MaskCredentials, err = strconv.ParseBool(v); return err }},
	{"max-body-bytes", "QUARRY_MAX_BODY_BYTES", "1048576", "largest request body accepted (413 beyond)",
		func(c *Config, v string) (err error) { c.MaxBodyBytes, err = parsePositive(v); return err }},
	{"search-cache-bytes", "QUARRY_SEARCH_CACHE_BYTES", "268435456", "bytes of the search index's blocks kept in memory between searches (0 keeps none)",
		func(c *Config, v string) (err error) {
			c.SearchCacheBytes, err = strconv.ParseInt(v, 10, 64)
			if err == nil && c.SearchCacheBytes < 0 {
				err = errors.New("must not be negative")
			}
			return err
		}},
	{"file-max-upload-bytes", "QUARRY_FILE_MAX_UPLOAD_BYTES", "104857600", "largest upload of files for the file connector (413 beyond)",
		func(c *Config, v string) (err error) { c.FileLimits.MaxUploadBytes, err = parsePositive(v); return err }},
	{"file-max-files", "QUARRY_FILE_MAX_FILES", "10000", "most files one upload may keep, a zip's entries included (400 beyond)",
		func(c *Config, v string) error {
			n, err := parsePositive(v)
			c.FileLimits.MaxFiles = int(min(n, 1<<31-1))
			return err
		}},
	{"file-max-expanded-bytes", "QUARRY_FILE_MAX_EXPANDED_BYTES", "524288000", "most bytes one upload's files may take once a zip is inflated (400 beyond)",
		func(c *Config, v string) (err error) {
			c.FileLimits.MaxExpandedBytes, err = parsePositive(v)
			return err
		}},
	{"file-max-ratio", "QUARRY_FILE_MAX_RATIO", "200", "most times a zip entry over 1 MiB may inflate over its compressed size (400 beyond)",
		func(c *Config, v string) (err error) { c.FileLimits.MaxRatio, err = parsePositive(v); return err }},
	{"log-level", "QUARRY_LOG_LEVEL", "info", "debug, info, warn or error",
		func(c *Config, v string) error { return c.LogLevel.UnmarshalText([]byte(v)) }},
	{"log-format", "QUARRY_LOG_FORMAT", "json", "json or text",
		func(c *Config, v string) error {
			if v != "json" && v != "text" {
				return errors.New("want json or text")
			}
			c.LogFormat = v
			return nil
		}},
	{"shutdown-grace", "QUARRY_SHUTDOWN_GRACE", "15s", "how long SIGTERM waits for requests in flight",
		func(c *Config, v string) (err error) { c.ShutdownGrace, err = parseDuration(v); return err }},
	{"read-header-timeout", "QUARRY_READ_HEADER_TIMEOUT", "5s", "time allowed to read request headers",
		func(c *Config, v string) (err error) { c.ReadHeaderTimeout, err = parseDuration(v); return err }},
	{"read-timeout", "QUARRY_READ_TIMEOUT", "30s", "time allowed to read a whole request",
		func(c *Config, v string) (err error) { c.ReadTimeout, err = parseDuration(v); return err }},
	{"write-timeout", "QUARRY_WRITE_TIMEOUT", "60s", "time allowed to write a response",
		func(c *Config, v string) (err error) { c.WriteTimeout, err = parseDuration(v); return err }},
	{"idle-timeout", "QUARRY_IDLE_TIMEOUT", "120s", "how long an idle keep-alive connection stays open",
		func(c *Config, v string) (err error) { c.IdleTimeout, err = parseDuration(v); return err }},
	{"db-timeout", "QUARRY_DB_TIMEOUT", "10s", "longest a request waits on the database before 503",
		func(c *Config, v string) (err error) { c.DBTimeout, err = parseDuration(v); return err }},

	// Signing in.
	{"local-accounts", "QUARRY_LOCAL_ACCOUNTS", "true", "let people register and sign in with an email and a password",
		func(c *Config, v string) (err error) { c.LocalAccounts, err = strconv.ParseBool(v); return err }},
	{"registration", "QUARRY_REGISTRATION", "invite", "who may register once the first person has: open, invite or closed",
		func(c *Config, v string) error {
			if v != quarry.RegistrationOpen && v != quarry.RegistrationInvite && v != quarry.RegistrationClosed {
				return errors.New("want open, invite or closed")
			}
			c.Registration = v
			return nil
		}},
	{"email-domains", "QUARRY_EMAIL_DOMAINS", "", "comma-separated email domains people must have to register or sign on (all when empty)",
		func(c *Config, v string) error { c.EmailDomains = lowerList(v); return nil }},
	{"admin-emails", "QUARRY_ADMIN_EMAILS", "", "comma-separated emails of people who are admins when they first sign on (and at every sign-on when the provider decides roles), if the provider says the email is verified",
		func(c *Config, v string) error { c.AdminEmails = lowerList(v); return nil }},
	{"password-min-length", "QUARRY_PASSWORD_MIN_LENGTH", "12", "shortest password accepted (at least 8)",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err == nil && (n < 8 || n > 256) {
				err = errors.New("must be between 8 and 256")
			}
			c.PasswordMinLength = n
			return err
		}},
	{"registrations-per-address", "QUARRY_REGISTRATIONS_PER_ADDRESS", "20", "registrations allowed from one client address in 15 minutes (an IPv6 /64 counts as one address)",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err == nil && n < 1 {
				err = errors.New("must be at least 1")
			}
			c.RegistrationsPerAddr = n
			return err
		}},
	{"session-idle-timeout", "QUARRY_SESSION_IDLE_TIMEOUT", "12h", "a session unused this long ends",
		func(c *Config, v string) (err error) { c.SessionIdle, err = parsePositiveDuration(v); return err }},
	{"session-max-age", "QUARRY_SESSION_MAX_AGE", "168h", "a session ends this long after sign-in, used or not",
		func(c *Config, v string) (err error) { c.SessionMaxAge, err = parsePositiveDuration(v); return err }},
	{"invitation-ttl", "QUARRY_INVITATION_TTL", "168h", "how long the link of an invitation works",
		func(c *Config, v string) (err error) { c.InvitationTTL, err = parsePositiveDuration(v); return err }},
	{"public-url", "QUARRY_PUBLIC_URL", "", "the URL browsers reach Quarry at (with its base path), e.g. https://quarry.example.com; required for single sign-on",
		func(c *Config, v string) error { c.PublicURL = strings.TrimRight(v, "/"); return nil }},
	{"client-ip-header", "QUARRY_CLIENT_IP_HEADER", "", "header that holds the client's address behind a proxy (e.g. X-Forwarded-For: its last entry counts)",
		func(c *Config, v string) error { c.ClientIPHeader = v; return nil }},
	{"oidc-issuer", "QUARRY_OIDC_ISSUER", "", "issuer URL of the OpenID provider for single sign-on (off when empty)",
		func(c *Config, v string) error { c.OIDCIssuer = v; return nil }},
	{"oidc-client-id", "QUARRY_OIDC_CLIENT_ID", "", "Quarry's client id at the OpenID provider",
		func(c *Config, v string) error { c.OIDCClientID = v; return nil }},
	{"", "QUARRY_OIDC_CLIENT_SECRET", "", "Quarry's client secret at the OpenID provider (or use the file)",
		func(c *Config, v string) error { c.OIDCClientSecret = v; return nil }},
	{"oidc-client-secret-file", "QUARRY_OIDC_CLIENT_SECRET_FILE", "", "file holding Quarry's client secret at the OpenID provider",
		func(c *Config, v string) error { c.OIDCClientSecretFile = v; return nil }},
	{"oidc-scopes", "QUARRY_OIDC_SCOPES", "openid,email,profile", "comma-separated scopes asked of the provider (add the one that releases the role claim, e.g. groups)",
		func(c *Config, v string) error { c.OIDCScopes = splitList(v); return nil }},
	{"oidc-name", "QUARRY_OIDC_NAME", "", "the provider's name on the sign-in button, e.g. Okta",
		func(c *Config, v string) error { c.OIDCName = v; return nil }},
	{"oidc-audience", "QUARRY_OIDC_AUDIENCE", "", "audience of the provider's access tokens Quarry accepts as bearer tokens (default: the client id)",
		func(c *Config, v string) error { c.OIDCAudience = v; return nil }},
	{"oidc-token-clients", "QUARRY_OIDC_TOKEN_CLIENTS", "", "comma-separated client ids whose access tokens Quarry accepts (default: its own client id)",
		func(c *Config, v string) error { c.OIDCTokenClients = splitList(v); return nil }},
	{"oidc-role-claim", "QUARRY_OIDC_ROLE_CLAIM", "", "claim whose values decide roles at every sign-in, e.g. groups or realm_access.roles",
		func(c *Config, v string) error { c.OIDCRoleClaim = v; return nil }},
	{"oidc-role-map", "QUARRY_OIDC_ROLE_MAP", "", "comma-separated value=role pairs for the role claim, e.g. quarry-admins=admin,quarry-curators=global_curator",
		func(c *Config, v string) (err error) { c.OIDCRoleMap, err = parseRoleMap(v); return err }},
	{"oidc-algorithms", "QUARRY_OIDC_ALGORITHMS", strings.Join(auth.DefaultAlgorithms(), ","), "signing algorithms accepted on the provider's tokens",
		func(c *Config, v string) error {
			c.OIDCAlgorithms = splitList(v)
			for _, a := range c.OIDCAlgorithms {
				if !slices.Contains(auth.DefaultAlgorithms(), a) {
					return fmt.Errorf("%q is not one of %s", a, strings.Join(auth.DefaultAlgorithms(), ", "))
				}
			}
			return nil
		}},
	{"oidc-skew", "QUARRY_OIDC_SKEW", "30s", "clock difference tolerated on the expiry and not-before times of access tokens",
		func(c *Config, v string) (err error) { c.OIDCSkew, err = parseDuration(v); return err }},

	// Runs of custom tools (package toolrun).
	{"tool-egress-allow", "QUARRY_TOOL_EGRESS_ALLOW", "", "comma-separated networks (CIDR), addresses and host names (*.example.com for subdomains) that tool runs and connectors may call although they are internal (loopback, private, link-local...)",
		func(c *Config, v string) (err error) {
			c.ToolEgress.Allow, c.ToolEgress.AllowHosts, err = toolrun.ParseAllow(v)
			return err
		}},
	{"tool-connect-timeout", "QUARRY_TOOL_CONNECT_TIMEOUT", "5s", "time a tool run may take to connect to the tool's server (and for TLS)",
		func(c *Config, v string) (err error) {
			c.ToolEgress.ConnectTimeout, err = parsePositiveDuration(v)
			return err
		}},
	{"tool-timeout", "QUARRY_TOOL_TIMEOUT", "30s", "time a whole tool run may take: the call, its redirects and reading the answer",
		func(c *Config, v string) (err error) {
			c.ToolEgress.Timeout, err = parsePositiveDuration(v)
			return err
		}},
	{"tool-max-bytes", "QUARRY_TOOL_MAX_BYTES", "1048576", "largest answer of a tool's server kept; longer ones are cut (truncated)",
		func(c *Config, v string) (err error) { c.ToolEgress.MaxBytes, err = parsePositive(v); return err }},

	{"tool-max-runs-per-caller", "QUARRY_TOOL_MAX_RUNS_PER_CALLER", "8", "tool runs (and MCP tool calls) one caller may have in progress at once in this server; more answer 429",
		func(c *Config, v string) error { return parseCount(v, &c.ToolEgress.MaxRunsPerCaller) }},
	{"tool-max-runs-per-tool", "QUARRY_TOOL_MAX_RUNS_PER_TOOL", "64", "runs of one tool in progress at once in this server, everyone's together; more answer 429",
		func(c *Config, v string) error { return parseCount(v, &c.ToolEgress.MaxRunsPerTool) }},

	// The chat.
	{"chat-test-mode", "QUARRY_CHAT_TEST_MODE", "false", "for test deployments only: honour mock_llm_response in POST /chat/send-chat-message (Onyx's INTEGRATION_TESTS_MODE), answering with the request's text instead of the model's",
		func(c *Config, v string) (err error) { c.ChatTestMode, err = strconv.ParseBool(v); return err }},

	// Indexing (quarry serve) and workers (quarry worker).
	{"connector-endpoints", "QUARRY_CONNECTOR_ENDPOINTS", "", "comma-separated source=base_url pointing the API of a source whose host is fixed elsewhere (GitHub Enterprise Server, a regional endpoint), e.g. github=https://ghe.example.com/api/v3/; the egress guard still applies",
		func(c *Config, v string) (err error) {
			c.ConnectorEndpoints, err = connector.ParseEndpoints(v)
			return err
		}},
	{"pdf-cache-dir", "QUARRY_PDF_CACHE_DIR", "user-cache", "directory, this user's only, where the PDF reader (PDFium in WebAssembly) keeps its module compiled to machine code, so that a start reads its first PDF in seconds rather than the tens of seconds compiling takes; user-cache: quarry/pdfium in the user's cache directory ($XDG_CACHE_HOME or ~/.cache); off: compile at every start",
		func(c *Config, v string) error {
			switch v {
			case "off":
				c.PDFCacheDir = ""
			case "user-cache":
				dir, err := os.UserCacheDir()
				if err != nil {
					c.PDFCacheDir = "" // No cache directory (no $HOME): compiled at every start.
					return nil
				}
				c.PDFCacheDir = filepath.Join(dir, "quarry", "pdfium")
			default:
				if !filepath.IsAbs(v) {
					return errors.New("must be an absolute path, user-cache or off")
				}
				c.PDFCacheDir = v
			}
			return nil
		}},
	{"indexing", "QUARRY_INDEXING", "true", "run the indexing scheduler and a worker in this process (false: index attempts are neither made nor run here)",
		func(c *Config, v string) (err error) { c.Indexing, err = strconv.ParseBool(v); return err }},
	{"inprocess-worker", "QUARRY_INPROCESS_WORKER", "true", "with indexing on, also run a worker in this process (false: the scheduler runs here, and only quarry worker processes run attempts)",
		func(c *Config, v string) (err error) { c.InProcessWorker, err = strconv.ParseBool(v); return err }},
	{"schedule-interval", "QUARRY_SCHEDULE_INTERVAL", "5s", "how often the scheduler looks for pairs due for indexing and leases that expired",
		func(c *Config, v string) (err error) { c.ScheduleInterval, err = parsePositiveDuration(v); return err }},
	{"server", "QUARRY_WORKER_SERVER", "", "URL of the Quarry server the worker runs attempts for, with its base path, e.g. https://quarry.example.com/api",
		func(c *Config, v string) error { c.WorkerServer = strings.TrimRight(v, "/"); return nil }},
	{"registration-token", "QUARRY_WORKER_REGISTRATION_TOKEN", "", "registration token (qrr_...) an admin made, to register the worker (prefer the environment variable: flags show in process listings)",
		func(c *Config, v string) error { c.WorkerRegistrationToken = v; return nil }},
	{"name", "QUARRY_WORKER_NAME", "", "the worker's name, as admins see it (default: the host name)",
		func(c *Config, v string) error { c.WorkerName = v; return nil }},
	{"token-file", "QUARRY_WORKER_TOKEN_FILE", "", "file that keeps the worker's token (mode 0600) for the next start; without it the worker registers at every start",
		func(c *Config, v string) error { c.WorkerTokenFile = v; return nil }},
	{"concurrency", "QUARRY_WORKER_CONCURRENCY", "1", "index attempts a worker runs at once",
		func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err == nil && (n < 1 || n > quarry.MaxWorkerConcurrency) {
				err = fmt.Errorf("must be between 1 and %d", quarry.MaxWorkerConcurrency)
			}
			c.WorkerConcurrency = n
			return err
		}},
	{"poll-interval", "QUARRY_WORKER_POLL_INTERVAL", "2s", "how long an idle worker waits before it asks for an attempt again",
		func(c *Config, v string) (err error) {
			c.WorkerPollInterval, err = parsePositiveDuration(v)
			return err
		}},
}

// flagCommand returns the one command whose flags include flag, or "" when
// any command may take it: the worker's flags are not the server's.
func flagCommand(flag string) string {
	switch flag {
	case "server", "registration-token", "name", "token-file", "concurrency", "poll-interval":
		return "worker"
	case "indexing", "inprocess-worker", "schedule-interval":
		return "serve"
	}
	return ""
}

// parseCount sets *n to v, a positive count (at most a million).
func parseCount(v string, n *int) error {
	c, err := parsePositive(v)
	if err == nil && c > 1_000_000 {
		err = errors.New("must be at most 1000000")
	}
	*n = int(c)
	return err
}

// loadConfig parses args with the flags of the named settings (all when
// names is empty) and those extra defines, and resolves every setting.
func loadConfig(name string, args []string, env *environment, extra func(*flag.FlagSet), names ...string) (*Config, *flag.FlagSet, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if extra != nil {
		extra(fs)
	}
	values := map[string]*string{}
	for _, s := range settings {
		if s.flag == "" || (len(names) > 0 && !slices.Contains(names, s.flag)) || fs.Lookup(s.flag) != nil ||
			(flagCommand(s.flag) != "" && flagCommand(s.flag) != name) {
			continue // A secret, not asked for, defined by the command itself, or another command's.
		}
		values[s.flag] = fs.String(s.flag, "", fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def))
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	c := &Config{}
	for _, s := range settings {
		v, from := s.def, "default"
		if e := env.getenv(s.env); e != "" {
			v, from = e, s.env
		}
		if p := values[s.flag]; p != nil && given[s.flag] {
			v, from = *p, "-"+s.flag
		}
		if err := s.set(c, v); err != nil {
			return nil, nil, fmt.Errorf("%s: %q: %w", from, v, err)
		}
	}
	return c, fs, nil
}

// keyring returns the keyring that seals secrets. With SQLite and no key
// configured, the key is read from (or first written to) a file beside the
// database, readable by its owner only; PostgreSQL needs the key set.
func (c *Config) keyring(stderr func(string)) (*store.Keyring, error) {
	key := c.EncryptionKey
	if key == "" {
		dialect, path, err := store.ParseURL(c.DatabaseURL)
		if err != nil {
			return nil, err
		}
		if dialect == store.Postgres {
			return nil, errors.New("QUARRY_ENCRYPTION_KEY must be set when the database is PostgreSQL " +
				"(every replica needs the same key; make one with: openssl rand -base64 32)")
		}
		if key, err = keyFile(path+".key", stderr); err != nil {
			return nil, err
		}
	}
	primary, err := store.ParseKey(key)
	if err != nil {
		return nil, fmt.Errorf("QUARRY_ENCRYPTION_KEY: %w", err)
	}
	var older [][]byte
	for _, k := range c.OldEncryptionKeys {
		b, err := store.ParseKey(k)
		if err != nil {
			return nil, fmt.Errorf("QUARRY_OLD_ENCRYPTION_KEYS: %w", err)
		}
		older = append(older, b)
	}
	return store.NewKeyring(primary, older...)
}

// keyFile reads the key kept at path, making a new one if there is none.
func keyFile(path string, stderr func(string)) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading encryption key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating database directory: %w", err)
	}
	key := store.NewKey()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) { // Another process made it first.
		return keyFile(path, stderr)
	}
	if err != nil {
		return "", fmt.Errorf("writing encryption key: %w", err)
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("writing encryption key: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("writing encryption key: %w", err)
	}
	stderr(fmt.Sprintf("Generated an encryption key for secrets at rest in %s (mode 0600). Back it up with the database: without it, stored secrets cannot be read.", path))
	return key, nil
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = errors.New("must not be negative")
	}
	return d, err
}

func parsePositiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d <= 0 {
		err = errors.New("must be positive")
	}
	return d, err
}

// lowerList is splitList with each entry lower-cased (emails, domains).
func lowerList(v string) []string {
	out := splitList(v)
	for i := range out {
		out[i] = strings.ToLower(out[i])
	}
	return out
}

// parseRoleMap reads value=role pairs.
func parseRoleMap(v string) (map[string]quarry.Role, error) {
	m := map[string]quarry.Role{}
	for _, pair := range splitList(v) {
		value, role, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(value) == "" || !quarry.Role(strings.TrimSpace(role)).Valid() {
			return nil, fmt.Errorf("%q is not value=role with a role of %s", pair, strings.Join(quarry.Role("").EnumValues(), ", "))
		}
		m[strings.TrimSpace(value)] = quarry.Role(strings.TrimSpace(role))
	}
	return m, nil
}

// signIn returns the sign-in configuration of the server, with the OpenID
// provider (discovered in the background until ctx ends) when one is set
// up.
func (c *Config) signIn(ctx context.Context, log *slog.Logger) (api.SignInConfig, error) {
	si := api.SignInConfig{
		LocalAccounts:     c.LocalAccounts,
		Registration:      quarry.RegistrationPolicy{Mode: c.Registration, Domains: c.EmailDomains},
		PasswordMinLength: c.PasswordMinLength,
		Sessions:          quarry.SessionPolicy{Idle: c.SessionIdle, Absolute: c.SessionMaxAge},
		InvitationTTL:     c.InvitationTTL,
		ClientIPHeader:    c.ClientIPHeader,
		OIDCName:          c.OIDCName,
		Limits:            quarry.DefaultSignInLimits(),
	}
	si.Limits.Registrations = c.RegistrationsPerAddr
	if c.SessionIdle > c.SessionMaxAge {
		return si, errors.New("QUARRY_SESSION_IDLE_TIMEOUT is longer than QUARRY_SESSION_MAX_AGE")
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return si, fmt.Errorf("QUARRY_PUBLIC_URL: %q is not an http(s) URL like https://quarry.example.com", c.PublicURL)
		}
		si.PublicURL = u
	}
	if c.OIDCIssuer == "" {
		return si, nil
	}
	secret := c.OIDCClientSecret
	if c.OIDCClientSecretFile != "" {
		b, err := os.ReadFile(c.OIDCClientSecretFile)
		if err != nil {
			return si, fmt.Errorf("QUARRY_OIDC_CLIENT_SECRET_FILE: %w", err)
		}
		secret = strings.TrimSpace(string(b))
	}
	switch {
	case c.OIDCClientID == "":
		return si, errors.New("single sign-on needs QUARRY_OIDC_CLIENT_ID")
	case secret == "":
		return si, errors.New("single sign-on needs QUARRY_OIDC_CLIENT_SECRET or QUARRY_OIDC_CLIENT_SECRET_FILE")
	case si.PublicURL == nil:
		return si, errors.New("single sign-on needs QUARRY_PUBLIC_URL, for the redirect URI registered at the provider")
	case c.OIDCRoleClaim != "" && len(c.OIDCRoleMap) == 0:
		return si, errors.New("QUARRY_OIDC_ROLE_CLAIM needs QUARRY_OIDC_ROLE_MAP")
	}
	si.OIDC = auth.NewProvider(ctx, auth.OIDCConfig{
		Issuer:       c.OIDCIssuer,
		ClientID:     c.OIDCClientID,
		ClientSecret: secret,
		RedirectURL:  c.PublicURL + "/auth/oidc/callback",
		Scopes:       c.OIDCScopes,
		Audience:     c.OIDCAudience,
		TokenClients: c.OIDCTokenClients,
		Domains:      c.EmailDomains,
		Algorithms:   c.OIDCAlgorithms,
		Skew:         c.OIDCSkew,
		Roles:        quarry.RolePolicy{AdminEmails: c.AdminEmails, Claim: c.OIDCRoleClaim, Map: c.OIDCRoleMap},
	}, log)
	return si, nil
}

func parsePositive(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err == nil && n <= 0 {
		err = errors.New("must be positive")
	}
	return n, err
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// pdfReader returns the process's PDF reader, which keeps its compiled
// module in dir (see the setting pdf-cache-dir), made with mode 0700 if
// missing. A directory others may write to is not used (what it holds is
// run as machine code), nor one that cannot be made: the module is then
// compiled at every start.
func pdfReader(dir string, log *slog.Logger) *connector.PDFReader {
	if dir == "" {
		return connector.NewPDFReader("")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		log.Warn("the PDF reader's cache directory cannot be made; its module is compiled at every start", "dir", dir, "err", err)
		return connector.NewPDFReader("")
	}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		log.Warn("the PDF reader's cache directory is not a directory only this user may write to; it is not used", "dir", dir)
		return connector.NewPDFReader("")
	}
	return connector.NewPDFReader(dir)
}
