package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quarryhq/quarry/internal/proctest"
)

// TestImage builds the image as a release is built (but for -trimpath,
// which would compile everything once more), unpacks the archive as a
// runtime would (index, manifest, config, layer, every digest checked),
// and runs the image's entrypoint and command from the unpacked layer with
// the image's environment. As root, it runs them as a runtime does: in the
// image's file system (chroot) as the image's user, with /data as the
// place the database goes. What it cannot show is a real runtime loading
// the archive (there is none here): docs/operations.md says so.
func TestImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a static binary")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the image's binary is built for linux")
	}
	module, err := moduleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	goCommand := filepath.Join(runtime.GOROOT(), "bin", "go")
	archive := filepath.Join(t.TempDir(), "quarry-image.tar")
	o := options{out: archive, version: "v0.0.0-test", tag: "quarry:test", arch: runtime.GOARCH, module: module, goCommand: goCommand}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		o.certs = "/etc/ssl/certs/ca-certificates.crt"
	}
	if err := build(o); err != nil {
		t.Fatal(err)
	}

	// The layout, as a runtime reads it.
	files := untar(t, archive)
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout: %s", files["oci-layout"])
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
		sum := sha256.Sum256(b)
		if !ok || "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: missing or not matching its descriptor", d.Digest)
		}
		return b
	}
	var index struct {
		MediaType string       `json:"mediaType"`
		Manifests []descriptor `json:"manifests"`
	}
	decode(t, files["index.json"], &index)
	if index.MediaType != mediaIndex || len(index.Manifests) != 1 || index.Manifests[0].MediaType != mediaManifest ||
		index.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "test" ||
		index.Manifests[0].Annotations["io.containerd.image.name"] != "quarry:test" {
		t.Fatalf("index.json: %s", files["index.json"])
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	decode(t, blob(index.Manifests[0]), &manifest)
	if manifest.Config.MediaType != mediaConfig || len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != mediaLayer {
		t.Fatalf("manifest: %+v", manifest)
	}
	var config struct {
		Architecture, OS string
		Config           struct {
			User, WorkingDir string
			Entrypoint, Cmd  []string
			Env              []string
			Volumes          map[string]any
			ExposedPorts     map[string]any
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	decode(t, blob(manifest.Config), &config)
	c := config.Config
	if config.OS != "linux" || config.Architecture != runtime.GOARCH || c.User != "65532:65532" || c.WorkingDir != "/data" ||
		!slices.Equal(c.Entrypoint, []string{"/usr/local/bin/quarry"}) || !slices.Equal(c.Cmd, []string{"serve"}) ||
		c.Volumes["/data"] == nil || c.ExposedPorts["8080/tcp"] == nil {
		t.Errorf("config: %s", blob(manifest.Config))
	}
	var docker []struct{ Config, Layers any }
	decode(t, files["manifest.json"], &docker)
	if len(docker) != 1 {
		t.Errorf("manifest.json: %s", files["manifest.json"])
	}

	// The layer, unpacked with its owners and modes.
	gz, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(raw); len(config.RootFS.DiffIDs) != 1 || config.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("diff_ids %v do not name the layer", config.RootFS.DiffIDs)
	}
	root := filepath.Join(t.TempDir(), "rootfs")
	asRoot := os.Geteuid() == 0
	extract(t, raw, root, asRoot)
	t.Cleanup(func() { os.RemoveAll(root) })

	// A static binary: no interpreter, no shared library.
	exe := filepath.Join(root, c.Entrypoint[0])
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary asks for an interpreter: it is not static")
		}
	}
	f.Close()
	if len(libs) > 0 {
		t.Errorf("the binary needs %v", libs)
	}
	if fi, err := os.Stat(filepath.Join(root, "data")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("/data: %v %v", fi, err)
	} else if st := fi.Sys().(*syscall.Stat_t); asRoot && (st.Uid != uid || st.Gid != gid) {
		t.Errorf("/data is owned by %d:%d, want %d:%d", st.Uid, st.Gid, uid, gid)
	}

	// Run it as the image says, on a free port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(slices.Clone(c.Env), "QUARRY_ADDR="+addr, "QUARRY_LOG_FORMAT=text")
	cmd := exec.Command(c.Entrypoint[0], c.Cmd...)
	dataDir := "/data"
	if asRoot {
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		cmd.Dir = c.WorkingDir
	} else {
		// Not root: the same binary and environment, outside the image's
		// file system and as the test's user.
		t.Log("not root: runs the binary as the test's user, without chroot")
		cmd.Path, cmd.Dir = exe, filepath.Join(root, "data")
		dataDir = cmd.Dir
		env = append(env, "QUARRY_DATABASE_URL=sqlite:"+filepath.Join(dataDir, "quarry.db"))
	}
	cmd.Env = env
	token, serve := proctest.Start(t, cmd, regexp.MustCompile(`qry_[A-Za-z0-9_-]{43}`), time.Minute)
	base := "http://" + addr
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	if v := get("/version"); !strings.Contains(v, `"version":"v0.0.0-test"`) {
		t.Errorf("GET /version: %s", v)
	}
	if r := get("/ready"); r != `{"status":"ready"}` {
		t.Errorf("GET /ready: %s", r)
	}
	if s := get("/manage/admin/connector/status"); s != "[]" {
		t.Errorf("status listing: %s", s)
	}
	// The database and its key are in the volume, the key readable by the
	// image's user only.
	for _, name := range []string{"quarry.db", "quarry.db.key"} {
		fi, err := os.Stat(filepath.Join(root, "data", name))
		if err != nil {
			t.Errorf("%s/%s: %v", dataDir, name, err)
			continue
		}
		if st := fi.Sys().(*syscall.Stat_t); asRoot && st.Uid != uid {
			t.Errorf("%s/%s is owned by %d, want %d", dataDir, name, st.Uid, uid)
		}
		if name == "quarry.db.key" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s/%s has mode %v", dataDir, name, fi.Mode().Perm())
		}
	}
	// SIGTERM, as a runtime stops it (StopSignal).
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-serve.Done():
		if err := serve.Err(); err != nil {
			t.Errorf("quarry serve after SIGTERM: %v\n%s", err, serve.Stderr())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("quarry serve did not stop on SIGTERM")
	}

	// The same binary makes the same archive.
	bin := filepath.Join(t.TempDir(), "quarry")
	if err := os.WriteFile(bin, mustRead(t, exe), 0o755); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.tar")
	o.binary, o.out = bin, again
	if err := build(o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mustRead(t, archive), mustRead(t, again)) {
		t.Error("two archives of the same binary differ")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// untar returns the regular files of a tar archive by name.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if out[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// extract unpacks a layer into root, with its modes, and its owners when
// chown is possible.
func extract(t *testing.T, layer []byte, root string, chown bool) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, root+string(filepath.Separator)) {
			t.Fatalf("layer entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(name, 0o755)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(name, b, 0o600)
			}
		default:
			err = fmt.Errorf("unexpected entry type %c", h.Typeflag)
		}
		if err == nil {
			err = os.Chmod(name, os.FileMode(h.Mode&0o777)|modeBits(h.Mode))
		}
		if err == nil && chown {
			err = os.Lchown(name, h.Uid, h.Gid)
		}
		if err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
	}
}

// modeBits returns the sticky, setuid and setgid bits of a tar mode as an
// os.FileMode.
func modeBits(m int64) os.FileMode {
	var out os.FileMode
	if m&0o1000 != 0 {
		out |= os.ModeSticky
	}
	if m&0o2000 != 0 {
		out |= os.ModeSetgid
	}
	if m&0o4000 != 0 {
		out |= os.ModeSetuid
	}
	return out
}
