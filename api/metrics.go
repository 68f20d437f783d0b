package api

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
)

// metrics are a Server's Prometheus metrics, on a registry of its own (never
// the global one), served by GET /metrics. docs/operations.md lists them.
type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	runs        *prometheus.CounterVec
	runDuration *prometheus.HistogramVec
	attempts    *prometheus.CounterVec // Index attempts ended here, by status.
	handler     http.Handler
}

// requestLabels label the request metrics: the route pattern (never the raw
// path, so that the number of series stays bounded), the method and the
// status.
var requestLabels = []string{"route", "method", "status"}

func newMetrics(cfg Config, db *store.DB, status *statusCache) *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quarry_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status.",
		}, requestLabels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quarry_http_request_duration_seconds",
			Help:    "Time from receiving a request to the end of its handler, by route pattern, method and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, requestLabels),
	}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quarry_tool_runs_total",
		Help: "Runs of custom tools (POST /tool/{tool_id}/run), by outcome: ok, upstream_4xx, upstream_5xx, refused, timeout, unreachable, invalid, no_token, error.",
	}, []string{"outcome"})
	m.runDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "quarry_tool_run_duration_seconds",
		Help:    "Time a run of a custom tool took, from reading the tool to the tool's answer (or the failure), by outcome.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"outcome"})
	for _, o := range quarry.RunOutcomes() {
		m.runs.WithLabelValues(o)
		m.runDuration.WithLabelValues(o)
	}
	m.attempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "quarry_index_attempts_ended_total",
		Help: "Index attempts this server ended: by their workers' reports, and by its scheduler's passes (expired leases), by final status.",
	}, []string{"status"})
	for _, st := range (quarry.IndexingStatus("")).EnumValues() {
		if s := quarry.IndexingStatus(st); !s.Live() {
			m.attempts.WithLabelValues(st)
		}
	}
	b := buildOf(cfg)
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "quarry_build_info",
		Help: "Always 1; its labels describe the build: version, VCS revision and its time, whether the tree was modified, Go version.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": deref(b.Revision), "revision_time": deref(b.RevisionTime),
			"modified": strconv.FormatBool(b.Modified), "go_version": b.GoVersion},
	})
	buildInfo.Set(1)
	reg.MustRegister(
		m.requests, m.duration, m.runs, m.runDuration, m.attempts, buildInfo, indexingCollector{db},
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "quarry_db_statements_total",
			Help: "SQL statements run by the store.",
		}, func() float64 { return float64(db.Statements()) }),
		dbStatsCollector{db},
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "quarry_status_listing_reads_total",
			Help:        "Reads of the connector status listing from the database: of the whole listing, or of what the change log says changed.",
			ConstLabels: prometheus.Labels{"read": "whole"},
		}, func() float64 { return float64(status.wholeReads.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "quarry_status_listing_reads_total",
			Help:        "Reads of the connector status listing from the database: of the whole listing, or of what the change log says changed.",
			ConstLabels: prometheus.Labels{"read": "changes"},
		}, func() float64 { return float64(status.changeReads.Load()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// observe records one answered request.
func (m *metrics) observe(method, route string, status int, d time.Duration) {
	labels := []string{route, methodLabel(method), strconv.Itoa(status)}
	m.requests.WithLabelValues(labels...).Inc()
	m.duration.WithLabelValues(labels...).Observe(d.Seconds())
}

// observeRun records one run of a custom tool.
func (m *metrics) observeRun(outcome string, d time.Duration) {
	m.runs.WithLabelValues(outcome).Inc()
	m.runDuration.WithLabelValues(outcome).Observe(d.Seconds())
}

// methodLabel returns method if it is a standard one and "OTHER" otherwise,
// so that callers cannot grow the number of series at will.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// dbStatsCollector reports the connection pool statistics of the store's
// pools at each scrape: "read" and "write" on SQLite, one "shared" pool on
// PostgreSQL.
type dbStatsCollector struct{ db *store.DB }

var (
	dbPoolLabels      = []string{"pool"}
	dbMaxOpenDesc     = prometheus.NewDesc("quarry_db_connections_max_open", "Most connections the pool may open.", dbPoolLabels, nil)
	dbOpenDesc        = prometheus.NewDesc("quarry_db_connections_open", "Connections open, in use or idle.", dbPoolLabels, nil)
	dbInUseDesc       = prometheus.NewDesc("quarry_db_connections_in_use", "Connections in use.", dbPoolLabels, nil)
	dbIdleDesc        = prometheus.NewDesc("quarry_db_connections_idle", "Idle connections.", dbPoolLabels, nil)
	dbWaitCountDesc   = prometheus.NewDesc("quarry_db_connections_wait_total", "Times a caller waited for a free connection.", dbPoolLabels, nil)
	dbWaitSecondsDesc = prometheus.NewDesc("quarry_db_connections_wait_seconds_total", "Time spent waiting for a free connection.", dbPoolLabels, nil)
)

// Describe implements prometheus.Collector.
func (c dbStatsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dbMaxOpenDesc, dbOpenDesc, dbInUseDesc, dbIdleDesc, dbWaitCountDesc, dbWaitSecondsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c dbStatsCollector) Collect(ch chan<- prometheus.Metric) {
	read, write := c.db.Stats()
	pools := map[string]sql.DBStats{"read": read, "write": write}
	if c.db.Dialect() == store.Postgres {
		pools = map[string]sql.DBStats{"shared": write}
	}
	for pool, s := range pools {
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, pool)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, pool)
		}
		gauge(dbMaxOpenDesc, float64(s.MaxOpenConnections))
		gauge(dbOpenDesc, float64(s.OpenConnections))
		gauge(dbInUseDesc, float64(s.InUse))
		gauge(dbIdleDesc, float64(s.Idle))
		counter(dbWaitCountDesc, float64(s.WaitCount))
		counter(dbWaitSecondsDesc, s.WaitDuration.Seconds())
	}
}

