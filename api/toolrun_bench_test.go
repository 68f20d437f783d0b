package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkToolRun runs one operation of a custom tool through the server,
// against an upstream on loopback, one run at a time. (quarry bench -op
// tool-run measures the same beside direct calls; see docs/benchmarks.md.)
func BenchmarkToolRun(b *testing.B) {
	ctx := context.Background()
	db := storetest.OpenURL(b, storetest.URL(b), storetest.Key(b))
	cfg := api.Config{MaskCredentials: true}
	allowLoopback(&cfg)
	srv := httptest.NewServer(api.NewServer(cfg, db, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":7,"title":"Printer on floor 3 is out of toner","status":"open"}`))
	}))
	defer up.Close()
	name := "bench"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	do := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			b.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
		}
		return out
	}
	created := do("POST", "/admin/tool/custom", fmt.Sprintf(`{"name":"items","definition":%s,"custom_headers":[{"key":"X-Api-Key","value":%q}]}`,
		itemsDefinition(up.URL), itemsKey))
	var id int64
	fmt.Sscanf(string(created), `{"id":%d`, &id)
	path := fmt.Sprintf("/tool/%d/run", id)
	body := `{"method":"getItem","args":{"id":7,"verbose":true}}`
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			do("POST", path, body)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetParallelism(4) // 8 clients on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				do("POST", path, body)
			}
		})
	})
}
