package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
)

// FileSource is the source of the file connector.
const FileSource quarry.DocumentSource = "file"

// fileConfig is the file connector's configuration: Onyx's
// LocalFileConnector arguments, as POST /manage/admin/connector/file/upload
// returns them (file_paths become file_locations).
type fileConfig struct {
	FileLocations     []string        `json:"file_locations"`
	FileNames         []string        `json:"file_names"`
	ZipMetadataFileID *string         `json:"zip_metadata_file_id"`
	ZipMetadata       json.RawMessage `json:"zip_metadata"` // Onyx's deprecated inline form.
}

// fileConnector reads the files of the file store its configuration
// names, one document each: Onyx's LocalFileConnector, a LoadConnector.
// It also lists its documents' ids for a prune (Slim), where Onyx prunes a
// LoadConnector by loading it whole.
type fileConnector struct {
	cfg fileConfig
	env *Env
}

// NewFile returns the file connector of config (file_locations, the ids
// of files in the file store, and zip_metadata_file_id, the id of an
// uploaded zip's .onyx_metadata.json). It needs no credential: Onyx's
// pdf_password is not supported (an encrypted PDF is a failure). An empty
// file_locations reads nothing and succeeds, as Onyx's connector does;
// none at all is an error.
func NewFile(config, _ json.RawMessage, env *Env) (Connector, error) {
	var c fileConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with file_locations: %w", err)
	}
	if c.FileLocations == nil {
		return nil, errors.New("the configuration has no file_locations")
	}
	if env == nil || env.OpenFile == nil {
		return nil, errors.New("the file connector needs the file store")
	}
	e := *env
	if e.Log == nil {
		e.Log = slog.New(slog.DiscardHandler)
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	return Loaded(&fileConnector{cfg: c, env: &e}), nil
}

