package outputs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/fluxpack/fluxpack/internal/testutil"
	"github.com/fluxpack/fluxpack/outputs"
)

// sentinels are the categories every refusal of bad IaC input falls in.
var sentinels = []error{
	outputs.ErrMalformed, outputs.ErrWrongShape, outputs.ErrUnknownFormat,
	outputs.ErrDuplicateName, outputs.ErrSecretPlaceholder, outputs.ErrMissingOutput,
	outputs.ErrInvalidName, outputs.ErrSensitiveValue, outputs.ErrInvalidOption,
}

// TestBadOutputsCorpus runs the whole IaC path, ReadOutputs, ReadValuesMap,
// Render and WriteDir into $WORK/out, on every case of testdata/bad/*.txtar
// and checks that each one
//
//   - fails with one of the package's sentinel errors;
//   - says what testdata/bad/<case>.golden holds (-update rewrites it),
//     including every line of the case's "names" section (the file, the
//     line, the output);
//   - never shows a value: no line of the "values" section is in the error;
//   - writes nothing: the work directory is as it was.
//
// A case's comment says what is wrong. Its files go to a fresh work
// directory; the outputs file is the first one, values.yaml (if any) is the
// values map. Sections that are not files:
//
//	-- format --  the format to read the outputs as (default: detected)
//	-- names --   substrings the error must hold, one a line
//	-- values --  substrings the error must not hold, one a line
//
// There is no CLI command for IaC outputs yet; when there is, these cases
// belong in internal/cli's corpus.
func TestBadOutputsCorpus(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("testdata", "bad", "*.txtar"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(cases), 15, "the IaC bad-input corpus shrank")
	for _, file := range cases {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) { runBadOutputs(t, name, file) })
	}
	t.Logf("bad IaC inputs: %d cases", len(cases))
}

func runBadOutputs(t *testing.T, name, file string) {
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	require.NotEmpty(t, strings.TrimSpace(string(ar.Comment)), "%s: the comment must say what is wrong", file)
	work := t.TempDir()
	sections := map[string][]string{}
	var outputs, values string
	for _, f := range ar.Files {
		switch f.Name {
		case "format", "names", "values":
			sections[f.Name] = strings.Fields(strings.ReplaceAll(string(f.Data), "$WORK", work))
			if f.Name != "format" {
				sections[f.Name] = nonEmptyLines(strings.ReplaceAll(string(f.Data), "$WORK", work))
			}
			continue
		}
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
		switch {
		case f.Name == "values.yaml":
			values = p
		case outputs == "":
			outputs = p
		}
	}
	require.NotEmpty(t, outputs, "%s: no outputs file", file)
	require.NotEmpty(t, sections["names"], "%s: no names: a message must name the file and the place", file)
	before := snapshotDir(t, work)

	err = readRenderWrite(outputs, values, strings.Join(sections["format"], ""), filepath.Join(work, "out"))
	require.Error(t, err, "%s: the IaC path accepted the input", file)
	isSentinel := false
	for _, s := range sentinels {
		isSentinel = isSentinel || errors.Is(err, s)
	}
	assert.True(t, isSentinel, "%v: not one of the package's sentinel errors", err)
	msg := err.Error()
	for _, n := range sections["names"] {
		assert.Contains(t, msg, n, "the message names %q", n)
	}
	for _, v := range sections["values"] {
		assert.NotContains(t, msg, v, "the message shows a value")
	}
	if diff := cmp.Diff(before, snapshotDir(t, work)); diff != "" {
		t.Errorf("the IaC path changed its work directory (-before +after):\n%s", diff)
	}
	testutil.Golden(t, filepath.Join("bad", name), []byte(strings.ReplaceAll(msg, work, "$WORK")+"\n"))
}

// readRenderWrite is what an outputs command does: read, render the
// cluster-vars ConfigMap and Secret (and the values ConfigMaps), write them.
func readRenderWrite(outputsFile, values, format, dir string) error {
	outs, err := outputs.Read(outputsFile, outputs.WithFormat(outputs.Format(format)))
	if err != nil {
		return err
	}
	var vm *outputs.ValuesMap
	if values != "" {
		if vm, err = outputs.ReadValuesMap(values); err != nil {
			return err
		}
	}
	m, err := outs.Render("cluster-vars", "flux-system", vm)
	if err != nil {
		return err
	}
	_, err = m.WriteDir(dir)
	return err
}

func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimRight(l, "\n"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// snapshotDir lists every path under dir with its mode and content.
func snapshotDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		entry := rel + " " + d.Type().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			entry += " " + string(b)
		}
		out = append(out, entry)
		return nil
	}))
	return out
}
