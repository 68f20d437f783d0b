-- cache_version counts committed changes to what a server keeps in memory
-- between requests: the callers of API keys (read from api_keys, users,
-- user_group_members, user_groups and group_permissions) and the tools
-- (tools, and the names of their oauth_configs). Triggers on those tables
-- bump it with every change, so a server that finds the version it read
-- its copies at still current may use them, and a key revoked, a person
-- deactivated, a group or a tool changed on any replica shows on every
-- other at once (store/cache.go).
-- postgres/00011_cache_version.sql is the same schema.

-- +goose Up
CREATE TABLE cache_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO cache_version (id, version) VALUES (1, 0);
-- +goose StatementBegin
CREATE TRIGGER api_keys_insert_bumps_cache AFTER INSERT ON api_keys
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_update_bumps_cache AFTER UPDATE ON api_keys
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER api_keys_delete_bumps_cache AFTER DELETE ON api_keys
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_insert_bumps_cache AFTER INSERT ON users
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_update_bumps_cache AFTER UPDATE ON users
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER users_delete_bumps_cache AFTER DELETE ON users
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_group_members_insert_bumps_cache AFTER INSERT ON user_group_members
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_group_members_update_bumps_cache AFTER UPDATE ON user_group_members
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_group_members_delete_bumps_cache AFTER DELETE ON user_group_members
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_groups_insert_bumps_cache AFTER INSERT ON user_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_groups_update_bumps_cache AFTER UPDATE ON user_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER user_groups_delete_bumps_cache AFTER DELETE ON user_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER group_permissions_insert_bumps_cache AFTER INSERT ON group_permissions
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER group_permissions_update_bumps_cache AFTER UPDATE ON group_permissions
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER group_permissions_delete_bumps_cache AFTER DELETE ON group_permissions
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tools_insert_bumps_cache AFTER INSERT ON tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tools_update_bumps_cache AFTER UPDATE ON tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER tools_delete_bumps_cache AFTER DELETE ON tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_configs_insert_bumps_cache AFTER INSERT ON oauth_configs
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_configs_update_bumps_cache AFTER UPDATE ON oauth_configs
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER oauth_configs_delete_bumps_cache AFTER DELETE ON oauth_configs
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER api_keys_insert_bumps_cache;
DROP TRIGGER api_keys_update_bumps_cache;
DROP TRIGGER api_keys_delete_bumps_cache;
DROP TRIGGER users_insert_bumps_cache;
DROP TRIGGER users_update_bumps_cache;
DROP TRIGGER users_delete_bumps_cache;
DROP TRIGGER user_group_members_insert_bumps_cache;
DROP TRIGGER user_group_members_update_bumps_cache;
DROP TRIGGER user_group_members_delete_bumps_cache;
DROP TRIGGER user_groups_insert_bumps_cache;
DROP TRIGGER user_groups_update_bumps_cache;
DROP TRIGGER user_groups_delete_bumps_cache;
DROP TRIGGER group_permissions_insert_bumps_cache;
DROP TRIGGER group_permissions_update_bumps_cache;
DROP TRIGGER group_permissions_delete_bumps_cache;
DROP TRIGGER tools_insert_bumps_cache;
DROP TRIGGER tools_update_bumps_cache;
DROP TRIGGER tools_delete_bumps_cache;
DROP TRIGGER oauth_configs_insert_bumps_cache;
DROP TRIGGER oauth_configs_update_bumps_cache;
DROP TRIGGER oauth_configs_delete_bumps_cache;
DROP TABLE cache_version;
