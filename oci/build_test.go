package oci_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

// platformFiles is a small manifest tree.
var platformFiles = map[string]string{
	"crds/externalsecrets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: externalsecrets.external-secrets.io\n",
	"operator/deployment.yaml":  "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: external-secrets\n  namespace: external-secrets\n",
	"crs/store.yaml":            "apiVersion: external-secrets.io/v1\nkind: ClusterSecretStore\nmetadata:\n  name: vault\n",
	"kustomization.yaml":        "resources: [crds, operator, crs]\n",
	"a/b/c/deep.yaml":           "kind: ConfigMap\n",
	"a.yaml":                    "kind: ConfigMap\n",
}

// fluxBuild returns the digest of the layer fluxcd/pkg/oci's Client.Build
// (`flux build artifact`) makes of dir, and of its uncompressed tar stream.
func fluxBuild(t *testing.T, dir string) (layer, stream string) {
	t.Helper()
	tgz := filepath.Join(t.TempDir(), "artifact.tgz")
	require.NoError(t, fluxoci.NewClient(nil).Build(tgz, dir, oci.DefaultIgnorePaths()))
	b, err := os.ReadFile(tgz)
	require.NoError(t, err)
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	h := sha256.New()
	_, err = io.Copy(h, zr)
	require.NoError(t, err)
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b)), fmt.Sprintf("sha256:%x", h.Sum(nil))
}

// TestBuildLayerIsFluxs holds fluxpack's tar stream to Flux's, byte for
// byte. The gzip bytes around it are the same only when Flux's compressor
// writes what fluxpack's does: fluxcd/pkg/oci uses compress/gzip, whose
// output is the Go release's; Go 1.27's is klauspost/compress v1.19.2's.
func TestBuildLayerIsFluxs(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hack.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logo.png"), []byte("png"), 0o644)) // ignored by both

	art, err := oci.Build(dir)
	require.NoError(t, err)
	fluxLayer, fluxStream := fluxBuild(t, dir)
	assert.Equal(t, fluxStream, art.ContentDigest.String(), "tar stream of fluxpack vs fluxcd/pkg/oci Client.Build")
	if strings.HasPrefix(runtime.Version(), "go1.27.") {
		assert.Equal(t, fluxLayer, art.LayerDigest.String(), "layer digest of fluxpack vs fluxcd/pkg/oci Client.Build built with %s", runtime.Version())
	}
	assert.Equal(t, len(platformFiles)+1, art.Files)
}

// goldenTree is the fixed tree of TestBuildGoldenDigests: files at the root
// and in nested directories, an executable and a file a umask left 0600.
var goldenTree = map[string]string{
	"kustomization.yaml":                  "resources: [namespaces, apps/podinfo]\n",
	"namespaces/apps.yaml":                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n",
	"apps/podinfo/deployment.yaml":        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podinfo\n  namespace: apps\nspec:\n  replicas: 2\n",
	"apps/podinfo/config/values.yaml":     "replicaCount: 2\nui:\n  message: hello\n",
	"apps/podinfo/hooks/check-rollout.sh": "#!/bin/sh\nkubectl -n apps rollout status deploy/podinfo\n",
}

