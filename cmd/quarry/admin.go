package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/quarryhq/quarry"
)

func runMigrate(ctx context.Context, env *environment, args []string) error {
	cfg, _, err := loadConfig("migrate", args, env, nil, "db")
	if err != nil {
		return err
	}
	db, err := openDB(ctx, cfg, env)
	if err != nil {
		return err
	}
	defer db.Close()
	current, _, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s schema is at version %d\n", db.Dialect(), current)
	return nil
}

func runCreateAPIKey(ctx context.Context, env *environment, args []string) error {
	var name, roleName string
	cfg, _, err := loadConfig("create-api-key", args, env, func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "a name for the key")
		fs.StringVar(&roleName, "role", "basic", "admin, global_curator, curator, basic or limited")
	}, "db")
	if err != nil {
		return err
	}
	role := quarry.Role(roleName)
	if !role.Valid() {
		return fmt.Errorf("-role: %q is not one of admin, global_curator, curator, basic, limited", role)
	}
	db, err := openDB(ctx, cfg, env)
	if err != nil {
		return err
	}
	defer db.Close()
	var np *string
	if name != "" {
		np = &name
	}
	key, token, err := db.CreateAPIKey(ctx, nil, np, role)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Created API key %d (%s) with role %s for user %s. It is shown only now:\n%s\n",
		key.ID, key.Display, key.Role, key.UserID, token)
	return nil
}
