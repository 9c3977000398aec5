//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/internal/cli"
	"github.com/fluxpack/fluxpack/lint"
)

// lockedDown is the Mode of TestRaceRules: every flag at its default (so a
// dependsOn not yet Ready is re-checked every 30s, as users run Flux), plus
// kustomize- and helm-controller's stock --no-cross-namespace-refs=true,
// which the cross-namespace-ref case needs and no other case's fixture
// touches (none of them refers to a source in another namespace).
var lockedDown = Mode{Name: "stock-no-cross-namespace-refs", NoCrossNamespaceRefs: true}

// rulesDir holds one folder per case (naive/ and fixed/ Flux
// repositories) and charts/, the test charts; rulesEntry is each
// repository's entry point, the folder the case's root Kustomization
// applies.
const (
	rulesDir   = "testdata/rules"
	rulesEntry = "clusters/e2e"
	// registryPlaceholder stands for the test registry's address in the
	// fixtures' OCIRepository URLs.
	registryPlaceholder = "registry.e2e.invalid"
	// gatedStartup is how long a pod whose gate annotation is closed
	// takes at least to start; the pods of a race case (its Hold) start
	// only once the case has seen the race decided, whatever the time.
	gatedStartup = 10 * time.Second
	// naiveDeadline bounds the wait for a naive tree's failure (the
	// health check's timeout is 30s); fixedDeadline the wait for a fixed
	// tree's objects to be Ready (two dependsOn edges at 30s each in stock
	// Flux after an operator's start). Both are failure bounds: a run
	// takes under 2 minutes in all.
	naiveDeadline = 3 * time.Minute
	fixedDeadline = 4 * time.Minute
)

// wantFinding is a finding lint must report on a naive tree.
type wantFinding struct {
	Layer    string // the layer (Kustomization) the finding names
	Object   string // Kind/namespace/name, or "" for a finding on the layer
	Contains string // a part of its message
}

// wantFailure is what real Flux must say about a naive tree: a Ready=False
// condition of the named Kustomization or HelmRelease whose message
// matches.
type wantFailure struct {
	Object  string // Kind/namespace/name
	Reason  string // the condition's reason, or "" for any
	Message *regexp.Regexp
	// DependsOn is, for a finding on a layer that is Ready too early
	// (operator-wait), that layer: the failure is in a layer depending
	// on it.
	DependsOn string
}

// ruleCase proves one lint rule in real Flux: lint flags the naive tree
// (testdata/rules/<Dir>/naive) as Findings say and passes the fixed one;
// in the cluster the naive tree fails as Failures say (or behaves as
// CheckNaive proves, for a rule whose harm is not a failed reconcile), and
// every object of the fixed tree (Objects, and the root) becomes Ready
// with no failed reconcile.
type ruleCase struct {
	Rule lint.Rule
	// Dir names the fixtures' folder, the repository pushed
	// (rules/<Dir>) and the root OCIRepository and Kustomization
	// (flux-system/<Dir>) that apply the entry.
	Dir string
	// Sources are more sources lint maps to the tree, KIND/NAMESPACE/NAME
	// (a tenant's own OCIRepository of the same repository).
	Sources []string
	// LintArgs are more flags of fluxpack lint.
	LintArgs []string
	Findings []wantFinding
	Failures []wantFailure
	// Objects are the Kustomizations and HelmReleases of the fixed tree
	// besides the root, Kind/namespace/name.
	Objects []string
	// CheckNaive and CheckFixed prove more, once the naive tree failed as
	// said (or the objects named in NaiveReady are Ready) and once the
	// fixed tree is Ready; they return a note for the summary.
	CheckNaive func(t *testing.T, r *ruleRun) string
	CheckFixed func(t *testing.T, r *ruleRun) string
	// NaiveReady are objects of the naive tree to wait for, Ready,
	// before CheckNaive.
	NaiveReady []string
	// Files are written into both trees before lint: what depends on the
	// cluster (a webhook configuration naming the test's server).
	Files func(t *testing.T, hook *Webhook) map[string][]byte
	// Hold forces the order of a case whose naive tree fails by a race
	// (a layer applied before the slow layer it should wait for); nil for
	// the others.
	Hold *raceHold
}

// raceHold is the order a race case forces: the gated pods of Namespace
// (the slow layer's workload, which wait: true or a dependency makes
// everything after it wait for) do not start until the race is decided.
// In the naive tree that is once every Failure of the case was seen: the
// layer that should have waited ran into the slow one. In the fixed tree,
// the same pods are held until Waiting, the object that must not overtake
// them, was seen Ready=False with DependencyNotReady: its dependsOn held it
// back. Both trees thus run in the same order, whatever the machine's load.
type raceHold struct {
	Namespace string
	Waiting   string // Kind/namespace/name
}

// rulesElsewhere are the lint rules ruleCases leave out, and why.
var rulesElsewhere = map[lint.Rule]string{
	lint.RuleWebhookOrder: "proved by TestRepository (racy) and TestS0ExternalSecrets, TestS0Helm (naive)",
	lint.RuleSource:       "not proved: an ArtifactGenerator lint cannot read needs source-watcher, which this e2e does not run",
	lint.RuleMerge:        "a hint: nothing fails in Flux, it only saves dependency polling",
}

func ks(ns, name string) string { return kustomizev1.KustomizationKind + "/" + ns + "/" + name }
func hr(ns, name string) string { return helmv2.HelmReleaseKind + "/" + ns + "/" + name }

