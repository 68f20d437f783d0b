package bench

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

// phase is one load: of the server, or of the floor.
type phase struct {
	name   string
	series map[string]*histogram // By series name; read-only during the load.
	errs   failures
	done   atomic.Int64 // Successful measured requests.
	// answered and withResults count the measured answers of series
	// with results (searches), and those that held at least one.
	answered, withResults atomic.Int64
	elapsed               time.Duration
}

// load runs o.Clients clients against base for o.Duration. Each client
// first makes one request that is not measured (it opens the client's
// connection); the clock starts when all have. A client starts no request
// after the deadline; the phase ends when the last one returns.
func (w *work) load(ctx context.Context, name, base string, o *Options, sc *screen) (*phase, error) {
	ph := &phase{name: name, series: map[string]*histogram{}}
	for _, s := range w.seriesUsed() {
		ph.series[s.name] = &histogram{}
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        o.Clients,
		MaxIdleConnsPerHost: o.Clients,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	httpClient := &http.Client{Transport: tr, Timeout: 2 * time.Minute}

	var ready, finished sync.WaitGroup
	start := make(chan struct{})
	var deadline time.Time
	for i := range o.Clients {
		ready.Add(1)
		finished.Add(1)
		go func() {
			defer finished.Done()
			c := &client{ctx: ctx, w: w, ph: ph, http: httpClient, base: base,
				rng: rand.New(rand.NewPCG(uint64(i), 0x9e3779b97f4a7c15)), shard: i % shards}
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
	deadline = t0.Add(o.Duration)
	close(start)
	stop := sc.loading(name, t0, o.Duration, ph)
	finished.Wait()
	ph.elapsed = time.Since(t0)
	stop()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return ph, nil
}

// add adds the measurements of o, a later round of the same load, to
// ph's: the latencies, the counts, the failures and the time.
func (ph *phase) add(o *phase) {
	for name, h := range o.series {
		ph.series[name].add(h)
	}
	ph.errs.addAll(&o.errs)
	ph.done.Add(o.done.Load())
	ph.answered.Add(o.answered.Load())
	ph.withResults.Add(o.withResults.Load())
	ph.elapsed += o.elapsed
}

// client is one client: it makes one request at a time.
type client struct {
	ctx   context.Context
	w     *work
	ph    *phase
	http  *http.Client
	base  string
	rng   *rand.Rand
	shard int
}

// step makes one operation's requests, measured or not.
func (c *client) step(measure bool) {
	c.w.pick(c.rng).step(c, measure)
}

// do makes one request of series s (with its route's method, to path,
// with the headers of name, value pairs) and records its latency, from
// sending it to reading the last byte of the answer, or its failure. It
// reports whether the answer was a 2xx.
func (c *client) do(s series, path string, body []byte, measure bool, headers ...string) bool {
	return c.send(s, path, body, measure, nil, headers...)
}

// send is do with read, if not nil, reading a 2xx answer's body as it
// comes (a streamed answer's lines) in place of discarding it; an error
// of read is the request's failure.
func (c *client) send(s series, path string, body []byte, measure bool, read func(io.Reader) error, headers ...string) bool {
	method := s.route.method
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(c.ctx, method, c.base+path, r)
	if err != nil {
		c.ph.errs.add(c.ph.name, s.name, method, path, 0, err.Error())
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
			c.ph.errs.add(c.ph.name, s.name, method, path, 0, err.Error())
		}
		return false
	}
	var sample, answer []byte
	ok := res.StatusCode/100 == 2
	if !ok {
		sample, _ = io.ReadAll(io.LimitReader(res.Body, 1024))
	}
	switch {
	case ok && read != nil:
		err = read(res.Body)
	case ok && s.results:
		answer, err = io.ReadAll(res.Body)
	default:
		_, err = io.Copy(io.Discard, res.Body)
	}
	res.Body.Close()
	d := time.Since(start)
	switch {
	case !ok:
		c.ph.errs.add(c.ph.name, s.name, method, path, res.StatusCode, string(sample))
		return false
	case err != nil:
		if c.ctx.Err() == nil {
			c.ph.errs.add(c.ph.name, s.name, method, path, 0, "reading the answer: "+err.Error())
		}
		return false
	}
	if measure {
		c.ph.series[s.name].record(c.shard, d)
		if !s.part {
			c.ph.done.Add(1)
		}
		if s.results { // Counted after the clock stopped.
			c.ph.answered.Add(1)
			if n, _ := searchResults(answer); n > 0 {
				c.ph.withResults.Add(1)
			}
		}
	}
	return true
}

// failures counts failed requests by status ("transport" for those with
// no answer) and keeps the first few.
type failures struct {
	total   atomic.Int64
	mu      sync.Mutex
	counts  map[string]int64
	samples []ErrorSample
}

// errorSamples is the number of failed requests whose answer is kept.
const errorSamples = 5

func (e *failures) add(phase, series, method, path string, status int, body string) {
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
	if len(e.samples) < errorSamples {
		e.samples = append(e.samples, ErrorSample{phase, series, method + " " + path, status, body})
	}
}

// addAll adds the failures of o to e's, keeping the first few samples.
func (e *failures) addAll(o *failures) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e.total.Add(o.total.Load())
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int64{}
	}
	for k, n := range o.counts {
		e.counts[k] += n
	}
	e.samples = append(e.samples, o.samples[:min(len(o.samples), errorSamples-len(e.samples))]...)
}

