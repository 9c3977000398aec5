package lint

import (
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/yamlutil"
	"github.com/fluxpack/fluxpack/substitute"
)

// object is one object of a layer, with what the lint rules read of it.
type object struct {
	*fluxbuild.Object

	crd        *crdInfo // for CustomResourceDefinitions
	webhooks   []string // group/resource keys whose create or update a webhook configuration intercepts and can refuse ("*" for all)
	helmCRDs   string   // for HelmReleases: the install CRD policy (Create when unset)
	rendered   bool     // for HelmReleases: lint rendered the chart; its objects follow in the layer
	chartErr   error    // for HelmReleases: why the chart was not rendered
	assumed    []string // for HelmReleases whose chart lint cannot get: what KnownOperators says the chart serves, as webhookKey keys
	release    *object  // for objects of a chart: the HelmRelease that installs it
	data       []string // keys of a ConfigMap's data or a Secret's data/stringData
	secretLike bool
	// values are a ConfigMap's or Secret's data, binaryData and
	// stringData as written (base64 where the API has it), by field, for
	// the valuesFrom of the charts lint renders: taken at load, so that
	// the node can go. nil when the object has anything but plain strings
	// there, whose node lint keeps and decodes as the API would.
	values map[string]map[string]string
	// yielding is true for an object kustomize-controller creates only
	// when missing (ssa: IfNotPresent) or leaves alone (reconcile:
	// disabled): two layers applying it do not fight over it.
	yielding bool

	// A Secret the object makes in the cluster (an ExternalSecret's
	// target, a SealedSecret's), its keys, and whether there may be more.
	makesSecret string
	makesKeys   []string
	makesOpen   bool
	// A ConfigMap the object makes in its namespace (an
	// ObjectBucketClaim's), and its keys.
	makesConfigMap     string
	makesConfigMapKeys []string
	// makesIn, for a ClusterExternalSecret, are the namespaces it makes
	// that Secret in; nil for the others, which make it in their own.
	makesIn *nsSelection
	// labels are a Namespace's labels, for the selectors of
	// ClusterExternalSecrets.
	labels map[string]string

	// uses are the object's ${var} uses, for an object whose Node lint has
	// let go (see keepNode); nil otherwise.
	uses *substitute.Uses
	// named is how findings name an object whose name or namespace holds
	// a ${var} that its layer's own spec.postBuild.substitute sets, as
	// Flux applies it (see nameAsApplied); "" for the others.
	named string
	// noSubst is true for an object labelled or annotated
	// kustomize.toolkit.fluxcd.io/substitute: disabled.
	noSubst bool

	// ownUses, for a Flux Kustomization with spec.postBuild and
	// spec.patches, are its uses outside spec.patches: the text of its
	// patches lands in the objects it builds, which its own postBuild
	// substitutes, so a ${var} there is not applied as written when the
	// layer applying the Kustomization has no postBuild.
	ownUses *substitute.Uses
}

// nodeKinds are the kinds of object whose node a rule reads after the
// objects are loaded, beyond what lintObject took of it: HelmReleases, the
// chart sources they name (by the kinds Flux allows there) and CRDs (their
// prune annotation, for the crd-prune rule; their conversion strategy, for
// the merge hint). ConfigMaps and Secrets keep theirs only when their
// values are not plain strings (see values). Any other object is read
// once, when it is loaded: lintObject takes what the rules need and the
// variables rule its uses, and lint lets go of its node, so that the trees
// of thousands of Deployments are not kept (and walked by every garbage
// collection) while the rest of the platform loads. A rule that reads the
// node of another kind must add it here.
var nodeKinds = map[string]bool{
	"HelmRelease": true, "HelmRepository": true, "OCIRepository": true, "HelmChart": true,
	"CustomResourceDefinition": true,
}

