package api

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
)

func TestAppendCredentialMatchesEncodingJSON(t *testing.T) {
	name, uid, email := "ñame \"quoted\" <tag> & \u2028 \x01", "5d9c5a52-0000-4000-8000-000000000001", "a@example.com"
	for _, k := range []*quarry.Credential{
		{CredentialJSON: []byte(`{"a":"b","n":{"m":[1,true,null]}}`), AdminPublic: true, Source: "confluence", Name: &name,
			CuratorPublic: true, Groups: []int64{1, 2, 30}, ID: 7, UserID: &uid, UserEmail: &email,
			CreatedAt: quarry.TimeFromMicros(1763720130123456), UpdatedAt: quarry.TimeFromMicros(1763720130000000)},
		{CredentialJSON: []byte(`{}`), Source: "web", Groups: []int64{}, ID: 1},
	} {
		want, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		got := appendCredential(nil, k, k.CredentialJSON)
		if string(got) != string(want) {
			var g, w any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("appendCredential wrote invalid JSON %s: %v", got, err)
			}
			json.Unmarshal(want, &w)
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("appendCredential mismatch (-encoding/json +got):\n%s", diff)
			}
		}
	}
}

func TestAppendConnectorMatchesEncodingJSON(t *testing.T) {
	freq, start := int64(600), quarry.TimeFromMicros(1763720130000001)
	for _, c := range []*quarry.Connector{
		{Name: "wiki \"main\" <&>", Source: "confluence", InputType: "poll", Config: []byte(`{"a":[1,{"b":null}],"c":"d"}`),
			RefreshFreq: &freq, IndexingStart: &start, ID: 3, CredentialIDs: []int64{1, 5},
			CreatedAt: quarry.TimeFromMicros(1763720130123456), UpdatedAt: quarry.TimeFromMicros(1763720131000000)},
		{Name: "", Source: "web", InputType: "load_state", Config: []byte(`{}`), ID: 1, CredentialIDs: []int64{}},
	} {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		got := appendConnector(nil, c)
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("appendConnector wrote invalid JSON %s: %v", got, err)
		}
		json.Unmarshal(want, &w)
		if diff := cmp.Diff(w, g); diff != "" {
			t.Errorf("appendConnector mismatch (-encoding/json +got):\n%s", diff)
		}
	}
}
