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
	// ExternalAccess is who may read the document at its source, as the
	// connector of a sync pair reports it; nil for the others.
	ExternalAccess *ExternalAccess `json:"external_access,omitempty"`
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

// Onyx's ingestion API: documents other systems push into a pair.

// IngestionDocumentID returns the id of a pushed document, as Onyx's
// Document.from_base gives it: its own id made URL-compatible, or
// "ingestion_api_" and its semantic identifier made so.
func IngestionDocumentID(id, semanticIdentifier string) string {
	if id != "" {
		return URLCompatible(id)
	}
	return "ingestion_api_" + URLCompatible(semanticIdentifier)
}

// URLCompatible is Onyx's make_url_compatible: spaces become underscores,
// then every byte but ASCII letters, digits and "_.-~" is percent-encoded
// (Python's urllib.parse.quote with safe="").
func URLCompatible(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('_')
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-', c == '~':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// CoerceMetadata returns metadata as Onyx's DocumentBase keeps it: each
// value a string, or a list of strings. Strings stay, numbers are written
// as JSON writes them, true, false and null as Python writes them ("True",
// "False", "None"), objects as their JSON text.
func CoerceMetadata(m map[string]any) map[string]any {
	str := func(v any) string {
		switch v := v.(type) {
		case string:
			return v
		case bool:
			if v {
				return "True"
			}
			return "False"
		case nil:
			return "None"
		}
		b, _ := json.Marshal(v) // Values decoded from JSON always encode.
		return string(b)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if list, ok := v.([]any); ok {
			items := make([]string, len(list))
			for i, item := range list {
				items[i] = str(item)
			}
			out[k] = items
			continue
		}
		out[k] = str(v)
	}
	return out
}

// DocumentInfo is a pair's copy of a document as the ingestion routes list
// it: Onyx's DocMinimalInfo, and the pair it is of (Quarry's extension:
// each pair's copy is listed as its own, see DocumentCopy).
type DocumentInfo struct {
	DocumentID string  `json:"document_id"`
	SemanticID string  `json:"semantic_id"`
	Link       *string `json:"link"`
	CCPairID   int64   `json:"cc_pair_id"`
}

// Errors of the ingestion API.
var (
	// ErrNoDefaultPair answers a pushed document that names no pair: Onyx
	// puts it in its default pair (connector 0, public to everyone);
	// Quarry has none, so that nothing becomes public by omission.
	ErrNoDefaultPair = Errorf(EINVALID, "cc_pair_id is required: Quarry has no default pair for pushed documents; name the pair they belong to")
	// ErrPushPairNotFound is Onyx's answer for a pair that does not exist
	// (or that the caller cannot see).
	ErrPushPairNotFound = Errorf(EINVALID, "Connector-Credential Pair specified does not exist")
	// ErrDocumentNotFound answers a document that no pair the caller can
	// see holds.
	ErrDocumentNotFound = Errorf(ENOTFOUND, "Document not found")
	// ErrNotIngested answers the deletion, through the ingestion API, of a
	// document a connector brought.
	ErrNotIngested = Errorf(EINVALID, "Document was not created via the ingestion API")
)

// PairDocument is a document of a pair as the console lists it: what it
// is, when it was written and how it came (pushed through the ingestion
// API, or brought by a connector).
type PairDocument struct {
	DocumentID       string  `json:"document_id"`
	SemanticID       string  `json:"semantic_id"`
	Link             *string `json:"link"`
	DocUpdatedAt     *Time   `json:"doc_updated_at"`
	IndexedAt        Time    `json:"indexed_at"`
	FromIngestionAPI bool    `json:"from_ingestion_api"`
}

// PairDocumentText is one document of a pair with its text: its sections
// as stored, and their text joined by blank lines.
type PairDocumentText struct {
	PairDocument
	Title    *string        `json:"title"`
	Source   DocumentSource `json:"source"`
	Metadata map[string]any `json:"metadata"`
	Sections []Section      `json:"sections"`
	Text     string         `json:"text"`
}

// DocumentText returns d's sections' text, joined by blank lines.
func (d *Document) DocumentText() string {
	parts := make([]string, len(d.Sections))
	for i, s := range d.Sections {
		parts[i] = s.Text
	}
	return strings.Join(parts, "\n\n")
}

// ErrPairDocumentNotFound answers a document the pair does not hold.
var ErrPairDocumentNotFound = Errorf(ENOTFOUND, "Document not found")
