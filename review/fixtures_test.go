package review_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/review"
)

// repoFixture is a repository review's tests compare: its tree, the
// cluster's entry point, the read options it needs, and its named changes
// (a folder each under changes, holding the files the change writes over
// the tree).
type repoFixture struct {
	name    string
	dir     string
	entry   string
	changes string
	named   []namedChange
	read    func(t testing.TB) []fluxrepo.Option
}

// namedChange is a pull request of a fixture, and whether it changes the
// cluster.
type namedChange struct {
	name    string
	changes bool
	why     string
}

// repoFixtures are every repository review's tests compare.
var repoFixtures = []repoFixture{
	{
		name: "repo", dir: "testdata/repo", entry: "clusters/prod", changes: "testdata/changes",
		named: func() []namedChange {
			var out []namedChange
			for _, c := range changes {
				out = append(out, namedChange{name: c, changes: true})
			}
			return out
		}(),
	},
	{
		// Flux's kustomize-helm example as it is laid out today: layers
		// read ExternalArtifacts an ArtifactGenerator copies.
		name: "generator", dir: "testdata/generator/repo", entry: "clusters/staging", changes: "testdata/generator/changes",
		named: []namedChange{
			{"staging-values", true, "apps/staging/ is copied to the apps artifact's staging/, which the apps layer builds"},
			{"production-values", false, "apps/production/ is in no artifact of staging"},
			{"shared-issuer", false, "staging's issuer is copied over the shared one"},
			{"staging-issuer", true, "copied to configs/cluster-issuer.yaml, which infra-configs lists"},
			{"limits", true, "copied, with a to path, to staging/limits.yaml, which the staging kustomization patches with"},
			{"ignored-test", false, "testdata/ is left out of the GitRepository's artifact by .sourceignore"},
			{"excluded-dev", false, "the copy excludes configs/*-dev.yaml"},
			{"chart", true, "the chart of a HelmRelease an artifact's layer applies is in the GitRepository"},
			{"generator", true, "the copy no longer excludes the dev issuer, which infra-configs then lists"},
		},
	},
	{
		// A tenant's repository includes the platform's components.
		name: "include", dir: "testdata/include/repo", entry: "clusters/prod", changes: "testdata/include/changes",
		named: []namedChange{
			{"component", true, "components/ is included in team-a's artifact at platform/"},
			{"redis-test", false, "team-a's spec.ignore leaves platform/redis/tests/ out"},
			{"redis", true, "team-a-redis lists platform/redis"},
			{"include", true, "without the ignore rule, team-a-redis lists the smoke test too"},
		},
		read: func(t testing.TB) []fluxrepo.Option {
			dir, err := filepath.Abs(filepath.Join("testdata", "include", "team-a"))
			if err != nil {
				t.Fatal(err)
			}
			return []fluxrepo.Option{fluxrepo.WithSource(fluxrepo.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "team-a"}, dir)}
		},
	},
	{
		// A home-ops cluster: cluster-apps builds kubernetes/apps, which
		// has no kustomization file (Flux generates one); each namespace
		// folder's kustomization names its apps' ks.yaml, and each app's
		// Kustomization builds its app/ folder.
		name: "homeops", dir: "testdata/homeops/repo", entry: "kubernetes/flux/cluster", changes: "testdata/homeops/changes",
		named: []namedChange{
			{"echo-replicas", true, "echo's app/kustomization.yaml names deployment.yaml; cluster-apps reads echo's ks.yaml, not its app/ folder"},
			{"unnamed-notes", false, "notes.yaml is in echo's app/ folder, which has a kustomization file that does not name it"},
			{"loose-nested", true, "loose/ has no kustomization file down to sub/: Flux's generated kustomization for kubernetes/apps reads it"},
			{"component", true, "echo's kustomization names the component, whose kustomization names pdb.yaml"},
			{"settings", true, "every layer substitutes cluster-settings"},
			{"broken-parent", true, "default/kustomization.yaml names a ks.yaml that is not there: cluster-apps does not build, and the Kustomizations it applied stay as the cluster has them, not removed"},
		},
	},
	{
		// flux-operator makes the tenants: a ResourceSet's templates,
		// rendered once per input, are the objects of its layer.
		name: "resourceset", dir: "testdata/resourceset/repo", entry: "clusters/prod", changes: "testdata/resourceset/changes",
		named: []namedChange{
			{"template-label", true, "the Namespace template gains a label: both tenants' Namespaces change"},
			{"input-added", true, "a third input: tenant c's Namespace, ServiceAccount, RoleBinding and Kustomization are added, and what that Kustomization applies"},
			{"role-ref", true, "the RoleBinding template's roleRef changes: both tenants' RoleBindings change"},
			{"environment", true, "the variable the tenants layer substitutes into the ResourceSet changes both Namespaces' label"},
			{"tenant-app", true, "tenant a's Kustomization, which the ResourceSet generates, applies the changed ConfigMap"},
			{"provider-inputs", true, "the inputs now come from a provider only the cluster knows: the ResourceSet is not rendered on the head, and its objects are left out on both sides"},
		},
	},
}

