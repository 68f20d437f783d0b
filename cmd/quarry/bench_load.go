package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"math/bits"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Series of latencies: one per operation, and status-cold's writes apart
// from its GETs.
const (
	seriesStatus = iota
	seriesCold
	seriesColdWrite
	seriesPatch
	seriesPut
	seriesToolRun
	nSeries
)

var seriesNames = [nSeries]string{"status", "status-cold", "status-cold:write", "patch-credential", "put-tool", "tool-run"}

// seriesUsed returns the series the mix records.
func (w *benchWork) seriesUsed() []int {
	var out []int
	for _, x := range w.mix {
		switch x.op {
		case opStatus:
			out = append(out, seriesStatus)
		case opStatusCold:
			out = append(out, seriesCold, seriesColdWrite)
		case opPatchCredential:
			out = append(out, seriesPatch)
		case opPutTool:
			out = append(out, seriesPut)
		case opToolRun:
			out = append(out, seriesToolRun)
		}
	}
	return out
}

// pick draws an operation by weight.
func (w *benchWork) pick(rng *rand.Rand) string {
	if len(w.mix) == 1 {
		return w.mix[0].op
	}
	n := rng.IntN(w.total)
	for _, x := range w.mix {
		if n < x.weight {
			return x.op
		}
		n -= x.weight
	}
	return w.mix[len(w.mix)-1].op
}

// benchPhase is one load: of the server, or of the floor.
type benchPhase struct {
	name    string
	series  [nSeries]*benchSeries
	errs    benchErrors
	done    atomic.Int64 // Successful measured requests.
	elapsed time.Duration
}

// load runs o.clients clients against base for o.duration. Each client
// first makes one request that is not measured (it opens the client's
// connection); the clock starts when all have. A client starts no request
// after the deadline; the phase ends when the last one returns.
func (w *benchWork) load(ctx context.Context, name, base string, o *benchOptions, prog *benchProgress) (*benchPhase, error) {
	ph := &benchPhase{name: name}
	for _, s := range w.seriesUsed() {
		ph.series[s] = &benchSeries{}
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        o.clients,
		MaxIdleConnsPerHost: o.clients,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 2 * time.Minute}

	var ready, finished sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time
	for i := range o.clients {
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			c := &benchClient{ctx: ctx, w: w, ph: ph, http: client, base: base,
				rng: rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15)), shard: i % benchShards}
			c.step(false)
			ready.Done()
			<-start
			for ctx.Err() == nil && time.Now().Before(deadline) {
				c.step(true)
			}
		}()
	}
	ready.Wait()
	t0 := time.Now()
	deadline = t0.Add(o.duration)
	close(start)
	stop := prog.loading(name, t0, o.duration, ph)
	finished.Wait()
	ph.elapsed = time.Since(t0)
	stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ph, nil
}

// benchClient is one client: it makes one request at a time.
type benchClient struct {
	ctx   context.Context
	w     *benchWork
	ph    *benchPhase
	http  *http.Client
	base  string
	rng   *rand.Rand
	shard int
}

// step makes one operation's requests, measured or not.
func (c *benchClient) step(measure bool) {
	w := c.w
	switch w.pick(c.rng) {
	case opStatus:
		c.do(seriesStatus, "GET", benchStatusPath, nil, measure)
	case opStatusCold:
		// The write and the GET are one step for all clients: the GET
		// reads the listing at a data version no other GET has seen, so
		// it is never served from the cache. Only the GET is the
		// operation's latency.
		k := w.creds[c.rng.IntN(len(w.creds))]
		w.coldMu.Lock()
		if c.do(seriesColdWrite, "PATCH", benchCredentialPath+benchItoa(k.id), k.noop, measure) {
			c.do(seriesCold, "GET", benchStatusPath, nil, measure)
		}
		w.coldMu.Unlock()
	case opPatchCredential:
		k := w.creds[c.rng.IntN(len(w.creds))]
		i := k.flips.Add(1) % 2
		if i == 1 {
			k.touched.Store(true)
		}
		c.do(seriesPatch, "PATCH", benchCredentialPath+benchItoa(k.id), k.bodies[i], measure)
	case opPutTool:
		t := w.tools[c.rng.IntN(len(w.tools))]
		c.do(seriesPut, "PUT", benchToolPath+benchItoa(t.id), t.body, measure)
	case opToolRun:
		c.stepToolRun(measure)
	}
}

// do makes one request, with the headers of name, value pairs, and
// records its latency, from sending it to reading the last byte of the
// answer, or its failure. It reports whether the answer was a 2xx.
func (c *benchClient) do(series int, method, path string, body []byte, measure bool, headers ...string) bool {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, c.base+path, r)
	if err != nil {
		c.ph.errs.add(c.ph.name, series, method, path, 0, err.Error())
		return false
	}
	req.Header.Set("Authorization", "Bearer "+c.w.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	res, err := c.http.Do(req)
	if err != nil {
		if c.ctx.Err() == nil {
			c.ph.errs.add(c.ph.name, series, method, path, 0, err.Error())
		}
		return false
	}
	var sample []byte
	ok := res.StatusCode/100 == 2
	if !ok {
		sample, _ = io.ReadAll(io.LimitReader(res.Body, 1024))
	}
	_, err = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	d := time.Since(start)
	switch {
	case !ok:
		c.ph.errs.add(c.ph.name, series, method, path, res.StatusCode, string(sample))
		return false
	case err != nil:
		if c.ctx.Err() == nil {
			c.ph.errs.add(c.ph.name, series, method, path, 0, "reading the answer: "+err.Error())
		}
		return false
	}
	if measure {
		c.ph.series[series].record(c.shard, d)
		if series != seriesColdWrite {
			c.ph.done.Add(1)
		}
	}
	return true
}

