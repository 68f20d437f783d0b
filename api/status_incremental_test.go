package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/quarryhq/quarry/bench"
)

// TestConnectorStatusIncremental makes random writes of every kind that
// changes the status listing and checks, after each, that a server whose
// listing is brought up to date from the change log serves byte for byte
// what a new server, which reads the whole listing, serves: to an admin
// and a curator, with and without filters. Then that the first server read
// the whole listing once and only changes after.
func TestConnectorStatusIncremental(t *testing.T) {
	e := newEnv(t)
	seeded, err := bench.Seed(context.Background(), e.db, bench.DefaultSeedSpec(300), nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, curator := user{token: seeded.AdminToken}, user{token: seeded.CuratorToken}
	warm := e.replica()
	type entry struct {
		ID        int64 `json:"cc_pair_id"`
		Connector struct {
			ID     int64  `json:"id"`
			Source string `json:"source"`
		} `json:"connector"`
		Credential struct {
			ID int64 `json:"id"`
		} `json:"credential"`
	}
	var pairs []entry
	const path = "/manage/admin/connector/status"
	check := func(step string) {
		t.Helper()
		fresh := e.replica()
		for _, u := range []user{admin, curator} {
			for _, q := range []string{"", "?source=" + pairs[0].Connector.Source + "&access_type=private", "?access_type=public&access_type=sync"} {
				got, want := warm.do(u, "GET", path+q, nil), fresh.do(u, "GET", path+q, nil)
				if got.status != 200 || want.status != 200 {
					t.Fatalf("%s: status %d and %d", step, got.status, want.status)
				}
				if !bytes.Equal(got.body, want.body) {
					t.Fatalf("%s: GET %s as %s: the listing brought up to date (%d bytes) differs from the listing read whole (%d bytes)",
						step, q, map[bool]string{true: "admin", false: "curator"}[u == admin], len(got.body), len(want.body))
				}
				if u == admin && q == "" {
					pairs = nil
					if err := json.Unmarshal(got.body, &pairs); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	e.do(admin, "GET", path, nil).decode(t, &pairs)
	check("seeded")

	rng := rand.New(rand.NewPCG(15, 1))
	pick := func() entry { return pairs[rng.IntN(len(pairs))] }
	someGroups := func() []int64 {
		g := []int64{}
		for range rng.IntN(3) {
			g = append(g, 1+rng.Int64N(12)) // The curator is a member of a tenth of the 100 groups.
		}
		return g
	}
	somePairs := func() []int64 {
		var ids []int64
		for range 1 + rng.IntN(4) {
			ids = append(ids, pick().ID)
		}
		return ids
	}
	var groups []int64 // Made by the test.
	olderPairs := 0
	ok := func(r *response, what string) {
		t.Helper()
		if r.status/100 != 2 {
			t.Fatalf("%s: status %d: %s", what, r.status, r.body)
		}
	}
	for step := range 40 {
		var what string
		switch op := rng.IntN(10); op {
		case 0:
			p := pick()
			what = fmt.Sprintf("credential %d changed", p.Credential.ID)
			ok(e.do(admin, "PATCH", "/manage/credential/"+strconv.FormatInt(p.Credential.ID, 10),
				fmt.Sprintf(`{"name": "k-%d", "credential_json": {"token": "t-%d"}}`, step, step)), what)
		case 1:
			p := pick()
			what = fmt.Sprintf("connector %d changed", p.Connector.ID)
			ok(e.do(admin, "PATCH", "/manage/admin/connector/"+strconv.FormatInt(p.Connector.ID, 10),
				fmt.Sprintf(`{"name": "c-%d", "source": %q, "input_type": "poll", "connector_specific_config": {"step": %d}, "refresh_freq": %d}`,
					step, p.Connector.Source, step, 60+step)), what)
		case 2:
			p := pick()
			what = fmt.Sprintf("pair %d renamed", p.ID)
			ok(e.do(admin, "PUT", fmt.Sprintf("/manage/admin/cc-pair/%d/name?new_name=renamed-%d", p.ID, step), nil), what)
		case 3:
			p := pick()
			what = fmt.Sprintf("pair %d removed", p.ID)
			ok(e.do(admin, "DELETE", fmt.Sprintf("/manage/connector/%d/credential/%d", p.Connector.ID, p.Credential.ID), nil), what)
		case 4, 5:
			p := pick()
			body := map[string]any{"credential_json": map[string]any{"token": fmt.Sprintf("new-%d", step)}, "admin_public": true,
				"source": p.Connector.Source, "groups": someGroups()}
			if op == 5 && len(groups) > 0 {
				body["groups"] = []int64{groups[rng.IntN(len(groups))]}
			}
			k := e.createCredential(admin, string(must(json.Marshal(body))))
			what = fmt.Sprintf("pair of connector %d and new credential %d", p.Connector.ID, k)
			access := []string{"public", "private", "private"}[rng.IntN(3)]
			ok(e.do(admin, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", p.Connector.ID, k),
				map[string]any{"name": fmt.Sprintf("new-%d", step), "access_type": access, "groups": someGroups()}), what)
		case 6:
			var out struct {
				ID int64 `json:"id"`
			}
			what = "group made"
			r := e.do(admin, "POST", "/manage/admin/user-group", map[string]any{"name": fmt.Sprintf("grp-%d", step), "user_ids": []string{}, "cc_pair_ids": somePairs()})
			ok(r, what)
			r.decode(t, &out)
			groups = append(groups, out.ID)
		case 7:
			g := 1 + rng.Int64N(12)
			if len(groups) > 0 && rng.IntN(2) == 0 {
				g = groups[rng.IntN(len(groups))]
			}
			what = fmt.Sprintf("group %d's pairs changed", g)
			ok(e.do(admin, "PATCH", fmt.Sprintf("/manage/admin/user-group/%d", g), map[string]any{"cc_pair_ids": somePairs()}), what)
		case 9:
			// Two new credentials paired with a connector in the
			// reverse order: its credential_ids are no longer in the
			// order of its pairs.
			p := pick()
			body := fmt.Sprintf(`{"credential_json": {"token": "x"}, "admin_public": true, "source": %q}`, p.Connector.Source)
			older, newer := e.createCredential(admin, body), e.createCredential(admin, body)
			what = fmt.Sprintf("pairs of connector %d and credentials %d then %d", p.Connector.ID, newer, older)
			for _, k := range []int64{newer, older} {
				ok(e.do(admin, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", p.Connector.ID, k),
					map[string]any{"name": fmt.Sprintf("rev-%d", step), "access_type": "public", "groups": []int64{}}), what)
			}
			olderPairs++
		case 8:
			if len(groups) == 0 {
				continue
			}
			i := rng.IntN(len(groups))
			what = fmt.Sprintf("group %d deleted", groups[i])
			ok(e.do(admin, "DELETE", fmt.Sprintf("/manage/admin/user-group/%d", groups[i]), nil), what)
			groups = append(groups[:i], groups[i+1:]...)
		}
		check(fmt.Sprintf("step %d, %s", step, what))
	}

	if olderPairs == 0 {
		t.Error("no pair of an older credential was made")
	}
	metrics := string(warm.do(user{}, "GET", "/metrics", nil).body)
	reads := func(kind string) int {
		m := regexp.MustCompile(`quarry_status_listing_reads_total\{read="` + kind + `"\} (\d+)`).FindStringSubmatch(metrics)
		if m == nil {
			t.Fatalf("no %s reads in the metrics", kind)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	if whole, changes := reads("whole"), reads("changes"); whole != 1 || changes < 30 {
		t.Errorf("the listing was read whole %d times and in changes %d times; want once, then changes only", whole, changes)
	}
}

// must returns v, or panics on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
