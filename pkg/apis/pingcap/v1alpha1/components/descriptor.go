// Package components declares each TidbCluster component once: its name,
// how to read its spec and status from the cluster, its base image, its
// volumes, its kind and the behaviour the operator's generic code asks of it
// (defaulting, validation, the Unsupported list, status progress, volume
// classes, min-ready, monitoring). Code outside a component's own package
// loops over All instead of switching on component names; hack/archcheck
// fails for a name-keyed switch anywhere else.
//
// Adding a component is its API field, one Descriptor in tidbcluster.go,
// its package under pkg/manager and one line in All and in
// pkg/manager/members. Like the rest of pkg/apis this package imports
// nothing of ours but v1alpha1.
package components

import (
	"cmp"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"
)

// Kind says how the operator tracks a component's pods.
type Kind int

// The component kinds.
const (
	// KindServer components run pods PD knows neither as members nor as
	// stores (TiDB, TiCDC, Pump, TiProxy).
	KindServer Kind = iota
	// KindMember components are PD itself: each pod is a PD member with a member ID.
	KindMember
	// KindStore components register each pod as a PD store with a store ID (TiKV, TiFlash).
	KindStore
)

// HasPDIdentity reports whether the component's pods, PVCs and PVs carry a
// PD-assigned ID (member or store): the PD member and the stores.
func (k Kind) HasPDIdentity() bool { return k == KindMember || k == KindStore }

// Fields are the parts every component spec shares, read from one
// spec.<component>. Pointers point into the TidbCluster's spec (defaulting
// writes through them); a nil pointer means the component has no such
// field. Slices are the spec's own.
type Fields struct {
	// Spec is the inlined pod-level ComponentSpec.
	Spec *v1alpha1.ComponentSpec
	// Resources are the inlined requests and limits.
	Resources *corev1.ResourceRequirements
	// Replicas is the desired pod count.
	Replicas int32
	// BaseImage is the untagged image field; never nil for a descriptor's component.
	BaseImage *string
	// ServiceAccount is the component's own service account ("" = the cluster's).
	ServiceAccount string
	// Config is the component's config (map or TOML), nil when unset.
	Config *v1alpha1.Config
	// VolumeAttributesClassName is the data volume's class; nil when the
	// component has no such field or it is unset.
	VolumeAttributesClassName *string
	// StorageVolumes are the extra PVC-backed volumes (nil when the component has none).
	StorageVolumes []v1alpha1.StorageVolume
	// StorageClaims are TiFlash's data disks (nil for every other component).
	StorageClaims []v1alpha1.StorageClaim
	// MaxFailoverCount, SpareVolReplaceReplicas and ScalePolicy point at
	// fields defaulting fills; nil when the component has none.
	MaxFailoverCount        **int32
	SpareVolReplaceReplicas **int32
	ScalePolicy             *v1alpha1.ScalePolicy
}

// SetsAttributesClass reports whether f sets a volume attributes class on
// its data volume, a storage volume or a storage claim.
func (f Fields) SetsAttributesClass() bool {
	if f.VolumeAttributesClassName != nil {
		return true
	}
	for _, v := range f.StorageVolumes {
		if v.VolumeAttributesClassName != nil {
			return true
		}
	}
	for _, c := range f.StorageClaims {
		if c.VolumeAttributesClassName != nil {
			return true
		}
	}
	return false
}

