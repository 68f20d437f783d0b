package quarry

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Document is what a connector fetches: Onyx's Document (its text
// sections, its identity at the source and its metadata), as workers send
// it. It lands in Quarry's document store, per pair.
type Document struct {
	ID                 string            `json:"id"`
	Sections           []Section         `json:"sections"`
	Source             DocumentSource    `json:"source"`
	SemanticIdentifier string            `json:"semantic_identifier"`
	Title              *string           `json:"title,omitempty"`
	Metadata           map[string]any    `json:"metadata"` // Values are strings or lists of strings.
	DocUpdatedAt       *Time             `json:"doc_updated_at,omitempty"`
	PrimaryOwners      []json.RawMessage `json:"primary_owners,omitempty"`
	SecondaryOwners    []json.RawMessage `json:"secondary_owners,omitempty"`
}

// Section is a part of a document's text, with the link that leads to it:
// Onyx's TextSection.
type Section struct {
	Text string  `json:"text"`
	Link *string `json:"link,omitempty"`
}

// Limits on one document.
const (
	MaxDocumentIDBytes = 512       // Its id.
	MaxDocumentBytes   = 512 << 10 // Its JSON, text included: a larger one is a per-document failure.
)

// Check reports why d cannot be stored: it needs an id and a semantic
// identifier, within the limits.
func (d *Document) Check() error {
	switch {
	case strings.TrimSpace(d.ID) == "":
		return Errorf(EINVALID, "A document needs an id")
	case len(d.ID) > MaxDocumentIDBytes:
		return Errorf(EINVALID, "A document id may have at most %d bytes", MaxDocumentIDBytes)
	case strings.TrimSpace(d.SemanticIdentifier) == "":
		return Errorf(EINVALID, "Document %s needs a semantic_identifier", ClipText(d.ID, 80))
	}
	return nil
}

// Link returns the link of d's first section that has one, or nil.
func (d *Document) Link() *string {
	for _, s := range d.Sections {
		if s.Link != nil && *s.Link != "" {
			return s.Link
		}
	}
	return nil
}

// ConnectorFailure is a document or an entity a connector could not fetch:
// Onyx's ConnectorFailure, which becomes an IndexAttemptError.
type ConnectorFailure struct {
	FailedDocument *DocumentFailure `json:"failed_document"`
	FailedEntity   *EntityFailure   `json:"failed_entity"`
	FailureMessage string           `json:"failure_message"`
}

// DocumentFailure names the document of a ConnectorFailure.
type DocumentFailure struct {
	DocumentID   string  `json:"document_id"`
	DocumentLink *string `json:"document_link"`
}

// EntityFailure names the entity of a ConnectorFailure (say, a channel),
// and the time range of its documents that were missed.
type EntityFailure struct {
	EntityID        string  `json:"entity_id"`
	MissedTimeRange []*Time `json:"missed_time_range"` // Start and end, or null.
}

// Check reports why f cannot be recorded: it names a document or an
// entity (exactly one, as Onyx's ConnectorFailure), whose id is not empty
// and within MaxDocumentIDBytes; a link within 2 KiB; a missed time range
// of a start and an end, or none.
func (f *ConnectorFailure) Check() error {
	bad := func(why string) error { return Errorf(EINVALID, "A connector failure %s", why) }
	switch d, e := f.FailedDocument, f.FailedEntity; {
	case (d == nil) == (e == nil):
		return bad("names a failed_document or a failed_entity, and only one")
	case d != nil && (strings.TrimSpace(d.DocumentID) == "" || len(d.DocumentID) > MaxDocumentIDBytes):
		return bad(fmt.Sprintf("names a document by an id of 1 to %d bytes", MaxDocumentIDBytes))
	case d != nil && d.DocumentLink != nil && len(*d.DocumentLink) > 2048:
		return bad("links to its document with at most 2048 bytes")
	case e != nil && (strings.TrimSpace(e.EntityID) == "" || len(e.EntityID) > MaxDocumentIDBytes):
		return bad(fmt.Sprintf("names an entity by an id of 1 to %d bytes", MaxDocumentIDBytes))
	case e != nil && len(e.MissedTimeRange) != 0 && (len(e.MissedTimeRange) != 2 || e.MissedTimeRange[0] == nil || e.MissedTimeRange[1] == nil):
		return bad("misses a time range of a start and an end, or none")
	}
	return nil
}

// AttemptError returns the error f records on an attempt of a pair.
func (f *ConnectorFailure) AttemptError() IndexAttemptError {
	e := IndexAttemptError{FailureMessage: ClipText(f.FailureMessage, MaxErrorMessageBytes)}
	if d := f.FailedDocument; d != nil {
		e.DocumentID, e.DocumentLink = &d.DocumentID, d.DocumentLink
	}
	if en := f.FailedEntity; en != nil {
		e.EntityID = &en.EntityID
		if len(en.MissedTimeRange) == 2 {
			e.FailedTimeRangeStart, e.FailedTimeRangeEnd = en.MissedTimeRange[0], en.MissedTimeRange[1]
		}
	}
	return e
}