// writeGoldenTree writes goldenTree under dir with its mode bits.
func writeGoldenTree(t *testing.T, dir string) {
	t.Helper()
	testutil.WriteFiles(t, dir, goldenTree)
	require.NoError(t, os.Chmod(filepath.Join(dir, "apps", "podinfo", "hooks", "check-rollout.sh"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(dir, "apps", "podinfo", "config", "values.yaml"), 0o600))
}

// goldenOptions is the metadata of TestBuildGoldenDigests' artifact.
func goldenOptions() []oci.BuildOption {
	return []oci.BuildOption{
		oci.WithSource("https://example.com/acme/platform.git"),
		oci.WithRevision("main@sha1:0123456789abcdef0123456789abcdef01234567"),
		oci.WithCreated(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	}
}

// TestBuildGoldenDigests pins the digests of a fixed tree: the tar stream's
// (content), the compressed layer's and the manifest's. The layer and the
// manifest change whenever the compressor's output does, so a compressor that
// changes under fluxpack (a new Go release, a new module version) fails here
// before it gives every tag a new digest. Rewrite with -update only for a
// change meant to move every digest.
func TestBuildGoldenDigests(t *testing.T) {
	dir := t.TempDir()
	writeGoldenTree(t, dir)
	art, err := oci.Build(dir, goldenOptions()...)
	require.NoError(t, err)
	layers, err := art.Image.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	size, err := layers[0].Size()
	require.NoError(t, err)
	got := fmt.Sprintf("content  %s\nlayer    %s (%d bytes)\nmanifest %s\n", art.ContentDigest, art.LayerDigest, size, art.Digest)
	testutil.Golden(t, "build-digests", []byte(got))

	// The gzip header of fluxcd/pkg/tar and `flux build artifact`: deflate,
	// no flags (no name, comment or extra field), no mtime, no level hint
	// (the default level), OS unknown (255).
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	defer rc.Close()
	header := make([]byte, 10)
	_, err = io.ReadFull(rc, header)
	require.NoError(t, err)
	assert.Equal(t, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, header, "gzip header")
}

func TestBuildIsReproducible(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, a, platformFiles)
	testutil.WriteFiles(t, b, platformFiles)
	// b: other modes (umask 077-like), other mtimes, other time zone.
	for name := range platformFiles {
		p := filepath.Join(b, filepath.FromSlash(name))
		require.NoError(t, os.Chmod(p, 0o600))
		require.NoError(t, os.Chtimes(p, time.Now().Add(-48*time.Hour), time.Now().Add(-48*time.Hour)))
	}
	require.NoError(t, filepath.WalkDir(b, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o700)
		}
		return err
	}))

	artA, err := oci.Build(a, oci.WithSource("https://example.com/platform.git"), oci.WithRevision("main@sha1:0123"))
	require.NoError(t, err)
	t.Setenv("TZ", "Pacific/Kiritimati")
	artB, err := oci.Build(b, oci.WithSource("https://example.com/platform.git"), oci.WithRevision("main@sha1:0123"))
	require.NoError(t, err)
	assert.Equal(t, artA.Digest, artB.Digest, "manifest digest")
	assert.Equal(t, artA.LayerDigest, artB.LayerDigest, "layer digest")
	assert.Equal(t, "1970-01-01T00:00:00Z", artA.Annotations[fluxoci.CreatedAnnotation])

	// One byte more changes everything.
	require.NoError(t, os.WriteFile(filepath.Join(b, "a.yaml"), []byte("kind: ConfigMap\n\n"), 0o600))
	artC, err := oci.Build(b, oci.WithSource("https://example.com/platform.git"), oci.WithRevision("main@sha1:0123"))
	require.NoError(t, err)
	assert.NotEqual(t, artA.ContentDigest, artC.ContentDigest)
	assert.NotEqual(t, artA.Digest, artC.Digest)
}

func TestBuildManifestIsFluxs(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	created := time.Date(2026, 11, 22, 1, 50, 29, 0, time.FixedZone("CET", 3600))
	art, err := oci.Build(dir,
		oci.WithSource("https://example.com/platform.git"),
		oci.WithRevision("main@sha1:0123456789abcdef"),
		oci.WithCreated(created),
		oci.WithAnnotations(map[string]string{"org.opencontainers.image.licenses": "Apache-2.0"}),
	)
	require.NoError(t, err)
	m, err := art.Image.Manifest()
	require.NoError(t, err)
	assert.Equal(t, "application/vnd.oci.image.manifest.v1+json", string(m.MediaType))
	assert.Equal(t, "application/vnd.cncf.flux.config.v1+json", string(m.Config.MediaType))
	require.Len(t, m.Layers, 1)
	assert.Equal(t, "application/vnd.cncf.flux.content.v1.tar+gzip", string(m.Layers[0].MediaType))
	assert.Equal(t, art.ContentDigest.String(), m.Layers[0].Annotations[oci.ContentDigestAnnotation])
	assert.Equal(t, map[string]string{
		"org.opencontainers.image.created":  "2026-11-22T00:50:29Z",
		"org.opencontainers.image.source":   "https://example.com/platform.git",
		"org.opencontainers.image.revision": "main@sha1:0123456789abcdef",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}, m.Annotations)
	cfg, err := art.Image.RawConfigFile()
	require.NoError(t, err)
	// Flux's config: go-containerregistry's empty config with created set.
	assert.JSONEq(t, `{"architecture":"","created":"2026-11-22T00:50:29Z","os":"","rootfs":{"type":"layers","diff_ids":null},"config":{}}`, string(cfg))
	assert.Len(t, cfg, 115, "FLUX-FACTS: config size 115 for a created time of this length")
}

