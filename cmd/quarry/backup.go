package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
)

// The commands that keep a deployment safe over the years: backup, restore
// and check. docs/operations.md is their runbook.

// postgresCopyHelp tells how PostgreSQL databases are backed up and
// restored, which Quarry leaves to PostgreSQL's own tools.
const postgresCopyHelp = `Quarry does not copy PostgreSQL databases itself: pg_dump and pg_restore do,
and pg_dump reads one consistent snapshot while the servers keep running.

Back up:

    pg_dump --format=custom --no-owner --no-privileges --file=quarry.dump '%[1]s'

(with the password in PGPASSWORD or ~/.pgpass rather than in the URL).

Restore into a new, empty database, then check it with the same keys:

    createdb quarry_restored
    pg_restore --no-owner --no-privileges --exit-on-error --single-transaction \
      --dbname='postgres://…/quarry_restored' quarry.dump
    quarry check -db 'postgres://…/quarry_restored'

The secrets in the dump are sealed with QUARRY_ENCRYPTION_KEY (and any key in
QUARRY_OLD_ENCRYPTION_KEYS): keep the keys with the dump, apart from it.
docs/operations.md has the whole runbook.
`

// withoutPassword returns the database URL u as commands may print it,
// with no secret in it. A SQLite URL is shown as its path. A PostgreSQL URL
// loses the password of its user information and the query parameters that
// may hold a secret (libpq's password, sslpassword and sslkey, and any
// whose name mentions a password, secret, token or key); one that does not
// parse is shown as its scheme, host and database name only, since where a
// secret sits in it cannot be known.
func withoutPassword(u string) string {
	dialect, path, err := store.ParseURL(u)
	if err == nil && dialect == store.SQLite {
		return path
	}
	p, err := url.Parse(u)
	if err != nil {
		return roughURL(u)
	}
	if p.User != nil {
		if _, has := p.User.Password(); has {
			p.User = url.User(p.User.Username())
		}
	}
	if p.RawQuery != "" {
		q, err := url.ParseQuery(p.RawQuery)
		if err != nil {
			q = nil // Its parameters cannot be told apart: none is shown.
		}
		for name := range q {
			if secretParameter(name) {
				q.Del(name)
			}
		}
		p.RawQuery = q.Encode()
	}
	p.Fragment, p.RawFragment = "", ""
	return p.String()
}

// secretParameter reports whether the query parameter name of a database
// URL may hold a secret.
func secretParameter(name string) bool {
	name = strings.ToLower(name)
	for _, s := range []string{"pass", "secret", "token", "key"} {
		if strings.Contains(name, s) {
			return true
		}
	}
	return false
}

// roughURL returns scheme://host/database for u, a PostgreSQL URL that
// does not parse: what follows the last '@' (user information, which may
// hold a password, comes before it), cut at the first '/', '?' or '#'. A
// host or database name with characters they do not have is shown as "…",
// as it may be part of a password or a query.
func roughURL(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host, db := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host, db = rest[:i], ""
		if rest[i] == '/' {
			db = rest[i+1:]
			if j := strings.IndexAny(db, "?#"); j >= 0 {
				db = db[:j]
			}
		}
	}
	if strings.Trim(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[],") != "" {
		host = "…"
	}
	if strings.Trim(db, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != "" {
		db = "…"
	}
	return scheme + "://" + host + "/" + db
}

// storedKeyring returns the configured keyring without ever making a key:
// from QUARRY_ENCRYPTION_KEY, else from the first key file of keyFiles that
// exists. It also says where the primary key came from.
func storedKeyring(cfg *Config, keyFiles ...string) (*store.Keyring, string, error) {
	if cfg.EncryptionKey != "" {
		kr, err := cfg.keyring(func(string) {})
		return kr, "QUARRY_ENCRYPTION_KEY", err
	}
	for _, path := range keyFiles {
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("reading encryption key: %w", err)
		}
		c := *cfg
		c.EncryptionKey = strings.TrimSpace(string(b))
		kr, err := c.keyring(func(string) {})
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
		return kr, path, nil
	}
	return nil, "", fmt.Errorf("no encryption key: QUARRY_ENCRYPTION_KEY is not set and there is no key file (%s)", strings.Join(keyFiles, ", "))
}

