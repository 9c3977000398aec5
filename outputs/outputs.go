package outputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fluxpack/fluxpack/internal/errdefs"
	"github.com/fluxpack/fluxpack/internal/inputfile"
	"github.com/fluxpack/fluxpack/substitute"
)

// Format is the format of an IaC outputs file.
type Format string

// The formats ReadOutputs understands.
const (
	// FormatAuto detects the format from the content (and the .env
	// extension). Pulumi's output cannot be told apart from a plain JSON map,
	// so auto-detected JSON maps refuse "[secret]" placeholders as Pulumi does.
	FormatAuto Format = ""
	// FormatTerraform is `terraform output -json` or `tofu output -json`:
	// {"name": {"sensitive": bool, "type": T, "value": V}}.
	FormatTerraform Format = "terraform"
	// FormatPulumi is `pulumi stack output --json [--show-secrets]`: a flat
	// JSON map; "[secret]" is an error.
	FormatPulumi Format = "pulumi"
	// FormatCloudFormation is `aws cloudformation describe-stacks`:
	// {"Stacks": [{"Outputs": [{"OutputKey", "OutputValue"}]}]}.
	FormatCloudFormation Format = "cloudformation"
	// FormatTofuController is the Secret tofu-controller writes with
	// spec.writeOutputsToSecret (YAML or JSON): every key an output, with a
	// "<key>__type" entry for values that are not strings. All of its
	// outputs are sensitive.
	FormatTofuController Format = "tofu-controller"
	// FormatEnv is a .env file: NAME=value lines, "#" comments, optional
	// "export ", values optionally in single (literal) or double quotes
	// (with \n, \t, \", \\ escapes).
	FormatEnv Format = "env"
	// FormatYAML is a YAML map of name to value.
	FormatYAML Format = "yaml"
	// FormatJSON is a JSON object of name to value.
	FormatJSON Format = "json"
)

// Formats lists every format but FormatAuto, for flag help.
func Formats() []Format {
	return []Format{FormatTerraform, FormatPulumi, FormatCloudFormation, FormatTofuController, FormatEnv, FormatYAML, FormatJSON}
}

// Output is one IaC output, ready to be a Flux variable.
type Output struct {
	// Name is the output's name in the IaC tool.
	Name string
	// Var is the Flux variable name: Name mapped by VarName, or renamed.
	Var string
	// Value is the value as Flux substitutes it (see the package doc for
	// the encoding of numbers, lists, maps and multi-line strings).
	Value string
	// Sensitive is Terraform's sensitive flag (always true for
	// tofu-controller Secrets). Sensitive values go to the Secret only.
	Sensitive bool
	// Line is the line of the output's name in the file, 0 if unknown.
	Line int

	raw any // decoded value: string, json.Number, bool, nil, []any, map[string]any
}

// Outputs are the outputs read from one file, sorted by Var.
type Outputs struct {
	// File is the path the outputs were read from.
	File string
	// Format is the format used, detected or given.
	Format Format
	// List holds the outputs, sorted by Var.
	List []Output
}

// Lookup returns the output named name (its IaC name or its variable name).
func (o *Outputs) Lookup(name string) (Output, bool) {
	for _, out := range o.List {
		if out.Name == name {
			return out, true
		}
	}
	for _, out := range o.List {
		if out.Var == name {
			return out, true
		}
	}
	return Output{}, false
}

// ReadOption configures Read, Parse and RenderFile. Only this package
// implements it; each option checks its own input.
type ReadOption interface{ applyToRead(*readOptions) error }

type readOption func(*readOptions) error

func (f readOption) applyToRead(o *readOptions) error { return f(o) }

type readOptions struct {
	format    Format
	renames   map[string]string
	sensitive []string
}

// WithFormat reads the file as f instead of detecting its format.
func WithFormat(f Format) ReadOption {
	return readOption(func(o *readOptions) error {
		if f != FormatAuto && !slices.Contains(Formats(), f) {
			return fmt.Errorf("%w %q: %w (want one of %s)", ErrInvalidOption, f, ErrUnknownFormat, formatList())
		}
		o.format = f
		return nil
	})
}

// WithRename maps outputs to variable names explicitly, output name (as the
// IaC tool spells it) to variable name. It wins over the VarName rule; a
// target that is not a valid Flux variable name is an error, and so is a
// source that names no output.
func WithRename(renames map[string]string) ReadOption {
	return readOption(func(o *readOptions) error {
		for from, to := range renames {
			if !substitute.ValidVarName(to) {
				return fmt.Errorf("%w: rename %s=%s: %w", ErrInvalidOption, from, to, errdefs.Kind(ErrInvalidName, "invalid variable name %q", to))
			}
			if o.renames == nil {
				o.renames = map[string]string{}
			}
			o.renames[from] = to
		}
		return nil
	})
}

