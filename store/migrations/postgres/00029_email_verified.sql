-- Proven emails (issue 43): users.email_verified says that somebody proved
-- the account's email is its holder's: the OpenID provider said so
-- (email_verified true, at the first sign-in or any later one with the
-- same email), the company's directory made the account (SCIM), or its
-- holder registered with an invitation's link. Synced access (a sync
-- pair's document open to an email, or to a source's group listed by its
-- members' emails) reaches only such accounts. Existing accounts: those
-- the directory manages and that have no password are taken as proven;
-- every other waits for a sign-in whose provider says its email is
-- verified. sqlite/00029_email_verified.sql is the same
-- schema.

-- +goose Up
ALTER TABLE users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE users SET email_verified = TRUE
    WHERE password_hash IS NULL AND id IN (SELECT user_id FROM scim_users);

-- +goose Down
ALTER TABLE users DROP COLUMN email_verified;
