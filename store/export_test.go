package store

import "context"

// OAuthClientSecret returns the client secret of OAuth config id in clear,
// which nothing outside tests reads.
func (db *DB) OAuthClientSecret(ctx context.Context, id int64) (string, error) {
	var ct []byte
	if err := db.read.QueryRowContext(ctx, `SELECT client_secret FROM oauth_configs WHERE id = $1`, id).Scan(&ct); err != nil {
		return "", mapError(err)
	}
	pt, err := db.keys.open(purposeOAuthSecret, ct)
	return string(pt), err
}
