package names

// The PD micro-services' names in object names and labels (spec.pdms[].name):
// StatefulSet, client Service and ConfigMap <tc>-<name>, headless Service
// <tc>-<name>-peer.
const (
	// TSO is PD's timestamp micro-service.
	TSO = "tso"
	// Scheduling is PD's scheduling micro-service.
	Scheduling = "scheduling"
)
