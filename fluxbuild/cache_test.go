package fluxbuild

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	sigyaml "sigs.k8s.io/yaml"
)

// cacheFixtureRoots are the fixture repositories of the module: every
// Flux Kustomization in them, and every folder holding a kustomization
// file, is built with and without the cache.
func cacheFixtureRoots(t *testing.T) []string {
	t.Helper()
	var roots []string
	for _, parent := range []string{"../fluxrepo/testdata/repos", "../internal/preview/testdata", "testdata/preview", "../e2e/testdata/rules"} {
		des, err := os.ReadDir(parent)
		require.NoError(t, err)
		for _, d := range des {
			if d.IsDir() {
				roots = append(roots, filepath.Join(parent, d.Name()))
			}
		}
	}
	return append(roots, "../review/testdata/repo", "../review/testdata/generator/repo", "../review/testdata/include", "../review/testdata/resourceset")
}

// fixtureKustomizations returns the Flux Kustomizations of the YAML files
// under root, and one for every folder holding a kustomization file.
func fixtureKustomizations(t *testing.T, root string) []*kustomizev1.Kustomization {
	t.Helper()
	var out []*kustomizev1.Kustomization
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if slices.ContainsFunc(konfig.RecognizedKustomizationFileNames(), func(n string) bool {
				_, err := os.Stat(filepath.Join(p, n))
				return err == nil
			}) {
				rel, _ := filepath.Rel(root, p)
				out = append(out, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./" + filepath.ToSlash(rel)}})
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(data, []byte("kustomize.toolkit.fluxcd.io/")) {
			return nil //nolint:nilerr // not a file of Kustomizations
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			var meta struct{ APIVersion, Kind string }
			if doc.Decode(&meta) != nil || meta.Kind != kustomizev1.KustomizationKind || !strings.HasPrefix(meta.APIVersion, "kustomize.toolkit.fluxcd.io/") {
				continue
			}
			raw, err := yaml.Marshal(&doc)
			require.NoError(t, err)
			ks := &kustomizev1.Kustomization{}
			if sigyaml.Unmarshal(raw, ks) == nil {
				out = append(out, ks)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// Every build of every fixture repository gives the same objects (their
// nodes line for line) and the same error from the cache as without it,
// and its preview prints the same: once when the build is kept, and again
// when it is taken from the cache.
func TestCacheMatchesBuild(t *testing.T) {
	dir := t.TempDir()
	var builds int
	for _, root := range cacheFixtureRoots(t) {
		src := Source{Dir: root}
		for _, ks := range fixtureKustomizations(t, root) {
			name := root + ":" + ks.Spec.Path
			builds++
			want, wantErr := Build(t.Context(), src, ks)
			wantPreview, wantPreviewErr := Preview(t.Context(), src, ks)
			for _, pass := range []string{"kept", "taken"} {
				got, err := Build(t.Context(), src, ks, WithCache(dir))
				if wantErr != nil {
					require.Error(t, err, "%s (%s)", name, pass)
					assert.Equal(t, wantErr.Error(), err.Error(), "%s (%s)", name, pass)
					continue
				}
				require.NoError(t, err, "%s (%s)", name, pass)
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(Object{})); diff != "" {
					t.Errorf("Build of %s from the cache (%s) differs (-want +got):\n%s", name, pass, diff)
				}
				ctx, err := ContextWithCache(t.Context(), dir)
				require.NoError(t, err)
				gotPreview, err := Preview(ctx, src, ks)
				if wantPreviewErr != nil {
					require.Error(t, err, "%s (%s)", name, pass)
					assert.Equal(t, wantPreviewErr.Error(), err.Error(), "%s (%s)", name, pass)
					continue
				}
				require.NoError(t, err, "%s (%s)", name, pass)
				assert.Equal(t, string(wantPreview), string(gotPreview), "Preview of %s from the cache (%s)", name, pass)
			}
		}
	}
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	t.Logf("%d Kustomizations; %d kustomize builds kept, %d taken from the cache", builds, c.stores.Load(), c.hits.Load())
	require.Greater(t, builds, 90, "the fixtures hold Kustomizations")
	// Each Kustomization that kustomize builds is kept once (the first
	// Build; the first Preview asks for the same build) and then taken at
	// least three times.
	require.Positive(t, c.stores.Load())
	assert.GreaterOrEqual(t, c.hits.Load(), 3*c.stores.Load(), "the builds are taken from the cache")
}

// cacheTree writes files (slash paths under root) and returns root.
func cacheTree(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return root
}

const (
	cacheDeploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers: [{name: app, image: web:1}]\n"
	cacheKus    = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
)

// A build is taken from the cache only when everything it read is as it
// was: each change below, made after the build was kept, must give the
// build of the changed tree, and an unchanged tree the kept build.
func TestCacheSeesChanges(t *testing.T) {
	base := map[string]string{
		"base/kustomization.yaml":         cacheKus + "resources: [deploy.yaml]\n",
		"base/deploy.yaml":                cacheDeploy,
		"app/kustomization.yaml":          cacheKus + "resources: [../base, sub]\ncomponents: [../comp]\nconfigMapGenerator: [{name: cfg, files: [conf/app.properties]}]\n",
		"app/conf/app.properties":         "level=info\n",
		"app/sub/kustomization.yaml":      cacheKus + "resources: [cm.yaml]\n",
		"app/sub/cm.yaml":                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sub}\ndata: {a: b}\n",
		"comp/kustomization.yaml":         "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches: [{path: patch.yaml}]\n",
		"comp/patch.yaml":                 "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 2}\n",
		"plain/one.yaml":                  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n",
		"plain/nested/kustomization.yaml": cacheKus + "resources: [two.yaml]\n",
		"plain/nested/two.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n",
	}
	app := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	plain := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./plain", TargetNamespace: "apps"}}
	tests := []struct {
		name   string
		ks     *kustomizev1.Kustomization
		change func(t *testing.T, root string)
		hit    bool // the build after the change is the kept one
	}{
		{name: "nothing changed", ks: app, change: func(*testing.T, string) {}, hit: true},
		{name: "a file of another folder's base", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"base/deploy.yaml": strings.Replace(cacheDeploy, "web:1", "web:2", 1)})
		}},
		{name: "a component's patch", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"comp/patch.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 3}\n"})
		}},
		{name: "a generator's file", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"app/conf/app.properties": "level=debug\n"})
		}},
		{name: "a sub-folder's resource", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"app/sub/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sub}\ndata: {a: c}\n"})
		}},
		{name: "a second kustomization file where kustomize looked for one", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"app/sub/kustomization.yml": cacheKus + "resources: [cm.yaml]\n"})
		}},
		{name: "a resource folder replaced by a file", ks: app, change: func(t *testing.T, root string) {
			require.NoError(t, os.RemoveAll(filepath.Join(root, "app", "sub")))
			cacheTree(t, root, map[string]string{"app/sub": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sub-file}\n"})
		}},
		{name: "the kustomization file's lines only", ks: app, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"app/kustomization.yaml": "# the generator moves down a line\n" + base["app/kustomization.yaml"]})
		}},
		{name: "a new file in a folder Flux lists", ks: plain, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"plain/three.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: three}\n"})
		}},
		{name: "a new file beside a listed kustomization", ks: plain, change: func(t *testing.T, root string) {
			cacheTree(t, root, map[string]string{"plain/nested/kustomization.yaml": cacheKus + "resources: [two.yaml, four.yaml]\n",
				"plain/nested/four.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: four}\n"})
		}},
		{name: "the Kustomization's own fields", ks: plain, change: func(*testing.T, string) {
			plain.Spec.NamePrefix = "x-"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cacheTree(t, t.TempDir(), base)
			dir := t.TempDir()
			ks := tt.ks.DeepCopy()
			kept, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
			require.NoError(t, err)
			c := (&config{cacheDir: dir}).cacheFor(t.Context())
			require.Equal(t, int64(1), c.stores.Load(), "the build is kept")
			tt.change(t, root)
			if tt.ks == plain {
				ks = plain.DeepCopy()
				plain.Spec.NamePrefix = ""
			}
			want, wantErr := Build(t.Context(), Source{Dir: root}, ks)
			got, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
			if wantErr != nil {
				require.Error(t, err, "the changed tree does not build, and neither may the cache")
				assert.Equal(t, wantErr.Error(), err.Error())
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(Object{})); diff != "" {
				t.Errorf("build after the change (-want +got):\n%s", diff)
			}
			if tt.hit {
				assert.Equal(t, int64(1), c.hits.Load(), "an unchanged tree's build is taken from the cache")
				assert.Empty(t, cmp.Diff(kept, got, cmp.AllowUnexported(Object{})))
			} else {
				assert.Zero(t, c.hits.Load(), "the build is not taken from the cache")
				assert.NotEmpty(t, cmp.Diff(kept, got, cmp.AllowUnexported(Object{})), "the fixture's change must change the build")
			}
		})
	}
}

