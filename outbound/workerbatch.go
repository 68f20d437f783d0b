package outbound

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry"
)

// progressLimits bound one progress report (POST
// /worker/attempts/{id}/progress): its documents, its failures, and the
// bytes of its body, which the server refuses beyond its body limit.
type progressLimits struct {
	docs, failures int
	bytes          int
}

// defaultProgressLimits are the server's: quarry.MaxBatchDocuments and
// quarry.MaxBatchFailures, and its default body limit (1 MiB).
func defaultProgressLimits() progressLimits {
	return progressLimits{docs: quarry.MaxBatchDocuments, failures: quarry.MaxBatchFailures, bytes: 1 << 20}
}

// progressBatch is one progress report, its documents and failures kept
// as their JSON.
type progressBatch struct {
	docs, failures []json.RawMessage
	checkpoint     json.RawMessage // nil: unchanged.
}

// emptyProgress is the body of a report with nothing in it.
const emptyProgress = `{"documents":[],"failures":[],"checkpoint":null}`

// body returns the JSON body of the report.
func (b *progressBatch) body() []byte {
	out := make([]byte, 0, b.size())
	out = append(out, `{"documents":[`...)
	for i, d := range b.docs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, d...)
	}
	out = append(out, `],"failures":[`...)
	for i, f := range b.failures {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, f...)
	}
	out = append(out, `],"checkpoint":`...)
	if b.checkpoint == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, b.checkpoint...)
	}
	return append(out, '}')
}

// size returns the length of the report's body.
func (b *progressBatch) size() int {
	n := len(emptyProgress)
	for i, d := range b.docs {
		n += len(d) + min(i, 1)
	}
	for i, f := range b.failures {
		n += len(f) + min(i, 1)
	}
	if b.checkpoint != nil {
		n += len(b.checkpoint) - len("null")
	}
	return n
}

// stepOutput takes the output of one connector step (it is the step's
// Emitter) and sends it as progress reports within the limits, as soon as
// a report is full: a worker holds at most one report of a step, never
// the whole step. The checkpoint goes with the last report of the step
// (end), so that it never runs ahead of the documents it covers. A
// document the server would refuse (too large, no id) is sent as a
// per-document failure instead: nothing is dropped silently.
type stepOutput struct {
	limits progressLimits
	send   func(ctx context.Context, b *progressBatch) error
	batch  progressBatch
	bytes  int // batch.size(), kept as items come.

	docs, failures int // Sent or waiting, in this step.

	mask func(string) string // Masks the credential's values in a failure's message; nil: none.
}

// newStepOutput returns the output of a step that sends its reports with
// send. Set its mask to mask the credential's values in failure messages.
func newStepOutput(limits progressLimits, send func(ctx context.Context, b *progressBatch) error) *stepOutput {
	return &stepOutput{limits: limits, send: send, bytes: len(emptyProgress)}
}

// Document takes a document the step found.
func (o *stepOutput) Document(ctx context.Context, d *quarry.Document) error {
	if err := d.Check(); err != nil {
		return o.Failure(ctx, documentFailure(d, err.Error()))
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return o.Failure(ctx, documentFailure(d, "The document cannot be encoded as JSON: "+err.Error()))
	}
	if len(raw) > quarry.MaxDocumentBytes {
		return o.Failure(ctx, documentFailure(d, fmt.Sprintf("The document has %d bytes of JSON; a document may have at most %d",
			len(raw), quarry.MaxDocumentBytes)))
	}
	o.docs++
	return o.add(ctx, &o.batch.docs, o.limits.docs, raw)
}

// Failure takes a document or an entity the step could not fetch.
func (o *stepOutput) Failure(ctx context.Context, f *quarry.ConnectorFailure) error {
	c := clipFailure(f)
	if o.mask != nil { // A connector's words may quote its credential.
		c.FailureMessage = o.mask(c.FailureMessage)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding a connector failure: %w", err)
	}
	o.failures++
	return o.add(ctx, &o.batch.failures, o.limits.failures, raw)
}

