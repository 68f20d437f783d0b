package outbound

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// InProcessTransport is an http.RoundTripper that serves each request with
// Handler, in this process, with no network: `quarry serve` gives its own
// worker a client with it (base URL "http://in-process" plus the base
// path), so that the worker in the server speaks the same protocol as
// those on other machines, through the same routes, authentication and
// limits. The handler sees a server request from 127.0.0.1; the answer is
// read whole before it is returned.
type InProcessTransport struct {
	Handler http.Handler
}

// RoundTrip serves req with the handler and returns what it wrote.
func (t *InProcessTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	in := req.Clone(req.Context())
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "127.0.0.1:0"
	in.Host = req.URL.Host
	in.Proto, in.ProtoMajor, in.ProtoMinor = "HTTP/1.1", 1, 1
	w := &inProcessWriter{header: http.Header{}}
	t.Handler.ServeHTTP(w, in)
	in.Body.Close()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	h := w.sent
	if h == nil {
		h = w.header.Clone()
	}
	if h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.Itoa(w.body.Len()))
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", w.status, http.StatusText(w.status)),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()),
		Request:       req,
	}, nil
}

// inProcessWriter is the http.ResponseWriter of an in-process request: it
// keeps the status, the headers as they were when it was written, and the
// body.
type inProcessWriter struct {
	header http.Header
	sent   http.Header // The headers at WriteHeader.
	status int
	body   bytes.Buffer
}

func (w *inProcessWriter) Header() http.Header { return w.header }

func (w *inProcessWriter) WriteHeader(status int) {
	if w.status != 0 || status < 200 {
		return // Informational answers and repeated calls are dropped.
	}
	w.status = status
	w.sent = w.header.Clone()
}

func (w *inProcessWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.body.Write(b)
}

// Flush does nothing: the answer is returned whole.
func (w *inProcessWriter) Flush() {}
