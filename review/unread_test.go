package review

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A change is said unread, before anything is read, only where no layer
// can read it; every doubt reads the trees.
func TestUnread(t *testing.T) {
	tree := map[string]string{
		"README.md":                    "# platform\n",
		"docs/runbook.md":              "restart things\n",
		".github/workflows/ci.yaml":    "on: [pull_request]\n",
		"scripts/bootstrap.sh":         "kubectl apply -k clusters/prod\n",
		"clusters/prod/flux.yaml":      "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\nspec: {url: https://example.com/x}\n",
		"apps/web/kustomization.yaml":  "configMapGenerator:\n- name: web\n  files: [index.html]\n",
		"apps/web/index.html":          "<p>hi</p>\n",
		"apps/web/deployment.yaml":     "kind: Deployment\n",
		"charts/op/Chart.yaml":         "name: op\n",
		"charts/op/README.md":          "the chart\n",
		"charts/op/templates/_x.tpl":   "{{ define \"x\" }}{{ end }}\n",
		"apps/legacy/Kustomization":    "resources: []\n",
		"infra/.sourceignore":          "*.md\n",
		"infra/notes.md":               "ignored by the folder's .sourceignore\n",
		"infra/config.toml":            "not named anywhere\n",
		"apps/web/assets/logo.png.txt": "named by nobody\n",
	}
	tests := []struct {
		name    string
		extra   map[string]string // written over tree
		link    bool              // the tree holds a symbolic link
		changed []string
		want    bool
	}{
		{name: "docs", changed: []string{"README.md", "docs/runbook.md"}, want: true},
		{name: "CI configuration, left out of every artifact", changed: []string{".github/workflows/ci.yaml"}, want: true},
		{name: "a script", changed: []string{"scripts/bootstrap.sh"}, want: true},
		{name: "a file a .sourceignore leaves out", changed: []string{"infra/notes.md"}, want: true},
		{name: "a file nothing names", changed: []string{"infra/config.toml", "apps/web/assets/logo.png.txt"}, want: true},
		{name: "a manifest", changed: []string{"README.md", "apps/web/deployment.yaml"}},
		{name: "a deleted manifest", changed: []string{"apps/web/service.yaml"}},
		{name: "a file a kustomization names", changed: []string{"apps/web/index.html"}},
		{name: "a chart's README", changed: []string{"charts/op/README.md"}},
		{name: "a chart's template", changed: []string{"charts/op/templates/_x.tpl"}},
		{name: "a kustomization without an extension", changed: []string{"apps/legacy/Kustomization"}},
		{name: "a .sourceignore", changed: []string{"infra/.sourceignore"}},
		{name: "a packaged chart", changed: []string{"charts/op-1.0.0.tgz"}},
		{name: "nothing", changed: nil},
		{name: "a symbolic link anywhere", link: true, changed: []string{"README.md"}},
		{
			name:    "an ArtifactGenerator copies by globs",
			extra:   map[string]string{"clusters/prod/artifacts.yaml": "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\n"},
			changed: []string{"README.md"},
		},
		{
			name: "a GitRepository that includes another's files",
			extra: map[string]string{"clusters/prod/flux.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\n" +
				"spec:\n  include:\n  - repository: {name: platform}\n    fromPath: docs\n"},
			changed: []string{"docs/runbook.md"},
		},
		{
			name: "a GitRepository's ignore takes CI configuration back in",
			extra: map[string]string{"clusters/prod/flux.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\n" +
				"spec:\n  ignore: |\n    !/.github/\n"},
			changed: []string{".github/workflows/ci.yaml"},
		},
		{
			name: "a GitRepository's ignore leaves out more",
			extra: map[string]string{"clusters/prod/flux.yaml": "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system}\n" +
				"spec:\n  ignore: |\n    /*\n    !/clusters/\n"},
			changed: []string{"README.md", ".github/workflows/ci.yaml"},
			want:    true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, files := range []map[string]string{tree, tt.extra} {
				for name, content := range files {
					p := filepath.Join(root, filepath.FromSlash(name))
					require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
					require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
				}
			}
			if tt.link {
				require.NoError(t, os.Symlink("../../docs/runbook.md", filepath.Join(root, "apps", "web", "runbook.md")))
			}
			got, err := unread(root, tt.changed)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