// One entry serves the same tree in another place (a base revision's
// copy), and an entry that cannot be read is a miss, not an error.
func TestCacheMovesAndCorruption(t *testing.T) {
	files := map[string]string{
		"base/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        cacheDeploy,
		"app/kustomization.yaml":  cacheKus + "resources: [../base]\nnamePrefix: p-\n",
	}
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	dir := t.TempDir()
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	one := cacheTree(t, t.TempDir(), files)
	want, err := Build(t.Context(), Source{Dir: one}, ks, WithCache(dir))
	require.NoError(t, err)
	two := cacheTree(t, t.TempDir(), files)
	got, err := Build(t.Context(), Source{Dir: two}, ks, WithCache(dir))
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.hits.Load(), "the copy's build is taken from the cache")
	assert.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(Object{})))

	var entries []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != cachePruned {
			entries = append(entries, p)
		}
		return err
	}))
	require.Len(t, entries, 1)
	info, err := os.Stat(entries[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "readable by its owner only")
	for _, corrupt := range []func([]byte) []byte{
		func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b },
		func(b []byte) []byte { return b[:len(b)/2] },
		func([]byte) []byte { return nil },
	} {
		data, err := os.ReadFile(entries[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(entries[0], corrupt(data), 0o600))
		hits := c.hits.Load()
		got, err := Build(t.Context(), Source{Dir: two}, ks, WithCache(dir))
		require.NoError(t, err)
		assert.Equal(t, hits, c.hits.Load(), "a corrupt entry is a miss")
		assert.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(Object{})))
	}
}

