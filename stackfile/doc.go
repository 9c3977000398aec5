// Package stackfile is the stack file format: a platform's bootstrap order
// as one YAML document (apiVersion fluxpack.dev/v1alpha1, kind Stack),
// read into a layering.Builder and written back from one.
//
//	b, err := stackfile.Load("platform/stack.yaml") // or Parse(name, data)
//	plan, err := b.Build()
//	data, err := stackfile.Marshal(b)                // the stack as a file again
//
// Load gives the same Builder a Go program would build (one model, one
// validation): Build, lint and render work on it alike, and every layer
// and vars entry remembers its file and line, which problems name
// (stack.yaml:12: layer "crs": …). Layer paths and outputs files are
// relative to the file's directory (Builder.Dir). Once reads a file once
// for many Builders (package fleet asks for one per cluster).
//
// Invariants:
//
//   - Decoding is strict and reports every problem at once, each a
//     *layering.FileError with its line, wrapped in ErrInvalid: unknown or
//     duplicate fields, values of the wrong type, bad durations, missing
//     required fields, a Flux Kustomization given instead of a stack. A
//     dependsOn entry may be the layer's name or {name, readyExpr}.
//   - Field names are Flux's (Kustomization, OCIRepository, HelmRelease)
//     wherever Flux has one; docs/stack.md documents every field from the
//     schema types (Doc, Layer).
//   - Load of Marshal's output builds the same Plan: Marshal writes each
//     option as given (Builder.Settings), not the defaults Build fills in.
//   - Layer is also the schema of a fleet file's extraLayers; Layer.Options
//     are the builder options an entry stands for.
//
// It does not render (package render), lint (package lint) or resolve
// fleets (package fleet), and reads no file but the one it is given.
package stackfile
