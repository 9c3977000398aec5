package layering

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigyaml "sigs.k8s.io/yaml"
)

// marshal remembers the YAML of what it wrote, but never of a Secret, and
// what it gives back from memory is what sigs.k8s.io/yaml writes.
func TestMarshalMemo(t *testing.T) {
	yamlOfJSON = memo{limit: 8 << 20}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "vars"}, Data: map[string]string{"region": "eu-west-3"}}
	first, err := marshal(cm)
	require.NoError(t, err)
	second, err := marshal(cm)
	require.NoError(t, err)
	assert.Equal(t, &first[0], &second[0], "the second marshal comes from memory")
	want, err := sigyaml.Marshal(cm)
	require.NoError(t, err)
	assert.Equal(t, "apiVersion: v1\ndata:\n  region: eu-west-3\nkind: ConfigMap\nmetadata:\n  name: vars\n", string(first))
	assert.Equal(t, strings.Replace(string(want), "  creationTimestamp: null\n", "", 1), string(first), "sigs.k8s.io/yaml's output less creationTimestamp")

	s := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: "vars"}, StringData: map[string]string{"token": "s3cr3t"}}
	_, err = marshal(s)
	require.NoError(t, err)
	yamlOfJSON.mu.Lock()
	for k, v := range yamlOfJSON.m {
		assert.NotContains(t, k+string(v), "s3cr3t", "a Secret was kept in memory")
	}
	yamlOfJSON.mu.Unlock()

	// Full, it starts again.
	m := memo{limit: 10}
	m.put([]byte("abc"), []byte("def"))
	m.put([]byte("ghi"), []byte("jkl"))
	_, ok := m.get([]byte("abc"))
	assert.False(t, ok, "the memo went over its limit and kept the old entry")
	got, ok := m.get([]byte("ghi"))
	assert.True(t, ok)
	assert.Equal(t, "jkl", string(got))
	m.put([]byte("too long a key"), nil)
	_, ok = m.get([]byte("too long a key"))
	assert.False(t, ok, "an entry over the limit was kept")
}