// Load reads every file, in order, and emits its document; a file that
// cannot be read (damaged, or of a kind Quarry does not read: see
// quarry.FileNotRead) is a failure of its document, where Onyx skips a
// file of a kind it does not read with a log line.
func (f *fileConnector) Load(ctx context.Context, out Emitter) error {
	meta, err := f.metadata(ctx)
	if err != nil {
		return err
	}
	for _, id := range f.cfg.FileLocations {
		file, err := f.env.OpenFile(ctx, id)
		if isNotFound(err) {
			f.env.Log.Warn("file connector: no file record; skipped", "file", id)
			continue
		}
		if err != nil {
			return err
		}
		d, ferr := f.document(file, meta)
		file.Content.Close()
		switch {
		case ferr != nil:
			if err := out.Failure(ctx, &quarry.ConnectorFailure{
				FailedDocument: &quarry.DocumentFailure{DocumentID: "FILE_CONNECTOR__" + id},
				FailureMessage: fmt.Sprintf("%s: %s", file.Name, ferr),
			}); err != nil {
				return err
			}
		case d != nil:
			if err := out.Document(ctx, d); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListIDs lists the ids the configuration's files give their documents,
// without reading the files: FILE_CONNECTOR__ and each file's id, and
// every id the zip's metadata gives. It may list ids of no document (a
// file Quarry does not read), never leave out one the files give: a
// document's id is one or the other, and the metadata is what Load reads.
// So a prune deletes the documents of the files the configuration no
// longer names (files/update's removal), unless the metadata still names
// their id.
func (f *fileConnector) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	meta, err := f.metadata(ctx)
	if err != nil {
		return err
	}
	var fromMeta []string
	for _, m := range meta {
		if id := str(m["id"]); id != "" {
			fromMeta = append(fromMeta, id)
		}
	}
	slices.Sort(fromMeta)
	var batch []string
	for _, id := range slices.Concat(prefixed("FILE_CONNECTOR__", f.cfg.FileLocations), fromMeta) {
		if batch = append(batch, id); len(batch) == 100 {
			if err := ids(ctx, batch); err != nil {
				return err
			}
			batch = nil
		}
	}
	if len(batch) > 0 {
		return ids(ctx, batch)
	}
	return nil
}

// prefixed returns each of ss with prefix before it.
func prefixed(prefix string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = prefix + s
	}
	return out
}

// metadata returns the zip's metadata by file name: the
// .onyx_metadata.json the configuration names (a list of objects with a
// filename, or an object by file name), or the deprecated inline form. A
// metadata file that does not load is logged and ignored, as Onyx does.
func (f *fileConnector) metadata(ctx context.Context) (map[string]map[string]any, error) {
	raw := f.cfg.ZipMetadata
	if id := f.cfg.ZipMetadataFileID; id != nil && *id != "" {
		file, err := f.env.OpenFile(ctx, *id)
		if isNotFound(err) {
			f.env.Log.Warn("file connector: the zip's metadata file is gone", "file", *id)
			return map[string]map[string]any{}, nil
		}
		if err != nil {
			return nil, err
		}
		defer file.Content.Close()
		b, err := io.ReadAll(io.LimitReader(file.Content, quarry.MaxMetadataBytes))
		if err != nil {
			return nil, err
		}
		raw = b
	}
	out := map[string]map[string]any{}
	if len(raw) == 0 {
		return out, nil
	}
	var list []map[string]any
	if json.Unmarshal(raw, &list) == nil {
		for _, m := range list {
			if name, ok := m["filename"].(string); ok {
				out[name] = m
			}
		}
		return out, nil
	}
	var byName map[string]map[string]any
	if err := json.Unmarshal(raw, &byName); err != nil {
		f.env.Log.Warn("file connector: the zip's metadata does not load; ignored")
		return out, nil
	}
	return byName, nil
}

// isNotFound reports whether err is the file store's answer for a file
// that is not there (404).
func isNotFound(err error) bool {
	var se interface{ NotFound() bool }
	if errors.As(err, &se) {
		return se.NotFound()
	}
	return false
}

// document returns the document of file, with meta (the zip's metadata
// by file name), as Onyx's _process_file makes it; a message (.eml) is
// titled by its subject, dated by its Date and has a section for its
// body and each attachment, as the IMAP connector reads one. A file of a
// kind Quarry does not read is an error that says so.
func (f *fileConnector) document(file *File, meta map[string]map[string]any) (*quarry.Document, error) {
	kind := quarry.FileKind(file.Name)
	if kind == "" {
		return nil, errors.New(quarry.FileNotRead(file.Name))
	}
	m := meta[file.Name]
	if m == nil {
		m = meta[path.Base(file.Name)]
	}
	var sections []quarry.Section
	var subject string
	var sent *quarry.Time
	var unread []string
	if kind == quarry.FileKindEML {
		// A message: its subject the title, its body and attachments
		// sections, as the IMAP connector reads one.
		md, err := readMessage(f.env.PDF, newBoundedReader(file.Content, maxFileInput, errFileTooLarge))
		if err != nil {
			return nil, err
		}
		size := 0
		for _, s := range md.Sections {
			if t := strings.TrimSpace(s.Text); t != "" {
				sections = append(sections, quarry.Section{Text: t})
				size += len(t)
			}
		}
		if size > quarry.MaxDocumentBytes {
			return nil, errTooMuchText
		}
		subject, sent = md.SemanticIdentifier, md.DocUpdatedAt
		for _, u := range md.unread {
			unread = append(unread, u.String())
			f.env.Log.Warn("file connector: an attachment of a message is not read", "file", file.ID, "attachment", u.name, "type", u.mediaType, "why", u.why)
		}
	} else {
		text, err := ExtractText(f.env.PDF, kind, file.Content, quarry.MaxDocumentBytes)
		if err != nil {
			return nil, err
		}
		if text = strings.TrimSpace(text); text != "" {
			sections = []quarry.Section{{Text: text}}
		}
	}
	d := &quarry.Document{ID: "FILE_CONNECTOR__" + file.ID, Source: FileSource, Metadata: map[string]any{}}
	display := str(m["file_display_name"])
	if display == "" {
		display = path.Base(file.Name)
	}
	d.SemanticIdentifier = display
	title := str(m["title"])
	if title == "" {
		title = subject
	}
	if title == "" {
		title = display
	}
	d.Title = &title
	if id := str(m["id"]); id != "" {
		d.ID = id
	}
	if src := str(m["connector_type"]); src != "" && quarry.DocumentSource(src).Valid() {
		d.Source = quarry.DocumentSource(src)
	}
	now := quarry.Time{Time: f.env.Now().UTC()}
	d.DocUpdatedAt = &now
	if sent != nil {
		d.DocUpdatedAt = sent
	}
	if s := str(m["doc_updated_at"]); s != "" {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				d.DocUpdatedAt = &quarry.Time{Time: t.UTC()}
				break
			}
		}
	}
	d.PrimaryOwners = owners(m["primary_owners"])
	d.SecondaryOwners = owners(m["secondary_owners"])
	for k, v := range m {
		switch k {
		case "document_id", "time_updated", "doc_updated_at", "link", "primary_owners", "secondary_owners",
			"filename", "file_display_name", "title", "connector_type", "pdf_password", "mime_type":
			continue
		}
		d.Metadata[k] = v
	}
	d.Metadata = quarry.CoerceMetadata(d.Metadata)
	if unread != nil {
		d.Metadata[unreadAttachmentsKey] = unread
	}
	link := str(m["link"])
	for i := range sections {
		if link != "" {
			sections[i].Link = &link
		}
	}
	d.Sections = sections
	return d, nil
}

// str returns v if it is a string, else "".
func str(v any) string {
	s, _ := v.(string)
	return s
}

// owners returns metadata's owner names as Onyx's BasicExpertInfo
// objects ({"display_name": name}).
func owners(v any) []json.RawMessage {
	names, _ := v.([]any)
	var out []json.RawMessage
	for _, n := range names {
		if s, ok := n.(string); ok {
			b, _ := json.Marshal(map[string]string{"display_name": s})
			out = append(out, b)
		}
	}
	return out
}
