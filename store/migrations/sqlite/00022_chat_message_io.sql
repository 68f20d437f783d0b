-- The model providers (with their groups and models), the default model
-- and the default assistant (its instructions and tools) are kept between
-- requests too (store/cache.go): a message of a chat reads them all, and
-- on PostgreSQL each read is a round trip. Their tables bump cache_version
-- with every change, as 00011's do.
--
-- A message stored with a parent becomes its latest child by a trigger,
-- rather than by a second statement of the store's.
-- postgres/00022_chat_message_io.sql is the same schema, and stores a
-- search's result in chat_tool_calls uncompressed (SQLite does not
-- compress).

-- +goose Up
-- +goose StatementBegin
CREATE TRIGGER llm_providers_insert_bumps_cache AFTER INSERT ON llm_providers
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_providers_update_bumps_cache AFTER UPDATE ON llm_providers
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_providers_delete_bumps_cache AFTER DELETE ON llm_providers
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_provider_groups_insert_bumps_cache AFTER INSERT ON llm_provider_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_provider_groups_update_bumps_cache AFTER UPDATE ON llm_provider_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_provider_groups_delete_bumps_cache AFTER DELETE ON llm_provider_groups
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_models_insert_bumps_cache AFTER INSERT ON llm_models
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_models_update_bumps_cache AFTER UPDATE ON llm_models
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_models_delete_bumps_cache AFTER DELETE ON llm_models
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_default_model_insert_bumps_cache AFTER INSERT ON llm_default_model
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_default_model_update_bumps_cache AFTER UPDATE ON llm_default_model
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_default_model_delete_bumps_cache AFTER DELETE ON llm_default_model
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_insert_bumps_cache AFTER INSERT ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_update_bumps_cache AFTER UPDATE ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_delete_bumps_cache AFTER DELETE ON default_assistant
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_insert_bumps_cache AFTER INSERT ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_update_bumps_cache AFTER UPDATE ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER default_assistant_tools_delete_bumps_cache AFTER DELETE ON default_assistant_tools
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER chat_messages_latest_child AFTER INSERT ON chat_messages
WHEN NEW.parent_id IS NOT NULL
BEGIN
    UPDATE chat_messages SET latest_child_id = NEW.id WHERE id = NEW.parent_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER chat_messages_latest_child;
DROP TRIGGER llm_providers_insert_bumps_cache;
DROP TRIGGER llm_providers_update_bumps_cache;
DROP TRIGGER llm_providers_delete_bumps_cache;
DROP TRIGGER llm_provider_groups_insert_bumps_cache;
DROP TRIGGER llm_provider_groups_update_bumps_cache;
DROP TRIGGER llm_provider_groups_delete_bumps_cache;
DROP TRIGGER llm_models_insert_bumps_cache;
DROP TRIGGER llm_models_update_bumps_cache;
DROP TRIGGER llm_models_delete_bumps_cache;
DROP TRIGGER llm_default_model_insert_bumps_cache;
DROP TRIGGER llm_default_model_update_bumps_cache;
DROP TRIGGER llm_default_model_delete_bumps_cache;
DROP TRIGGER default_assistant_insert_bumps_cache;
DROP TRIGGER default_assistant_update_bumps_cache;
DROP TRIGGER default_assistant_delete_bumps_cache;
DROP TRIGGER default_assistant_tools_insert_bumps_cache;
DROP TRIGGER default_assistant_tools_update_bumps_cache;
DROP TRIGGER default_assistant_tools_delete_bumps_cache;
