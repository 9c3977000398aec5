package render

import (
	sigyaml "sigs.k8s.io/yaml"

	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/fluxpack/fluxpack/internal/atomicfile"
	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/testhook"
	"github.com/fluxpack/fluxpack/layering"
	"github.com/fluxpack/fluxpack/outputs"
	"github.com/fluxpack/fluxpack/stackfile"
)

// Option configures StackFile. Only this package implements it;
// an option given a value it cannot use makes StackFile fail.
type Option interface{ applyToRender(*renderConfig) error }

type renderConfig struct {
	outputs     string
	secretFile  string
	receiverURL string
	secretDir   string // Stacks'
	verifyKey   string
	// WithVerifyNotation's.
	notationPolicy string
	notationCerts  []string
}

// newConfig applies opts, refusing a nil one.
func newConfig(opts []Option) (*renderConfig, error) {
	cfg := &renderConfig{}
	if err := errdefs.ApplyOptions(cfg, opts, Option.applyToRender, "nil Option"); err != nil {
		return nil, err
	}
	return cfg, nil
}

type funcRender func(*renderConfig) error

func (f funcRender) applyToRender(c *renderConfig) error { return f(c) }

// WithOutputs reads the IaC outputs of the stack's vars entry from file
// instead of the file the stack names (the stack must have exactly one
// vars entry).
func WithOutputs(file string) Option {
	return funcRender(errdefs.NonEmpty("WithOutputs", "file name", file, func(c *renderConfig) *string { return &c.outputs }))
}

// WithSecretFile writes the vars Secrets (the sensitive IaC outputs) to
// file, mode 0600, which must lie outside the rendered directory: a
// rendered directory is meant to be pushed, and a plaintext Secret must not
// be. Without it sensitive outputs are left out (Rendered.LeftOut).
func WithSecretFile(file string) Option {
	return funcRender(errdefs.NonEmpty("WithSecretFile", "file name", file, func(c *renderConfig) *string { return &c.secretFile }))
}

// WithReceiverURL sets where notification-controller reaches its webhook
// receiver, for the wake Secret of a stack with wake (WakeDependents):
// instead of the stack's receiverURL or DefaultReceiverURL.
func WithReceiverURL(u string) Option {
	return funcRender(func(c *renderConfig) error {
		if err := layering.CheckReceiverURL(u); err != nil {
			return errdefs.Kind(layering.ErrInvalidOption, "WithReceiverURL: invalid receiver URL %q: %v", u, err)
		}
		c.receiverURL = u
		return nil
	})
}

// Rendered is what StackFile wrote.
type Rendered struct {
	Plan *layering.Plan
	// Files are the files written, relative to the directory, in order.
	Files []string
	// SecretFile is the file the vars Secrets went to ("" when none).
	SecretFile string
	// LeftOut names the sensitive outputs (variable names, never values)
	// that were not written because no WithSecretFile was given.
	LeftOut []string
	// WakeLeftOut is true when the stack wakes dependents but no
	// WithSecretFile was given for the wake Secret: without it the layers
	// poll, as in a stack without wake.
	WakeLeftOut bool
}

// StackFile reads a stack file, builds it, checks that every layer's path
// exists next to the file, and writes the result to dir (WriteDir).
// For each vars entry with an IaC outputs file, package substitute renders
// the ConfigMap of its plain outputs to vars/configmap-<name>.yaml (listed
// in kustomization.yaml, so the root Kustomization applies it with the
// layers), and the Secret of its sensitive ones to WithSecretFile's file.
// A stack with wake (WakeDependents) adds the wake Secret to that file: its
// token is the one the file holds already, so rendering again changes
// nothing, or a new random one.
// WithVerifyKey adds the Secret of the public key the stack's source
// verifies with (source.verify) to that file too, WithVerifyNotation that
// of its notation trust policy and certificates.
// Any problem is an error and nothing is written. So is ctx's end before
// dir and the secret file are renamed into place: an interrupted render
// leaves them as they were, and no temporary file.
func StackFile(ctx context.Context, path, dir string, opts ...Option) (*Rendered, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	b, err := stackfile.Load(path)
	if err != nil {
		return nil, err
	}
	r, err := prepare(b, cfg)
	if err != nil {
		return nil, err
	}
	testhook.At(ctx, testhook.Prepared)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	st, err := r.stage(dir, cfg)
	if err != nil {
		return nil, err
	}
	defer st.abort() // a no-op once committed
	testhook.At(ctx, testhook.Staged)
	if err := interrupted(ctx, dir); err != nil {
		return nil, err
	}
	return st.commit()
}

