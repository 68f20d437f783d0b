package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// backupSecret is the secret of the i-th credential the tests write.
func backupSecret(i int64) string { return fmt.Sprintf("backup-command-secret-%04d", i) }

// objectCount returns the number of objects of kind in the "Objects:" line
// of a check's output.
func objectCount(t *testing.T, out, kind string) int {
	t.Helper()
	m := regexp.MustCompile(`(\d+) ` + regexp.QuoteMeta(kind) + `\b`).FindStringSubmatch(out[strings.Index(out, "Objects:"):])
	if m == nil {
		t.Fatalf("no count of %s in:\n%s", kind, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// noSecrets fails if out holds a secret the test wrote or a key.
func noSecrets(t *testing.T, what, out string, written int64, keys ...string) {
	t.Helper()
	for i := int64(0); i < written; i++ {
		if strings.Contains(out, backupSecret(i)) {
			t.Errorf("%s prints the secret %q", what, backupSecret(i))
		}
	}
	for _, k := range keys {
		if k != "" && strings.Contains(out, k) {
			t.Errorf("%s prints an encryption key", what)
		}
	}
}

// TestBackupRestoreCheck backs up a SQLite database while a quarry serve
// process writes to it, restores the copy elsewhere and checks it: the copy
// holds every credential acknowledged before the backup began and none
// that was not yet written when it ended, each secret as written. Restoring
// over the database in use is refused, and a check with the wrong key
// reports every secret it cannot open, printing no value.
func TestBackupRestoreCheck(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "data", "quarry.db")
	vars := map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + dbPath}
	token := procAPIKey(t, vars)
	srv := startServe(t, vars)
	key, err := os.ReadFile(dbPath + ".key")
	if err != nil {
		t.Fatal(err)
	}

	var (
		acked   atomic.Int64 // Credentials created and acknowledged.
		stop    = make(chan struct{})
		stopped sync.WaitGroup
	)
	c := newProcClient(token)
	// write creates the next credential; it may run in another goroutine.
	write := func() bool {
		i := acked.Load()
		res, err := c.do(srv.base, "POST", "/manage/credential", map[string]any{"source": "confluence", "admin_public": true,
			"credential_json": map[string]any{"token": backupSecret(i)}})
		if err != nil || res.status != 200 || !strings.Contains(string(res.body), fmt.Sprintf(`"id":%d,`, i+1)) {
			t.Errorf("creating credential %d: %v %v", i+1, res, err)
			return false
		}
		acked.Add(1)
		return true
	}
	for range 50 {
		write()
	}
	stopped.Add(1)
	go func() {
		defer stopped.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if !write() {
					return
				}
			}
		}
	}()
	for acked.Load() < 60 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	backup := filepath.Join(dir, "backups", "quarry-1.db")
	before := acked.Load()
	out, _, err := rotateRun(t, vars, "backup", "-o", backup, "-with-key", "-progress-every", "0s")
	after := acked.Load() + 1 // One may be in flight.
	for acked.Load() < after+5 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	stopped.Wait()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	t.Logf("backup:\n%s", out)
	for _, want := range []string{"Copying " + dbPath + " to " + backup + " from one snapshot", "MiB (100%)", "Wrote " + backup,
		"Checked the copy: its pages are sound; ", "secrets open", "Wrote the encryption key (id "} {
		if !strings.Contains(out, want) {
			t.Errorf("backup output does not say %q", want)
		}
	}
	noSecrets(t, "backup", out, acked.Load(), strings.TrimSpace(string(key)))
	if b, err := os.ReadFile(backup + ".key"); err != nil || string(b) != string(key) {
		t.Errorf("the backup's key file: %v; equal to the database's: %v", err, string(b) == string(key))
	}
	for _, f := range []string{backup, backup + ".key"} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi, err)
		}
	}

	// Restore elsewhere, with the key beside the backup; then check.
	other := filepath.Join(dir, "elsewhere", "quarry.db")
	restoreVars := map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + other}
	out, _, err = rotateRun(t, restoreVars, "restore", "-from", backup)
	if err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	t.Logf("restore:\n%s", out)
	if !strings.Contains(out, "Restored "+backup+" to "+other) || !strings.Contains(out, "Put the backup's key in "+other+".key") {
		t.Errorf("restore output:\n%s", out)
	}
	out, _, err = rotateRun(t, restoreVars, "check")
	if err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	t.Logf("check:\n%s", out)
	n := objectCount(t, out, "credentials")
	if int64(n) < before || int64(n) > after {
		t.Errorf("the copy holds %d credentials; %d were acknowledged before the backup, %d when it ended", n, before, after)
	}
	if !strings.Contains(out, fmt.Sprintf("Secrets: %d secrets open (%d credentials).", n, n)) || !strings.Contains(out, "\nOK in ") {
		t.Errorf("check output:\n%s", out)
	}
	noSecrets(t, "check", out, acked.Load(), strings.TrimSpace(string(key)))

	keys := openKeys(t, strings.TrimSpace(string(key)))
	src, cp := storetest.OpenURL(t, vars["QUARRY_DATABASE_URL"], keys), storetest.OpenURL(t, restoreVars["QUARRY_DATABASE_URL"], keys)
	admin, err := src.Authenticate(context.Background(), quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	want, err := src.Credentials(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cp.Credentials(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || len(want) < n {
		t.Fatalf("%d credentials in the copy, %d in the database; the check counted %d", len(got), len(want), n)
	}
	if diff := cmp.Diff(want[:n], got); diff != "" {
		t.Errorf("the copy's credentials differ from the database's (-database +copy):\n%s", diff)
	}
	cp.Close()
	src.Close()

	// Never over the database the server has open.
	out, _, err = rotateRun(t, vars, "restore", "-from", backup, "-force")
	if err == nil || !strings.Contains(err.Error(), "is in use: stop quarry serve") {
		t.Errorf("restore over the served database: %v\n%s", err, out)
	}
	if res, err := c.do(srv.base, "GET", fmt.Sprintf("/manage/credential/%d", acked.Load()), nil); err != nil || res.status != 200 {
		t.Errorf("the server after the refused restore: %v %v", res, err)
	}

	// A wrong key: every secret is reported, none printed.
	wrong := store.NewKey()
	out, _, err = rotateRun(t, map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + other, "QUARRY_ENCRYPTION_KEY": wrong}, "check")
	if err == nil || err.Error() != fmt.Sprintf("check failed: %d secrets do not open", n) {
		t.Errorf("check with a wrong key: %v", err)
	}
	for _, want := range []string{
		fmt.Sprintf("Secrets: 0 secrets open (none); %d do not (%d credentials): credential 1, credential 2, ", n, n),
		fmt.Sprintf("Key %s, which is not configured, seals %d secrets", keys.PrimaryID(), n),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check with a wrong key does not say %q:\n%s", want, out)
		}
	}
	noSecrets(t, "check with a wrong key", out, acked.Load(), strings.TrimSpace(string(key)), wrong)

	// Restoring with the wrong key changes nothing.
	out, _, err = rotateRun(t, map[string]string{"QUARRY_DATABASE_URL": "sqlite:" + other, "QUARRY_ENCRYPTION_KEY": wrong}, "restore", "-from", backup, "-force")
	if err == nil || !strings.Contains(err.Error(), "failed its check; nothing was changed") {
		t.Errorf("restore with a wrong key: %v\n%s", err, out)
	}
	if m, _ := filepath.Glob(other + ".replaced-*"); len(m) > 0 {
		t.Errorf("a refused restore moved the database: %v", m)
	}
}

