package fluxrepo_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/substitute"
)

// fixture is a repository of testdata/repos read from one entry point.
type fixture struct {
	name, repo, entry string
	opts              []fluxrepo.Option
	// kept: import keeps some Kustomization as its parent applies it (a
	// tenant's, a parent's child), a difference of its own.
	kept bool
}

var tfVars = layering.ObjectRef{Kind: "ConfigMap", Namespace: "flux-system", Name: "eks-mycluster-0-vars"}

// fixtures are modelled on the layouts people publish: seed 003's
// eight tiers (variables from a ConfigMap Terraform writes), fluxcd's
// example with an ArtifactGenerator, and a multi-tenant fleet whose tenant
// syncs from a repository of its own.
var fixtures = []fixture{
	{name: "platform-hierarchy", repo: "platform-hierarchy", entry: "clusters/mycluster-0", opts: []fluxrepo.Option{fluxrepo.WithExternal(tfVars)}},
	{name: "platform-hierarchy-undeclared", repo: "platform-hierarchy", entry: "clusters/mycluster-0"},
	{name: "fluxcd-example-staging", repo: "fluxcd-example", entry: "clusters/staging"},
	{name: "fluxcd-example-production", repo: "fluxcd-example", entry: "clusters/production"},
	{name: "multi-tenancy", repo: "multi-tenancy", entry: "clusters/production", kept: true},
	// Seed 000/002 the Helm way: the operator's webhook is inside its
	// chart, which lives in the repository.
	{name: "helm-operators-naive", repo: "helm-operators", entry: "clusters/naive"},
	{name: "helm-operators-fixed", repo: "helm-operators", entry: "clusters/fixed"},
	// The corpus of issue 31 (see traps_test.go): each repository's
	// .fluxpack.yaml is read as fluxpack lint reads it.
	{name: "monorepo-helm", repo: "monorepo-helm", entry: "clusters/prod"},
	{name: "wait-parents", repo: "wait-parents", entry: "clusters/home", kept: true},
	{name: "artifact-generator", repo: "artifact-generator", entry: "clusters/prod"},
	{name: "external-sources", repo: "external-sources", entry: "clusters/prod"},
	{name: "tenant-fleet-staging", repo: "tenant-fleet", entry: "clusters/staging", kept: true},
	{name: "tenant-fleet-production", repo: "tenant-fleet", entry: "clusters/production", kept: true},
	// Seed 003's opt-in LLM platform: a suspended Kustomization whose
	// path holds more Kustomizations, which import keeps behind it.
	{name: "suspended-umbrella", repo: "suspended-umbrella", entry: "clusters/mycluster-0", kept: true},
	// Issue 40: one problem found at many places is one finding.
	{name: "many-places-vars", repo: "many-places", entry: "clusters/vars"},
	{name: "many-places-eso", repo: "many-places", entry: "clusters/eso"},
}

func (f fixture) read(t *testing.T) *fluxrepo.Repository {
	t.Helper()
	root := filepath.Join("testdata", "repos", f.repo)
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, repo.Close()) })
	return repo
}

// lintOptions are the options of the repository's lint configuration
// (lint.ConfigFile at its root), as fluxpack lint reads them; none when it
// has none.
func (f fixture) lintOptions(t *testing.T) []lint.Option {
	t.Helper()
	file := filepath.Join("testdata", "repos", f.repo, lint.ConfigFile)
	if _, err := os.Stat(file); err != nil {
		return nil
	}
	c, err := lint.LoadConfig(file)
	require.NoError(t, err)
	opts, err := c.Options()
	require.NoError(t, err)
	return opts
}

