package quarry

import (
	"bytes"
	"encoding/json"
	"slices"
)

// The files of a file connector, as Onyx v4.6.1's routes GET
// /manage/admin/connector/{connector_id}/files and POST
// .../files/update list and change them: the rules on who may, and how
// the connector's configuration changes.

// Onyx's answers of the files routes.
var (
	// ErrConnectorFilesNotFound answers a connector that does not exist
	// (404).
	ErrConnectorFilesNotFound = Errorf(ENOTFOUND, "Connector not found")
	// ErrNotFileConnector answers a connector of another source (400).
	ErrNotFileConnector = Errorf(EINVALID, "This endpoint only works with file connectors")
	// ErrNoFilePair answers a file connector with no cc-pair (404).
	ErrNoFilePair = Errorf(ENOTFOUND, "No Connector-Credential Pair found for this connector")
	// ErrCannotManageFiles answers a caller who may not list or change the
	// connector's files (403).
	ErrCannotManageFiles = Errorf(EFORBIDDEN, "Access denied. User cannot manage files for this connector.")
	// ErrLastFile answers an update that would leave the connector no
	// file (400).
	ErrLastFile = Errorf(EINVALID, "Cannot remove all files from connector. At least one file must remain.")
)

// CheckConnectorFiles reports why c may not list (edit false) or change
// (edit true) the files of the connector of source, shared as s and paired
// as pairs, in Onyx's order: a connector c cannot see is 403, as Onyx
// answers (its test of curators asks for it), before anything else of it
// is told; then one of another source (400), one without a pair (404);
// listing needs a pair c can see, changing CanChangeConnectorFiles.
func (c *Caller) CheckConnectorFiles(source DocumentSource, s ConnectorSharing, pairs []*CCPair, edit bool) error {
	seen := slices.ContainsFunc(pairs, c.CanSeePair)
	switch {
	case !c.CanSeeConnector(s, seen):
		return ErrCannotManageFiles
	case source != "file":
		return ErrNotFileConnector
	case len(pairs) == 0:
		return ErrNoFilePair
	case !edit && !seen, edit && !c.CanChangeConnectorFiles(s, pairs):
		return ErrCannotManageFiles
	}
	return nil
}

// CanChangeConnectorFiles reports whether c may add files to, and remove
// files from, the file connector shared as s and paired as pairs: those
// who may change the connector (CanChangeConnector), and, as Onyx v4.6.1's
// special case, a global curator when every pair of it (at least one) is
// public.
func (c *Caller) CanChangeConnectorFiles(s ConnectorSharing, pairs []*CCPair) bool {
	if c.CanChangeConnector(s, pairs) {
		return true
	}
	return c.Role == RoleGlobalCurator && len(pairs) > 0 && !slices.ContainsFunc(pairs, func(p *CCPair) bool {
		return p.AccessType != AccessPublic
	})
}

// FileConnectorFiles are the files a file connector's configuration
// names: Onyx's file_locations (file ids), file_names (as many, padded
// with the ids when the configuration has fewer, as Onyx's
// _normalize_file_names_for_backwards_compatibility) and
// zip_metadata_file_id.
type FileConnectorFiles struct {
	Locations  []string
	Names      []string
	MetadataID *string
}

// ReadFileConnectorFiles reads the files of a file connector's
// configuration. Entries of file_locations that are not strings, which no
// upload writes, are left out with their names.
func ReadFileConnectorFiles(config json.RawMessage) *FileConnectorFiles {
	var c struct {
		Locations []any `json:"file_locations"`
		Names     []any `json:"file_names"`
		Metadata  any   `json:"zip_metadata_file_id"`
	}
	_ = json.Unmarshal(config, &c) // A configuration that does not parse names no file.
	f := &FileConnectorFiles{Locations: []string{}, Names: []string{}}
	for i, v := range c.Locations {
		id, ok := v.(string)
		if !ok {
			continue
		}
		name := id
		if i < len(c.Names) {
			if n, ok := c.Names[i].(string); ok {
				name = n
			}
		}
		f.Locations, f.Names = append(f.Locations, id), append(f.Names, name)
	}
	if id, ok := c.Metadata.(string); ok && id != "" {
		f.MetadataID = &id
	}
	return f
}