// layOutFixture copies a fixture's tree twice, base and head, the named
// change written over head.
func layOutFixture(t testing.TB, f repoFixture, change string) (base, head string) {
	t.Helper()
	dir := t.TempDir()
	base, head = filepath.Join(dir, "base"), filepath.Join(dir, "head")
	copyTree(t, f.dir, base)
	copyTree(t, f.dir, head)
	if change != "" {
		copyTree(t, filepath.Join(f.changes, change), head)
	}
	return base, head
}

func compareFixture(t testing.TB, f repoFixture, base, head string, opts ...review.Option) *review.Report {
	t.Helper()
	if f.read != nil {
		opts = append(opts, review.WithReadOptions(f.read(t)...))
	}
	r, err := review.Compare(t.Context(), base, head, f.entry, opts...)
	if err != nil {
		t.Fatalf("Compare(%s): %v", f.name, err)
	}
	return r
}

// TestFixtureChangeGoldens holds each named change of the ArtifactGenerator
// and include fixtures to its report, and to whether it changes anything.
func TestFixtureChangeGoldens(t *testing.T) {
	for _, f := range repoFixtures[1:] {
		for _, c := range f.named {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				base, head := layOutFixture(t, f, c.name)
				r := compareFixture(t, f, base, head, review.WithNames("main", c.name))
				if r.Changed() != c.changes {
					t.Errorf("%s: changed %v, want %v: %s", c.name, r.Changed(), c.changes, c.why)
				}
				var text bytes.Buffer
				if err := r.WriteText(&text, review.TextOptions{}); err != nil {
					t.Fatal(err)
				}
				testutil.Golden(t, "golden/"+f.name+"-"+c.name+".txt", text.Bytes())
			})
		}
	}
}

// TestChangedOnlyMissesNothing: rendering only the producers the changed
// files feed reports exactly what rendering every producer reports (the
// objects changed, images, races and findings, the bootstrap order), for
// every named change of every fixture repository, and for a generated
// change of every file of every fixture: the file edited (a value
// changed), deleted, and a new file added next to it. Changed-only renders
// nothing --all does not.
//
// Under -race or -short, which make the ~180 comparison pairs take
// minutes, a fifth of the generated changes are made (every fifth, in the
// order of the files), the named ones all.
func TestChangedOnlyMissesNothing(t *testing.T) {
	sample := raceBuild || testing.Short()
	for _, f := range repoFixtures {
		t.Run(f.name, func(t *testing.T) {
			// One kustomize cache for the fixture's changes, as the CLI
			// keeps one: the base's builds are kept by the first changes
			// and read by the others.
			cache := t.TempDir()
			for _, c := range f.named {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					base, head := layOutFixture(t, f, c.name)
					assertChangedOnlyIsAll(t, f, base, head, cache)
				})
			}
			base := filepath.Join(t.TempDir(), "base")
			copyTree(t, f.dir, base)
			for i, m := range fileChanges(t, f.dir) {
				if sample && i%5 != 0 {
					continue
				}
				t.Run(m.name, func(t *testing.T) {
					t.Parallel()
					head := filepath.Join(t.TempDir(), "head")
					copyTree(t, f.dir, head)
					m.apply(t, head)
					assertChangedOnlyIsAll(t, f, base, head, cache)
				})
			}
		})
	}
	// A change to one app renders that app's Kustomization only.
	if got := compare(t, "image-bump").Rendered; !slices.Equal(got, []string{"Kustomization/flux-system/apps"}) {
		t.Errorf("image-bump rendered %v, want only the apps Kustomization", got)
	}
	// In a home-ops cluster too: not the cluster-apps Kustomization whose
	// path holds the app's folder, which it does not read.
	homeops := repoFixtures[slices.IndexFunc(repoFixtures, func(f repoFixture) bool { return f.name == "homeops" })]
	base, head := layOutFixture(t, homeops, "echo-replicas")
	if got := compareFixture(t, homeops, base, head).Rendered; !slices.Equal(got, []string{"Kustomization/flux-system/echo"}) {
		t.Errorf("echo-replicas rendered %v, want only the echo Kustomization", got)
	}
}

