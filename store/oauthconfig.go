package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/quarryhq/quarry"
)

// oauthConfigColumns are the columns scanOAuthConfig reads, from
// oauth_configs o: the client secret sealed, and the number of tools that
// use the configuration.
const oauthConfigColumns = `o.id, o.name, o.authorization_url, o.token_url, o.client_id, o.client_secret, o.scopes, o.user_id,
	o.created_at, o.updated_at, o.additional_params, (SELECT COUNT(*) FROM tools t WHERE t.oauth_config_id = o.id)`

// scanOAuthConfig reads a row of oauthConfigColumns, its client secret in
// clear.
func (db *DB) scanOAuthConfig(s interface{ Scan(...any) error }) (*quarry.OAuthConfig, error) {
	var (
		o                quarry.OAuthConfig
		secret           []byte
		scopes           string
		params           sql.NullString
		created, updated int64
	)
	if err := s.Scan(&o.ID, &o.Name, &o.AuthorizationURL, &o.TokenURL, &o.ClientID, &secret, &scopes, &o.UserID,
		&created, &updated, &params, &o.ToolCount); err != nil {
		return nil, err
	}
	pt, err := db.keys.open(purposeOAuthSecret, secret)
	if err != nil {
		return nil, fmt.Errorf("oauth config %d: %w", o.ID, err)
	}
	o.ClientSecret = string(pt)
	if err := json.Unmarshal([]byte(scopes), &o.Scopes); err != nil {
		return nil, fmt.Errorf("oauth config %d scopes: %w", o.ID, err)
	}
	if params.Valid {
		if err := json.Unmarshal([]byte(params.String), &o.AdditionalParams); err != nil {
			return nil, fmt.Errorf("oauth config %d additional_params: %w", o.ID, err)
		}
	}
	o.CreatedAt, o.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	return &o, nil
}

// oauthConfigs returns the OAuth configurations, or the one with id when id
// is not 0, ascending by id, with their client secrets in clear.
func (db *DB) oauthConfigs(ctx context.Context, q querier, id int64) ([]*quarry.OAuthConfig, error) {
	return queryAll(ctx, q, db.scanOAuthConfig, `SELECT `+oauthConfigColumns+` FROM oauth_configs o
		WHERE $1 = 0 OR o.id = $1 ORDER BY o.id`, id)
}

// OAuthConfig returns OAuth configuration id, its client secret in clear
// (never to be answered), or a 404.
func (db *DB) OAuthConfig(ctx context.Context, id int64) (*quarry.OAuthConfig, error) {
	return db.oauthConfig(ctx, db.read, id)
}

func (db *DB) oauthConfig(ctx context.Context, q querier, id int64) (*quarry.OAuthConfig, error) {
	os, err := db.oauthConfigs(ctx, q, id)
	if err != nil {
		return nil, err
	}
	if len(os) == 0 || id == 0 {
		return nil, oauthConfigNotFound(id)
	}
	return os[0], nil
}

// paramsText renders additional authorization parameters for their
// column: NULL when there are none.
func paramsText(p map[string]string) *string {
	if p == nil {
		return nil
	}
	s := jsonText(p)
	return &s
}

// UpdateOAuthConfig applies u to OAuth configuration id for c (an admin)
// and returns it, client secret in clear. When its token endpoint or client
// id changes, the tokens people connected under it are deleted (see
// quarry.OAuthConfig.KeepsTokens). The configuration as it would be must
// have valid URLs and additional parameters.
func (db *DB) UpdateOAuthConfig(ctx context.Context, c *quarry.Caller, id int64, u quarry.OAuthConfigUpdate) (*quarry.OAuthConfig, error) {
	var out *quarry.OAuthConfig
	err := db.update(ctx, func(tx *Tx) error {
		old, err := db.oauthConfig(ctx, tx, id)
		if err != nil {
			return err
		}
		next := u.Apply(*old)
		if err := next.CheckURLs(); err != nil {
			return err
		}
		if err := quarry.CheckAdditionalParams(next.AdditionalParams); err != nil {
			return err
		}
		fields := u.ChangedFields(old, &next)
		if len(fields) > 0 {
			_, err = tx.ExecContext(ctx, `UPDATE oauth_configs SET name = $1, authorization_url = $2, token_url = $3, client_id = $4,
					client_secret = $5, scopes = $6, additional_params = $7, updated_at = $8 WHERE id = $9`,
				next.Name, next.AuthorizationURL, next.TokenURL, next.ClientID,
				db.keys.seal(purposeOAuthSecret, []byte(next.ClientSecret)), jsonText(next.Scopes), paramsText(next.AdditionalParams),
				later(tx.now, old.UpdatedAt).Micros(), id)
			if err != nil {
				return err
			}
		}
		if !next.KeepsTokens(old) {
			res, err := tx.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE oauth_config_id = $1`, id)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n > 0 {
				fields = append(fields, "tokens")
			}
		}
		if err := tx.audit(ctx, c, "oauth_config.update", "oauth_config", id, fields); err != nil {
			return err
		}
		out, err = db.oauthConfig(ctx, tx, id)
		return err
	})
	return out, err
}

// errNoConfig reports whether err is the 404 of a missing OAuth
// configuration.
func errNoConfig(err error) bool {
	var e *quarry.Error
	return errors.As(err, &e) && e.Code == quarry.ENOTFOUND
}
