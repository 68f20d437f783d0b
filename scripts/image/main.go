// Command image builds Quarry's container image without a container
// runtime: it compiles a static quarry binary and writes an OCI image
// layout, as a tar archive, that podman, skopeo, crane and docker load
// (Docker 25 and later; the archive also carries docker save's
// manifest.json for older ones).
//
//	go run ./scripts/image -o quarry-image.tar -version v1.4.0
//
// The image has one layer on an empty base: the binary, a passwd and group
// file naming the unprivileged user it runs as (65532, "nonroot"), the
// system's CA certificates (for PostgreSQL over TLS), and /data, owned by
// that user, declared a volume: the SQLite database and its key file live
// there. It runs "quarry serve" on 0.0.0.0:8080. The archive is the same,
// byte for byte, for the same binary.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The image's user and the paths it uses.
const (
	uid, gid   = 65532, 65532
	binaryPath = "usr/local/bin/quarry"
	dataDir    = "data"
	certsPath  = "etc/ssl/certs/ca-certificates.crt"
)

// options configure an image.
type options struct {
	out       string // The archive to write.
	binary    string // A static quarry binary to use; "" builds one.
	version   string // The version label (-X main.version).
	tag       string // The image reference the archive names, e.g. quarry:v1.4.0.
	arch      string // GOARCH of the binary.
	certs     string // CA certificates to include; "" for none.
	trimpath  bool
	goCommand string
	module    string // The module's directory.
}

func main() {
	o := options{goCommand: "go"}
	flag.StringVar(&o.out, "o", "quarry-image.tar", "the OCI archive to write")
	flag.StringVar(&o.version, "version", "dev", "the version label of the build and the image")
	flag.StringVar(&o.tag, "tag", "", "the image reference the archive names (default quarry:<version>)")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "the architecture to build for (GOARCH)")
	flag.StringVar(&o.binary, "binary", "", "use this static linux binary instead of building one")
	flag.StringVar(&o.certs, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "the CA bundle to include (empty for none)")
	flag.BoolVar(&o.trimpath, "trimpath", true, "build with -trimpath")
	flag.Parse()
	if o.tag == "" {
		o.tag = "quarry:" + o.version
	}
	dir, err := os.Getwd()
	if err == nil {
		o.module, err = moduleRoot(dir)
	}
	if err == nil {
		err = build(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", o.out)
}

// moduleRoot returns the directory of the go.mod above dir.
func moduleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + dir)
		}
	}
}

// vcs describes the commit the module directory is at, from git, for the
// -X flags that stand in for go build's own stamping (which worktrees and
// GOFLAGS=-buildvcs=false prevent).
type vcs struct {
	revision string
	time     time.Time
	modified bool
}

func readVCS(dir string) (v vcs) {
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	v.revision = git("rev-parse", "HEAD")
	v.time, _ = time.Parse(time.RFC3339, git("show", "-s", "--format=%cI", "HEAD"))
	v.modified = v.revision != "" && git("status", "--porcelain", "--untracked-files=no") != ""
	return v
}