// ruleCases prove every lint rule but those rulesElsewhere names.
var ruleCases = []ruleCase{
	{
		// The CRDs' layer waits for cert-manager, held until the
		// custom resource's layer, which waits for nothing, failed (or,
		// fixed, was seen waiting for the CRDs' layer).
		Rule: lint.RuleCRDOrder, Dir: "crd-order",
		Hold:     &raceHold{Namespace: "cert-manager", Waiting: ks(fluxNamespace, "parts")},
		Findings: []wantFinding{{Layer: "parts", Object: "Sprocket/parts/main-drive", Contains: `the CRD of Sprocket (example.fluxpack.dev) is in layer "sprocket-operator", which this layer does not depend on`}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "parts"), Message: regexp.MustCompile(`no matches for kind "Sprocket" in version "example.fluxpack.dev/v1"`)}},
		Objects:  []string{ks(fluxNamespace, "cert-manager"), ks(fluxNamespace, "sprocket-operator"), ks(fluxNamespace, "parts")},
	},
	{
		// The namespace's layer waits for the ingress controller, held
		// until the layer applying into the namespace failed (fixed:
		// waited).
		Rule: lint.RuleNamespaceOrder, Dir: "namespace-order",
		Hold:     &raceHold{Namespace: "ingress", Waiting: ks(fluxNamespace, "shop")},
		Findings: []wantFinding{{Layer: "shop", Object: "Deployment/shop/shop", Contains: `namespace "shop" is created by layer "tenants", which this layer does not depend on`}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "shop"), Message: regexp.MustCompile(`namespaces "shop" not found`)}},
		Objects:  []string{ks(fluxNamespace, "ingress"), ks(fluxNamespace, "tenants"), ks(fluxNamespace, "shop")},
	},
	{
		// A HelmRelease's targetNamespace that nothing creates.
		Rule: lint.RuleNamespaceOrder, Dir: "namespace-order-helm",
		Findings: []wantFinding{{Layer: "podinfo", Object: hr(fluxNamespace, "podinfo"), Contains: `no layer creates namespace "podinfo"`}},
		Failures: []wantFailure{{Object: hr(fluxNamespace, "podinfo"), Message: regexp.MustCompile(`namespaces "podinfo" not found`)}},
		Objects:  []string{ks(fluxNamespace, "podinfo"), hr(fluxNamespace, "podinfo")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, "podinfo", "podinfo-hello", "greeting", "hello from podinfo")
		},
	},
	{
		Rule: lint.RuleHealthCheck, Dir: "health-check",
		Findings: []wantFinding{{Layer: "cache", Contains: "health check Deployment/cache/redis-master: no layer creates this object"}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "cache"), Message: regexp.MustCompile(`timeout waiting for: \[Deployment/cache/redis-master status: 'NotFound'\]`)}},
		Objects:  []string{ks(fluxNamespace, "cache")},
	},
	{
		Rule: lint.RuleSubstituteFrom, Dir: "substitute-from",
		Findings: []wantFinding{{Layer: "monitoring", Contains: "substituteFrom ConfigMap/flux-system/monitoring-vars is created by this same layer"}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "monitoring"), Message: regexp.MustCompile(`substitute from 'ConfigMap/monitoring-vars' error: configmaps "monitoring-vars" not found`)}},
		Objects:  []string{ks(fluxNamespace, "monitoring")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, "monitoring", "prometheus-settings", "retention", "15d")
		},
	},
	{
		// Flux applies ${cluster_name} as written: in a value it would
		// apply silently (Ready=True, the wrong text in the cluster); the
		// fixture has it in a label too, where the API server refuses it,
		// so the harm shows as a failed reconcile.
		Rule: lint.RuleNoPostBuild, Dir: "no-postbuild",
		Findings: []wantFinding{{Layer: "dashboards", Object: "ConfigMap/default/dashboards", Contains: "${cluster_name} is a variable of the platform, but this layer has no spec.postBuild"}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "dashboards"), Message: regexp.MustCompile(`ConfigMap/default/dashboards .*Invalid value: "\$\{cluster_name\}"`)}},
		Objects:  []string{ks(fluxNamespace, "edge"), ks(fluxNamespace, "dashboards")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, "default", "dashboards", "title", "Dashboards of e2e-east")
		},
	},
	{
		// The values' layer waits for the controllers, held until the
		// HelmRelease failed (fixed: its layer waited).
		Rule: lint.RuleValuesFrom, Dir: "values-from",
		Hold:     &raceHold{Namespace: "cert-issuer", Waiting: ks(fluxNamespace, "greeter")},
		Findings: []wantFinding{{Layer: "greeter", Object: hr(fluxNamespace, "greeter"), Contains: `valuesFrom ConfigMap/flux-system/greeter-values is created by layer "infra-configs", which this layer does not depend on`}},
		Failures: []wantFailure{{Object: hr(fluxNamespace, "greeter"), Message: regexp.MustCompile(`could not resolve ConfigMap chart values reference 'flux-system/greeter-values'`)}},
		Objects:  []string{ks(fluxNamespace, "infra-controllers"), ks(fluxNamespace, "infra-configs"), ks(fluxNamespace, "greeter"), hr(fluxNamespace, "greeter")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, fluxNamespace, "greeter-hello", "greeting", "hello from the platform team")
		},
	},
	{
		// Two Kustomizations applying one object fail no reconcile: the
		// harm is that they fight over it and that either's prune deletes
		// it while the other still applies it. CheckNaive proves both.
		Rule: lint.RuleDualOwner, Dir: "dual-owner",
		Findings:   []wantFinding{{Layer: "logging", Object: "ConfigMap/default/log-level", Contains: `applied by layers "audit", "logging"`}},
		NaiveReady: []string{ks(fluxNamespace, "logging"), ks(fluxNamespace, "audit")},
		CheckNaive: checkDualOwnerNaive,
		Objects:    []string{ks(fluxNamespace, "logging"), ks(fluxNamespace, "audit")},
		CheckFixed: checkDualOwnerFixed,
	},
	{
		Rule: lint.RuleCrossNamespace, Dir: "cross-namespace-ref",
		Sources:  []string{"OCIRepository/team-a/team-a"},
		LintArgs: []string{"--no-cross-namespace-refs"},
		Findings: []wantFinding{
			{Layer: "team-a/team-a", Contains: "spec.sourceRef OCIRepository/flux-system/cross-namespace-ref is in another namespace than the Kustomization (team-a)"},
			// lint names the entry's layer after flux bootstrap's
			// Kustomization (flux-system), whatever applies it: here the
			// case's root, Kustomization/flux-system/cross-namespace-ref.
			{Layer: "flux-system", Object: hr("team-b", "team-b"), Contains: "spec.chartRef OCIRepository/flux-system/team-b-chart is in another namespace than the HelmRelease (team-b)"},
		},
		Failures: []wantFailure{
			{Object: ks("team-a", "team-a"), Reason: "AccessDenied", Message: regexp.MustCompile(`can't access 'OCIRepository/flux-system/cross-namespace-ref', cross-namespace references have been blocked`)},
			{Object: hr("team-b", "team-b"), Reason: "AccessDenied", Message: regexp.MustCompile(`cross-namespace references are not allowed: cannot access OCIRepository flux-system/team-b-chart`)},
		},
		Objects: []string{ks("team-a", "team-a"), hr("team-b", "team-b")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, "team-a", "team-a-config", "owner", "team-a") + ", " +
				requireData(t, r, "team-b", "team-b-hello", "greeting", "hello from team-b")
		},
	},
	{
		// An unknown dependsOn: kustomize-controller waits for it
		// (DependencyNotReady, a waiting reason, not a failed reconcile)
		// and the layer never becomes Ready.
		Rule: lint.RuleGraph, Dir: "graph",
		Findings: []wantFinding{{Layer: "frontend", Contains: `depends on Kustomization/flux-system/backends, which the platform does not have`}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "frontend"), Reason: meta.DependencyNotReadyReason, Message: regexp.MustCompile(`dependency 'flux-system/backends' not found`)}},
		Objects:  []string{ks(fluxNamespace, "backend"), ks(fluxNamespace, "frontend")},
	},
	{
		// The operator layer is Ready as soon as applied, so the layer
		// depending on it applies its custom resources while the
		// operator's webhook does not serve yet: its pod, and with it
		// the webhook server, is held until they were refused (fixed:
		// until the dependent layer was seen waiting for the operator's).
		Rule: lint.RuleOperatorWait, Dir: "operator-wait",
		Hold: &raceHold{Namespace: "external-secrets", Waiting: ks(fluxNamespace, "eso-config")},
		Files: func(t *testing.T, hook *Webhook) map[string][]byte {
			vwc, err := sigyaml.Marshal(hook.Configuration())
			require.NoError(t, err)
			return map[string][]byte{"infrastructure/eso/webhook.yaml": vwc}
		},
		Findings: []wantFinding{{Layer: "eso", Contains: "operator layer without wait or healthChecks is Ready as soon as it is applied"}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "eso-config"), DependsOn: "eso",
			Message: regexp.MustCompile(`failed calling webhook "validate\.[a-z]+\.external-secrets\.io": .*connection refused`)}},
		CheckNaive: func(t *testing.T, r *ruleRun) string {
			eso, cfg := r.w.get(ks(fluxNamespace, "eso")), r.w.get(ks(fluxNamespace, "eso-config"))
			require.False(t, eso.readyAt.IsZero(), "Kustomization/flux-system/eso never Ready")
			require.True(t, eso.readyAt.Before(cfg.notReady[len(cfg.notReady)-1].at), "eso-config failed before eso was Ready")
			return fmt.Sprintf("eso Ready after %.1fs (no wait), its webhook held until eso-config was refused", eso.readyAt.Sub(r.applied).Seconds())
		},
		Objects: []string{ks(fluxNamespace, "eso"), ks(fluxNamespace, "eso-config")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			require.Positive(t, r.hook.Requests(), "the webhook never validated a custom resource")
			return fmt.Sprintf("the webhook validated %d requests", r.hook.Requests())
		},
	},
	{
		// A layer holding CRDs with prune: true fails no reconcile: the
		// harm is that deleting the layer (or removing a CRD from it)
		// deletes the CRD, and with it every custom resource of it,
		// which another layer applied. CheckNaive proves that.
		Rule: lint.RuleCRDPrune, Dir: "crd-prune",
		Findings:   []wantFinding{{Layer: "gadget-crds", Object: "CustomResourceDefinition/gadgets.example.fluxpack.dev", Contains: "prune: true on a layer holding CRDs"}},
		NaiveReady: []string{ks(fluxNamespace, "gadget-crds"), ks(fluxNamespace, "gadgets")},
		CheckNaive: func(t *testing.T, r *ruleRun) string { return checkCRDPrune(t, r, false) },
		Objects:    []string{ks(fluxNamespace, "gadget-crds"), ks(fluxNamespace, "gadgets")},
		CheckFixed: func(t *testing.T, r *ruleRun) string { return checkCRDPrune(t, r, true) },
	},
	{
		// A variable without a value or default: strict substitution,
		// kustomize-controller's default, fails the layer.
		Rule: lint.RuleVariables, Dir: "variables",
		Findings: []wantFinding{{Layer: "storefront", Object: "ConfigMap/default/storefront-settings", Contains: `variable "cluster_region" is not set and has no default`}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "storefront"), Message: regexp.MustCompile(`variable not set \(strict mode\): "cluster_region"`)}},
		Objects:  []string{ks(fluxNamespace, "storefront")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, "default", "storefront-settings", "region", "eu-west-3")
		},
	},
	{
		Rule: lint.RulePath, Dir: "path",
		Findings: []wantFinding{{Layer: "docs", Contains: `path "./apps/documentation": no such file or directory`}},
		Failures: []wantFailure{{Object: ks(fluxNamespace, "docs"), Message: regexp.MustCompile(`kustomization path not found: stat \S*/apps/documentation: no such file or directory`)}},
		Objects:  []string{ks(fluxNamespace, "docs")},
	},
	{
		// A chart that does not render with the release's values (its
		// values schema refuses a typo).
		Rule: lint.RuleChart, Dir: "chart",
		Findings: []wantFinding{{Layer: "welcome", Object: hr(fluxNamespace, "welcome"), Contains: "additional properties 'greting' not allowed"}},
		Failures: []wantFailure{{Object: hr(fluxNamespace, "welcome"), Message: regexp.MustCompile(`values don't meet the specifications of the schema\(s\)[\s\S]*additional properties 'greting' not allowed`)}},
		Objects:  []string{ks(fluxNamespace, "welcome"), hr(fluxNamespace, "welcome")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			return requireData(t, r, fluxNamespace, "welcome-hello", "greeting", "welcome aboard")
		},
	},
	{
		// A custom resource in the layer of the HelmRelease whose chart
		// brings its CRD: the dry-run fails, nothing of the layer is
		// applied, the HelmRelease included, and the CRD never comes.
		Rule: lint.RuleHelmCRDs, Dir: "helm-crds",
		Findings:   []wantFinding{{Layer: "widgets", Object: "Widget/flux-system/default", Contains: "HelmRelease/flux-system/widgets installs the CRD of Widget (example.fluxpack.dev) in this same layer"}},
		Failures:   []wantFailure{{Object: ks(fluxNamespace, "widgets"), Message: regexp.MustCompile(`no matches for kind "Widget" in version "example.fluxpack.dev/v1"`)}},
		CheckNaive: checkHelmCRDsDeadlock,
		Objects:    []string{ks(fluxNamespace, "widgets"), hr(fluxNamespace, "widgets"), ks(fluxNamespace, "widget-config")},
		CheckFixed: func(t *testing.T, r *ruleRun) string {
			ok, err := exists(t.Context(), r.c, "example.fluxpack.dev/v1", "Widget", fluxNamespace, "default")
			require.True(t, ok, "Widget/flux-system/default is not in the cluster: %v", err)
			return "Widget/flux-system/default applied"
		},
	},
}