// Every fixture: lint's findings, and the graph in mermaid and tree form.
func TestFixtures(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.name, func(t *testing.T) {
			repo := f.read(t)
			rep, err := lint.Plan(t.Context(), repo.Plan, repo.Inputs, repo.Root, f.lintOptions(t)...)
			require.NoError(t, err)
			var b strings.Builder
			for _, fd := range rep.Findings {
				b.WriteString(fd.String() + "\n")
				for _, p := range fd.Places {
					b.WriteString("  " + p.String() + "\n")
				}
			}
			for _, n := range repo.Notes {
				b.WriteString("note: " + n.String() + "\n")
			}
			testutil.Golden(t, f.name+"-lint", []byte(b.String()))
			// What lint could not check, and its one-line summary.
			var c strings.Builder
			for _, cv := range rep.Coverage {
				fmt.Fprintf(&c, "%s: layers %v\n  missing: %v\n  advice: %s\n", cv.Cause, cv.Layers, cv.Missing, cv.Advice)
			}
			c.WriteString("summary: " + rep.Summary() + "\n")
			testutil.Golden(t, f.name+"-coverage", []byte(c.String()))
			for _, format := range []layering.GraphFormat{layering.GraphMermaid, layering.GraphTree} {
				g, err := repo.Plan.Graph(format)
				require.NoError(t, err)
				testutil.Golden(t, f.name+"-graph-"+string(format), g)
			}
		})
	}
}

// The tree is read as Flux reads it: the entry's own Kustomization is the
// root layer, the others are applied by it, a tenant's Kustomization in
// another namespace keeps its namespace, an ExternalArtifact maps to its
// generator's files, another repository is not available.
func TestReadTree(t *testing.T) {
	repo := fixtures[0].read(t)
	var names []string
	for _, l := range repo.Plan.Layers {
		names = append(names, l.Name)
		if l.Name != "flux-system" {
			assert.Equal(t, "flux-system", l.Parent, "layer %s is applied by the root", l.Name)
		}
	}
	assert.Equal(t, []string{"flux-system", "apps", "crds", "crossplane", "epis", "infrastructure", "namespaces", "observability", "security"}, names)
	root := repo.Plan.Layers[0]
	assert.Equal(t, "clusters/mycluster-0/flux-system/gotk-sync.yaml", root.File)
	assert.Equal(t, 15, root.Line)

	tenants := fixtures[4].read(t)
	var dev *layering.Layer
	var devIn fluxbuild.Input
	for i, l := range tenants.Plan.Layers {
		if l.Name == "apps/dev-team" {
			dev, devIn = &tenants.Plan.Layers[i], tenants.Inputs[i]
		}
	}
	require.NotNil(t, dev, "the tenant's Kustomization is a layer named namespace/name")
	assert.Equal(t, "./production", dev.Kustomization.Spec.Path, "the tenants overlay's patch applies")
	assert.Equal(t, []string{"infrastructure"}, dev.DependsOn, "a dependsOn across namespaces names the layer of that namespace")
	assert.Nil(t, devIn.Source)
	assert.Contains(t, devIn.Unavailable, "GitRepository/apps/dev-team is another source than the repository")
	assert.Equal(t, "tenants", dev.Parent)

	fx := fixtures[2].read(t)
	for i, l := range fx.Plan.Layers {
		if l.Name == "infra-configs" {
			objs := fx.Inputs[i].Objects
			require.NotEmpty(t, objs)
			assert.Equal(t, "infrastructure/configs/cluster-issuers.yaml", objs[0].File, "files of an ExternalArtifact are named by the repository's")
		}
	}
}

// write lays out a small repository and returns its root.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	testutil.WriteFiles(t, root, files)
	return root
}

func ks(name, path, extra string) string {
	return "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: " + name + "\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: " + path +
		"\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n" + extra
}

func lintRepo(t *testing.T, root string) []lint.Finding {
	t.Helper()
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.NoError(t, err)
	return rep.Findings
}

func rules(fs []lint.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, string(f.Rule)+": "+f.String())
	}
	return out
}

