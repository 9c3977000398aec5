// Package release builds fluxpack's Flux CLI plugin release: the flux-pack
// binary per platform, a reproducible tar.gz of each, their SHA-256
// checksums, and the plugin manifest (cli.fluxcd.io/v1beta1, kind Plugin)
// and catalog that `flux plugin install pack` reads. hack/release runs it
// for `make release`; the e2e drives the real flux CLI through its output.
package release

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"go.yaml.in/yaml/v3"
)

// The names the flux CLI goes by: `flux pack …` runs the executable
// flux-pack found in its plugin directory.
const (
	PluginName = "pack"
	BinaryName = "flux-pack"
	// ManifestAPIVersion, ManifestKind and CatalogKind are the plugin
	// catalog schema the flux CLI (v2.9) reads.
	ManifestAPIVersion = "cli.fluxcd.io/v1beta1"
	ManifestKind       = "Plugin"
	CatalogKind        = "PluginCatalog"
)

// Platform is a GOOS/GOARCH pair a release ships a binary for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the ones `make release` builds.
var Platforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// Host is the platform this process runs on.
func Host() Platform { return Platform{runtime.GOOS, runtime.GOARCH} }

// Options says what to build and where it will be served from.
type Options struct {
	// Version is what `fluxpack version` prints (e.g. v0.3.0); the manifest
	// lists it without the leading "v", as the flux plugin catalog does.
	Version string
	// BaseURL is where the archives will be downloaded from; each
	// platform's url is BaseURL + the archive's name.
	BaseURL string
	// Dir receives the archives, checksums.txt, pack.yaml and catalog.yaml.
	Dir string
	// Module is the fluxpack checkout to build (the folder with go.mod).
	Module string
	// Platforms default to Platforms.
	Platforms []Platform
	// Go is the go command (default "go").
	Go string
}

// Artifact is one platform's archive.
type Artifact struct {
	Platform Platform
	Name     string // file name in Dir
	SHA256   string // hex
}

// Result lists what Build wrote.
type Result struct {
	Artifacts []Artifact
	Manifest  string // path of pack.yaml
	Catalog   string // path of catalog.yaml
}

