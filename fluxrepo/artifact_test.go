package fluxrepo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sigyaml "sigs.k8s.io/yaml"
)

// sourceTree writes files (slash path → content) into a folder and reads
// it back as readTree reads a working tree.
func sourceTree(t *testing.T, files map[string]string) (tree, string) {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		abs := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(abs), 0o755))
		require.NoError(t, os.WriteFile(abs, []byte(content), 0o644))
	}
	tr, err := readTree(dir)
	require.NoError(t, err)
	return tr, dir
}

// describe names each file of an artifact by what it is made of: the
// file's source and path (alias:path), entries of tarballs with "!",
// merged files joined with "+".
func describe(got tree, dirs map[string]string) map[string]string {
	name := func(f fileSrc) string {
		for alias, dir := range dirs {
			if rel, ok := inRoot(dir, f.path); ok {
				s := alias + ":" + rel
				if f.entry != "" {
					s += "!" + f.entry
				}
				return s
			}
		}
		return f.path
	}
	var walk func(f fileSrc) string
	walk = func(f fileSrc) string {
		if f.merge == nil {
			return name(f)
		}
		var parts []string
		for _, m := range f.merge {
			parts = append(parts, walk(m))
		}
		return strings.Join(parts, "+")
	}
	out := map[string]string{}
	for p, f := range got {
		out[p] = walk(f)
	}
	return out
}

// tgz is a gzipped tarball of files.
func tgz(t *testing.T, files map[string]string) string {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(content))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return b.String()
}

