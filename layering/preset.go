package layering

import (
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
)

// Preset adds a group of layers to a Builder (Builder.Add). Only this
// package implements it.
type Preset interface{ expand(*Builder) }

// OperatorOption configures the Operator preset. Only this package
// implements it.
type OperatorOption interface{ applyToOperator(*operatorPreset) }

type operatorPreset struct {
	name                string
	crds, operator, crs []StepOption
	guard               *webhookGuard
}

func (p *operatorPreset) expand(b *Builder) {
	crds := p.name + "-crds"
	op := p.name + "-operator"
	crs := p.name + "-crs"
	withPath := func(s *step, dir string) {
		if s.path == nil && s.helm == nil {
			path := "./" + p.name + "/" + dir
			s.path = &path
		}
	}
	withPath(b.add(crds, "", append([]StepOption{KeepOnDelete(), Wait()}, p.crds...)), "crds")
	opOpts := []StepOption{MarkOperator()}
	if p.guard != nil {
		opOpts = append(opOpts, WebhookGuard(p.guard.kind, p.guard.name))
	}
	s := b.add(op, crds, append(opOpts, p.operator...))
	withPath(s, "operator")
	if s.helm != nil && s.helm.crds == "" {
		s.helm.crds = helmv2.Skip // the CRDs have their own layer
	}
	withPath(b.add(crs, "", append([]StepOption{DependsOnOperator(), RetryInterval(time.Minute)}, p.crs...)), "crs")
}

type funcOperator func(*operatorPreset)

func (f funcOperator) applyToOperator(p *operatorPreset) { f(p) }

// Operator is the chain that makes an operator race-free (seeds 000, 002):
//
//	<name>-crds      ./<name>/crds      prune: false, deletionPolicy: Orphan, wait: true
//	<name>-operator  ./<name>/operator  wait: true, marked as the operator; depends on the CRDs
//	<name>-crs       ./<name>/crs       depends on the operator, retryInterval: 1m
//
// so custom resources are applied only once the operator, and with it its
// admission webhook, is ready. CRDs, Controller and CRs add options to each
// layer (a HelmRelease controller installs with crds: Skip); OperatorWebhook
// adds a guard for operators whose webhook CA is injected late.
func Operator(name string, opts ...OperatorOption) Preset {
	p := &operatorPreset{name: name}
	for _, o := range opts {
		if o != nil {
			o.applyToOperator(p)
		}
	}
	return p
}

// CRDsLayer adds options to the preset's CRDs layer (say DependsOn("namespaces")).
func CRDsLayer(opts ...StepOption) OperatorOption {
	return funcOperator(func(p *operatorPreset) { p.crds = append(p.crds, opts...) })
}

// OperatorLayer adds options to the preset's operator layer (say HelmRelease(...)).
func OperatorLayer(opts ...StepOption) OperatorOption {
	return funcOperator(func(p *operatorPreset) { p.operator = append(p.operator, opts...) })
}

// CRsLayer adds options to the preset's custom resources layer.
func CRsLayer(opts ...StepOption) OperatorOption {
	return funcOperator(func(p *operatorPreset) { p.crs = append(p.crs, opts...) })
}

// OperatorWebhook guards the operator layer with WebhookGuard(kind, name).
func OperatorWebhook(kind WebhookKind, name string) OperatorOption {
	return funcOperator(func(p *operatorPreset) { p.guard = &webhookGuard{kind: kind, name: name} })
}