// TestRaceRules is issue 31's proof: for every lint rule (but those
// rulesElsewhere names, which it checks), a naive Flux repository that
// lint flags with that rule fails in real Flux the way the finding says
// (the controller's message matched), and the fixed repository, which
// lint passes, reconciles with every Kustomization and HelmRelease Ready,
// 0 failed reconciles and no Warning event. Where a rule's harm is not a
// failed reconcile (dual-owner, crd-prune), the case proves the harm
// itself: objects fought over or deleted. Two clusters run at once, one
// for the naive trees and one for the fixed trees; each holds every case
// (the cases' objects do not collide), started with stock flags plus
// --no-cross-namespace-refs=true (lockedDown).
func TestRaceRules(t *testing.T) {
	t.Parallel()
	started := time.Now()
	for _, rule := range lint.Rules() {
		_, elsewhere := rulesElsewhere[rule]
		proved := slices.ContainsFunc(ruleCases, func(rc ruleCase) bool { return rc.Rule == rule })
		require.True(t, proved != elsewhere, "lint rule %s: want exactly one of a case in ruleCases or an entry in rulesElsewhere", rule)
	}
	results := &ruleResults{notes: map[string]string{}}
	t.Run("clusters", func(t *testing.T) {
		for _, variant := range []string{"naive", "fixed"} {
			t.Run(variant, func(t *testing.T) {
				t.Parallel()
				runRuleVariant(t, variant, results)
			})
		}
	})
	for _, rc := range ruleCases {
		line := fmt.Sprintf("naive: %s; fixed: %s", results.get(rc.Dir, "naive"), results.get(rc.Dir, "fixed"))
		t.Logf("L-%s %s", rc.Dir, line)
		recordSummary("L-"+rc.Dir, line)
	}
	t.Logf("TestRaceRules: %d cases, wall time %s", len(ruleCases), time.Since(started).Round(100*time.Millisecond))
}