// Build cross-compiles flux-pack for each platform, archives it, and writes
// checksums.txt, the plugin manifest and the catalog into Dir.
func Build(ctx context.Context, o Options) (*Result, error) {
	if o.Version == "" || o.BaseURL == "" || o.Dir == "" || o.Module == "" {
		return nil, fmt.Errorf("release: version, base URL, output dir and module are required")
	}
	if o.Platforms == nil {
		o.Platforms = Platforms
	}
	if o.Go == "" {
		o.Go = "go"
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "fluxpack-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	res := &Result{}
	for _, p := range o.Platforms {
		bin := filepath.Join(tmp, p.OS+"-"+p.Arch, BinaryName)
		if err := buildBinary(ctx, o, p, bin); err != nil {
			return nil, err
		}
		exe, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		archive, err := Archive(BinaryName, exe)
		if err != nil {
			return nil, err
		}
		name := ArchiveName(o.Version, p)
		if err := os.WriteFile(filepath.Join(o.Dir, name), archive, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(archive)
		res.Artifacts = append(res.Artifacts, Artifact{Platform: p, Name: name, SHA256: hex.EncodeToString(sum[:])})
	}

	var sums strings.Builder
	for _, a := range res.Artifacts {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, a.Name)
	}
	if err := os.WriteFile(filepath.Join(o.Dir, "checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	manifest, err := Marshal(NewManifest(o.Version, o.BaseURL, res.Artifacts))
	if err != nil {
		return nil, err
	}
	res.Manifest = filepath.Join(o.Dir, PluginName+".yaml")
	if err := os.WriteFile(res.Manifest, manifest, 0o644); err != nil {
		return nil, err
	}
	catalog, err := Marshal(NewCatalog())
	if err != nil {
		return nil, err
	}
	res.Catalog = filepath.Join(o.Dir, "catalog.yaml")
	if err := os.WriteFile(res.Catalog, catalog, 0o644); err != nil {
		return nil, err
	}
	return res, nil
}

// ArchiveName is flux-pack_<version without v>_<os>_<arch>.tar.gz.
func ArchiveName(version string, p Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", BinaryName, strings.TrimPrefix(version, "v"), p.OS, p.Arch)
}

// buildBinary builds ./cmd/fluxpack for p into out, with nothing of the
// machine in it: no cgo, -trimpath, no VCS stamp, no build ID variance from
// the environment's GOFLAGS.
func buildBinary(ctx context.Context, o Options, p Platform, out string) error {
	cmd := exec.CommandContext(ctx, o.Go, "build", "-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X main.version="+o.Version, "-o", out, "./cmd/fluxpack")
	cmd.Dir = o.Module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("release: building %s for %s: %w\n%s", BinaryName, p, err, b)
	}
	return nil
}

// Archive is a tar.gz holding the executable name, byte for byte the same
// for the same exe: one entry, mode 0755, owner 0:0 without names, mtime the
// epoch, PAX records none, gzip header without name or time.
func Archive(name string, exe []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	// Explicitly the epoch: klauspost's writer stores a zero time.Time as a
	// date in 2042, where compress/gzip stores no time.
	zw.ModTime = time.Unix(0, 0)
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o755,
		Size:     int64(len(exe)),
		ModTime:  time.Unix(0, 0).UTC(),
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(exe); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Manifest is the plugin manifest the flux CLI fetches as
// $FLUXCD_PLUGIN_CATALOG/<name>.yaml.
type Manifest struct {
	APIVersion  string    `json:"apiVersion" yaml:"apiVersion"`
	Kind        string    `json:"kind" yaml:"kind"`
	Name        string    `json:"name" yaml:"name"`
	Description string    `json:"description" yaml:"description"`
	Homepage    string    `json:"homepage,omitempty" yaml:"homepage,omitempty"`
	Source      string    `json:"source,omitempty" yaml:"source,omitempty"`
	Bin         string    `json:"bin" yaml:"bin"`
	Versions    []Version `json:"versions" yaml:"versions"`
}

// Version is one release of the plugin; the newest comes first.
type Version struct {
	Version   string             `json:"version" yaml:"version"`
	Platforms []ManifestPlatform `json:"platforms" yaml:"platforms"`
}

// ManifestPlatform is one archive: where to get it and its "sha256:<hex>".
type ManifestPlatform struct {
	OS       string `json:"os" yaml:"os"`
	Arch     string `json:"arch" yaml:"arch"`
	URL      string `json:"url" yaml:"url"`
	Checksum string `json:"checksum" yaml:"checksum"`
}

const (
	description = "Race-free Flux layers from a bootstrap order, linted, rendered and shipped as OCI artifacts"
	homepage    = "https://github.com/fluxpack/fluxpack"
)

// NewManifest lists one version with the given artifacts.
func NewManifest(version, baseURL string, artifacts []Artifact) Manifest {
	v := Version{Version: strings.TrimPrefix(version, "v")}
	for _, a := range artifacts {
		v.Platforms = append(v.Platforms, ManifestPlatform{
			OS: a.Platform.OS, Arch: a.Platform.Arch, URL: baseURL + a.Name, Checksum: "sha256:" + a.SHA256,
		})
	}
	return Manifest{
		APIVersion: ManifestAPIVersion, Kind: ManifestKind, Name: PluginName,
		Description: description, Homepage: homepage, Source: homepage,
		Bin: BinaryName, Versions: []Version{v},
	}
}

// Catalog is the catalog.yaml `flux plugin search` reads.
type Catalog struct {
	APIVersion string         `json:"apiVersion" yaml:"apiVersion"`
	Kind       string         `json:"kind" yaml:"kind"`
	Plugins    []CatalogEntry `json:"plugins" yaml:"plugins"`
}

// CatalogEntry names one plugin of a catalog.
type CatalogEntry struct {
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
	Homepage    string `json:"homepage" yaml:"homepage"`
	Source      string `json:"source" yaml:"source"`
	License     string `json:"license,omitempty" yaml:"license,omitempty"`
}

// Marshal writes a manifest or catalog as YAML, its fields in the order of
// the flux CLI's schema (apiVersion and kind first), indented by two.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// NewCatalog is a catalog holding fluxpack alone.
func NewCatalog() Catalog {
	return Catalog{APIVersion: ManifestAPIVersion, Kind: CatalogKind, Plugins: []CatalogEntry{{
		Name: PluginName, Description: description, Homepage: homepage, Source: homepage,
	}}}
}
