package components

import "github.com/kubetidb/tidb-operator/pkg/apis/pingcap/v1alpha1"

// PD is the placement driver (spec.pd): the PD members.
var PD = Descriptor{
	Name: "pd", Title: "PD", BaseImage: "pingcap/pd", SyncRank: 10, Kind: KindMember, Core: true,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.PD
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes,
			MaxFailoverCount: &c.MaxFailoverCount, SpareVolReplaceReplicas: &c.SpareVolReplaceReplicas}, true
	},
	Status: func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.PD.ComponentStatus },
	ClearObserved: func(s *v1alpha1.TidbClusterStatus) {
		s.PD.Synced, s.PD.Members, s.PD.PeerMembers, s.PD.Leader = false, nil, nil, v1alpha1.PDMember{}
	},
	NeedsDataVolume: true, ConfigKept: true, ComparesMountedConfig: true, DeleteSlots: true, MinReady: true,
	ConfigTables: []string{"log", "schedule", "replication", "security", "pd-server", "dashboard", "metric",
		"label-property", "replication-mode", "keyspace", "micro-service"},
}

// TiKV is the row store (spec.tikv).
var TiKV = Descriptor{
	Name: "tikv", Title: "TiKV", BaseImage: "pingcap/tikv", SyncRank: 40, Kind: KindStore, Core: true,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.TiKV
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes,
			MaxFailoverCount: &c.MaxFailoverCount, SpareVolReplaceReplicas: &c.SpareVolReplaceReplicas,
			ScalePolicy: &c.ScalePolicy}, true
	},
	Status:          func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.TiKV.ComponentStatus },
	ClearObserved:   func(s *v1alpha1.TidbClusterStatus) { clearStores(&s.TiKV) },
	NeedsDataVolume: true, ConfigKept: true, DeleteSlots: true, MinReady: true,
	ConfigTables: []string{"log", "server", "storage", "raftstore", "rocksdb", "raftdb", "security", "readpool",
		"coprocessor", "pd", "import", "gc", "pessimistic-txn", "resolved-ts", "cdc", "backup", "memory", "quota", "split"},
}

// TiDB is the SQL layer (spec.tidb).
var TiDB = Descriptor{
	Name: "tidb", Title: "TiDB", BaseImage: "pingcap/tidb", SyncRank: 60, Kind: KindServer, Core: true,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.TiDB
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes,
			MaxFailoverCount: &c.MaxFailoverCount, ScalePolicy: &c.ScalePolicy}, true
	},
	Status:        func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.TiDB.ComponentStatus },
	ClearObserved: func(s *v1alpha1.TidbClusterStatus) { s.TiDB.Members = nil },
	ConfigKept:    true, DeleteSlots: true, MinReady: true,
	ConfigTables: []string{"log", "security", "performance", "status", "prepared-plan-cache", "opentracing",
		"proxy-protocol", "tikv-client", "binlog", "pessimistic-txn", "experimental", "isolation-read", "instance"},
}

// TiFlash is the columnar store (spec.tiflash): its data disks are storageClaims.
var TiFlash = Descriptor{
	Name: "tiflash", Title: "TiFlash", BaseImage: "pingcap/tiflash", SyncRank: 30, Kind: KindStore,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.TiFlash
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			StorageClaims: c.StorageClaims, MaxFailoverCount: &c.MaxFailoverCount, ScalePolicy: &c.ScalePolicy}, true
	},
	Status:        func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.TiFlash.ComponentStatus },
	ClearObserved: func(s *v1alpha1.TidbClusterStatus) { clearStores(&s.TiFlash) },
	DeleteSlots:   true, MinReady: true, ScriptV2NotRendered: true, StorageClaims: true,
	MonitorJobs: []string{"tiflash", "tiflash-proxy"},
}

// TiCDC is the change-data-capture component (spec.ticdc).
var TiCDC = Descriptor{
	Name: "ticdc", Title: "TiCDC", BaseImage: "pingcap/ticdc", SyncRank: 70, Kind: KindServer,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.TiCDC
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes}, true
	},
	Status:        func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.TiCDC.ComponentStatus },
	ClearObserved: func(s *v1alpha1.TidbClusterStatus) { s.TiCDC.Synced, s.TiCDC.Captures = false, nil },
	DeleteSlots:   true, ScriptV2NotRendered: true,
}