// ruleResults collects each case's note per variant for the summary.
type ruleResults struct {
	mu    sync.Mutex
	notes map[string]string
}

func (r *ruleResults) set(dir, variant, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[dir+"/"+variant] = note
}

func (r *ruleResults) get(dir, variant string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.notes[dir+"/"+variant]; ok {
		return n
	}
	return "NOT PROVED (see the test's failure)"
}

// ruleRun is one case's tree pushed and applied in a cluster.
type ruleRun struct {
	c        *Cluster
	hook     *Webhook
	w        *fluxWatch
	rc       ruleCase
	dir      string
	revision string
	applied  time.Time
}

// runRuleVariant starts a cluster, pushes the two test charts to its
// registry, lints every case's naive or fixed tree, pushes it and applies
// its root, all cases before any check so that they reconcile at once; then
// checks each case in a subtest of its own. The checks wait in turn, but on
// a cluster where every case progresses meanwhile, so the wall time is the
// slowest case's, whatever -parallel says.
func runRuleVariant(t *testing.T, variant string, results *ruleResults) {
	c := StartCluster(t, lockedDown)
	hook := NewWebhook(t)
	w := watchFlux(c)
	holds := map[string]<-chan struct{}{}
	for _, rc := range ruleCases {
		if rc.Hold != nil {
			require.NotContains(t, holds, rc.Hold.Namespace, "case %s holds a namespace another case holds", rc.Dir)
			holds[rc.Hold.Namespace] = w.releaseWhen(t.Context(), rc.decided(w, variant))
		}
	}
	runRulePods(c, hook, holds)
	for _, name := range []string{"hello", "widgets"} {
		pushChart(t, c, filepath.Join(rulesDir, "charts", name))
	}
	runs := make([]*ruleRun, len(ruleCases))
	for i, rc := range ruleCases {
		r := &ruleRun{c: c, hook: hook, w: w, rc: rc, dir: prepareTree(t, c, filepath.Join(rulesDir, rc.Dir, variant))}
		if rc.Files != nil {
			writeFiles(t, r.dir, rc.Files(t, hook))
		}
		rep := lintTree(t, r)
		if variant == "naive" {
			requireFindings(t, rc, rep)
		} else {
			for _, f := range rep.Findings {
				assert.False(t, f.Fails(), "lint of the fixed tree of %s: %s", rc.Dir, f)
			}
		}
		r.deploy(t)
		runs[i] = r
	}
	for _, r := range runs {
		t.Run(r.rc.Dir, func(t *testing.T) {
			var note string
			if variant == "naive" {
				note = r.requireNaive(t)
			} else {
				note = r.requireFixed(t)
			}
			results.set(r.rc.Dir, variant, note)
		})
	}
}

// servesAnnotation marks a fixture's gated pod that serves the cluster's
// test webhook once started.
const servesAnnotation = "e2e.fluxpack.io/serves"

// runRulePods is RunGatedPods for the rules' clusters: a gated pod starts
// gatedStartup after it is bound to the node and once the hold of its
// namespace (holds, a race case's) is closed, makes hook serve if it is the
// webhook's server, and only then opens its gate. A gated pod no race case
// holds breaks the cluster: its start would be left to timing.
func runRulePods(c *Cluster, hook *Webhook, holds map[string]<-chan struct{}) {
	c.runGatedPods(func(pod *corev1.Pod) (podStart, error) {
		hold, ok := holds[pod.Namespace]
		if !ok {
			return podStart{}, fmt.Errorf("gated, but no race case holds namespace %q", pod.Namespace)
		}
		s := podStart{startup: gatedStartup, hold: hold}
		if pod.Annotations[servesAnnotation] == "webhook" {
			s.started = hook.Serve
		}
		return s, nil
	})
}

