package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// Onyx's ingestion API (/onyx-api/…): other systems push documents into a
// pair, list them and delete them; and the documents of a pair. The rules
// are the store's and the root package's (document.go).

// document returns the pushed document as Quarry keeps it, as Onyx's
// Document.from_base makes it: its id made URL-compatible (or made from
// its semantic identifier), the ingestion API its source unless it names
// one, updated now unless it says when, with the access it reports (which
// only a sync pair reads: quarry.ExternalAccess).
func (b *documentBase) document(now time.Time) (*quarry.Document, error) {
	d := &quarry.Document{SemanticIdentifier: b.SemanticIdentifier, Source: "ingestion_api", Title: value(b.Title)}
	id := ""
	if v := value(b.ID); v != nil {
		id = *v
	}
	d.ID = quarry.IngestionDocumentID(id, b.SemanticIdentifier)
	if v := value(b.Source); v != nil {
		d.Source = *v
	}
	for i, raw := range b.Sections {
		var s struct {
			Type *string `json:"type"`
			Text *string `json:"text"`
			Link *string `json:"link"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || (s.Type != nil && *s.Type != "text") || s.Text == nil {
			return nil, quarry.Errorf(quarry.EINVALID, "Section %d is not a text section ({\"text\": …, \"link\": …}): Quarry keeps no files for image or tabular sections", i)
		}
		d.Sections = append(d.Sections, quarry.Section{Text: *s.Text, Link: s.Link})
	}
	meta, err := quarry.DecodeObject(b.Metadata)
	if err != nil {
		return nil, err
	}
	d.Metadata = quarry.CoerceMetadata(meta)
	t := quarry.Time{Time: now.UTC()}
	if v := value(b.DocUpdatedAt); v != nil {
		t = quarry.Time{Time: v.UTC()}
	}
	d.DocUpdatedAt = &t
	if v := value(b.PrimaryOwners); v != nil {
		d.PrimaryOwners = *v
	}
	if v := value(b.SecondaryOwners); v != nil {
		d.SecondaryOwners = *v
	}
	if v := value(b.ExternalAccess); v != nil {
		d.ExternalAccess = &quarry.ExternalAccess{ExternalUserEmails: v.ExternalUserEmails,
			ExternalUserGroupIDs: v.ExternalUserGroupIDs, IsPublic: v.IsPublic}
	}
	return d, nil
}

// handleIngest serves POST /onyx-api/ingestion.
func (s *Server) handleIngest(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in ingestRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	d, err := in.Body.Document.document(time.Now())
	if err != nil {
		return err
	}
	existed, err := s.db.Ingest(r.Context(), c, value(in.Body.CCPairID), d)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		DocumentID     string `json:"document_id"`
		AlreadyExisted bool   `json:"already_existed"`
	}{d.ID, existed})
}

// handleIngestedDocuments serves GET /onyx-api/ingestion: the pushed
// documents of the pairs the caller can see.
func (s *Server) handleIngestedDocuments(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	ds, err := s.db.IngestedDocuments(r.Context(), c)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ds)
}

// handlePairDocuments serves GET /onyx-api/connector-docs/{cc_pair_id}.
func (s *Server) handlePairDocuments(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in ccPairIDPath
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	ds, err := s.db.PairDocuments(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ds)
}

// handleDeleteIngested serves DELETE /onyx-api/ingestion/{document_id}.
func (s *Server) handleDeleteIngested(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in deleteIngestedRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.DeleteIngested(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}