// Pump is the TiDB Binlog pump (spec.pump).
var Pump = Descriptor{
	Name: "pump", Title: "Pump", BaseImage: "pingcap/tidb-binlog", SyncRank: 50, Kind: KindServer,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.Pump
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName}, true
	},
	Status:          func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.Pump.ComponentStatus },
	ClearObserved:   func(s *v1alpha1.TidbClusterStatus) { s.Pump.Members = nil },
	NeedsDataVolume: true, ScriptV2NotRendered: true, HeadlessMember: true,
}

// TiProxy is the SQL proxy (spec.tiproxy).
var TiProxy = Descriptor{
	Name: "tiproxy", Title: "TiProxy", BaseImage: "pingcap/tiproxy", SyncRank: 20, Kind: KindServer,
	Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
		c := s.TiProxy
		if c == nil {
			return Fields{}, false
		}
		return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
			BaseImage: &c.BaseImage, ServiceAccount: c.ServiceAccount, Config: c.Config,
			VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes}, true
	},
	Status:        func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus { return &s.TiProxy.ComponentStatus },
	ClearObserved: func(s *v1alpha1.TidbClusterStatus) { s.TiProxy.Synced, s.TiProxy.Members = false, nil },
	DeleteSlots:   true,
}

// TSO is PD's timestamp micro-service (the spec.pdms entry named tso).
var TSO = pdms("tso", "TSO", 5)

// Scheduling is PD's scheduling micro-service (the spec.pdms entry named
// scheduling).
var Scheduling = pdms("scheduling", "Scheduling", 6)

// pdms declares the PD micro-service name: an entry of spec.pdms, synced
// before PD (spec pd-microservices §5), running PD's image. The spec reader
// reports the entry whatever spec.pd.mode says, as the CRD's name limits
// do; whether the service runs is its component's decision.
func pdms(name, title string, rank int) Descriptor {
	return Descriptor{
		Name: name, Title: title, BaseImage: "pingcap/pd", SyncRank: rank, Kind: KindServer, ListItem: "pdms",
		Spec: func(s *v1alpha1.TidbClusterSpec) (Fields, bool) {
			c := PDMSEntry(s, name)
			if c == nil {
				return Fields{}, false
			}
			base := c.BaseImage
			if base == nil {
				base = new(string) // defaulting fills the entry's own field (setPDMSDefaults)
			}
			return Fields{Spec: &c.ComponentSpec, Resources: &c.ResourceRequirements, Replicas: c.Replicas,
				BaseImage: base, ServiceAccount: c.ServiceAccount, Config: c.Config,
				VolumeAttributesClassName: c.VolumeAttributesClassName, StorageVolumes: c.StorageVolumes}, true
		},
		Status: func(s *v1alpha1.TidbClusterStatus) *v1alpha1.ComponentStatus {
			return &PDMSStatus(s, name).ComponentStatus
		},
		ClearObserved: func(s *v1alpha1.TidbClusterStatus) {
			st := PDMSStatus(s, name)
			st.Synced, st.Members = false, nil
		},
		DeleteSlots: true,
	}
}

// PDMSEntry returns the spec.pdms entry named name, or nil.
func PDMSEntry(s *v1alpha1.TidbClusterSpec, name string) *v1alpha1.PDMSSpec {
	for _, ms := range s.PDMS {
		if ms != nil && ms.Name == name {
			return ms
		}
	}
	return nil
}

// PDMSStatus returns status.pdms[name], adding it (with its name) when
// missing: a component's status block always exists once asked for.
func PDMSStatus(s *v1alpha1.TidbClusterStatus, name string) *v1alpha1.PDMSStatus {
	if st := s.PDMS[name]; st != nil {
		return st
	}
	if s.PDMS == nil {
		s.PDMS = map[string]*v1alpha1.PDMSStatus{}
	}
	st := &v1alpha1.PDMSStatus{Name: name}
	s.PDMS[name] = st
	return st
}

// clearStores clears what a store component observed from PD.
func clearStores(st *v1alpha1.TiKVStatus) {
	st.Synced, st.BootStrapped, st.Stores, st.PeerStores = false, false, nil, nil
}