// decided is the condition on which the case's Hold lets its pods start
// in the variant's tree: every Failure seen (naive), or Hold.Waiting seen
// waiting for its dependency (fixed).
func (rc ruleCase) decided(w *fluxWatch, variant string) func() bool {
	if variant == "naive" {
		return func() bool {
			for _, want := range rc.Failures {
				if _, ok := seenFailure(w.get(want.Object), want); !ok {
					return false
				}
			}
			return true
		}
	}
	return func() bool {
		st := w.get(rc.Hold.Waiting)
		return st != nil && slices.ContainsFunc(st.notReady, func(c condition) bool { return c.Reason == meta.DependencyNotReadyReason })
	}
}

// seenFailure returns the first Ready=False condition seen of st that
// want matches.
func seenFailure(st *fluxState, want wantFailure) (condition, bool) {
	if st == nil {
		return condition{}, false
	}
	for _, cond := range st.notReady {
		if (want.Reason == "" || cond.Reason == want.Reason) && want.Message.MatchString(cond.Message) {
			return cond, true
		}
	}
	return condition{}, false
}

// prepareTree copies a fixture to a temporary folder, the test registry's
// address in place of registryPlaceholder.
func prepareTree(t *testing.T, c *Cluster, src string) string {
	t.Helper()
	dir := t.TempDir()
	copyTree(t, src, dir)
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte(registryPlaceholder)) {
			return nil
		}
		return os.WriteFile(p, bytes.ReplaceAll(b, []byte(registryPlaceholder), []byte(c.Registry.Host)), 0o644)
	}))
	return dir
}

// lintTree runs `fluxpack lint ENTRY -o json` on the case's tree, as a user
// would (the root's source, and the case's other sources, mapped to the
// tree; the test charts as --charts), and returns its report.
func lintTree(t *testing.T, r *ruleRun) *lint.Report {
	t.Helper()
	args := []string{"lint", filepath.Join(r.dir, rulesEntry), "--root", r.dir, "-o", "json", "--no-helmfile",
		"--charts", filepath.Join(rulesDir, "charts"),
		"--source", sourcev1.OCIRepositoryKind + "/" + fluxNamespace + "/" + r.rc.Dir + "=" + r.dir}
	for _, s := range r.rc.Sources {
		args = append(args, "--source", s+"="+r.dir)
	}
	args = append(args, r.rc.LintArgs...)
	var stdout, stderr bytes.Buffer
	code := cli.Main(t.Context(), "e2e", args, &stdout, &stderr)
	require.Contains(t, []int{cli.ExitOK, cli.ExitFinding}, code, "fluxpack %s: %s", strings.Join(args, " "), stderr.String())
	var rep lint.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "decoding the output of fluxpack lint: %s", stdout.String())
	return &rep
}

// requireFindings checks that lint reports every wanted finding of the
// case's rule on the naive tree, and no failing finding of another rule.
func requireFindings(t *testing.T, rc ruleCase, rep *lint.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if f.Fails() {
			assert.Equal(t, rc.Rule, f.Rule, "lint of the naive tree of %s reports another rule: %s", rc.Dir, f)
		}
	}
	for _, want := range rc.Findings {
		found := slices.ContainsFunc(rep.Findings, func(f lint.Finding) bool {
			// A problem of several places names each place's object.
			atObject := slices.ContainsFunc(f.AllPlaces(), func(p lint.Place) bool { return p.Object == want.Object })
			return f.Rule == rc.Rule && f.Layer == want.Layer && (f.Object == want.Object || want.Object != "" && atObject) && strings.Contains(f.Message, want.Contains)
		})
		assert.True(t, found, "lint of the naive tree of %s: no [%s] finding on layer %q, object %q, saying %q; got %v",
			rc.Dir, rc.Rule, want.Layer, want.Object, want.Contains, rep.Findings)
	}
	// What must fail in the cluster is what a finding names: its layer's
	// Kustomization, or its object.
	for _, want := range rc.Failures {
		named := slices.ContainsFunc(rc.Findings, func(f wantFinding) bool {
			return f.Object == want.Object || layerObject(f.Layer) == want.Object || want.DependsOn != "" && f.Layer == want.DependsOn
		})
		assert.True(t, named, "case %s expects %s to fail, which no finding names", rc.Dir, want.Object)
	}
}

// layerObject is the Kustomization a finding's layer names: "name" in
// flux-system, or "namespace/name".
func layerObject(layer string) string {
	if ns, name, ok := strings.Cut(layer, "/"); ok {
		return ks(ns, name)
	}
	return ks(fluxNamespace, layer)
}

// deploy pushes the tree to rules/<Dir> with fluxpack push and applies the
// case's root: an OCIRepository and a Kustomization applying rulesEntry,
// both named after the case.
func (r *ruleRun) deploy(t *testing.T) {
	t.Helper()
	res := push(t, r.c, r.dir, "rules/"+r.rc.Dir)
	r.revision = revision(res)
	r.applied = time.Now()
	for _, obj := range []client.Object{
		&sourcev1.OCIRepository{
			ObjectMeta: metav1.ObjectMeta{Name: r.rc.Dir, Namespace: fluxNamespace},
			Spec: sourcev1.OCIRepositorySpec{
				URL:       fmt.Sprintf("oci://%s/rules/%s", r.c.Registry.Host, r.rc.Dir),
				Reference: &sourcev1.OCIRepositoryRef{Tag: tag},
				Interval:  &metav1.Duration{Duration: 10 * time.Minute},
				Insecure:  true, // plain HTTP on loopback
			},
		},
		&kustomizev1.Kustomization{
			ObjectMeta: metav1.ObjectMeta{Name: r.rc.Dir, Namespace: fluxNamespace},
			Spec: kustomizev1.KustomizationSpec{
				Interval:  metav1.Duration{Duration: 10 * time.Minute},
				Path:      "./" + rulesEntry,
				Prune:     true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.OCIRepositoryKind, Name: r.rc.Dir},
			},
		},
	} {
		require.NoError(t, r.c.Client.Create(t.Context(), obj), "creating %T %s", obj, obj.GetName())
	}
}