// No Secret value is written to the cache: a build whose objects hold a
// Secret that is not SOPS ciphertext (a secretGenerator's, a Secret
// written in clear) is not kept; one whose Secrets are all ciphertext is.
func TestCacheKeepsNoSecret(t *testing.T) {
	const clear = "hunter2-very-secret"
	tests := []struct {
		name string
		kus  string
		kept bool
	}{
		{name: "secretGenerator literal", kus: cacheKus + "resources: [deploy.yaml]\nsecretGenerator: [{name: s, literals: [password=" + clear + "]}]\n"},
		{name: "secretGenerator file", kus: cacheKus + "resources: [deploy.yaml]\nsecretGenerator: [{name: s, files: [pw.txt]}]\n"},
		{name: "a Secret in clear", kus: cacheKus + "resources: [deploy.yaml, clear.yaml]\n"},
		{name: "a SOPS Secret", kus: cacheKus + "resources: [deploy.yaml, sops.yaml]\n", kept: true},
		{name: "1Password references", kus: cacheKus + "resources: [deploy.yaml, op.yaml]\n", kept: true},
		{name: "a 1Password reference beside a clear value", kus: cacheKus + "resources: [deploy.yaml, opclear.yaml]\n"},
		{name: "a clear value that starts like a reference", kus: cacheKus + "resources: [deploy.yaml, oplike.yaml]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := cacheTree(t, t.TempDir(), map[string]string{
				"app/kustomization.yaml": tt.kus,
				"app/deploy.yaml":        cacheDeploy,
				"app/pw.txt":             clear,
				"app/clear.yaml":         "apiVersion: v1\nkind: Secret\nmetadata: {name: c}\nstringData: {password: " + clear + "}\n",
				"app/op.yaml":            "apiVersion: v1\nkind: Secret\nmetadata: {name: op}\nstringData: {token: op://Vault/item/token, url: '{{ op://Vault/item/url }}'}\ndata: {key: b3A6Ly9WYXVsdC9pdGVtL2tleQ==}\n",
				"app/opclear.yaml":       "apiVersion: v1\nkind: Secret\nmetadata: {name: op}\nstringData: {token: op://Vault/item/token, password: " + clear + "}\n",
				"app/oplike.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: op}\nstringData: {password: 'op://" + clear + "'}\n",
				"app/sops.yaml":          "apiVersion: v1\nkind: Secret\nmetadata: {name: e}\ndata: {password: 'ENC[AES256_GCM,data:abc=,iv:x=,tag:y=,type:str]'}\nsops: {version: 3.9.0}\n",
			})
			dir := t.TempDir()
			ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
			objs, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
			require.NoError(t, err)
			require.True(t, slices.ContainsFunc(objs, func(o *Object) bool { return o.Kind == "Secret" }), "the fixture builds a Secret")
			c := (&config{cacheDir: dir}).cacheFor(t.Context())
			assert.Equal(t, tt.kept, c.stores.Load() == 1, "kept")
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				require.NoError(t, err)
				for _, v := range []string{clear, base64.StdEncoding.EncodeToString([]byte(clear))} {
					assert.NotContains(t, string(data), v, "%s holds the Secret's value", p)
				}
				return nil
			}))
		})
	}
}

