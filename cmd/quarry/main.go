// Command quarry runs the Quarry control plane: the HTTP/JSON API and the
// admin page (quarry serve), workers that run index attempts on other
// machines (quarry worker), and the commands that look after its database
// (migrate, create-api-key, rotate-encryption-key, backup, restore, check),
// load it to measure it (bench) and report its version.
//
// It is the only package that reads flags and environment variables. Flags
// override environment variables, which override defaults; run
// "quarry help" for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "quarry:", err)
		os.Exit(1)
	}
}

// command is a subcommand: it parses its own flags from args.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *environment, args []string) error
}

// environment is what a command may use of the outside world.
type environment struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP API and the admin page", runServe},
		{"worker", "run index attempts for a Quarry server (--server URL), on this machine", runWorker},
		{"migrate", "bring the database schema up to date", runMigrate},
		{"create-api-key", "create an API key and print it on the last line", runCreateAPIKey},
		{"rotate-encryption-key", "re-encrypt every secret under QUARRY_ENCRYPTION_KEY", runRotateEncryptionKey},
		{"backup", "copy a SQLite database while it serves (PostgreSQL: says how to use pg_dump)", runBackup},
		{"restore", "put a SQLite backup in place of the database, after checking it", runRestore},
		{"check", "open every stored secret with the configured keys and count them, printing no value", runCheck},
		{"bench", "load a seeded in-process server (or a running one) and compare it with the HTTP floor", runBench},
		{"version", "print the version", runVersion},
	}
}

// run runs the subcommand named by args[0].
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	env := &environment{getenv: getenv, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return flag.ErrHelp
		}
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, env, args[1:])
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: quarry <command> [flags]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-22s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"quarry <command> -h\" for the flags of a command.")
}