func assertChangedOnlyIsAll(t *testing.T, f repoFixture, base, head, cache string) {
	t.Helper()
	var read []fluxrepo.Option
	if f.read != nil {
		read = f.read(t)
	}
	some, someErr := review.Compare(t.Context(), base, head, f.entry, review.WithReadOptions(read...))
	all, allErr := review.Compare(t.Context(), base, head, f.entry, review.WithReadOptions(read...), review.WithAll())
	// Changed-only again with kustomize's builds kept across runs (cache,
	// shared by the fixture's changes), as the CLI reads: the same.
	cachedCtx, err := fluxbuild.ContextWithCache(t.Context(), cache)
	if err != nil {
		t.Fatal(err)
	}
	cached, cachedErr := review.Compare(cachedCtx, base, head, f.entry, review.WithReadOptions(read...))
	if (cachedErr == nil) != (someErr == nil) {
		t.Errorf("changed-only: %v; with the cache: %v", someErr, cachedErr)
	}
	if cachedErr == nil && someErr == nil {
		if d := cmp.Diff(some, cached); d != "" {
			t.Errorf("changed-only with the cache differs from without it (-without +with):\n%s", d)
		}
	}
	if someErr != nil || allErr != nil {
		// The head cannot be read at all (its entry point broken): the
		// same either way.
		if (someErr == nil) != (allErr == nil) || !strings.Contains(someErr.Error(), "reading "+f.entry) {
			t.Errorf("changed-only: %v; --all: %v", someErr, allErr)
		}
		return
	}
	if some.Unread {
		// Changed-only read nothing: --all, which read and rendered
		// everything, must find nothing either.
		if all.Changed() || len(all.Objects) > 0 || len(all.Images) > 0 {
			t.Errorf("changed-only said no layer reads %v, but --all finds changes: %d objects, %d images, findings %+v, bootstrap %+v",
				some.Files, len(all.Objects), len(all.Images), all.Findings, all.Bootstrap)
		}
		if len(some.Rendered) > 0 || len(some.Objects) > 0 {
			t.Errorf("an unread change rendered %v and reports %d objects", some.Rendered, len(some.Objects))
		}
		return
	}
	if d := cmp.Diff(all.Objects, some.Objects); d != "" {
		t.Errorf("changed-only differs from --all (-all +changed-only):\n%s", d)
	}
	if d := cmp.Diff(all.Images, some.Images); d != "" {
		t.Errorf("images: changed-only differs from --all:\n%s", d)
	}
	if d := cmp.Diff(all.Findings, some.Findings); d != "" {
		t.Errorf("races and findings: changed-only differs from --all:\n%s", d)
	}
	if d := cmp.Diff(all.Bootstrap, some.Bootstrap); d != "" {
		t.Errorf("bootstrap order: changed-only differs from --all:\n%s", d)
	}
	for _, p := range some.Rendered {
		if !slices.Contains(all.Rendered, p) {
			t.Errorf("changed-only rendered %s, which --all did not", p)
		}
	}
}

// fileChange is a generated single-file change of a fixture.
type fileChange struct {
	name  string
	apply func(t testing.TB, head string)
}

// fileChanges are, for every file of the tree dir: an edit (edited), its
// deletion, and for every folder, a new manifest added to it and the
// folder removed with all below it (a kustomization that names it is
// then left naming nothing).
func fileChanges(t testing.TB, dir string) []fileChange {
	t.Helper()
	var out []fileChange
	folders := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		folders[path.Dir(rel)] = true
		out = append(out,
			fileChange{"edit/" + rel, func(t testing.TB, head string) {
				target := filepath.Join(head, filepath.FromSlash(rel))
				data, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(target, edited(rel, data), 0o644); err != nil {
					t.Fatal(err)
				}
			}},
			fileChange{"delete/" + rel, func(t testing.TB, head string) {
				if err := os.Remove(filepath.Join(head, filepath.FromSlash(rel))); err != nil {
					t.Fatal(err)
				}
			}},
		)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range slices.Sorted(maps.Keys(folders)) {
		out = append(out, fileChange{"add/" + folder, func(t testing.TB, head string) {
			name := strings.NewReplacer("/", "-", ".", "root").Replace(folder)
			cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added-%s\n  namespace: default\ndata:\n  added: %q\n", name, folder)
			if err := os.WriteFile(filepath.Join(head, filepath.FromSlash(folder), "zz-added.yaml"), []byte(cm), 0o644); err != nil {
				t.Fatal(err)
			}
		}})
		if folder != "." {
			out = append(out, fileChange{"remove/" + folder, func(t testing.TB, head string) {
				if err := os.RemoveAll(filepath.Join(head, filepath.FromSlash(folder))); err != nil {
					t.Fatal(err)
				}
			}})
		}
	}
	return out
}