// A build that reaches outside the source (a bootstrap folder's component
// beside it) is kept, and a change there is seen; one that kustomize would
// fetch is not kept.
func TestCacheOutsideAndRemote(t *testing.T) {
	outside := t.TempDir()
	cacheTree(t, outside, map[string]string{"shared/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\n", "shared/deploy.yaml": cacheDeploy})
	root := filepath.Join(outside, "repo")
	cacheTree(t, root, map[string]string{
		"out/kustomization.yaml":    cacheKus + "resources: [../../shared]\n",
		"remote/kustomization.yaml": cacheKus + "resources:\n- https://github.com/example/repo//deploy?ref=v1\n",
	})
	dir := t.TempDir()
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	out := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./out"}}
	build := func() string {
		t.Helper()
		objs, err := Build(t.Context(), Source{Dir: root}, out, WithCache(dir))
		require.NoError(t, err)
		require.Len(t, objs, 1)
		data, err := yaml.Marshal(objs[0].Node)
		require.NoError(t, err)
		return string(data)
	}
	assert.Contains(t, build(), "web:1")
	assert.Equal(t, int64(1), c.stores.Load(), "the build that reads outside the source is kept")
	assert.Contains(t, build(), "web:1")
	assert.Equal(t, int64(1), c.hits.Load(), "and read again")
	cacheTree(t, outside, map[string]string{"shared/deploy.yaml": strings.Replace(cacheDeploy, "web:1", "web:2", 1)})
	assert.Contains(t, build(), "web:2", "a change outside the source is seen")
	assert.Equal(t, int64(1), c.hits.Load())

	stores := c.stores.Load()
	_, err := Build(t.Context(), Source{Dir: root}, &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./remote"}}, WithCache(dir))
	require.ErrorIs(t, err, ErrRemote)
	assert.Equal(t, stores, c.stores.Load(), "a remote build is not kept")
}

func TestWithCacheValidates(t *testing.T) {
	_, err := Build(t.Context(), Source{Dir: t.TempDir()}, &kustomizev1.Kustomization{}, WithCache(""))
	require.ErrorIs(t, err, ErrInvalidOption)
	ctx, err := ContextWithCache(t.Context(), "")
	require.NoError(t, err)
	assert.Nil(t, (&config{}).cacheFor(ctx), "an empty directory: no cache")
}

// Builds that share a cache at once each give the build's objects, and
// the race detector (make test runs -race) sees nothing.
func TestCacheConcurrent(t *testing.T) {
	root := cacheTree(t, t.TempDir(), map[string]string{
		"base/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        cacheDeploy,
		"a/kustomization.yaml":    cacheKus + "resources: [../base]\nnamePrefix: a-\n",
		"b/kustomization.yaml":    cacheKus + "resources: [../base]\nnamePrefix: b-\nconfigMapGenerator: [{name: cfg, literals: [k=v]}]\n",
	})
	dir := t.TempDir()
	var kss []*kustomizev1.Kustomization
	var want [][]*Object
	for _, p := range []string{"./a", "./b", "./base"} {
		ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: p}}
		objs, err := Build(t.Context(), Source{Dir: root}, ks)
		require.NoError(t, err)
		kss, want = append(kss, ks), append(want, objs)
	}
	got := make([][]*Object, 8*len(kss))
	errs := make([]error, len(got))
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = Build(t.Context(), Source{Dir: root}, kss[i%len(kss)], WithCache(dir)) })
	}
	wg.Wait()
	for i := range got {
		require.NoError(t, errs[i])
		assert.Empty(t, cmp.Diff(want[i%len(kss)], got[i], cmp.AllowUnexported(Object{})), "build %d", i)
	}
	assert.Positive(t, (&config{cacheDir: dir}).cacheFor(t.Context()).stores.Load())
}

