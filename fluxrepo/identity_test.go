package fluxrepo_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// A tree read for its objects' identities where lint needs no more lints
// as the tree read whole: the same plan, findings, coverage and summary,
// on every fixture. A rule that reads more of a kind than
// lint.ReadsContent says fails here.
//
// And the same again with kustomize's builds taken from the cache (the
// CLI's reads).
func TestIdentityOnlyLintsTheSame(t *testing.T) {
	partial := 0
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			root := filepath.Join("testdata", "repos", f.repo)
			readIn := func(ctx context.Context, more ...fluxrepo.Option) (*fluxrepo.Repository, *lint.Report) {
				opts := append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)
				repo, err := fluxrepo.Read(ctx, filepath.Join(root, f.entry), append(opts, more...)...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = repo.Close() })
				rep, err := lint.Repository(ctx, repo, f.lintOptions(t)...)
				require.NoError(t, err)
				return repo, rep
			}
			read := func(more ...fluxrepo.Option) (*fluxrepo.Repository, *lint.Report) {
				return readIn(t.Context(), more...)
			}
			whole, want := read()
			light, got := read(fluxrepo.WithIdentityOnly(lint.ReadsContent))
			require.Equal(t, want.Findings, got.Findings)
			require.Equal(t, want.Coverage, got.Coverage)
			require.Equal(t, want.Summary(), got.Summary())
			cached, err := fluxbuild.ContextWithCache(t.Context(), t.TempDir())
			require.NoError(t, err)
			readIn(cached) // keeps the builds
			_, got = readIn(cached, fluxrepo.WithIdentityOnly(lint.ReadsContent))
			require.Equal(t, want.Findings, got.Findings, "from the cache")
			require.Equal(t, want.Coverage, got.Coverage, "from the cache")
			require.Equal(t, want.Summary(), got.Summary(), "from the cache")
			require.Len(t, light.Plan.Layers, len(whole.Plan.Layers))
			before := partial
			defer func() { t.Logf("%d read for their identity only", partial-before) }()
			for i, l := range whole.Plan.Layers {
				assert.Equal(t, l.Name, light.Plan.Layers[i].Name)
				assert.Equal(t, l.Kustomization, light.Plan.Layers[i].Kustomization)
				assert.Len(t, light.Inputs[i].Objects, len(whole.Inputs[i].Objects), l.Name)
				for _, o := range light.Inputs[i].Objects {
					if o.IdentityOnly {
						partial++
					}
				}
			}
		})
	}
	assert.Greater(t, partial, 15, "objects read for their identity only: the fixtures must have some")
}

// The same on a tree of plain directories whose objects the races are
// about: custom resources before their CRD, objects in namespaces nobody
// makes, an object two layers apply, one applied only if missing, local
// configuration, health checks on plain objects.
func TestIdentityOnlyLintsRacesTheSame(t *testing.T) {
	root := t.TempDir()
	ks := func(name, path string, deps ...string) string {
		s := "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: " + name + ", namespace: flux-system}\n" +
			"spec:\n  interval: 10m\n  path: " + path + "\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n"
		if len(deps) > 0 {
			s += "  dependsOn:\n"
			for _, d := range deps {
				s += "  - name: " + d + "\n"
			}
		}
		return s
	}
	files := map[string]string{
		"clusters/c/flux-system/sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 1m, url: https://example.com/r.git, ref: {branch: main}}\n" +
			ks("flux-system", "./clusters/c"),
		"clusters/c/layers.yaml": ks("crds", "./crds") + ks("apps", "./apps") + ks("more", "./more", "apps") +
			"  healthChecks:\n  - {apiVersion: apps/v1, kind: Deployment, name: web, namespace: apps}\n  - {apiVersion: apps/v1, kind: Deployment, name: gone, namespace: apps}\n",
		"crds/widgets.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
		"apps/web.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\nspec:\n  template:\n    spec:\n      containers:\n      - {name: web, image: web:1}\n" +
			"---\napiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: apps\nspec: {size: 1}\n" +
			"---\napiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: nowhere}\n" +
			"---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: shared\n  namespace: apps\n" +
			"---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: once\n  namespace: apps\n  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}\n",
		"more/more.yaml": "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: shared\n  namespace: apps\n" +
			"---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: once\n  namespace: apps\n  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}\n" +
			"---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: local, namespace: apps, annotations: {config.kubernetes.io/local-config: 'true'}}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	lintOf := func(opts ...fluxrepo.Option) (*lint.Report, int) {
		repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, opts...)...)
		require.NoError(t, err)
		defer repo.Close()
		rep, err := lint.Repository(t.Context(), repo)
		require.NoError(t, err)
		n := 0
		for _, in := range repo.Inputs {
			for _, o := range in.Objects {
				if o.IdentityOnly {
					n++
				}
			}
		}
		return rep, n
	}
	want, _ := lintOf()
	got, n := lintOf(fluxrepo.WithIdentityOnly(lint.ReadsContent))
	assert.Equal(t, 8, n, "the Namespace, the Deployment, the Widget, the Service and the ServiceAccounts")
	rules := map[lint.Rule]bool{}
	for _, f := range want.Findings {
		rules[f.Rule] = true
	}
	for _, r := range []lint.Rule{lint.RuleCRDOrder, lint.RuleNamespaceOrder, lint.RuleDualOwner, lint.RuleHealthCheck} {
		assert.True(t, rules[r], "the tree must have a %s finding: %v", r, want.Findings)
	}
	assert.Equal(t, want.Findings, got.Findings)
	assert.Equal(t, want.Summary(), got.Summary())
}

// What makes a Secret from its content (ext-postgres-operator's
// PostgresUser, spec.secretName) is read whole: read for its identity, the
// Secret a layer substitutes from it would be made by no layer.
func TestIdentityOnlyReadsWhatMakesSecrets(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"clusters/c/flux-system/sync.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 1m, url: https://example.com/r.git, ref: {branch: main}}\n" +
			"---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {interval: 10m, path: ./clusters/c, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n",
		"clusters/c/layers.yaml": "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: db, namespace: flux-system}\nspec: {interval: 10m, path: ./db, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}\n" +
			"---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\nspec:\n  interval: 10m\n  path: ./app\n  prune: true\n  sourceRef: {kind: GitRepository, name: flux-system}\n  dependsOn: [{name: db}]\n" +
			"  postBuild:\n    substituteFrom: [{kind: Secret, name: creds-app}]\n",
		"db/users.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: flux-system}\n---\napiVersion: db.movetokube.com/v1alpha1\nkind: PostgresUser\nmetadata:\n  name: app\n  namespace: flux-system\nspec:\n  role: app\n  database: app\n  secretName: creds\n",
		"app/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata: {url: '${POSTGRES_URL}'}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	lintOf := func(opts ...fluxrepo.Option) *lint.Report {
		repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, opts...)...)
		require.NoError(t, err)
		defer repo.Close()
		rep, err := lint.Repository(t.Context(), repo)
		require.NoError(t, err)
		return rep
	}
	want := lintOf()
	for _, f := range want.Findings {
		assert.NotEqual(t, lint.RuleSubstituteFrom, f.Rule, "the PostgresUser makes the Secret: %v", f)
	}
	assert.Equal(t, want.Findings, lintOf(fluxrepo.WithIdentityOnly(lint.ReadsContent)).Findings)
}
