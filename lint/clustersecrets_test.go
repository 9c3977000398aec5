package lint_test

import (
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/stretchr/testify/assert"

	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
)

// A ClusterExternalSecret makes its ExternalSecret, and so its Secret, in
// every namespace it selects (spec.namespaces, spec.namespaceSelector,
// spec.namespaceSelectors; every namespace carries the label
// kubernetes.io/metadata.name), named spec.externalSecretSpec.target.name,
// else spec.externalSecretName, else its own name. A layer reading that
// Secret with substituteFrom after the layer applying the
// ClusterExternalSecret is no finding; one in a namespace it does not
// select is, as is one read by a layer that does not wait for it. Where the
// selector reads labels of a namespace lint does not know, it is assumed
// to select it, and a finding says so.
func TestLintClusterExternalSecretMakesSecrets(t *testing.T) {
	ces := func(spec string) string {
		return "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: cluster-secrets\nspec:\n" + spec +
			"  externalSecretSpec:\n    secretStoreRef: {kind: ClusterSecretStore, name: vault}\n    data:\n      - secretKey: DB_PASSWORD\n        remoteRef: {key: db, property: password}\n"
	}
	const labelled = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n  labels:\n    secrets.example.com/cluster: \"true\"\n"
	byLabel := "  namespaceSelectors:\n    - matchLabels:\n        secrets.example.com/cluster: \"true\"\n"
	ordered := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("secrets", layering.Path("./secrets")).
		Then("app", layering.Path("./app"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "cluster-secrets"}))
	racing := stack().Layer("namespaces", layering.Path("./namespaces")).
		Then("secrets", layering.Path("./secrets")).
		Layer("app", layering.Path("./app"), layering.DependsOn("namespaces"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: "cluster-secrets"}))
	tests := []struct {
		name    string
		b       *layering.Builder
		ces, ns string
		want    string // the substitute-from finding's message holds it; "" for none
	}{
		{name: "named", b: ordered, ces: ces("  namespaces: [apps, flux-system]\n")},
		{name: "selected by name", b: ordered, ces: ces("  namespaceSelectors:\n    - matchExpressions:\n        - {key: kubernetes.io/metadata.name, operator: In, values: [flux-system]}\n")},
		{name: "selected by the labels of the platform's Namespace", b: ordered, ces: ces(byLabel), ns: labelled},
		{name: "deprecated namespaceSelector", b: ordered, ces: ces("  namespaceSelector:\n    matchLabels:\n      secrets.example.com/cluster: \"true\"\n"), ns: labelled},
		{name: "every namespace", b: ordered, ces: ces("  namespaceSelectors:\n    - {}\n")},
		{name: "target name", b: ordered, ces: "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: shared\nspec:\n  externalSecretName: shared-es\n  namespaces: [flux-system]\n  externalSecretSpec:\n    target: {name: cluster-secrets}\n"},
		{name: "labels lint does not know", b: ordered, ces: ces(byLabel)},

		{name: "another namespace by name", b: ordered, ces: ces("  namespaces: [apps]\n"), want: "no layer applied before this one creates it"},
		{name: "the platform's Namespace lacks the label", b: ordered, ces: ces(byLabel), ns: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: flux-system\n", want: "no layer applied before this one creates it"},
		{name: "another Secret", b: ordered, ces: "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: cluster-secrets\nspec:\n  namespaces: [flux-system]\n  externalSecretSpec:\n    target: {name: other}\n", want: "no layer applied before this one creates it"},
		{name: "a selector that does not parse", b: ordered, ces: ces("  namespaces: [flux-system]\n  namespaceSelectors:\n    - matchExpressions:\n        - {key: tier, operator: Near}\n"), want: "no layer applied before this one creates it"},
		{name: "racing", b: racing, ces: ces("  namespaces: [flux-system]\n"), want: `is created by layer "secrets", which this layer does not depend on`},
		{name: "racing, assumed", b: racing, ces: ces(byLabel), want: `is created by layer "secrets" (assumed: ClusterExternalSecret/cluster-secrets selects namespaces by labels, and lint does not know those of flux-system), which this layer does not depend on`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{
				"secrets/ces.yaml": tt.ces,
				"app/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata: {password: \"${DB_PASSWORD}\"}\n",
				"namespaces/ns.yaml": nsYAML + "---\n" + func() string {
					if tt.ns == "" {
						return "apiVersion: v1\nkind: Namespace\nmetadata: {name: tools}\n"
					}
					return tt.ns
				}(),
			}
			var got []lint.Finding
			for _, f := range lintStack(t, tt.b, files, lint.WithExistingAPIGroups("external-secrets.io")) {
				if f.Rule == lint.RuleSubstituteFrom {
					got = append(got, f)
				}
			}
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			if assert.Len(t, got, 1) {
				assert.Contains(t, got[0].Message, tt.want)
			}
		})
	}
}

