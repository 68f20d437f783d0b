package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
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
	LogLevel          slog.Level
	LogFormat         string
	ShutdownGrace     time.Duration
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	DBTimeout         time.Duration
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
		if s.flag == "" || (len(names) > 0 && !slices.Contains(names, s.flag)) || fs.Lookup(s.flag) != nil {
			continue // A secret, not asked for, or defined by the command itself.
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
