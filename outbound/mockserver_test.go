package outbound_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// mockServer plays Onyx's mock connector server
// (backend/tests/integration/mock_services/mock_connector_server/main.py at
// v4.6.1): a test sets what the mock connector's steps yield
// (/set-behavior), the connector reads it once (/get-documents, which
// clears it) and posts the checkpoint of each step (/add-checkpoint),
// which the test reads back (/get-checkpoints). A test fixture, as Onyx's.
type mockServer struct {
	*httptest.Server

	mu          sync.Mutex
	yields      []json.RawMessage
	checkpoints []json.RawMessage
	// hold, when not nil, keeps each /add-checkpoint waiting until it is
	// closed or the request ends: a step that runs as long as a test
	// needs.
	hold chan struct{}
}

func newMockServer(t testing.TB) *mockServer {
	m := &mockServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /set-behavior", func(w http.ResponseWriter, r *http.Request) {
		var yields []json.RawMessage
		if !m.read(w, r, &yields) {
			return
		}
		m.mu.Lock()
		m.yields, m.checkpoints = yields, nil
		m.mu.Unlock()
		mockWriteJSON(w, http.StatusOK, nil)
	})
	mux.HandleFunc("GET /get-documents", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		yields := m.yields
		m.yields, m.checkpoints = nil, nil
		m.mu.Unlock()
		if len(yields) == 0 {
			mockWriteJSON(w, http.StatusBadRequest, map[string]string{"detail": "No documents or failures configured"})
			return
		}
		mockWriteJSON(w, http.StatusOK, yields)
	})
	mux.HandleFunc("POST /add-checkpoint", func(w http.ResponseWriter, r *http.Request) {
		var cp json.RawMessage
		if !m.read(w, r, &cp) {
			return
		}
		m.mu.Lock()
		m.checkpoints = append(m.checkpoints, cp)
		hold := m.hold
		m.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		mockWriteJSON(w, http.StatusOK, nil)
	})
	mux.HandleFunc("GET /get-checkpoints", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		cps := append([]json.RawMessage{}, m.checkpoints...)
		m.mu.Unlock()
		mockWriteJSON(w, http.StatusOK, cps)
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.yields, m.checkpoints = nil, nil
		m.mu.Unlock()
		mockWriteJSON(w, http.StatusOK, nil)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		mockWriteJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	m.Server = httptest.NewServer(mux)
	t.Cleanup(m.Close)
	return m
}

// read decodes the JSON body of r into v, or answers 422.
func (m *mockServer) read(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(r.Body)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		mockWriteJSON(w, http.StatusUnprocessableEntity, map[string]string{"detail": err.Error()})
		return false
	}
	return true
}

// setHold makes the next /add-checkpoint calls wait until the returned
// function is called.
func (m *mockServer) setHold() (release func()) {
	c := make(chan struct{})
	m.mu.Lock()
	m.hold = c
	m.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			m.hold = nil
			m.mu.Unlock()
			close(c)
		})
	}
}

func mockWriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
