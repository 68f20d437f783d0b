package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound"
	"github.com/quarryhq/quarry/toolrun"
)

// runWorker runs index attempts for the server at --server until SIGTERM
// or SIGINT (ending those it holds as interrupted). It registers with the
// registration token, unless --token-file holds the token of an earlier
// start, and keeps its token in memory (and in that file, if given). A
// worker the server revoked exits with an error.
func runWorker(ctx context.Context, env *environment, args []string) error {
	cfg, _, err := loadConfig("worker", args, env, nil, "server", "registration-token", "name", "token-file", "concurrency",
		"poll-interval", "tool-egress-allow", "tool-connect-timeout", "log-level", "log-format")
	if err != nil {
		return err
	}
	log := newLogger(cfg, env.stderr)
	if cfg.WorkerServer == "" {
		return errors.New("quarry worker needs the URL of a Quarry server: --server or QUARRY_WORKER_SERVER (with its base path, e.g. https://quarry.example.com/api)")
	}
	if u, err := url.Parse(cfg.WorkerServer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("QUARRY_WORKER_SERVER: %q is not an http(s) URL like https://quarry.example.com/api", cfg.WorkerServer)
	}
	name := cfg.WorkerName
	if name == "" {
		if name, err = os.Hostname(); err != nil || name == "" {
			name = "worker"
		}
	}
	if err := quarry.CheckWorkerName(name); err != nil {
		return fmt.Errorf("QUARRY_WORKER_NAME: %w", err)
	}
	client := &http.Client{Timeout: quarry.LeaseTTL}
	token, err := workerToken(ctx, cfg, client, name, env)
	if err != nil {
		return err
	}
	pdf := pdfReader(cfg.PDFCacheDir, log)
	defer pdf.Close()
	egress := toolrun.NewRunner(cfg.ToolEgress)
	w := outbound.NewWorker(outbound.WorkerConfig{
		API:                outbound.NewWorkerAPI(client, cfg.WorkerServer, token),
		ConnectorHTTP:      egress.Client(),
		ConnectorDial:      egress.Dial,
		ConnectorEndpoints: cfg.ConnectorEndpoints,
		PDF:                pdf,
		Concurrency:        cfg.WorkerConcurrency,
		PollInterval:       cfg.WorkerPollInterval,
		Log:                log,
	})
	log.Info("worker running", "server", cfg.WorkerServer, "concurrency", cfg.WorkerConcurrency)
	err = w.Run(ctx)
	if errors.Is(err, outbound.ErrWorkerRevoked) {
		again := "register it again with a new registration token"
		if cfg.WorkerTokenFile != "" {
			again = "remove " + cfg.WorkerTokenFile + " and " + again
		}
		return fmt.Errorf("the server refused this worker's token: an admin revoked the worker; to run it again, %s", again)
	}
	if err != nil {
		return err
	}
	log.Info("worker stopped")
	return nil
}

// workerToken returns the worker's token: the one kept in the token file,
// or a new one from registering with the registration token (then kept in
// the token file, if there is one).
func workerToken(ctx context.Context, cfg *Config, client *http.Client, name string, env *environment) (string, error) {
	if cfg.WorkerTokenFile != "" {
		b, err := os.ReadFile(cfg.WorkerTokenFile)
		switch {
		case err == nil:
			token := strings.TrimSpace(string(b))
			if !quarry.ValidWorkerTokenFormat(token) {
				return "", fmt.Errorf("%s does not hold a worker token (qrw_...): remove it to register again", cfg.WorkerTokenFile)
			}
			return token, nil
		case !errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("reading the worker's token: %w", err)
		}
	}
	if cfg.WorkerRegistrationToken == "" {
		return "", errors.New("quarry worker needs a registration token to register: QUARRY_WORKER_REGISTRATION_TOKEN or --registration-token " +
			"(an admin makes one in the admin page, under Workers)")
	}
	if !quarry.ValidWorkerRegistrationFormat(cfg.WorkerRegistrationToken) {
		return "", errors.New("QUARRY_WORKER_REGISTRATION_TOKEN is not a registration token (qrr_...)")
	}
	token, id, err := outbound.RegisterWorker(ctx, client, cfg.WorkerServer, cfg.WorkerRegistrationToken, name)
	if errors.Is(err, outbound.ErrWorkerRevoked) {
		return "", errors.New("the server refused the registration token: it is unknown, expired or revoked; ask an admin for a new one")
	}
	if err != nil {
		return "", err
	}
	fmt.Fprintf(env.stderr, "Registered as worker %d (%s).\n", id, name)
	if cfg.WorkerTokenFile != "" {
		if err := writeTokenFile(cfg.WorkerTokenFile, token); err != nil {
			return "", err
		}
	}
	return token, nil
}

// writeTokenFile writes token to path, readable by its owner only.
func writeTokenFile(path, token string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("writing the worker's token: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing the worker's token: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the worker's token: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the worker's token: %w", err)
	}
	return nil
}
