// Command sigstore-kms-testkms is a KMS plugin for tests: it speaks
// sigstore's CLI plugin protocol (package
// github.com/sigstore/sigstore/pkg/signature/kms/cliplugin, protocol v1),
// so that sigstore's kms.Get runs it for a key reference
// testkms://<path>, and signs with the unencrypted PEM private key at
// <path>. Tests build it into a directory they put first on $PATH
// (testutil.KMSPlugin).
//
// Each call appends its method name to the file $TESTKMS_LOG, when set,
// so that a test can tell that signing went through the plugin. The
// plugin answers publicKey, signMessage, verifySignature,
// defaultAlgorithm and supportedAlgorithms, and refuses createKey.
package main

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin/common"
	"github.com/sigstore/sigstore/pkg/signature/kms/cliplugin/encoding"
)

func main() {
	resp := serve(os.Args, os.Stdin)
	// sigstore ignores the exit status and reads errors from the response.
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		fmt.Fprintln(os.Stderr, "sigstore-kms-testkms:", err)
		os.Exit(1)
	}
}

func serve(args []string, stdin io.Reader) *common.PluginResp {
	resp, err := call(args, stdin)
	if err != nil {
		return &common.PluginResp{ErrorMessage: err.Error()}
	}
	return resp
}

func call(args []string, stdin io.Reader) (*common.PluginResp, error) {
	if len(args) != 3 {
		return nil, fmt.Errorf("want 2 arguments (protocol version, JSON), got %d", len(args)-1)
	}
	if args[1] != common.ProtocolVersion {
		return nil, fmt.Errorf("protocol %q: only %s is spoken", args[1], common.ProtocolVersion)
	}
	var pa common.PluginArgs
	if err := json.Unmarshal([]byte(args[2]), &pa); err != nil {
		return nil, fmt.Errorf("parsing the plugin arguments: %w", err)
	}
	if pa.InitOptions == nil || pa.MethodArgs == nil {
		return nil, errors.New("parsing the plugin arguments: no initOptions or method")
	}
	if err := logCall(pa.MethodName); err != nil {
		return nil, err
	}
	hash := pa.InitOptions.HashFunc
	var resp common.PluginResp
	switch pa.MethodName {
	case common.DefaultAlgorithmMethodName:
		resp.DefaultAlgorithm = &common.DefaultAlgorithmResp{DefaultAlgorithm: "ecdsa-p256-sha256"}
	case common.SupportedAlgorithmsMethodName:
		resp.SupportedAlgorithms = &common.SupportedAlgorithmsResp{SupportedAlgorithms: []string{"ecdsa-p256-sha256"}}
	case common.PublicKeyMethodName:
		sv, err := load(pa.InitOptions.KeyResourceID, hash)
		if err != nil {
			return nil, err
		}
		pub, err := sv.PublicKey()
		if err != nil {
			return nil, err
		}
		pem, err := cryptoutils.MarshalPublicKeyToPEM(pub)
		if err != nil {
			return nil, err
		}
		resp.PublicKey = &common.PublicKeyResp{PublicKeyPEM: pem}
	case common.SignMessageMethodName:
		if pa.SignMessage == nil || pa.SignMessage.SignOptions == nil {
			return nil, errors.New("signMessage without signOptions")
		}
		sv, err := load(pa.InitOptions.KeyResourceID, hash)
		if err != nil {
			return nil, err
		}
		sig, err := sv.SignMessage(stdin, encoding.UnpackSignOptions(pa.SignMessage.SignOptions)...)
		if err != nil {
			return nil, err
		}
		resp.SignMessage = &common.SignMessageResp{Signature: sig}
	case common.VerifySignatureMethodName:
		if pa.VerifySignature == nil || pa.VerifySignature.VerifyOptions == nil {
			return nil, errors.New("verifySignature without verifyOptions")
		}
		sv, err := load(pa.InitOptions.KeyResourceID, hash)
		if err != nil {
			return nil, err
		}
		opts := encoding.UnpackVerifyOptions(pa.VerifySignature.VerifyOptions)
		if err := sv.VerifySignature(bytes.NewReader(pa.VerifySignature.Signature), stdin, opts...); err != nil {
			return nil, err
		}
		resp.VerifySignature = &common.VerifySignatureResp{}
	default:
		return nil, fmt.Errorf("method %q is not offered by this test plugin", pa.MethodName)
	}
	return &resp, nil
}

// load reads the PEM private key at path.
func load(path string, hash crypto.Hash) (signature.SignerVerifier, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	key, err := cryptoutils.UnmarshalPEMToPrivateKey(raw, cryptoutils.SkipPassword)
	if err != nil {
		return nil, fmt.Errorf("parsing key %s: %w", path, err)
	}
	return signature.LoadSignerVerifier(key, hash)
}

func logCall(method string) error {
	path := os.Getenv("TESTKMS_LOG")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("logging the call: %w", err)
	}
	_, err = fmt.Fprintln(f, method)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
