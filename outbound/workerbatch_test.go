package outbound

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// sentReport is a progress report as the server would read it.
type sentReport struct {
	Documents  []quarry.Document         `json:"documents"`
	Failures   []quarry.ConnectorFailure `json:"failures"`
	Checkpoint json.RawMessage           `json:"checkpoint"`
}

// summary renders a report as "3d 1f cp" (documents, failures, checkpoint
// sent or not).
func (r sentReport) summary() string {
	s := fmt.Sprintf("%dd %df", len(r.Documents), len(r.Failures))
	if string(r.Checkpoint) != "null" {
		s += " cp"
	}
	return s
}

func testDoc(id string, textBytes int) quarry.Document {
	return quarry.Document{ID: id, SemanticIdentifier: id, Source: "mock_connector",
		Sections: []quarry.Section{{Text: strings.Repeat("x", textBytes)}}, Metadata: map[string]any{}}
}

// docBytes is the JSON size of testDoc(id, n).
func docBytes(t *testing.T, id string, n int) int {
	d := testDoc(id, n)
	b, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestStepOutputBatches(t *testing.T) {
	small := docBytes(t, "d0", 10)
	checkpoint := json.RawMessage(`{"has_more":false,"last_document_id":"d9"}`)
	failure := quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: "f"}, FailureMessage: "boom"}
	tests := []struct {
		name     string
		limits   progressLimits
		docs     int
		textSize int
		failures int
		want     []string
	}{
		{"an empty step still sends its checkpoint", defaultProgressLimits(), 0, 10, 0, []string{"0d 0f cp"}},
		{"one report when all fits", defaultProgressLimits(), 3, 10, 2, []string{"3d 2f cp"}},
		{"documents per report", progressLimits{docs: 2, failures: 10, bytes: 1 << 20}, 5, 10, 0, []string{"2d 0f", "2d 0f", "1d 0f cp"}},
		{"failures per report", progressLimits{docs: 10, failures: 2, bytes: 1 << 20}, 1, 10, 3, []string{"1d 2f", "0d 1f cp"}},
		{"bytes per report", progressLimits{docs: 100, failures: 100, bytes: len(emptyProgress) + 2*small + 1}, 5, 10, 0,
			[]string{"2d 0f", "2d 0f", "1d 0f cp"}},
		{"the checkpoint alone when it does not fit", progressLimits{docs: 100, failures: 100, bytes: len(emptyProgress) + 2*small + 1}, 2, 10, 0,
			[]string{"2d 0f", "0d 0f cp"}},
		{"the server's limits", defaultProgressLimits(), 2500, 10, 1500, []string{"1000d 0f", "1000d 0f", "500d 1000f", "0d 500f cp"}},
		{"1 MiB bodies", defaultProgressLimits(), 5, 300 << 10, 0, []string{"3d 0f", "2d 0f cp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			send := func(_ context.Context, b *progressBatch) error {
				body := b.body()
				if len(body) != b.size() {
					t.Errorf("size() = %d, body has %d bytes", b.size(), len(body))
				}
				if len(body) > tt.limits.bytes {
					t.Errorf("a report has %d bytes, more than %d", len(body), tt.limits.bytes)
				}
				var r sentReport
				if err := json.Unmarshal(body, &r); err != nil {
					t.Fatalf("a report is not JSON: %v", err)
				}
				got = append(got, r.summary())
				return nil
			}
			o := newStepOutput(tt.limits, send)
			ctx := context.Background()
			for i := range tt.docs {
				d := testDoc(fmt.Sprint("d", i%10), tt.textSize)
				if err := o.Document(ctx, &d); err != nil {
					t.Fatal(err)
				}
			}
			// Documents and failures interleave: failures come after.
			for range tt.failures {
				if err := o.Failure(ctx, &failure); err != nil {
					t.Fatal(err)
				}
			}
			if err := o.end(ctx, checkpoint); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " | ") != strings.Join(tt.want, " | ") {
				t.Errorf("reports %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStepOutputRefusedDocuments(t *testing.T) {
	link := "https://example.com/big"
	big := testDoc("big", quarry.MaxDocumentBytes)
	big.Sections[0].Link = &link
	tests := []struct {
		name    string
		doc     quarry.Document
		wantID  string
		wantMsg string
	}{
		{"too large", big, "big", fmt.Sprintf("; a document may have at most %d", quarry.MaxDocumentBytes)},
		{"no id", quarry.Document{SemanticIdentifier: "x"}, "unknown", "A document needs an id"},
		{"no semantic identifier", quarry.Document{ID: "d1"}, "d1", "Document d1 needs a semantic_identifier"},
		{"id too long", quarry.Document{ID: strings.Repeat("i", quarry.MaxDocumentIDBytes+1), SemanticIdentifier: "x"},
			strings.Repeat("i", quarry.MaxDocumentIDBytes-len("…")) + "…", "A document id may have at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []sentReport
			o := newStepOutput(defaultProgressLimits(), func(_ context.Context, b *progressBatch) error {
				var r sentReport
				if err := json.Unmarshal(b.body(), &r); err != nil {
					t.Fatal(err)
				}
				got = append(got, r)
				return nil
			})
			if err := o.Document(context.Background(), &tt.doc); err != nil {
				t.Fatal(err)
			}
			if err := o.end(context.Background(), json.RawMessage(`{"has_more":false}`)); err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || len(got[0].Documents) != 0 || len(got[0].Failures) != 1 {
				t.Fatalf("reports %+v, want one with the document as a failure", got)
			}
			f := got[0].Failures[0]
			if f.FailedDocument == nil || f.FailedDocument.DocumentID != tt.wantID || !strings.Contains(f.FailureMessage, tt.wantMsg) {
				t.Errorf("failure %+v (document %+v), want document %q and a message with %q", f, f.FailedDocument, tt.wantID, tt.wantMsg)
			}
			if tt.doc.Link() != nil && (f.FailedDocument.DocumentLink == nil || *f.FailedDocument.DocumentLink != *tt.doc.Link()) {
				t.Errorf("failure's link %v, want %q", f.FailedDocument.DocumentLink, *tt.doc.Link())
			}
		})
	}
}

func TestStepOutputLimitsOfItself(t *testing.T) {
	o := newStepOutput(defaultProgressLimits(), func(context.Context, *progressBatch) error { return nil })
	huge := json.RawMessage(`{"has_more":true,"x":"` + strings.Repeat("y", quarry.MaxCheckpointBytes) + `"}`)
	if err := o.end(context.Background(), huge); err == nil || !strings.Contains(err.Error(), "a checkpoint may have at most") {
		t.Errorf("end with a checkpoint too large: %v", err)
	}
	// A failure's texts are clipped to what the server keeps.
	f := quarry.ConnectorFailure{FailedEntity: &quarry.EntityFailure{EntityID: strings.Repeat("e", 1<<20)},
		FailureMessage: strings.Repeat("m", 1<<20)}
	c := clipFailure(&f)
	if len(c.FailureMessage) > quarry.MaxErrorMessageBytes+len("…") || len(c.FailedEntity.EntityID) > maxFailureFieldBytes+len("…") {
		t.Errorf("clipped failure has a message of %d bytes and an entity id of %d", len(c.FailureMessage), len(c.FailedEntity.EntityID))
	}
	// An error from sending ends the step with it.
	stop := errors.New("stop")
	o = newStepOutput(progressLimits{docs: 1, failures: 1, bytes: 1 << 20}, func(context.Context, *progressBatch) error { return stop })
	d := testDoc("a", 1)
	if err := o.Document(context.Background(), &d); err != nil {
		t.Fatal(err)
	}
	if err := o.Document(context.Background(), &d); !errors.Is(err, stop) {
		t.Errorf("second document with a full report: %v, want the error of sending", err)
	}
}