// openKeys returns the keyring of one key.
func openKeys(t *testing.T, key string) *store.Keyring {
	t.Helper()
	k, err := store.ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	kr, err := store.NewKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// TestBackupPostgresSaysSo: on PostgreSQL, backup and restore copy nothing
// and say how pg_dump and pg_restore do it, without the password.
func TestBackupPostgresSaysSo(t *testing.T) {
	vars := map[string]string{"QUARRY_DATABASE_URL": "postgres://quarry:pg-password-1234@db.example.com:5432/quarry"}
	for _, args := range [][]string{{"backup", "-o", filepath.Join(t.TempDir(), "x")}, {"restore", "-from", "x"}} {
		_, stderr, err := rotateRun(t, vars, args...)
		if err == nil || !strings.Contains(err.Error(), "nothing was") {
			t.Errorf("%s on PostgreSQL: %v", args[0], err)
		}
		for _, want := range []string{"pg_dump --format=custom --no-owner --no-privileges --file=quarry.dump 'postgres://quarry@db.example.com:5432/quarry'",
			"pg_restore --no-owner --no-privileges --exit-on-error --single-transaction", "quarry check -db"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s on PostgreSQL does not say %q:\n%s", args[0], want, stderr)
			}
		}
		if strings.Contains(stderr, "pg-password-1234") {
			t.Errorf("%s prints the password", args[0])
		}
	}
}

