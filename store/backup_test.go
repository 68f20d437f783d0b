package store_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// adminOf makes an admin key on db and returns its caller.
func adminOf(t testing.TB, db *store.DB) *quarry.Caller {
	t.Helper()
	_, token, err := db.CreateAPIKey(ctx, nil, ptr("admin"), quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// addSecrets makes a credential, a tool with a header and an OAuth config,
// one secret of each kind, numbered i.
func addSecrets(t *testing.T, db *store.DB, admin *quarry.Caller, i int) error {
	_, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "confluence", AdminPublic: true,
		CredentialJSON: map[string]any{"token": fmt.Sprint("backup-secret-", i), "n": i}})
	if err != nil {
		return err
	}
	o, err := db.CreateOAuthConfig(ctx, admin, quarry.OAuthConfig{Name: fmt.Sprint("o", i), AuthorizationURL: "https://a.example.com",
		TokenURL: "https://t.example.com", ClientID: "id", ClientSecret: fmt.Sprint("client-secret-", i)})
	if err != nil {
		return err
	}
	_, err = db.CreateTool(ctx, admin, quarry.ToolInput{Name: fmt.Sprint("t", i), Definition: json.RawMessage(`{}`), OAuthConfigID: &o.ID,
		Headers: []quarry.Header{{Key: "X-Key", Value: fmt.Sprint("tool-secret-", i)}}})
	return err
}