// benchErrors counts failed requests by status ("transport" for those
// with no answer) and keeps the first few.
type benchErrors struct {
	total   atomic.Int64
	mu      sync.Mutex
	counts  map[string]int64
	samples []benchErrorSample
}

// benchErrorSamples is the number of failed requests whose answer is kept.
const benchErrorSamples = 5

type benchErrorSample struct {
	Phase   string `json:"phase"`
	Op      string `json:"op"`
	Request string `json:"request"`
	Status  int    `json:"status"` // 0: no answer
	Body    string `json:"body"`
}

func (e *benchErrors) add(phase string, series int, method, path string, status int, body string) {
	e.total.Add(1)
	key := "transport"
	if status != 0 {
		key = strconv.Itoa(status)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int64{}
	}
	e.counts[key]++
	if len(e.samples) < benchErrorSamples {
		e.samples = append(e.samples, benchErrorSample{phase, seriesNames[series], method + " " + path, status, body})
	}
}

// Latency histograms: log-linear buckets, 64 per power of two (under 1.6%
// error), exact below 128 ns. Clients record into 16 shards of atomic
// counters, so that memory stays small whatever the number of clients.
const (
	benchShards  = 16
	histLinear   = 128
	histSub      = 64
	histBuckets  = histLinear + 57*histSub
	histSubShift = 6 // log2(histSub)
)

type benchHist struct {
	counts [histBuckets]atomic.Uint64
	sum    atomic.Int64
	max    atomic.Int64
}

type benchSeries struct {
	shards [benchShards]benchHist
}

func benchHistIndex(ns int64) int {
	if ns < histLinear {
		return int(max(ns, 0))
	}
	shift := bits.Len64(uint64(ns)) - histSubShift - 1 // ns>>shift is in [64, 128)
	return histLinear + (shift-1)*histSub + int(ns>>shift) - histSub
}

// benchHistValue returns the middle of bucket i.
func benchHistValue(i int) int64 {
	if i < histLinear {
		return int64(i)
	}
	shift := (i-histLinear)/histSub + 1
	m := int64((i-histLinear)%histSub + histSub)
	return m<<shift + (int64(1)<<shift)/2
}

func (s *benchSeries) record(shard int, d time.Duration) {
	h := &s.shards[shard]
	ns := int64(d)
	h.counts[benchHistIndex(ns)].Add(1)
	h.sum.Add(ns)
	for {
		m := h.max.Load()
		if ns <= m || h.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// benchSummary is a series' latency distribution.
type benchSummary struct {
	n             uint64
	mean          float64 // ns
	p50, p90, p99 int64   // ns
	max           int64   // ns
}

func (s *benchSeries) summary() benchSummary {
	var counts [histBuckets]uint64
	var out benchSummary
	var sum int64
	for i := range s.shards {
		h := &s.shards[i]
		for j := range counts {
			counts[j] += h.counts[j].Load()
		}
		sum += h.sum.Load()
		out.max = max(out.max, h.max.Load())
	}
	for _, c := range counts {
		out.n += c
	}
	if out.n == 0 {
		return out
	}
	out.mean = float64(sum) / float64(out.n)
	quantile := func(q float64) int64 {
		rank := uint64(q*float64(out.n) + 0.999999)
		var seen uint64
		for i, c := range counts {
			if seen += c; seen >= max(rank, 1) {
				return min(benchHistValue(i), out.max)
			}
		}
		return out.max
	}
	out.p50, out.p90, out.p99 = quantile(0.50), quantile(0.90), quantile(0.99)
	return out
}

// Routes of the floor.
const (
	floorStatus     = "status"
	floorCredential = "credential"
	floorTool       = "tool"
)

// benchStartFloor serves bodies from memory on loopback, by route, with an
// http.Server of the same settings as the server under test: the cost of
// HTTP, the connections and the bytes, without Quarry.
func benchStartFloor(cfg *Config, bodies map[string][]byte) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		body := bodies[benchFloorRoute(r)]
		if body == nil {
			http.Error(w, "not a route of the floor", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	srv := benchHTTPServer(cfg, h, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { benchShutdown(srv) }, nil
}

func benchFloorRoute(r *http.Request) string {
	p := r.URL.Path
	switch {
	case r.Method == "GET" && strings.HasSuffix(p, benchStatusPath):
		return floorStatus
	case r.Method == "PATCH" && strings.Contains(p, benchCredentialPath):
		return floorCredential
	case r.Method == "PUT" && strings.Contains(p, benchToolPath):
		return floorTool
	}
	return ""
}
