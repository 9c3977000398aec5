package oci_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	fluxoci "github.com/fluxcd/pkg/oci"
	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/oci"
)

func TestPushOnlyWhatChanged(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/platform:v1"

	first, err := oci.Push(t.Context(), dir, url, oci.WithRevision("main@sha1:aaaa"))
	require.NoError(t, err)
	assert.True(t, first.Pushed)
	built, err := oci.Build(dir, oci.WithRevision("main@sha1:aaaa"))
	require.NoError(t, err)
	assert.Equal(t, built.Digest.String(), first.Digest, "pushed digest is the built one")
	assert.Equal(t, reg.Host+"/platform", first.Repository)
	assert.Equal(t, reg.Host+"/platform@"+first.Digest, first.Ref())
	assert.Equal(t, first.Digest, tagDigest(t, reg.Host+"/platform:v1"))

	// Same content, another revision: nothing sent, tag not moved.
	reg.Reset()
	second, err := oci.Push(t.Context(), dir, url, oci.WithRevision("main@sha1:bbbb"))
	require.NoError(t, err)
	assert.False(t, second.Pushed)
	assert.Equal(t, first.Digest, second.Digest)
	assert.Zero(t, reg.BlobUploads(), "blob uploads for unchanged content")
	for _, r := range reg.Requests() {
		assert.True(t, strings.HasPrefix(r, "GET ") || strings.HasPrefix(r, "HEAD "), "unchanged push sent %s", r)
	}
	assert.Equal(t, first.Digest, tagDigest(t, reg.Host+"/platform:v1"))

	// Forced: pushed again, with the new revision.
	forced, err := oci.Push(t.Context(), dir, url, oci.WithRevision("main@sha1:bbbb"), oci.WithForce())
	require.NoError(t, err)
	assert.True(t, forced.Pushed)
	assert.NotEqual(t, first.Digest, forced.Digest)

	// Changed content is pushed.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("kind: Namespace\n"), 0o644))
	third, err := oci.Push(t.Context(), dir, url, oci.WithRevision("main@sha1:cccc"))
	require.NoError(t, err)
	assert.True(t, third.Pushed)
	assert.Equal(t, third.Digest, tagDigest(t, reg.Host+"/platform:v1"))
}

func TestPushTagsLast(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1.2.3", oci.WithTags("latest", "stable"))
	require.NoError(t, err)
	assert.Equal(t, []string{"v1.2.3", "latest", "stable"}, res.Tags)

	reqs := reg.Requests()
	lastBlob, firstManifest := -1, len(reqs)
	for i, r := range reqs {
		if strings.Contains(r, "/blobs/") && !strings.HasPrefix(r, "HEAD") && !strings.HasPrefix(r, "GET") {
			lastBlob = i
		}
		if strings.HasPrefix(r, "PUT ") && strings.Contains(r, "/manifests/") && i < firstManifest {
			firstManifest = i
		}
	}
	require.Greater(t, lastBlob, -1, "blobs were uploaded: %v", reqs)
	assert.Less(t, lastBlob, firstManifest, "every blob before the first manifest: %v", reqs)
	for _, tag := range res.Tags {
		assert.Equal(t, res.Digest, tagDigest(t, reg.Host+"/platform:"+tag))
	}

	// Unchanged content with a new extra tag: the tag is added, nothing else.
	reg.Reset()
	res, err = oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1.2.3", oci.WithTags("prod"))
	require.NoError(t, err)
	assert.False(t, res.Pushed)
	assert.Zero(t, reg.BlobUploads())
	assert.Equal(t, res.Digest, tagDigest(t, reg.Host+"/platform:prod"))
}

