package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fluxpack/fluxpack/oci"
)

func newVerifyCmd(f *rootFlags) *cobra.Command {
	var (
		reg registryFlags
		out outputFlag
		key string
	)
	cmd := &cobra.Command{
		Use:   "verify oci://HOST/REPOSITORY[:TAG|@DIGEST] --key cosign.pub",
		Short: "Check that an artifact carries a cosign signature made with a key",
		Long: `Verify resolves the tag to its digest and checks the digest's cosign
signatures with the public key, as source-controller does for an
OCIRepository with spec.verify.provider cosign and a key: offline, without
transparency log.

Prints verified, unsigned or invalid (signatures, none made with the key) with
host/repository@sha256:… on stdout (JSON with -o json).

Exit code: 0 verified, 1 unsigned or invalid (the output says which), 2 error
(bad key file, unreachable registry, no such tag).`,
		Example: `  fluxpack verify oci://ghcr.io/acme/platform:v1 --key cosign.pub`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := out.check(); err != nil {
				return err
			}
			if key == "" {
				return fmt.Errorf("--key is required")
			}
			opts := append(reg.verifyOptions(f.log), oci.WithCosignPublicKey(key))
			ctx, cancel := reg.context(cmd.Context())
			defer cancel()
			res, err := oci.Verify(ctx, args[0], opts...)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if out == "json" {
				err = writeJSON(w, res)
			} else {
				_, err = fmt.Fprintf(w, "%s: %s\n", res.Status, res.Ref())
			}
			if err != nil {
				return err
			}
			switch res.Status {
			case oci.Unsigned:
				return &FindingError{Msg: fmt.Sprintf("%s is not signed: %s", args[0], res.Reason)}
			case oci.BadSignature:
				return &FindingError{Msg: fmt.Sprintf("%s has no signature made with %s: %s", args[0], key, res.Reason)}
			}
			return nil
		},
	}
	reg.bind(cmd)
	out.bind(cmd)
	cmd.Flags().StringVar(&key, "key", "", "cosign public key: a PEM file or env://VAR")
	return cmd
}
