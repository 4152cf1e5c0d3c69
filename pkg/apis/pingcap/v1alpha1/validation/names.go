package validation

import (
	"fmt"
	"strings"

	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1/components"
)

// The TidbCluster name begins the name of every object the operator makes
// for the cluster (pkg/names): StatefulSets <tc>-<component>, headless
// Services <tc>-<component>-peer, client Services <tc>-<component>, the
// discovery Deployment and Service <tc>-discovery, pods <sts>-<ordinal>. The
// constants below bound it so that every one of those names is valid; the
// CRD carries the same limits as CEL rules on the TidbCluster
// (tidbcluster_types.go), and TestClusterNameLimitsMatchCRD keeps the two in
// step.
const (
	// maxDNSLabel is the longest DNS label, label value and Service name.
	maxDNSLabel = 63
	// revisionHashLength is the longest hash the StatefulSet controller puts
	// after "<sts>-" in the controller-revision-hash label of every pod it
	// creates: a 32-bit FNV hash, safe-encoded, at most 10 characters.
	revisionHashLength = 10

	// MaxStatefulSetNameLength is the longest StatefulSet name whose pods
	// can be created: the label value "<sts>-<hash>" must fit in 63, so
	// 63 - len("-") - 10 = 52. Its pods "<sts>-<ordinal>" are then at most
	// 52 + 1 + 10 = 63 characters, a valid hostname for any int32 ordinal.
	MaxStatefulSetNameLength = maxDNSLabel - len("-") - revisionHashLength
	// MaxServiceNameLength is the longest Service name (a DNS-1035 label).
	MaxServiceNameLength = maxDNSLabel

	// MaxClusterNameLength is the longest TidbCluster name at all: it is a
	// DNS-1035 label because it begins the names of the cluster's Services.
	MaxClusterNameLength = maxDNSLabel

	// MaxClusterNameWithPD bounds the name while spec.pd is set: StatefulSet
	// <tc>-pd, 52 - 3 = 49 (the Services <tc>-pd-peer and <tc>-discovery
	// would allow 55 and 53).
	MaxClusterNameWithPD = MaxStatefulSetNameLength - len("-pd")
	// MaxClusterNameWithTiKV bounds it with spec.tikv: StatefulSet <tc>-tikv, 52 - 5 = 47.
	MaxClusterNameWithTiKV = MaxStatefulSetNameLength - len("-tikv")
	// MaxClusterNameWithTiDB bounds it with spec.tidb: StatefulSet <tc>-tidb, 52 - 5 = 47.
	MaxClusterNameWithTiDB = MaxStatefulSetNameLength - len("-tidb")
	// MaxClusterNameWithTiFlash bounds it with spec.tiflash: StatefulSet <tc>-tiflash, 52 - 8 = 44.
	MaxClusterNameWithTiFlash = MaxStatefulSetNameLength - len("-tiflash")
	// MaxClusterNameWithTiCDC bounds it with spec.ticdc: StatefulSet <tc>-ticdc, 52 - 6 = 46.
	MaxClusterNameWithTiCDC = MaxStatefulSetNameLength - len("-ticdc")
	// MaxClusterNameWithPump bounds it with spec.pump: StatefulSet <tc>-pump, 52 - 5 = 47.
	MaxClusterNameWithPump = MaxStatefulSetNameLength - len("-pump")
	// MaxClusterNameWithTiProxy bounds it with spec.tiproxy: StatefulSet <tc>-tiproxy, 52 - 8 = 44.
	MaxClusterNameWithTiProxy = MaxStatefulSetNameLength - len("-tiproxy")
	// MaxClusterNameWithTSO bounds it with the PD micro-service tso in
	// spec.pdms: StatefulSet <tc>-tso, 52 - 4 = 48.
	MaxClusterNameWithTSO = MaxStatefulSetNameLength - len("-tso")
	// MaxClusterNameWithScheduling bounds it with the PD micro-service
	// scheduling in spec.pdms: StatefulSet <tc>-scheduling, 52 - 11 = 41.
	MaxClusterNameWithScheduling = MaxStatefulSetNameLength - len("-scheduling")
	// MaxClusterNameWithDiscovery bounds it with spec.acrossK8s, which makes
	// the discovery Service even without spec.pd: Service <tc>-discovery,
	// 63 - 10 = 53.
	MaxClusterNameWithDiscovery = MaxServiceNameLength - len("-discovery")

	// MaxReplicas is the ceiling of every replicas field in the CRD
	// (+kubebuilder:validation:Maximum): generous for any real cluster, and
	// small enough that a typo (tikv.replicas: 100000) is refused at once
	// instead of flooding the API server with pods and PVCs.
	MaxReplicas = 1000
)

