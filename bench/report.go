package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is the result of a run; quarry bench -json prints it as is
// (docs/benchmarks.md shows it).
type Report struct {
	QuarryVersion   string         `json:"quarry_version"`
	Op              string         `json:"op"`
	Mix             map[string]int `json:"mix,omitempty"`
	Clients         int            `json:"clients"`
	DurationSeconds float64        `json:"duration_seconds"`
	Server          ServerInfo     `json:"server"`
	Dataset         Dataset        `json:"dataset"`
	Machine         Machine        `json:"machine"`
	Results         []Result       `json:"results"`
	Errors          ErrorCounts    `json:"errors"`
	FloorErrors     ErrorCounts    `json:"floor_errors"`
	// Indexing holds what -op indexing measured on the store; its Results
	// are the status listing after a progress report, with the quiet
	// listing as the floor.
	Indexing *IndexingReport `json:"indexing,omitempty"`
	// Ingest holds what -op ingest measured: documents/s into the store.
	Ingest *IngestReport `json:"ingest,omitempty"`
	// Search holds what -op search measured beside the latencies: the
	// corpus, its load, the answers, the index's size and the memory.
	Search *SearchReport `json:"search,omitempty"`
	// Chat holds what -op chat measured beside the latencies: the parts
	// of a message's time, the first token's delay, the memory.
	Chat *ChatReport `json:"chat,omitempty"`
}

// ServerInfo says what was loaded.
type ServerInfo struct {
	Mode     string `json:"mode"` // "in-process" or "target"
	URL      string `json:"url,omitempty"`
	Database string `json:"database"`
	// PeakRSSBytes is the process's VmHWM after the load of the server
	// (reset after seeding when Linux allows); null for a target.
	PeakRSSBytes *int64 `json:"peak_rss_bytes"`
	// SetupPeakRSSBytes is the VmHWM before the load: seeding and
	// preparing.
	SetupPeakRSSBytes *int64 `json:"setup_peak_rss_bytes,omitempty"`
	PeakRSSNote       string `json:"peak_rss_note"`
}

// Dataset describes the data the server held.
type Dataset struct {
	Seeded      bool    `json:"seeded"`
	Pairs       int     `json:"pairs"`
	Connectors  int     `json:"connectors,omitempty"`
	Credentials int     `json:"credentials,omitempty"`
	Groups      int     `json:"groups,omitempty"`
	CustomTools int     `json:"custom_tools,omitempty"`
	SeedSeconds float64 `json:"seed_seconds,omitempty"`
	// LoadSeconds is the time of the in-process server's first, whole read
	// of the status listing, done before the load.
	LoadSeconds float64 `json:"status_load_seconds,omitempty"`
	StatusBytes int     `json:"status_bytes"`
}

// Machine describes the machine the bench ran on.
type Machine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUModel   string `json:"cpu_model"`
}

// Result is one series: the server's numbers, the floor's, and their
// ratios.
type Result struct {
	Op            string  `json:"op"`
	ResponseBytes int     `json:"response_bytes"`
	Server        Numbers `json:"server"`
	Floor         Numbers `json:"floor"`
	// VsFloor divides the server's numbers by the floor's: throughput
	// below 1 and latencies above 1 are what Quarry adds to HTTP.
	VsFloor Ratios `json:"vs_floor"`
	// OverheadMS, for tool-run (whose floor is the same call made
	// directly to the upstream), subtracts the floor's latencies from the
	// server's: what a run adds to the call.
	OverheadMS *Latency `json:"overhead_ms,omitempty"`
}

// Numbers are a series' throughput and latencies in one phase.
type Numbers struct {
	Requests      uint64  `json:"requests"`
	ThroughputRPS float64 `json:"throughput_rps"`
	LatencyMS     Latency `json:"latency_ms"`
}

// Latency is a latency distribution, in milliseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Ratios are the server's numbers divided by the floor's.
type Ratios struct {
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50"`
	P90        float64 `json:"p90"`
	P99        float64 `json:"p99"`
	Max        float64 `json:"max"`
}

// ErrorCounts are a phase's failed requests: how many, by status, and the
// first few.
type ErrorCounts struct {
	Total    int64            `json:"total"`
	ByStatus map[string]int64 `json:"by_status"`
	Samples  []ErrorSample    `json:"samples"`
}