// TestGenerateCopyRules holds generate to source-watcher's builder
// (internal/builder/builder.go of fluxcd/source-watcher): one row per
// behaviour of its copy operations.
func TestGenerateCopyRules(t *testing.T) {
	repo, repoDir := sourceTree(t, map[string]string{
		"config.yaml":                   "a: 1\n",
		"configs/app.yaml":              "app: repo\n",
		"configs/db.yaml":               "db: repo\n",
		"configs/sub/nested.yaml":       "nested: repo\n",
		"configs/testdata/fixture.yaml": "fixture: repo\n",
		"apps/base/kustomization.yaml":  "resources: []\n",
		"apps/base/README.md":           "# base\n",
		"apps/staging/values.yaml":      "replicas: 1\n",
		"apps/staging/NOTES.md":         "notes\n",
		"apps/staging/local/dev.yaml":   "dev: true\n",
		"deep/a/x.yaml":                 "x: 1\n",
		"deep/a/b/c.yaml":               "c: 1\n",
		".github/workflows/ci.yaml":     "on: push\n",
		"logo.png":                      "png",
		".sops.yaml":                    "creation_rules: []\n",
		"values/base.yaml":              "a: {x: 1, z: 2}\nlist: [1, 2]\n",
		"values/prod.yaml":              "a: {z: 3}\nlist: [3]\n",
		"charts/podinfo-6.7.0.tgz":      tgz(t, map[string]string{"podinfo/Chart.yaml": "name: podinfo\n", "podinfo/values.yaml": "replicaCount: 1\n"}),
		"charts/README.md":              "charts\n",
	})
	lib, libDir := sourceTree(t, map[string]string{
		"configs/app.yaml": "app: lib\n",
		"configs/net.yaml": "net: lib\n",
	})
	sources := map[string]tree{"repo": repo, "lib": lib}
	dirs := map[string]string{"repo": repoDir, "lib": libDir}

	tests := []struct {
		name    string
		ops     []copyOp
		want    map[string]string
		wantErr string
	}{
		{
			name: "a file copied to a folder (to ends with /) keeps its name",
			ops:  []copyOp{{From: "@repo/config.yaml", To: "@artifact/dest/"}},
			want: map[string]string{"dest/config.yaml": "repo:config.yaml"},
		},
		{
			name: "a file copied to a path without / takes that name",
			ops:  []copyOp{{From: "@repo/config.yaml", To: "@artifact/apps/app.yaml"}},
			want: map[string]string{"apps/app.yaml": "repo:config.yaml"},
		},
		{
			name: "a file copied to a path an earlier copy made a folder goes into it",
			ops:  []copyOp{{From: "@lib/configs", To: "@artifact/"}, {From: "@repo/config.yaml", To: "@artifact/configs"}},
			want: map[string]string{"configs/app.yaml": "lib:configs/app.yaml", "configs/net.yaml": "lib:configs/net.yaml", "configs/config.yaml": "repo:config.yaml"},
		},
		{
			name: "a folder is copied under its own name, to without /",
			ops:  []copyOp{{From: "@lib/configs", To: "@artifact/dest"}},
			want: map[string]string{"dest/configs/app.yaml": "lib:configs/app.yaml", "dest/configs/net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "a folder is copied under its own name, from and to with /",
			ops:  []copyOp{{From: "@lib/configs/", To: "@artifact/dest/"}},
			want: map[string]string{"dest/configs/app.yaml": "lib:configs/app.yaml", "dest/configs/net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "the source's root (@alias/) is copied into to itself",
			ops:  []copyOp{{From: "@lib/", To: "@artifact/"}},
			want: map[string]string{"configs/app.yaml": "lib:configs/app.yaml", "configs/net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "dir/** copies the folder's contents into to, its sub-folders whole",
			ops:  []copyOp{{From: "@repo/configs/**", To: "@artifact/x/"}},
			want: map[string]string{"x/app.yaml": "repo:configs/app.yaml", "x/db.yaml": "repo:configs/db.yaml", "x/sub/nested.yaml": "repo:configs/sub/nested.yaml", "x/testdata/fixture.yaml": "repo:configs/testdata/fixture.yaml"},
		},
		{
			name: "another glob keeps each match's path from the source's root under to",
			ops:  []copyOp{{From: "@repo/configs/*.yaml", To: "@artifact/out/"}},
			want: map[string]string{"out/configs/app.yaml": "repo:configs/app.yaml", "out/configs/db.yaml": "repo:configs/db.yaml"},
		},
		{
			name: "** inside a pattern stands for one element, as in fs.Glob",
			ops:  []copyOp{{From: "@repo/deep/**/*.yaml", To: "@artifact/"}},
			want: map[string]string{"deep/a/x.yaml": "repo:deep/a/x.yaml"},
		},
		{
			name: "a folder a glob matches is copied whole",
			ops:  []copyOp{{From: "@repo/deep/*", To: "@artifact/"}},
			want: map[string]string{"deep/a/x.yaml": "repo:deep/a/x.yaml", "deep/a/b/c.yaml": "repo:deep/a/b/c.yaml"},
		},
		{
			name: "an exclude without / matches names at any depth",
			ops:  []copyOp{{From: "@repo/apps/**", To: "@artifact/", Exclude: []string{"*.md"}}},
			want: map[string]string{"base/kustomization.yaml": "repo:apps/base/kustomization.yaml", "staging/values.yaml": "repo:apps/staging/values.yaml", "staging/local/dev.yaml": "repo:apps/staging/local/dev.yaml"},
		},
		{
			name: "an exclude with / matches paths from the pattern's part before its first glob",
			ops:  []copyOp{{From: "@repo/apps/**", To: "@artifact/", Exclude: []string{"*.md", "staging/local/**"}}},
			want: map[string]string{"base/kustomization.yaml": "repo:apps/base/kustomization.yaml", "staging/values.yaml": "repo:apps/staging/values.yaml"},
		},
		{
			name: "an exclude with / matches paths from the source's root",
			ops:  []copyOp{{From: "@repo/apps/**", To: "@artifact/", Exclude: []string{"*.md", "apps/staging/local/dev.yaml"}}},
			want: map[string]string{"base/kustomization.yaml": "repo:apps/base/kustomization.yaml", "staging/values.yaml": "repo:apps/staging/values.yaml"},
		},
		{
			name: "an excluded folder leaves out everything below it",
			ops:  []copyOp{{From: "@repo/configs", To: "@artifact/", Exclude: []string{"testdata", "sub"}}},
			want: map[string]string{"configs/app.yaml": "repo:configs/app.yaml", "configs/db.yaml": "repo:configs/db.yaml"},
		},
		{
			name: "an excluded single file is skipped, not an error",
			ops:  []copyOp{{From: "@repo/config.yaml", To: "@artifact/", Exclude: []string{"config.yaml"}}, {From: "@lib/configs/net.yaml", To: "@artifact/"}},
			want: map[string]string{"net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "several sources, a later copy overwriting an earlier one's files",
			ops:  []copyOp{{From: "@repo/configs/*.yaml", To: "@artifact/"}, {From: "@lib/configs/*.yaml", To: "@artifact/"}},
			want: map[string]string{"configs/app.yaml": "lib:configs/app.yaml", "configs/db.yaml": "repo:configs/db.yaml", "configs/net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "Merge merges a file onto the one a copy put there",
			ops:  []copyOp{{From: "@repo/values/base.yaml", To: "@artifact/values.yaml"}, {From: "@repo/values/prod.yaml", To: "@artifact/values.yaml", Strategy: strategyMerge}},
			want: map[string]string{"values.yaml": "repo:values/base.yaml+repo:values/prod.yaml"},
		},
		{
			name: "Merge onto no file copies it",
			ops:  []copyOp{{From: "@repo/values/prod.yaml", To: "@artifact/values.yaml", Strategy: strategyMerge}},
			want: map[string]string{"values.yaml": "repo:values/prod.yaml"},
		},
		{
			name: "Merge does not merge the files of a folder it copies: they overwrite",
			ops:  []copyOp{{From: "@repo/configs/*.yaml", To: "@artifact/"}, {From: "@lib/configs", To: "@artifact/", Strategy: strategyMerge}},
			want: map[string]string{"configs/app.yaml": "lib:configs/app.yaml", "configs/db.yaml": "repo:configs/db.yaml", "configs/net.yaml": "lib:configs/net.yaml"},
		},
		{
			name: "Extract unpacks a tarball into to",
			ops:  []copyOp{{From: "@repo/charts/podinfo-6.7.0.tgz", To: "@artifact/charts/", Strategy: strategyExtract}},
			want: map[string]string{"charts/podinfo/Chart.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/Chart.yaml", "charts/podinfo/values.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/values.yaml"},
		},
		{
			name: "Extract with a glob skips what is not a tarball, ** standing for any number of elements",
			ops:  []copyOp{{From: "@repo/**/*.tgz", To: "@artifact/", Strategy: strategyExtract}, {From: "@repo/charts/*", To: "@artifact/again/", Strategy: strategyExtract}},
			want: map[string]string{
				"podinfo/Chart.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/Chart.yaml", "podinfo/values.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/values.yaml",
				"again/podinfo/Chart.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/Chart.yaml", "again/podinfo/values.yaml": "repo:charts/podinfo-6.7.0.tgz!podinfo/values.yaml",
			},
		},
		{
			name:    "Extract of a file that is not a tarball fails",
			ops:     []copyOp{{From: "@repo/config.yaml", To: "@artifact/", Strategy: strategyExtract}},
			wantErr: "not a tarball",
		},
		{
			name:    "Extract of a folder fails",
			ops:     []copyOp{{From: "@repo/charts", To: "@artifact/", Strategy: strategyExtract}},
			wantErr: "takes tarballs",
		},
		{
			name: "the artifact leaves out source-controller's default exclusions (CI files, images, .sops.yaml)",
			ops:  []copyOp{{From: "@repo/**", To: "@artifact/", Exclude: []string{"apps", "configs", "deep", "values", "charts", "config.yaml"}}},
			want: map[string]string{},
		},
		{
			name:    "a glob no file matches fails",
			ops:     []copyOp{{From: "@repo/nothing/*.yaml", To: "@artifact/"}},
			wantErr: `no file matches "nothing/*.yaml" in source "repo"`,
		},
		{
			name: "an optional copy that matches nothing is skipped",
			ops:  []copyOp{{From: "@repo/nothing/*.yaml", To: "@artifact/", Optional: true}, {From: "@repo/missing.yaml", To: "@artifact/", Optional: true}},
			want: map[string]string{},
		},
		{
			name:    "a file or folder the source lacks fails",
			ops:     []copyOp{{From: "@repo/missing.yaml", To: "@artifact/"}},
			wantErr: "missing.yaml is not in the source",
		},
		{
			name:    "a glob whose every match is excluded fails",
			ops:     []copyOp{{From: "@repo/apps/staging/*.md", To: "@artifact/", Exclude: []string{"*.md"}}},
			wantErr: "every file matching",
		},
		{
			name:    "an alias spec.sources does not give fails",
			ops:     []copyOp{{From: "@other/config.yaml", To: "@artifact/"}},
			wantErr: `no source has alias "other"`,
		},
		{
			name:    "from without a path after the alias fails",
			ops:     []copyOp{{From: "@repo", To: "@artifact/"}},
			wantErr: "@alias/pattern",
		},
		{
			name:    "to outside @artifact/ fails",
			ops:     []copyOp{{From: "@repo/config.yaml", To: "dest/"}},
			wantErr: "@artifact/path",
		},
		{
			name:    "a bad exclude pattern fails",
			ops:     []copyOp{{From: "@repo/configs/**", To: "@artifact/", Exclude: []string{"["}}},
			wantErr: "not a pattern",
		},
		{
			name:    "a bad glob fails",
			ops:     []copyOp{{From: "@repo/[", To: "@artifact/"}},
			wantErr: "syntax error in pattern",
		},
		{
			name:    "a folder cannot be made where a copy put a file",
			ops:     []copyOp{{From: "@repo/config.yaml", To: "@artifact/out"}, {From: "@repo/configs/**", To: "@artifact/out/"}},
			wantErr: "out is a file, not a folder",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := generate(tt.ops, sources)
			if tt.wantErr != "" {
				require.Error(t, err, "generate(%v)", tt.ops)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err, "generate(%v)", tt.ops)
			assert.Equal(t, tt.want, describe(got, dirs), "generate(%v)", tt.ops)
		})
	}

	t.Run("merged and extracted files are laid out with their content", func(t *testing.T) {
		got, err := generate([]copyOp{
			{From: "@repo/values/base.yaml", To: "@artifact/values.yaml"},
			{From: "@repo/values/prod.yaml", To: "@artifact/values.yaml", Strategy: strategyMerge},
			{From: "@repo/charts/podinfo-6.7.0.tgz", To: "@artifact/", Strategy: strategyExtract},
		}, sources)
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, layOut(got, filepath.Join(dir, "artifact"), filepath.Join(dir, "side")))
		data, err := os.ReadFile(filepath.Join(dir, "artifact", "values.yaml"))
		require.NoError(t, err)
		var merged map[string]any
		require.NoError(t, sigyaml.Unmarshal(data, &merged))
		assert.Equal(t, map[string]any{"a": map[string]any{"x": 1.0, "z": 3.0}, "list": []any{3.0}}, merged, "maps merged key by key, lists replaced")
		data, err = os.ReadFile(filepath.Join(dir, "artifact", "podinfo", "values.yaml"))
		require.NoError(t, err)
		assert.Equal(t, "replicaCount: 1\n", string(data))
	})
}

// TestPackIgnoreRules holds pack to source-controller's archiving of a
// GitRepository's working tree (the .sourceignore files, spec.ignore and
// its default exclusions): one row per behaviour.
func TestPackIgnoreRules(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		ignore map[string]string // .sourceignore files by folder ("" the root), and "spec" for spec.ignore
		want   []string
	}{
		{
			name:  "without any pattern, the default exclusions apply",
			files: []string{"app.yaml", ".github/workflows/ci.yaml", "logo.png", "deploy/.sops.yaml", ".gitignore"},
			want:  []string{"app.yaml"},
		},
		{
			name:   "a .sourceignore leaves out what it matches in its folder and below only",
			files:  []string{"apps/a.yaml", "apps/a.md", "docs/b.md"},
			ignore: map[string]string{"apps": "*.md\n"},
			want:   []string{"apps/.sourceignore", "apps/a.yaml", "docs/b.md"},
		},
		{
			name:   "with a pattern anywhere, the default exclusions no longer apply, but version-control files still do",
			files:  []string{"app.yaml", "logo.png", ".gitignore"},
			ignore: map[string]string{"": "# nothing of ours\n*.md\n"},
			want:   []string{".sourceignore", "app.yaml", "logo.png"},
		},
		{
			name:   "a negation takes back what an earlier pattern left out",
			files:  []string{"apps/a.yaml", "clusters/c.yaml", "scripts/s.sh", "README.md"},
			ignore: map[string]string{"": "/*\n!/apps/\n!/clusters/\n"},
			want:   []string{"apps/a.yaml", "clusters/c.yaml"},
		},
		{
			name:   "a deeper .sourceignore comes after a shallower one",
			files:  []string{"apps/keep.yaml", "apps/drop.yaml", "other.yaml"},
			ignore: map[string]string{"": "*.yaml\n", "apps": "!keep.yaml\n"},
			want:   []string{".sourceignore", "apps/.sourceignore", "apps/keep.yaml"},
		},
		{
			name:   "spec.ignore comes after every .sourceignore",
			files:  []string{"apps/keep.yaml", "apps/drop.yaml"},
			ignore: map[string]string{"apps": "!keep.yaml\n", "spec": "/apps/\n"},
			want:   nil,
		},
		{
			name:   "spec.ignore alone turns the default exclusions off",
			files:  []string{"app.yaml", "logo.png", "tests/t.yaml"},
			ignore: map[string]string{"spec": "/tests/\n"},
			want:   []string{"app.yaml", "logo.png"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "x: 1\n"
			}
			for dir, patterns := range tt.ignore {
				if dir != "spec" {
					files[filepath.ToSlash(filepath.Join(dir, ".sourceignore"))] = patterns
				}
			}
			tr, _ := sourceTree(t, files)
			got, err := pack(tr, tt.ignore["spec"])
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, slicesSorted(got), "pack(%v, %q)", files, tt.ignore["spec"])
		})
	}
}

