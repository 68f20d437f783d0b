package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/quarryhq/quarry/store"
)

// runRotateEncryptionKey re-encrypts every secret under QUARRY_ENCRYPTION_KEY,
// reading the old ciphertexts with QUARRY_OLD_ENCRYPTION_KEYS. Servers keep
// working meanwhile, provided they hold both keys; an interrupted run is
// continued by running the command again.
func runRotateEncryptionKey(ctx context.Context, env *environment, args []string) error {
	cfg, long, err := loadLongRun("rotate-encryption-key", args, env, "rows re-encrypted per transaction", nil)
	if err != nil {
		return err
	}
	db, err := openDB(ctx, cfg, env)
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := cfg.keyring(func(string) {})
	if err != nil {
		return err
	}
	total, kinds, err := db.SecretsToRotate(ctx)
	if err != nil {
		return err
	}
	w := env.stdout
	if total == 0 {
		fmt.Fprintf(w, "Every secret is already sealed with the key in QUARRY_ENCRYPTION_KEY (key id %s); nothing to do.\n", keys.PrimaryID())
		printRotationNext(w, cfg)
		return nil
	}
	fmt.Fprintf(w, "Re-encrypting %d secrets (%s) under key %s, %d per transaction.\n",
		total, describe(kinds), keys.PrimaryID(), long.batch)
	p := long.meter(w)
	res, err := db.RotateKeys(ctx, store.RotateOptions{BatchSize: long.batch, Progress: p.update})
	p.finish()
	if err != nil {
		var ue *store.UnreadableSecretsError
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			fmt.Fprintf(w, "Interrupted: %s; %d left. Run the command again to continue.\n", res.Summary(), total-res.Rotated-res.Concurrent)
			return errors.New("interrupted")
		case errors.As(err, &ue) && ue.Changed:
			fmt.Fprintf(w, "Stopped: %s, but not every secret.\n", res.Summary())
		}
		return err
	}
	fmt.Fprintf(w, "Done in %s: %s.\n", res.Elapsed.Round(time.Millisecond), res.Summary())
	if res.Concurrent > 0 {
		fmt.Fprintf(w, "%d secrets were rewritten by the server meanwhile; they were left as it wrote them.\n", res.Concurrent)
	}
	if res.Remaining > 0 {
		return fmt.Errorf("%d secrets are still sealed with an old key: a server is probably still sealing with the old key. "+
			"Give every replica QUARRY_ENCRYPTION_KEY=<new key> and QUARRY_OLD_ENCRYPTION_KEYS=<old key>, restart them, and run this command again", res.Remaining)
	}
	fmt.Fprintln(w, "Every secret is now sealed with QUARRY_ENCRYPTION_KEY.")
	printRotationNext(w, cfg)
	return nil
}

// printRotationNext tells the operator what is left to do once every secret
// is under the new key.
func printRotationNext(w io.Writer, cfg *Config) {
	if dialect, path, err := store.ParseURL(cfg.DatabaseURL); err == nil && dialect == store.SQLite && cfg.EncryptionKey != "" {
		if b, err := os.ReadFile(path + ".key"); err == nil && strings.TrimSpace(string(b)) != strings.TrimSpace(cfg.EncryptionKey) {
			fmt.Fprintf(w, "The key file %s still holds the old key: write the new key into it (or keep QUARRY_ENCRYPTION_KEY set) before restarting.\n", path+".key")
		}
	}
	if len(cfg.OldEncryptionKeys) > 0 {
		fmt.Fprintln(w, "Next: remove QUARRY_OLD_ENCRYPTION_KEYS from the environment of every replica and restart them.")
		fmt.Fprintln(w, "Keep the old key only as long as you keep database backups made before this rotation: they need it.")
	}
}

func describe(kinds []store.KindCount) string {
	var parts []string
	for _, k := range kinds {
		if k.Count > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k.Count, k.Kind))
		}
	}
	return strings.Join(parts, ", ")
}