// WithSensitive marks the named outputs (as the IaC tool spells them)
// sensitive, so they go to the Secret only. Formats that do not mark secrets
// need it: Pulumi's --show-secrets JSON, CloudFormation, plain files. A name
// that is no output of the file is an error.
func WithSensitive(names ...string) ReadOption {
	return readOption(func(o *readOptions) error {
		for _, n := range names {
			if n == "" {
				return fmt.Errorf("%w: sensitive: %w", ErrInvalidOption, errdefs.Kind(ErrInvalidName, "invalid variable name: an empty output name"))
			}
		}
		o.sensitive = append(o.sensitive, names...)
		return nil
	})
}

func formatList() string {
	s := make([]string, len(Formats()))
	for i, f := range Formats() {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

// Read reads an IaC outputs file. Problems are *FileError wrapping
// one of the Err* sentinels; values never appear in errors.
func Read(path string, opts ...ReadOption) (*Outputs, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading outputs: %w", err)
	}
	return Parse(path, data, opts...)
}

// Parse is Read on data already read; path names it in
// errors and picks FormatEnv for *.env files when the format is auto.
func Parse(path string, data []byte, opts ...ReadOption) (*Outputs, error) {
	var o readOptions
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("%w: nil ReadOption", ErrInvalidOption)
		}
		if err := opt.applyToRead(&o); err != nil {
			return nil, err
		}
	}
	format := o.format
	if format == FormatAuto {
		format = detect(path, data)
	}
	var (
		list []Output
		err  error
	)
	switch format {
	case FormatTerraform:
		list, err = readTerraform(data)
	case FormatPulumi:
		list, err = readFlatJSON(data, true)
	case FormatJSON:
		list, err = readFlatJSON(data, o.format == FormatAuto)
	case FormatCloudFormation:
		list, err = readCloudFormation(data)
	case FormatTofuController:
		list, err = readTofuSecret(data)
	case FormatEnv:
		list, err = readEnv(data)
	case FormatYAML:
		list, err = readYAMLMap(data, o.format == FormatAuto)
	default:
		err = fmt.Errorf("%w: not Terraform, Pulumi, CloudFormation, tofu-controller, .env, YAML or JSON outputs", ErrUnknownFormat)
	}
	if err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, fileErr(path, le.line, le.err)
		}
		return nil, fileErr(path, 0, err)
	}
	outs := &Outputs{File: path, Format: format, List: list}
	if err := outs.markSensitive(o.sensitive); err != nil {
		return nil, err
	}
	if err := outs.name(o.renames); err != nil {
		return nil, err
	}
	return outs, nil
}

// markSensitive sets Sensitive on the named outputs.
func (o *Outputs) markSensitive(names []string) error {
	for _, n := range names {
		found := false
		for i := range o.List {
			if o.List[i].Name == n {
				o.List[i].Sensitive, found = true, true
			}
		}
		if !found {
			return fileErr(o.File, 0, fmt.Errorf("sensitive %s: %w %q", n, ErrMissingOutput, n))
		}
	}
	return nil
}

// lineError carries a line up to ParseOutputs, which adds the path.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

func atLine(line int, err error) error {
	if line <= 0 {
		return err
	}
	return &lineError{line: line, err: err}
}

// name gives every output its variable name and refuses collisions.
func (o *Outputs) name(renames map[string]string) error {
	used := map[string]bool{}
	for i := range o.List {
		out := &o.List[i]
		if to, ok := renames[out.Name]; ok {
			out.Var = to
			used[out.Name] = true
		} else {
			out.Var = substitute.VarName(out.Name)
		}
		if out.Var == "" {
			return fileErr(o.File, out.Line, errdefs.Kind(ErrInvalidName, "invalid variable name: an output has an empty name"))
		}
	}
	for _, from := range sortedKeys(renames) {
		if !used[from] {
			return fileErr(o.File, 0, fmt.Errorf("rename %s=%s: %w %q", from, renames[from], ErrMissingOutput, from))
		}
	}
	sort.SliceStable(o.List, func(i, j int) bool { return o.List[i].Var < o.List[j].Var })
	for i := 1; i < len(o.List); i++ {
		a, b := o.List[i-1], o.List[i]
		if a.Var == b.Var {
			if a.Line > b.Line {
				a, b = b, a
			}
			return fileErr(o.File, b.Line, fmt.Errorf("%w: outputs %s and %s both map to variable %q; rename one (WithRename %s=NEW)",
				ErrDuplicateName, describe(a), describe(b), a.Var, b.Name))
		}
	}
	return nil
}