// Reading never hangs and never guesses: cycles and dependencies on
// Kustomizations the tree does not have are graph findings, a
// Kustomization that applies its own parent stops there.
func TestReadGraphProblems(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c/a.yaml":   ks("a", "./a", "  dependsOn: [{name: b}]\n"),
		"clusters/c/b.yaml":   ks("b", "./b", "  dependsOn: [{name: a}, {name: gone, namespace: tenants}]\n"),
		"a/loop.yaml":         ks("b", "./b", ""), // applies b again
		"b/cm.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
		"clusters/c/sub.yaml": ks("sub", "./clusters/c", ""), // applies the entry again
	})
	fs := lintRepo(t, root)
	got := strings.Join(rules(fs), "\n")
	assert.Contains(t, got, "graph: clusters/c/a.yaml:1: layer \"a\": dependency cycle a -> b -> a")
	assert.Contains(t, got, "depends on Kustomization/tenants/gone, which the platform does not have")
	assert.Contains(t, got, "two Kustomizations named b")
}

// A Kustomization's spec may use its parent's postBuild variables: known
// values are substituted, as kustomize-controller substitutes what it
// applies; a path that stays unknown makes the layer unavailable, not a
// guess.
func TestReadSubstitutesKustomizations(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c/apps.yaml":           ks("apps", "./apps", "  postBuild:\n    substitute: {env: staging}\n    substituteFrom: [{kind: ConfigMap, name: cluster-vars}]\n"),
		"clusters/c/vars.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-vars, namespace: flux-system}\ndata: {region: eu-west-3}\n",
		"apps/child.yaml":                ks("child", "./envs/${env}/${region}", "") + "---\n" + ks("later", "./envs/${nobody_knows}", ""),
		"envs/staging/eu-west-3/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
	})
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	require.NoError(t, err)
	byName := map[string]layering.Layer{}
	inputs := map[string]fluxbuild.Input{}
	for i, l := range repo.Plan.Layers {
		byName[l.Name], inputs[l.Name] = l, repo.Inputs[i]
	}
	assert.Equal(t, "./envs/staging/eu-west-3", byName["child"].Kustomization.Spec.Path)
	require.Len(t, inputs["child"].Objects, 1)
	assert.Contains(t, inputs["later"].Unavailable, "holds a variable whose value is not known offline")
}

// A component's Kustomization named ${APP}-db, applied by two apps whose
// postBuild sets APP inline and reads the rest from a Secret the tree does
// not hold (an ExternalSecret makes it), is two layers named as Flux
// applies them, not one Kustomization two parents fight over; the same
// name under both is still that fight. Found on a public home-ops
// repository (two false graph findings).
func TestReadNamesKustomizationsAsApplied(t *testing.T) {
	app := func(name, app string) string {
		return ks(name, "./apps/"+name, "  targetNamespace: default\n  components: [../../components/db]\n  postBuild:\n    substitute: {APP: "+app+"}\n    substituteFrom: [{kind: Secret, name: cluster-vars}]\n")
	}
	files := map[string]string{
		"clusters/c/a.yaml":                app("a", "firefly"),
		"clusters/c/b.yaml":                app("b", "immich"),
		"apps/a/cm.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"apps/b/cm.yaml":                   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
		"components/db/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [ks.yaml]\n",
		"components/db/ks.yaml":            ks("${APP}-db", "./db", "  postBuild:\n    substitute: {APP: '${APP}', EXT: '${DB_EXTENSIONS}'}\n"),
		"db/cm.yaml":                       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: db, namespace: default}\n",
	}
	root := write(t, files)
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	require.NoError(t, err)
	var names []string
	for _, l := range repo.Plan.Layers {
		names = append(names, l.Name)
	}
	assert.Subset(t, names, []string{"default/firefly-db", "default/immich-db"})
	assert.NotContains(t, strings.Join(rules(lintRepo(t, root)), "\n"), "fight over it")

	files["clusters/c/b.yaml"] = app("b", "firefly")
	root = write(t, files)
	assert.Contains(t, strings.Join(rules(lintRepo(t, root)), "\n"), "Kustomization/default/firefly-db is applied by two Kustomizations, a and b: they fight over it")

	// Flux leaves an object that opts out as written: so does the reader.
	files["clusters/c/b.yaml"] = app("b", "immich")
	files["components/db/ks.yaml"] = strings.Replace(files["components/db/ks.yaml"], "metadata:\n", "metadata:\n  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}\n", 1)
	root = write(t, files)
	assert.Contains(t, strings.Join(rules(lintRepo(t, root)), "\n"), "Kustomization/default/${APP}-db is applied by two Kustomizations, a and b: they fight over it")
}