// add appends raw to the list of the batch, of at most limit items,
// sending the batch first if raw would not fit in it.
func (o *stepOutput) add(ctx context.Context, list *[]json.RawMessage, limit int, raw []byte) error {
	grow := len(raw) + min(len(*list), 1)
	if len(*list) >= limit || o.bytes+grow > o.limits.bytes {
		if err := o.flush(ctx); err != nil {
			return err
		}
		grow = len(raw) + min(len(*list), 1)
	}
	*list = append(*list, raw)
	o.bytes += grow
	return nil
}

// end sends what is left of the step with checkpoint, the one the step
// reached: always one report, even with nothing else in it.
func (o *stepOutput) end(ctx context.Context, checkpoint json.RawMessage) error {
	if len(checkpoint) > quarry.MaxCheckpointBytes {
		return fmt.Errorf("the connector's checkpoint has %d bytes of JSON; a checkpoint may have at most %d",
			len(checkpoint), quarry.MaxCheckpointBytes)
	}
	if o.bytes+len(checkpoint)-len("null") > o.limits.bytes {
		if err := o.flush(ctx); err != nil {
			return err
		}
	}
	o.batch.checkpoint = checkpoint
	return o.flush(ctx)
}

// flush sends the batch, if it holds anything, and starts the next.
func (o *stepOutput) flush(ctx context.Context) error {
	if len(o.batch.docs) == 0 && len(o.batch.failures) == 0 && o.batch.checkpoint == nil {
		return nil
	}
	b := o.batch
	o.batch, o.bytes = progressBatch{}, len(emptyProgress)
	return o.send(ctx, &b)
}

// documentFailure returns the per-document failure that stands for d,
// which could not be sent, with why.
func documentFailure(d *quarry.Document, why string) *quarry.ConnectorFailure {
	return &quarry.ConnectorFailure{
		FailedDocument: &quarry.DocumentFailure{DocumentID: d.ID, DocumentLink: d.Link()},
		FailureMessage: why,
	}
}

// maxFailureFieldBytes bounds the links of a failure as sent; ids are
// bounded by quarry.MaxDocumentIDBytes, as the server keeps them.
const maxFailureFieldBytes = 2 << 10

// clipFailure returns f with its texts clipped to what the server keeps,
// so that no failure alone can outgrow a report.
func clipFailure(f *quarry.ConnectorFailure) *quarry.ConnectorFailure {
	c := quarry.ConnectorFailure{FailureMessage: quarry.ClipText(f.FailureMessage, quarry.MaxErrorMessageBytes)}
	if d := f.FailedDocument; d != nil {
		c.FailedDocument = &quarry.DocumentFailure{DocumentID: clipID(d.DocumentID), DocumentLink: clipFailureField(d.DocumentLink)}
	}
	if e := f.FailedEntity; e != nil {
		c.FailedEntity = &quarry.EntityFailure{EntityID: clipID(e.EntityID)}
		if r := e.MissedTimeRange; len(r) >= 2 && r[0] != nil && r[1] != nil {
			c.FailedEntity.MissedTimeRange = r[:2]
		}
	}
	if c.FailedDocument != nil && c.FailedEntity != nil { // One only, as the server keeps it.
		c.FailedEntity = nil
	}
	if c.FailedDocument == nil && c.FailedEntity == nil { // Of nothing named: of the connector.
		c.FailedEntity = &quarry.EntityFailure{EntityID: "connector"}
	}
	return &c
}

// clipID returns a failure's document or entity id within what the server
// keeps: not empty, at most quarry.MaxDocumentIDBytes.
func clipID(id string) string {
	if strings.TrimSpace(id) == "" {
		return "unknown"
	}
	if len(id) <= quarry.MaxDocumentIDBytes {
		return id
	}
	return quarry.ClipText(id, quarry.MaxDocumentIDBytes-len("…"))
}

// clipFailureField clips a failure's id or link, which may be nil, to
// maxFailureFieldBytes.
func clipFailureField(s *string) *string {
	if s == nil {
		return nil
	}
	c := quarry.ClipText(*s, maxFailureFieldBytes)
	return &c
}