// requireNaive waits for every failure the case expects, then runs
// CheckNaive; it returns the summary note.
func (r *ruleRun) requireNaive(t *testing.T) string {
	t.Helper()
	var notes []string
	for _, want := range r.rc.Failures {
		var got condition
		waitFor(t, r.c, fmt.Sprintf("%s to fail with %q", want.Object, want.Message), naiveDeadline, func(context.Context) (bool, error) {
			st := r.w.get(want.Object)
			if st == nil {
				return false, fmt.Errorf("%s never seen", want.Object)
			}
			var ok bool
			got, ok = seenFailure(st, want)
			if !ok {
				return false, fmt.Errorf("%s: Ready=False conditions seen: %v", want.Object, st.notReady)
			}
			return true, nil
		})
		msg := controllerTmp.ReplaceAllString(want.Message.FindString(got.Message), "…/")
		if short := webhookFailure([]string{msg}); short != "" {
			msg = short
		}
		notes = append(notes, fmt.Sprintf("%s Ready=False %s %q after %.1fs", want.Object, got.Reason, msg, got.at.Sub(r.applied).Seconds()))
	}
	if len(r.rc.NaiveReady) > 0 {
		r.waitReady(t, r.rc.NaiveReady, naiveDeadline)
	}
	if r.rc.CheckNaive != nil {
		notes = append(notes, r.rc.CheckNaive(t, r))
	}
	return strings.Join(notes, "; ")
}

// controllerTmp is kustomize-controller's working copy of an artifact, in
// a message: left out of the summary.
var controllerTmp = regexp.MustCompile(`\S*/kustomization-\d+/`)

// requireFixed waits until the root and every object of the fixed tree
// are Ready (a Kustomization with the pushed revision applied), then
// requires that none ever failed a reconcile (watched) or has a Warning
// event, and runs CheckFixed.
func (r *ruleRun) requireFixed(t *testing.T) string {
	t.Helper()
	objects := append([]string{ks(fluxNamespace, r.rc.Dir)}, r.rc.Objects...)
	ready := r.waitReady(t, objects, fixedDeadline)
	failed := 0
	for _, o := range objects {
		st := r.w.get(o)
		failed += st.failures
		assert.Zero(t, st.failures, "%s failed reconciles: %v", o, st.notReady)
	}
	warnings := r.warnings(t, objects)
	assert.Empty(t, warnings, "Warning events of the fixed tree of %s", r.rc.Dir)
	note := fmt.Sprintf("ready %.1fs, failed %d, warnings %d", ready.Seconds(), failed, len(warnings))
	if h := r.rc.Hold; h != nil {
		note += fmt.Sprintf("; %s waited for its dependency while namespace %s's pods were held", h.Waiting, h.Namespace)
	}
	if r.rc.CheckFixed != nil {
		note += "; " + r.rc.CheckFixed(t, r)
	}
	return note
}

// waitReady waits until every named object is Ready and returns the time
// from applying the root until the last of them was.
func (r *ruleRun) waitReady(t *testing.T, objects []string, deadline time.Duration) time.Duration {
	t.Helper()
	var last time.Time
	waitFor(t, r.c, fmt.Sprintf("%v Ready", objects), deadline, func(context.Context) (bool, error) {
		last = time.Time{}
		for _, o := range objects {
			st := r.w.get(o)
			switch {
			case st == nil:
				return false, fmt.Errorf("%s never seen", o)
			case st.readyAt.IsZero():
				return false, fmt.Errorf("%s not Ready: %s", o, st.last)
			case strings.HasPrefix(o, kustomizev1.KustomizationKind+"/") && st.revision != r.revision:
				return false, fmt.Errorf("%s applied %q, not %q", o, st.revision, r.revision)
			}
			if st.readyAt.After(last) {
				last = st.readyAt
			}
		}
		return true, nil
	})
	return last.Sub(r.applied)
}

// warnings lists the Warning events of the named objects since the root
// was applied.
func (r *ruleRun) warnings(t *testing.T, objects []string) []string {
	t.Helper()
	var events corev1.EventList
	require.NoError(t, r.c.Client.List(t.Context(), &events))
	var out []string
	for _, e := range events.Items {
		o := e.InvolvedObject
		if e.Type != corev1.EventTypeWarning || !slices.Contains(objects, o.Kind+"/"+o.Namespace+"/"+o.Name) {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s/%s: %s: %s", o.Kind, o.Namespace, o.Name, e.Reason, e.Message))
	}
	return out
}

// condition is one Ready condition seen, and when.
type condition struct {
	Reason, Message string
	at              time.Time
}

func (c condition) String() string { return c.Reason + ": " + c.Message }

// fluxState is what the watch saw of one Kustomization or HelmRelease.
type fluxState struct {
	// notReady are the distinct Ready=False conditions seen, in order.
	notReady []condition
	// failures counts the times it entered Ready=False with a reason
	// other than a waiting one (as Observer counts them).
	failures int
	failing  bool
	// readyAt is when it was first seen Ready=True for its generation;
	// revision is the revision a Kustomization had applied then.
	readyAt  time.Time
	revision string
	last     string
}

// fluxWatch watches every Kustomization and HelmRelease of a cluster, in
// every namespace, from before any case is applied.
type fluxWatch struct {
	mu    sync.Mutex
	state map[string]*fluxState // by Kind/namespace/name
}

// helmWaitingReasons are, besides waitingReasons, the reasons with which
// helm-controller marks a HelmRelease waiting for its chart's source.
var helmWaitingReasons = []string{"SourceNotReady"}

func watchFlux(c *Cluster) *fluxWatch {
	w := &fluxWatch{state: map[string]*fluxState{}}
	c.WatchEach(&kustomizev1.KustomizationList{}, func(_ context.Context, obj client.Object) {
		k := obj.(*kustomizev1.Kustomization)
		w.record(ks(k.Namespace, k.Name), k.Generation, k.Status.ObservedGeneration, k.Status.Conditions, k.Status.LastAppliedRevision)
	})
	c.WatchEach(&helmv2.HelmReleaseList{}, func(_ context.Context, obj client.Object) {
		h := obj.(*helmv2.HelmRelease)
		w.record(hr(h.Namespace, h.Name), h.Generation, h.Status.ObservedGeneration, h.Status.Conditions, "")
	})
	return w
}

func (w *fluxWatch) record(key string, generation, observed int64, conds []metav1.Condition, revision string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.state[key]
	if st == nil {
		st = &fluxState{}
		w.state[key] = st
	}
	ready := apimeta.FindStatusCondition(conds, meta.ReadyCondition)
	if ready == nil {
		return
	}
	st.last = fmt.Sprintf("Ready=%s %s: %s", ready.Status, ready.Reason, ready.Message)
	switch ready.Status {
	case metav1.ConditionFalse:
		if !slices.ContainsFunc(st.notReady, func(c condition) bool { return c.Reason == ready.Reason && c.Message == ready.Message }) {
			st.notReady = append(st.notReady, condition{Reason: ready.Reason, Message: ready.Message, at: time.Now()})
		}
		if slices.Contains(waitingReasons, ready.Reason) || slices.Contains(helmWaitingReasons, ready.Reason) {
			st.failing = false
			return
		}
		if !st.failing {
			st.failures++
		}
		st.failing = true
	case metav1.ConditionTrue:
		st.failing = false
		if observed == generation && st.readyAt.IsZero() {
			st.readyAt, st.revision = time.Now(), revision
		}
	default:
		st.failing = false
	}
}

// releaseWhen returns a channel closed once cond holds (checked every
// 100ms, as waitFor does), or never if ctx ends first.
func (w *fluxWatch) releaseWhen(ctx context.Context, cond func() bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		close(ch)
	}()
	return ch
}

