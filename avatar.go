package quarry

import "bytes"

// Assistants' avatars (Onyx v4.6.1's persona images): an image uploaded
// through POST /admin/persona/upload-image is kept in the file store with
// origin FileOriginAvatar, and an assistant names it by its
// uploaded_image_id; GET /persona/{persona_id}/avatar serves it to those
// who may read the assistant. These are their rules.

// FileOriginAvatar is the origin of an image uploaded as an assistant's
// avatar. Onyx keeps them as chat_upload, with its chat's uploads; Quarry
// gives them an origin of their own, so that no file uploaded for another
// purpose (a file connector's) is ever named or served as an avatar.
const FileOriginAvatar = "persona_avatar"

// MaxAvatarBytes bounds an avatar's image: 5 MiB.
const MaxAvatarBytes = 5 << 20

// avatarTypes are the types an avatar's image may have, each with the
// bytes its content starts with (at offset 8, "WEBPVP", after a RIFF
// header for WebP), as the WHATWG's sniffing (Go's
// http.DetectContentType) tells them: raster images only (no SVG, which
// may hold scripts).
var avatarTypes = []struct {
	contentType string
	magic       string
}{
	{"image/png", "\x89PNG\r\n\x1a\n"},
	{"image/jpeg", "\xff\xd8\xff"},
	{"image/gif", "GIF87a"},
	{"image/gif", "GIF89a"},
	{"image/webp", "RIFF"},
}

// ErrAvatarNotFound answers every failure to serve an assistant's avatar
// (Onyx's 404): no such assistant, one the caller may not read, none set,
// or a file that is not an avatar's upload, so that none can be told from
// another.
var ErrAvatarNotFound = Errorf(ENOTFOUND, "Avatar not found")

// ErrAvatarTooLarge answers an avatar's image over MaxAvatarBytes (413).
var ErrAvatarTooLarge = Errorf(ETOOLARGE, "An assistant's image may be at most 5 MiB (%d bytes)", MaxAvatarBytes)

// AvatarType returns the type of an image whose content starts with head
// (its first 512 bytes, or all of it when shorter), sniffed from the bytes
// whatever the upload says: PNG, JPEG, GIF or WebP; anything else is an
// EINVALID error.
func AvatarType(head []byte) (string, error) {
	for _, t := range avatarTypes {
		if !bytes.HasPrefix(head, []byte(t.magic)) {
			continue
		}
		if t.contentType != "image/webp" || len(head) >= 14 && string(head[8:14]) == "WEBPVP" {
			return t.contentType, nil
		}
	}
	return "", Errorf(EINVALID, "An assistant's image must be a PNG, JPEG, GIF or WebP image")
}

// PersonaImage returns the avatar an assistant has after in: old's
// (nil for a new assistant), unless in names another or asks to remove it
// (Onyx's remove_image, which with no uploaded_image_id leaves none). An
// empty id is none.
func (in *PersonaInput) PersonaImage(old *Persona) *string {
	img := in.UploadedImageID
	if img != nil && *img == "" {
		img = nil
	}
	if old != nil && img == nil && !in.RemoveImage {
		return old.UploadedImageID
	}
	return img
}

// CheckPersonaImage reports why c may not give assistant old (nil for a
// new one) the avatar id, whose file is f (nil when the file store has
// none of that id): an assistant keeps the avatar it has, and is given
// only an image c uploaded as an avatar (origin FileOriginAvatar,
// uploaded by c), so that no one names another's file, nor a file of
// another origin. Every other id is the same 400, which tells nothing of
// the file.
func (c *Caller) CheckPersonaImage(old *Persona, id string, f *File) error {
	if old != nil && old.UploadedImageID != nil && *old.UploadedImageID == id {
		return nil
	}
	if f == nil || f.Origin != FileOriginAvatar || f.UploadedBy == "" || f.UploadedBy != c.ID {
		return Errorf(EINVALID, "uploaded_image_id %s is not an image you uploaded through /admin/persona/upload-image", ClipText(id, 80))
	}
	return nil
}

// CheckAvatar reports whether file f (nil when the file store has none of
// its id) may be served as assistant p's avatar: only a file uploaded as
// an avatar (ErrAvatarNotFound otherwise, whatever the reason).
func CheckAvatar(p *Persona, f *File) error {
	if p.UploadedImageID == nil || f == nil || f.ID != *p.UploadedImageID || f.Origin != FileOriginAvatar {
		return ErrAvatarNotFound
	}
	return nil
}