// An unchanged push uploads nothing, but says what it did to each extra
// tag: created where it was missing, moved from the artifact it pointed
// at, kept where it pointed at the content already.
func TestPushUnchangedTagUpdates(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir, other := t.TempDir(), t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	testutil.WriteFiles(t, other, map[string]string{"other.yaml": "kind: Namespace\n"})
	url := "oci://" + reg.Host + "/platform"
	first, err := oci.Push(t.Context(), dir, url+":v1", oci.WithTags("stable"))
	require.NoError(t, err)
	assert.Nil(t, first.TagUpdates, "a push that uploaded points every tag at the new artifact")
	elsewhere, err := oci.Push(t.Context(), other, url+":prod")
	require.NoError(t, err)

	res, err := oci.Push(t.Context(), dir, url+":v1", oci.WithTags("stable", "latest", "prod"))
	require.NoError(t, err)
	assert.False(t, res.Pushed)
	assert.Equal(t, []string{"v1", "stable", "latest", "prod"}, res.Tags)
	assert.Equal(t, []oci.TagUpdate{
		{Tag: "stable", Change: oci.TagKept},
		{Tag: "latest", Change: oci.TagCreated},
		{Tag: "prod", Change: oci.TagMoved, From: elsewhere.Digest},
	}, res.TagUpdates)
	for _, tag := range res.Tags {
		assert.Equal(t, first.Digest, tagDigest(t, reg.Host+"/platform:"+tag), "tag %s", tag)
	}
}

func TestPushedByFluxpackPulledByFlux(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1", oci.WithSource("https://example.com/p.git"), oci.WithRevision("main@sha1:abc"))
	require.NoError(t, err)

	out := t.TempDir()
	meta, err := fluxoci.NewClient(nil).Pull(t.Context(), reg.Host+"/platform:v1", out)
	require.NoError(t, err)
	assert.Equal(t, res.Ref(), meta.Digest)
	assert.Equal(t, "main@sha1:abc", meta.Revision)
	assert.Equal(t, "https://example.com/p.git", meta.Source)
	assert.Equal(t, platformFiles, testutil.ReadFiles(t, out))
}

func TestPushedByFluxPulledByFluxpack(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	fluxDigest, err := fluxoci.NewClient(nil).Push(t.Context(), reg.Host+"/platform:v1", dir,
		fluxoci.WithPushMetadata(fluxoci.Metadata{Source: "https://example.com/p.git", Revision: "main@sha1:abc"}),
		fluxoci.WithPushIgnorePaths(oci.DefaultIgnorePaths()...))
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "pulled")
	meta, err := oci.Pull(t.Context(), "oci://"+reg.Host+"/platform:v1", out)
	require.NoError(t, err)
	assert.Equal(t, fluxDigest, meta.Digest)
	assert.Equal(t, "main@sha1:abc", meta.Revision)
	assert.Equal(t, len(platformFiles), meta.Files)
	assert.Equal(t, platformFiles, testutil.ReadFiles(t, out))

	// fluxpack recognises Flux's layer as the same content: no new revision.
	reg.Reset()
	res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1", oci.WithRevision("main@sha1:def"))
	require.NoError(t, err)
	assert.False(t, res.Pushed, "same layer pushed by flux is unchanged content")
	assert.Zero(t, reg.BlobUploads())
	assert.Equal(t, fluxDigest, res.Ref())

	d, err := oci.Diff(t.Context(), dir, "oci://"+reg.Host+"/platform:v1")
	require.NoError(t, err)
	assert.Equal(t, oci.Identical, d.Status)
}

