package review_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/review"
)

// homeOps is a home-ops shaped repository: Kustomizations that apply one
// folder each with postBuild.substitute APP, HelmReleases of a chart from
// an HTTP Helm repository (not available offline) and of a chart in the
// repository (rendered).
var homeOps = map[string]string{
	"clusters/main/flux-system/gotk-sync.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 1m
  ref:
    branch: main
  url: https://git.example.com/home.git
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: flux-system
  namespace: flux-system
spec:
  interval: 10m
  path: ./clusters/main
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
`,
	"clusters/main/helm-repository.yaml": `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: bjw-s
  namespace: flux-system
spec:
  interval: 1h
  url: https://bjw-s-labs.github.io/helm-charts
`,
	"clusters/main/radarr.yaml":   appKs("radarr", "./apps/arr"),
	"clusters/main/sonarr.yaml":   appKs("sonarr", "./apps/arr"),
	"clusters/main/web.yaml":      appKs("web", "./apps/web"),
	"apps/arr/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - helmrelease.yaml\n",
	"apps/arr/helmrelease.yaml":   arrRelease("5.0.0", "1.2.0", "1.27"),
	"apps/web/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - helmrelease.yaml\n",
	"apps/web/helmrelease.yaml":   webRelease("2.0.0"),
	"charts/web/Chart.yaml":       "apiVersion: v2\nname: web\nversion: 1.0.0\n",
	"charts/web/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: web
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
`,
}

func appKs(app, path string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ` + app + `
  namespace: flux-system
spec:
  interval: 1h
  path: ` + path + `
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  targetNamespace: media
  postBuild:
    substitute:
      APP: ` + app + `
`
}

// arrRelease is an app-template HelmRelease named ${APP}, with its images
// spelled three ways in its values.
func arrRelease(appTag, exporterTag, nginxTag string) string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ${APP}
spec:
  interval: 1h
  chart:
    spec:
      chart: app-template
      version: 3.7.3
      sourceRef:
        kind: HelmRepository
        name: bjw-s
        namespace: flux-system
  values:
    controllers:
      main:
        containers:
          app:
            image:
              repository: ghcr.io/home-operations/${APP}
              tag: ` + appTag + `
          exporter:
            image: ghcr.io/onedr0p/exportarr:v` + exporterTag + `
    sidecar:
      image:
        registry: docker.io
        repository: library/nginx
        tag: "` + nginxTag + `"
`
}

