package outbound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
)

// Errors of the worker protocol that decide what a worker does.
var (
	// ErrWorkerRevoked is the answer (401) to a worker whose token was
	// revoked, or a registration token that cannot make workers: the
	// worker stops.
	ErrWorkerRevoked = errors.New("the server refused the worker's token: it was revoked or has expired")
	// ErrAttemptNotHeld is the answer (409) to a report on an attempt the
	// worker no longer holds: it abandons the attempt.
	ErrAttemptNotHeld = errors.New("the attempt is not held by this worker")
	// ErrCredentialChanged is the answer (412) to a credential written
	// back after it changed on the server.
	ErrCredentialChanged = errors.New("the credential changed on the server since it was read")
)

// WorkerAPI is a client of the worker protocol: the routes under /worker
// of a Quarry server (api/worker.go), with a worker's token.
type WorkerAPI struct {
	http  *http.Client
	base  string // The server's URL, with its base path, without a trailing slash.
	token string
}

// NewWorkerAPI returns a client of the server at base (its URL with its
// base path, such as https://quarry.example.com/api) that sends token
// (a worker's, qrw_...) through client.
func NewWorkerAPI(client *http.Client, base, token string) *WorkerAPI {
	return &WorkerAPI{http: client, base: strings.TrimRight(base, "/"), token: token}
}

// RegisterWorker registers a worker named name at the server at base with
// a registration token (qrr_...), and returns the worker's own token and
// id. A registration token refused is ErrWorkerRevoked.
func RegisterWorker(ctx context.Context, client *http.Client, base, registration, name string) (token string, id int64, err error) {
	var out struct {
		WorkerID int64  `json:"worker_id"`
		Token    string `json:"token"`
	}
	c := NewWorkerAPI(client, base, registration)
	if err := c.call(ctx, http.MethodPost, "/worker/register", map[string]string{"name": name}, &out); err != nil {
		return "", 0, fmt.Errorf("registering worker %q: %w", name, err)
	}
	if !quarry.ValidWorkerTokenFormat(out.Token) {
		return "", 0, fmt.Errorf("registering worker %q: the server's answer has no worker token", name)
	}
	return out.Token, out.WorkerID, nil
}

// Lease takes the oldest attempt waiting for a worker, or returns nil when
// none waits.
func (c *WorkerAPI) Lease(ctx context.Context) (*quarry.Lease, error) {
	var out struct {
		Attempt *quarry.Lease `json:"attempt"`
	}
	if err := c.call(ctx, http.MethodPost, "/worker/lease", struct{}{}, &out); err != nil {
		return nil, fmt.Errorf("leasing an attempt: %w", err)
	}
	return out.Attempt, nil
}

// Heartbeat renews the leases of the attempts held, and returns those to
// stop now (their cancellation was asked, or they are no longer held).
func (c *WorkerAPI) Heartbeat(ctx context.Context, held []int64) (stop []int64, err error) {
	var out struct {
		Stop []int64 `json:"stop"`
	}
	if held == nil {
		held = []int64{}
	}
	if err := c.call(ctx, http.MethodPost, "/worker/heartbeat", map[string][]int64{"attempt_ids": held}, &out); err != nil {
		return nil, fmt.Errorf("heartbeat: %w", err)
	}
	return out.Stop, nil
}

// Credential returns the credential of attempt id's pair and its version.
// Its value must never be logged.
func (c *WorkerAPI) Credential(ctx context.Context, id int64) (json.RawMessage, int64, error) {
	var out struct {
		Credential json.RawMessage `json:"credential_json"`
		Version    int64           `json:"version"`
	}
	if err := c.call(ctx, http.MethodGet, fmt.Sprintf("/worker/attempts/%d/credential", id), nil, &out); err != nil {
		return nil, 0, fmt.Errorf("reading the credential of attempt %d: %w", id, err)
	}
	return out.Credential, out.Version, nil
}

// PutCredential writes back the credential of attempt id's pair, read at
// version, and returns its new version; ErrCredentialChanged if it changed
// since.
func (c *WorkerAPI) PutCredential(ctx context.Context, id int64, credential json.RawMessage, version int64) (int64, error) {
	var out struct {
		Version int64 `json:"version"`
	}
	in := struct {
		Credential json.RawMessage `json:"credential_json"`
		Version    int64           `json:"version"`
	}{credential, version}
	if err := c.call(ctx, http.MethodPut, fmt.Sprintf("/worker/attempts/%d/credential", id), in, &out); err != nil {
		return 0, fmt.Errorf("writing back the credential of attempt %d: %w", id, err)
	}
	return out.Version, nil
}