// interrupted is ctx's error, said as what it stopped: the writing of dir,
// before anything was put in place.
func interrupted(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("writing %s: stopped before anything was put in place: %w", dir, err)
	}
	return nil
}

// prepared is a stack rendered in memory: its files, and the Secrets for
// the secret file.
type prepared struct {
	out     *Rendered
	files   []layering.File
	secrets []byte
}

// prepare renders a loaded stack in memory, failing on any problem.
func prepare(b *layering.Builder, cfg *renderConfig) (*prepared, error) {
	plan, err := b.Build()
	if err != nil {
		return nil, err
	}
	if err := plan.CheckPaths(plan.Dir); err != nil {
		return nil, err
	}
	out := &Rendered{Plan: plan}
	extra, secrets, err := renderVars(plan, cfg, out)
	if err != nil {
		return nil, err
	}
	files, err := plan.Files(extra...)
	if err != nil {
		return nil, err
	}
	if plan.Wake != nil {
		if cfg.secretFile == "" {
			out.WakeLeftOut = true
		} else {
			data, err := wakeSecret(plan.Wake, cfg)
			if err != nil {
				return nil, err
			}
			if len(secrets) > 0 {
				secrets = append(secrets, "---\n"...)
			}
			secrets = append(secrets, data...)
		}
	}
	if cfg.verifyKey != "" || cfg.notationCerts != nil {
		if cfg.verifyKey != "" && cfg.notationCerts != nil {
			return nil, errdefs.Kind(layering.ErrInvalidOption, "WithVerifyKey (cosign) and WithVerifyNotation exclude each other")
		}
		if cfg.secretFile == "" {
			return nil, errdefs.Kind(layering.ErrInvalidOption, "WithVerifyKey, WithVerifyNotation: the verification Secret goes to the secret file, outside the pushed directory: give WithSecretFile")
		}
		render := verifySecret
		if cfg.notationCerts != nil {
			render = notationSecret
		}
		data, err := render(plan, cfg)
		if err != nil {
			return nil, err
		}
		if len(secrets) > 0 {
			secrets = append(secrets, "---\n"...)
		}
		secrets = append(secrets, data...)
	}
	return &prepared{out: out, files: files, secrets: secrets}, nil
}

// write writes a prepared stack to dir and its Secrets to the secret
// file, both or neither.
func (r *prepared) write(dir string, cfg *renderConfig) (*Rendered, error) {
	st, err := r.stage(dir, cfg)
	if err != nil {
		return nil, err
	}
	defer st.abort()
	return st.commit()
}

// stagedRender is a prepared stack written beside dir and the secret
// file, not yet in place.
type stagedRender struct {
	out    *Rendered
	files  *stagedFiles
	secret *atomicfile.Staged // nil without a secret file to write
	// secretFile is the secret file as given (WithSecretFile).
	secretFile string
	paths      []string
}

// stage writes a prepared stack beside dir and its Secrets beside the
// secret file, for commit to put both in place.
func (r *prepared) stage(dir string, cfg *renderConfig) (*stagedRender, error) {
	s := &stagedRender{out: r.out}
	if cfg.secretFile != "" && len(r.secrets) > 0 {
		st, err := stageSecret(cfg.secretFile, dir, r.secrets)
		if err != nil {
			return nil, err
		}
		s.secret, s.secretFile = st, cfg.secretFile
	}
	files, err := stageFiles(dir, r.files)
	if err != nil {
		s.abort()
		return nil, err
	}
	s.files = files
	for _, f := range r.files {
		s.paths = append(s.paths, f.Path)
	}
	return s, nil
}