// webRelease is a HelmRelease of a chart in the repository: its images
// are the rendered Deployment's.
func webRelease(tag string) string {
	return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: web
spec:
  interval: 1h
  chart:
    spec:
      chart: ./charts/web
      sourceRef:
        kind: GitRepository
        name: flux-system
        namespace: flux-system
  values:
    image:
      repository: ghcr.io/example/web
      tag: ` + tag + `
`
}

// compareTrees compares base with base and head's files written over it,
// at clusters/main.
func compareTrees(t *testing.T, base, head map[string]string, opts ...review.Option) *review.Report {
	t.Helper()
	dir := t.TempDir()
	b, h := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	testutil.WriteFiles(t, b, base)
	testutil.WriteFiles(t, h, base)
	testutil.WriteFiles(t, h, head)
	r, err := review.Compare(t.Context(), b, h, "clusters/main", append([]review.Option{review.WithNames("main", "change")}, opts...)...)
	require.NoError(t, err)
	return r
}

// formats prints r in every format a reviewer reads.
func formats(t *testing.T, r *review.Report) map[string]string {
	t.Helper()
	var text, md, gh, uni bytes.Buffer
	require.NoError(t, r.WriteText(&text, review.TextOptions{}))
	require.NoError(t, review.WriteMarkdown(&md, []*review.Report{r}, review.MarkdownOptions{}))
	require.NoError(t, r.WriteGitHub(&gh))
	require.NoError(t, r.WriteUnified(&uni))
	js, err := json.Marshal(r)
	require.NoError(t, err)
	return map[string]string{"text": text.String(), "markdown": md.String(), "github": gh.String(), "unified": uni.String(), "json": string(js)}
}

// A renovate-style change bumps image tags in HelmRelease values whose
// chart is not available offline: the images are counted from the
// values, and said to be; a rendered chart's images are its objects',
// not its values' as well.
func TestImagesFromValuesWhenTheChartIsNotRendered(t *testing.T) {
	for _, all := range []bool{false, true} {
		var opts []review.Option
		if all {
			opts = append(opts, review.WithAll())
		}
		r := compareTrees(t, homeOps, map[string]string{
			"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.3.0", "1.27"),
			"apps/web/helmrelease.yaml": webRelease("2.1.0"),
		}, opts...)
		var got []string
		for _, im := range r.Images {
			got = append(got, im.Op+" "+strings.Join(im.Before, ",")+" -> "+strings.Join(im.After, ",")+" "+strings.Join(im.Objects, ",")+map[bool]string{true: " (values)"}[im.FromValues])
		}
		want := []string{
			"retagged ghcr.io/example/web:2.0.0 -> ghcr.io/example/web:2.1.0 Deployment.apps/media/web",
			"retagged ghcr.io/home-operations/radarr:5.0.0 -> ghcr.io/home-operations/radarr:5.1.0 HelmRelease.helm.toolkit.fluxcd.io/media/radarr (values)",
			"retagged ghcr.io/home-operations/sonarr:5.0.0 -> ghcr.io/home-operations/sonarr:5.1.0 HelmRelease.helm.toolkit.fluxcd.io/media/sonarr (values)",
			"retagged ghcr.io/onedr0p/exportarr:v1.2.0 -> ghcr.io/onedr0p/exportarr:v1.3.0 HelmRelease.helm.toolkit.fluxcd.io/media/radarr,HelmRelease.helm.toolkit.fluxcd.io/media/sonarr (values)",
		}
		assert.Equal(t, want, got, "images (all %v)", all)
		out := formats(t, r)
		assert.Contains(t, out["text"], "images: 4 changed (3 from values, chart not rendered)\n")
		assert.Contains(t, out["text"], "  ~ ghcr.io/home-operations/radarr:5.0.0 -> ghcr.io/home-operations/radarr:5.1.0 (HelmRelease.helm.toolkit.fluxcd.io/media/radarr; from values, chart not rendered)\n")
		assert.Contains(t, out["markdown"], "| 4 changed (3 from values, chart not rendered) |")
	}
}

func TestValuesImageShapes(t *testing.T) {
	// The sidecar's image moves to another key: the same image, no change.
	r := compareTrees(t, homeOps, map[string]string{
		"apps/arr/helmrelease.yaml": strings.Replace(arrRelease("5.0.0", "1.2.0", "1.27"), "    sidecar:\n", "    sidecar:\n      enabled: false\n    other:\n", 1),
	})
	require.Empty(t, r.Images, "renaming the key that holds an image changes no image")
	r = compareTrees(t, homeOps, map[string]string{
		"apps/arr/helmrelease.yaml": arrRelease("5.0.0", "1.2.0", "1.28"),
	})
	// registry, repository and tag make one reference.
	require.Len(t, r.Images, 1)
	assert.Equal(t, review.ImageChange{Image: "docker.io/library/nginx", Op: "retagged", Before: []string{"docker.io/library/nginx:1.27"}, After: []string{"docker.io/library/nginx:1.28"},
		Objects: []string{"HelmRelease.helm.toolkit.fluxcd.io/media/radarr", "HelmRelease.helm.toolkit.fluxcd.io/media/sonarr"}, FromValues: true}, r.Images[0])
}

// An image is a change of the objects whose use of it changes: the arr
// releases taking up the image web's Deployment already runs is that image
// added to them, the same whether web's layer, which the change leaves
// alone, is rendered (--all) or not (changed-only). Found on a public
// home-ops repository, where changed-only said "+ alpine" of a release
// and --all said nothing, another release running it already.
func TestImagesAreTheObjectsUseOfThem(t *testing.T) {
	arr := func(webTag string) string {
		return arrRelease("5.0.0", "1.2.0", "1.27") + "    extra:\n      image: ghcr.io/example/web:" + webTag + "\n"
	}
	users := []string{"HelmRelease.helm.toolkit.fluxcd.io/media/radarr", "HelmRelease.helm.toolkit.fluxcd.io/media/sonarr"}
	withArr := maps.Clone(homeOps)
	withArr["apps/arr/helmrelease.yaml"] = arr("2.0.0")
	for _, all := range []bool{false, true} {
		var opts []review.Option
		if all {
			opts = append(opts, review.WithAll())
		}
		r := compareTrees(t, homeOps, map[string]string{"apps/arr/helmrelease.yaml": arr("2.0.0")}, opts...)
		require.Len(t, r.Images, 1, "all %v: %+v", all, r.Images)
		assert.Equal(t, review.ImageChange{Image: "ghcr.io/example/web", Op: "added", After: []string{"ghcr.io/example/web:2.0.0"},
			Objects: users, FromValues: true}, r.Images[0], "all %v", all)
		// The arr releases move to another tag: web's use is no change.
		r = compareTrees(t, withArr, map[string]string{"apps/arr/helmrelease.yaml": arr("2.1.0")}, opts...)
		require.Len(t, r.Images, 1, "all %v: %+v", all, r.Images)
		assert.Equal(t, review.ImageChange{Image: "ghcr.io/example/web", Op: "retagged", Before: []string{"ghcr.io/example/web:2.0.0"}, After: []string{"ghcr.io/example/web:2.1.0"},
			Objects: users, FromValues: true}, r.Images[0], "all %v", all)
	}
}

// A layer that does not build on the base (a kustomization naming a file
// the change then adds) is left out on both sides: the images its
// HelmReleases' values name are not images added. Found on a public
// repository, where such a layer's release images were listed as added.
func TestImagesOfALayerLeftOut(t *testing.T) {
	base := maps.Clone(homeOps)
	base["apps/arr/kustomization.yaml"] = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - helmrelease.yaml\n  - config.yaml\n"
	for _, all := range []bool{false, true} {
		var opts []review.Option
		if all {
			opts = append(opts, review.WithAll())
		}
		r := compareTrees(t, base, map[string]string{
			"apps/arr/config.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${APP}\n",
			"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27"),
		}, opts...)
		var left []string
		for _, n := range r.NotRendered {
			left = append(left, n.Producer+" ("+n.Side+")")
		}
		assert.Contains(t, left, "Kustomization/flux-system/radarr (base)", "all %v", all)
		assert.Empty(t, r.Images, "all %v", all)
		assert.Empty(t, r.Objects, "all %v", all)
	}
}

// One HelmRelease named ${APP} in a folder two Kustomizations apply is two
// releases: each is named as its Kustomization substitutes it, and when
// the variable comes from no source in the tree, each is still listed on
// its own, with its layer.
func TestReleasesNamedAsSubstituted(t *testing.T) {
	r := compareTrees(t, homeOps, map[string]string{"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27")})
	var producers []string
	for _, n := range r.NotRendered {
		producers = append(producers, n.Producer)
	}
	assert.Equal(t, []string{"HelmRelease/media/radarr", "HelmRelease/media/sonarr"}, producers)

	// APP now comes from a ConfigMap Terraform makes: the names stay as
	// written, and the two releases are two producers.
	unresolved := maps.Clone(homeOps)
	for _, app := range []string{"radarr", "sonarr"} {
		unresolved["clusters/main/"+app+".yaml"] = strings.Replace(appKs(app, "./apps/arr"), "    substitute:\n      APP: "+app+"\n",
			"    substituteFrom:\n      - kind: ConfigMap\n        name: "+app+"-vars\n", 1)
	}
	r = compareTrees(t, unresolved, map[string]string{"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27")})
	producers = nil
	for _, n := range r.NotRendered {
		producers = append(producers, n.Producer)
	}
	assert.Equal(t, []string{"HelmRelease/media/${APP} (layer radarr)", "HelmRelease/media/${APP} (layer sonarr)"}, producers)
}

// The producers a report counts add up: rendered, not rendered (each with
// why) and skipped, none counted twice.
func TestProducerCountsAddUp(t *testing.T) {
	r := compareTrees(t, homeOps, map[string]string{"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27")})
	assert.Equal(t, []string{"Kustomization/flux-system/radarr", "Kustomization/flux-system/sonarr"}, r.Rendered)
	require.Len(t, r.NotRendered, 2)
	for _, n := range r.NotRendered {
		assert.NotContains(t, r.Rendered, n.Producer)
		assert.NotEmpty(t, n.Reason)
	}
	// flux-system, web and web's HelmRelease.
	assert.Equal(t, 3, r.Skipped)
	out := formats(t, r)
	assert.Contains(t, out["text"], "1 file changed; 2 producers rendered, 2 not rendered (listed below), 3 skipped (no changed file feeds them; --all renders every one)\n")

	all := compareTrees(t, homeOps, map[string]string{"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27")}, review.WithAll())
	assert.Equal(t, 0, all.Skipped)
	// The three flux-system, radarr, sonarr, web Kustomizations and web's
	// release rendered; radarr's and sonarr's releases not.
	assert.Len(t, all.Rendered, 5)
	assert.Len(t, all.NotRendered, 2)
	assert.Equal(t, len(r.Rendered)+len(r.NotRendered)+r.Skipped, len(all.Rendered)+len(all.NotRendered))
}

// "0 races introduced" says in how many layers races were checked, and
// why not in the others, in every format.
func TestRaceCoverageInEveryFormat(t *testing.T) {
	r := compareTrees(t, homeOps, map[string]string{"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.2.0", "1.27")})
	require.Equal(t, 4, r.Findings.Layers)
	require.Equal(t, 2, r.Findings.Checked, "radarr's and sonarr's charts are not available: those layers are not checked")
	out := formats(t, r)
	for _, f := range []string{"text", "github"} {
		assert.Contains(t, out[f], "races checked in 2 of 4 layers; 2 not checked (a race there is not reported)\n  2 layers with or after a chart not rendered (", f)
	}
	assert.Contains(t, out["markdown"], "| 0 introduced, 0 fixed (2 of 4 layers not checked) |")
	assert.Contains(t, out["markdown"], "Races checked in 2 of 4 layers; 2 not checked (a race there is not reported).\n\n- 2 layers with or after a chart not rendered (")
	assert.Contains(t, out["json"], `"layers":4,"checked":2`)
}

// A Secret SOPS encrypts feeds postBuild.substituteFrom, and a ConfigMap
// file is SOPS-encrypted itself: the ciphertext, which changes with every
// edit, reaches no report; a placeholder says where it changed.
func TestSopsCiphertextNeverShown(t *testing.T) {
	secret := func(ct string) string {
		return `apiVersion: v1
kind: Secret
metadata:
  name: cluster-secrets
  namespace: flux-system
stringData:
  SECRET_DOMAIN: ENC[AES256_GCM,data:` + ct + `,iv:aXY=,tag:dGFn,type:str]
sops:
  age:
    - recipient: age1example
  lastmodified: "2025-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:bWFj` + ct + `,iv:aXY=,tag:dGFn,type:str]
  version: 3.9.0
`
	}
	config := func(ct string) string {
		return `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  token: ENC[AES256_GCM,data:` + ct + `,iv:aXY=,tag:dGFn,type:str]
  plain: same
sops:
  lastmodified: "2025-01-01T00:00:00Z"
  mac: ENC[AES256_GCM,data:bWFj` + ct + `,iv:aXY=,tag:dGFn,type:str]
`
	}
	base := map[string]string{
		"clusters/main/flux-system/gotk-sync.yaml": homeOps["clusters/main/flux-system/gotk-sync.yaml"],
		"clusters/main/cluster-secrets.sops.yaml":  secret("b2xkZG9tYWlu"),
		"clusters/main/app.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: flux-system
spec:
  interval: 1h
  path: ./apps/app
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
  targetNamespace: apps
  decryption:
    provider: sops
  postBuild:
    substituteFrom:
      - kind: Secret
        name: cluster-secrets
`,
		"apps/app/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ingress.yaml\n  - config.sops.yaml\n",
		"apps/app/ingress.yaml": `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: app
spec:
  rules:
    - host: app.${SECRET_DOMAIN}
`,
		"apps/app/config.sops.yaml": config("b2xkdG9rZW4="),
	}
	r := compareTrees(t, base, map[string]string{
		"clusters/main/cluster-secrets.sops.yaml": secret("bmV3ZG9tYWlu"),
		"apps/app/config.sops.yaml":               config("bmV3dG9rZW4="),
	}, review.WithAll())
	var fields []string
	for _, c := range r.Objects {
		for _, f := range c.Fields {
			fields = append(fields, c.ID.String()+" "+f.Path+": "+fmt.Sprint(f.Before)+" -> "+fmt.Sprint(f.After))
		}
	}
	assert.Equal(t, []string{
		"ConfigMap/apps/app-config data.token: (sops-encrypted) -> (sops-encrypted, changed)",
		"Ingress.networking.k8s.io/apps/app spec.rules[0].host: app.(sops-encrypted) -> app.(sops-encrypted, changed)",
		"Secret/flux-system/cluster-secrets stringData.SECRET_DOMAIN: <nil> -> <nil>",
	}, fields, "the sops metadata is no field; the Secret's value is hidden as any Secret's")
	for name, s := range formats(t, r) {
		for _, ct := range []string{"ENC[", "b2xk", "bmV3"} {
			assert.NotContains(t, s, ct, "%s shows ciphertext", name)
		}
	}
	assert.Contains(t, formats(t, r)["unified"], "+  - host: app.(sops-encrypted, changed)\n")
}

