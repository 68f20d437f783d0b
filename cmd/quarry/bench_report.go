package main

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
	"sync"
	"time"
)

// benchReport is the result of a run; -json prints it as is.
type benchReport struct {
	QuarryVersion   string         `json:"quarry_version"`
	Op              string         `json:"op"`
	Mix             map[string]int `json:"mix,omitempty"`
	Clients         int            `json:"clients"`
	DurationSeconds float64        `json:"duration_seconds"`
	Server          benchServer    `json:"server"`
	Dataset         benchDataset   `json:"dataset"`
	Machine         benchMachine   `json:"machine"`
	Results         []benchResult  `json:"results"`
	Errors          benchErrorsOut `json:"errors"`
	FloorErrors     benchErrorsOut `json:"floor_errors"`
}

type benchServer struct {
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

type benchDataset struct {
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

type benchMachine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUModel   string `json:"cpu_model"`
}

// benchResult is one series: the server's numbers, the floor's, and their
// ratios.
type benchResult struct {
	Op            string       `json:"op"`
	ResponseBytes int          `json:"response_bytes"`
	Server        benchNumbers `json:"server"`
	Floor         benchNumbers `json:"floor"`
	// VsFloor divides the server's numbers by the floor's: throughput
	// below 1 and latencies above 1 are what Quarry adds to HTTP.
	VsFloor benchRatios `json:"vs_floor"`
	// OverheadMS, for tool-run (whose floor is the same call made
	// directly to the upstream), subtracts the floor's latencies from the
	// server's: what a run adds to the call.
	OverheadMS *benchLatency `json:"overhead_ms,omitempty"`
}

type benchNumbers struct {
	Requests      uint64       `json:"requests"`
	ThroughputRPS float64      `json:"throughput_rps"`
	LatencyMS     benchLatency `json:"latency_ms"`
}

type benchLatency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

type benchRatios struct {
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50"`
	P90        float64 `json:"p90"`
	P99        float64 `json:"p99"`
	Max        float64 `json:"max"`
}

type benchErrorsOut struct {
	Total    int64              `json:"total"`
	ByStatus map[string]int64   `json:"by_status"`
	Samples  []benchErrorSample `json:"samples"`
}

func benchNewReport(o *benchOptions, mix []benchWeight, sys *benchSystem) *benchReport {
	r := &benchReport{
		QuarryVersion:   currentBuild().version,
		Op:              o.op,
		Clients:         o.clients,
		DurationSeconds: o.duration.Seconds(),
		Server:          benchServer{Mode: "in-process", Database: sys.database},
		Dataset: benchDataset{
			Seeded: sys.inProcess, Pairs: sys.spec.Pairs, Connectors: sys.spec.Connectors,
			Credentials: sys.spec.Credentials, Groups: sys.spec.Groups, CustomTools: sys.tools,
			SeedSeconds: sys.seedTime.Seconds(), LoadSeconds: sys.loadTime.Seconds(),
		},
		Machine: benchMachine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
			OS: runtime.GOOS, Arch: runtime.GOARCH, CPUModel: benchCPUModel()},
	}
	if o.op == opMix {
		r.Mix = map[string]int{}
		for _, x := range mix {
			r.Mix[x.op] = x.weight
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
func (r *benchReport) setupPeakRSS() {
	if v, ok := benchVmHWM(); ok {
		r.Server.SetupPeakRSSBytes = &v
	}
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil {
		r.Server.PeakRSSNote = "during the server's load: VmHWM of the bench process, server and clients, reset after seeding"
	} else {
		r.Server.PeakRSSNote = "since the start: VmHWM of the bench process, server and clients, seeding included (it could not be reset)"
	}
}

// loadPeakRSS records the peak RSS after the server's load.
func (r *benchReport) loadPeakRSS(inProcess bool) {
	if !inProcess {
		return
	}
	if v, ok := benchVmHWM(); ok {
		r.Server.PeakRSSBytes = &v
	} else {
		r.Server.PeakRSSNote = "unknown: no VmHWM in /proc/self/status"
	}
}

// benchVmHWM returns the process's peak resident set size, in bytes.
func benchVmHWM() (int64, bool) {
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

// benchCPUModel returns the CPU's model name from /proc/cpuinfo.
func benchCPUModel() string {
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
func (r *benchReport) addResults(w *benchWork, server, floor *benchPhase) {
	r.Dataset.StatusBytes = len(w.status)
	sizes := [nSeries]int{len(w.status), len(w.status), len(w.patchResponse), len(w.patchResponse), len(w.putResponse), len(w.runResponse)}
	for _, s := range w.seriesUsed() {
		res := benchResult{Op: seriesNames[s], ResponseBytes: sizes[s],
			Server: benchNumbersOf(server, s), Floor: benchNumbersOf(floor, s)}
		ratio := func(a, b float64) float64 {
			if b == 0 {
				return 0
			}
			return benchRound(a / b)
		}
		sv, fl := res.Server, res.Floor
		res.VsFloor = benchRatios{
			Throughput: ratio(sv.ThroughputRPS, fl.ThroughputRPS),
			P50:        ratio(sv.LatencyMS.P50, fl.LatencyMS.P50),
			P90:        ratio(sv.LatencyMS.P90, fl.LatencyMS.P90),
			P99:        ratio(sv.LatencyMS.P99, fl.LatencyMS.P99),
			Max:        ratio(sv.LatencyMS.Max, fl.LatencyMS.Max),
		}
		if s == seriesToolRun { // The floor is the direct call: the difference is the run's overhead.
			res.OverheadMS = &benchLatency{Mean: benchRound(sv.LatencyMS.Mean - fl.LatencyMS.Mean),
				P50: benchRound(sv.LatencyMS.P50 - fl.LatencyMS.P50), P90: benchRound(sv.LatencyMS.P90 - fl.LatencyMS.P90),
				P99: benchRound(sv.LatencyMS.P99 - fl.LatencyMS.P99), Max: benchRound(sv.LatencyMS.Max - fl.LatencyMS.Max)}
		}
		r.Results = append(r.Results, res)
	}
	r.Errors, r.FloorErrors = benchErrorsOf(&server.errs), benchErrorsOf(&floor.errs)
}

func benchNumbersOf(ph *benchPhase, s int) benchNumbers {
	sum := ph.series[s].summary()
	ms := func(ns int64) float64 { return benchRound(float64(ns) / 1e6) }
	return benchNumbers{
		Requests:      sum.n,
		ThroughputRPS: benchRound(float64(sum.n) / ph.elapsed.Seconds()),
		LatencyMS:     benchLatency{Mean: benchRound(sum.mean / 1e6), P50: ms(sum.p50), P90: ms(sum.p90), P99: ms(sum.p99), Max: ms(sum.max)},
	}
}

func benchErrorsOf(e *benchErrors) benchErrorsOut {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := benchErrorsOut{Total: e.total.Load(), ByStatus: maps.Clone(e.counts), Samples: slices.Clone(e.samples)}
	if out.ByStatus == nil {
		out.ByStatus = map[string]int64{}
	}
	if out.Samples == nil {
		out.Samples = []benchErrorSample{}
	}
	return out
}

// benchRound keeps three significant digits, enough for a report.
func benchRound(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

func (r *benchReport) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *benchReport) writeText(w io.Writer) {
	op := r.Op
	if r.Mix != nil {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(r.Mix)) {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Mix[k]))
		}
		op += " (" + strings.Join(parts, ", ") + ")"
	}
	fmt.Fprintf(w, "\nquarry bench: %s, %d clients, %s each for the server and the floor (quarry %s)\n",
		op, r.Clients, time.Duration(r.DurationSeconds*float64(time.Second)), r.QuarryVersion)
	m := r.Machine
	fmt.Fprintf(w, "machine   %d CPUs, GOMAXPROCS %d, %s %s/%s, %s\n", m.CPUs, m.GOMAXPROCS, m.GoVersion, m.OS, m.Arch, m.CPUModel)
	if r.Server.Mode == "target" {
		fmt.Fprintf(w, "server    %s (a running server)\n", r.Server.URL)
	} else {
		fmt.Fprintf(w, "server    in process, on loopback; database %s\n", r.Server.Database)
	}
	d := r.Dataset
	if d.Seeded {
		fmt.Fprintf(w, "dataset   %d pairs over %d connectors, %d credentials, %d groups (store.DefaultSeedSpec), seeded in %s, listing read whole in %s",
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
	fmt.Fprintf(w, "; status listing %s\n", benchBytes(int64(d.StatusBytes)))
	if p := r.Server.PeakRSSBytes; p != nil {
		fmt.Fprintf(w, "peak RSS  %s %s", benchBytes(*p), r.Server.PeakRSSNote)
		if s := r.Server.SetupPeakRSSBytes; s != nil {
			fmt.Fprintf(w, "; %s before, seeding and preparing", benchBytes(*s))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "peak RSS  %s\n", r.Server.PeakRSSNote)
	}

	fmt.Fprintln(w)
	const row = "%-18s %9s %10s %9s %9s %9s %9s %9s %9s\n"
	fmt.Fprintf(w, row, "", "requests", "req/s", "mean", "p50", "p90", "p99", "max", "bytes")
	for _, res := range r.Results {
		for _, n := range []struct {
			label string
			benchNumbers
			size string
		}{{res.Op, res.Server, strconv.Itoa(res.ResponseBytes)}, {"  " + floorName(res.Op), res.Floor, ""}} {
			l := n.LatencyMS
			fmt.Fprintf(w, row, n.label, strconv.FormatUint(n.Requests, 10), benchNum(n.ThroughputRPS),
				benchMS(l.Mean), benchMS(l.P50), benchMS(l.P90), benchMS(l.P99), benchMS(l.Max), n.size)
		}
		v := res.VsFloor
		fmt.Fprintf(w, row, "  vs "+floorName(res.Op), "", benchNum(v.Throughput)+"×", "",
			benchNum(v.P50)+"×", benchNum(v.P90)+"×", benchNum(v.P99)+"×", benchNum(v.Max)+"×", "")
		if o := res.OverheadMS; o != nil {
			fmt.Fprintf(w, row, "  overhead", "", "", "+"+benchMS(o.Mean), "+"+benchMS(o.P50), "+"+benchMS(o.P90),
				"+"+benchMS(o.P99), "", "")
		}
	}
	fmt.Fprintln(w)
	benchWriteErrors(w, "errors", r.Errors)
	benchWriteErrors(w, "floor errors", r.FloorErrors)
}

// floorName is what the floor of op is called: tool-run's is the direct
// call to the tool's upstream.
func floorName(op string) string {
	if op == opToolRun {
		return "direct"
	}
	return "floor"
}

func benchWriteErrors(w io.Writer, label string, e benchErrorsOut) {
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
func benchNum(v float64) string {
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
func benchMS(ms float64) string {
	if ms < 1 {
		return benchNum(ms*1000) + "µs"
	}
	if ms >= 1000 {
		return benchNum(ms/1000) + "s"
	}
	return benchNum(ms) + "ms"
}

func benchBytes(n int64) string {
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

// benchProgress shows how far seeding and loading have come: one line
// rewritten in place (\r) on a terminal, plain lines otherwise.
type benchProgress struct {
	w        io.Writer
	terminal bool
	mu       sync.Mutex
	width    int       // Of the line in place; 0 when none.
	last     time.Time // When the line in place was last drawn.
	step     int       // Last tenth printed by fraction, off a terminal.
	label    string
}

func benchNewProgress(w io.Writer) *benchProgress {
	p := &benchProgress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// line prints a line of its own.
func (p *benchProgress) line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
	fmt.Fprintln(p.w, s)
}

// inPlace draws s as the line in place, at most every 100 ms unless force.
func (p *benchProgress) inPlace(s string, force bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !force && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	pad := ""
	if n := p.width - len(s); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	p.width = len(s)
	fmt.Fprint(p.w, "\r"+s+pad)
}

// end finishes the line in place, if any.
func (p *benchProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked()
}

func (p *benchProgress) endLocked() {
	if p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

// fraction reports done of total for label: in place on a terminal, at
// each tenth otherwise.
func (p *benchProgress) fraction(label string, done, total int) {
	pct := done * 100 / max(total, 1)
	if p.terminal {
		p.inPlace(fmt.Sprintf("%s: %3d%% (%d/%d)", label, pct, done, total), done >= total)
		if done >= total {
			p.end()
		}
		return
	}
	p.mu.Lock()
	if label != p.label {
		p.label, p.step = label, 0
	}
	tenth := pct / 10
	print := tenth > p.step
	if print {
		p.step = tenth
	}
	p.mu.Unlock()
	if print {
		p.line(fmt.Sprintf("%s: %d%% (%d/%d)", label, pct, done, total))
	}
}

// loading shows a phase's progress until the returned function is called.
func (p *benchProgress) loading(name string, start time.Time, d time.Duration, ph *benchPhase) (stop func()) {
	every := max(time.Second, d/10)
	if p.terminal {
		every = 200 * time.Millisecond
	}
	show := func(final bool) {
		el := time.Since(start)
		n := ph.done.Load()
		s := fmt.Sprintf("loading the %s: %s/%s, %d requests, %.0f req/s, %d errors",
			name, min(el, d).Round(100*time.Millisecond), d, n, float64(n)/el.Seconds(), ph.errs.total.Load())
		if p.terminal {
			p.inPlace(s, true)
			if final {
				p.end()
			}
		} else {
			p.line(s)
		}
	}
	if !p.terminal {
		p.line(fmt.Sprintf("loading the %s for %s", name, d))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if time.Since(start) < d { // The last line is stop's.
					show(false)
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		show(true)
	}
}