// openStored opens the configured database, without migrating it, with
// the keyring of storedKeyring, which it returns with where its primary
// key came from.
func openStored(ctx context.Context, cfg *Config, keyFiles ...string) (*store.DB, *store.Keyring, string, error) {
	keys, keyFrom, err := storedKeyring(cfg, keyFiles...)
	if err != nil {
		return nil, nil, "", err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL, keys, store.Options{MaxConns: 2})
	if err != nil {
		return nil, nil, "", err
	}
	return db, keys, keyFrom, nil
}

// existingSQLite returns the path of the SQLite database of url, which must
// exist (opening a missing one would make an empty one), or "" for
// PostgreSQL.
func existingSQLite(url string) (string, error) {
	dialect, path, err := store.ParseURL(url)
	if err != nil || dialect != store.SQLite {
		return "", err
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no database at %s: %w", path, err)
	}
	return path, nil
}

// loadCopy parses the flags of backup or restore (see loadLongRun), which
// copy SQLite files. It refuses a PostgreSQL database, whose copies pg_dump
// and pg_restore make, after printing how; refusal says what was not done.
func loadCopy(name string, args []string, env *environment, refusal string, define func(*flag.FlagSet)) (*Config, *longRun, error) {
	cfg, long, err := loadLongRun(name, args, env, "", define)
	if err != nil {
		return nil, nil, err
	}
	if dialect, _, err := store.ParseURL(cfg.DatabaseURL); err != nil {
		return nil, nil, err
	} else if dialect == store.Postgres {
		fmt.Fprintf(env.stderr, postgresCopyHelp, withoutPassword(cfg.DatabaseURL))
		return nil, nil, fmt.Errorf("%s: %s for PostgreSQL (see above)", name, refusal)
	}
	return cfg, long, nil
}

