//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigyaml "sigs.k8s.io/yaml"

	"github.com/fluxpack/fluxpack/stackfile"
)

// s1Secret is the value of the sensitive Terraform output of
// testdata/s1/terraform.json: it may reach Secrets only.
const s1Secret = "e2e-s3cr3t-9f1c2b7a-never-in-a-configmap"

// TestS1IaCBridge is seed 001: Terraform's `output -json` becomes, through
// fluxpack, the cluster-vars ConfigMap (pushed, applied by the root
// Kustomization), the cluster-vars Secret of the sensitive outputs (written
// outside the pushed folder and applied out of band, as Terraform would) and
// Karpenter's Helm values ConfigMap; every layer substitutes the variables.
func TestS1IaCBridge(t *testing.T) {
	t.Parallel()
	forEachMode(t, testS1)
}

func testS1(t *testing.T, m Mode) {
	c := StartCluster(t, m)
	dir, private := t.TempDir(), t.TempDir()
	copyTree(t, filepath.Join("testdata", "s1"), dir)
	// Terraform's outputs hold the sensitive value: they stay out of the
	// pushed folder, as in a pipeline that runs terraform output -json.
	for _, f := range []string{"terraform.json", "values-map.yaml"} {
		require.NoError(t, os.Rename(filepath.Join(dir, f), filepath.Join(private, f)))
	}
	outputs := filepath.Join(private, "terraform.json")
	secretFile := filepath.Join(private, "cluster-vars.secret.yaml")
	fluxpack(t, "render", "-f", filepath.Join(dir, "stack.yaml"), "--outputs", outputs,
		"-d", filepath.Join(dir, rootPath), "--secret-file", secretFile, "--receiver-url", c.ReceiverURL)
	fluxpack(t, "outputs", outputs, "--name", "cluster-vars", "--namespace", fluxNamespace,
		"--values-map", filepath.Join(private, "values-map.yaml"), "-d", filepath.Join(private, "outputs"))
	values, err := os.ReadFile(filepath.Join(private, "outputs", "configmap-karpenter-values.yaml"))
	require.NoError(t, err)
	writeFiles(t, dir, map[string][]byte{"karpenter/karpenter-values.yaml": values})

	// The Secrets (the sensitive outputs', the wake token's) go to the
	// cluster out of band, never into the artifact.
	secrets := readSecrets(t, secretFile)
	require.Len(t, secrets, 2)
	require.Equal(t, "cluster-vars", secrets[0].Name)
	require.Equal(t, "addons-wake", secrets[1].Name)
	for i := range secrets {
		c.create(&secrets[i])
	}
	requireNotInTree(t, dir, s1Secret)
	requireNotInTree(t, dir, string(secrets[1].Data["token"]))

	b, err := stackfile.Load(filepath.Join(dir, "stack.yaml"))
	require.NoError(t, err)
	plan, err := b.Build()
	require.NoError(t, err)
	// apps/api.yaml holds a Secret whose only value is the placeholder
	// ${authentik_secret_key}: push refuses any plaintext Secret unless told.
	d := DeployDir(t, c, "s1", dir, layerNames(plan), "--allow-secrets")
	d.RequireNoFailures(t)

	ctx := t.Context()
	var karpenter appsv1.Deployment
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "karpenter", Name: "karpenter"}, &karpenter))
	assert.Equal(t, "mycluster-0", karpenter.Labels["karpenter.sh/cluster"])
	require.NotNil(t, karpenter.Spec.Replicas)
	assert.Equal(t, int32(2), *karpenter.Spec.Replicas, "a number output substitutes as a number")
	assert.Equal(t, []corev1.EnvVar{{Name: "CLUSTER_NAME", Value: "mycluster-0"}, {Name: "AWS_REGION", Value: "eu-west-3"}},
		karpenter.Spec.Template.Spec.Containers[0].Env)

	var nodeClass unstructured.Unstructured
	nodeClass.SetAPIVersion("karpenter.k8s.aws/v1")
	nodeClass.SetKind("EC2NodeClass")
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Name: "default"}, &nodeClass))
	role, _, _ := unstructured.NestedString(nodeClass.Object, "spec", "role")
	assert.Equal(t, "KarpenterNodeRole-mycluster-0", role)

	var api appsv1.Deployment
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "api"}, &api))
	assert.Equal(t, []corev1.EnvVar{{Name: "QUEUE_URL", Value: "https://sqs.eu-west-3.amazonaws.com/123456789012/orders"}},
		api.Spec.Template.Spec.Containers[0].Env)

	var vals corev1.ConfigMap
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "karpenter", Name: "karpenter-values"}, &vals))
	var helmValues map[string]any
	require.NoError(t, sigyaml.Unmarshal([]byte(vals.Data["values.yaml"]), &helmValues))
	assert.Equal(t, map[string]any{
		"replicas": float64(2),
		"settings": map[string]any{"clusterName": "mycluster-0", "interruptionQueue": "Karpenter-mycluster-0"},
	}, helmValues)

	var vars corev1.ConfigMap
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: fluxNamespace, Name: "cluster-vars"}, &vars))
	assert.Equal(t, "mycluster-0", vars.Data["cluster_name"])
	assert.NotContains(t, vars.Data, "authentik_secret_key")

	// The sensitive value reached the Secret that asks for it, and no
	// ConfigMap anywhere.
	var appSecret corev1.Secret
	require.NoError(t, c.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "authentik-secrets"}, &appSecret))
	assert.Equal(t, s1Secret, string(appSecret.Data["AUTHENTIK_SECRET_KEY"]))
	requireNoConfigMapHolds(ctx, t, c, s1Secret)

	recordRun("S1 fluxpack", d, "")
}

// readSecrets reads the Secrets of a YAML stream.
func readSecrets(t *testing.T, file string) []corev1.Secret {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	dec := k8syaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []corev1.Secret
	for {
		var s corev1.Secret
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, "reading %s", file)
		out = append(out, s)
	}
}

// requireNotInTree fails if any file under dir contains value.
func requireNotInTree(t *testing.T, dir, value string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		require.False(t, bytes.Contains(b, []byte(value)), "the sensitive output is in the pushed file %s", p)
		return nil
	}))
}

// requireNoConfigMapHolds fails if any ConfigMap in the cluster contains value.
func requireNoConfigMapHolds(ctx context.Context, t *testing.T, c *Cluster, value string) {
	t.Helper()
	var cms corev1.ConfigMapList
	require.NoError(t, c.Client.List(ctx, &cms))
	require.NotEmpty(t, cms.Items)
	for _, cm := range cms.Items {
		b, err := sigyaml.Marshal(cm)
		require.NoError(t, err)
		require.False(t, bytes.Contains(b, []byte(value)), "ConfigMap/%s/%s holds the sensitive output", cm.Namespace, cm.Name)
	}
}
