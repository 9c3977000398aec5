// Package kinds knows the Kubernetes kinds that have no namespace, for
// the packages that must tell where an object without one lands: lint
// (what a namespace-order rule skips), review (what helm-controller
// applies without a namespace) and fluxrepo (what a ResourceSet renders).
package kinds

// clusterScoped are the kinds Kubernetes defines without a namespace.
var clusterScoped = map[string]bool{
	"Namespace": true, "Node": true, "PersistentVolume": true, "ClusterRole": true,
	"ClusterRoleBinding": true, "CustomResourceDefinition": true, "StorageClass": true,
	"CSIDriver": true, "CSINode": true, "VolumeAttachment": true, "PriorityClass": true,
	"RuntimeClass": true, "IngressClass": true, "ValidatingWebhookConfiguration": true,
	"MutatingWebhookConfiguration": true, "ValidatingAdmissionPolicy": true,
	"ValidatingAdmissionPolicyBinding": true, "MutatingAdmissionPolicy": true,
	"MutatingAdmissionPolicyBinding": true, "APIService": true, "CertificateSigningRequest": true,
	"FlowSchema": true, "PriorityLevelConfiguration": true, "ClusterTrustBundle": true,
	"DeviceClass": true, "StorageVersionMigration": true,
}

// ClusterScoped reports whether Kubernetes defines kind without a
// namespace. Custom resources are not known here: their CRD says.
func ClusterScoped(kind string) bool { return clusterScoped[kind] }
