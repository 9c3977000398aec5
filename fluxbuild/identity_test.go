package fluxbuild

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/internal/yamlutil"
)

// identityCases are directories whose documents take the identity-only
// read in every shape it reads, and in the shapes it leaves to the whole
// decode; beside plainCases, which holds the ones kustomize reads oddly.
func identityCases() map[string]map[string]string {
	deploy := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: apps\n  labels: {app: web}\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: web:1\n"
	cases := map[string]map[string]string{
		"deployment":              {"a.yaml": deploy},
		"kind-after-spec":         {"a.yaml": "spec:\n  replicas: 2\nmetadata:\n  name: late\napiVersion: apps/v1\nkind: Deployment\n"},
		"sequence-at-key":         {"a.yaml": "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules:\n- apiGroups: ['']\n  resources: [pods]\n-\n  verbs: [get]\n"},
		"comments":                {"a.yaml": "# head\napiVersion: v1 # the core group\nkind: Service\n# between\nmetadata:\n  name: s # its name\n# inside\n  namespace: n\n  annotations:\n    a: |\n      text\n# after\nspec: {ports: [{port: 80}]}\n"},
		"quoted":                  {"a.yaml": "\"apiVersion\": v1\nkind: Service\nmetadata: {name: q}\n", "b.yaml": "apiVersion: 'v1'\nkind: \"Service\"\nmetadata:\n  name: \"b\\u0041\"\n  labels:\n    'x': \"1\"\n"},
		"folded-values":           {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: >-\n    folded\n  annotations:\n    note: |\n      line one\n      line two\n"},
		"value-next-line":         {"a.yaml": "apiVersion:\n  v1\nkind:\n  Service\nmetadata:\n  name:\n    s\n"},
		"start-marker":            {"a.yaml": "---\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---   \napiVersion: v1\nkind: Service\nmetadata: {name: b}\n"},
		"indented-top":            {"a.yaml": "  apiVersion: v1\n  kind: Service\n  metadata: {name: a}\n"},
		"flow-top":                {"a.yaml": "{apiVersion: v1, kind: Service, metadata: {name: a}}\n"},
		"tab":                     {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n\tname: a\n"},
		"explicit-key":            {"a.yaml": "? apiVersion\n: v1\nkind: Service\nmetadata: {name: a}\n"},
		"dollar":                  {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {x: ${y}}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n"},
		"error-in-whole-document": {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: ${y}, z: [1, 2\n"},
		"repeated-key":            {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nmetadata: {name: b}\n"},
		"metadata-sequence":       {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n- name: a\n"},
		"no-metadata":             {"a.yaml": "apiVersion: v1\nkind: Service\nspec: {}\n"},
		"null-kind":               {"a.yaml": "apiVersion: v1\nkind: ~\nmetadata: {name: a}\n"},
		"generate-name":           {"a.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata: {generateName: j-}\n"},
		"local":                   {"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: a, annotations: {config.kubernetes.io/local-config: 'true'}}\n"},
		"many": {"a.yaml": deploy + "---\n" + strings.Replace(deploy, "name: web", "name: api", 1) + "---\n# nothing\n",
			"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\n" + strings.Replace(deploy, "name: web", "name: c", 1)},
	}
	for name, files := range plainCases() {
		cases["plain-"+name] = files
	}
	return cases
}

// skipsErrors are the cases whose whole read fails on a part of a document
// the identity-only read does not decode: that read succeeds, as
// WithIdentityOnly says.
var skipsErrors = map[string]bool{
	"plain-duplicate-key": true, "plain-nan": true, "plain-infinity": true, "plain-complex-key": true,
	"plain-int-key": true, "plain-timestamp": true, "plain-tagged": true, "plain-big-numbers": true,
}

// An object read for its identity only is the one a whole read gives, with
// the same file, line and $, and a node whose apiVersion, kind and
// metadata are the whole node's, lines and all.
func TestIdentityOnlyReadsWhatAWholeReadReads(t *testing.T) {
	partial := 0
	for name, files := range identityCases() {
		t.Run(name, func(t *testing.T) {
			n, whole, light := readBoth(t, files)
			partial += n
			if whole.err != nil && skipsErrors[name] {
				assert.NoError(t, light.err, "the error is in what the identity-only read leaves alone")
				return
			}
			compareIdentity(t, whole, light)
		})
	}
	// The shapes above that it reads must take it, or the test tests nothing.
	assert.Greater(t, partial, 40, "objects read for their identity only")
}

// FuzzIdentityOnly feeds two manifest files to both reads.
func FuzzIdentityOnly(f *testing.F) {
	for _, files := range identityCases() {
		bodies := slices.Sorted(maps.Values(files))
		bodies = append(bodies, "")
		f.Add(bodies[0], bodies[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		compareLines(t, "a.yaml", a)
		compareLines(t, "b.yaml", b)
		_, whole, light := readBoth(t, map[string]string{"a.yaml": a, "b.yaml": b})
		if whole.err != nil {
			return // the identity-only read may read past what fails
		}
		compareIdentity(t, whole, light)
	})
}

type read struct {
	objs []*Object
	err  error
}

// readBoth builds the files' directory whole and for identities only
// (every kind allowed), and returns how many objects the latter read so.
func readBoth(t *testing.T, files map[string]string) (int, read, read) {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./"}}
	var whole, light read
	whole.objs, whole.err = Build(t.Context(), Source{Dir: root}, ks)
	light.objs, light.err = Build(t.Context(), Source{Dir: root}, ks, WithIdentityOnly(func(string, string) bool { return false }))
	n := 0
	for _, o := range light.objs {
		if o.IdentityOnly {
			n++
		}
	}
	return n, whole, light
}

func compareIdentity(t *testing.T, whole, light read) {
	t.Helper()
	if whole.err != nil {
		require.Error(t, light.err, "the whole read fails with %v", whole.err)
		assert.Equal(t, whole.err.Error(), light.err.Error())
		return
	}
	require.NoError(t, light.err)
	require.Len(t, light.objs, len(whole.objs))
	for i, w := range whole.objs {
		l := light.objs[i]
		assert.Equal(t, [6]string{w.APIVersion, w.Kind, w.Namespace, w.Name, w.File, fmt.Sprint(w.Line, w.Dollar)},
			[6]string{l.APIVersion, l.Kind, l.Namespace, l.Name, l.File, fmt.Sprint(l.Line, l.Dollar)})
		if !l.IdentityOnly {
			assert.Equal(t, nodeString(w.Node), nodeString(l.Node), "an object read whole")
			continue
		}
		assert.Equal(t, nodeString(identityOf(w.Node)), nodeString(l.Node), "%s", w)
	}
}

// identityOf is n's apiVersion, kind and metadata, in n's order.
func identityOf(n *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Style: n.Style, Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if identityKeys[n.Content[i].Value] {
			out.Content = append(out.Content, n.Content[i], n.Content[i+1])
		}
	}
	return out
}

// nodeString writes everything of n's tree that a reader of it sees,
// comments aside: kinds, tags, styles, values, lines and columns.
func nodeString(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%*s%d %s %d %q %d:%d\n", depth, "", n.Kind, n.Tag, n.Style, n.Value, n.Line, n.Column)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	if n != nil {
		walk(n, 0)
	}
	return b.String()
}

// needs keeps an object whole when its kind needs more than its identity.
func TestIdentityOnlyKeepsWhatNeedsMore(t *testing.T) {
	files := map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.yaml"), []byte(files["a.yaml"]), 0o644))
	ks := &kustomizev1.Kustomization{Spec: kustomizev1.KustomizationSpec{Path: "./"}}
	objs, err := Build(t.Context(), Source{Dir: root}, ks, WithIdentityOnly(func(_, kind string) bool { return kind == "ConfigMap" }))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.False(t, objs[0].IdentityOnly)
	assert.NotNil(t, yamlFieldOf(objs[0].Node, "data"))
	assert.True(t, objs[1].IdentityOnly)
	assert.Nil(t, yamlFieldOf(objs[1].Node, "spec"))

	// A Kustomization whose spec has kustomize transform the objects
	// reads them whole.
	ks.Spec.TargetNamespace = "apps"
	objs, err = Build(t.Context(), Source{Dir: root}, ks, WithIdentityOnly(func(string, string) bool { return false }))
	require.NoError(t, err)
	for _, o := range objs {
		assert.False(t, o.IdentityOnly, "%s", o)
		assert.Equal(t, "apps", o.Namespace)
	}

	_, err = Build(t.Context(), Source{Dir: root}, ks, WithIdentityOnly(nil))
	assert.ErrorIs(t, err, ErrInvalidOption)
}

func yamlFieldOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// lineCases are documents with anchors, aliases, merge keys and $, and how
// many of their objects readIdentities reads for their identity only:
// those whose identity entries hold no alias nor merge key.
func lineCases() map[string]struct {
	body string
	fast int
} {
	release := "---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: &app plex\n  namespace: media\nspec:\n" +
		"  releaseName: *app\n  values:\n    service:\n      ports:\n        http: &port 8080\n    probe:\n      port: *port\n"
	return map[string]struct {
		body string
		fast int
	}{
		"anchor-in-name":        {release, 1},
		"anchors-in-two-docs":   {release + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &app cm\ndata:\n  a: *app\n", 2},
		"merge-in-spec":         {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: m\ndata:\n  base: &b {a: '1'}\n  other:\n    <<: *b\n", 1},
		"alias-in-metadata":     {"x: &ns media\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: *ns\n", 0},
		"alias-within-metadata": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &a x\n  namespace: *a\n", 0},
		"merge-in-metadata":     {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: &m {name: m, namespace: n}\n", 0},
		"dollar-in-name":        {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}\n  namespace: ${NS:=default}\ndata: {a: '${B}'}\n", 1},
		"anchor-then-dollar":    {release + "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  url: http://${HOST}\n", 2},
		"list-with-anchors":     {"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: &n a}\n  data: {k: *n}\n", 0},
		"alias-across-docs":     {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: &x '1'}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {b: *x}\n", -1},
		"error-after-identity":  {release + "  broken: [1, 2\n", -1},
	}
}

// readIdentities (where each object of a file is: lineIndex,
// sourceOrder) finds the objects a whole read finds, with their kinds,
// names, namespaces and lines, in every shape either read takes.
func TestReadIdentitiesFindsWhatAWholeReadFinds(t *testing.T) {
	for name, c := range lineCases() {
		t.Run(name, func(t *testing.T) {
			fast := compareLines(t, "a.yaml", c.body)
			if c.fast >= 0 {
				assert.Equal(t, c.fast, fast, "objects read for their identity only")
			}
		})
	}
	for name, files := range identityCases() {
		for file, body := range files {
			t.Run(name+"/"+file, func(t *testing.T) { compareLines(t, file, body) })
		}
	}
}

// compareLines holds readIdentities to readManifests on one file and
// returns how many objects the former read for their identity only, or
// -1 where the whole read fails: the identity read may read past the
// error.
func compareLines(t *testing.T, file, body string) int {
	t.Helper()
	whole, err := readManifests(file, []byte(body))
	if err != nil {
		return -1
	}
	light, partial, err := readManifestsAs(file, []byte(body), func(string, string) bool { return false }, true)
	require.NoError(t, err)
	ids, err := readIdentities(file, []byte(body))
	require.NoError(t, err)
	require.Equal(t, len(light), len(ids))
	require.Len(t, light, len(whole))
	id := func(n *yaml.Node) string {
		return fmt.Sprintf("%s %s %s/%s line %d", yamlutil.Str(n, "apiVersion"), yamlutil.Str(n, "kind"),
			yamlutil.Str(n, "metadata", "namespace"), yamlutil.Str(n, "metadata", "name"), n.Line)
	}
	for i, w := range whole {
		assert.Equal(t, id(w), id(light[i]))
	}
	return len(partial)
}
