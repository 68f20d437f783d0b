package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

// scimTypes gives the scimType of the SCIM error bodies of the error codes
// that have one (RFC 7644 section 3.12).
var scimTypes = map[string]string{
	quarry.EINVALID:  scim.InvalidValue,
	quarry.ECONFLICT: scim.Uniqueness,
}

// writeSCIMError writes the response of err to a SCIM request: the one
// place where errors become SCIM error bodies (RFC 7644 section 3.12,
// application/scim+json), as writeError is for the rest of the API. The
// protocol's refusals (*scim.Error: a bad filter, body or path) are 400
// with their scimType; quarry errors have their code's status (the
// statuses table) and message; anything else is a 500 whose cause goes to
// the log only. A client that went away gets statusClientClosed.
func (s *Server) writeSCIMError(w http.ResponseWriter, r *http.Request, err error) {
	if s.clientGone(w, r, err) {
		return
	}
	var se *scim.Error
	if errors.As(err, &se) {
		writeSCIM(w, http.StatusBadRequest, scim.NewErrorBody(http.StatusBadRequest, se.Type, se.Detail))
		return
	}
	status := s.errorStatus(w, r, err)
	writeSCIM(w, status, scim.NewErrorBody(status, scimTypes[quarry.ErrorCode(err)], quarry.ErrorMessage(err)))
}

// writeSCIM writes v as a SCIM body (application/scim+json) with status.
func writeSCIM(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	h := w.Header()
	h.Set("Content-Type", scim.MediaType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) // A failed write means the client left.
	return nil
}
