package fluxrepo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/lint"
)

// TestOneFindingPerProblem lints the two shapes of issue 40 that gave a
// line per place: ${VAR}s nothing sets used many times in one layer (four
// problems), and one ExternalSecret per namespace applied before its CRD
// (one problem). Each problem is one finding, and every place is listed
// under it at its file and line (a file, never a folder).
func TestOneFindingPerProblem(t *testing.T) {
	root := filepath.Join("testdata", "repos", "many-places")
	for _, tt := range []struct {
		entry string
		want  map[string][]lint.Place // by message prefix: the places
		rule  lint.Rule
	}{
		{
			entry: "clusters/vars", rule: lint.RuleVariables,
			want: map[string][]lint.Place{
				`variable "DS_PROM"`: {
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 11},
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 19},
					{Object: "ConfigMap/monitoring/alerts-disk", File: "monitoring/alerts.yaml", Line: 33},
					{Object: "ConfigMap/monitoring/alerts-net", File: "monitoring/alerts.yaml", Line: 45},
					// The generator's entry: the dashboard's values are
					// not in the kustomization file.
					{Object: "ConfigMap/monitoring/dashboards-c4m4md7ht2", File: "monitoring/kustomization.yaml", Line: 7},
				},
				`variable "ALERT_CHANNEL"`: {
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 12},
					{Object: "ConfigMap/monitoring/alerts-disk", File: "monitoring/alerts.yaml", Line: 34},
					{Object: "ConfigMap/monitoring/alerts-net", File: "monitoring/alerts.yaml", Line: 46},
				},
				`variable "TEAM"`: {
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 13},
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 22},
					{Object: "ConfigMap/monitoring/alerts-net", File: "monitoring/alerts.yaml", Line: 47},
				},
				`variable "GRAFANA_URL"`: {
					{Object: "ConfigMap/monitoring/alerts-node", File: "monitoring/alerts.yaml", Line: 21},
					{Object: "ConfigMap/monitoring/alerts-disk", File: "monitoring/alerts.yaml", Line: 35},
				},
			},
		},
		{
			entry: "clusters/eso", rule: lint.RuleCRDOrder,
			want: map[string][]lint.Place{
				`the CRD of ExternalSecret (external-secrets.io) is in layer "external-secrets"`: {
					{Object: "ExternalSecret/alpha/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 2},
					{Object: "ExternalSecret/bravo/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 18},
					{Object: "ExternalSecret/charlie/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 34},
					{Object: "ExternalSecret/delta/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 50},
					{Object: "ExternalSecret/echo/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 66},
					{Object: "ExternalSecret/foxtrot/app-secrets", File: "clusters/eso/app-secrets.yaml", Line: 82},
				},
			},
		},
	} {
		t.Run(tt.entry, func(t *testing.T) {
			rep, err := lint.Tree(t.Context(), filepath.Join(root, tt.entry), []fluxrepo.Option{fluxrepo.WithRoot(root)})
			require.NoError(t, err)
			require.Equal(t, len(tt.want), rep.Failing(), "lint %s: one finding per problem, got %v", tt.entry, rep.Findings)
			for _, f := range rep.Findings {
				if !f.Fails() {
					continue // a merge hint
				}
				require.Equal(t, tt.rule, f.Rule, "lint %s: %s", tt.entry, f)
				var places []lint.Place
				for prefix, p := range tt.want {
					if len(f.Message) >= len(prefix) && f.Message[:len(prefix)] == prefix {
						places = p
					}
				}
				require.NotNil(t, places, "lint %s: a finding not wanted: %s", tt.entry, f)
				assert.Equal(t, places, f.Places, "lint %s: the places of %s", tt.entry, f)
				assert.Equal(t, places[0].File, f.File, "lint %s: the finding is at its first place", tt.entry)
				assert.Equal(t, places[0].Line, f.Line, "lint %s: the finding is at its first place", tt.entry)
				for _, p := range f.Places {
					fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p.File)))
					require.NoError(t, err, "lint %s: place %s", tt.entry, p)
					assert.False(t, fi.IsDir(), "lint %s: place %s is a folder", tt.entry, p)
				}
			}
		})
	}
}