// Progress reports a batch of attempt id, body being its JSON
// (progressBatch.body).
func (c *WorkerAPI) Progress(ctx context.Context, id int64, body []byte) (*quarry.ProgressResult, error) {
	var out quarry.ProgressResult
	if err := c.call(ctx, http.MethodPost, fmt.Sprintf("/worker/attempts/%d/progress", id), json.RawMessage(body), &out); err != nil {
		return nil, fmt.Errorf("reporting progress of attempt %d: %w", id, err)
	}
	return &out, nil
}

// Finish ends attempt id as f says, and returns the status it ended in.
func (c *WorkerAPI) Finish(ctx context.Context, id int64, f quarry.Finish) (quarry.IndexingStatus, error) {
	var out struct {
		Status quarry.IndexingStatus `json:"status"`
	}
	in := struct {
		Status   quarry.IndexingStatus `json:"status"`
		ErrorMsg *string               `json:"error_msg"`
		Trace    *string               `json:"full_exception_trace"`
		Reason   *quarry.StopReason    `json:"reason,omitempty"`
	}{f.Status, f.ErrorMsg, f.FullExceptionTrace, nil}
	if f.Reason != "" {
		in.Reason = &f.Reason
	}
	if err := c.call(ctx, http.MethodPost, fmt.Sprintf("/worker/attempts/%d/finish", id), in, &out); err != nil {
		return "", fmt.Errorf("finishing attempt %d: %w", id, err)
	}
	return out.Status, nil
}

// File returns the content of file id, which attempt id's connector
// names, as a stream the caller closes, with its name and MIME type.
func (c *WorkerAPI) File(ctx context.Context, attempt int64, id string) (*connector.File, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/worker/attempts/%d/files/%s", c.base, attempt, url.PathEscape(id)), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading file %s of attempt %d: %w", id, attempt, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		switch resp.StatusCode {
		case http.StatusUnauthorized:
			return nil, ErrWorkerRevoked
		case http.StatusConflict:
			return nil, fmt.Errorf("%w: %s", ErrAttemptNotHeld, answerDetail(b))
		}
		return nil, fmt.Errorf("reading file %s of attempt %d: %w", id, attempt, &WorkerAPIError{Status: resp.StatusCode, Detail: answerDetail(b)})
	}
	name, _ := url.QueryUnescape(resp.Header.Get("X-Quarry-File-Name"))
	typ, _ := url.QueryUnescape(resp.Header.Get("X-Quarry-File-Type"))
	return &connector.File{ID: id, Name: name, Type: typ, Size: resp.ContentLength, Content: resp.Body}, nil
}

// WorkerAPIError is an answer of the server other than 200 that is not
// one of the protocol's errors above.
type WorkerAPIError struct {
	Status int
	Detail string // Its detail, clipped.
}

// NotFound reports whether the answer was 404: the file connector skips
// a file that is gone.
func (e *WorkerAPIError) NotFound() bool { return e.Status == http.StatusNotFound }

func (e *WorkerAPIError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("the server answered %d %s", e.Status, http.StatusText(e.Status))
	}
	return fmt.Sprintf("the server answered %d: %s", e.Status, e.Detail)
}

// callTries is how many times a call is sent when the server cannot be
// reached or is unavailable (502, 503, 504). A progress report sent again
// after the server took it, its answer lost, records its failures twice;
// its documents are written once (unchanged ones are left as they are).
const callTries = 3

// call sends in (as JSON; no body if nil) to path and decodes the JSON
// answer into out, sending it again after a pause when the server could
// not be reached or was unavailable.
func (c *WorkerAPI) call(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	var err error
	for try := 1; ; try++ {
		var retry bool
		retry, err = c.send(ctx, method, path, body, out)
		if !retry || try == callTries {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try) * time.Second):
		}
	}
}

// send sends one request, and says whether it is worth sending again.
func (c *WorkerAPI) send(ctx context.Context, method, path string, body []byte, out any) (retry bool, err error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return false, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		if out == nil {
			return false, nil
		}
		if err := json.Unmarshal(b, out); err != nil {
			return false, fmt.Errorf("the server's answer: %w", err)
		}
		return false, nil
	case resp.StatusCode == http.StatusUnauthorized:
		return false, ErrWorkerRevoked
	case resp.StatusCode == http.StatusConflict:
		return false, fmt.Errorf("%w: %s", ErrAttemptNotHeld, answerDetail(b))
	case resp.StatusCode == http.StatusPreconditionFailed:
		return false, ErrCredentialChanged
	}
	unavailable := resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable ||
		resp.StatusCode == http.StatusGatewayTimeout
	return unavailable, &WorkerAPIError{Status: resp.StatusCode, Detail: answerDetail(b)}
}

// answerDetail returns the detail of an error answer ({"detail": ...}),
// or its text, clipped.
func answerDetail(b []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil && len(e.Detail) > 0 {
		var s string
		if json.Unmarshal(e.Detail, &s) == nil {
			return quarry.ClipText(s, 512)
		}
		return quarry.ClipText(string(e.Detail), 512)
	}
	return quarry.ClipText(string(b), 512)
}