// get returns a copy of what was seen of key, or nil.
func (w *fluxWatch) get(key string) *fluxState {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.state[key]
	if st == nil {
		return nil
	}
	cp := *st
	cp.notReady = slices.Clone(st.notReady)
	return &cp
}

// requireData checks that the ConfigMap namespace/name holds value at key
// and returns that as a note.
func requireData(t *testing.T, r *ruleRun, namespace, name, key, value string) string {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, r.c.Client.Get(t.Context(), client.ObjectKey{Namespace: namespace, Name: name}, &cm))
	require.Equal(t, value, cm.Data[key], "ConfigMap/%s/%s %s", namespace, name, key)
	return fmt.Sprintf("ConfigMap/%s/%s %s=%q", namespace, name, key, value)
}

// checkHelmCRDsDeadlock proves the deadlock the helm-crds finding names:
// once the layer failed, neither its HelmRelease nor the chart's CRD is in
// the cluster, and a reconcile of the layer asked for now fails the same.
func checkHelmCRDsDeadlock(t *testing.T, r *ruleRun) string {
	t.Helper()
	ctx := t.Context()
	err := r.c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "widgets"}, &helmv2.HelmRelease{})
	require.True(t, apierrors.IsNotFound(err), "HelmRelease/flux-system/widgets: want NotFound, got %v", err)
	err = r.c.Client.Get(ctx, client.ObjectKey{Name: "widgets.example.fluxpack.dev"}, &apiextensionsv1.CustomResourceDefinition{})
	require.True(t, apierrors.IsNotFound(err), "CustomResourceDefinition/widgets.example.fluxpack.dev: want NotFound, got %v", err)
	k := requestReconcile(t, r, "widgets")
	ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
	require.NotNil(t, ready)
	require.Equal(t, metav1.ConditionFalse, ready.Status, "Kustomization/flux-system/widgets after a second reconcile: %s", ready.Message)
	require.Contains(t, ready.Message, `no matches for kind "Widget"`)
	return "no HelmRelease, no CRD; a second reconcile fails the same (deadlock)"
}

// requestReconcile asks kustomize-controller to reconcile the
// Kustomization flux-system/name now (as `flux reconcile ks` does) and
// waits until it has handled the request; it returns the Kustomization then.
func requestReconcile(t *testing.T, r *ruleRun, name string) *kustomizev1.Kustomization {
	t.Helper()
	token := time.Now().Format(time.RFC3339Nano)
	key := client.ObjectKey{Namespace: fluxNamespace, Name: name}
	var k kustomizev1.Kustomization
	require.NoError(t, r.c.Client.Get(t.Context(), key, &k))
	patch := client.MergeFrom(k.DeepCopy())
	if k.Annotations == nil {
		k.Annotations = map[string]string{}
	}
	k.Annotations[meta.ReconcileRequestAnnotation] = token
	require.NoError(t, r.c.Client.Patch(t.Context(), &k, patch))
	waitFor(t, r.c, "Kustomization/"+key.String()+" to handle the reconcile request", time.Minute, func(ctx context.Context) (bool, error) {
		if err := r.c.Client.Get(ctx, key, &k); err != nil {
			return false, err
		}
		ready := apimeta.FindStatusCondition(k.Status.Conditions, meta.ReadyCondition)
		return k.Status.LastHandledReconcileAt == token && ready != nil && ready.Status != metav1.ConditionUnknown, nil
	})
	return &k
}

// logLevels are the two versions of ConfigMap default/log-level in the
// dual-owner trees, by the layer applying it.
var logLevels = map[string]string{"logging": "info", "audit": "debug"}

// logLevel reads ConfigMap default/log-level: the layer that owns it (the
// kustomize.toolkit.fluxcd.io/name label of the last apply) and its level.
func logLevel(t *testing.T, r *ruleRun) (owner, level string, found bool) {
	t.Helper()
	var cm corev1.ConfigMap
	err := r.c.Client.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "log-level"}, &cm)
	if apierrors.IsNotFound(err) {
		return "", "", false
	}
	require.NoError(t, err)
	return cm.Labels["kustomize.toolkit.fluxcd.io/name"], cm.Data["level"], true
}

