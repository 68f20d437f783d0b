-- Assistants' avatars (issue 42, item 2): Onyx's persona.uploaded_image_id,
-- the id of an image of the file store uploaded through POST
-- /admin/persona/upload-image (files.origin 'persona_avatar'). No foreign
-- key: files are never deleted, and GET /persona/{persona_id}/avatar
-- answers 404 for an id the file store does not hold or that is not an
-- avatar's. sqlite/00027_persona_avatars.sql is the same schema.

-- +goose Up
ALTER TABLE personas ADD COLUMN uploaded_image_id TEXT;

-- +goose Down
ALTER TABLE personas DROP COLUMN uploaded_image_id;
