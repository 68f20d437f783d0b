-- Model providers restricted to assistants (issue 42, item 3): Onyx's
-- llm_provider__persona. A provider with rows here is used only in the
-- chats of those assistants, whoever the person (quarry.Caller.
-- CanUseLLMProvider). Kept between requests with the providers, so it
-- bumps cache_version as llm_provider_groups does (00022).
-- sqlite/00026_llm_provider_personas.sql is the same schema.

-- +goose Up
CREATE TABLE llm_provider_personas (
    llm_provider_id BIGINT NOT NULL REFERENCES llm_providers (id) ON DELETE CASCADE,
    persona_id      BIGINT NOT NULL REFERENCES personas (id) ON DELETE CASCADE,
    PRIMARY KEY (llm_provider_id, persona_id)
);
CREATE INDEX llm_provider_personas_persona ON llm_provider_personas (persona_id);
CREATE CONSTRAINT TRIGGER llm_provider_personas_bumps_cache AFTER INSERT OR UPDATE OR DELETE ON llm_provider_personas
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bump_cache_version();

-- +goose Down
DROP TABLE llm_provider_personas;
