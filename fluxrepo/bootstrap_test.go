package fluxrepo_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// A bootstrap step that applies a folder with kustomize before Flux (the
// Secret a layer substitutes from, a namespace), as home-lab repositories
// do from a justfile: found in the scripts, its objects count as there
// before Flux; without it, the layer's substituteFrom is a finding.
func TestBootstrapKustomization(t *testing.T) {
	files := map[string]string{
		"kubernetes/clusters/c/apps.yaml":                ks("tunnel", "./apps/tunnel", "  targetNamespace: network\n  postBuild:\n    substituteFrom:\n      - kind: Secret\n        name: tunnel-id\n"),
		"apps/tunnel/cm.yaml":                            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tunnel}\ndata: {id: \"${TUNNEL_ID}\"}\n",
		"bootstrap/kustomize/cluster/kustomization.yaml": "resources: [ns.yaml, secret.yaml]\n",
		"bootstrap/kustomize/cluster/ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata: {name: network}\n",
		"bootstrap/kustomize/cluster/secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: tunnel-id, namespace: flux-system}\nstringData: {TUNNEL_ID: op://vault/tunnel/id}\n",
	}
	lintWith := func(t *testing.T, files map[string]string) *lint.Report {
		t.Helper()
		root := write(t, files)
		entry := filepath.Join(root, "kubernetes/clusters/c")
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root)})
		require.NoError(t, err)
		return rep
	}
	rep := lintWith(t, files)
	require.Len(t, rep.Findings, 2, "without a bootstrap step: %v", rep.Findings)
	assert.Equal(t, []lint.Rule{lint.RuleNamespaceOrder, lint.RuleSubstituteFrom}, []lint.Rule{rep.Findings[0].Rule, rep.Findings[1].Rule})

	for name, script := range map[string]string{
		"bootstrap/mod.just":   "apply:\n    kustomize build {{ source_directory() }}/kustomize/cluster | just template - | kubectl apply --server-side -f -\n",
		".justfile":            "bootstrap:\n    kustomize build bootstrap/kustomize/cluster | kubectl apply -f -\n",
		"scripts/bootstrap.sh": "#!/bin/sh\nkubectl apply --server-side -k \"$(dirname \"$0\")/../bootstrap/kustomize/cluster\"\n",
		"Taskfile.yaml":        "tasks:\n  bootstrap:\n    cmds:\n      - kubectl apply -k ./bootstrap/kustomize/cluster\n",
		// The bootstrap folder on the way from the entry point up
		// (kubernetes/bootstrap/), and go-task's included Taskfiles.
		"kubernetes/bootstrap/mod.just":      "base:\n    kustomize build {{ justfile_directory() }}/bootstrap/kustomize/cluster | kubectl apply -f -\n",
		".taskfiles/bootstrap/Taskfile.yaml": "tasks:\n  base:\n    cmds:\n      - kubectl apply -k bootstrap/kustomize/cluster\n",
		// kubectl's other spellings of -k, and its own kustomize.
		"scripts/long.sh":       "kubectl --context home apply --server-side --kustomize bootstrap/kustomize/cluster\n",
		"scripts/equals.sh":     "kubectl apply -k=bootstrap/kustomize/cluster --force-conflicts\n",
		"scripts/kubectl-kz.sh": "kubectl kustomize bootstrap/kustomize/cluster | kubectl apply --server-side -f -\n",
		"Makefile":              "bootstrap:\n\t@kubectl apply \\\n\t\t--kustomize=./bootstrap/kustomize/cluster\n",
	} {
		t.Run(name, func(t *testing.T) {
			with := map[string]string{name: script}
			for k, v := range files {
				with[k] = v
			}
			rep := lintWith(t, with)
			assert.Empty(t, rep.Findings)
			require.Len(t, rep.Bootstrap, 1)
			assert.Contains(t, rep.Bootstrap[0], "bootstrap/kustomize/cluster: a bootstrap kustomization: 2 objects exist before Flux (Namespace/network, Secret/flux-system/tunnel-id)")
			assert.Contains(t, rep.Summary(), "read 1 entry of the bootstrap step")
		})
	}

	t.Run("another cluster's bootstrap folder is not this one's", func(t *testing.T) {
		with := map[string]string{"kubernetes/staging/bootstrap/mod.just": "base:\n    kustomize build {{ justfile_directory() }}/bootstrap/kustomize/cluster | kubectl apply -f -\n"}
		for k, v := range files {
			with[k] = v
		}
		assert.Len(t, lintWith(t, with).Findings, 2)
	})

	t.Run("a script's folder behind a variable is not guessed", func(t *testing.T) {
		with := map[string]string{"bootstrap/run.sh": "kustomize build \"$DIR\" | kubectl apply -f -\n"}
		for k, v := range files {
			with[k] = v
		}
		assert.Len(t, lintWith(t, with).Findings, 2)
	})
}

