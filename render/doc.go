// Package render writes what a platform's stack says to a folder Flux
// applies: the Kustomizations and the OCIRepository (layering.Plan's
// files), the variables' ConfigMaps that package outputs renders from IaC
// outputs, and the Secrets that must never be pushed — the sensitive
// outputs, the wake token, the verification keys — to a secret file
// outside that folder.
//
//	r, err := render.StackFile(ctx, "platform/stack.yaml", "flux",
//		render.WithSecretFile("secrets.yaml"))
//
// Everything is rendered in memory first: any problem is an error and
// nothing is written. The folder and the secret file are then written
// beside their places and renamed into place, so an interrupted render
// leaves both as they were. WriteDir writes a Plan alone; Fleet renders
// every cluster of a fleet; WriteWake keeps the wake objects of an
// existing repository; VerifySecret and NotationVerifySecret make the
// Secrets source-controller verifies artifacts with.
package render
