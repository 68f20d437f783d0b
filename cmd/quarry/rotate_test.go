package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// rotateRun runs the command line args with the environment vars and
// returns its standard output and error.
func rotateRun(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), args, func(k string) string { return vars[k] }, &out, &errb)
	return out.String(), errb.String(), err
}

func openWithKeys(t *testing.T, url string, primary string, older ...string) *store.DB {
	t.Helper()
	p, err := store.ParseKey(primary)
	if err != nil {
		t.Fatal(err)
	}
	var o [][]byte
	for _, k := range older {
		b, err := store.ParseKey(k)
		if err != nil {
			t.Fatal(err)
		}
		o = append(o, b)
	}
	kr, err := store.NewKeyring(p, o...)
	if err != nil {
		t.Fatal(err)
	}
	return storetest.OpenURL(t, url, kr)
}

// TestRotateEncryptionKeyCommand follows the runbook's steps
// (docs/operations.md): on SQLite the first key is the generated key file;
// on PostgreSQL, an environment variable.
func TestRotateEncryptionKeyCommand(t *testing.T) {
	url := storetest.URL(t)
	dialect, path, _ := store.ParseURL(url)
	vars := map[string]string{"QUARRY_DATABASE_URL": url}
	if dialect == store.Postgres {
		vars["QUARRY_ENCRYPTION_KEY"] = store.NewKey()
	}
	out, _, err := rotateRun(t, vars, "create-api-key", "-role", "admin")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	oldKey := vars["QUARRY_ENCRYPTION_KEY"]
	if dialect == store.SQLite {
		b, err := os.ReadFile(path + ".key")
		if err != nil {
			t.Fatalf("no generated key file: %v", err)
		}
		oldKey = strings.TrimSpace(string(b))
	}

	db := openWithKeys(t, url, oldKey)
	admin, err := db.Authenticate(context.Background(), quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		if _, err := db.CreateCredential(context.Background(), admin, quarry.CredentialInput{Source: "confluence",
			CredentialJSON: map[string]any{"token": strings.Repeat("s", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := db.Credentials(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}

	newKey := store.NewKey()
	t.Run("without the old key", func(t *testing.T) {
		_, _, err := rotateRun(t, map[string]string{"QUARRY_DATABASE_URL": url, "QUARRY_ENCRYPTION_KEY": newKey}, "rotate-encryption-key")
		if err == nil || !strings.Contains(err.Error(), "25 secrets (25 credentials) cannot be opened") ||
			!strings.Contains(err.Error(), "QUARRY_OLD_ENCRYPTION_KEYS") {
			t.Errorf("err = %v; want it to name the 25 secrets it cannot open", err)
		}
	})

	rotate := map[string]string{"QUARRY_DATABASE_URL": url, "QUARRY_ENCRYPTION_KEY": newKey, "QUARRY_OLD_ENCRYPTION_KEYS": oldKey}
	out, _, err = rotateRun(t, rotate, "rotate-encryption-key", "-batch", "10", "-progress-every", "0s")
	if err != nil {
		t.Fatalf("rotate-encryption-key: %v\n%s", err, out)
	}
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"Re-encrypting 25 secrets (25 credentials) under key ",
		"10/25 secrets (40%)", "20/25 secrets (80%)", "25/25 secrets (100%)",
		"re-encrypted 25 secrets (25 credentials) under key ",
		"Next: remove QUARRY_OLD_ENCRYPTION_KEYS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q", want)
		}
	}
	if dialect == store.SQLite && !strings.Contains(out, "The key file "+path+".key still holds the old key") {
		t.Error("output does not tell to update the key file")
	}

	// The last step: the new key replaces the old one.
	final := map[string]string{"QUARRY_DATABASE_URL": url, "QUARRY_ENCRYPTION_KEY": newKey}
	if dialect == store.SQLite {
		if err := os.WriteFile(path+".key", []byte(newKey+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		delete(final, "QUARRY_ENCRYPTION_KEY")
	}
	out, _, err = rotateRun(t, final, "rotate-encryption-key")
	if err != nil || !strings.Contains(out, "nothing to do") {
		t.Errorf("second run: %v\n%s", err, out)
	}
	after, err := openWithKeys(t, url, newKey).Credentials(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("credentials changed (-before +after):\n%s", diff)
	}
}

// TestMeterOnTerminal: on a terminal the meter rewrites one line in place,
// holds the updates that come too soon, and completes the line it held
// when the run finishes.
func TestMeterOnTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newMeter(&b, 0)
	p.out.Terminal, p.every = true, time.Hour
	p.last = time.Time{}
	p.update(progress.Count{Done: 10, Total: 30}) // printed: the first
	p.update(progress.Count{Done: 20, Total: 30}) // held: too soon
	if got := b.String(); !strings.HasPrefix(got, "\r10/30 secrets (33%)") || strings.Contains(got, "20/30") || strings.Contains(got, "\n") {
		t.Errorf("after two updates: %q", got)
	}
	p.finish()
	got := b.String()
	if !strings.Contains(got, "\r20/30 secrets (66%)") || !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("after finish: %q", got)
	}
}