// indexingCollector reports the state of indexing at each scrape, read
// from the database (every replica's work): the queue's depth, the
// attempts running, the leases expired and the heartbeats late, and how
// long the pair longest due has waited.
type indexingCollector struct{ db *store.DB }

var (
	indexWaitingDesc   = prometheus.NewDesc("quarry_index_attempts_waiting", "Index attempts waiting for a worker: the queue's depth.", nil, nil)
	indexRunningDesc   = prometheus.NewDesc("quarry_index_attempts_running", "Index attempts in progress.", nil, nil)
	indexExpiredDesc   = prometheus.NewDesc("quarry_index_leases_expired", "Index attempts in progress whose lease expired, not yet ended by the scheduler.", nil, nil)
	indexLateDesc      = prometheus.NewDesc("quarry_index_heartbeats_late", "Index attempts in progress not renewed for more than half a lease (30 s).", nil, nil)
	indexOldestDueDesc = prometheus.NewDesc("quarry_index_oldest_due_seconds", "How long the pair longest due for indexing has waited for its attempt; 0 when none is due.", nil, nil)
	searchPendingDesc  = prometheus.NewDesc("quarry_search_pending_chunks", "Chunks written but not yet in a segment of the search index (searched all the same).", nil, nil)
	searchSegmentsDesc = prometheus.NewDesc("quarry_search_segments", "Live segments of the search index.", nil, nil)
	searchCacheDesc    = prometheus.NewDesc("quarry_search_cache_bytes", "Bytes of the search index's blocks this server keeps in memory (QUARRY_SEARCH_CACHE_BYTES bounds them).", nil, nil)
	searchLookupsDesc  = prometheus.NewDesc("quarry_search_cache_lookups_total", "Searches' lookups of a block in this server's memory: found (hit) or read from the database (miss).", []string{"result"}, nil)
)

// Describe implements prometheus.Collector.
func (c indexingCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{indexWaitingDesc, indexRunningDesc, indexExpiredDesc, indexLateDesc, indexOldestDueDesc,
		searchPendingDesc, searchSegmentsDesc, searchCacheDesc, searchLookupsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A database that cannot be read
// gives no figures (the scrape goes on; /ready tells why).
func (c indexingCollector) Collect(ch chan<- prometheus.Metric) {
	cache := c.db.SearchCacheStats() // In memory: reported whatever the database does.
	ch <- prometheus.MustNewConstMetric(searchCacheDesc, prometheus.GaugeValue, float64(cache.Bytes))
	ch <- prometheus.MustNewConstMetric(searchLookupsDesc, prometheus.CounterValue, float64(cache.Hits), "hit")
	ch <- prometheus.MustNewConstMetric(searchLookupsDesc, prometheus.CounterValue, float64(cache.Misses), "miss")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.db.IndexingStats(ctx)
	if err != nil {
		return
	}
	x, err := c.db.SearchIndexState(ctx)
	if err != nil {
		return
	}
	for d, v := range map[*prometheus.Desc]float64{indexWaitingDesc: float64(s.Waiting), indexRunningDesc: float64(s.Running),
		indexExpiredDesc: float64(s.LeasesExpired), indexLateDesc: float64(s.HeartbeatsLate), indexOldestDueDesc: s.OldestDue.Seconds(),
		searchPendingDesc: float64(x.Pending), searchSegmentsDesc: float64(x.Segments)} {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
}
