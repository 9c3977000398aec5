package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/layering"
)

// WakeWritten is what WriteWake wrote, or what CheckWake found stale.
type WakeWritten struct {
	// Wake are the objects.
	Wake *layering.Wake
	// Dir is the folder of the wake objects.
	Dir string
	// Changed are its files (Wake.Files' paths) that were written because
	// they differed or did not exist; with CheckWake, those that would be.
	Changed []string
	// Unchanged are the files that already held what they should.
	Unchanged []string
	// SecretFile is where the wake Secret went ("" when WithSecretFile
	// was not given: the objects then wait for a Secret applied some other
	// way, and the layers poll until it is); SecretChanged says it was
	// written (a new token, or another receiver URL).
	SecretFile    string
	SecretChanged bool
}

// Stale reports whether CheckWake found a file to rewrite.
func (w *WakeWritten) Stale() bool { return len(w.Changed) > 0 }

// WriteWake writes the wake objects' folder (Wake.Files) to dir, each file
// only when its bytes change, so running it again for an unchanged graph
// writes nothing; files of dir that are not Wake.Files' are left alone.
// WithSecretFile writes the wake Secret there (0600, outside dir): with the
// token the file holds already, so the Receiver's URL stays, or a new
// random one; the file must hold nothing else. WithReceiverURL sets the
// Secret's receiver URL. Other Options are refused. Every file is
// written beside its place first and renamed into place only once all are:
// a failure, or ctx's end before then, leaves dir and the secret file as
// they were.
func WriteWake(ctx context.Context, w *layering.Wake, dir string, opts ...Option) (*WakeWritten, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	if cfg.outputs != "" || cfg.secretDir != "" || cfg.verifyKey != "" || cfg.notationCerts != nil {
		return nil, errdefs.Kind(layering.ErrInvalidOption, "WriteWake takes only WithSecretFile and WithReceiverURL")
	}
	out, files, err := compareWake(w, dir)
	if err != nil {
		return nil, err
	}
	var staged []*atomicfile.Staged
	defer func() {
		for _, st := range slices.Backward(staged) {
			st.Abort() // a no-op once committed; the last first, so a directory made for the first is empty
		}
	}()
	var secret *atomicfile.Staged
	if cfg.secretFile != "" {
		data, err := wakeSecretOnly(w, cfg)
		if err != nil {
			return nil, err
		}
		old, err := os.ReadFile(cfg.secretFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s: %w", cfg.secretFile, err)
		}
		out.SecretFile = cfg.secretFile
		if !bytes.Equal(old, data) {
			if secret, err = stageSecret(cfg.secretFile, dir, data); err != nil {
				return nil, err
			}
			staged = append(staged, secret)
			out.SecretChanged = true
		}
	}
	testhook.At(ctx, testhook.Prepared)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	var paths []string
	for _, f := range files {
		if !slices.Contains(out.Changed, f.Path) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		st, err := atomicfile.Stage(p, f.Data, 0o644)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", p, err)
		}
		staged, paths = append(staged, st), append(paths, p)
	}
	testhook.At(ctx, testhook.Staged)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	// The objects first, the Secret they read last.
	for i, st := range staged[len(staged)-len(paths):] {
		if err := st.Commit(); err != nil {
			return nil, fmt.Errorf("writing %s: %w", paths[i], err)
		}
	}
	if secret != nil {
		if err := secret.Commit(); err != nil {
			return nil, fmt.Errorf("writing the vars Secret to %s: %w", cfg.secretFile, err)
		}
	}
	return out, nil
}

// CheckWake compares dir with the wake objects' folder (Wake.Files) and
// writes nothing: Changed lists the files WriteWake would write. It does
// not read the Secret.
func CheckWake(w *layering.Wake, dir string) (*WakeWritten, error) {
	out, _, err := compareWake(w, dir)
	return out, err
}

func compareWake(w *layering.Wake, dir string) (*WakeWritten, []layering.File, error) {
	if w == nil {
		return nil, nil, errdefs.Kind(layering.ErrInvalidOption, "no wake objects: no Kustomization depends on another")
	}
	files, err := w.Files()
	if err != nil {
		return nil, nil, err
	}
	out := &WakeWritten{Wake: w, Dir: dir}
	for _, f := range files {
		old, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
		switch {
		case err == nil && bytes.Equal(old, f.Data):
			out.Unchanged = append(out.Unchanged, f.Path)
		case err == nil || errors.Is(err, fs.ErrNotExist):
			out.Changed = append(out.Changed, f.Path)
		default:
			return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
		}
	}
	return out, files, nil
}

// wakeSecretOnly renders the wake Secret for a secret file that holds it
// alone, keeping the file's token.
func wakeSecretOnly(w *layering.Wake, cfg *renderConfig) ([]byte, error) {
	secrets, err := secretsIn(cfg.secretFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", cfg.secretFile, err)
	}
	for _, s := range secrets {
		if s.Kind != "Secret" || s.Name != w.Receiver.Name || s.Namespace != w.Receiver.Namespace {
			return nil, errdefs.Kind(layering.ErrInvalidOption, "the secret file %s holds %s %s/%s: it must hold the wake Secret alone (Secret/%s/%s)",
				cfg.secretFile, s.Kind, s.Namespace, s.Name, w.Receiver.Namespace, w.Receiver.Name)
		}
	}
	return wakeSecret(w, cfg)
}