// ErrorSample is a failed request and the answer it got.
type ErrorSample struct {
	Phase   string `json:"phase"`
	Op      string `json:"op"`
	Request string `json:"request"`
	Status  int    `json:"status"` // 0: no answer
	Body    string `json:"body"`
}

func newReport(o *Options, mix []weight, sys *system) *Report {
	r := &Report{
		QuarryVersion:   o.Version,
		Op:              o.Op,
		Clients:         o.Clients,
		DurationSeconds: o.Duration.Seconds(),
		Server:          ServerInfo{Mode: "in-process", Database: sys.database},
		Dataset: Dataset{
			Seeded: sys.inProcess, Pairs: sys.spec.Pairs, Connectors: sys.spec.Connectors,
			Credentials: sys.spec.Credentials, Groups: sys.spec.Groups, CustomTools: sys.tools,
			SeedSeconds: sys.seedTime.Seconds(), LoadSeconds: sys.loadTime.Seconds(),
		},
		Machine: Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
			OS: runtime.GOOS, Arch: runtime.GOARCH, CPUModel: cpuModel()},
	}
	if o.Op == Mix {
		r.Mix = map[string]int{}
		for _, x := range mix {
			r.Mix[x.op.name] = x.weight
		}
	}
	if !sys.inProcess {
		r.Server.Mode, r.Server.URL = "target", sys.base
		r.Server.PeakRSSNote = "unknown: the server runs in another process"
	}
	return r
}

// setupPeakRSS records the peak RSS so far and resets it, so that the
// next reading is the load's.
func (r *Report) setupPeakRSS() {
	if v, ok := vmHWM(); ok {
		r.Server.SetupPeakRSSBytes = &v
	}
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil {
		r.Server.PeakRSSNote = "during the server's load: VmHWM of the bench process, server and clients, reset after seeding"
	} else {
		r.Server.PeakRSSNote = "since the start: VmHWM of the bench process, server and clients, seeding included (it could not be reset)"
	}
}

// loadPeakRSS records the peak RSS after the server's load.
func (r *Report) loadPeakRSS(inProcess bool) {
	if !inProcess {
		return
	}
	if v, ok := vmHWM(); ok {
		r.Server.PeakRSSBytes = &v
	} else {
		r.Server.PeakRSSNote = "unknown: no VmHWM in /proc/self/status"
	}
}

// vmHWM returns the process's peak resident set size, in bytes.
func vmHWM() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return kb * 1024, true
				}
			}
		}
	}
	return 0, false
}

// cpuModel returns the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if k = strings.TrimSpace(k); ok && (k == "model name" || k == "Hardware" || k == "cpu model") {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// addResults fills the results and errors from the two phases.
func (r *Report) addResults(w *work, server, floor *phase) {
	r.Dataset.StatusBytes = len(w.status)
	for _, s := range w.seriesUsed() {
		res := Result{Op: s.name, ResponseBytes: len(w.answers[s.route]),
			Server: numbersOf(server, s.name), Floor: numbersOf(floor, s.name)}
		sv, fl := res.Server, res.Floor
		res.VsFloor = ratiosOf(sv, fl)
		if s.direct { // The floor is the direct call: the difference is the run's overhead.
			res.OverheadMS = &Latency{Mean: round(sv.LatencyMS.Mean - fl.LatencyMS.Mean),
				P50: round(sv.LatencyMS.P50 - fl.LatencyMS.P50), P90: round(sv.LatencyMS.P90 - fl.LatencyMS.P90),
				P99: round(sv.LatencyMS.P99 - fl.LatencyMS.P99), Max: round(sv.LatencyMS.Max - fl.LatencyMS.Max)}
		}
		r.Results = append(r.Results, res)
	}
	r.Errors, r.FloorErrors = errorCountsOf(&server.errs), errorCountsOf(&floor.errs)
}

