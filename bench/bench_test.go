package bench

import (
	"strings"
	"testing"
	"time"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LOCALHOST.": true,
		"0.0.0.0": false, "10.0.0.1": false, "192.168.1.2": false, "example.com": false, "localhost.example.com": false, "": false,
	} {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHistogram(t *testing.T) {
	for _, ns := range []int64{0, 1, 127, 128, 129, 1000, 123456, 1e9, 6e10, 1 << 62} {
		i := histIndex(ns)
		if i < 0 || i >= histBuckets {
			t.Fatalf("index %d of %d out of range", i, ns)
		}
		if v := histValue(i); float64(v) < float64(ns)*0.98 || float64(v) > float64(ns)*1.02+1 {
			t.Errorf("bucket of %d is worth %d", ns, v)
		}
	}
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(i%shards, time.Duration(i)*time.Microsecond)
	}
	sum := h.summary()
	near := func(got int64, want float64) bool { return float64(got) > want*0.98 && float64(got) < want*1.02 }
	if sum.n != 1000 || !near(sum.p50, 500e3) || !near(sum.p90, 900e3) || !near(sum.p99, 990e3) || sum.max != 1000e3 {
		t.Errorf("summary %+v", sum)
	}
}

// TestOps checks the table of operations: every one has a step and a
// series named after it first; -mix weighs the mixable ones only; and
// each series' route is one of the routes the floor can answer.
func TestOps(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range ops {
		if o.step == nil || len(o.series) == 0 || o.series[0].name != o.name || o.series[0].part {
			t.Errorf("%s: step %v, series %+v", o.name, o.step != nil, o.series)
		}
		for _, s := range o.series {
			if seen[s.name] {
				t.Errorf("series %s twice", s.name)
			}
			seen[s.name] = true
			if s.route.method == "" || !strings.HasPrefix(s.route.path, "/") {
				t.Errorf("series %s: route %+v", s.name, s.route)
			}
		}
	}
	if got := strings.Join(OpNames(), ", "); got != "status, status-cold, patch-credential, put-tool, tool-run, mix" {
		t.Errorf("OpNames: %s", got)
	}
	mix, err := parseMix(DefaultMix)
	if err != nil || len(mix) != 3 || mix[0].op.name != "status" || mix[0].weight != 70 {
		t.Errorf("parseMix(DefaultMix) = %+v, %v", mix, err)
	}
	for _, bad := range []string{"status-cold=1", "status=1,status=2", "status=x", "status=0", "", "nothing=1"} {
		if _, err := parseMix(bad); err == nil {
			t.Errorf("parseMix(%q) succeeded", bad)
		}
	}
}