// The tree is what source-controller would pack: .sourceignore files leave
// out what they match, from the repository's root down.
func TestReadHonoursSourceIgnore(t *testing.T) {
	root := write(t, map[string]string{
		".sourceignore":        "drafts/\n",
		"clusters/c/apps.yaml": ks("apps", "./apps", ""),
		"apps/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
		"apps/drafts/bad.yaml": "this is: [not yaml\n",
	})
	assert.Empty(t, lintRepo(t, root))
	require.NoError(t, os.Remove(filepath.Join(root, ".sourceignore")))
	got := rules(lintRepo(t, root))
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "path: apps/drafts/bad.yaml:1:")
}

// An entry point may be a single file.
func TestReadFileEntry(t *testing.T) {
	root := write(t, map[string]string{
		"clusters/c.yaml": ks("apps", "./apps", ""),
		"apps/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n",
	})
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c.yaml"), fluxrepo.WithRoot(root))
	require.NoError(t, err)
	require.Len(t, repo.Plan.Layers, 2)
	assert.Equal(t, "apps", repo.Plan.Layers[1].Name)
	assert.Len(t, repo.Inputs[1].Objects, 1)
}

func TestReadBadInput(t *testing.T) {
	_, err := fluxrepo.Read(t.Context(), filepath.Join(t.TempDir(), "nope"))
	require.ErrorContains(t, err, "reading the entry point")
	root := write(t, map[string]string{"clusters/c/bad.yaml": "kind: [\n"})
	_, err = fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	var fe *fluxrepo.FileError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, 1, fe.Line)
	_, err = fluxrepo.Read(t.Context(), root, fluxrepo.WithRoot(filepath.Join(root, "clusters")))
	require.ErrorContains(t, err, "not inside the repository")
	_, err = fluxrepo.ParseSourceRef("GitRepository/x")
	require.ErrorIs(t, err, fluxrepo.ErrInvalidOption)
}

// Import writes each fixture as a stack file whose render gives every
// Kustomization's spec field for field; what a stack cannot say is listed,
// never dropped.
func TestImportRoundTrip(t *testing.T) {
	for _, f := range fixtures {
		if strings.HasSuffix(f.name, "-undeclared") {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			root := filepath.Join("testdata", "repos", f.repo)
			imp, err := fluxrepo.Import(t.Context(), filepath.Join(root, f.entry), append([]fluxrepo.Option{fluxrepo.WithRoot(root)}, f.opts...)...)
			require.NoError(t, err)
			var b strings.Builder
			b.Write(imp.Stack)
			for _, d := range imp.Differences {
				b.WriteString("# difference: " + d + "\n")
			}
			testutil.Golden(t, f.name+"-import", []byte(b.String()))
			require.NotEmpty(t, imp.Differences, "the root Kustomization is always listed")
			assert.Contains(t, imp.Differences[0], "not imported: it applies the entry point")
			for _, d := range imp.Differences[1:] {
				if !f.kept {
					assert.Contains(t, d, "also applies objects that are not Kustomizations", "every spec renders as it was")
				}
			}
		})
	}
}