// ratiosOf divides a's numbers by b's (0 where b's is 0).
func ratiosOf(a, b Numbers) Ratios {
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return round(a / b)
	}
	return Ratios{
		Throughput: ratio(a.ThroughputRPS, b.ThroughputRPS),
		P50:        ratio(a.LatencyMS.P50, b.LatencyMS.P50),
		P90:        ratio(a.LatencyMS.P90, b.LatencyMS.P90),
		P99:        ratio(a.LatencyMS.P99, b.LatencyMS.P99),
		Max:        ratio(a.LatencyMS.Max, b.LatencyMS.Max),
	}
}

func numbersOf(ph *phase, s string) Numbers {
	sum := ph.series[s].summary()
	return Numbers{
		Requests:      sum.n,
		ThroughputRPS: round(float64(sum.n) / ph.elapsed.Seconds()),
		LatencyMS:     latency(sum),
	}
}

// latency is a summary in milliseconds.
func latency(sum summary) Latency {
	ms := func(ns int64) float64 { return round(float64(ns) / 1e6) }
	return Latency{Mean: round(sum.mean / 1e6), P50: ms(sum.p50), P90: ms(sum.p90), P99: ms(sum.p99), Max: ms(sum.max)}
}

func errorCountsOf(e *failures) ErrorCounts {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := ErrorCounts{Total: e.total.Load(), ByStatus: maps.Clone(e.counts), Samples: slices.Clone(e.samples)}
	if out.ByStatus == nil {
		out.ByStatus = map[string]int64{}
	}
	if out.Samples == nil {
		out.Samples = []ErrorSample{}
	}
	return out
}