func slicesSorted(t tree) []string {
	var out []string
	for p := range t {
		out = append(out, p)
	}
	return out
}

// TestIncludeRules holds include to source-controller's spec.include (the
// included artifact's fromPath renamed to toPath in the working tree).
func TestIncludeRules(t *testing.T) {
	inc, incDir := sourceTree(t, map[string]string{"deploy/a.yaml": "a", "deploy/b/c.yaml": "c", "other.yaml": "o"})
	base := map[string]string{"apps/x.yaml": "x", "platform.yaml": "p"}
	tests := []struct {
		name     string
		from, to string
		want     map[string]string
		wantErr  string
	}{
		{
			name: "fromPath's files land under toPath",
			from: "deploy", to: "platform",
			want: map[string]string{"platform/a.yaml": "inc:deploy/a.yaml", "platform/b/c.yaml": "inc:deploy/b/c.yaml"},
		},
		{
			name: "without fromPath the whole artifact lands under toPath",
			from: "", to: "lib",
			want: map[string]string{"lib/deploy/a.yaml": "inc:deploy/a.yaml", "lib/deploy/b/c.yaml": "inc:deploy/b/c.yaml", "lib/other.yaml": "inc:other.yaml"},
		},
		{
			name: "a file fromPath replaces the file at toPath",
			from: "other.yaml", to: "platform.yaml",
			want: map[string]string{"platform.yaml": "inc:other.yaml"},
		},
		{
			name: "a path out of the artifact stays in it, as securejoin keeps it",
			from: "../deploy", to: "../lib",
			want: map[string]string{"lib/a.yaml": "inc:deploy/a.yaml", "lib/b/c.yaml": "inc:deploy/b/c.yaml"},
		},
		{
			name: "toPath a folder of the repository holds files in fails (a rename)",
			from: "deploy", to: "apps",
			wantErr: "apps is a folder the repository holds files in",
		},
		{
			name: "a folder onto a file of the repository fails",
			from: "deploy", to: "platform.yaml",
			wantErr: "a folder cannot replace it",
		},
		{
			name: "toPath below a file of the repository fails",
			from: "deploy", to: "platform.yaml/sub",
			wantErr: "cannot be made below it",
		},
		{
			name: "a fromPath the artifact lacks fails",
			from: "missing", to: "lib",
			wantErr: "missing is not in the artifact",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, baseDir := sourceTree(t, base)
			got, err := include(tr, inc, tt.from, tt.to)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			want := map[string]string{"apps/x.yaml": "base:apps/x.yaml", "platform.yaml": "base:platform.yaml"}
			for p, o := range tt.want {
				want[p] = o
			}
			assert.Equal(t, want, describe(got, map[string]string{"inc": incDir, "base": baseDir}))
		})
	}
}
