// Package strictyaml decodes fluxpack's own files (stack and fleet files)
// strictly: it walks the YAML nodes along the Go type of the schema, so
// every unknown or duplicate field, wrong kind of value or bad duration is
// reported with its line (file.yaml:12), all of them at once, and hands
// encoding/json a value to decode. Hooks let a schema accept a shorthand
// for one of its types (a dependency given as a plain string).
//
// It knows no schema and checks no required field: its callers (package
// stackfile, package fleet) do.
package strictyaml