// A key keeps an entry for each content its files had (a change's base
// and head): both sides of a diff are taken from the cache, run after
// run, and a key keeps at most cacheVariants of them.
func TestCacheKeepsBothSides(t *testing.T) {
	files := func(tag int) map[string]string {
		return map[string]string{
			"app/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\nnamePrefix: p-\n",
			"app/deploy.yaml":        strings.Replace(cacheDeploy, "web:1", fmt.Sprintf("web:%d", tag), 1),
		}
	}
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	dir := t.TempDir()
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	var roots []string
	for tag := range cacheVariants + 2 {
		roots = append(roots, cacheTree(t, t.TempDir(), files(tag)))
	}
	for range 2 {
		for _, root := range roots[:2] {
			_, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
			require.NoError(t, err)
		}
	}
	assert.Equal(t, int64(2), c.stores.Load(), "each side kept once")
	assert.Equal(t, int64(2), c.hits.Load(), "each side taken on the second run")
	for _, root := range roots {
		_, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
		require.NoError(t, err)
	}
	hits := c.hits.Load()
	for _, root := range roots[len(roots)-cacheVariants:] {
		_, err := Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
		require.NoError(t, err)
	}
	assert.Equal(t, hits+cacheVariants, c.hits.Load(), "the newest entries are kept")
	_, err := Build(t.Context(), Source{Dir: roots[0]}, ks, WithCache(dir))
	require.NoError(t, err)
	assert.Equal(t, hits+cacheVariants, c.hits.Load(), "beyond cacheVariants the oldest goes")
}

// A source reached through a symbolic link (a temporary folder on macOS)
// is cached as the folder it leads to.
func TestCacheThroughLink(t *testing.T) {
	real := cacheTree(t, t.TempDir(), map[string]string{
		"app/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\nnamePrefix: p-\n",
		"app/deploy.yaml":        cacheDeploy,
	})
	link := filepath.Join(t.TempDir(), "source")
	require.NoError(t, os.Symlink(real, link))
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	dir := t.TempDir()
	want, err := Build(t.Context(), Source{Dir: link}, ks)
	require.NoError(t, err)
	for range 2 {
		got, err := Build(t.Context(), Source{Dir: link}, ks, WithCache(dir))
		require.NoError(t, err)
		assert.Empty(t, cmp.Diff(want, got, cmp.AllowUnexported(Object{})))
	}
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	assert.Equal(t, int64(1), c.stores.Load())
	assert.Equal(t, int64(1), c.hits.Load())
}

// A build whose caller stopped waiting for it (its ctx is done once the
// build has begun) gives what it built but keeps nothing; the same build
// with a live ctx is kept.
func TestCacheKeepsNothingOfACancelledBuild(t *testing.T) {
	root := cacheTree(t, t.TempDir(), map[string]string{
		"app/kustomization.yaml": cacheKus + "resources: [deploy.yaml]\n",
		"app/deploy.yaml":        cacheDeploy,
	})
	dir := t.TempDir()
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./app"}}
	c := (&config{cacheDir: dir}).cacheFor(t.Context())
	ctx := &doneAfter{Context: t.Context(), live: 2} // the two checks before kustomize runs
	objs, err := Build(ctx, Source{Dir: root}, ks, WithCache(dir))
	require.NoError(t, err)
	require.NotEmpty(t, objs)
	require.Positive(t, ctx.asked.Load()-2, "asked again once kustomize ran")
	assert.Zero(t, c.stores.Load(), "nothing kept")
	_, err = Build(t.Context(), Source{Dir: root}, ks, WithCache(dir))
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.stores.Load(), "kept")
}

// doneAfter is a context whose Err is nil for its first live calls, and
// context.Canceled after.
type doneAfter struct {
	context.Context
	live  int64
	asked atomic.Int64
}

func (d *doneAfter) Err() error {
	if d.asked.Add(1) > d.live {
		return context.Canceled
	}
	return nil
}
