package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

var bootstrapTokenRE = regexp.MustCompile(`(?m)^    (qry_\S+)$`)

// TestTwoReplicas starts two quarry serve processes on one new PostgreSQL
// database at once: both come up, the schema is migrated once, at most one
// bootstrap key is made. Then conditional PATCHes sent to both race for one
// credential: one wins per version, and no update is lost.
func TestTwoReplicas(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skip(storetest.PostgresEnv + " is not set")
	}
	quarryBinary(t)
	url := storetest.URL(t)
	vars := map[string]string{
		"QUARRY_DATABASE_URL":     url,
		"QUARRY_ENCRYPTION_KEY":   store.NewKey(),
		"QUARRY_MASK_CREDENTIALS": "false",
		"QUARRY_LOG_LEVEL":        "warn",
	}
	replicas := []*procServer{launchServe(t, vars), launchServe(t, vars)}
	var token string
	for i, r := range replicas {
		if err := r.ready(30 * time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		if m := bootstrapTokenRE.FindStringSubmatch(r.stdout.String()); m != nil {
			if token != "" {
				t.Error("both replicas made a bootstrap key")
			}
			token = m[1]
		}
	}
	db := procSQL(t, url)
	count := func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM api_keys`); n != 1 || token == "" {
		t.Errorf("%d API keys, bootstrap key printed: %t; want one", n, token != "")
	}
	if n := count(`SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`); n != count(`SELECT MAX(version_id) FROM goose_db_version`) {
		t.Errorf("%d migrations recorded, want each once", n)
	}
	if n := count(`SELECT COUNT(*) FROM tools`); n != 4 {
		t.Errorf("%d tools, want the 4 built-ins once", n)
	}
	if t.Failed() {
		t.FailNow()
	}

	c := newProcClient(token)
	var k struct {
		ID int64 `json:"id"`
	}
	r := c.must(t, replicas[0].base, "POST", "/manage/credential",
		map[string]any{"credential_json": map[string]any{"count": "0"}, "admin_public": true, "source": "confluence"}, &k)
	path := fmt.Sprint("/manage/credential/", k.ID)
	version := r.version()

	// One version, several writers on both replicas: one wins.
	const writers = 6
	for round := range 15 {
		statuses := make([]int, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := c.do(replicas[i%2].base, "PATCH", path, map[string]any{"name": fmt.Sprint("r", round, "-w", i)},
					"If-Match", strconv.Quote(strconv.FormatInt(version, 10)))
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = r.status
			}()
		}
		wg.Wait()
		winner := -1
		for i, s := range statuses {
			switch {
			case s == 200 && winner < 0:
				winner = i
			case s == 200:
				t.Errorf("round %d: writers %d and %d both won version %d", round, winner, i, version)
			case s != 412:
				t.Errorf("round %d: writer %d got %d, want 200 or 412", round, i, s)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won version %d: %v", round, version, statuses)
		}
		var got struct {
			Name string `json:"name"`
		}
		r := c.must(t, replicas[(round+1)%2].base, "GET", path, nil, &got)
		if want := fmt.Sprint("r", round, "-w", winner); got.Name != want || r.version() != version+1 {
			t.Fatalf("round %d: name %q version %d, want the winner's %q and %d", round, got.Name, r.version(), want, version+1)
		}
		version++
	}

	// Read-modify-write increments with If-Match, retried on 412, from
	// both replicas: none is lost.
	const clients, increments = 4, 10
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := replicas[i%2].base
			for done := 0; done < increments; {
				var cur struct {
					CredentialJSON map[string]string `json:"credential_json"`
				}
				r, err := c.do(base, "GET", path, nil)
				if err != nil || r.status != 200 {
					t.Errorf("GET: %v %v", err, r)
					return
				}
				if err := json.Unmarshal(r.body, &cur); err != nil {
					t.Error(err)
					return
				}
				n, _ := strconv.Atoi(cur.CredentialJSON["count"])
				w, err := c.do(base, "PATCH", path, map[string]any{"credential_json": map[string]any{"count": strconv.Itoa(n + 1)}},
					"If-Match", r.header.Get("ETag"))
				if err != nil {
					t.Error(err)
					return
				}
				switch w.status {
				case 200:
					done++
				case 412:
				default:
					t.Errorf("PATCH: %d %s", w.status, w.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	var final struct {
		CredentialJSON map[string]string `json:"credential_json"`
	}
	r = c.must(t, replicas[0].base, "GET", path, nil, &final)
	if got, want := final.CredentialJSON["count"], strconv.Itoa(clients*increments); got != want {
		t.Errorf("count = %s after %s acknowledged increments: updates were lost", got, want)
	}
	if got, want := r.version(), version+clients*increments; got != want {
		t.Errorf("version = %d, want %d", got, want)
	}
}