// A bootstrap script that creates a namespace with kubectl before Flux
// (for the Secrets the first Kustomization applies into it), here in the
// cluster's own bootstrap folder as multi-cluster repositories keep it,
// makes it exist first; one named by a variable is not guessed.
func TestBootstrapNamespaces(t *testing.T) {
	files := map[string]string{
		"kubernetes/main/cluster/secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: token, namespace: external-secrets}\nstringData: {token: x}\n",
	}
	lintWith := func(t *testing.T, script string) *lint.Report {
		t.Helper()
		with := map[string]string{"kubernetes/main/bootstrap/mod.just": script}
		for k, v := range files {
			with[k] = v
		}
		root := write(t, with)
		entry := filepath.Join(root, "kubernetes/main/cluster")
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root)})
		require.NoError(t, err)
		return rep
	}
	rep := lintWith(t, "secrets:\n    kubectl create namespace external-secrets --dry-run=client -oyaml | kubectl apply -f -\n")
	assert.Empty(t, rep.Findings)
	assert.Equal(t, []string{"namespace external-secrets: a bootstrap script creates it before Flux"}, rep.Bootstrap)

	rep = lintWith(t, "secrets:\n    kubectl create ns {{ ns }}\n    kubectl create namespace \"$NS\"\n")
	require.Len(t, rep.Findings, 1, "%v", rep.Findings)
	assert.Equal(t, lint.RuleNamespaceOrder, rep.Findings[0].Rule)
}

// A ${var} in the patches of a Kustomization that has postBuild lands in
// the objects it builds, which its own postBuild substitutes: the layer
// applying that Kustomization needs no postBuild for it (home-lab roots
// patch every child with postBuild.substitute: {CLUSTER: ${CLUSTER}}). One
// in the Kustomization's own spec (its path) is applied as written.
func TestNoPostBuildDeferredToPatches(t *testing.T) {
	patched := ks("apps", "./apps", `  postBuild:
    substituteFrom:
      - kind: ConfigMap
        name: cluster-vars
  patches:
    - patch: |-
        apiVersion: kustomize.toolkit.fluxcd.io/v1
        kind: Kustomization
        metadata:
          name: not-used
        spec:
          postBuild:
            substitute:
              CLUSTER: ${CLUSTER}
      target:
        kind: Kustomization
`)
	files := map[string]string{
		"clusters/c/vars.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-vars, namespace: flux-system}\ndata: {CLUSTER: main}\n",
		"clusters/c/apps.yaml": patched,
		"apps/web.yaml":        ks("web", "./web", "  postBuild:\n    substitute: {APP: web}\n"),
		"web/cm.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {cluster: \"${CLUSTER}\"}\n",
	}
	assert.Empty(t, lintRepo(t, write(t, files)))

	files["clusters/c/apps.yaml"] = strings.Replace(patched, "path: ./apps", "path: ./apps/${CLUSTER}", 1)
	fs := lintRepo(t, write(t, files))
	require.Len(t, fs, 1, "%v", fs)
	assert.Equal(t, lint.RuleNoPostBuild, fs[0].Rule)
	assert.Equal(t, "Kustomization/flux-system/apps", fs[0].Object)
}

