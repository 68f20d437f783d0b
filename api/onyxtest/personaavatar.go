package onyxtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

// The replay of Onyx v4.6.1's personas/test_persona_avatar.py: an
// assistant's avatar uploaded through POST /admin/persona/upload-image,
// named by uploaded_image_id, and read through GET
// /persona/{persona_id}/avatar by those who may read the assistant.

// avatarPNGBytes is the test's _AVATAR_PNG_BYTES, a 1x1 PNG.
var avatarPNGBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNk" +
	"YAAAAAYAAjCB0C8AAAAASUVORK5CYII=")

// uploadPersonaAvatar is the test's _upload_persona_avatar: the PNG as the
// multipart field "file" (avatar.png, image/png), raise_for_status, the
// answer's file_id.
func (c client) uploadPersonaAvatar(by User) (string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="avatar.png"`)
	h.Set("Content-Type", "image/png")
	w, _ := mw.CreatePart(h)
	w.Write(avatarPNGBytes)
	mw.Close()
	r, err := c.do(by, "POST", "/admin/persona/upload-image", b.String(), "Content-Type", mw.FormDataContentType())
	if err != nil {
		return "", err
	}
	obj, err := keys(r, "file_id")
	if err != nil {
		return "", err
	}
	var id string
	if err := json.Unmarshal(obj["file_id"], &id); err != nil {
		return "", &validationError{"a file_id string", err, r.Body}
	}
	return id, nil
}

// createPersonaWithAvatar is the test's _create_persona_with_avatar: POST
// /persona with a raw payload, raise_for_status, the answer's id.
func (c client) createPersonaWithAvatar(owner User, name string, isPublic bool, uploadedImageID *string) (int64, error) {
	r, err := c.do(owner, "POST", "/persona", map[string]any{"name": name, "description": name + " description", "system_prompt": "",
		"task_prompt": "", "document_set_ids": []int64{}, "tool_ids": []int64{}, "is_public": isPublic, "datetime_aware": false,
		"uploaded_image_id": uploadedImageID})
	if err != nil {
		return 0, err
	}
	obj, err := keys(r, "id")
	if err != nil {
		return 0, err
	}
	var id int64
	if err := json.Unmarshal(obj["id"], &id); err != nil {
		return 0, &validationError{"an id", err, r.Body}
	}
	return id, nil
}

// personaAvatarSetup is the test's PersonaAvatarSetup.
type personaAvatarSetup struct {
	owner, other                    User
	publicID, privateID, noAvatarID int64
}

// newPersonaAvatarSetup is the test's persona_avatar_setup fixture: the
// owner (the first person, so an admin, as in Onyx) with a public and a
// private assistant with avatars and a public one without, and another
// person.
func (c client) newPersonaAvatarSetup(t *testing.T) personaAvatarSetup {
	t.Helper()
	owner := must(c.createUser("avatar_owner", ""))(t).caller()
	other := must(c.createUser("avatar_other", ""))(t).caller()
	publicFile := must(c.uploadPersonaAvatar(owner))(t)
	publicID := must(c.createPersonaWithAvatar(owner, "public avatar persona", true, &publicFile))(t)
	privateFile := must(c.uploadPersonaAvatar(owner))(t)
	privateID := must(c.createPersonaWithAvatar(owner, "private avatar persona", false, &privateFile))(t)
	noAvatarID := must(c.createPersonaWithAvatar(owner, "no avatar persona", true, nil))(t)
	return personaAvatarSetup{owner, other, publicID, privateID, noAvatarID}
}

// avatarPath is the avatar route of assistant id.
func avatarPath(id int64) string { return fmt.Sprintf("/persona/%d/avatar", id) }

var personaAvatarReplays = []Replay{
	{Name: "personas/test_persona_avatar.py/test_persona_owner_can_fetch_their_avatar", Run: func(t *testing.T, c client) {
		s := c.newPersonaAvatarSetup(t)
		r := c.tg.Do(s.owner, "GET", avatarPath(s.publicID), nil)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, strings.HasPrefix(r.Header.Get("Content-Type"), "image/"), "content-type %q", r.Header.Get("Content-Type"))
		check(t, bytes.Equal(r.Body, avatarPNGBytes), "content %q", clip(r.Body))
	}},
	{Name: "personas/test_persona_avatar.py/test_public_persona_avatar_is_accessible_to_other_users", Run: func(t *testing.T, c client) {
		s := c.newPersonaAvatarSetup(t)
		r := c.tg.Do(s.other, "GET", avatarPath(s.publicID), nil)
		check(t, r.Status == 200, "status %d: %s", r.Status, clip(r.Body))
		check(t, bytes.Equal(r.Body, avatarPNGBytes), "content %q", clip(r.Body))
	}},
	{Name: "personas/test_persona_avatar.py/test_private_persona_avatar_is_denied_to_other_users", Run: func(t *testing.T, c client) {
		s := c.newPersonaAvatarSetup(t)
		r := c.tg.Do(s.other, "GET", avatarPath(s.privateID), nil)
		check(t, r.Status == 404, "Non-member should not be able to read a private persona's avatar, got %d: %s", r.Status, clip(r.Body))
		check(t, !bytes.Equal(r.Body, avatarPNGBytes), "the avatar was served")
	}},
	{Name: "personas/test_persona_avatar.py/test_persona_avatar_returns_404_when_no_avatar_configured", Run: func(t *testing.T, c client) {
		s := c.newPersonaAvatarSetup(t)
		r := c.tg.Do(s.owner, "GET", avatarPath(s.noAvatarID), nil)
		check(t, r.Status == 404, "status %d: %s", r.Status, clip(r.Body))
	}},
	{Name: "personas/test_persona_avatar.py/test_persona_avatar_returns_404_for_missing_persona", Run: func(t *testing.T, c client) {
		u := must(c.createUser("missing_persona_user", ""))(t).caller()
		r := c.tg.Do(u, "GET", avatarPath(99999999), nil)
		check(t, r.Status == 404, "status %d: %s", r.Status, clip(r.Body))
	}},
}