// ParseFileIDsToRemove parses Onyx's file_ids_to_remove form field: a
// JSON list (Onyx's 400s otherwise). Its strings are the ids; anything
// else in it names no file.
func ParseFileIDsToRemove(field string) ([]string, error) {
	var v any
	if err := json.Unmarshal([]byte(field), &v); err != nil {
		return nil, Errorf(EINVALID, "Invalid file_ids_to_remove format")
	}
	list, ok := v.([]any)
	if !ok {
		return nil, Errorf(EINVALID, "file_ids_to_remove must be a JSON-encoded list")
	}
	var ids []string
	for _, e := range list {
		if id, ok := e.(string); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// Update returns f without the files whose ids are in remove and with
// the files added (their ids and names) after the others, how many files
// it removed, and the names no file has any more, whose metadata goes:
// Onyx's update_connector_files, which also drops the metadata of a name
// another file still has. At least one file must remain (ErrLastFile).
func (f *FileConnectorFiles) Update(remove, addIDs, addNames []string) (next *FileConnectorFiles, removed int, gone []string, err error) {
	next = &FileConnectorFiles{Locations: []string{}, Names: []string{}}
	var names []string
	for i, id := range f.Locations {
		if slices.Contains(remove, id) {
			removed++
			names = append(names, f.Names[i])
			continue
		}
		next.Locations, next.Names = append(next.Locations, id), append(next.Names, f.Names[i])
	}
	next.Locations, next.Names = append(next.Locations, addIDs...), append(next.Names, addNames...)
	if len(next.Locations) == 0 {
		return nil, 0, nil, ErrLastFile
	}
	for _, n := range names {
		if !slices.Contains(next.Names, n) && !slices.Contains(gone, n) {
			gone = append(gone, n)
		}
	}
	return next, removed, gone, nil
}

// Apply returns config with f's files (file_locations, file_names,
// zip_metadata_file_id) and without Onyx's deprecated inline zip_metadata,
// its other keys kept.
func (f *FileConnectorFiles) Apply(config json.RawMessage) (json.RawMessage, error) {
	keys := map[string]json.RawMessage{}
	if err := json.Unmarshal(config, &keys); err != nil || keys == nil {
		keys = map[string]json.RawMessage{}
	}
	delete(keys, "zip_metadata")
	for k, v := range map[string]any{"file_locations": f.Locations, "file_names": f.Names, "zip_metadata_file_id": f.MetadataID} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		keys[k] = b
	}
	return json.Marshal(keys)
}

// MergeZipMetadata merges the .onyx_metadata.json of a file connector
// (current) with that of a zip just added (added), as Onyx's
// update_connector_files: each by file name (a list of objects by their
// filename, or an object by name), the current entries of the files
// removed left out, the added entries over the current ones. It returns
// the merged metadata as an object by file name, in the order the names
// came, or nil when no entry is left. Metadata that is neither form (the
// file connector ignores it) has no entry; so has a list's object without
// a filename.
func MergeZipMetadata(current, added []byte, removed []string) []byte {
	var names []string
	entries := map[string]json.RawMessage{}
	put := func(name string, v json.RawMessage) {
		if _, ok := entries[name]; !ok {
			names = append(names, name)
		}
		entries[name] = v
	}
	read := func(b []byte, keep func(string) bool) {
		var list []json.RawMessage
		if json.Unmarshal(b, &list) == nil {
			for _, v := range list {
				var e struct {
					Filename any `json:"filename"`
				}
				if json.Unmarshal(v, &e) != nil {
					continue
				}
				if name, ok := e.Filename.(string); ok && keep(name) {
					put(name, v)
				}
			}
			return
		}
		var byName orderedObject
		if json.Unmarshal(b, &byName) == nil {
			for _, kv := range byName {
				if keep(kv.key) {
					put(kv.key, kv.value)
				}
			}
		}
	}
	read(current, func(name string) bool { return !slices.Contains(removed, name) })
	read(added, func(string) bool { return true })
	if len(names) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		json.Compact(&b, entries[name])
	}
	b.WriteByte('}')
	return b.Bytes()
}

// orderedObject is a JSON object's members in their order.
type orderedObject []struct {
	key   string
	value json.RawMessage
}

// UnmarshalJSON implements json.Unmarshaler: a JSON object, or an error.
func (o *orderedObject) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return Errorf(EINVALID, "not a JSON object")
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*o = append(*o, struct {
			key   string
			value json.RawMessage
		}{t.(string), v})
	}
	return nil
}