// A bootstrap step that applies files with kubectl before Flux (`kubectl
// apply --filename FILE`, a folder, or a Secret decrypted by `sops
// --decrypt FILE | kubectl apply -f -`): found in the scripts, their
// objects count as there before Flux; without them, the layer's
// substituteFrom and namespace are findings. An object whose identity SOPS
// encrypts counts for nothing, and lint says so.
func TestBootstrapManifests(t *testing.T) {
	const sopsMeta = "sops:\n  age:\n    - recipient: age1example\n      enc: |\n        -----BEGIN AGE ENCRYPTED FILE-----\n        -----END AGE ENCRYPTED FILE-----\n  encrypted_regex: ^(data|stringData)$\n  version: 3.9.0\n"
	files := map[string]string{
		"kubernetes/clusters/c/apps.yaml": ks("tunnel", "./apps/tunnel", "  targetNamespace: network\n  postBuild:\n    substituteFrom:\n      - kind: Secret\n        name: tunnel-id\n"),
		"apps/tunnel/cm.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tunnel}\ndata: {id: \"${TUNNEL_ID}\"}\n",
		"bootstrap/ns.yaml":               "apiVersion: v1\nkind: Namespace\nmetadata: {name: network}\n",
		"bootstrap/secret.sops.yaml":      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: tunnel-id\n  namespace: flux-system\nstringData:\n  TUNNEL_ID: ENC[AES256_GCM,data:abc=,iv:x=,tag:y=,type:str]\n" + sopsMeta,
		"bootstrap/plain/ns.yaml":         "apiVersion: v1\nkind: Namespace\nmetadata: {name: network}\n",
		"bootstrap/plain/secret.json":     `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tunnel-id", "namespace": "flux-system"}, "stringData": {"TUNNEL_ID": "x"}}`,
	}
	lintWith := func(t *testing.T, files map[string]string) *lint.Report {
		t.Helper()
		root := write(t, files)
		entry := filepath.Join(root, "kubernetes/clusters/c")
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root)})
		require.NoError(t, err)
		return rep
	}
	rep := lintWith(t, files)
	require.Len(t, rep.Findings, 2, "without a bootstrap step: %v", rep.Findings)
	assert.Equal(t, []lint.Rule{lint.RuleNamespaceOrder, lint.RuleSubstituteFrom}, []lint.Rule{rep.Findings[0].Rule, rep.Findings[1].Rule})

	for name, script := range map[string]string{
		"scripts/bootstrap.sh": "#!/bin/sh\nset -eu\nkubectl apply --filename bootstrap/ns.yaml\nsops --decrypt bootstrap/secret.sops.yaml | kubectl apply --server-side -f -\n",
		"Taskfile.yaml":        "tasks:\n  bootstrap:\n    cmds:\n      - kubectl apply -f=bootstrap/ns.yaml\n      - sops -d --input-type yaml ./bootstrap/secret.sops.yaml | kubectl apply -f -\n",
		".justfile":            "bootstrap:\n    kubectl create -f {{ justfile_directory() }}/bootstrap/ns.yaml\n    sops decrypt \"bootstrap/secret.sops.yaml\" | kubectl --namespace flux-system apply --filename=-\n",
		"bootstrap/mod.just":   "apply:\n    kubectl apply -f {{ source_directory() }}/plain --server-side\n",
	} {
		t.Run(name, func(t *testing.T) {
			with := map[string]string{name: script}
			for k, v := range files {
				with[k] = v
			}
			rep := lintWith(t, with)
			assert.Empty(t, rep.Findings)
			assert.Len(t, rep.Bootstrap, 2, "%v", rep.Bootstrap)
			assert.Contains(t, strings.Join(rep.Bootstrap, "\n"), "Secret/flux-system/tunnel-id")
			assert.Contains(t, strings.Join(rep.Bootstrap, "\n"), "a file a bootstrap script applies with kubectl: 1 object exists before Flux (Namespace/network)")
		})
	}

	t.Run("SOPS encrypts the identity", func(t *testing.T) {
		with := map[string]string{"scripts/bootstrap.sh": "kubectl apply -f bootstrap/ns.yaml\nsops -d bootstrap/secret.sops.yaml | kubectl apply -f -\n"}
		for k, v := range files {
			with[k] = v
		}
		with["bootstrap/secret.sops.yaml"] = "apiVersion: ENC[AES256_GCM,data:dg==,type:str]\nkind: ENC[AES256_GCM,data:U2VjcmV0,type:str]\nmetadata:\n  name: ENC[AES256_GCM,data:dHVubmVs,type:str]\n" + strings.Replace(sopsMeta, "  encrypted_regex: ^(data|stringData)$\n", "", 1)
		rep := lintWith(t, with)
		require.Len(t, rep.Findings, 1, "%v", rep.Findings)
		assert.Equal(t, lint.RuleSubstituteFrom, rep.Findings[0].Rule)
		assert.Contains(t, strings.Join(rep.Bootstrap, "\n"), "1 more, whose kind or name SOPS encrypts, counts for nothing")
	})

	t.Run("a template of resources", func(t *testing.T) {
		// minijinja-cli renders it, op inject fills in op:// references:
		// its loop over namespaces written out makes the namespace, and an
		// object named by an expression counts for nothing.
		with := map[string]string{
			"scripts/bootstrap.sh": "minijinja-cli bootstrap/resources.yaml.j2 | op inject | kubectl apply --server-side --filename -\n",
			"bootstrap/resources.yaml.j2": "{% for namespace in [\"network\", \"tools\"] %}\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {{ namespace }}\n{% endfor %}\n" +
				"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tunnel-id\n  namespace: flux-system\nstringData:\n  TUNNEL_ID: op://vault/tunnel/id\n" +
				"---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: {{ ENV.NAME }}\n  namespace: flux-system\n",
		}
		for k, v := range files {
			with[k] = v
		}
		rep := lintWith(t, with)
		assert.Empty(t, rep.Findings)
		assert.Contains(t, strings.Join(rep.Bootstrap, "\n"), "bootstrap/resources.yaml.j2: a file a bootstrap script applies with kubectl: 3 objects exist before Flux (Namespace/network, Namespace/tools, Secret/flux-system/tunnel-id); 1 more, whose kind or name a template expression makes, counts for nothing")
	})

	t.Run("stdin from another command, a URL, a variable", func(t *testing.T) {
		with := map[string]string{"scripts/bootstrap.sh": "./render.sh bootstrap/ns.yaml | kubectl apply -f -\nsops -d bootstrap/ns.yaml | yq 'select(.kind == \"Namespace\")' | kubectl apply -f -\nkubectl apply -f https://example.com/bootstrap/ns.yaml\nkubectl apply -f \"$DIR/ns.yaml\"\n"}
		for k, v := range files {
			with[k] = v
		}
		assert.Len(t, lintWith(t, with).Findings, 2)
	})
}

