package review_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/review"
)

// changes are the fixture's pull requests: each folder of
// testdata/changes holds the files a change writes over testdata/repo.
var changes = []string{"chart-bump", "values-from", "new-layer", "race", "race-many", "image-bump", "vars", "secret", "reorder"}

// fixture lays out the base repository and the repository after change
// in two folders.
func fixture(t testing.TB, change string) (base, head string) {
	t.Helper()
	dir := t.TempDir()
	base, head = filepath.Join(dir, "base"), filepath.Join(dir, "head")
	copyTree(t, filepath.Join("testdata", "repo"), base)
	copyTree(t, filepath.Join("testdata", "repo"), head)
	if change != "" {
		copyTree(t, filepath.Join("testdata", "changes", change), head)
	}
	return base, head
}

func copyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func compare(t testing.TB, change string) *review.Report {
	t.Helper()
	base, head := fixture(t, change)
	r, err := review.Compare(t.Context(), base, head, "clusters/prod", review.WithNames("main", change))
	if err != nil {
		t.Fatalf("Compare(%s): %v", change, err)
	}
	return r
}

// TestCompareGoldens holds each fixture change's report in every format.
func TestCompareGoldens(t *testing.T) {
	for _, change := range changes {
		t.Run(change, func(t *testing.T) {
			r := compare(t, change)
			if !r.Changed() {
				t.Fatalf("%s: no change reported", change)
			}
			var text, md, gh, uni bytes.Buffer
			if err := r.WriteText(&text, review.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := review.WriteMarkdown(&md, []*review.Report{r}, review.MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteGitHub(&gh); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteUnified(&uni); err != nil {
				t.Fatal(err)
			}
			js, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, "golden/"+change+".txt", text.Bytes())
			testutil.Golden(t, "golden/"+change+".md", md.Bytes())
			testutil.Golden(t, "golden/"+change+".github", gh.Bytes())
			testutil.Golden(t, "golden/"+change+".diff", uni.Bytes())
			testutil.Golden(t, "golden/"+change+".json", append(js, '\n'))
		})
	}
}

// TestSARIFHoldsTheIntroducedFindings: one result per introduced finding,
// located at each of its places (race-many: three Widgets, two problems).
func TestSARIFHoldsTheIntroducedFindings(t *testing.T) {
	for _, tt := range []struct {
		change string
		places int // of each result
	}{
		{"race", 1},
		{"race-many", 3},
	} {
		t.Run(tt.change, func(t *testing.T) {
			r := compare(t, tt.change)
			var b bytes.Buffer
			if err := review.WriteSARIF(&b, []*review.Report{r}, "test"); err != nil {
				t.Fatal(err)
			}
			testutil.Golden(t, "golden/"+tt.change+".sarif", b.Bytes())
			var doc struct {
				Runs []struct {
					Results []struct {
						RuleID    string            `json:"ruleId"`
						Locations []json.RawMessage `json:"locations"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if n := len(doc.Runs[0].Results); n != len(r.Findings.Introduced) || n != 2 {
				t.Errorf("%s: %d SARIF results for %d introduced findings, want 2", tt.change, n, len(r.Findings.Introduced))
			}
			for _, res := range doc.Runs[0].Results {
				if len(res.Locations) != tt.places {
					t.Errorf("%s: SARIF result %s has %d locations, want %d", tt.change, res.RuleID, len(res.Locations), tt.places)
				}
			}
		})
	}
}

// A changed file that Flux cannot read is reported the same changed-only
// as with --all, though changed-only reads the layers a change leaves
// alone for their objects' identities only: the layers it feeds are read
// whole.
func TestChangedOnlyReportsABrokenFile(t *testing.T) {
	base, head := fixture(t, "")
	broken := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: extra\n  namespace: widgets\nspec:\n  size: [1, 2\n"
	if err := os.WriteFile(filepath.Join(head, "infrastructure", "configs", "extra.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	var reports [2]*review.Report
	for i, opts := range [][]review.Option{nil, {review.WithAll()}} {
		r, err := review.Compare(t.Context(), base, head, "clusters/prod", opts...)
		if err != nil {
			t.Fatal(err)
		}
		reports[i] = r
	}
	some, all := reports[0], reports[1]
	if len(some.Findings.Introduced) != 1 || some.Findings.Introduced[0].Rule != "path" || !strings.Contains(some.Findings.Introduced[0].Message, "did not find expected") {
		t.Errorf("want the file's error introduced, got %v", some.Findings.Introduced)
	}
	if d := cmp.Diff(all.Findings, some.Findings); d != "" {
		t.Errorf("races: changed-only differs from --all:\n%s", d)
	}
	if d := cmp.Diff(all.NotRendered, some.NotRendered); d != "" {
		t.Errorf("not rendered: changed-only differs from --all:\n%s", d)
	}
}

func TestNoChange(t *testing.T) {
	r := compare(t, "")
	if r.Changed() || len(r.Files) != 0 || len(r.Rendered) != 0 {
		t.Errorf("an unchanged tree: changed %v, files %v, rendered %v", r.Changed(), r.Files, r.Rendered)
	}
}

func TestNewCluster(t *testing.T) {
	base, head := fixture(t, "")
	if err := os.RemoveAll(filepath.Join(base, "clusters")); err != nil {
		t.Fatal(err)
	}
	r, err := review.Compare(t.Context(), base, head, "clusters/prod")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Objects {
		if c.Action != review.Added {
			t.Errorf("%s: %s, want added in a new cluster", c.ID, c.Action)
		}
	}
	if len(r.Objects) < 10 || len(r.Bootstrap.LayersAdded) != 5 || r.Bootstrap.Before != nil {
		t.Errorf("new cluster: %d objects, layers added %v, before %v", len(r.Objects), r.Bootstrap.LayersAdded, r.Bootstrap.Before)
	}
	if _, err := review.Compare(t.Context(), base, base, "clusters/prod"); err == nil {
		t.Error("Compare of an entry on neither side: no error")
	}
}

func TestCompareBadOptions(t *testing.T) {
	base, head := fixture(t, "")
	for name, opts := range map[string][]review.Option{
		"nil":          {nil},
		"bad pattern":  {review.WithStripAttrs("[")},
		"empty":        {review.WithStripAttrs("")},
		"nil read opt": {review.WithReadOptions(nil)},
		"nil lint opt": {review.WithLintOptions(nil)},
	} {
		if _, err := review.Compare(t.Context(), base, head, "clusters/prod", opts...); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := review.Compare(t.Context(), base, head, "../elsewhere"); err == nil {
		t.Error("an entry outside the repository: no error")
	}
}

// TestDocShowsARealReport: the markdown report in docs/review.md is the
// race fixture's, as the golden holds it.
func TestDocShowsARealReport(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "docs", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "golden", "race.md.golden"))
	if err != nil {
		t.Fatal(err)
	}
	shown := string(golden[:bytes.Index(golden, []byte("<details>"))])
	if !bytes.Contains(page, []byte("```markdown\n"+strings.TrimRight(shown, "\n")+"\n```")) {
		t.Errorf("docs/review.md does not show the race fixture's report as testdata/golden/race.md.golden has it (up to the first <details>)")
	}
}

func TestCompareStack(t *testing.T) {
	root := filepath.Join("..", "examples", "external-secrets")
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	copyTree(t, root, base)
	copyTree(t, root, head)
	stack := filepath.Join(head, "platform", "stack.yaml")
	data, err := os.ReadFile(stack)
	if err != nil {
		t.Fatal(err)
	}
	// The custom resources no longer wait for the operator.
	raced := strings.Replace(string(data), ", dependsOnOperator: true", "", 1)
	if raced == string(data) {
		t.Fatal("the example's stack changed: no dependsOnOperator to remove")
	}
	if err := os.WriteFile(stack, []byte(raced), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := review.CompareStack(t.Context(), base, head, "platform/stack.yaml", review.WithNames("main", "change"))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := r.WriteText(&text, review.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "stack-race.txt", text.Bytes())
	if len(r.Findings.Introduced) == 0 || len(r.Bootstrap.EdgesRemoved) != 1 {
		t.Errorf("a removed dependsOn on the operator: introduced %v, edges removed %v", r.Findings.Introduced, r.Bootstrap.EdgesRemoved)
	}
	if _, err := review.CompareStack(t.Context(), base, head, "platform/nope.yaml"); err == nil {
		t.Error("a stack on neither side: no error")
	}
}

func TestCompareFleet(t *testing.T) {
	root := filepath.Join("..", "fleet", "testdata", "fleet")
	dir := t.TempDir()
	base, head := filepath.Join(dir, "base"), filepath.Join(dir, "head")
	copyTree(t, root, base)
	copyTree(t, root, head)
	// prod's apps get a shorter timeout: prod changes, staging does not.
	fleet := filepath.Join(head, "fleet.yaml")
	data, err := os.ReadFile(fleet)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fleet, bytes.Replace(data, []byte("timeout: 2m"), []byte("timeout: 1m"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	reps, err := review.CompareFleet(t.Context(), base, head, "fleet.yaml", review.WithNames("main", "change"))
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := review.WriteMarkdown(&md, reps, review.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, "fleet-timeout.md", md.Bytes())
	got := map[string]int{}
	for _, r := range reps {
		got[r.Entry] = len(r.Objects)
	}
	if got["fleet.yaml#staging"] != 0 || got["fleet.yaml#prod"] != 1 {
		t.Errorf("objects changed per cluster: %v, want prod 1, staging 0", got)
	}
}

// TestCompareWithoutTheVarsConfigMap: the cluster's variables live in a
// ConfigMap Terraform makes, not in the tree; the diff still compares
// every Kustomization, with the variables left as ${var} on both sides,
// and says so.
func TestCompareWithoutTheVarsConfigMap(t *testing.T) {
	base, head := fixture(t, "image-bump")
	for _, d := range []string{base, head} {
		if err := os.Remove(filepath.Join(d, "clusters", "prod", "vars.yaml")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := review.Compare(t.Context(), base, head, "clusters/prod", review.WithAll())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.NotRendered) != 0 {
		t.Errorf("not rendered: %v", r.NotRendered)
	}
	if want := []string{"ConfigMap/flux-system/cluster-vars"}; !slices.Equal(r.Unresolved, want) {
		t.Errorf("unresolved %v, want %v", r.Unresolved, want)
	}
	if len(r.Objects) != 1 || r.Objects[0].ID.Name != "web" {
		t.Fatalf("objects %+v, want the web Deployment", r.Objects)
	}
	if !strings.Contains(r.Objects[0].After, "value: ${region}") {
		t.Errorf("the variable is not left as written:\n%s", r.Objects[0].After)
	}
}