// checkDualOwnerNaive proves what the dual-owner finding claims, since two
// Kustomizations applying one object fail no reconcile: (1) the object is
// the version of whichever layer applied last, labelled as that layer's;
// (2) when the other layer reconciles, it takes the object over with its
// own version; (3) when that owner stops applying it (its Kustomization is
// deleted, prune: true), kustomize-controller deletes the object, though
// the first layer is Ready and still lists it in its inventory.
func checkDualOwnerNaive(t *testing.T, r *ruleRun) string {
	t.Helper()
	first, level, found := logLevel(t, r)
	require.True(t, found, "ConfigMap/default/log-level is not in the cluster")
	require.Contains(t, logLevels, first, "ConfigMap/default/log-level is owned by %q", first)
	require.Equal(t, logLevels[first], level, "ConfigMap/default/log-level is owned by %q but holds level %q", first, level)
	other := "audit"
	if first == "audit" {
		other = "logging"
	}

	k := requestReconcile(t, r, other)
	require.True(t, apimeta.IsStatusConditionTrue(k.Status.Conditions, meta.ReadyCondition), "Kustomization/flux-system/%s after a reconcile", other)
	owner, level, found := logLevel(t, r)
	require.True(t, found)
	require.Equal(t, other, owner, "after %q reconciled, ConfigMap/default/log-level is still owned by %q", other, owner)
	require.Equal(t, logLevels[other], level, "after %q reconciled, ConfigMap/default/log-level holds level %q", other, level)

	deleteKustomization(t, r, other)
	_, _, found = logLevel(t, r)
	require.False(t, found, "ConfigMap/default/log-level survived the deletion of its owner %q", other)
	var keep kustomizev1.Kustomization
	require.NoError(t, r.c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNamespace, Name: first}, &keep))
	require.True(t, apimeta.IsStatusConditionTrue(keep.Status.Conditions, meta.ReadyCondition), "Kustomization/flux-system/%s", first)
	require.NotNil(t, keep.Status.Inventory)
	require.True(t, slices.ContainsFunc(keep.Status.Inventory.Entries, func(e kustomizev1.ResourceRef) bool { return e.ID == "default_log-level__ConfigMap" }),
		"Kustomization/flux-system/%s no longer lists ConfigMap/default/log-level", first)
	return fmt.Sprintf("log-level owned by %q (level %s), taken over by %q (level %s) on its reconcile; deleting Kustomization %q pruned it while %q is Ready and still lists it",
		first, logLevels[first], other, logLevels[other], other, first)
}

// checkDualOwnerFixed is checkDualOwnerNaive on the fixed tree: the object
// is the logging layer's, stays so when audit reconciles, and survives the
// deletion of audit's Kustomization.
func checkDualOwnerFixed(t *testing.T, r *ruleRun) string {
	t.Helper()
	requestReconcile(t, r, "audit")
	owner, level, found := logLevel(t, r)
	require.True(t, found, "ConfigMap/default/log-level is not in the cluster")
	require.Equal(t, "logging", owner)
	require.Equal(t, "info", level)
	deleteKustomization(t, r, "audit")
	owner, level, found = logLevel(t, r)
	require.True(t, found, "ConfigMap/default/log-level was deleted with Kustomization audit")
	require.Equal(t, "logging", owner)
	require.Equal(t, "info", level)
	ok, _ := exists(t.Context(), r.c, "v1", "ConfigMap", "default", "audit-policy")
	require.False(t, ok, "ConfigMap/default/audit-policy survived the deletion of Kustomization audit (prune)")
	return `log-level stays logging's (level info) through audit's reconcile and its deletion`
}

// deleteKustomization deletes Kustomization flux-system/name, as `flux
// delete kustomization` does, and waits until kustomize-controller has
// finalised it (garbage-collected its objects, with prune: true).
func deleteKustomization(t *testing.T, r *ruleRun, name string) {
	t.Helper()
	var k kustomizev1.Kustomization
	require.NoError(t, r.c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNamespace, Name: name}, &k))
	require.NoError(t, r.c.Client.Delete(t.Context(), &k))
	waitFor(t, r.c, "Kustomization/flux-system/"+name+" to be deleted", time.Minute, func(ctx context.Context) (bool, error) {
		err := r.c.Client.Get(ctx, client.ObjectKeyFromObject(&k), &kustomizev1.Kustomization{})
		return apierrors.IsNotFound(err), err
	})
}

// checkCRDPrune deletes the gadget-crds layer, as a reorganisation of the
// repository does, and proves what its prune setting does to the custom
// resource another layer (gadgets) applied: with prune: true (the naive
// tree) kustomize-controller deletes the CRD, and the API server every
// Gadget with it, though gadgets is Ready and still lists its Gadget; with
// prune: false (fixed) the CRD and the Gadget stay.
func checkCRDPrune(t *testing.T, r *ruleRun, keeps bool) string {
	t.Helper()
	gadget := func(ctx context.Context) (bool, error) {
		return exists(ctx, r.c, "example.fluxpack.dev/v1", "Gadget", "default", "blue")
	}
	ok, err := gadget(t.Context())
	require.True(t, ok, "Gadget/default/blue is not in the cluster: %v", err)
	deleteKustomization(t, r, "gadget-crds")
	crd := client.ObjectKey{Name: "gadgets.example.fluxpack.dev"}
	if keeps {
		require.NoError(t, r.c.Client.Get(t.Context(), crd, &apiextensionsv1.CustomResourceDefinition{}), "the CRD after deleting its layer (prune: false)")
		ok, err := gadget(t.Context())
		require.True(t, ok, "Gadget/default/blue after deleting the CRDs' layer (prune: false): %v", err)
		return "deleting Kustomization gadget-crds (prune: false) kept the CRD and Gadget/default/blue"
	}
	waitFor(t, r.c, "Gadget/default/blue to be deleted with its CRD", time.Minute, func(ctx context.Context) (bool, error) {
		ok, err := gadget(ctx)
		if ok {
			return false, errors.New("Gadget/default/blue still exists")
		}
		return apierrors.IsNotFound(err) || apimeta.IsNoMatchError(err), err
	})
	var k kustomizev1.Kustomization
	require.NoError(t, r.c.Client.Get(t.Context(), client.ObjectKey{Namespace: fluxNamespace, Name: "gadgets"}, &k))
	require.True(t, apimeta.IsStatusConditionTrue(k.Status.Conditions, meta.ReadyCondition), "Kustomization/flux-system/gadgets")
	require.True(t, slices.ContainsFunc(k.Status.Inventory.Entries, func(e kustomizev1.ResourceRef) bool { return e.ID == "default_blue_example.fluxpack.dev_Gadget" }),
		"Kustomization/flux-system/gadgets no longer lists Gadget/default/blue: %v", k.Status.Inventory.Entries)
	return "deleting Kustomization gadget-crds (prune: true) deleted the CRD and Gadget/default/blue, which gadgets (Ready) still lists"
}