// A health check on an object no layer lint read applies, while a layer
// of a source lint could not read is in the tree (not applied before it,
// so made there it would race), is no claim that nothing creates it:
// Coverage names the layer as not checked, with how to check it. With the
// source given (--source), lint decides.
func TestHealthCheckUndecidedWhereASourceMayMakeIt(t *testing.T) {
	files := map[string]string{
		"clusters/c/apps.yaml": ks("apps", "./apps", "  healthChecks:\n    - apiVersion: apps/v1\n      kind: Deployment\n      name: shop\n      namespace: apps\n"),
		"apps/ns.yaml":         "apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n",
		"clusters/c/shop.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: shop, namespace: flux-system}\nspec:\n  interval: 1h\n  url: https://example.com/shop.git\n  ref: {branch: main}\n---\n" +
			strings.Replace(ks("shop", "./deploy", ""), "    name: flux-system\n", "    name: shop\n", 1),
	}
	root := write(t, files)
	rep, err := lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), []fluxrepo.Option{fluxrepo.WithRoot(root)})
	require.NoError(t, err)
	assert.Empty(t, rep.Findings, "the shop repository may make it")
	var source *lint.Coverage
	for i := range rep.Coverage {
		if rep.Coverage[i].Cause == lint.CoverageSource {
			source = &rep.Coverage[i]
		}
	}
	require.NotNil(t, source, "%+v", rep.Coverage)
	assert.Contains(t, source.Layers, "apps")
	assert.Contains(t, source.Advice, "--source")

	shop := write(t, map[string]string{"deploy/web.yaml": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web}]}}}\n"})
	ref, err := fluxrepo.ParseSourceRef("GitRepository/flux-system/shop")
	require.NoError(t, err)
	rep, err = lint.Tree(t.Context(), filepath.Join(root, "clusters/c"), []fluxrepo.Option{fluxrepo.WithRoot(root), fluxrepo.WithSource(ref, shop)})
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1, "%v", rep.Findings)
	assert.Contains(t, rep.Findings[0].Message, "health check Deployment/apps/shop: no layer creates this object")
}

