package api

import (
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/store"
)

// Assistants' avatars (Onyx v4.6.1's persona images; the rules in
// avatar.go): POST /admin/persona/upload-image keeps an image in the file
// store, an assistant names it by its uploaded_image_id (api/persona.go),
// and GET /persona/{persona_id}/avatar serves it.

// avatarUploadPath is the route of avatars' uploads, whose body may be as
// large as an avatar and its form (avatarBodyBytes).
const avatarUploadPath = "/admin/persona/upload-image"

// avatarBodyBytes bounds the body of an avatar's upload: the image and
// room for the form's headers and other fields.
const avatarBodyBytes = quarry.MaxAvatarBytes + 64<<10

// avatarCacheControl is how long an avatar is kept by the browser of the
// person who read it: a file never changes once kept, and a new avatar is
// a new file (and a new ETag).
const avatarCacheControl = "private, max-age=31536000, immutable"

// handleUploadAvatar serves POST /admin/persona/upload-image: Onyx's
// upload_file, for every person with basic access. The image (multipart
// field "file", one) is spooled as the file connector's uploads are, its
// type sniffed from its bytes (quarry.AvatarType), and kept with origin
// quarry.FileOriginAvatar, the caller its uploader: {"file_id": …}.
func (s *Server) handleUploadAvatar(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	form, err := spoolForm(w, r, "file")
	defer form.remove()
	switch {
	case err != nil:
		return err
	case !form.hasFiles:
		// FastAPI's 422: file is required.
		return decode.Errors{{Type: "missing", Loc: []any{"body", "file"}, Msg: "Field required", Input: nil}}
	case len(form.files) == 0:
		return quarry.Errorf(quarry.EINVALID, "The field file must hold a file, with its file name")
	case len(form.files) > 1:
		return quarry.Errorf(quarry.EINVALID, "Upload one image at a time")
	}
	p := form.files[0]
	if p.size > quarry.MaxAvatarBytes {
		return quarry.ErrAvatarTooLarge
	}
	head := make([]byte, 512)
	n, err := p.file.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return err
	}
	ct, err := quarry.AvatarType(head[:n])
	if err != nil {
		return err
	}
	f := p.file
	kept, err := s.db.SaveFiles(r.Context(), c, []store.NewFile{{DisplayName: p.name, FileType: ct, Origin: quarry.FileOriginAvatar,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(f, 0, 1<<62)), nil }}})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, avatarUploadResponse{FileID: kept[0].ID})
}

// handlePersonaAvatar serves GET /persona/{persona_id}/avatar: Onyx's
// get_persona_avatar. The image of an assistant the caller may read, with
// its stored type, its id as ETag (If-None-Match naming it: 304) and kept
// by the caller's browser alone; every failure is the same 404
// (quarry.ErrAvatarNotFound).
func (s *Server) handlePersonaAvatar(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in personaRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f, err := s.db.PersonaAvatar(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	tag := `"` + f.ID + `"`
	h := w.Header()
	h.Set("Cache-Control", avatarCacheControl)
	h.Set("ETag", tag)
	h.Set("Vary", "Cookie, Authorization")
	if noneMatch(r, tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	rc := s.db.OpenFile(r.Context(), f)
	defer rc.Close()
	h.Set("Content-Type", f.FileType)
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rc); err != nil {
		// Too late for an error answer: the body is shorter than its
		// Content-Length.
		s.log.WarnContext(r.Context(), "sending an avatar failed", "file", f.ID, "err", err)
	}
	return nil
}

// noneMatch reports whether the If-None-Match header of r names tag, or
// is "*" (RFC 9110, weak comparison).
func noneMatch(r *http.Request, tag string) bool {
	for _, line := range r.Header.Values("If-None-Match") {
		for _, t := range strings.Split(line, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag {
				return true
			}
		}
	}
	return false
}

// avatarUploadResponse is the answer to POST /admin/persona/upload-image.
type avatarUploadResponse struct {
	FileID string `json:"file_id"`
}