// ext-postgres-operator makes, for a PostgresUser, the Secret
// spec.secretName-NAME in its namespace, with the connection's keys: a
// layer after it reading that Secret is no finding; one reading
// spec.secretName alone is. Found on a public home-ops repository (four
// values-from findings on database-prefect and its kin).
func TestLintPostgresUserMakesItsSecret(t *testing.T) {
	user := "apiVersion: db.movetokube.com/v1alpha1\nkind: PostgresUser\nmetadata:\n  name: prefect\n  namespace: flux-system\nspec:\n  role: prefect\n  database: prefect\n  secretName: database\n  privileges: OWNER\n"
	b := func(secret string) *layering.Builder {
		return stack().Layer("db", layering.Path("./db")).
			Then("app", layering.Path("./app"), layering.SubstituteFrom(kustomizev1.SubstituteReference{Kind: "Secret", Name: secret}))
	}
	files := map[string]string{
		"db/user.yaml": user,
		"app/cm.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata: {url: \"${POSTGRES_URL}\"}\n",
	}
	for secret, want := range map[string]string{"database-prefect": "", "database": "no layer applied before this one creates it"} {
		var got []lint.Finding
		for _, f := range lintStack(t, b(secret), files, lint.WithExistingAPIGroups("db.movetokube.com")) {
			if f.Rule == lint.RuleSubstituteFrom || f.Rule == lint.RuleVariables {
				got = append(got, f)
			}
		}
		if want == "" {
			assert.Empty(t, got, secret)
			continue
		}
		if assert.Len(t, got, 1, secret) {
			assert.Contains(t, got[0].Message, want)
		}
	}
}

// A bucket provisioner (Rook's, NooBaa's) makes, for an ObjectBucketClaim,
// a Secret and a ConfigMap of its name in its namespace, with the bucket's
// credentials and endpoint: a HelmRelease of the same layer taking its
// values from both is no finding, and a layer after it substituting from
// them finds their keys. Found on a public home-ops repository (Loki's
// release, two values-from findings).
func TestLintObjectBucketClaimMakesItsSecretAndConfigMap(t *testing.T) {
	claim := "apiVersion: objectbucket.io/v1alpha1\nkind: ObjectBucketClaim\nmetadata:\n  name: chunks\n  namespace: flux-system\nspec:\n  bucketName: chunks\n  storageClassName: ceph-bucket\n"
	release := "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: loki\n  namespace: flux-system\nspec:\n  interval: 1h\n  chartRef: {kind: OCIRepository, name: loki}\n" +
		"  valuesFrom:\n    - {kind: ConfigMap, name: chunks, valuesKey: BUCKET_NAME, targetPath: bucket}\n    - {kind: Secret, name: chunks, valuesKey: AWS_ACCESS_KEY_ID, targetPath: key}\n"
	files := map[string]string{
		"store/claim.yaml": claim,
		"store/loki.yaml":  release,
		"app/cm.yaml":      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata: {host: \"${BUCKET_HOST}\", key: \"${AWS_SECRET_ACCESS_KEY}\", other: \"${BUCKET_TOKEN}\"}\n",
	}
	b := stack().Layer("store", layering.Path("./store")).
		Then("app", layering.Path("./app"), layering.SubstituteFrom(
			kustomizev1.SubstituteReference{Kind: "ConfigMap", Name: "chunks"},
			kustomizev1.SubstituteReference{Kind: "Secret", Name: "chunks"}))
	var got []string
	for _, f := range lintStack(t, b, files, lint.WithExistingAPIGroups("objectbucket.io")) {
		if f.Rule == lint.RuleValuesFrom || f.Rule == lint.RuleSubstituteFrom || f.Rule == lint.RuleVariables {
			got = append(got, string(f.Rule)+": "+f.Message)
		}
	}
	if assert.Len(t, got, 1, "%v", got) {
		assert.Contains(t, got[0], `variable "BUCKET_TOKEN" is not set`, "the keys the provisioner makes are known; another is not")
	}
}