// TestChangedOnlyMissesNothingOnHomeOps: changed-only reports what --all
// reports on the home-ops repository, images from values included.
func TestChangedOnlyMissesNothingOnHomeOps(t *testing.T) {
	change := map[string]string{
		"apps/arr/helmrelease.yaml": arrRelease("5.1.0", "1.3.0", "1.28"),
		"apps/web/helmrelease.yaml": webRelease("2.1.0"),
	}
	some, all := compareTrees(t, homeOps, change), compareTrees(t, homeOps, change, review.WithAll())
	assert.Equal(t, all.Objects, some.Objects)
	assert.Equal(t, all.Images, some.Images)
	assert.Equal(t, all.Findings, some.Findings)
	assert.Equal(t, all.NotRendered, some.NotRendered)
	for _, p := range some.Rendered {
		assert.True(t, slices.Contains(all.Rendered, p), "changed-only rendered %s, which --all did not", p)
	}
}

// A Kustomization that renders on the base and not on the head (a
// variable name Flux refuses) still names its HelmRelease as the base does: the
// release is one producer on both sides, not one removed and one added.
func TestReleaseNamedAsTheOtherSideWhenItsLayerDoesNotRender(t *testing.T) {
	r := compareTrees(t, homeOps, map[string]string{
		"clusters/main/radarr.yaml": appKs("radarr", "./apps/arr") + "      bad-name: x\n",
	})
	var got []string
	for _, n := range r.NotRendered {
		got = append(got, n.Producer+" ("+n.Side+")")
	}
	assert.Equal(t, []string{"HelmRelease/media/radarr (both)", "Kustomization/flux-system/radarr (head)"}, got)
	require.Len(t, r.Objects, 1)
	assert.Equal(t, "Kustomization.kustomize.toolkit.fluxcd.io/flux-system/radarr", r.Objects[0].ID.String())
}
