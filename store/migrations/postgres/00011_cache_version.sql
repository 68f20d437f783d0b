-- cache_version counts committed changes to what a server keeps in memory
-- between requests: the callers of API keys (read from api_keys, users,
-- user_group_members, user_groups and group_permissions) and the tools
-- (tools, and the names of their oauth_configs). Triggers on those tables
-- bump it with every change, so a server that finds the version it read
-- its copies at still current may use them, and a key revoked, a person
-- deactivated, a group or a tool changed on any replica shows on every
-- other at once (store/cache.go).
-- sqlite/00011_cache_version.sql is the same schema; here the triggers
-- are deferred to the commit, so that the row of cache_version is locked
-- only while a transaction commits.

-- +goose Up
CREATE TABLE cache_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT NOT NULL
);
INSERT INTO cache_version (id, version) VALUES (1, 0);

-- +goose StatementBegin
CREATE FUNCTION bump_cache_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE cache_version SET version = version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE CONSTRAINT TRIGGER api_keys_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON api_keys
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER users_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON users
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER user_group_members_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON user_group_members
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER user_groups_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON user_groups
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER group_permissions_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON group_permissions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER tools_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON tools
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER oauth_configs_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON oauth_configs
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();

-- +goose Down
DROP TRIGGER api_keys_bumps_cache ON api_keys;
DROP TRIGGER users_bumps_cache ON users;
DROP TRIGGER user_group_members_bumps_cache ON user_group_members;
DROP TRIGGER user_groups_bumps_cache ON user_groups;
DROP TRIGGER group_permissions_bumps_cache ON group_permissions;
DROP TRIGGER tools_bumps_cache ON tools;
DROP TRIGGER oauth_configs_bumps_cache ON oauth_configs;
DROP FUNCTION bump_cache_version();
DROP TABLE cache_version;