// ReadsContent reports whether lint reads more of an object of kind than
// its identity (apiVersion, kind and metadata): it does of Flux's objects,
// CustomResourceDefinitions, webhook configurations, ConfigMaps and
// Secrets, and what makes Secrets (ExternalSecrets, SealedSecrets,
// ext-postgres-operator's PostgresUsers). For
// fluxrepo.WithIdentityOnly: a tree read so lints as the whole tree, but
// for errors in the parts of objects not read. A rule that reads more of
// another kind must add it here (and to nodeKinds when it reads the node
// after load).
func ReadsContent(apiVersion, kind string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return kind == "ConfigMap" || kind == "Secret"
	}
	switch group {
	case "apiextensions.k8s.io", "admissionregistration.k8s.io", "external-secrets.io", "bitnami.com", "db.movetokube.com", "fluxcd.controlplane.io":
		return true
	}
	return strings.HasSuffix(group, "fluxcd.io")
}

// letGo drops the node of a loaded object no rule reads again, keeping its
// ${var} uses (when it may have any) for the variables rule.
func (o *object) letGo() {
	if nodeKinds[o.Kind] || o.Node == nil || o.secretOrConfigMap() && o.values == nil {
		return
	}
	if o.Dollar {
		o.uses = substitute.FindUses(o.Node)
	}
	o.Node = nil
}

type crdInfo struct{ group, kind, plural, scope string }

func (o *object) group() string { return o.Group() }

// ref is how findings name the object: Kind/namespace/name or Kind/name,
// with the variables its layer substitutes there substituted.
func (o *object) ref() string {
	if o.named != "" {
		return o.named
	}
	return o.String()
}

// nameAsApplied sets how findings name o when its name or namespace holds
// a ${var} and its layer's spec.postBuild.substitute is vars: what Flux
// applies, newlines removed from the values as kustomize-controller loads
// them. With all, vars are all the layer's variables (it has no
// substituteFrom): one not among them takes its default, as in Flux.
// Otherwise every variable used must be one of vars (they win over
// substituteFrom's), else the name stays as written. A finding about
// Cluster/downloads/${APP} then names Cluster/downloads/prowlarr, as
// Flux's own error would.
func (o *object) nameAsApplied(vars map[string]string, all bool) {
	if len(vars) == 0 && !all || o.noSubst || !strings.Contains(o.Name, "$") && !strings.Contains(o.Namespace, "$") {
		return
	}
	name, ok := substitute.Applied(o.Name, vars, all)
	ns, nsOK := substitute.Applied(o.Namespace, vars, all)
	if !ok || !nsOK || name == "" {
		return // an empty name is Flux's error to report, not a name
	}
	c := *o.Object
	c.Name, c.Namespace = name, ns
	o.named = c.String()
}

// ObjectCache lets the lints of trees that share built objects read each
// shared object once: the two sides of a review, where the base's read
// (fluxrepo.WithReuse) hands it the head's objects, by pointer, for every
// layer the change leaves alone. What lint takes of an object (see
// lintObject) depends on the object alone, so the second lint copies it.
// A bootstrap kustomization (WithBootstrapKustomization) is built once
// for the lints sharing the cache, as the folder was then.
// Safe for lints running at once; the zero value is not usable: use
// NewObjectCache.
type ObjectCache struct {
	m sync.Map // *fluxbuild.Object → *cachedObject
	// bootstrap are the bootstrap kustomizations the lints built, by
	// folder: the two sides of a review are given the same (discovered
	// at the head).
	bootstrap sync.Map // folder → *builtOnce
}

// builtOnce is a build done once for every lint that asks.
type builtOnce struct {
	once sync.Once
	objs []*fluxbuild.Object
	err  error
}

// build returns what build returns for the folder dir, built once for
// every lint given oc; a nil oc builds each time.
func (oc *ObjectCache) build(dir string, build func() ([]*fluxbuild.Object, error)) ([]*fluxbuild.Object, error) {
	if oc == nil {
		return build()
	}
	v, _ := oc.bootstrap.LoadOrStore(dir, &builtOnce{})
	b := v.(*builtOnce)
	b.once.Do(func() { b.objs, b.err = build() })
	return b.objs, b.err
}

type cachedObject struct {
	once sync.Once
	o    *object    // what lint takes of the object; handed out only as copies
	node *yaml.Node // the node lint keeps of it, or nil
}

// NewObjectCache returns an empty ObjectCache.
func NewObjectCache() *ObjectCache { return &ObjectCache{} }

