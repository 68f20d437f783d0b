package api_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/bench"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

var benchPairs = flag.Int("pairs", 10000, "number of cc-pairs of the status benchmark's dataset")

// statusBench is a server on a seeded database, and a client for it.
type statusBench struct {
	db     *store.DB
	srv    *httptest.Server
	client *http.Client
	admin  string
}

func newStatusBench(b *testing.B) *statusBench {
	b.Helper()
	db := storetest.Open(b)
	seeded, err := bench.Seed(context.Background(), db, bench.DefaultSeedSpec(*benchPairs), nil)
	if err != nil {
		b.Fatal(err)
	}
	h := api.NewServer(api.Config{MaskCredentials: true}, db, slog.New(slog.DiscardHandler))
	// As quarry serve does at start: a whole read of a large listing takes
	// longer than a request may wait for it.
	if err := h.LoadStatus(context.Background()); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return &statusBench{db: db, srv: srv, client: srv.Client(), admin: seeded.AdminToken}
}

// get fetches path from the server and returns the body's length.
func (s *statusBench) get(b *testing.B, url string) int {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+s.admin)
	res, err := s.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("status %d, %v", res.StatusCode, err)
	}
	return int(n)
}

// invalidate makes the next listing a cold one, by a write that changes
// the data version (outside the timer).
func (s *statusBench) invalidate(b *testing.B) {
	req, _ := http.NewRequest("PATCH", s.srv.URL+"/manage/credential/1", stringsReader(`{"name": "credential-00001"}`))
	req.Header.Set("Authorization", "Bearer "+s.admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("invalidating: %v %v", res, err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
}

// BenchmarkConnectorStatus measures GET /manage/admin/connector/status as
// an admin over a seeded dataset (-pairs, default 10,000): cold (every
// request after a write, so the cache is brought up to date from the
// change log), warm (no write in between), whole (a new server's first
// listing, read whole), and the floor: the same bytes served from memory
// by the same HTTP stack. It reports the response size, the heap the cache
// holds and the bytes allocated per cold request relative to it.
func BenchmarkConnectorStatus(b *testing.B) {
	s := newStatusBench(b)
	url := s.srv.URL + "/manage/admin/connector/status"
	size := s.get(b, url)
	b.Run(fmt.Sprintf("pairs=%d/cold", *benchPairs), func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s.invalidate(b)
			b.StartTimer()
			s.get(b, url)
		}
		reportSize(b, size)
	})
	b.Run(fmt.Sprintf("pairs=%d/warm", *benchPairs), func(b *testing.B) {
		s.get(b, url)
		for b.Loop() {
			s.get(b, url)
		}
		reportSize(b, size)
	})
	b.Run(fmt.Sprintf("pairs=%d/floor", *benchPairs), func(b *testing.B) {
		body := make([]byte, size)
		floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.Write(body)
		}))
		defer floor.Close()
		for b.Loop() {
			s.get(b, floor.URL)
		}
		reportSize(b, size)
	})
	b.Run(fmt.Sprintf("pairs=%d/whole", *benchPairs), func(b *testing.B) {
		// A new server's first read of the listing, whole, from the
		// database (without writing it out).
		for b.Loop() {
			b.StopTimer()
			h := api.NewServer(api.Config{MaskCredentials: true}, s.db, slog.New(slog.DiscardHandler))
			b.StartTimer()
			if err := h.LoadStatus(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		reportSize(b, size)
	})
	b.Run(fmt.Sprintf("pairs=%d/cache-memory", *benchPairs), func(b *testing.B) {
		// The heap a server holds once it has read the listing: its
		// cache, over the size of the listing.
		var worst uint64
		for b.Loop() {
			b.StopTimer()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			h := api.NewServer(api.Config{MaskCredentials: true}, s.db, slog.New(slog.DiscardHandler))
			b.StartTimer()
			if err := h.LoadStatus(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			worst = max(worst, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc))
			runtime.KeepAlive(h)
			b.StartTimer()
		}
		b.ReportMetric(float64(worst)/float64(size), "cache/response")
		reportSize(b, size)
	})
	b.Run(fmt.Sprintf("pairs=%d/cold-memory", *benchPairs), func(b *testing.B) {
		// Bytes allocated by one cold request with the collector off: an
		// upper bound of the request's peak extra memory.
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
		var worst uint64
		for b.Loop() {
			b.StopTimer()
			s.invalidate(b)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.StartTimer()
			s.get(b, url)
			b.StopTimer()
			runtime.ReadMemStats(&after)
			worst = max(worst, after.TotalAlloc-before.TotalAlloc)
			b.StartTimer()
		}
		b.ReportMetric(float64(worst)/float64(size), "alloc/response")
		reportSize(b, size)
	})
}

func reportSize(b *testing.B, size int) {
	b.ReportMetric(float64(size), "response-bytes")
	b.SetBytes(int64(size))
}