// commit renames the staged directory, then the secret file, into place.
func (s *stagedRender) commit() (*Rendered, error) {
	if err := s.files.commit(); err != nil {
		s.abort()
		return nil, err
	}
	if s.secret != nil {
		if err := s.secret.Commit(); err != nil {
			return nil, fmt.Errorf("writing the vars Secret to %s: %w", s.secretFile, err)
		}
		s.out.SecretFile = s.secretFile
	}
	s.out.Files = append(s.out.Files, s.paths...)
	return s.out, nil
}

// abort removes what is staged, in the reverse order of stage; after
// commit it does nothing.
func (s *stagedRender) abort() {
	if s.files != nil {
		s.files.abort()
	}
	if s.secret != nil {
		s.secret.Abort()
	}
}

// renderVars renders the vars entries that have IaC outputs: the
// ConfigMaps as files under vars/, the Secrets as a YAML stream.
func renderVars(p *layering.Plan, cfg *renderConfig, out *Rendered) ([]layering.File, []byte, error) {
	vars := p.Vars
	if cfg.outputs != "" {
		if len(vars) != 1 {
			return nil, nil, errdefs.Kind(layering.ErrInvalidOption, "stack %q: an outputs file needs exactly one vars entry in the stack, it has %d", p.Name, len(vars))
		}
		vars = []layering.VarsEntry{{Name: vars[0].Name, Outputs: cfg.outputs, File: vars[0].File, Line: vars[0].Line}}
	}
	var extra []layering.File
	var secrets []byte
	for _, v := range vars {
		if v.Outputs == "" {
			continue
		}
		file := v.Outputs
		if cfg.outputs == "" && p.Dir != "" && !filepath.IsAbs(file) {
			file = filepath.Join(p.Dir, filepath.FromSlash(file))
		}
		outs, err := outputs.Read(file)
		if err != nil {
			return nil, nil, fmt.Errorf("rendering vars %q: %w", v.Name, err)
		}
		m, err := outs.Render(v.Name, p.Namespace, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("rendering vars %q: %w", v.Name, err)
		}
		data, err := marshal(m.ConfigMap)
		if err != nil {
			return nil, nil, fmt.Errorf("rendering vars %q: %w", v.Name, err)
		}
		extra = append(extra, layering.File{Path: "vars/configmap-" + v.Name + ".yaml", Data: data})
		if m.Secret == nil {
			continue
		}
		if cfg.secretFile == "" {
			out.LeftOut = append(out.LeftOut, sortedKeys(m.Secret.Data)...)
			continue
		}
		data, err = marshal(m.Secret)
		if err != nil {
			return nil, nil, fmt.Errorf("rendering vars %q: %w", v.Name, err)
		}
		if len(secrets) > 0 {
			secrets = append(secrets, "---\n"...)
		}
		secrets = append(secrets, data...)
	}
	return extra, secrets, nil
}

// stageSecret writes data to a temporary file beside file (0600), to be
// renamed into place or removed. file may not lie inside dir.
func stageSecret(file, dir string, data []byte) (*atomicfile.Staged, error) {
	fail := func(err error) (*atomicfile.Staged, error) {
		return nil, fmt.Errorf("writing the vars Secret to %s: %w", file, err)
	}
	af, err := filepath.Abs(file)
	if err != nil {
		return fail(err)
	}
	ad, err := filepath.Abs(dir)
	if err != nil {
		return fail(err)
	}
	if rel, err := filepath.Rel(ad, af); err == nil && filepath.IsLocal(rel) {
		return fail(errdefs.Kind(layering.ErrInvalidOption, "it is inside the rendered directory %s, which is meant to be pushed", dir))
	}
	st, err := atomicfile.Stage(af, data, 0o600)
	if err != nil {
		return fail(err)
	}
	return st, nil
}

// marshal is the YAML of obj, as kubectl writes it.
func marshal(obj any) ([]byte, error) { return sigyaml.Marshal(obj) }

// sortedKeys are m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