func describe(o Output) string {
	if o.Line > 0 {
		return fmt.Sprintf("%q (line %d)", o.Name, o.Line)
	}
	return fmt.Sprintf("%q", o.Name)
}

// detect guesses the format of data.
func detect(path string, data []byte) Format {
	if strings.EqualFold(filepath.Ext(path), ".env") || strings.HasPrefix(filepath.Base(path), ".env") {
		return FormatEnv
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &top); err != nil {
			return FormatJSON // let the JSON reader report the syntax error
		}
		return detectMap(top, FormatJSON)
	}
	if looksLikeEnv(data) {
		return FormatEnv
	}
	var top map[string]json.RawMessage
	if j, err := yamlToJSON(data); err == nil && json.Unmarshal(j, &top) == nil {
		return detectMap(top, FormatYAML)
	}
	return FormatYAML
}

func detectMap(top map[string]json.RawMessage, plain Format) Format {
	if isSecret(top) {
		return FormatTofuController
	}
	if raw, ok := top["Stacks"]; ok && len(top) == 1 && bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return FormatCloudFormation
	}
	if len(top) > 0 {
		tf := true
		for _, raw := range top {
			var meta map[string]json.RawMessage
			if json.Unmarshal(raw, &meta) != nil {
				tf = false
				break
			}
			_, hasValue := meta["value"]
			_, hasType := meta["type"]
			_, hasSensitive := meta["sensitive"]
			if !hasValue || !(hasType || hasSensitive) {
				tf = false
				break
			}
		}
		if tf && plain == FormatJSON {
			return FormatTerraform
		}
	}
	return plain
}

func isSecret(top map[string]json.RawMessage) bool {
	var kind, apiVersion string
	_ = json.Unmarshal(top["kind"], &kind)
	_ = json.Unmarshal(top["apiVersion"], &apiVersion)
	return kind == "Secret" && apiVersion == "v1"
}

var envLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(export\s+)?[^\s=#]+\s*=`) })

func looksLikeEnv(data []byte) bool {
	seen := false
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if !envLineRE().MatchString(line) {
			return false
		}
		seen = true
	}
	return seen
}

// decodeJSON decodes one JSON value keeping numbers exact.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// jsonObject reads a top-level JSON object key by key, so that each key's
// line is known and duplicate keys are caught.
type jsonMember struct {
	key  string
	line int
	raw  json.RawMessage
}

func readJSONObject(data []byte) ([]jsonMember, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonSyntax(data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, atLine(lineAt(data, dec.InputOffset()), fmt.Errorf("%w: want a JSON object at the top", ErrWrongShape))
	}
	var members []jsonMember
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonSyntax(data, dec, err)
		}
		key := tok.(string) // object keys are strings once Token succeeds
		line := lineAt(data, dec.InputOffset())
		if first, dup := seen[key]; dup {
			return nil, atLine(line, fmt.Errorf("%w: key %q appears twice (first at line %d)", ErrMalformed, key, first))
		}
		seen[key] = line
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonSyntax(data, dec, err)
		}
		members = append(members, jsonMember{key: key, line: line, raw: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonSyntax(data, dec, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, atLine(lineAt(data, dec.InputOffset()), fmt.Errorf("%w: data after the top-level JSON object", ErrMalformed))
	}
	return members, nil
}

// jsonSyntax turns a JSON error into ErrMalformed at its line. The message
// of encoding/json never quotes the input's values, only a character.
func jsonSyntax(data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return atLine(lineAt(data, se.Offset), fmt.Errorf("%w: %s", ErrMalformed, se.Error()))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return atLine(lineAt(data, int64(len(data))), fmt.Errorf("%w: unexpected end of JSON input", ErrMalformed))
	}
	return atLine(lineAt(data, dec.InputOffset()), fmt.Errorf("%w: invalid JSON", ErrMalformed))
}

func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