func TestBuildIgnores(t *testing.T) {
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{
		"keep.yaml":           "a: 1\n",
		".git/config":         "x",
		".gitignore":          "x",
		"img/logo.png":        "x",
		"sub/.sourceignore":   "local.yaml\n",
		"sub/local.yaml":      "x",
		"sub/kept.yaml":       "x",
		"local.yaml":          "only ignored under sub/\n",
		"drafts/wip.yaml":     "x",
		"drafts/keep-me.yaml": "x",
		"docs/readme.md":      "x",
		"docs/important.md":   "x",
	})
	art, err := oci.Build(dir, oci.WithIgnorePaths("docs/", "drafts/wip.yaml"))
	require.NoError(t, err)
	out := t.TempDir()
	require.NoError(t, extract(art, out))
	assert.Equal(t, []string{"drafts/keep-me.yaml", "img/", "keep.yaml", "local.yaml", "sub/.sourceignore", "sub/kept.yaml"}, listTree(t, out))
}

func TestBuildSymlinks(t *testing.T) {
	t.Run("inside the tree are followed", func(t *testing.T) {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"base/cm.yaml": "kind: ConfigMap\n"})
		require.NoError(t, os.Symlink("base/cm.yaml", filepath.Join(dir, "link.yaml")))
		require.NoError(t, os.Symlink("base", filepath.Join(dir, "linkdir")))
		art, err := oci.Build(dir)
		require.NoError(t, err)
		out := t.TempDir()
		require.NoError(t, extract(art, out))
		assert.Equal(t, map[string]string{"base/cm.yaml": "kind: ConfigMap\n", "link.yaml": "kind: ConfigMap\n", "linkdir/cm.yaml": "kind: ConfigMap\n"}, testutil.ReadFiles(t, out))
	})
	t.Run("pointing outside is an error", func(t *testing.T) {
		dir, outside := t.TempDir(), t.TempDir()
		testutil.WriteFiles(t, outside, map[string]string{"secret.yaml": "x"})
		require.NoError(t, os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "escape.yaml")))
		_, err := oci.Build(dir)
		require.ErrorIs(t, err, oci.ErrSymlinkEscape)
		var fe *oci.FileError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, filepath.Join(dir, "escape.yaml"), fe.Path)
	})
	t.Run("cycles are an error", func(t *testing.T) {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"a/x.yaml": "x"})
		require.NoError(t, os.Symlink("..", filepath.Join(dir, "a", "up")))
		_, err := oci.Build(dir)
		require.ErrorIs(t, err, oci.ErrSymlinkCycle)
		assert.Contains(t, err.Error(), filepath.Join(dir, "a", "up"))
	})
	t.Run("dangling is skipped with a warning, as Flux leaves it out", func(t *testing.T) {
		// A repository's .tls -> ../cluster/.tls into a git-ignored folder.
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"cm.yaml": "x: 1\n"})
		require.NoError(t, os.Symlink("../cluster/.tls", filepath.Join(dir, ".tls")))
		var logs bytes.Buffer
		art, err := oci.Build(dir, oci.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		require.NoError(t, err)
		without := t.TempDir()
		testutil.WriteFiles(t, without, map[string]string{"cm.yaml": "x: 1\n"})
		want, err := oci.Build(without)
		require.NoError(t, err)
		assert.Equal(t, want.ContentDigest, art.ContentDigest, "the artifact is the tree without the link")
		assert.Contains(t, logs.String(), filepath.Join(dir, ".tls"), "the warning names the link")
	})
}