func runBackup(ctx context.Context, env *environment, args []string) error {
	var out string
	var withKey bool
	cfg, long, err := loadCopy("backup", args, env, "nothing was copied: use pg_dump", func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "", "the file to write the copy to; it must not exist")
		fs.BoolVar(&withKey, "with-key", false, "also write the encryption key to <copy>.key (mode 0600)")
	})
	if err != nil {
		return err
	}
	if out == "" {
		return errors.New("-o: name the file to write the copy to")
	}
	path, err := existingSQLite(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	db, keys, keyFrom, err := openStored(ctx, cfg, path+".key")
	if err != nil {
		return err
	}
	defer db.Close()

	w := env.stdout
	fmt.Fprintf(w, "Copying %s to %s from one snapshot; the server may keep running.\n", path, out)
	p := long.meter(w)
	p.bytes = true
	start := time.Now()
	err = db.Backup(ctx, out, store.BackupOptions{ProgressEvery: p.every, Progress: p.update})
	p.finish()
	if err != nil {
		return err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Wrote %s (%s) in %s.\n", out, mib(fi.Size()), time.Since(start).Round(time.Millisecond))

	// The copy is checked as a restore would check it.
	cp, err := store.Open(ctx, "sqlite:"+out, keys, store.Options{MaxConns: 2})
	if err != nil {
		return fmt.Errorf("opening the copy: %w", err)
	}
	defer cp.Close()
	problems, err := cp.IntegrityCheck(ctx)
	if err != nil {
		return err
	}
	objects, err := cp.ObjectCounts(ctx)
	if err != nil {
		return err
	}
	res, err := cp.CheckSecrets(ctx, store.CheckOptions{})
	if err != nil {
		return err
	}
	idx, err := cp.CheckIndex(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Checked the copy: %s; %s; %s.\n", pages(problems), describeObjects(objects), res.Summary())
	fmt.Fprintf(w, "The copy's search index: %s; %s.\n", idx.Summary(), idx.Verdict())
	if len(problems) > 0 || res.Failed > 0 || idx.Found() > 0 {
		return errors.New("the copy failed its check: keep the database and its last good backup, and see docs/operations.md")
	}

	old := oldKeys(res, keys.PrimaryID())
	if withKey {
		if err := writeKeyFile(out+".key", cfg, keyFrom); err != nil {
			return err
		}
		fmt.Fprintf(w, "Wrote the encryption key (id %s) to %s (mode 0600). Keep the two apart: whoever holds both can read every secret.\n",
			keys.PrimaryID(), out+".key")
	} else {
		fmt.Fprintf(w, "The encryption key is not in the copy, and the copy's secrets need it: keep the key from %s (id %s) with the backup, "+
			"apart from it, or run again with -with-key to write it to %s.\n", keyFrom, keys.PrimaryID(), out+".key")
	}
	if old != "" {
		fmt.Fprintf(w, "Some secrets are still sealed with an old key (%s): keep QUARRY_OLD_ENCRYPTION_KEYS with the backup too, "+
			"or finish rotate-encryption-key first.\n", old)
	}
	return nil
}

// oldKeys lists the keys other than primary that seal secrets, with how
// many each seals.
func oldKeys(res *store.CheckResult, primary string) string {
	var parts []string
	for _, k := range res.Keys {
		if k.KeyID != primary {
			parts = append(parts, fmt.Sprintf("id %s seals %d", k.KeyID, k.Count))
		}
	}
	return strings.Join(parts, ", ")
}

// writeKeyFile writes the primary key, as configured, to a new file at path
// (mode 0600).
func writeKeyFile(path string, cfg *Config, keyFrom string) error {
	key := cfg.EncryptionKey
	if key == "" {
		b, err := os.ReadFile(keyFrom)
		if err != nil {
			return err
		}
		key = strings.TrimSpace(string(b))
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing the key: %w", err)
	}
	_, err = io.WriteString(f, key+"\n")
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// pages describes the outcome of an integrity check.
func pages(problems []string) string {
	if len(problems) == 0 {
		return "its pages are sound"
	}
	if len(problems) > 5 {
		problems = append(problems[:5], "…")
	}
	return "its pages are damaged (" + strings.Join(problems, "; ") + ")"
}

// secrets renders "1 secret" or "n secrets".
func secrets(n int) string {
	if n == 1 {
		return "1 secret"
	}
	return fmt.Sprintf("%d secrets", n)
}

func describeObjects(counts []store.ObjectCount) string {
	var parts []string
	for _, c := range counts {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, ", ")
}

func runRestore(ctx context.Context, env *environment, args []string) error {
	var from string
	var force bool
	cfg, long, err := loadCopy("restore", args, env, "nothing was restored: use pg_restore", func(fs *flag.FlagSet) {
		fs.StringVar(&from, "from", "", "the backup to restore, made by quarry backup")
		fs.BoolVar(&force, "force", false, "replace the database if there is one (it is kept, renamed <db>.replaced-<time>)")
	})
	if err != nil {
		return err
	}
	_, path, _ := store.ParseURL(cfg.DatabaseURL) // loadCopy parsed it.
	if from == "" {
		return errors.New("-from: name the backup to restore")
	}
	if _, err := os.Stat(path); err == nil && !force {
		return fmt.Errorf("%s exists: stop quarry serve, then run again with -force to replace it (it is kept, renamed)", path)
	}
	keys, keyFrom, err := storedKeyring(cfg, from+".key", path+".key")
	if err != nil {
		return err
	}
	w := env.stdout
	fmt.Fprintf(w, "Checking %s with the key from %s (id %s).\n", from, keyFrom, keys.PrimaryID())
	p := long.meter(w)
	res, err := store.Restore(ctx, from, path, keys, store.RestoreOptions{Replace: force, Check: store.CheckOptions{Progress: p.update}})
	p.finish()
	if res != nil && res.Secrets != nil {
		fmt.Fprintf(w, "The backup: schema version %d; %s; %s; %s.\n", res.SchemaVersion, pages(res.Problems),
			describeObjects(res.Objects), res.Secrets.Summary())
	}
	if res != nil && res.Index != nil {
		fmt.Fprintf(w, "The backup's search index: %s; %s.\n", res.Index.Summary(), res.Index.Verdict())
	}
	if errors.Is(err, store.ErrInUse) {
		return fmt.Errorf("%s is in use: stop quarry serve (and any other quarry command on it) first; nothing was changed", path)
	}
	if errors.Is(err, store.ErrExists) && (res == nil || res.Replaced == "") {
		return fmt.Errorf("%s exists: stop quarry serve, then run again with -force to replace it (it is kept, renamed)", path)
	}
	if err != nil {
		return err
	}
	if res.Replaced != "" {
		fmt.Fprintf(w, "Moved the database that was there to %s.\n", res.Replaced)
	}
	if res.Stale != "" {
		fmt.Fprintf(w, "Moved WAL files left there without their database to %s-wal and -shm.\n", res.Stale)
	}
	fmt.Fprintf(w, "Restored %s to %s.\n", from, path)
	if keyFrom == from+".key" {
		if err := installKey(w, from+".key", path+".key", res.Replaced); err != nil {
			return fmt.Errorf("the database is restored, but its key is not in place: %w; copy %s to %s (mode 0600)", err, from+".key", path+".key")
		}
	}
	fmt.Fprintln(w, "Start the server: it migrates the database to this build's schema if need be. Then run quarry check.")
	return nil
}

// installKey puts the key file of a backup beside the restored database,
// moving a different key that was there aside with the database it sealed.
func installKey(w io.Writer, from, to, replaced string) error {
	key, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if cur, err := os.ReadFile(to); err == nil {
		if bytes.Equal(bytes.TrimSpace(cur), bytes.TrimSpace(key)) {
			return nil
		}
		aside := replaced + ".key"
		if replaced == "" {
			aside = to + ".replaced-" + time.Now().UTC().Format("20060102T150405Z")
		}
		if err := os.Rename(to, aside); err != nil {
			return err
		}
		fmt.Fprintf(w, "Moved the key that was there to %s.\n", aside)
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if err := errors.Join(err, f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(w, "Put the backup's key in %s (mode 0600).\n", to)
	return nil
}

func runCheck(ctx context.Context, env *environment, args []string) error {
	cfg, long, err := loadLongRun("check", args, env, "rows read per query", nil)
	if err != nil {
		return err
	}
	path, err := existingSQLite(cfg.DatabaseURL)
	if err != nil {
		return err
	}
	var keyFiles []string
	if path != "" {
		keyFiles = []string{path + ".key"}
	}
	// Opened, not migrated: a check changes nothing.
	db, keys, keyFrom, err := openStored(ctx, cfg, keyFiles...)
	if err != nil {
		return err
	}
	defer db.Close()
	w := env.stdout
	var failures []string
	current, latest, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	schema := fmt.Sprintf("schema version %d, this build's", current)
	switch {
	case current == 0:
		return fmt.Errorf("%s is not a Quarry database: it has no Quarry schema", withoutPassword(cfg.DatabaseURL))
	case current < latest:
		schema = fmt.Sprintf("schema version %d; this build migrates it to %d when it starts", current, latest)
	case current > latest:
		schema = fmt.Sprintf("schema version %d, written by a newer Quarry (this build knows %d)", current, latest)
		failures = append(failures, "the schema is newer than this build")
	}
	where := path
	if where == "" {
		where = withoutPassword(cfg.DatabaseURL)
	}
	fmt.Fprintf(w, "Checking %s database %s (%s).\n", db.Dialect(), where, schema)
	problems, err := db.IntegrityCheck(ctx)
	if err != nil {
		return err
	}
	if db.Dialect() == store.SQLite {
		fmt.Fprintf(w, "Pages: %s.\n", strings.TrimPrefix(pages(problems), "its pages are "))
	}
	if len(problems) > 0 {
		failures = append(failures, "damaged pages")
	}
	objects, err := db.ObjectCounts(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Objects: %s.\n", describeObjects(objects))
	p := long.meter(w)
	res, err := db.CheckSecrets(ctx, store.CheckOptions{BatchSize: long.batch, Progress: p.update})
	p.finish()
	if err != nil {
		return err
	}
	for _, k := range res.Keys {
		switch {
		case k.KeyID == keys.PrimaryID():
			fmt.Fprintf(w, "Key %s (the primary key, from %s) seals %s.\n", k.KeyID, keyFrom, secrets(k.Count))
		case k.Configured:
			fmt.Fprintf(w, "Key %s (in QUARRY_OLD_ENCRYPTION_KEYS) seals %s: finish rotate-encryption-key to move them to the primary key.\n", k.KeyID, secrets(k.Count))
		default:
			fmt.Fprintf(w, "Key %s, which is not configured, seals %s: set it in QUARRY_ENCRYPTION_KEY or QUARRY_OLD_ENCRYPTION_KEYS.\n", k.KeyID, secrets(k.Count))
		}
	}
	fmt.Fprintf(w, "Secrets: %s.\n", res.Summary())
	if res.Failed > 0 {
		verb := "do not"
		if res.Failed == 1 {
			verb = "does not"
		}
		failures = append(failures, fmt.Sprintf("%s %s open", secrets(res.Failed), verb))
	}
	idx, err := db.CheckIndex(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Search index: %s; %s.\n", idx.Summary(), idx.Verdict())
	if idx.Found() > 0 {
		failures = append(failures, "the search index is damaged")
	}
	if len(failures) > 0 {
		return fmt.Errorf("check failed: %s", strings.Join(failures, "; "))
	}
	fmt.Fprintf(w, "OK in %s.\n", res.Elapsed.Round(time.Millisecond))
	return nil
}
