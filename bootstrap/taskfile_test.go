package bootstrap_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/bootstrap"
	"github.com/fluxpack/fluxpack/internal/testutil"
)

// What a repository's Taskfiles apply, with go-task's variables expanded:
// the root's vars seen by the Taskfiles it includes, the included
// Taskfile's and the task's own vars, the special ROOT_DIR, TASKFILE_DIR
// and USER_WORKING_DIR, a variable made of another, an include's vars and
// dir:. What go-task would learn only by running something (sh:), or a
// variable nobody defines, leaves the path unread.
func TestFindBootstrapManifestsTaskfileVars(t *testing.T) {
	const rootTaskfile = "version: \"3\"\nvars:\n  PLATFORM: \"{{.ROOT_DIR}}/platform\"\nincludes:\n  seed: .taskfiles/Seed\n"
	manifests := map[string]string{
		"platform/base/settings.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: flux-system}\n",
		"platform/base/secrets.sops.yaml":   "apiVersion: v1\nkind: Secret\nmetadata: {name: secrets, namespace: flux-system}\n",
		".taskfiles/Seed/files/extra.yaml":  "apiVersion: v1\nkind: Namespace\nmetadata: {name: extra}\n",
		"platform/tenants/team/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: team, namespace: flux-system}\n",
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "root vars, the included Taskfile's vars, nested, sops and kubectl",
			files: map[string]string{
				"Taskfile.yaml": rootTaskfile,
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\nvars:\n  BASE: \"{{.PLATFORM}}/base\"\n  SETTINGS: \"{{ .BASE }}/settings.yaml\"\n  SECRETS: \"{{.BASE}}/secrets.sops.yaml\"\n" +
					"tasks:\n  seed:\n    cmds:\n      - sops --decrypt {{.SECRETS}} | kubectl apply --server-side --filename -\n      - kubectl apply --server-side --filename {{.SETTINGS}}\n",
			},
			want: []string{"platform/base/secrets.sops.yaml", "platform/base/settings.yaml"},
		},
		{
			name: "a task's vars, TASKFILE_DIR, USER_WORKING_DIR, and the short forms of a task",
			files: map[string]string{
				"Taskfile.yaml": rootTaskfile,
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\ntasks:\n  one:\n    vars:\n      FILE: \"{{.PLATFORM}}/base/settings.yaml\"\n    cmd: kubectl apply -f {{.FILE}}\n" +
					"  two: kubectl apply -f {{.TASKFILE_DIR}}/files/extra.yaml\n  three:\n    - cmd: sops -d {{.USER_WORKING_DIR}}/platform/base/secrets.sops.yaml | kubectl apply -f -\n",
			},
			want: []string{"platform/base/settings.yaml", ".taskfiles/Seed/files/extra.yaml", "platform/base/secrets.sops.yaml"},
		},
		{
			name: "an include's taskfile:, dir: and vars:",
			files: map[string]string{
				"Taskfile.yml": "version: \"3\"\nincludes:\n  seed:\n    taskfile: ./.taskfiles/Seed/Tasks.yaml\n    dir: ./platform\n    vars:\n      TEAM: team\n",
				// not a name bootstrapScripts looks for: read as the root's include
				".taskfiles/Seed/Tasks.yaml": "version: \"3\"\ntasks:\n  team:\n    cmds:\n      - kubectl apply -f tenants/{{.TEAM}}/config.yaml\n",
			},
			want: []string{"platform/tenants/team/config.yaml"},
		},
		{
			name: "a task's dir: in an include's dir:",
			files: map[string]string{
				"Taskfile.yml":                  "version: \"3\"\nincludes:\n  seed:\n    taskfile: .taskfiles/Seed\n    dir: platform\n    vars: {TEAM: team}\n",
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\ntasks:\n  team:\n    dir: tenants/{{.TEAM}}\n    cmds:\n      - kubectl apply -f config.yaml\n  base:\n    cmds: [kubectl apply -f base/settings.yaml]\n",
			},
			want: []string{"platform/tenants/team/config.yaml", "platform/base/settings.yaml"},
		},
		{
			name: "the included Taskfile's vars win over the include's",
			files: map[string]string{
				"Taskfile.yml":                  "version: \"3\"\nincludes:\n  seed:\n    taskfile: .taskfiles/Seed\n    vars: {FILE: platform/base/secrets.sops.yaml}\n",
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\nvars:\n  FILE: platform/base/settings.yaml\ntasks:\n  seed: kubectl apply -f {{.FILE}}\n",
			},
			want: []string{"platform/base/settings.yaml"},
		},
		{
			name: "git's toplevel is the repository's root; a dir: not known is the include's",
			files: map[string]string{
				"Taskfile.yaml": "version: \"3\"\nvars:\n  TOP:\n    sh: git rev-parse --show-toplevel\nincludes:\n  seed: .taskfiles/Seed\n",
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\nvars:\n  ELSEWHERE:\n    sh: mktemp -d\ntasks:\n" +
					"  top:\n    dir: \"{{.TOP}}\"\n    cmds:\n      - kubectl apply -f platform/base/settings.yaml\n      - kubectl apply -f {{.TOP}}/platform/tenants/team/config.yaml\n" +
					"  unknown:\n    dir: \"{{.ELSEWHERE}}\"\n    cmds:\n      - sops -d platform/base/secrets.sops.yaml | kubectl apply -f -\n",
			},
			want: []string{"platform/base/settings.yaml", "platform/tenants/team/config.yaml", "platform/base/secrets.sops.yaml"},
		},
		{
			name: "sh:, an unknown variable and a template function are not guessed",
			files: map[string]string{
				"Taskfile.yaml": rootTaskfile,
				".taskfiles/Seed/Taskfile.yaml": "version: \"3\"\nvars:\n  PLATFORM:\n    sh: echo platform\n  BASE: \"{{.PLATFORM}}/base\"\n" +
					"tasks:\n  seed:\n    cmds:\n      - kubectl apply -f {{.BASE}}/settings.yaml\n      - kubectl apply -f {{.NOWHERE}}/base/settings.yaml\n      - kubectl apply -f {{.PLATFORM | default \"platform\"}}/base/secrets.sops.yaml\n",
			},
			want: nil,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			testutil.WriteFiles(t, root, manifests)
			testutil.WriteFiles(t, root, tt.files)
			var got []string
			for _, f := range bootstrap.Manifests(root, "") {
				rel, err := filepath.Rel(root, f)
				require.NoError(t, err)
				got = append(got, filepath.ToSlash(rel))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
