-- Sign-in hardening: the skeletons of emails, so that no account is made
-- with an email that looks like another's, and the single-use links of
-- invitations. postgres/00006_sign_in_hardening.sql is the same schema.

-- +goose Up
-- email_skeleton is the Unicode TR39 skeleton of email_key
-- (quarry.EmailSkeleton), which SQL cannot compute: Quarry fills it in,
-- and brings email_key to its NFKC case-folded form, right after migrating
-- (store.DB.Migrate). NULL until then.
ALTER TABLE users ADD COLUMN email_skeleton TEXT;
CREATE INDEX users_by_email_skeleton ON users (email_skeleton);

-- The link of an invitation: the SHA-256 of its single-use token and when
-- it stops working; NULL until an admin issues a link (invitations made
-- before this version, and those made through Onyx's PUT
-- /manage/admin/users, have none yet).
ALTER TABLE invited_users ADD COLUMN token_hash TEXT;
ALTER TABLE invited_users ADD COLUMN expires_at INTEGER;
CREATE UNIQUE INDEX invited_users_by_token ON invited_users (token_hash);

-- +goose Down
DROP INDEX invited_users_by_token;
ALTER TABLE invited_users DROP COLUMN expires_at;
ALTER TABLE invited_users DROP COLUMN token_hash;
DROP INDEX users_by_email_skeleton;
ALTER TABLE users DROP COLUMN email_skeleton;
