package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api"
	"github.com/quarryhq/quarry/scim"
	"github.com/quarryhq/quarry/store/storetest"
)

// FuzzSCIM sends any filter and any PATCH body to the SCIM routes of a
// real server (filters become SQL, PATCHes write): the answer is always a
// SCIM body of 200, 400, 404, 409 or 412, never a 500 or a panic.
func FuzzSCIM(f *testing.F) {
	db := storetest.OpenURL(f, storetest.URL(f), storetest.Key(f))
	srv := httptest.NewServer(api.NewServer(api.Config{}, db, slog.New(slog.DiscardHandler)))
	f.Cleanup(srv.Close)
	admin := &quarry.Caller{User: quarry.User{Role: quarry.RoleAdmin}}
	_, token, err := db.CreateSCIMToken(f.Context(), admin, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	send := func(t testing.TB, method, path string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, srv.URL+"/scim/v2"+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", scim.MediaType)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	var u, g struct{ ID string }
	for _, x := range []struct {
		path, body string
		into       any
	}{
		{"/Users", `{"userName":"ann@example.com","externalId":"e1","name":{"givenName":"Ann"}}`, &u},
		{"/Groups", `{"displayName":"Eng","externalId":"g1"}`, &g},
	} {
		status, b := send(f, "POST", x.path, []byte(x.body))
		if status != 201 || json.Unmarshal(b, x.into) != nil {
			f.Fatalf("POST %s: %d %s", x.path, status, b)
		}
	}
	f.Add(`userName eq "ann@example.com"`, []byte(`{"Operations":[{"op":"replace","value":{"active":false}}]}`))
	f.Add(`emails[value ew ".com"] and not (externalId pr)`, []byte(`{"Operations":[{"op":"Add","path":"members","value":[{"value":"`+u.ID+`"}]}]}`))
	f.Add(`members[value eq "`+u.ID+`"] or displayName co "n"`, []byte(`{"Operations":[{"op":"replace","path":"userName","value":"Ann@example.com"}]}`))
	f.Add(`id sw "1"`, []byte(`{"Operations":[{"op":"replace","path":"displayName","value":"Admin"}]}`))
	f.Add(`displayName ne "x"`, []byte(`{"Operations":[{"op":"replace","path":"emails","value":[{"value":"not an email","primary":true}]}]}`))
	ok := map[int]bool{200: true, 400: true, 404: true, 409: true, 412: true}
	f.Fuzz(func(t *testing.T, filter string, patch []byte) {
		for _, path := range []string{
			"/Users?filter=" + url.QueryEscape(filter), "/Groups?filter=" + url.QueryEscape(filter) + "&excludedAttributes=members",
		} {
			status, b := send(t, "GET", path, nil)
			if !ok[status] || !json.Valid(b) {
				t.Fatalf("GET %s: %d %s", path, status, b)
			}
		}
		for _, path := range []string{"/Users/" + u.ID, "/Groups/" + g.ID} {
			status, b := send(t, "PATCH", path, patch)
			if !ok[status] || !json.Valid(b) {
				t.Fatalf("PATCH %s %q: %d %s", path, patch, status, b)
			}
		}
	})
}