// round keeps three significant digits, enough for a report.
func round(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// WriteJSON writes r as one JSON object.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as the text report of docs/benchmarks.md.
func (r *Report) WriteText(w io.Writer) {
	op := r.Op
	if r.Mix != nil {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Mix)) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Mix[k]))
		}
		op += " (" + strings.Join(parts, ", ") + ")"
	}
	if r.Indexing != nil || r.Ingest != nil {
		fmt.Fprintf(w, "\nquarry bench: %s, measured on the store, in %s (quarry %s)\n",
			op, time.Duration(r.DurationSeconds*float64(time.Second)).Round(time.Second), r.QuarryVersion)
	} else {
		fmt.Fprintf(w, "\nquarry bench: %s, %d clients, %s each for the server and the floor (quarry %s)\n",
			op, r.Clients, time.Duration(r.DurationSeconds*float64(time.Second)), r.QuarryVersion)
	}
	m := r.Machine
	fmt.Fprintf(w, "machine   %d CPUs, GOMAXPROCS %d, %s %s/%s, %s\n", m.CPUs, m.GOMAXPROCS, m.GoVersion, m.OS, m.Arch, m.CPUModel)
	if r.Server.Mode == "target" {
		fmt.Fprintf(w, "server    %s (a running server)\n", r.Server.URL)
	} else {
		fmt.Fprintf(w, "server    in process, on loopback; database %s\n", r.Server.Database)
	}
	d := r.Dataset
	if corpus := r.corpus(); corpus != nil {
		c := *corpus
		fmt.Fprintf(w, "dataset   %d documents of one chunk (package corpus) over %d pairs (%d private, each shared with one of %d groups; %d public), set up in %s",
			c.Documents, c.Pairs, c.Pairs-c.PublicPairs, c.Groups, c.PublicPairs, time.Duration(d.SeedSeconds*float64(time.Second)).Round(time.Millisecond))
	} else if d.Seeded {
		fmt.Fprintf(w, "dataset   %d pairs over %d connectors, %d credentials, %d groups (bench.DefaultSeedSpec), seeded in %s, listing read whole in %s",
			d.Pairs, d.Connectors, d.Credentials, d.Groups, time.Duration(d.SeedSeconds*float64(time.Second)).Round(time.Millisecond),
			time.Duration(d.LoadSeconds*float64(time.Second)).Round(time.Millisecond))
	} else {
		fmt.Fprintf(w, "dataset   %d pairs visible to the admin", d.Pairs)
		if d.Credentials > 0 {
			fmt.Fprintf(w, ", %d credentials it may edit", d.Credentials)
		}
	}
	if d.CustomTools > 0 {
		fmt.Fprintf(w, "; %d custom tools", d.CustomTools)
	}
	fmt.Fprintf(w, "; status listing %s\n", formatBytes(int64(d.StatusBytes)))
	if p := r.Server.PeakRSSBytes; p != nil {
		fmt.Fprintf(w, "peak RSS  %s %s", formatBytes(*p), r.Server.PeakRSSNote)
		if s := r.Server.SetupPeakRSSBytes; s != nil {
			fmt.Fprintf(w, "; %s before, seeding and preparing", formatBytes(*s))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "peak RSS  %s\n", r.Server.PeakRSSNote)
	}

	if r.Indexing != nil {
		r.writeIndexingText(w)
		return
	}
	if r.Ingest != nil {
		r.writeIngestText(w)
		return
	}
	fmt.Fprintln(w)
	const row = "%-18s %9s %10s %9s %9s %9s %9s %9s %9s\n"
	fmt.Fprintf(w, row, "", "requests", "req/s", "mean", "p50", "p90", "p99", "max", "bytes")
	for _, res := range r.Results {
		floor := "floor"
		if res.OverheadMS != nil {
			floor = "direct" // The same call, made directly to the upstream.
		}
		for _, n := range []struct {
			label string
			Numbers
			size string
		}{{res.Op, res.Server, strconv.Itoa(res.ResponseBytes)}, {"  " + floor, res.Floor, ""}} {
			l := n.LatencyMS
			fmt.Fprintf(w, row, n.label, strconv.FormatUint(n.Requests, 10), num(n.ThroughputRPS),
				ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), n.size)
		}
		v := res.VsFloor
		fmt.Fprintf(w, row, "  vs "+floor, "", num(v.Throughput)+"×", "",
			num(v.P50)+"×", num(v.P90)+"×", num(v.P99)+"×", num(v.Max)+"×", "")
		if o := res.OverheadMS; o != nil {
			fmt.Fprintf(w, row, "  overhead", "", "", "+"+ms(o.Mean), "+"+ms(o.P50), "+"+ms(o.P90), "+"+ms(o.P99), "", "")
		}
		if res.Op == Search && r.Search != nil && r.Search.Peer != nil {
			p := r.Search.Peer
			l := p.Peer.LatencyMS
			fmt.Fprintf(w, row, "  lucene", strconv.FormatUint(p.Peer.Requests, 10), num(p.Peer.ThroughputRPS),
				ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max), strconv.Itoa(p.ResponseBytes))
			v := p.QuarryOverPeer
			fmt.Fprintf(w, row, "  quarry ÷ lucene", "", num(v.Throughput)+"×", "",
				num(v.P50)+"×", num(v.P90)+"×", num(v.P99)+"×", num(v.Max)+"×", "")
		}
	}
	fmt.Fprintln(w)
	if r.Search != nil {
		r.writeSearchText(w)
	}
	if r.Chat != nil {
		r.writeChatText(w)
	}
	writeErrors(w, "errors", r.Errors)
	writeErrors(w, "floor errors", r.FloorErrors)
	if r.Search != nil && r.Search.Peer != nil {
		writeErrors(w, "peer errors", r.Search.Peer.Errors)
	}
}

func writeErrors(w io.Writer, label string, e ErrorCounts) {
	if e.Total == 0 {
		fmt.Fprintf(w, "%-12s none\n", label)
		return
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(e.ByStatus)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, e.ByStatus[k]))
	}
	fmt.Fprintf(w, "%-12s %d (%s); the first %d:\n", label, e.Total, strings.Join(parts, ", "), len(e.Samples))
	for _, s := range e.Samples {
		fmt.Fprintf(w, "  %s %s %s → %d %s\n", s.Phase, s.Op, s.Request, s.Status, strings.TrimSpace(s.Body))
	}
}

// benchNum renders a number with three or four significant digits.
func num(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// benchMS renders milliseconds.
func ms(ms float64) string {
	if ms < 1 {
		return num(ms*1000) + "µs"
	}
	if ms >= 1000 {
		return num(ms/1000) + "s"
	}
	return num(ms) + "ms"
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// corpus returns the corpus -op search or chat ran over, or nil.
func (r *Report) corpus() *SearchCorpus {
	switch {
	case r.Search != nil:
		return &r.Search.Corpus
	case r.Chat != nil:
		return &r.Chat.Corpus
	}
	return nil
}