// Descriptor is everything generic code knows of one component. The zero
// value of each flag is the common case, so a descriptor names only what
// sets its component apart.
type Descriptor struct {
	// Name is the spec field's JSON name, the app.kubernetes.io/component
	// value and the object name suffix (<tc>-<name>), such as "pd".
	Name string
	// Title is the display name in messages, such as "PD".
	Title string
	// BaseImage is the untagged default image, such as "pingcap/pd".
	BaseImage string
	// SyncRank orders the components as pkg/manager/members syncs them
	// (lower first); the members test keeps the two in step.
	SyncRank int
	// Kind is how PD knows the component's pods.
	Kind Kind
	// ListItem is the JSON name of the list the component is one entry of,
	// named Name (the PD micro-services: "pdms"); "" for a spec.<name>
	// component. Its name limit is guarded by the entry's presence, and
	// validation reports its fields by the entry's index.
	ListItem string
	// Core components (PD, TiKV, TiDB) are built by every operator
	// version; a present component that is not core and has no Component
	// built is reported Unsupported.
	Core bool

	// Spec returns the component's shared fields and whether the cluster
	// has it (spec.<name> != nil).
	Spec func(s *v1alpha1.TidbClusterSpec) (Fields, bool)
	// Status returns the component's shared status block.
	Status func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus
	// ClearObserved clears what the component observed beyond the shared
	// status block (members, stores, captures), for the progress-only
	// comparison of two statuses; nil when there is nothing more.
	ClearObserved func(s *v1alpha1.TidbClusterStatus)

	// HeadlessMember is set when the component's headless Service is
	// <tc>-<name> (Pump), not <tc>-<name>-peer.
	HeadlessMember bool
	// StorageClaims is set when the data volumes are spec.<name>.storageClaims
	// (claim templates data0, data1, …: TiFlash).
	StorageClaims bool
	// NeedsDataVolume is set when requests.storage sizes a required data PVC.
	NeedsDataVolume bool
	// ConfigTables are the config sections that are TOML tables in the
	// component's own configuration; a scalar there is refused.
	ConfigTables []string
	// ConfigKept is set when spec.<name>.config may not be removed once it
	// rendered the mounted ConfigMap.
	ConfigKept bool
	// ComparesMountedConfig is set when validation compares the mounted
	// config file with the desired one (PD's persisted sections).
	ComparesMountedConfig bool
	// DeleteSlots is set when the <name>.tidb.pingcap.com/delete-slots
	// annotation applies to the component.
	DeleteSlots bool
	// MinReady is set when the rollout honours the TidbCluster annotation
	// tidb.pingcap.com/<name>-min-ready-seconds.
	MinReady bool
	// ScriptV2NotRendered is set when the TiDB Operator has a v2 start
	// script for the component that this operator does not render.
	ScriptV2NotRendered bool
	// MonitorJobs are the Prometheus jobs a TidbMonitor scrapes for the
	// component; empty means one job named Name.
	MonitorJobs []string
}

// Jobs returns the component's Prometheus jobs (MonitorJobs, else Name).
func (d *Descriptor) Jobs() []string {
	if len(d.MonitorJobs) > 0 {
		return d.MonitorJobs
	}
	return []string{d.Name}
}

// All are the TidbCluster components in declaration order (spec.pd,
// spec.tikv, spec.tidb, spec.tiflash, spec.ticdc, spec.pump, spec.tiproxy,
// then the PD micro-services of spec.pdms), the order validation reports
// them in and the CRD's CEL rules list them.
var All = []*Descriptor{&PD, &TiKV, &TiDB, &TiFlash, &TiCDC, &Pump, &TiProxy, &TSO, &Scheduling}

// Lookup returns the descriptor named name, or nil.
func Lookup(name string) *Descriptor {
	for _, d := range All {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// InSyncOrder returns All sorted by SyncRank: the order the cluster sync
// runs the components in.
func InSyncOrder() []*Descriptor {
	out := slices.Clone(All)
	slices.SortStableFunc(out, func(a, b *Descriptor) int { return cmp.Compare(a.SyncRank, b.SyncRank) })
	return out
}

// Present returns the descriptors of the components s has, in declaration order.
func Present(s *v1alpha1.TidbClusterSpec) []*Descriptor {
	var out []*Descriptor
	for _, d := range All {
		if _, ok := d.Spec(s); ok {
			out = append(out, d)
		}
	}
	return out
}
