package drivetest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// googlePython is the Python that has Google's client:
// QUARRY_GOOGLEAPI_PYTHON, or Debian's (python3-googleapi installs into
// its dist-packages).
func googlePython() string {
	if p := os.Getenv("QUARRY_GOOGLEAPI_PYTHON"); p != "" {
		return p
	}
	return "/usr/bin/python3"
}

// discoveryDocs finds the discovery documents of Drive v3 and Admin
// Directory v1 that google.golang.org/api ships, in the module cache.
func discoveryDocs(t *testing.T) (drive, admin string) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "google.golang.org", "api@v*"))
	slices.Sort(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		d, a := filepath.Join(dirs[i], "drive", "v3", "drive-api.json"), filepath.Join(dirs[i], "admin", "directory", "v1", "admin-api.json")
		if _, err := os.Stat(d); err == nil {
			if _, err := os.Stat(a); err == nil {
				return d, a
			}
		}
	}
	return "", ""
}

// TestGoogleAPIClient checks the simulator against Google's own Python
// client, the one Onyx's connector uses (Debian's python3-googleapi and
// python3-google-auth): googleapi_check.py builds Drive v3 and Admin
// Directory v1 from Google's discovery documents (those
// google.golang.org/api ships: `go mod download google.golang.org/api`
// puts them in the module cache), signs the service account's JWT with
// google-auth and exchanges it at the simulator's token endpoint as each
// user (its signature, aud, scope and sub checked), lists drives and each
// user's files with the client's own list_next page by page (the first
// answer a 403 userRateLimitExceeded the client retries), exports and
// downloads the files (their size as listed), lists their permissions,
// users, groups and members, crawls a folder ('<id>' in parents over
// allDrives), reads Google's error bodies of a 404 and of the Admin SDK's
// 403 to a user who is no administrator, refreshes an OAuth user's
// refresh token with google-auth's authorized user credentials and lists
// that user's files, and has a key refused.
// What it read must be what the simulator holds. CI sets
// QUARRY_REQUIRE_PYTHON_GOOGLEAPI=1 (.ci/run installs the packages) so
// that the test cannot be skipped there.
func TestGoogleAPIClient(t *testing.T) {
	python := googlePython()
	require := os.Getenv("QUARRY_REQUIRE_PYTHON_GOOGLEAPI") != ""
	if err := exec.Command(python, "-c", "import googleapiclient, google.oauth2.service_account, google_auth_httplib2").Run(); err != nil {
		if require {
			t.Fatalf("QUARRY_REQUIRE_PYTHON_GOOGLEAPI is set but %s cannot import googleapiclient: %v", python, err)
		}
		t.Skipf("%s cannot import googleapiclient: install Debian's python3-googleapi and python3-google-auth to run this check", python)
	}
	driveDoc, adminDoc := discoveryDocs(t)
	if driveDoc == "" {
		if require {
			t.Fatal("no discovery documents of google.golang.org/api in the module cache: go mod download google.golang.org/api@v0.312.0")
		}
		t.Skip("no discovery documents of google.golang.org/api in the module cache (go mod download google.golang.org/api@v0.312.0)")
	}
	s := NewFixture(t)
	s.Limit(1)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, otherKey := filepath.Join(dir, "key.json"), filepath.Join(dir, "other.json")
	for p, k := range map[string]*rsa.PrivateKey{key: Key(), otherKey: other} {
		if err := os.WriteFile(p, []byte(s.ServiceAccountKey(k)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(python, "googleapi_check.py", s.BaseURL(), key, otherKey, driveDoc, adminDoc, s.AddOAuthUser(Bob))
	outb, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("googleapi_check.py: %v\n%s", err, stderr)
	}
	var got any
	if err := json.Unmarshal(outb, &got); err != nil {
		t.Fatalf("googleapi_check.py printed %s: %v", outb, err)
	}
	want := roundTrip(t, s.expected())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what Google's client read differs from what the simulator holds (-want +got):\n%s", diff)
	}
}

// expected is what googleapi_check.py should read of the fixture.
func (s *Server) expected() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	pages := func(n int) int { return max(1, (n+s.PageSize-1)/s.PageSize) }
	out := map[string]any{}
	pg := map[string]int{"drives": pages(len(s.drives))}
	var drives []string
	for _, d := range s.drives {
		drives = append(drives, d.ID)
	}
	out["drives"] = drives
	files := map[string]any{}
	add := func(f *File) {
		var perms []string
		for _, p := range s.permissions(f) {
			v := p["type"].(string) + ":"
			if e, ok := p["emailAddress"].(string); ok {
				v += e
			} else if d, ok := p["domain"].(string); ok {
				v += d
			}
			perms = append(perms, v)
		}
		slices.Sort(perms)
		content := f.Content
		if f.MimeType == SlidesType || (strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") && f.MimeType != DocType && f.MimeType != SheetType) {
			content = ""
		}
		var size any
		if !strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
			size = strconv.Itoa(len(f.Content))
		}
		files[f.ID] = map[string]any{"name": f.Name, "mimeType": f.MimeType, "webViewLink": f.WebViewLink(),
			"modifiedTime": f.Modified.UTC().Format("2006-01-02T15:04:05.000Z"), "content": content, "permissions": perms, "size": size}
	}
	for _, u := range []string{Alice, Bob, Carol} {
		n := 0
		for _, f := range s.files {
			if f.Owner == u && f.DriveID == "" && f.MimeType != FolderType && !f.Trashed {
				n++
				add(f)
			}
		}
		pg[u] = pages(n)
	}
	for _, d := range s.drives {
		n := 0
		for _, f := range s.files {
			if f.DriveID == d.ID && f.MimeType != FolderType && !f.Trashed {
				n++
				add(f)
			}
		}
		pg[d.ID] = pages(n)
	}
	out["pages"] = pg
	out["files"] = files
	var users []string
	for _, u := range s.users {
		if !slices.Contains(s.Admins, u) {
			users = append(users, u)
		}
	}
	out["users"] = users
	out["groups"] = s.groups
	// 1FolderA's tree: each folder's folders and files, by id.
	folders := map[string][]string{}
	for todo := []string{"1FolderA"}; len(todo) > 0; todo = todo[1:] {
		in := []string{}
		for _, f := range s.files {
			if slices.Contains(f.Parents, todo[0]) && !f.Trashed {
				in = append(in, f.ID)
				if f.MimeType == FolderType {
					todo = append(todo, f.ID)
				}
			}
		}
		slices.Sort(in)
		folders[todo[0]] = in
	}
	out["folders"] = folders
	var bobs []string
	for _, f := range s.files {
		if f.Owner == Bob && f.DriveID == "" && f.MimeType != FolderType && !f.Trashed {
			bobs = append(bobs, f.ID)
		}
	}
	slices.Sort(bobs)
	out["oauth_files"] = bobs
	out["not_admin"] = []any{403, "forbidden", "Not Authorized to access this resource/api"}
	out["not_found"] = []any{404, "notFound", "File not found: no-such-file."}
	out["refused"] = "invalid_grant: Invalid JWT Signature."
	return out
}

// roundTrip is v as JSON decodes it into any.
func roundTrip(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