// edited is a file after a small edit that changes what it says: a chart
// template renders one object more, a kustomization annotates what it
// builds, any other YAML file has the last value of its last document
// changed (a number counted up, a boolean flipped, a string extended), and
// any other file has a line added.
func edited(rel string, data []byte) []byte {
	switch {
	case bytes.Contains(data, []byte("{{")):
		return append(data, "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-edited\n  namespace: {{ .Release.Namespace }}\n"...)
	case path.Base(rel) == "kustomization.yaml":
		return append(data, "commonAnnotations:\n  fluxpack.dev/edited: \"true\"\n"...)
	case path.Ext(rel) == ".yaml" || path.Ext(rel) == ".yml":
		if out, ok := lastValueChanged(data); ok {
			return out
		}
	}
	return append(data, "x\n"...)
}

func lastValueChanged(data []byte) ([]byte, bool) {
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			break
		}
		docs = append(docs, &n)
	}
	if len(docs) == 0 {
		return nil, false
	}
	var last *yaml.Node
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.ScalarNode:
			last = n
		case yaml.MappingNode:
			for i := 1; i < len(n.Content); i += 2 {
				walk(n.Content[i])
			}
		default:
			for _, c := range n.Content {
				walk(c)
			}
		}
	}
	walk(docs[len(docs)-1])
	if last == nil {
		return nil, false
	}
	switch last.Tag {
	case "!!int":
		n, _ := strconv.Atoi(last.Value)
		last.Value = strconv.Itoa(n + 1)
	case "!!bool":
		last.Value = strconv.FormatBool(last.Value != "true")
	default:
		last.Value += "-x"
		last.Tag, last.Style = "!!str", 0
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, false
		}
	}
	return b.Bytes(), true
}

// A Kustomization that does not build on the head (its kustomization names
// a file that is not there) applies and prunes nothing there: the
// Kustomizations it applied stay as the cluster has them. They are not
// rendered on the head, not shown as removed, their findings neither
// fixed nor introduced, and the bootstrap order keeps them; the build
// error is the change. Found on a public home-ops repository, where one
// missing ks.yaml was reported as 578 objects removed.
func TestBrokenParentRemovesNothing(t *testing.T) {
	homeops := repoFixtures[slices.IndexFunc(repoFixtures, func(f repoFixture) bool { return f.name == "homeops" })]
	base, head := layOutFixture(t, homeops, "broken-parent")
	for _, opts := range [][]review.Option{nil, {review.WithAll()}} {
		r := compareFixture(t, homeops, base, head, opts...)
		if len(r.Objects) != 0 {
			t.Errorf("objects changed: %v, want none: the cluster keeps what cluster-apps applied", r.Objects)
		}
		var kept []string
		for _, n := range r.NotRendered {
			if n.Side == "head" && strings.Contains(n.Reason, "Kustomization/flux-system/cluster-apps, did not build or render") {
				kept = append(kept, n.Producer)
			}
		}
		if want := []string{"Kustomization/flux-system/echo", "Kustomization/flux-system/web"}; !slices.Equal(kept, want) {
			t.Errorf("not rendered on the head for cluster-apps' failure: %v, want %v (all: %v)", kept, want, r.NotRendered)
		}
		if len(r.Findings.Fixed) != 0 || len(r.Findings.Introduced) != 1 || r.Findings.Introduced[0].Rule != "path" {
			t.Errorf("findings: introduced %v, fixed %v; want the path error only", r.Findings.Introduced, r.Findings.Fixed)
		}
		if b := r.Bootstrap; len(b.LayersRemoved)+len(b.LayersAdded)+len(b.EdgesAdded)+len(b.EdgesRemoved) != 0 {
			t.Errorf("bootstrap order changed: %+v", b)
		}
	}

	// cluster-apps reading a source not available offline on the head:
	// what it applies there is not known, and not shown as removed either.
	base, head = layOutFixture(t, homeops, "")
	ks := filepath.Join(head, "kubernetes", "flux", "cluster", "ks.yaml")
	data, err := os.ReadFile(ks)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(data), "kind: GitRepository\n    name: flux-system", "kind: OCIRepository\n    name: elsewhere", 1)
	if moved == string(data) {
		t.Fatal("the fixture's cluster-apps reads no GitRepository flux-system")
	}
	if err := os.WriteFile(ks, []byte(moved), 0o644); err != nil {
		t.Fatal(err)
	}
	r := compareFixture(t, homeops, base, head, review.WithAll())
	if len(r.Objects) != 1 || r.Objects[0].ID.Name != "cluster-apps" {
		t.Errorf("objects changed: %v, want cluster-apps' sourceRef only: what it applies on the head is not read", r.Objects)
	}
	var unknown int
	for _, n := range r.NotRendered {
		if n.Side == "head" && strings.HasSuffix(n.Reason, "Kustomization/flux-system/cluster-apps, is not read offline: what it applies there is not known") {
			unknown++
		}
	}
	if unknown != 2 {
		t.Errorf("want echo and web not known on the head, got %v", r.NotRendered)
	}
}