// TestPushRecognisesContentOfOtherCompressors pushes over artifacts whose
// layer holds the same tar stream as fluxpack's but other gzip bytes and no
// content digest annotation, as flux push artifact built by another Go
// release writes them: Push hashes their uncompressed stream and finds the
// content unchanged, and a stream that differs, even by its end, changed.
func TestPushRecognisesContentOfOtherCompressors(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	art, err := oci.Build(dir, oci.WithRevision("main@sha1:aaaa"))
	require.NoError(t, err)
	fastest := func(w io.Writer) io.WriteCloser {
		z, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		require.NoError(t, err)
		return z
	}
	other := encodedArtifact(t, art, fastest, false)
	otherLayer, err := other.Layers()
	require.NoError(t, err)
	otherDigest, err := otherLayer[0].Digest()
	require.NoError(t, err)
	require.NotEqual(t, art.LayerDigest, otherDigest, "the test needs other gzip bytes")

	pushed := pushImage(t, reg.Host+"/platform:v1", other)
	reg.Reset()
	res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1", oci.WithRevision("main@sha1:bbbb"))
	require.NoError(t, err)
	assert.False(t, res.Pushed, "same tar stream, other gzip bytes")
	assert.Equal(t, pushed, res.Digest)
	assert.Zero(t, reg.BlobUploads())
	for _, r := range reg.Requests() {
		assert.True(t, strings.HasPrefix(r, "GET ") || strings.HasPrefix(r, "HEAD "), "unchanged push sent %s", r)
	}
	assert.Equal(t, pushed, tagDigest(t, reg.Host+"/platform:v1"))

	t.Run("a longer stream", func(t *testing.T) {
		// The same stream with one more block of zeros after its end: a tar
		// reader sees the same files, the stream is not the same.
		padded := func(w io.Writer) io.WriteCloser { return &padWriter{WriteCloser: gzip.NewWriter(w)} }
		pushImage(t, reg.Host+"/platform:padded", encodedArtifact(t, art, padded, false))
		res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:padded", oci.WithRevision("main@sha1:aaaa"))
		require.NoError(t, err)
		assert.True(t, res.Pushed)
	})
	t.Run("other content", func(t *testing.T) {
		changed := t.TempDir()
		testutil.WriteFiles(t, changed, platformFiles)
		require.NoError(t, os.WriteFile(filepath.Join(changed, "a.yaml"), []byte("kind: Namespace\n"), 0o644))
		res, err := oci.Push(t.Context(), changed, "oci://"+reg.Host+"/platform:v1", oci.WithRevision("main@sha1:cccc"))
		require.NoError(t, err)
		assert.True(t, res.Pushed)
		assert.Equal(t, res.Digest, tagDigest(t, reg.Host+"/platform:v1"))
	})
}

// padWriter writes 512 zero bytes more before it closes.
type padWriter struct{ io.WriteCloser }

func (p *padWriter) Close() error {
	if _, err := p.Write(make([]byte, 512)); err != nil {
		return err
	}
	return p.WriteCloser.Close()
}

// TestPushOverTheOldEncoding pushes over an artifact as fluxpack pushed it
// before its layer was gzipped by klauspost/compress: the same tar stream
// through the standard library's gzip.NewWriter, the content digest
// annotation on the layer. Push tells unchanged content by that annotation,
// so a change of compressor moves no tag: nothing is uploaded, no layer is
// even downloaded, and the tag stays where it was.
func TestPushOverTheOldEncoding(t *testing.T) {
	dir := t.TempDir()
	writeGoldenTree(t, dir)
	art, err := oci.Build(dir, goldenOptions()...)
	require.NoError(t, err)
	stdlib := func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }
	// The old encoding under another Go release: other gzip bytes.
	otherRelease := func(w io.Writer) io.WriteCloser {
		z, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		require.NoError(t, err)
		return z
	}
	for _, tt := range []struct {
		name     string
		compress func(io.Writer) io.WriteCloser
		other    bool // the gzip bytes differ from klauspost/compress's
	}{
		{"compress/gzip of this Go release", stdlib, false},
		{"other gzip bytes", otherRelease, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := testutil.NewRegistry(t)
			old := pushImage(t, reg.Host+"/platform:v1", encodedArtifact(t, art, tt.compress, true))
			switch {
			case tt.other:
				require.NotEqual(t, art.Digest.String(), old, "the test needs other gzip bytes")
			case strings.HasPrefix(runtime.Version(), "go1.27."):
				assert.Equal(t, art.Digest.String(), old, "Go 1.27's compress/gzip writes what klauspost/compress v1.19.2 does: the switch moved no digest")
			}

			reg.Reset()
			res, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1", oci.WithRevision("main@sha1:fedcba9876543210fedcba9876543210fedcba98"))
			require.NoError(t, err)
			assert.False(t, res.Pushed, "same tree over the old encoding")
			assert.Equal(t, old, res.Digest)
			assert.Zero(t, reg.BlobUploads(), "blob uploads")
			for _, r := range reg.Requests() {
				assert.True(t, strings.HasPrefix(r, "GET ") || strings.HasPrefix(r, "HEAD "), "unchanged push sent %s", r)
				assert.NotContains(t, r, "/blobs/", "told by the annotation, without reading the layer")
			}
			assert.Equal(t, old, tagDigest(t, reg.Host+"/platform:v1"), "the tag did not move")
		})
	}
}

