package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/quarryhq/quarry"
)

// CreateOAuthConfig stores an OAuth configuration, its client secret sealed.
func (db *DB) CreateOAuthConfig(ctx context.Context, c *quarry.Caller, in quarry.OAuthConfig) (*quarry.OAuthConfig, error) {
	if in.Scopes == nil {
		in.Scopes = []string{}
	}
	err := db.update(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO oauth_configs (name, authorization_url, token_url, client_id, client_secret, scopes, user_id,
				created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
			in.Name, in.AuthorizationURL, in.TokenURL, in.ClientID, db.keys.seal(purposeOAuthSecret, []byte(in.ClientSecret)),
			jsonText(in.Scopes), c.ID, tx.now.Micros()).Scan(&in.ID)
		if err != nil {
			return err
		}
		in.UserID = &c.ID
		in.CreatedAt, in.UpdatedAt = tx.now, tx.now
		return tx.audit(ctx, c, "oauth_config.create", "oauth_config", in.ID,
			[]string{"name", "authorization_url", "token_url", "client_id", "client_secret", "scopes"})
	})
	if err != nil {
		return nil, err
	}
	in.ClientSecret = ""
	return &in, nil
}

// OAuthConfigs returns every OAuth configuration, without client secrets.
func (db *DB) OAuthConfigs(ctx context.Context) ([]*quarry.OAuthConfig, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id, name, authorization_url, token_url, client_id, scopes, user_id,
		created_at, updated_at FROM oauth_configs ORDER BY id`)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.OAuthConfig{}
	for rows.Next() {
		var (
			o                quarry.OAuthConfig
			scopes           string
			created, updated int64
		)
		if err := rows.Scan(&o.ID, &o.Name, &o.AuthorizationURL, &o.TokenURL, &o.ClientID, &scopes, &o.UserID, &created, &updated); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if err := json.Unmarshal([]byte(scopes), &o.Scopes); err != nil {
			rows.Close()
			return nil, fmt.Errorf("oauth config %d scopes: %w", o.ID, err)
		}
		o.CreatedAt, o.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
		out = append(out, &o)
	}
	return out, closeRows(rows)
}

// DeleteOAuthConfig deletes OAuth configuration id, which no tool may use.
func (db *DB) DeleteOAuthConfig(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		if err := tx.checkOAuthConfig(ctx, &id); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM tools WHERE oauth_config_id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if err := quarry.CheckOAuthConfigUnused(id, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM oauth_configs WHERE id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "oauth_config.delete", "oauth_config", id, nil)
	})
}