func TestBuildRefusesPlaintextSecrets(t *testing.T) {
	plain := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: token\n  namespace: external-secrets\nstringData:\n  token: hunter2\n"
	sops := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\ndata:\n  token: ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:x]\n  version: 3.9.0\n"
	tests := []struct {
		name  string
		file  string
		body  string
		opts  []oci.BuildOption
		wantL int
	}{
		{name: "stringData", file: "secret.yaml", body: plain, wantL: 7},
		{name: "data in json", file: "s.json", body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"dg=="}}`, wantL: 1},
		{name: "sops encrypted", file: "secret.yaml", body: sops},
		{name: "allowed", file: "secret.yaml", body: plain, opts: []oci.BuildOption{oci.WithAllowSecrets()}},
		{name: "no data", file: "secret.yaml", body: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: empty\ntype: Opaque\n"},
		{name: "other group", file: "es.yaml", body: "apiVersion: external-secrets.io/v1\nkind: Secret\ndata:\n  a: b\n"},
		{name: "not a manifest file", file: "notes.txt", body: plain},
		{name: "values file of another kind", file: "cm.yaml", body: "kind: ConfigMap\ndata:\n  kind: Secret\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testutil.WriteFiles(t, dir, map[string]string{"apps/" + tt.file: tt.body})
			_, err := oci.Build(dir, tt.opts...)
			if tt.wantL == 0 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, oci.ErrPlaintextSecret)
			var fe *oci.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, filepath.Join(dir, "apps", tt.file), fe.Path)
			assert.Equal(t, tt.wantL, fe.Line)
			assert.NotContains(t, err.Error(), "hunter2")
		})
	}
}

func TestBuildBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file.yaml")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	unreadable := t.TempDir()
	testutil.WriteFiles(t, unreadable, map[string]string{"locked.yaml": "x"})
	require.NoError(t, os.Chmod(filepath.Join(unreadable, "locked.yaml"), 0o000))
	tests := []struct {
		name, dir string
		opts      []oci.BuildOption
		want      string
	}{
		{name: "missing dir", dir: filepath.Join(t.TempDir(), "nope"), want: "no such file or directory"},
		{name: "file instead of dir", dir: file, want: file + ": not a directory"},
		{name: "reserved annotation", dir: t.TempDir(), opts: []oci.BuildOption{oci.WithAnnotations(map[string]string{"org.opencontainers.image.revision": "x"})}, want: `annotation "org.opencontainers.image.revision" is set by fluxpack`},
		{name: "credentials in source", dir: t.TempDir(), opts: []oci.BuildOption{oci.WithSource("https://user:tok3n@example.com/x.git")}, want: "holds credentials"},
	}
	if os.Geteuid() != 0 { // root reads any file
		tests = append(tests, struct {
			name, dir string
			opts      []oci.BuildOption
			want      string
		}{name: "unreadable file", dir: unreadable, want: filepath.Join(unreadable, "locked.yaml") + ": permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oci.Build(tt.dir, tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Contains(t, err.Error(), "building artifact from "+tt.dir)
			assert.NotContains(t, err.Error(), "tok3n")
		})
	}
}

func TestBuildGitDefaults(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, map[string]string{"deploy/a.yaml": "kind: ConfigMap\n"})
	gitRun := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-03-04T05:06:07Z", "GIT_COMMITTER_DATE=2026-03-04T05:06:07Z",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	gitRun("init", "-q", "-b", "trunk")
	gitRun("remote", "add", "origin", "https://bot:s3cret@git.example.com/acme/platform.git")
	gitRun("add", ".")
	gitRun("commit", "-q", "-m", "init")
	commit := gitRun("rev-parse", "HEAD")
	commit = commit[:len(commit)-1]

	art, err := oci.Build(filepath.Join(dir, "deploy"), oci.WithGitDefaults())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"org.opencontainers.image.created":  "2026-03-04T05:06:07Z",
		"org.opencontainers.image.source":   "https://git.example.com/acme/platform.git",
		"org.opencontainers.image.revision": "trunk@sha1:" + commit,
	}, art.Annotations)

	// Explicit values win over the checkout's.
	art, err = oci.Build(filepath.Join(dir, "deploy"), oci.WithGitDefaults(), oci.WithRevision("v1@sha1:"+commit), oci.WithCreated(time.Unix(86400, 0)))
	require.NoError(t, err)
	assert.Equal(t, "v1@sha1:"+commit, art.Annotations["org.opencontainers.image.revision"])
	assert.Equal(t, "1970-01-02T00:00:00Z", art.Annotations["org.opencontainers.image.created"])

	// Outside a checkout nothing is filled in.
	outside := t.TempDir()
	testutil.WriteFiles(t, outside, map[string]string{"a.yaml": "kind: ConfigMap\n"})
	art, err = oci.Build(outside, oci.WithGitDefaults())
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"org.opencontainers.image.created": "1970-01-01T00:00:00Z"}, art.Annotations)

	// Unless WithGitDir names a checkout to read (a copy's origin).
	art, err = oci.Build(outside, oci.WithGitDefaults(), oci.WithGitDir(filepath.Join(dir, "deploy")))
	require.NoError(t, err)
	assert.Equal(t, "trunk@sha1:"+commit, art.Annotations["org.opencontainers.image.revision"])
	_, err = oci.Build(outside, oci.WithGitDir(""))
	require.ErrorIs(t, err, oci.ErrInvalidOption)
}