func TestDiff(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	url := "oci://" + reg.Host + "/platform:v1"

	d, err := oci.Diff(t.Context(), dir, url)
	require.NoError(t, err)
	assert.Equal(t, &oci.DiffResult{Status: oci.Missing}, d)

	res, err := oci.Push(t.Context(), dir, url)
	require.NoError(t, err)
	d, err = oci.Diff(t.Context(), dir, url)
	require.NoError(t, err)
	assert.Equal(t, &oci.DiffResult{Status: oci.Identical, Digest: res.Digest}, d)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("changed\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "crs", "store.yaml")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.yaml"), []byte("new\n"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(dir, "kustomization.yaml"), 0o755))
	d, err = oci.Diff(t.Context(), dir, url)
	require.NoError(t, err)
	assert.Equal(t, &oci.DiffResult{
		Status:   oci.Differs,
		Digest:   res.Digest,
		Added:    []string{"new.yaml"},
		Removed:  []string{"crs/store.yaml"},
		Modified: []string{"a.yaml", "kustomization.yaml"},
	}, d)
}

func TestPullRefuses(t *testing.T) {
	reg := testutil.NewRegistry(t)
	src := t.TempDir()
	testutil.WriteFiles(t, src, platformFiles)
	url := "oci://" + reg.Host + "/platform:v1"
	_, err := oci.Push(t.Context(), src, url)
	require.NoError(t, err)

	t.Run("a non-empty directory", func(t *testing.T) {
		dir := t.TempDir()
		testutil.WriteFiles(t, dir, map[string]string{"mine.yaml": "keep me"})
		_, err := oci.Pull(t.Context(), url, dir)
		require.ErrorContains(t, err, dir+": directory is not empty")
		assert.Equal(t, map[string]string{"mine.yaml": "keep me"}, testutil.ReadFiles(t, dir))
	})
	t.Run("no directory", func(t *testing.T) {
		_, err := oci.Pull(t.Context(), url, "")
		require.EqualError(t, err, "pulling "+url+": no directory to extract into")
	})
	t.Run("a missing tag", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		_, err := oci.Pull(t.Context(), "oci://"+reg.Host+"/platform:nope", dir)
		require.ErrorContains(t, err, "oci://"+reg.Host+"/platform:nope")
		assert.NoDirExists(t, dir)
	})
	t.Run("an image that is not a Flux artifact", func(t *testing.T) {
		img, err := crane.Image(map[string][]byte{"etc/passwd": []byte("x")})
		require.NoError(t, err)
		require.NoError(t, crane.Push(img, reg.Host+"/plain:v1"))
		dir := filepath.Join(t.TempDir(), "out")
		_, err = oci.Pull(t.Context(), "oci://"+reg.Host+"/plain:v1", dir)
		require.ErrorContains(t, err, "is not a Flux artifact")
		assert.NoDirExists(t, dir)
	})
}

func TestTagAndList(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	v1, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1.0.0", oci.WithRevision("main@sha1:one"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("two\n"), 0o644))
	v2, err := oci.Push(t.Context(), dir, "oci://"+reg.Host+"/platform:v1.1.0", oci.WithRevision("main@sha1:two"))
	require.NoError(t, err)
	tagged, err := oci.Tag(t.Context(), "oci://"+reg.Host+"/platform:v1.1.0", []string{"latest", "v2.0.0-rc.1"})
	require.NoError(t, err)
	assert.Equal(t, v2.Digest, tagged.Digest)
	assert.Equal(t, []string{"latest", "v2.0.0-rc.1"}, tagged.Tags)

	all, err := oci.List(t.Context(), "oci://"+reg.Host+"/platform")
	require.NoError(t, err)
	var tags []string
	for _, ti := range all {
		tags = append(tags, ti.Tag)
	}
	assert.Equal(t, []string{"v2.0.0-rc.1", "v1.1.0", "v1.0.0", "latest"}, tags)

	in, err := oci.List(t.Context(), "oci://"+reg.Host+"/platform", oci.WithSemver(">=1.0.0 <2.0.0"))
	require.NoError(t, err)
	assert.Equal(t, []oci.TagInfo{
		{Tag: "v1.1.0", Digest: v2.Digest, Created: "1970-01-01T00:00:00Z", Revision: "main@sha1:two"},
		{Tag: "v1.0.0", Digest: v1.Digest, Created: "1970-01-01T00:00:00Z", Revision: "main@sha1:one"},
	}, in)

	_, err = oci.List(t.Context(), "oci://"+reg.Host+"/platform", oci.WithSemver("not a range"))
	require.ErrorIs(t, err, oci.ErrInvalidOption)
	_, err = oci.List(t.Context(), "oci://"+reg.Host+"/acme/big")
	require.ErrorIs(t, err, oci.ErrNoRepository)
	assert.EqualError(t, err, "listing oci://"+reg.Host+"/acme/big: repository not found")
	_, err = oci.Tag(t.Context(), "oci://"+reg.Host+"/platform:v1.1.0", []string{"bad tag"})
	require.ErrorContains(t, err, `invalid tag "bad tag"`)
}