// Preview prints a Kustomization of the tree as Flux applies it: an
// ExternalArtifact's files with the Kustomization's patches, or a layer's
// objects substituted from a ConfigMap Terraform makes (--vars-from).
func TestPreview(t *testing.T) {
	fx := fixtures[2]
	root := filepath.Join("testdata", "repos", fx.repo)
	out, err := fluxrepo.Preview(t.Context(), filepath.Join(root, fx.entry), "infra-configs", []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.NoError(t, err)
	testutil.Golden(t, "preview-infra-configs", out)

	ph := fixtures[0]
	root = filepath.Join("testdata", "repos", ph.repo)
	out, err = fluxrepo.Preview(t.Context(), filepath.Join(root, ph.entry), "infrastructure", []fluxrepo.Option{fluxrepo.WithRoot(root)},
		substitute.WithVarsFrom(filepath.Join("testdata", "eks-mycluster-0-vars.yaml")))
	require.NoError(t, err)
	assert.Contains(t, string(out), `hostname: '*.priv.cloud.example.com'`)
	assert.Contains(t, string(out), "gatewayClassName: cilium")
	testutil.Golden(t, "preview-infrastructure", out)

	_, err = fluxrepo.Preview(t.Context(), filepath.Join(root, ph.entry), "infrastructure", []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.ErrorIs(t, err, substitute.ErrSourceNotFound, "without the ConfigMap Terraform makes, Flux fails too")
	_, err = fluxrepo.Preview(t.Context(), filepath.Join(root, ph.entry), "nope", []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.ErrorContains(t, err, `has no Kustomization "nope"`)
}

// What real repositories hold lints as Flux would apply it: flux
// bootstrap's big gotk-components.yaml (Flux's own CRDs, pruned by Flux), a
// dangling symlink into a git-ignored folder, a SOPS-encrypted Secret
// decrypted by its layer, CI files that Flux leaves out of the artifact, a
// CRD kept by the prune: disabled annotation.
func TestReadRealTreeShapes(t *testing.T) {
	var gotk strings.Builder
	gotk.WriteString("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n")
	for i, c := range []string{"buckets.source", "gitrepositories.source", "helmcharts.source", "helmrepositories.source", "ocirepositories.source", "kustomizations.kustomize", "helmreleases.helm", "alerts.notification", "providers.notification", "receivers.notification"} {
		plural, group, _ := strings.Cut(c, ".")
		fmt.Fprintf(&gotk, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s.%s.toolkit.fluxcd.io\nspec:\n  group: %s.toolkit.fluxcd.io\n  names: {kind: K%d, plural: %s}\n  scope: Namespaced\n  versions:\n", plural, group, group, i, plural)
		for v := range 3 {
			fmt.Fprintf(&gotk, "    - name: v%d\n      served: true\n      storage: %t\n      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n", v+1, v == 0)
			for p := range 300 { // the size of the real schemas
				fmt.Fprintf(&gotk, "            field%d:\n              type: string\n              description: a field of the schema, described at length as the real ones are\n", p)
			}
		}
	}
	for _, c := range []string{"source", "kustomize", "helm", "notification"} {
		fmt.Fprintf(&gotk, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s-controller\n  namespace: flux-system\nspec:\n  selector: {matchLabels: {app: %[1]s}}\n  template:\n    metadata: {labels: {app: %[1]s}}\n    spec: {containers: [{name: manager, image: ghcr.io/fluxcd/%[1]s-controller:v1}]}\n", c)
	}
	root := write(t, map[string]string{
		"clusters/c/flux-system/gotk-components.yaml": gotk.String(),
		"clusters/c/flux-system/gotk-sync.yaml":       ks("flux-system", "./clusters/c", ""),
		"clusters/c/flux-system/kustomization.yaml":   "resources: [gotk-components.yaml, gotk-sync.yaml]\n",
		"clusters/c/apps.yaml":                        ks("apps", "./apps", "  decryption: {provider: sops, secretRef: {name: sops-age}}\n"),
		"clusters/c/crds.yaml":                        ks("crds", "./crds", ""),
		"crds/crd.yaml":                               "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n  annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}\nspec: {group: example.com, names: {kind: Thing, plural: things}, scope: Namespaced, versions: [{name: v1, served: true, storage: true}]}\n",
		"apps/secret.enc.yaml":                        "apiVersion: v1\nkind: Secret\nmetadata: {name: db, namespace: default}\ndata:\n  password: ENC[AES256_GCM,data:Zm9v,iv:YmFy,tag:YmF6,type:str]\nsops:\n  age:\n    - recipient: age1examplexample\n      enc: |\n        -----BEGIN AGE ENCRYPTED FILE-----\n        abc\n        -----END AGE ENCRYPTED FILE-----\n  lastmodified: \"2026-11-01T00:00:00Z\"\n  mac: ENC[AES256_GCM,data:eA==,iv:eQ==,tag:eg==,type:str]\n  version: 3.9.0\n",
		"apps/.github/workflows/ci.yaml":              "on: [push\n", // not for the cluster; Flux leaves .github/ out
		"apps/cloudbuild.yaml":                        "steps: [\n",
	})
	require.NoError(t, os.Symlink("../cluster/.tls", filepath.Join(root, "clusters", "c", ".tls")))
	fs := lintRepo(t, root)
	assert.Empty(t, rules(fs))
	repo, err := fluxrepo.Read(t.Context(), filepath.Join(root, "clusters/c"), fluxrepo.WithRoot(root))
	require.NoError(t, err)
	assert.Equal(t, "flux-system", repo.Plan.Layers[0].Name, "bootstrap's own Kustomization is the root")
	assert.Len(t, repo.Inputs[0].Objects, 18, "gotk-components, gotk-sync and the two Kustomizations")
}

// TestReadWithoutGit: a tree copied without .git is read from the root its
// own flux-system Kustomization names (spec.path ./clusters/NAME found in
// clusters/NAME), and a root that cannot be told says so, naming --root.
func TestReadWithoutGit(t *testing.T) {
	src := filepath.Join("..", "review", "testdata", "repo")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	root, err := fluxrepo.Root(filepath.Join(dir, "clusters", "prod"))
	require.NoError(t, err)
	assert.Equal(t, dir, root)
	rep, err := lint.Tree(t.Context(), filepath.Join(dir, "clusters", "prod"), nil)
	require.NoError(t, err)
	for _, f := range rep.Findings {
		assert.NotEqual(t, lint.RulePath, f.Rule, "%s", f)
		assert.NotEqual(t, lint.RuleGraph, f.Rule, "%s", f)
	}
	assert.Equal(t, 5, rep.Layers)

	// The flux-system Kustomization names another path: the root cannot
	// be told, and lint says what to do, once, with no duplicate layer.
	gotk := filepath.Join(dir, "clusters", "prod", "flux-system", "gotk-sync.yaml")
	data, err := os.ReadFile(gotk)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(gotk, bytes.Replace(data, []byte("./clusters/prod"), []byte("./clusters/production"), 1), 0o644))
	root, err = fluxrepo.Root(filepath.Join(dir, "clusters", "prod"))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "clusters", "prod"), root)
	rep, err = lint.Tree(t.Context(), filepath.Join(dir, "clusters", "prod"), nil)
	require.NoError(t, err)
	var msgs []string
	for _, f := range rep.Findings {
		assert.NotEqual(t, lint.RuleGraph, f.Rule, "no duplicate layer: %s", f)
		if f.Rule == lint.RulePath {
			msgs = append(msgs, f.Message)
		}
	}
	require.NotEmpty(t, msgs)
	notes := 0
	for _, m := range msgs {
		assert.Contains(t, m, "give the root with --root")
		if strings.Contains(m, `spec.path "./clusters/production" is not the entry point "./"`) {
			notes++
		}
	}
	assert.Equal(t, 1, notes, "one note of the mistaken root: %q", msgs)

	// A root the user gave is not called a guess.
	rep, err = lint.Tree(t.Context(), filepath.Join(dir, "clusters", "prod"), []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.NoError(t, err)
	paths := 0
	for _, f := range rep.Findings {
		if f.Rule == lint.RulePath {
			paths++
			assert.NotContains(t, f.Message, "as no .git is at or above the entry point", "%s", f)
		}
	}
	assert.NotZero(t, paths, "the paths are still missing from that root")
}