// Latency histograms: log-linear buckets, 64 per power of two (under 1.6%
// error), exact below 128 ns. Clients record into 16 shards of atomic
// counters, so that memory stays small whatever the number of clients.
const (
	shards       = 16
	histLinear   = 128
	histSub      = 64
	histBuckets  = histLinear + 57*histSub
	histSubShift = 6 // log2(histSub)
)

type histShard struct {
	counts [histBuckets]atomic.Uint64
	sum    atomic.Int64
	max    atomic.Int64
}

// histogram is the latencies of one series.
type histogram struct {
	shards [shards]histShard
}

func histIndex(ns int64) int {
	if ns < histLinear {
		return int(max(ns, 0))
	}
	shift := bits.Len64(uint64(ns)) - histSubShift - 1 // ns>>shift is in [64, 128)
	return histLinear + (shift-1)*histSub + int(ns>>shift) - histSub
}

// histValue returns the middle of bucket i.
func histValue(i int) int64 {
	if i < histLinear {
		return int64(i)
	}
	shift := (i-histLinear)/histSub + 1
	m := int64((i-histLinear)%histSub + histSub)
	return m<<shift + (int64(1)<<shift)/2
}

func (h *histogram) record(shard int, d time.Duration) {
	s := &h.shards[shard]
	ns := int64(d)
	s.counts[histIndex(ns)].Add(1)
	s.sum.Add(ns)
	for {
		m := s.max.Load()
		if ns <= m || s.max.CompareAndSwap(m, ns) {
			return
		}
	}
}

// add adds the latencies of o to h's, when neither is being recorded.
func (h *histogram) add(o *histogram) {
	for i := range o.shards {
		s, t := &h.shards[i], &o.shards[i]
		for j := range t.counts {
			s.counts[j].Add(t.counts[j].Load())
		}
		s.sum.Add(t.sum.Load())
		s.max.Store(max(s.max.Load(), t.max.Load()))
	}
}

// summary is a series' latency distribution.
type summary struct {
	n             uint64
	mean          float64 // ns
	p50, p90, p99 int64   // ns
	max           int64   // ns
}

func (h *histogram) summary() summary {
	var counts [histBuckets]uint64
	var out summary
	var sum int64
	for i := range h.shards {
		s := &h.shards[i]
		for j := range counts {
			counts[j] += s.counts[j].Load()
		}
		sum += s.sum.Load()
		out.max = max(out.max, s.max.Load())
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
				return min(histValue(i), out.max)
			}
		}
		return out.max
	}
	out.p50, out.p90, out.p99 = quantile(0.50), quantile(0.90), quantile(0.99)
	return out
}

// startFloor serves the answers from memory on loopback, by route, with
// an http.Server of the same settings as the server under test: the cost
// of HTTP, the connections and the bytes, without Quarry.
func startFloor(s Server, answers map[route][]byte) (base string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		var body []byte
		for rt, b := range answers {
			if r.Method == rt.method && strings.HasPrefix(r.URL.Path, rt.path) {
				body = b
			}
		}
		if body == nil {
			http.Error(w, "not a route of the floor", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	})
	srv := s.HTTP(h, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { shutdown(srv) }, nil
}

func shutdown(srv *http.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		srv.Close()
	}
}