// WithObjectCache shares c with the other lints given it.
func WithObjectCache(c *ObjectCache) Option {
	return funcLint(func(cfg *config) error {
		if c == nil {
			return errdefs.Kind(ErrInvalidOption, "WithObjectCache: nil ObjectCache")
		}
		cfg.objects = c
		return nil
	})
}

// read returns what lint takes of orig, whose copy for this lint (its
// file named as this lint names it) is c: read once, by the first lint
// of orig, and copied for each, c keeping its node or not as the first
// lint's did.
func (oc *ObjectCache) read(orig, c *fluxbuild.Object) *object {
	if oc == nil {
		o := lintObject(c)
		o.letGo()
		return o
	}
	e, _ := oc.m.LoadOrStore(orig, &cachedObject{})
	entry := e.(*cachedObject)
	entry.once.Do(func() {
		entry.o = lintObject(c)
		entry.o.letGo()
		entry.node = entry.o.Node
	})
	// Each lint sets more on its objects (a HelmRelease's chart, say):
	// every one gets a copy, the first too.
	o := *entry.o
	c.Node = entry.node
	o.Object = c
	return &o
}

// lintObject reads what the rules need of a built object.
func lintObject(b *fluxbuild.Object) *object {
	o := &object{Object: b}
	n := b.Node
	if strings.Contains(b.Name, "$") || strings.Contains(b.Namespace, "$") {
		o.noSubst = o.skipSubst()
	}
	o.yielding = yamlutil.Str(n, "metadata", "annotations", "kustomize.toolkit.fluxcd.io/ssa") == "IfNotPresent" ||
		yamlutil.Str(n, "metadata", "annotations", "kustomize.toolkit.fluxcd.io/reconcile") == "disabled" ||
		yamlutil.Str(n, "metadata", "labels", "kustomize.toolkit.fluxcd.io/reconcile") == "disabled"
	switch {
	case o.Kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io":
		o.crd = &crdInfo{group: yamlutil.Str(n, "spec", "group"), kind: yamlutil.Str(n, "spec", "names", "kind"),
			plural: yamlutil.Str(n, "spec", "names", "plural"), scope: yamlutil.Str(n, "spec", "scope")}
	case (o.Kind == "ValidatingWebhookConfiguration" || o.Kind == "MutatingWebhookConfiguration") && o.group() == "admissionregistration.k8s.io":
		o.webhooks = webhookScope(n)
	case o.Kind == "Kustomization" && o.group() == "kustomize.toolkit.fluxcd.io":
		if o.Dollar && yamlutil.Field(yamlutil.Field(n, "spec"), "postBuild") != nil && yamlutil.Field(yamlutil.Field(n, "spec"), "patches") != nil {
			o.ownUses = substitute.FindUses(withoutPatches(n))
		}
	case o.Kind == "HelmRelease" && strings.HasPrefix(o.APIVersion, "helm.toolkit.fluxcd.io/"):
		o.helmCRDs = yamlutil.Str(n, "spec", "install", "crds")
		if o.helmCRDs == "" {
			o.helmCRDs = "Create"
			if yamlutil.Str(n, "spec", "install", "skipCRDs") == "true" {
				o.helmCRDs = "Skip"
			}
		}
	case o.Kind == "ExternalSecret" && o.group() == "external-secrets.io":
		o.makesExternalSecret(yamlutil.Field(n, "spec"), o.Name)
	case o.Kind == "ClusterExternalSecret" && o.group() == "external-secrets.io":
		// It makes an ExternalSecret named spec.externalSecretName (its
		// own name by default) with spec.externalSecretSpec in every
		// namespace it selects.
		spec := yamlutil.Field(n, "spec")
		esName := yamlutil.Str(spec, "externalSecretName")
		if esName == "" {
			esName = o.Name
		}
		o.makesExternalSecret(yamlutil.Field(spec, "externalSecretSpec"), esName)
		o.makesIn = readNSSelection(spec)
	case o.Kind == "Namespace" && o.APIVersion == "v1":
		if ls := yamlutil.Field(yamlutil.Field(n, "metadata"), "labels"); ls != nil && ls.Kind == yaml.MappingNode {
			o.labels = make(map[string]string, len(ls.Content)/2)
			for i := 0; i+1 < len(ls.Content); i += 2 {
				o.labels[ls.Content[i].Value] = ls.Content[i+1].Value
			}
		}
	case o.Kind == "PostgresUser" && o.group() == "db.movetokube.com":
		// ext-postgres-operator makes spec.secretName-NAME in the
		// PostgresUser's namespace (spec.secretName with its
		// KEEP_SECRET_NAME, which lint does not know), with the
		// connection's keys, and those of spec.secretTemplate.
		if sn := yamlutil.Str(n, "spec", "secretName"); sn != "" {
			o.makesSecret = sn + "-" + o.Name
			o.makesKeys = slices.Clone(postgresUserKeys)
			o.makesOpen = yamlutil.Field(yamlutil.Field(n, "spec"), "secretTemplate") != nil
		}
	case o.Kind == "ObjectBucketClaim" && o.group() == "objectbucket.io":
		// The bucket provisioner (lib-bucket-provisioner's: Rook's,
		// NooBaa's) makes a Secret and a ConfigMap of the claim's name in
		// its namespace: the bucket's credentials and where it is.
		o.makesSecret, o.makesKeys = o.Name, slices.Clone(bucketSecretKeys)
		o.makesConfigMap, o.makesConfigMapKeys = o.Name, slices.Clone(bucketConfigMapKeys)
	case o.Kind == "SealedSecret" && o.group() == "bitnami.com":
		o.makesSecret = o.Name
		if t := yamlutil.Str(n, "spec", "template", "metadata", "name"); t != "" {
			o.makesSecret = t
		}
		if d := yamlutil.Field(yamlutil.Field(n, "spec"), "encryptedData"); d != nil && d.Kind == yaml.MappingNode {
			for i := 0; i < len(d.Content); i += 2 {
				o.makesKeys = append(o.makesKeys, d.Content[i].Value)
			}
		}
		o.makesOpen = yamlutil.Field(yamlutil.Field(yamlutil.Field(n, "spec"), "template"), "data") != nil
	case o.secretOrConfigMap():
		o.secretLike = o.Kind == "Secret"
		o.values = map[string]map[string]string{}
		for _, k := range []string{"data", "stringData", "binaryData"} {
			d := yamlutil.Field(n, k)
			if d == nil {
				continue
			}
			if d.Kind != yaml.MappingNode {
				o.values = nil
				continue
			}
			kv := make(map[string]string, len(d.Content)/2)
			for i := 0; i+1 < len(d.Content); i += 2 {
				key, v := d.Content[i], d.Content[i+1]
				o.data = append(o.data, key.Value)
				if !plainString(key) || !plainString(v) {
					o.values = nil
				}
				kv[key.Value] = v.Value
			}
			if o.values != nil {
				o.values[k] = kv
			}
		}
	}
	return o
}