// A home-ops Taskfile names its bootstrap files with go-task variables,
// defined in the root Taskfile (from ROOT_DIR) and in the included one
// that applies them, a SOPS Secret through sops --decrypt and a ConfigMap
// with kubectl: both exist before Flux, so the layer that substitutes
// from them has no finding. Without the bootstrap step, it has two.
func TestBootstrapTaskfileVars(t *testing.T) {
	const sopsMeta = "sops:\n  age:\n    - recipient: age1example\n      enc: |\n        -----BEGIN AGE ENCRYPTED FILE-----\n        -----END AGE ENCRYPTED FILE-----\n  encrypted_regex: ^(data|stringData)$\n  version: 3.9.0\n"
	files := map[string]string{
		"k8s/clusters/c/apps.yaml":       ks("apps", "./k8s/apps", "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        name: platform-vars\n      - kind: Secret\n        name: platform-secret-vars\n"),
		"k8s/apps/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata: {host: \"${DOMAIN}\", token: \"${TOKEN}\"}\n",
		"k8s/seed/vars.yaml":             "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: platform-vars, namespace: flux-system}\ndata: {DOMAIN: example.org}\n",
		"k8s/seed/secret-vars.sops.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: platform-secret-vars\n  namespace: flux-system\nstringData:\n  TOKEN: ENC[AES256_GCM,data:abc=,iv:x=,tag:y=,type:str]\n" + sopsMeta,
	}
	lintWith := func(t *testing.T, files map[string]string) []lint.Finding {
		t.Helper()
		root := write(t, files)
		entry := filepath.Join(root, "k8s/clusters/c")
		rep, err := lint.Tree(t.Context(), entry, []fluxrepo.Option{fluxrepo.WithRoot(root)})
		require.NoError(t, err)
		return rep.Findings
	}
	without := lintWith(t, files)
	require.Len(t, without, 2, "without a bootstrap step: %v", without)
	assert.Equal(t, []lint.Rule{lint.RuleSubstituteFrom, lint.RuleSubstituteFrom}, []lint.Rule{without[0].Rule, without[1].Rule})

	files["Taskfile.yaml"] = "version: \"3\"\nvars:\n  K8S: \"{{.ROOT_DIR}}/k8s\"\nincludes:\n  seed: .taskfiles/Seed\n"
	files[".taskfiles/Seed/Taskfile.yaml"] = "version: \"3\"\nvars:\n  VARS_FILE: \"{{.K8S}}/seed/vars.yaml\"\n  SECRET_VARS_FILE: \"{{.K8S}}/seed/secret-vars.sops.yaml\"\n" +
		"tasks:\n  install:\n    cmds:\n      - sops --decrypt {{.SECRET_VARS_FILE}} | kubectl apply --server-side --filename -\n      - kubectl apply --server-side --filename {{.VARS_FILE}}\n"
	assert.Empty(t, lintWith(t, files))
}
