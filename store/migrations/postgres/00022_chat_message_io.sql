-- The model providers (with their groups and models), the default model
-- and the default assistant (its instructions and tools) are kept between
-- requests too (store/cache.go): a message of a chat reads them all, and
-- on PostgreSQL each read is a round trip. Their tables bump cache_version
-- with every change, as 00011's do.
--
-- A message stored with a parent becomes its latest child by a trigger,
-- rather than by a second statement of the store's.
--
-- A search's result, which each answer keeps with its call of the tool
-- (chat_tool_calls.response, tens of kilobytes), is stored uncompressed:
-- compressing it (pglz) took most of the time an answer takes to be
-- written. sqlite/00022_chat_message_io.sql is the same schema, but for
-- that (SQLite does not compress); the triggers are deferred to the
-- commit, as 00011's.

-- +goose Up
CREATE CONSTRAINT TRIGGER llm_providers_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON llm_providers
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER llm_provider_groups_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON llm_provider_groups
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER llm_models_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON llm_models
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER llm_default_model_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON llm_default_model
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER default_assistant_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON default_assistant
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();
CREATE CONSTRAINT TRIGGER default_assistant_tools_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON default_assistant_tools
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();

ALTER TABLE chat_tool_calls ALTER COLUMN response SET STORAGE EXTERNAL;

-- +goose StatementBegin
CREATE FUNCTION chat_messages_latest_child() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE chat_messages SET latest_child_id = NEW.id WHERE id = NEW.parent_id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER chat_messages_latest_child AFTER INSERT ON chat_messages
    FOR EACH ROW WHEN (NEW.parent_id IS NOT NULL) EXECUTE FUNCTION chat_messages_latest_child();

-- +goose Down
DROP TRIGGER chat_messages_latest_child ON chat_messages;
DROP FUNCTION chat_messages_latest_child();
ALTER TABLE chat_tool_calls ALTER COLUMN response SET STORAGE EXTENDED;
DROP TRIGGER llm_providers_bumps_cache ON llm_providers;
DROP TRIGGER llm_provider_groups_bumps_cache ON llm_provider_groups;
DROP TRIGGER llm_models_bumps_cache ON llm_models;
DROP TRIGGER llm_default_model_bumps_cache ON llm_default_model;
DROP TRIGGER default_assistant_bumps_cache ON default_assistant;
DROP TRIGGER default_assistant_tools_bumps_cache ON default_assistant_tools;
