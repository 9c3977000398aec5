package render

import (
	corev1 "k8s.io/api/core/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/fluxpack/fluxpack/layering"
)

// wakeSecret renders the wake Secret, with the token of the one
// cfg.secretFile holds already, if any.
func wakeSecret(w *layering.Wake, cfg *renderConfig) ([]byte, error) {
	token, err := existingToken(cfg.secretFile, w.Receiver.Namespace, w.Receiver.Name)
	if err != nil {
		return nil, err
	}
	if token == "" {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("making the wake token: %w", err)
		}
		token = hex.EncodeToString(b)
	}
	s, err := w.Secret(cfg.receiverURL, token)
	if err != nil {
		return nil, err
	}
	return marshal(s)
}

// existingToken is the token of Secret namespace/name in file, or "" when
// the file does not exist or holds no such Secret.
func existingToken(file, namespace, name string) (string, error) {
	secrets, err := secretsIn(file)
	if err != nil {
		return "", fmt.Errorf("reading the wake token from %s: %w", file, err)
	}
	for _, s := range secrets {
		if s.Kind == "Secret" && s.Name == name && s.Namespace == namespace {
			if t := string(s.Data["token"]); t != "" {
				return t, nil
			}
			return s.StringData["token"], nil
		}
	}
	return "", nil
}

// secretsIn decodes the documents of a secret file (YAML or JSON), empty
// ones left out; a file that does not exist holds none.
func secretsIn(file string) ([]corev1.Secret, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []corev1.Secret
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var s corev1.Secret
		err := dec.Decode(&s)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if s.Kind != "" || s.Name != "" {
			out = append(out, s)
		}
	}
}
