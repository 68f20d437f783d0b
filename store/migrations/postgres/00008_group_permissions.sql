-- Group permissions and the default groups, as in Onyx v4.6.1: each user
-- group is granted permissions (quarry.Permission), every group is granted
-- basic, and two default groups, Admin (granted admin) and Basic (granted
-- basic), hold every user by role: admins in Admin; global curators,
-- curators and basic users in Basic; limited users in neither (see
-- quarry.DefaultGroupFor). sqlite/00008_group_permissions.sql is the same
-- schema.

-- +goose Up
ALTER TABLE user_groups ADD COLUMN is_default BOOLEAN NOT NULL DEFAULT FALSE;

-- A group already named like a default group (in any case) keeps its
-- members and what is shared with it under a new name, as Onyx renames it:
-- "<name> (Custom)", or "<name> (Custom <id>)" if that is taken too.
UPDATE user_groups SET name = name || ' (Custom)'
WHERE lower(name) IN ('admin', 'basic')
    AND NOT EXISTS (SELECT 1 FROM user_groups o WHERE o.name = user_groups.name || ' (Custom)');
UPDATE user_groups SET name = name || ' (Custom ' || id || ')' WHERE lower(name) IN ('admin', 'basic');

INSERT INTO user_groups (name, is_default, created_at, updated_at) VALUES
    ('Admin', TRUE, (extract(epoch FROM now()) * 1000000)::BIGINT, (extract(epoch FROM now()) * 1000000)::BIGINT),
    ('Basic', TRUE, (extract(epoch FROM now()) * 1000000)::BIGINT, (extract(epoch FROM now()) * 1000000)::BIGINT);

-- A group's grants. granted_by is who granted a permission through the
-- API; NULL for those the system grants (basic to every group, admin to
-- Admin).
CREATE TABLE group_permissions (
    group_id   BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    granted_by TEXT REFERENCES users (id) ON DELETE SET NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (group_id, permission)
);

INSERT INTO group_permissions (group_id, permission, granted_at)
SELECT id, CASE WHEN is_default AND name = 'Admin' THEN 'admin' ELSE 'basic' END, created_at FROM user_groups;

-- Every user that can act joins its role's default group: people (active
-- or not) and the service accounts of keys that are not revoked.
INSERT INTO user_group_members (group_id, user_id, is_curator)
SELECT g.id, u.id, FALSE
FROM users u JOIN user_groups g ON g.is_default AND g.name = CASE u.role WHEN 'admin' THEN 'Admin' ELSE 'Basic' END
WHERE u.role <> 'limited'
    AND (NOT u.service_account OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id));

-- +goose Down
-- Groups renamed on the way up keep their new names.
DELETE FROM user_group_members WHERE group_id IN (SELECT id FROM user_groups WHERE is_default);
DROP TABLE group_permissions;
DELETE FROM user_groups WHERE is_default;
ALTER TABLE user_groups DROP COLUMN is_default;