func readTerraform(data []byte) ([]Output, error) {
	members, err := readJSONObject(data)
	if err != nil {
		return nil, err
	}
	var list []Output
	for _, m := range members {
		var meta struct {
			Sensitive *bool           `json:"sensitive"`
			Value     json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(m.raw, &meta); err != nil || meta.Value == nil {
			return nil, atLine(m.line, fmt.Errorf("%w: output %q: want {\"sensitive\": bool, \"type\": …, \"value\": …}", ErrWrongShape, m.key))
		}
		v, err := decodeJSON(meta.Value)
		if err != nil {
			return nil, atLine(m.line, fmt.Errorf("%w: output %q: %w", ErrMalformed, m.key, err))
		}
		if v == nil {
			continue // Terraform omits null outputs from its own JSON
		}
		list = append(list, Output{Name: m.key, Line: m.line, Sensitive: meta.Sensitive != nil && *meta.Sensitive, raw: v})
	}
	return finish(list)
}

// readFlatJSON reads a JSON object of name → value (Pulumi, plain JSON).
func readFlatJSON(data []byte, refuseSecretPlaceholder bool) ([]Output, error) {
	members, err := readJSONObject(data)
	if err != nil {
		return nil, err
	}
	var list []Output
	for _, m := range members {
		v, err := decodeJSON(m.raw)
		if err != nil {
			return nil, atLine(m.line, fmt.Errorf("%w: output %q: %w", ErrMalformed, m.key, err))
		}
		if refuseSecretPlaceholder && hasSecretPlaceholder(v) {
			return nil, atLine(m.line, fmt.Errorf("output %q: %w (run pulumi stack output --json --show-secrets)", m.key, ErrSecretPlaceholder))
		}
		list = append(list, Output{Name: m.key, Line: m.line, raw: v})
	}
	return finish(list)
}

func hasSecretPlaceholder(v any) bool {
	switch v := v.(type) {
	case string:
		return v == "[secret]"
	case []any:
		return slices.ContainsFunc(v, hasSecretPlaceholder)
	case map[string]any:
		for _, e := range v {
			if hasSecretPlaceholder(e) {
				return true
			}
		}
	}
	return false
}

func readCloudFormation(data []byte) ([]Output, error) {
	members, err := readJSONObject(data)
	if err != nil {
		return nil, err
	}
	var stacksRaw json.RawMessage
	line := 0
	for _, m := range members {
		if m.key == "Stacks" {
			stacksRaw, line = m.raw, m.line
		}
	}
	var stacks []struct {
		StackName string `json:"StackName"`
		Outputs   []struct {
			OutputKey   *string `json:"OutputKey"`
			OutputValue *string `json:"OutputValue"`
		} `json:"Outputs"`
	}
	if stacksRaw == nil || json.Unmarshal(stacksRaw, &stacks) != nil {
		return nil, atLine(line, fmt.Errorf(`%w: want {"Stacks": [{"Outputs": [{"OutputKey": "…", "OutputValue": "…"}]}]}`, ErrWrongShape))
	}
	var list []Output
	for _, s := range stacks {
		for i, o := range s.Outputs {
			if o.OutputKey == nil || o.OutputValue == nil {
				return nil, atLine(line, fmt.Errorf("%w: stack %q: output %d has no OutputKey or OutputValue", ErrWrongShape, s.StackName, i))
			}
			list = append(list, Output{Name: *o.OutputKey, raw: *o.OutputValue})
		}
	}
	return finish(list)
}

// finish encodes every value.
func finish(list []Output) ([]Output, error) {
	for i := range list {
		v, err := Encode(list[i].raw)
		if err != nil {
			return nil, atLine(list[i].Line, fmt.Errorf("output %q: %w", list[i].Name, err))
		}
		list[i].Value = v
	}
	return list, nil
}

// Encode turns a decoded JSON value into the string Flux substitutes:
//
//   - a string is itself, unless it holds a line break or another control
//     character (but tab): then it is a JSON string literal ("…\n…"),
//     because Flux deletes every "\n" of a variable's value, and a
//     double-quoted YAML scalar substituted unquoted reads back as the
//     original string;
//   - a number is its exact text (json.Number), never a float64;
//   - true and false are "true" and "false"; null is "" (YAML reads an
//     empty unquoted scalar as null);
//   - a list or map is compact JSON with sorted keys, no HTML escaping and
//     no line breaks: substituted unquoted it is a YAML flow collection
//     equal to the original; inside a string it stays the JSON text.
func Encode(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		if needsQuoting(v) {
			return compactJSON(v)
		}
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case []any, map[string]any:
		return compactJSON(v)
	default:
		return "", fmt.Errorf("%w: value of type %T", ErrWrongShape, v)
	}
}

func needsQuoting(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f {
			return true
		}
	}
	return false
}

func compactJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