// clusterNameFormatRule is the CEL rule (on the TidbCluster) that makes the
// name a DNS-1035 label; clusterNameFormatMessage explains it.
const (
	clusterNameFormatRule    = "self.metadata.name.size() <= 63 && self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')"
	clusterNameFormatMessage = "must be a DNS-1035 label (at most 63 lower-case letters, digits and '-', starting with a letter), because it begins the names of the cluster's Services"
)

// clusterNameLimit bounds the TidbCluster name while the spec has one
// component.
type clusterNameLimit struct {
	component string                               // the component as the message names it, such as "spec.pd"
	guard     string                               // CEL condition on the TidbCluster (self) that the spec has it
	has       func(*v1alpha1.TidbClusterSpec) bool // the same condition in Go
	member    string                               // the suffix of its longest object name, such as "pd" for <tc>-pd
	object    string                               // that object's kind: "StatefulSet" or "Service"
	max       int                                  // the longest allowed TidbCluster name
}

// clusterNameLimits are the limits of every component (components.All,
// in declaration order), then of the PD micro-services and of the
// discovery Service across Kubernetes.
var clusterNameLimits = append(componentNameLimits(),
	clusterNameLimit{"spec.acrossK8s", "has(self.spec.acrossK8s) && self.spec.acrossK8s",
		func(s *v1alpha1.TidbClusterSpec) bool { return s.AcrossK8s }, "discovery", "Service", MaxClusterNameWithDiscovery},
)

// componentNameLimits bounds the name by each component's StatefulSet
// <tc>-<name> (the MaxClusterNameWith* constants above); a list entry's
// limit (a PD micro-service) is guarded by the entry's presence.
func componentNameLimits() []clusterNameLimit {
	out := make([]clusterNameLimit, 0, len(components.All))
	for _, d := range components.All {
		what, guard := "spec."+d.Name, "has(self.spec."+d.Name+")"
		if d.ListItem != "" {
			what = "spec." + d.ListItem + " " + d.Name
			guard = "has(self.spec." + d.ListItem + ") && self.spec." + d.ListItem + ".exists(m, m.name == '" + d.Name + "')"
		}
		out = append(out, clusterNameLimit{what, guard,
			func(s *v1alpha1.TidbClusterSpec) bool { _, ok := d.Spec(s); return ok },
			d.Name, "StatefulSet", MaxStatefulSetNameLength - len("-"+d.Name)})
	}
	return out
}

// objectMax is the longest name of the limit's object kind.
func (l clusterNameLimit) objectMax() int {
	if l.object == "Service" {
		return MaxServiceNameLength
	}
	return MaxStatefulSetNameLength
}

// message explains the limit after the field name.
func (l clusterNameLimit) message() string {
	return fmt.Sprintf("must be at most %d characters with %s, because the %s <name>-%s may have at most %d",
		l.max, l.component, l.object, l.member, l.objectMax())
}

// rule is the limit's CEL rule on the TidbCluster.
func (l clusterNameLimit) rule() string {
	return fmt.Sprintf("!(%s) || self.metadata.name.size() <= %d", l.guard, l.max)
}

// ValidateClusterName reports a TidbCluster name that some object derived
// from it could not carry: a name that is not a DNS-1035 label, or one longer
// than the limit of a component spec has (see the MaxClusterNameWith*
// constants). The API server already refuses such names through the CRD's
// CEL rules; this check reports them for objects stored before those rules
// existed. An empty name (an object the API server has not named) and a nil
// spec are not checked.
func ValidateClusterName(name string, spec *v1alpha1.TidbClusterSpec) field.ErrorList {
	if name == "" {
		return nil
	}
	path := field.NewPath("metadata", "name")
	if msgs := utilvalidation.IsDNS1035Label(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(path, name, clusterNameFormatMessage+": "+strings.Join(msgs, "; "))}
	}
	if spec == nil {
		return nil
	}
	var errs field.ErrorList
	for _, l := range clusterNameLimits {
		if len(name) > l.max && l.has(spec) {
			errs = append(errs, field.Invalid(path, name, l.message()))
		}
	}
	return errs
}
