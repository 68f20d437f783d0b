package store

import (
	"context"

	"github.com/quarryhq/quarry"
)

// CreateOAuthConfig stores an OAuth configuration, its client secret
// sealed, and returns it as OAuthConfig does.
func (db *DB) CreateOAuthConfig(ctx context.Context, c *quarry.Caller, in quarry.OAuthConfig) (*quarry.OAuthConfig, error) {
	if in.Scopes == nil {
		in.Scopes = []string{}
	}
	var out *quarry.OAuthConfig
	err := db.update(ctx, func(tx *Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO oauth_configs (name, authorization_url, token_url, client_id, client_secret, scopes, user_id,
				created_at, updated_at, additional_params)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9) RETURNING id`,
			in.Name, in.AuthorizationURL, in.TokenURL, in.ClientID, db.keys.seal(purposeOAuthSecret, []byte(in.ClientSecret)),
			jsonText(in.Scopes), c.ID, tx.now.Micros(), paramsText(in.AdditionalParams)).Scan(&in.ID)
		if err != nil {
			return err
		}
		fields := []string{"name", "authorization_url", "token_url", "client_id", "client_secret", "scopes"}
		if in.AdditionalParams != nil {
			fields = append(fields, "additional_params")
		}
		if err := tx.audit(ctx, c, "oauth_config.create", "oauth_config", in.ID, fields); err != nil {
			return err
		}
		out, err = db.oauthConfig(ctx, tx, in.ID)
		return err
	})
	return out, err
}

// OAuthConfigs returns every OAuth configuration, ascending by id, with
// the number of tools that use it. Their client secrets are in clear:
// never answer them.
func (db *DB) OAuthConfigs(ctx context.Context) ([]*quarry.OAuthConfig, error) {
	return db.oauthConfigs(ctx, db.read, 0)
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
