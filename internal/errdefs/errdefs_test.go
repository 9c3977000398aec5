package errdefs_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fluxpack/fluxpack/fleet"
	"github.com/fluxpack/fluxpack/fluxbuild"
	"github.com/fluxpack/fluxpack/fluxrepo"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/lint"
	"github.com/fluxpack/fluxpack/oci"
	"github.com/fluxpack/fluxpack/oci/cosign"
	"github.com/fluxpack/fluxpack/oci/notation"
	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/review"
	"github.com/fluxpack/fluxpack/substitute"
)

// TestInvalidOptionIsOneSentinel: every public package's ErrInvalidOption
// is errdefs.ErrInvalidOption, and an option each package refuses matches
// it, and every other package's name for it, with errors.Is.
func TestInvalidOptionIsOneSentinel(t *testing.T) {
	names := map[string]error{
		"oci": oci.ErrInvalidOption, "fleet": fleet.ErrInvalidOption, "fluxbuild": fluxbuild.ErrInvalidOption,
		"fluxrepo": fluxrepo.ErrInvalidOption, "layering": layering.ErrInvalidOption, "lint": lint.ErrInvalidOption,
		"outputs": outputs.ErrInvalidOption, "substitute": substitute.ErrInvalidOption, "review": review.ErrInvalidOption,
	}
	for pkg, sentinel := range names {
		assert.Same(t, errdefs.ErrInvalidOption, sentinel, "%s.ErrInvalidOption is a sentinel of its own", pkg)
	}

	missing := filepath.Join(t.TempDir(), "none")
	for _, tt := range []struct {
		pkg  string
		call func(t *testing.T) error
	}{
		{"oci", func(t *testing.T) error {
			_, err := oci.Push(t.Context(), t.TempDir(), "oci://127.0.0.1:1/x:v1", oci.WithTags("bad tag"))
			return err
		}},
		{"oci/cosign", func(*testing.T) error { _, err := cosign.NewSigner(nil); return err }},
		{"oci/notation", func(*testing.T) error { _, err := notation.NewSigner(nil, nil); return err }},
		{"fleet", func(t *testing.T) error { _, err := fleet.Push(t.Context(), nil, fleet.Jobs(0)); return err }},
		{"fluxbuild", func(t *testing.T) error {
			_, err := fluxbuild.Build(t.Context(), fluxbuild.Source{}, nil, fluxbuild.WithLogger(nil))
			return err
		}},
		{"fluxrepo", func(t *testing.T) error {
			_, err := fluxrepo.Read(t.Context(), missing, fluxrepo.WithLogger(nil))
			return err
		}},
		{"layering", func(*testing.T) error { _, err := layering.New("platform", nil).Build(); return err }},
		{"lint", func(t *testing.T) error {
			_, err := lint.Stack(t.Context(), layering.New("platform", nil), t.TempDir(), lint.WithExistingNamespaces("Not A Namespace"))
			return err
		}},
		{"outputs", func(t *testing.T) error {
			file := filepath.Join(t.TempDir(), "outputs.json")
			require.NoError(t, os.WriteFile(file, []byte("{}"), 0o600))
			_, err := outputs.Read(file, outputs.WithFormat("bogus"))
			return err
		}},
		{"substitute", func(*testing.T) error { _, err := substitute.NewSubstituter(nil); return err }},
		{"review", func(t *testing.T) error {
			_, err := review.Compare(t.Context(), t.TempDir(), t.TempDir(), ".", review.WithStripAttrs("["))
			return err
		}},
	} {
		t.Run(tt.pkg, func(t *testing.T) {
			err := tt.call(t)
			require.Error(t, err, "%s: an invalid option was accepted", tt.pkg)
			for pkg, sentinel := range names {
				assert.True(t, errors.Is(err, sentinel), "%s's error %q is not %s.ErrInvalidOption", tt.pkg, err, pkg)
			}
		})
	}
}

func TestNonEmpty(t *testing.T) {
	type config struct{ dir string }
	field := func(c *config) *string { return &c.dir }
	var c config
	err := errdefs.NonEmpty("WithDir", "directory", "", field)(&c)
	require.ErrorIs(t, err, errdefs.ErrInvalidOption)
	require.EqualError(t, err, "WithDir: empty directory")
	require.Empty(t, c.dir)
	require.NoError(t, errdefs.NonEmpty("WithDir", "directory", "out", field)(&c))
	require.Equal(t, "out", c.dir)
}

func TestNonNil(t *testing.T) {
	type config struct {
		w   *strings.Builder
		str fmt.Stringer
	}
	w := func(c *config) **strings.Builder { return &c.w }
	str := func(c *config) *fmt.Stringer { return &c.str }
	var c config
	err := errdefs.NonNil("WithWriter", "writer", nil, w)(&c)
	require.ErrorIs(t, err, errdefs.ErrInvalidOption)
	require.EqualError(t, err, "WithWriter: nil writer")
	require.EqualError(t, errdefs.NonNil[config, fmt.Stringer]("WithStringer", "stringer", nil, str)(&c), "WithStringer: nil stringer")
	b := new(strings.Builder)
	require.NoError(t, errdefs.NonNil("WithWriter", "writer", b, w)(&c))
	require.NoError(t, errdefs.NonNil[config, fmt.Stringer]("WithStringer", "stringer", b, str)(&c))
	require.Same(t, b, c.w)
	require.Equal(t, fmt.Stringer(b), c.str)
}

func TestNoneEmpty(t *testing.T) {
	type config struct{ files []string }
	field := func(c *config) *[]string { return &c.files }
	c := config{files: []string{"a"}}
	err := errdefs.NoneEmpty("WithFiles", "file", []string{"b", ""}, field)(&c)
	require.ErrorIs(t, err, errdefs.ErrInvalidOption)
	require.EqualError(t, err, "WithFiles: empty file")
	require.Equal(t, []string{"a"}, c.files, "a refused list adds nothing")
	require.NoError(t, errdefs.NoneEmpty("WithFiles", "file", []string{"b", "c"}, field)(&c))
	require.Equal(t, []string{"a", "b", "c"}, c.files)
}

// option is an option interface as the public packages declare them.
type option interface{ apply(*[]string) error }

type appendOption string

func (o appendOption) apply(c *[]string) error {
	if o == "bad" {
		return errors.New("bad option")
	}
	*c = append(*c, string(o))
	return nil
}

func TestApplyOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []option
		want    []string
		wantErr string
		invalid bool
	}{
		{name: "in order", opts: []option{appendOption("a"), appendOption("b")}, want: []string{"a", "b"}},
		{name: "none", want: nil},
		{name: "nil option", opts: []option{appendOption("a"), nil, appendOption("b")}, want: []string{"a"}, wantErr: "nil Option", invalid: true},
		{name: "stops at the first error", opts: []option{appendOption("bad"), appendOption("a")}, wantErr: "bad option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := errdefs.ApplyOptions(&got, tt.opts, option.apply, "nil Option")
			assert.Equal(t, tt.want, got)
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
			assert.Equal(t, tt.invalid, errors.Is(err, errdefs.ErrInvalidOption))
		})
	}
}

func TestPlace(t *testing.T) {
	require.Equal(t, "a.yaml:3", errdefs.Place("a.yaml", 3))
	require.Equal(t, "a.yaml", errdefs.Place("a.yaml", 0))
	require.Empty(t, errdefs.Place("", 3))
}