// compile builds a static quarry binary for linux and returns its path.
func compile(o options, v vcs, dir string) (string, error) {
	ldflags := "-s -w -X main.version=" + o.version
	if v.revision != "" {
		ldflags += " -X main.revision=" + v.revision + fmt.Sprintf(" -X main.modified=%t", v.modified)
		if !v.time.IsZero() {
			ldflags += " -X main.revisionTime=" + v.time.UTC().Format(time.RFC3339)
		}
	}
	bin := filepath.Join(dir, "quarry")
	args := []string{"build", "-ldflags", ldflags, "-o", bin}
	if o.trimpath {
		args = append(args, "-trimpath")
	}
	cmd := exec.Command(o.goCommand, append(args, "./cmd/quarry")...)
	cmd.Dir = o.module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// build writes the image archive of o.
func build(o options) error {
	v := readVCS(o.module)
	bin := o.binary
	if bin == "" {
		tmp, err := os.MkdirTemp("", "quarry-image-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		if bin, err = compile(o, v, tmp); err != nil {
			return err
		}
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var certs []byte
	if o.certs != "" {
		if certs, err = os.ReadFile(o.certs); err != nil {
			return fmt.Errorf("CA certificates: %w (use -ca-certificates='' to build without)", err)
		}
	}
	// Every time in the image is the commit's, so that the same binary
	// makes the same archive.
	created := v.time.UTC()
	if created.IsZero() {
		created = time.Unix(0, 0).UTC()
	}
	layer, diffID, err := rootfs(exe, certs, created)
	if err != nil {
		return err
	}
	var archive bytes.Buffer
	if err := writeLayout(&archive, o, v, created, layer, diffID); err != nil {
		return err
	}
	return os.WriteFile(o.out, archive.Bytes(), 0o644)
}

// rootfs returns the image's one layer, gzipped, and the digest of the
// uncompressed tar (its diff id).
func rootfs(exe, certs []byte, mtime time.Time) (layer []byte, diffID string, err error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	dir := func(name string, mode int64, owner int) {
		if err == nil {
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: mtime, Format: tar.FormatPAX})
		}
	}
	file := func(name string, mode int64, data []byte) {
		if err == nil {
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX})
		}
		if err == nil {
			_, err = tw.Write(data)
		}
	}
	dir("data", 0o700, uid)
	dir("etc", 0o755, 0)
	file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", gid)))
	file("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, gid)))
	if certs != nil {
		dir("etc/ssl", 0o755, 0)
		dir("etc/ssl/certs", 0o755, 0)
		file(certsPath, 0o644, certs)
	}
	dir("home", 0o755, 0)
	dir("home/nonroot", 0o700, uid)
	dir("tmp", 0o1777, 0)
	dir("usr", 0o755, 0)
	dir("usr/local", 0o755, 0)
	dir("usr/local/bin", 0o755, 0)
	file(binaryPath, 0o755, exe)
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // The level is valid.
	zw.Write(raw.Bytes())                                   // Writes to a buffer do not fail.
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

// descriptor is an OCI content descriptor.
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// The media types of the layout's blobs.
const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// writeLayout writes the OCI image layout of the image, as a tar archive.
func writeLayout(w io.Writer, o options, v vcs, created time.Time, layer []byte, diffID string) error {
	labels := map[string]string{
		"org.opencontainers.image.title":       "quarry",
		"org.opencontainers.image.description": "Quarry, the control plane of an AI enterprise search service",
		"org.opencontainers.image.version":     o.version,
	}
	if v.revision != "" {
		labels["org.opencontainers.image.revision"] = v.revision
	}
	config := map[string]any{
		"created":      created.Format(time.RFC3339),
		"architecture": o.arch,
		"os":           "linux",
		"config": map[string]any{
			"User":       fmt.Sprintf("%d:%d", uid, gid),
			"Entrypoint": []string{"/" + binaryPath},
			"Cmd":        []string{"serve"},
			"Env": []string{
				"PATH=/usr/local/bin",
				"QUARRY_ADDR=0.0.0.0:8080",
				"QUARRY_DATABASE_URL=sqlite:/" + dataDir + "/quarry.db",
			},
			"WorkingDir":   "/" + dataDir,
			"ExposedPorts": map[string]any{"8080/tcp": map[string]any{}},
			"Volumes":      map[string]any{"/" + dataDir: map[string]any{}},
			"StopSignal":   "SIGTERM",
			"Labels":       labels,
		},
		"rootfs":  map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history": []map[string]string{{"created": created.Format(time.RFC3339), "created_by": "go run ./scripts/image"}},
	}
	blobs := map[string][]byte{}
	add := func(mediaType string, data []byte) descriptor {
		sum := sha256.Sum256(data)
		d := descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
		blobs[d.Digest] = data
		return d
	}
	configJSON, err := json.Marshal(config)
	if err != nil {
		return err
	}
	configDesc, layerDesc := add(mediaConfig, configJSON), add(mediaLayer, layer)
	manifestJSON, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaManifest,
		"config": configDesc, "layers": []descriptor{layerDesc}, "annotations": labels})
	if err != nil {
		return err
	}
	manifestDesc := add(mediaManifest, manifestJSON)
	// ref.name is the tag alone (the OCI grammar has no colon);
	// containerd reads the whole reference from its own annotation.
	tag := o.tag
	if i := strings.LastIndexByte(tag, ':'); i >= 0 && !strings.Contains(tag[i:], "/") {
		tag = tag[i+1:]
	}
	manifestDesc.Annotations = map[string]string{"org.opencontainers.image.ref.name": tag, "io.containerd.image.name": o.tag}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": mediaIndex, "manifests": []descriptor{manifestDesc}})
	if err != nil {
		return err
	}
	blobPath := func(digest string) string { return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:") }
	dockerManifest, err := json.Marshal([]map[string]any{{"Config": blobPath(configDesc.Digest),
		"RepoTags": []string{o.tag}, "Layers": []string{blobPath(layerDesc.Digest)}}})
	if err != nil {
		return err
	}

	tw := tar.NewWriter(w)
	put := func(name string, data []byte) error {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: created, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: created, Format: tar.FormatPAX}); err != nil {
			return err
		}
	}
	for _, d := range []descriptor{configDesc, layerDesc, manifestDesc} {
		if err := put(blobPath(d.Digest), blobs[d.Digest]); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}, {"index.json", index}, {"manifest.json", dockerManifest}} {
		if err := put(f.name, f.data); err != nil {
			return err
		}
	}
	return tw.Close()
}