// TestCheckChangesNothing checks that quarry check on a database that is
// not Quarry's says so and leaves it as it was: it makes no table (goose
// would make its version table, and on SQLite its migration lock).
func TestCheckChangesNothing(t *testing.T) {
	u := storetest.URL(t)
	dialect, path, err := store.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	driver, source, tables := "pgx", u, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`
	if dialect == store.SQLite {
		driver, source, tables = "sqlite", path, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1`
	}
	raw, err := sql.Open(driver, source)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TABLE other (id INTEGER)`); err != nil {
		t.Fatal(err)
	}
	_, _, err = rotateRun(t, map[string]string{"QUARRY_DATABASE_URL": u, "QUARRY_ENCRYPTION_KEY": store.NewKey()}, "check")
	if err == nil || !strings.Contains(err.Error(), "is not a Quarry database: it has no Quarry schema") {
		t.Errorf("check of a database that is not Quarry's: %v", err)
	}
	var got []string
	rows, err := raw.Query(tables)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"other"}; !slices.Equal(got, want) {
		t.Errorf("tables after check: %v, want %v", got, want)
	}
}

// TestWithoutPassword checks that the database URLs the commands print
// hold no secret, wherever the URL put one, and that a URL that does not
// parse is shown as its scheme, host and database name only.
func TestWithoutPassword(t *testing.T) {
	const secret = "s3cr3t"
	for _, tt := range []struct{ url, want string }{
		{"postgres://quarry:" + secret + "@db.example.com:5432/quarry", "postgres://quarry@db.example.com:5432/quarry"},
		{"postgres://quarry@db/quarry?sslmode=verify-full&password=" + secret, "postgres://quarry@db/quarry?sslmode=verify-full"},
		{"postgresql://db/quarry?sslpassword=" + secret + "&sslkey=/etc/" + secret + ".key&sslcert=/etc/c.crt&application_name=quarry",
			"postgresql://db/quarry?application_name=quarry&sslcert=%2Fetc%2Fc.crt"},
		{"postgres://db/quarry?PassWord=" + secret + "&x_token=" + secret + "&client_secret=" + secret, "postgres://db/quarry"},
		{"postgres://db/quarry?a=%zz&password=" + secret, "postgres://db/quarry"}, // The query does not parse.
		{"postgres://db/quarry#" + secret, "postgres://db/quarry"},
		// URLs that do not parse.
		{"postgres://quarry:" + secret + "%zz@db.example.com:5432/quarry?password=" + secret, "postgres://db.example.com:5432/quarry"},
		{"postgres://quarry:a/b#" + secret + "@db:5432/quarry", "postgres://db:5432/quarry"},
		{"postgres://quarry:" + secret + "@db:port/qu%zzarry", "postgres://db:port/…"},
		{"postgres://db:x%zz/quarry?user=a@" + secret + "&password=" + secret, "postgres://…/"},
		// SQLite: the path.
		{"sqlite:data/quarry.db?_pragma=x", "data/quarry.db"},
		{"data/quarry.db", "data/quarry.db"},
	} {
		got := withoutPassword(tt.url)
		if got != tt.want {
			t.Errorf("withoutPassword(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, secret) {
			t.Errorf("withoutPassword(%q) = %q shows the secret", tt.url, got)
		}
	}
}

// TestPostgresDumpRestore follows docs/operations.md on PostgreSQL: pg_dump
// while a server's store is open, pg_restore into a new database, then
// quarry check with the same key, which finds the same objects and opens
// every secret.
func TestPostgresDumpRestore(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip("needs " + storetest.PostgresEnv)
	}
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	src, dst := storetest.URL(t), storetest.URL(t) // dst: the new, empty database of the runbook.
	key := store.NewKey()
	keys := openKeys(t, key)
	db := storetest.OpenURL(t, src, keys)
	_, token, err := db.CreateAPIKey(context.Background(), nil, nil, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(context.Background(), quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	for i := range int64(30) {
		if _, err := db.CreateCredential(context.Background(), admin, quarry.CredentialInput{Source: "confluence",
			CredentialJSON: map[string]any{"token": backupSecret(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	dump := filepath.Join(t.TempDir(), "quarry.dump")
	for _, cmd := range [][]string{
		{"pg_dump", "--format=custom", "--no-owner", "--no-privileges", "--file=" + dump, src},
		{"pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", "--dbname=" + dst, dump},
	} {
		if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd[0], err, out)
		}
	}
	var outs []string
	for _, u := range []string{src, dst} {
		out, _, err := rotateRun(t, map[string]string{"QUARRY_DATABASE_URL": u, "QUARRY_ENCRYPTION_KEY": key}, "check")
		if err != nil {
			t.Fatalf("check %s: %v\n%s", u, err, out)
		}
		noSecrets(t, "check", out, 30, key)
		outs = append(outs, out[strings.Index(out, "Objects:"):strings.Index(out, "OK in")])
	}
	if outs[0] != outs[1] || !strings.Contains(outs[1], "Secrets: 30 secrets open (30 credentials).") {
		t.Errorf("the restored database differs:\n%s\nthe original:\n%s", outs[1], outs[0])
	}
	// New ids follow the restored ones.
	restored := storetest.OpenURL(t, dst, keys)
	k, err := restored.CreateCredential(context.Background(), admin, quarry.CredentialInput{Source: "confluence",
		CredentialJSON: map[string]any{"token": "after the restore"}})
	if err != nil || k.ID != 31 {
		t.Errorf("a credential made after the restore: %v, %v; want id 31", k, err)
	}
}