func TestPushBadInput(t *testing.T) {
	reg := testutil.NewRegistry(t)
	dir := t.TempDir()
	testutil.WriteFiles(t, dir, platformFiles)
	secretDir := t.TempDir()
	testutil.WriteFiles(t, secretDir, map[string]string{"s.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2}\n"})
	emptyDir := t.TempDir()
	testutil.WriteFiles(t, emptyDir, map[string]string{".git/HEAD": "ref: refs/heads/main\n"})
	bigDir := t.TempDir()
	testutil.WriteFiles(t, bigDir, map[string]string{"a.yaml": "kind: ConfigMap\n"})
	require.NoError(t, os.Truncate(filepath.Join(bigDir, "a.yaml"), oci.MaxArtifactSize+1)) // sparse
	tests := []struct {
		name, dir, url string
		opts           []oci.PushOption
		want           string
		is             error
	}{
		{name: "credentials in the URL", dir: dir, url: "oci://ci:hunter2@" + reg.Host + "/p:v1", want: `parsing reference "oci://` + reg.Host + `/p:v1": credentials in the reference are not supported`},
		{name: "credentials in a URL without scheme", dir: dir, url: "ci:hunter2@" + reg.Host + "/p:v1", want: `parsing reference "` + reg.Host + `/p:v1": want oci://`},
		{name: "credentials in a URL that does not parse", dir: dir, url: "oci://ci:hunter2@" + reg.Host + "/p :v1", want: `parsing reference "oci://` + reg.Host + `/p :v1": credentials in the reference are not supported`},
		{name: "nothing but ignored files", dir: emptyDir, url: "oci://" + reg.Host + "/p:v1", want: emptyDir + ": no file to archive", is: oci.ErrEmptyTree},
		{name: "over the size limit", dir: bigDir, url: "oci://" + reg.Host + "/p:v1", want: filepath.Join(bigDir, "a.yaml") + ": artifact too big", is: oci.ErrTooBig},
		{name: "no scheme", dir: dir, url: reg.Host + "/p:v1", want: `parsing reference "` + reg.Host + `/p:v1": want oci://HOST/REPOSITORY[:TAG]`},
		{name: "malformed reference", dir: dir, url: "oci://" + reg.Host + "/UPPER:v1", want: "parsing reference"},
		{name: "digest instead of tag", dir: dir, url: "oci://" + reg.Host + "/p@sha256:" + strings.Repeat("a", 64), want: "want a tag, not a digest"},
		{name: "plaintext secret", dir: secretDir, url: "oci://" + reg.Host + "/p:v1", want: filepath.Join(secretDir, "s.yaml") + ":2: Secret/s: plaintext Secret"},
		{name: "unreachable registry", dir: dir, url: "oci://127.0.0.1:1/p:v1", opts: []oci.PushOption{oci.WithRetry(fastRetry)}, want: "connection refused"},
		{name: "bad CA file", dir: dir, url: "oci://" + reg.Host + "/p:v1", opts: []oci.PushOption{oci.WithCAFile(filepath.Join(dir, "a.yaml"))}, want: "holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg.Reset()
			_, err := oci.Push(t.Context(), tt.dir, tt.url, tt.opts...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), "pushing "+tt.dir+" to ")
			assert.NotContains(t, err.Error(), "hunter2")
			assert.Zero(t, reg.BlobUploads(), "nothing uploaded")
		})
	}
}

func tagDigest(t *testing.T, ref string) string {
	t.Helper()
	d, err := crane.Digest(ref)
	require.NoError(t, err)
	return d
}