// bucketSecretKeys and bucketConfigMapKeys are the keys of the Secret and
// the ConfigMap a bucket provisioner makes for an ObjectBucketClaim.
var (
	bucketSecretKeys    = []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}
	bucketConfigMapKeys = []string{"BUCKET_HOST", "BUCKET_NAME", "BUCKET_PORT", "BUCKET_REGION", "BUCKET_SUBREGION"}
)

// postgresUserKeys are the keys of the Secret ext-postgres-operator makes
// for a PostgresUser.
var postgresUserKeys = []string{"POSTGRES_URL", "POSTGRES_JDBC_URL", "POSTGRES_DOTNET_URL", "HOST", "DATABASE_NAME", "URI_ARGS", "ROLE", "PASSWORD", "LOGIN", "PORT", "HOSTNAME"}

// makesExternalSecret sets what an ExternalSecret named name with spec
// makes: the Secret spec.target.name (name by default), with the keys of
// spec.data, and more with spec.dataFrom or a template.
func (o *object) makesExternalSecret(spec *yaml.Node, name string) {
	o.makesSecret = yamlutil.Str(spec, "target", "name")
	if o.makesSecret == "" {
		o.makesSecret = name
	}
	for _, d := range contentOf(yamlutil.Field(spec, "data")) {
		o.makesKeys = append(o.makesKeys, yamlutil.Str(d, "secretKey"))
	}
	o.makesOpen = yamlutil.Field(spec, "dataFrom") != nil || yamlutil.Field(yamlutil.Field(spec, "target"), "template") != nil
}