// TestBackupWhileWriting copies a SQLite database while a writer adds
// objects, and checks that the copy is one consistent snapshot: sound,
// every secret opens with the same key, every credential equals the
// original, and each object came with its audit entry.
func TestBackupWhileWriting(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	db := storetest.OpenURL(t, u, keys)
	admin := adminOf(t, db)
	if db.Dialect() == store.Postgres {
		if err := db.Backup(ctx, filepath.Join(t.TempDir(), "b.db"), store.BackupOptions{}); !errors.Is(err, store.ErrBackupPostgres) {
			t.Errorf("Backup on PostgreSQL: %v, want ErrBackupPostgres", err)
		}
		return
	}
	for i := range 200 {
		if err := addSecrets(t, db, admin, i); err != nil {
			t.Fatal(err)
		}
	}
	var (
		stop    = make(chan struct{})
		wg      sync.WaitGroup
		written atomic.Int64
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1000; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := addSecrets(t, db, admin, i); err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	for written.Load() < 5 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	var reports []int64
	err := db.Backup(ctx, path, store.BackupOptions{Progress: func(c progress.Count) { reports = append(reports, c.Done) }})
	during := written.Load()
	for written.Load() < during+5 && !t.Failed() {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600", fi.Mode().Perm())
	}
	if len(reports) == 0 || reports[len(reports)-1] != fi.Size() {
		t.Errorf("progress reports %v, want the last to be the size %d", reports, fi.Size())
	}
	matches, _ := filepath.Glob(path + "*.partial")
	if len(matches) > 0 {
		t.Errorf("temporary files left: %v", matches)
	}
	if err := db.Backup(ctx, path, store.BackupOptions{}); err == nil {
		t.Error("a second backup to the same path succeeded")
	}

	cp := storetest.OpenURL(t, "sqlite:"+path, keys)
	if problems, err := cp.IntegrityCheck(ctx); err != nil || len(problems) > 0 {
		t.Errorf("integrity check of the copy: %v %v", problems, err)
	}
	res, err := cp.CheckSecrets(ctx, store.CheckOptions{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	counts, err := cp.ObjectCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, c := range counts {
		n[c.Kind] = c.Count
	}
	creds := n["credentials"]
	if creds < 200 || creds >= 200+int(written.Load()) {
		t.Errorf("the copy has %d credentials, want between 200 and %d", creds, 200+written.Load())
	}
	// One snapshot: each object with its audit entry (written in its
	// transaction), objects made in order.
	oauth, tools := n["OAuth configs"], n["tools"]-4
	if oauth > creds || oauth < creds-1 || tools > oauth || tools < oauth-1 || n["audit entries"] != 1+creds+oauth+tools {
		t.Errorf("the copy is not one snapshot: %v", counts)
	}
	if res.Failed != 0 || res.Opened != creds+oauth+tools {
		t.Errorf("CheckSecrets on the copy: %s; want %d open", res.Summary(), creds+oauth+tools)
	}
	want, err := db.Credentials(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cp.Credentials(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[:len(got)], got); diff != "" {
		t.Errorf("credentials of the copy differ (-original +copy):\n%s", diff)
	}
}

// TestCheckSecrets opens the secrets of a database with the right key, a
// wrong one, and both, and with one ciphertext damaged.
func TestCheckSecrets(t *testing.T) {
	u, keyA := storetest.URL(t), rotationKey(t)
	db := storetest.OpenURL(t, u, keyring(t, keyA))
	admin := adminOf(t, db)
	for i := range 3 {
		if err := addSecrets(t, db, admin, i); err != nil {
			t.Fatal(err)
		}
	}
	idA := keyring(t, keyA).PrimaryID()
	kinds := func(n int) map[string]int {
		return map[string]int{"credentials": n, "tool header sets": n, "OAuth client secrets": n}
	}

	res, err := db.CheckSecrets(ctx, store.CheckOptions{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Opened != 9 || res.Failed != 0 || !cmp.Equal(nonZero(res.OpenedKinds), kinds(3)) ||
		!cmp.Equal(res.Keys, []store.KeyUse{{KeyID: idA, Count: 9, Configured: true}}) {
		t.Errorf("with the right key: %+v", res)
	}
	if got, want := res.Summary(), "9 secrets open (3 credentials, 3 tool header sets, 3 OAuth client secrets)"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}

	keyB := rotationKey(t)
	wrong := storetest.OpenURL(t, u, keyring(t, keyB))
	var counts []progress.Count
	res, err = wrong.CheckSecrets(ctx, store.CheckOptions{BatchSize: 2, Progress: func(c progress.Count) { counts = append(counts, c) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Opened != 0 || res.Failed != 9 || !cmp.Equal(nonZero(res.FailedKinds), kinds(3)) ||
		!cmp.Equal(res.Keys, []store.KeyUse{{KeyID: idA, Count: 9, Configured: false}}) {
		t.Errorf("with a wrong key: %+v", res)
	}
	if want := "0 secrets open (none); 9 do not (3 credentials, 3 tool header sets, 3 OAuth client secrets): " +
		"credential 1, credential 2, credential 3, tool header set 5, tool header set 6, tool header set 7, " +
		"OAuth client secret 1, OAuth client secret 2, OAuth client secret 3"; res.Summary() != want {
		t.Errorf("Summary() = %q, want %q", res.Summary(), want)
	}
	if len(counts) == 0 || counts[len(counts)-1] != (progress.Count{Done: 9, Total: 9}) {
		t.Errorf("progress %v, want it to end at 9/9", counts)
	}

	both := storetest.OpenURL(t, u, keyring(t, keyB, keyA))
	if res, err := both.CheckSecrets(ctx, store.CheckOptions{}); err != nil || res.Opened != 9 || res.Failed != 0 {
		t.Errorf("with both keys: %+v, %v", res, err)
	}

	// A damaged ciphertext, under a key the ring holds.
	if _, err := rawDB(t, u).ExecContext(ctx, `UPDATE credentials SET secret = substr(secret, 1, 20) WHERE id = 2`); err != nil {
		t.Fatal(err)
	}
	res, err = db.CheckSecrets(ctx, store.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Opened != 8 || res.Failed != 1 || res.FailedRows[0] != "credential 2" {
		t.Errorf("with a damaged ciphertext: %s", res.Summary())
	}
}

// TestRestore restores a backup to a new place and over a database, which
// it refuses to replace while a store has it open or when the backup does
// not open with the keys; then nothing changes.
func TestRestore(t *testing.T) {
	dir := t.TempDir()
	keys := storetest.Key(t)
	src := storetest.OpenURL(t, "sqlite:"+filepath.Join(dir, "src.db"), keys)
	admin := adminOf(t, src)
	for i := range 3 {
		if err := addSecrets(t, src, admin, i); err != nil {
			t.Fatal(err)
		}
	}
	backup := filepath.Join(dir, "backup.db")
	if err := src.Backup(ctx, backup, store.BackupOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := src.Credentials(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	leftovers := func() {
		t.Helper()
		for _, pattern := range []string{"*.restoring*", "*.partial"} {
			if m, _ := filepath.Glob(filepath.Join(dir, pattern)); len(m) > 0 {
				t.Errorf("left behind: %v", m)
			}
		}
	}
	target := filepath.Join(dir, "restored", "quarry.db")

	res, err := store.Restore(ctx, backup, target, keys, store.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SchemaVersion == 0 || res.Secrets.Opened != 9 || res.Secrets.Failed != 0 || len(res.Problems) > 0 || res.Replaced != "" {
		t.Errorf("Restore: %+v %s", res, res.Secrets.Summary())
	}
	if fi, err := os.Stat(target); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("restored file: %v %v", fi, err)
	}
	db := storetest.OpenURL(t, "sqlite:"+target, keys)
	got, err := db.Credentials(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored credentials differ (-want +got):\n%s", diff)
	}
	if err := addSecrets(t, db, admin, 99); err != nil { // Written after the backup: the restore below drops it.
		t.Fatal(err)
	}

	if _, err := store.Restore(ctx, backup, target, keys, store.RestoreOptions{}); err == nil {
		t.Error("Restore replaced a database without being asked to")
	}
	if _, err := store.Restore(ctx, backup, target, keys, store.RestoreOptions{Replace: true}); !errors.Is(err, store.ErrInUse) {
		t.Errorf("Restore over a database in use: %v, want ErrInUse", err)
	}
	other := storetest.Key(t)
	res, err = store.Restore(ctx, backup, target, other, store.RestoreOptions{Replace: true})
	if err == nil || res == nil || res.Secrets.Failed != 9 {
		t.Errorf("Restore with another key: %v, %+v", err, res)
	}
	if got, err := db.Credentials(ctx, admin); err != nil || len(got) != len(want)+1 {
		t.Errorf("after the refused restores the database has %d credentials (%v), want %d", len(got), err, len(want)+1)
	}
	leftovers()

	db.Close()
	res, err = store.Restore(ctx, backup, target, keys, store.RestoreOptions{Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Replaced == "" {
		t.Fatal("no name for the replaced database")
	}
	old := storetest.OpenURL(t, "sqlite:"+res.Replaced, keys)
	if got, err := old.Credentials(ctx, admin); err != nil || len(got) != len(want)+1 {
		t.Errorf("the replaced database has %d credentials (%v), want %d", len(got), err, len(want)+1)
	}
	db = storetest.OpenURL(t, "sqlite:"+target, keys)
	if got, err := db.Credentials(ctx, admin); err != nil || !cmp.Equal(got, want) {
		t.Errorf("the restored database: %d credentials (%v), want the backup's %d", len(got), err, len(want))
	}
	leftovers()

	// WAL files without their database are moved aside, not applied to
	// the restored one.
	stale := filepath.Join(dir, "stale", "quarry.db")
	os.MkdirAll(filepath.Dir(stale), 0o700)
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.WriteFile(stale+suffix, []byte("stale"+suffix), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err = store.Restore(ctx, backup, stale, keys, store.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stale == "" || res.Replaced != "" {
		t.Errorf("Restore over stale WAL files: Stale %q, Replaced %q", res.Stale, res.Replaced)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if b, err := os.ReadFile(res.Stale + suffix); err != nil || string(b) != "stale"+suffix {
			t.Errorf("%s: %q, %v", res.Stale+suffix, b, err)
		}
	}
	db = storetest.OpenURL(t, "sqlite:"+stale, keys)
	if got, err := db.Credentials(ctx, admin); err != nil || !cmp.Equal(got, want) {
		t.Errorf("the database restored beside stale WAL files: %d credentials (%v), want the backup's %d", len(got), err, len(want))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "stale", "*.restoring*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}

	if _, err := store.Restore(ctx, filepath.Join(dir, "restored"), filepath.Join(dir, "x.db"), keys, store.RestoreOptions{}); err == nil {
		t.Error("Restore took a directory")
	}
	notDB := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDB, []byte("not a database, but long enough to have a header"), 0o600)
	if _, err := store.Restore(ctx, notDB, filepath.Join(dir, "x.db"), keys, store.RestoreOptions{}); err == nil {
		t.Error("Restore took a text file")
	}
}

// nonZero returns the counts of kinds that are not zero, by kind.
func nonZero(kinds []store.KindCount) map[string]int {
	out := map[string]int{}
	for _, k := range kinds {
		if k.Count != 0 {
			out[k.Kind] = k.Count
		}
	}
	return out
}
