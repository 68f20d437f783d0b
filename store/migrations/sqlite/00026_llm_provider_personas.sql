-- Model providers restricted to assistants (issue 42, item 3): Onyx's
-- llm_provider__persona. A provider with rows here is used only in the
-- chats of those assistants, whoever the person (quarry.Caller.
-- CanUseLLMProvider). Kept between requests with the providers, so it
-- bumps cache_version as llm_provider_groups does (00022).
-- postgres/00026_llm_provider_personas.sql is the same schema.

-- +goose Up
CREATE TABLE llm_provider_personas (
    llm_provider_id INTEGER NOT NULL REFERENCES llm_providers (id) ON DELETE CASCADE,
    persona_id      INTEGER NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    PRIMARY KEY (llm_provider_id, persona_id)
);
CREATE INDEX llm_provider_personas_persona ON llm_provider_personas (persona_id);
-- +goose StatementBegin
CREATE TRIGGER llm_provider_personas_insert_bumps_cache AFTER INSERT ON llm_provider_personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_provider_personas_update_bumps_cache AFTER UPDATE ON llm_provider_personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER llm_provider_personas_delete_bumps_cache AFTER DELETE ON llm_provider_personas
BEGIN
    UPDATE cache_version SET version = version + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TABLE llm_provider_personas;