// withoutPatches is a Kustomization's node without spec.patches, sharing
// the rest of its tree.
func withoutPatches(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return n
	}
	top := *n
	top.Content = slices.Clone(n.Content)
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "spec" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		spec := *top.Content[i+1]
		spec.Content = nil
		for j := 0; j+1 < len(top.Content[i+1].Content); j += 2 {
			if k := top.Content[i+1].Content[j]; k.Value != "patches" {
				spec.Content = append(spec.Content, k, top.Content[i+1].Content[j+1])
			}
		}
		top.Content[i+1] = &spec
	}
	return &top
}

func (o *object) secretOrConfigMap() bool {
	return (o.Kind == "ConfigMap" || o.Kind == "Secret") && o.APIVersion == "v1"
}

// plainString reports whether n is a string scalar, which decodes to its
// Value whatever its style.
func plainString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
}

// webhookScope returns the group/resource keys (webhookKey) whose create
// or update the webhooks of a Validating- or MutatingWebhookConfiguration
// intercept and can refuse while their server is down: a webhook with
// failurePolicy Ignore cannot (the API server admits the object without
// it), nor a rule for other operations only (DELETE, CONNECT).
func webhookScope(n *yaml.Node) []string {
	var out []string
	for _, h := range contentOf(yamlutil.Field(n, "webhooks")) {
		if yamlutil.Str(h, "failurePolicy") == "Ignore" {
			continue
		}
		for _, r := range contentOf(yamlutil.Field(h, "rules")) {
			if !slices.ContainsFunc(contentOf(yamlutil.Field(r, "operations")), func(op *yaml.Node) bool {
				return op.Value == "*" || op.Value == "CREATE" || op.Value == "UPDATE"
			}) {
				continue
			}
			for _, g := range contentOf(yamlutil.Field(r, "apiGroups")) {
				for _, res := range contentOf(yamlutil.Field(r, "resources")) {
					// "x/status" is a subresource: applying x does not
					// reach it; "*/*" and "*" are every resource.
					resource, sub, _ := strings.Cut(res.Value, "/")
					if sub != "" && sub != "*" {
						continue
					}
					if k := webhookKey(g.Value, resource); !slices.Contains(out, k) {
						out = append(out, k)
					}
				}
			}
		}
	}
	return out
}

// webhookKey keys what a webhook rule covers: group/resource, either of
// them "*" for all.
func webhookKey(group, resource string) string { return group + "/" + resource }

// resourceOf is the plural resource name of kind in group: the CRD's
// spec.names.plural when lint has the CRD, otherwise the name the API
// machinery guesses for a kind (lowercase; -s, -es after s, -ies for a
// final y), which is what nearly every CRD uses.
func (l *linter) resourceOf(group, kind string) string {
	for _, d := range l.crds[group+"/"+kind] {
		if d.obj.crd.plural != "" {
			return d.obj.crd.plural
		}
	}
	r := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(r, "s"):
		return r + "es"
	case strings.HasSuffix(r, "y"):
		return strings.TrimSuffix(r, "y") + "ies"
	}
	return r + "s"
}

// covers reports whether a webhook scope (webhookKey keys) covers the
// resource of group.
func covers(scope map[string]bool, group, resource string) bool {
	return scope[webhookKey(group, resource)] || scope[webhookKey(group, "*")] || scope[webhookKey("*", resource)] || scope[webhookKey("*", "*")]
}

// contentOf is n's items, or nil.
func contentOf(n *yaml.Node) []*yaml.Node {
	if n == nil {
		return nil
	}
	return n.Content
}

// skipSubst reports whether the object is labelled or annotated
// kustomize.toolkit.fluxcd.io/substitute: disabled.
func (o *object) skipSubst() bool {
	const key = "kustomize.toolkit.fluxcd.io/substitute"
	return yamlutil.Str(o.Node, "metadata", "annotations", key) == "disabled" || yamlutil.Str(o.Node, "metadata", "labels", key) == "disabled"
}
