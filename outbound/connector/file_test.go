package connector

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"
)

// fileStore is a file store in memory, for the file connector's Env.
type fileStore map[string][2]string // id: name and content.

func (fs fileStore) open(_ context.Context, id string) (*File, error) {
	f, ok := fs[id]
	if !ok {
		return nil, notFound{}
	}
	return &File{ID: id, Name: f[0], Size: int64(len(f[1])), Content: io.NopCloser(strings.NewReader(f[1]))}, nil
}

// notFound is the file store's answer for a file it does not have.
type notFound struct{}

func (notFound) Error() string  { return "File not found" }
func (notFound) NotFound() bool { return true }

// The file connector lists FILE_CONNECTOR__ and each file's id, and every
// id the zip's metadata gives, without reading the files; an empty
// file_locations reads nothing and succeeds, as Onyx's; a configuration
// without file_locations is refused.
func TestFileListIDs(t *testing.T) {
	fs := fileStore{
		"a1": {"a.txt", "alpha"}, "b2": {"b.txt", "beta"}, "m3": {".onyx_metadata.json",
			`[{"filename":"b.txt","id":"doc-b"},{"filename":"gone.txt","id":"doc-gone"},{"filename":"c.txt"}]`},
	}
	env := &Env{OpenFile: fs.open, PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler)}
	list := func(cfg string) ([]string, error) {
		c, err := NewFile(json.RawMessage(cfg), nil, env)
		if err != nil {
			return nil, err
		}
		var ids []string
		slim, _ := As[Slim](c)
		err = slim.ListIDs(context.Background(), func(_ context.Context, batch []string) error {
			ids = append(ids, batch...)
			return nil
		})
		return ids, err
	}
	ids, err := list(`{"file_locations":["a1","b2","missing"],"file_names":["a.txt","b.txt","x.txt"],"zip_metadata_file_id":"m3"}`)
	if want := []string{"FILE_CONNECTOR__a1", "FILE_CONNECTOR__b2", "FILE_CONNECTOR__missing", "doc-b", "doc-gone"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("ListIDs = %q, %v; want %q", ids, err, want)
	}
	if ids, err := list(`{"file_locations":[],"file_names":[],"zip_metadata_file_id":null}`); err != nil || len(ids) != 0 {
		t.Errorf("ListIDs of no file = %q, %v; want none", ids, err)
	}
	c, err := NewFile(json.RawMessage(`{"file_locations":[],"file_names":[]}`), nil, env)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	if _, err := c.Step(context.Background(), Window{}, c.FirstCheckpoint(), rec); err != nil || len(rec.docs)+len(rec.failures) != 0 {
		t.Errorf("a run of no file: %v, %d documents, %d failures; want a success with nothing", err, len(rec.docs), len(rec.failures))
	}
	for _, cfg := range []string{`{}`, `{"file_locations":null}`} {
		if _, err := NewFile(json.RawMessage(cfg), nil, env); err == nil || !strings.Contains(err.Error(), "no file_locations") {
			t.Errorf("NewFile(%s) = %v, want the configuration refused", cfg, err)
		}
	}
}
